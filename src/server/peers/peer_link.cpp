#include "server/peers/peer_link.hpp"

#include <sys/socket.h>
#include <sys/time.h>

#include <cstring>

#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/outgoing.hpp"
#include "protocol/version.hpp"
#include "server/daemon/handshake.hpp"
#include "server/transport/bulk_writer.hpp"
#include "server/transport/control_writer.hpp"

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
                     std::string label, std::chrono::milliseconds grace,
                     std::shared_ptr<const protocol::credentials> credentials)
    : target_(std::move(target)),
      api_(api),
      outbox_(outbox),
      stats_(stats),
      tcp_counter_(stats ? stats->find(p::link_kind::peer_out, target_.address) : nullptr),
      label_(std::move(label)),
      grace_(grace),
      credentials_(credentials ? std::move(credentials) : std::make_shared<const protocol::credentials>()),
      counter_(tcp_counter_) {}

void peer_link::prefer_local(std::string address) {
  std::lock_guard lock(mutex_);
  local_address_ = std::move(address);
}

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
    name_this_thread(thread_name("peer-o", label_));
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
  ending_ = true;
  if (fd_) fd_->shutdown();
  ready_.notify_all();
}

void peer_link::close() {
  std::thread thread;
  {
    std::lock_guard lock(mutex_);
    closing_ = ending_ = true;
    if (fd_) fd_->shutdown();
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

stream_ptr peer_link::open(std::string& why) {
  std::string local;
  {
    std::lock_guard lock(mutex_);
    local = local_address_;
  }
  dialled_local_.clear();
  window_counter_ = nullptr;
  if (!local.empty()) {
    // The same host: the Unix socket first. Any failure there (no such
    // socket, refused, not permitted) leaves the TCP address, which carries
    // the same frames.
    endpoint near;
    std::string near_why;
    stream_ptr made;
    if (parse_endpoint(local, p::default_port, near, near_why))
      made = p::open_stream(near, *credentials_, connect_timeout_ms, near_why);
    if (made) {
      dialled_local_ = local;
      counter_ = stats_ ? stats_->find(p::link_kind::peer_out, local) : nullptr;
      // The window's traffic apart, so that `ferry counters` shows what went through shared memory.
      window_counter_ = stats_ ? stats_->find(p::link_kind::peer_out, "shm:" + near.host) : nullptr;
      return made;
    }
    if (local_refused_ != local) {
      local_refused_ = local;
      FERRY_INFO("peer", "session %s: peer on this host not reachable at %s (%s); the link uses %s",
                 label_.c_str(), local.c_str(), near_why.c_str(), target_.address.c_str());
    }
  }
  counter_ = tcp_counter_;
  endpoint where;
  if (!parse_endpoint(target_.address, p::default_port, where, why)) return nullptr;
  stream_ptr made = p::open_stream(where, *credentials_, connect_timeout_ms, why);
  if (!made) why = "cannot connect: " + why;
  return made;
}

peer_link::opened peer_link::connect(uint64_t& received, std::string& why) {
  if (is_zero(link_id_) && !random_token(link_id_)) {
    why = "no randomness for a link id";
    return opened::failed;
  }
  stream_ptr made = open(why);
  if (!made) return opened::failed;
  stream* fd = made.get();
  {
    // In fd_ from now on, so that interrupt() and close() can cut a slow handshake short.
    std::lock_guard lock(mutex_);
    if (ending_) {
      why = "the session is ending";
      return opened::failed;
    }
    fd_ = std::move(made);
    broken_ = false;
  }
  auto fail = [&](opened how) {
    std::lock_guard lock(mutex_);
    fd_.reset();
    return how;
  };
  p::hello hello = p::make_hello(p::stream_kind::peer, target_.session, target_.key, "ferryd " + label_, link_id_);
  p::frame_header header;
  std::vector<uint8_t> payload;
  if (!p::exchange_hello(*fd, hello, *credentials_, connect_timeout_ms, header, payload, why))
    return fail(opened::failed);
  {
    std::vector<uint8_t> sent;
    p::append_frame(sent, hello);
    count_out(counter_, 1, sent.size());
  }
  count_in(counter_, 1, p::frame_header_size + payload.size());
  const char* error = "";
  if (header.message_id == static_cast<uint16_t>(p::message_id::refused)) {
    p::refused refused;
    if (!p::decode_payload(payload.data(), payload.size(), refused, error)) {
      why = std::string("malformed refusal: ") + error;
      return fail(opened::failed);
    }
    why = "refused (" + std::to_string(refused.code) + "): " + refused.reason;
    return fail(opened::refused);
  }
  p::welcome welcome;
  if (header.message_id != static_cast<uint16_t>(p::message_id::welcome) ||
      !p::decode_payload(payload.data(), payload.size(), welcome, error)) {
    why = "the reply to hello is no welcome";
    return fail(opened::failed);
  }
  // How much of this link the destination has.
  p::session_state state;
  if (!p::read_frame(*fd, header, payload, p::message_limit(static_cast<uint16_t>(p::message_id::session_state)), why)) {
    why = "no session_state after the welcome: " + why;
    return fail(opened::failed);
  }
  count_in(counter_, 1, p::frame_header_size + payload.size());
  if (header.message_id != static_cast<uint16_t>(p::message_id::session_state) ||
      !p::decode_payload(payload.data(), payload.size(), state, error)) {
    why = "the welcome is not followed by session_state";
    return fail(opened::failed);
  }
  fd->set_receive_timeout(0);
  received = state.control;
  was_up_ = true;
  version_ = welcome.version;
  ack_reader_ = std::thread([this, fd, counter = counter_] {
    name_this_thread(thread_name("peer-a", label_));
    read_acks(fd, counter);
  });
  FERRY_DEBUG("peer", "session %s: peer link to %s open%s%s; the destination has %llu of %llu frames",
              label_.c_str(), target_.address.c_str(), dialled_local_.empty() ? "" : " through ",
              dialled_local_.c_str(), static_cast<unsigned long long>(received),
              static_cast<unsigned long long>(backlog_.sent()));
  return opened::yes;
}

void peer_link::read_acks(stream* fd, link_counter* counter) {
  std::string why;
  for (;;) {
    uint8_t head[p::frame_header_size];
    if (!read_exact(fd, head, sizeof head)) {
      why = "connection closed";
      break;
    }
    p::frame_header h = p::load_header(head);
    // Only acks come back on a peer link.
    if (h.message_id != static_cast<uint16_t>(p::message_id::ack) || h.flags != 0 ||
        h.payload_size > p::message_limit(h.message_id)) {
      why = "the destination sent something other than an ack";
      break;
    }
    uint8_t payload[64];
    if (h.payload_size && !read_exact(fd, payload, h.payload_size)) {
      why = "connection closed inside an ack";
      break;
    }
    count_in(counter, 1, p::frame_header_size + h.payload_size);
    p::ack ack;
    const char* error = "";
    if (!p::decode_payload(payload, h.payload_size, ack, error)) {
      why = std::string("malformed ack: ") + error;
      break;
    }
    std::lock_guard lock(mutex_);
    if (ack.control > acked_) {
      acked_ = ack.control;
      ready_.notify_all();
    }
  }
  std::lock_guard lock(mutex_);
  broken_ = true;
  broken_why_ = why;
  ready_.notify_all();
}

void peer_link::disconnect() {
  {
    std::lock_guard lock(mutex_);
    if (fd_) fd_->shutdown();
  }
  if (ack_reader_.joinable()) ack_reader_.join();
  // The destination's mapping of the window went with the connection.
  window_.reset();
  window_decided_ = false;
  std::lock_guard lock(mutex_);
  fd_.reset();
  broken_ = false;
}

bool peer_link::connection_alive() {
  std::lock_guard lock(mutex_);
  return !broken_ && !ending_;
}

peer_window* peer_link::window_for_chunks() {
  if (window_decided_) return window_.get();
  window_decided_ = true;
  if (dialled_local_.empty() || !peer_window::possible(*fd_, version_)) return nullptr;
  std::string why;
  window_ = peer_window::offer(*fd_, window_counter_, why);
  if (!window_) {
    // A failed write shows on the next one; a refused memfd leaves the socket.
    FERRY_INFO("peer", "session %s: no shared-memory window to %s (%s); chunks go on the socket", label_.c_str(),
               dialled_local_.c_str(), why.c_str());
    return nullptr;
  }
  FERRY_DEBUG("peer", "session %s: migrations to %s go through a shared-memory window of %u x %u bytes",
              label_.c_str(), dialled_local_.c_str(), peer_window::slots, p::max_bulk_chunk);
  return window_.get();
}

bool peer_link::acknowledge(uint64_t received, std::string& why) {
  std::vector<peer_migration> done;
  if (backlog_.acknowledge(received, done) != peer_backlog::ack_result::ok) {
    why = "the destination counts " + std::to_string(received) + " frames, but " + std::to_string(backlog_.sent()) +
          " were sent";
    return false;
  }
  for (peer_migration& m : done) complete_migration(m);
  return true;
}

bool peer_link::send_statuses(std::deque<peer_status>& statuses, std::string& why) {
  if (statuses.empty()) return true;
  std::vector<uint8_t> out;
  for (peer_status& item : statuses) {
    cl_int status = true_status(api_, item.native, item.status, item.verify);
    if (item.native) api_.clReleaseEvent(std::exchange(item.native, nullptr));
    item.status = status;
    backlog_.add_status(item, out);
  }
  const size_t count = statuses.size();
  FERRY_TRACE("timeline", "sending %zu event statuses to %s", count, target_.address.c_str());
  // Numbered and kept now: if the write fails, the destination's count says which to send again.
  statuses.clear();
  // Only this thread writes; fd_ changes only on this thread too.
  count_out(counter_, count, out.size());  // before the write (link_counter says why)
  if (!write_all(fd_.get(), out.data(), out.size())) {
    why = "write failed";
    return false;
  }
  return true;
}

void peer_link::complete_migration(peer_migration& item) {
  FERRY_TRACE("timeline", "command %llu: the destination has every byte", static_cast<unsigned long long>(item.command));
  item.content_size.reset();
  command_record r;
  r.command = item.command;
  r.event = std::exchange(item.event, nullptr);
  r.unmap = std::exchange(item.source, {});
  r.status = CL_COMPLETE;
  r.notify = item.notify;
  outbox_.push(r);
}

bool peer_link::outstanding(const std::deque<peer_status>& statuses) const {
  return !statuses.empty() || !backlog_.empty();
}

void peer_link::fail_all(std::deque<peer_status>& statuses, const std::string& why) {
  disconnect();
  std::vector<peer_status> kept;
  std::vector<peer_migration> migrations;
  backlog_.take_all(kept, migrations);
  {
    std::lock_guard lock(mutex_);
    for (auto& s : statuses_) statuses.push_back(std::move(s));
    statuses_.clear();
    for (auto& m : migrations_) migrations.push_back(std::move(m));
    migrations_.clear();
    acked_ = 0;
  }
  // The destination counted frames of the old link id; the next link starts afresh.
  link_id_ = {};
  was_up_ = false;
  size_t count = kept.size() + statuses.size() + migrations.size();
  FERRY_WARN("peer", "session %s: peer link to %s failed: %s; %zu commands fail with CL_DEVICE_NOT_AVAILABLE",
             label_.c_str(), target_.address.c_str(), why.c_str(), count);
  for (auto& s : kept) fail_item(api_, outbox_, s, CL_DEVICE_NOT_AVAILABLE);
  for (auto& s : statuses) fail_item(api_, outbox_, s, CL_DEVICE_NOT_AVAILABLE);
  statuses.clear();
  for (auto& m : migrations) fail_item(api_, outbox_, m, CL_DEVICE_NOT_AVAILABLE);
}

bool peer_link::reconnect(std::optional<std::chrono::steady_clock::time_point> lost, std::string& why) {
  auto backoff = first_backoff;
  for (;;) {
    uint64_t received = 0;
    switch (connect(received, why)) {
      case opened::yes:
        if (received < backlog_.acknowledged()) {
          why = "the destination has " + std::to_string(received) + " frames, fewer than it acknowledged";
          return false;
        }
        if (!acknowledge(received, why)) return false;
        if (backlog_.resend(fd_.get(), counter_)) return true;
        why = "write failed while sending again what the destination lacks";
        disconnect();
        if (!lost) lost = std::chrono::steady_clock::now();
        break;
      case opened::refused: return false;
      case opened::failed: break;
    }
    // A link that was never up, or whose frames all arrived, does not wait.
    if (!lost) return false;
    const auto deadline = *lost + grace_;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      why += "; not back within the grace period of " + std::to_string(grace_.count()) + " ms";
      return false;
    }
    std::unique_lock lock(mutex_);
    if (ready_.wait_for(lock, std::min<std::chrono::steady_clock::duration>(backoff, deadline - now),
                        [&] { return ending_; })) {
      why = "the session is ending";
      return false;
    }
    backoff = std::min(backoff * 2, max_backoff);
  }
}

void peer_link::run() {
  std::deque<peer_status> statuses;  // taken from statuses_, not yet numbered
  bool connected = false;
  std::unique_lock lock(mutex_);
  for (;;) {
    ready_.wait(lock, [&] {
      return closing_ || !statuses_.empty() || (!backlog_.has_current() && !migrations_.empty()) ||
             backlog_.has_current() || acked_ > backlog_.acknowledged() || (connected && broken_) ||
             (!connected && !backlog_.empty());
    });
    if (closing_) break;
    for (auto& s : statuses_) statuses.push_back(std::move(s));
    statuses_.clear();
    std::optional<peer_migration> next;
    if (!backlog_.has_current() && !migrations_.empty()) {
      next = std::move(migrations_.front());
      migrations_.pop_front();
    }
    const uint64_t acked = acked_;
    const bool broken = connected && broken_;
    const std::string broken_why = broken_why_;
    const bool ending = ending_;
    lock.unlock();

    std::string why;
    bool ok = acknowledge(acked, why);
    if (ok && next) {
      next->status = true_status(api_, next->event, next->status, next->verify);
      // A failed map sends nothing; the client learns the map's error.
      if (next->status != CL_COMPLETE) fail_item(api_, outbox_, *next, next->status);
      else {
        const uint64_t to_send = next->payload_size();
        FERRY_TRACE("timeline", "command %llu: sending %llu bytes to %s", static_cast<unsigned long long>(next->command),
                    static_cast<unsigned long long>(to_send), target_.address.c_str());
        backlog_.begin(std::move(*next), to_send);
      }
    }
    std::optional<std::chrono::steady_clock::time_point> lost;
    if (ok && broken) {
      disconnect();
      connected = false;
      // Frames not acknowledged may be lost: get the link back. With none, the next item reconnects.
      if (!backlog_.empty()) lost = std::chrono::steady_clock::now();
      why = broken_why;
    }
    if (ok && !connected && outstanding(statuses)) {
      if (ending) {
        why = "the session is ending";
        ok = false;
      } else {
        // A link that was up is given the grace period from when it is
        // needed again, even if its connection ended while idle.
        if (!lost && was_up_) lost = std::chrono::steady_clock::now();
        ok = connected = reconnect(lost, why);
      }
    }
    if (ok && connected) {
      bool sent = send_statuses(statuses, why);
      if (sent && backlog_.has_current()) {
        peer_backlog::chunk_route route{[this] { return window_for_chunks(); }, window_counter_,
                                        [this] { return connection_alive(); }};
        sent = backlog_.send_chunk(fd_.get(), counter_, route);
        if (!sent) why = "write failed";
      }
      if (!sent) {
        // Kept: the next round connects again and sends what did not arrive.
        FERRY_INFO("peer", "session %s: peer link to %s lost (%s); connecting again", label_.c_str(),
                   target_.address.c_str(), why.c_str());
        disconnect();
        connected = false;
        if (!ending) {
          ok = connected = reconnect(std::chrono::steady_clock::now(), why);
        } else {
          why = "the session is ending";
          ok = false;
        }
      }
    }
    if (!ok) {
      fail_all(statuses, why);
      connected = false;
    }
    lock.lock();
  }
  lock.unlock();
  if (outstanding(statuses)) {
    fail_all(statuses, "the session is ending");
  } else {
    disconnect();
  }
}

}  // namespace ferry::server
