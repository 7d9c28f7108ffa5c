#include "server/peer_link.hpp"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cstring>

#include "common/log.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/version.hpp"
#include "server/bulk_writer.hpp"
#include "server/completion_writer.hpp"

namespace ferry::server {

namespace p = protocol;

uint64_t peer_migration::payload_size() const {
  if (!content_size) return size;
  uint64_t content = 0;  // cl_ulong, little endian like the host (checked in messages.cpp)
  std::memcpy(&content, content_size.get(), sizeof content);
  // Only [offset, min(offset + size, content)) is meaningful.
  if (content <= offset) return 0;
  return std::min(size, content - offset);
}

peer_link::peer_link(peer_target target, const native::api& api, control_outbox& outbox, link_stats* stats,
                     std::string label)
    : target_(std::move(target)),
      api_(api),
      outbox_(outbox),
      counter_(stats ? stats->find(p::link_kind::peer_out, target_.address) : nullptr),
      label_(std::move(label)) {}

peer_link::~peer_link() { close(); }

void peer_link::fail_item(const native::api& api, control_outbox& outbox, peer_status& item, cl_int status) {
  if (item.native) api.clReleaseEvent(std::exchange(item.native, nullptr));
  outbox.push_failure(item.command, status);
}

void peer_link::fail_item(const native::api&, control_outbox& outbox, peer_migration& item, cl_int status) {
  item.content_size.reset();
  command_record r;
  r.command = item.command;
  r.event = std::exchange(item.event, nullptr);  // the writer releases it
  r.unmap = std::exchange(item.source, {});      // and unmaps the range
  // A map that failed keeps its own error; the writer reads the true status.
  r.status = item.status != CL_COMPLETE ? item.status : status;
  outbox.push(r);
}

void peer_link::start_locked() {
  if (started_ || closing_) return;
  started_ = true;
  thread_ = std::thread([this] {
    std::string name = "peer-o-" + label_;
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    run();
  });
}

void peer_link::start() {
  std::lock_guard lock(mutex_);
  start_locked();
}

void peer_link::post(peer_status&& item) {
  {
    std::lock_guard lock(mutex_);
    if (!closing_) {
      statuses_.push_back(std::move(item));
      start_locked();
      ready_.notify_one();
      return;
    }
  }
  fail_item(api_, outbox_, item, CL_DEVICE_NOT_AVAILABLE);
}

void peer_link::post(peer_migration&& item) {
  {
    std::lock_guard lock(mutex_);
    if (!closing_) {
      migrations_.push_back(std::move(item));
      start_locked();
      ready_.notify_one();
      return;
    }
  }
  fail_item(api_, outbox_, item, CL_DEVICE_NOT_AVAILABLE);
}

void peer_link::interrupt() {
  std::lock_guard lock(mutex_);
  if (fd_.valid()) ::shutdown(fd_.get(), SHUT_RDWR);
}

void peer_link::close() {
  std::thread thread;
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
    if (fd_.valid()) ::shutdown(fd_.get(), SHUT_RDWR);
    thread = std::move(thread_);
    ready_.notify_all();
  }
  if (thread.joinable()) thread.join();
  // Whatever the thread left (or posts that raced with closing).
  std::deque<peer_status> statuses;
  std::deque<peer_migration> migrations;
  {
    std::lock_guard lock(mutex_);
    statuses.swap(statuses_);
    migrations.swap(migrations_);
    fd_.reset();
  }
  for (auto& s : statuses) fail_item(api_, outbox_, s, CL_DEVICE_NOT_AVAILABLE);
  for (auto& m : migrations) fail_item(api_, outbox_, m, CL_DEVICE_NOT_AVAILABLE);
}

namespace {

// Reads one frame (header and payload of at most `limit` bytes) with the
// socket's receive timeout in force.
bool read_reply(int fd, p::frame_header& header, std::vector<uint8_t>& payload, uint32_t limit, std::string& why) {
  uint8_t head[p::frame_header_size];
  if (!read_exact(fd, head, sizeof head)) {
    why = "no welcome (closed or timed out)";
    return false;
  }
  header = p::load_header(head);
  if (header.payload_size > limit) {
    why = "reply of " + std::to_string(header.payload_size) + " bytes is over the limit";
    return false;
  }
  payload.resize(header.payload_size);
  if (!payload.empty() && !read_exact(fd, payload.data(), payload.size())) {
    why = "closed inside the reply to hello";
    return false;
  }
  return true;
}

void set_receive_timeout(int fd, int ms) {
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

}  // namespace

bool peer_link::connect(std::string& why) {
  endpoint where;
  if (!parse_endpoint(target_.address, p::default_port, where, why)) return false;
  unique_fd fd = connect_endpoint(where, connect_timeout_ms, why);
  if (!fd.valid()) {
    why = "cannot connect: " + why;
    return false;
  }
  std::vector<uint8_t> out;
  p::append_frame(out, p::make_hello(p::stream_kind::peer, target_.session, target_.key, "ferryd " + label_));
  if (!write_all(fd.get(), out.data(), out.size())) {
    why = "cannot send hello";
    return false;
  }
  count_out(counter_, 1, out.size());
  set_receive_timeout(fd.get(), connect_timeout_ms);
  p::frame_header header;
  std::vector<uint8_t> payload;
  if (!read_reply(fd.get(), header, payload, p::message_limit(static_cast<uint16_t>(p::message_id::welcome)), why))
    return false;
  count_in(counter_, 1, p::frame_header_size + payload.size());
  const char* error = "";
  if (header.message_id == static_cast<uint16_t>(p::message_id::refused)) {
    p::refused refused;
    if (!p::decode_payload(payload.data(), payload.size(), refused, error)) {
      why = std::string("malformed refusal: ") + error;
      return false;
    }
    why = "refused (" + std::to_string(refused.code) + "): " + refused.reason;
    return false;
  }
  p::welcome welcome;
  if (header.message_id != static_cast<uint16_t>(p::message_id::welcome) ||
      !p::decode_payload(payload.data(), payload.size(), welcome, error)) {
    why = "the reply to hello is no welcome";
    return false;
  }
  set_receive_timeout(fd.get(), 0);
  std::lock_guard lock(mutex_);
  if (closing_) {
    why = "the session is ending";
    return false;
  }
  fd_ = std::move(fd);
  FERRY_DEBUG("peer", "session %s: peer link to %s open", label_.c_str(), target_.address.c_str());
  return true;
}

void peer_link::disconnect() {
  std::lock_guard lock(mutex_);
  fd_.reset();
}

bool peer_link::send_statuses(std::deque<peer_status>& statuses, std::string& why) {
  if (statuses.empty()) return true;
  std::vector<uint8_t> out;
  for (peer_status& item : statuses) {
    cl_int status = true_status(api_, item.native, item.status, item.verify);
    if (item.native) api_.clReleaseEvent(std::exchange(item.native, nullptr));
    item.status = status;
    p::append_frame(out, p::peer_event_status{item.event, status});
  }
  // Only this thread writes; fd_ changes only on this thread too.
  if (!write_all(fd_.get(), out.data(), out.size())) {
    why = "write failed";
    return false;
  }
  count_out(counter_, statuses.size(), out.size());
  statuses.clear();
  return true;
}

void peer_link::complete_migration(peer_migration& item) {
  item.content_size.reset();
  command_record r;
  r.command = item.command;
  r.event = std::exchange(item.event, nullptr);
  r.unmap = std::exchange(item.source, {});
  r.status = CL_COMPLETE;
  r.notify = item.notify;
  outbox_.push(r);
}

void peer_link::fail(std::deque<peer_status>& statuses, std::optional<peer_migration>& current,
                     const std::string& why) {
  {
    std::lock_guard lock(mutex_);
    for (auto& s : statuses_) statuses.push_back(std::move(s));
    statuses_.clear();
    for (auto& m : migrations_) {
      if (!current) current = std::move(m);
      else fail_item(api_, outbox_, m, CL_DEVICE_NOT_AVAILABLE);
    }
    migrations_.clear();
  }
  size_t count = statuses.size() + (current ? 1 : 0);
  FERRY_WARN("peer", "session %s: peer link to %s failed: %s; %zu commands fail with CL_DEVICE_NOT_AVAILABLE",
             label_.c_str(), target_.address.c_str(), why.c_str(), count);
  for (auto& s : statuses) fail_item(api_, outbox_, s, CL_DEVICE_NOT_AVAILABLE);
  statuses.clear();
  if (current) fail_item(api_, outbox_, *current, CL_DEVICE_NOT_AVAILABLE);
  current.reset();
  disconnect();
}

void peer_link::run() {
  std::deque<peer_status> statuses;
  std::optional<peer_migration> current;
  uint64_t sent = 0;       // bytes of `current` sent
  uint64_t to_send = 0;    // its payload size
  bool began = false;      // its first frame went out (a zero-byte transfer has one)
  bool connected = false;
  std::unique_lock lock(mutex_);
  for (;;) {
    ready_.wait(lock, [&] { return closing_ || !statuses_.empty() || !migrations_.empty() || current; });
    if (closing_) break;
    for (auto& s : statuses_) statuses.push_back(std::move(s));
    statuses_.clear();
    if (!current && !migrations_.empty()) {
      current = std::move(migrations_.front());
      migrations_.pop_front();
      sent = to_send = 0;
      began = false;
    }
    lock.unlock();

    if (current && !began) {
      current->status = true_status(api_, current->event, current->status, current->verify);
      if (current->status != CL_COMPLETE) {
        // The map failed: nothing to send, the client learns the error.
        fail_item(api_, outbox_, *current, current->status);
        current.reset();
      } else {
        to_send = current->payload_size();
      }
    }
    std::string why;
    bool ok = true;
    if (!connected && (current || !statuses.empty())) {
      ok = connected = connect(why);
    }
    if (ok) ok = send_statuses(statuses, why);
    if (ok && current) {
      // One chunk, then statuses again.
      ok = write_bulk_chunk(fd_.get(), current->transfer, current->payload(), to_send, sent, counter_);
      if (!ok) why = "write failed";
      began = true;
      if (ok && sent == to_send) {
        complete_migration(*current);
        current.reset();
      }
    }
    if (!ok) {
      fail(statuses, current, why);
      connected = false;
    }
    lock.lock();
  }
  lock.unlock();
  if (!statuses.empty() || current) fail(statuses, current, "the session is ending");
}

}  // namespace ferry::server
