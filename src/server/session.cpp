#include "server/session.hpp"

#include <pthread.h>
#include <chrono>
#include <sys/socket.h>

#include "common/log.hpp"
#include "protocol/dispatch.hpp"
#include "server/bulk_reader.hpp"
#include "server/bulk_writer.hpp"
#include "server/control_reader.hpp"
#include "server/executor.hpp"
#include "server/handshake.hpp"
#include "server/object_table.hpp"
#include "server/peer_reader.hpp"

namespace ferry::server {

namespace {

void name_thread(const char* role, const std::string& label) {
  // 15 characters at most: "ctl-r-1a2b3c4d".
  std::string name = std::string(role) + "-" + label;
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace

session::session(const protocol::session_token& id, const protocol::session_token& secret,
                 const protocol::session_token& peer_key, unique_fd control, std::string peer,
                 const session_services& services, std::function<void(session&)> finished)
    : secret_(secret),
      peer_key_(peer_key),
      services_(services),
      core_(std::make_shared<session_core>(id, services.api, services.printf, services.links,
                                           services.peer_address)),
      control_(std::move(control)),
      peer_(std::move(peer)),
      finished_(std::move(finished)) {}

session::~session() {
  close("session destroyed");
  join();
}

void session::start() {
  FERRY_INFO("session", "session %s opened by %s", core_->label.c_str(), peer_.c_str());
  control_writer_ = std::thread([this] {
    name_thread("ctl-w", core_->label);
    control_writer writer(control_.get(), core_->outbox, core_->transfers, core_->printf,
                          [this](const std::string& why) { close(why); }, &core_->callbacks,
                          counter(protocol::link_kind::client_control, peer_));
    writer.run();
  });
  control_reader_ = std::thread([this] {
    name_thread("ctl-r", core_->label);
    control_main();
  });
}

namespace {

// Sends the welcome that attaches a stream to its session; false, with the
// refusal to log, when the connection is gone already.
bool send_welcome(int fd, const protocol::welcome& welcome, protocol::refused& why) {
  std::vector<uint8_t> frame;
  protocol::append_frame(frame, welcome);
  if (write_all(fd, frame.data(), frame.size())) return true;
  why = {static_cast<int32_t>(refusal::session_closing), "cannot send welcome"};
  return false;
}

}  // namespace

bool session::attach_bulk(unique_fd& fd, const std::string& peer, const protocol::welcome& welcome,
                          protocol::refused& why) {
  std::lock_guard lock(mutex_);
  if (closing_) {
    why = {static_cast<int32_t>(refusal::session_closing), "the session is ending"};
    return false;
  }
  if (bulk_.valid()) {
    why = {static_cast<int32_t>(refusal::bulk_already_attached), "the session has a bulk stream already"};
    return false;
  }
  if (!send_welcome(fd.get(), welcome, why)) return false;
  bulk_ = std::move(fd);
  bulk_peer_ = peer;
  int bulk_fd = bulk_.get();
  FERRY_INFO("session", "session %s: bulk stream attached from %s", core_->label.c_str(), peer.c_str());
  bulk_reader_ = std::thread([this, bulk_fd] {
    name_thread("blk-r", core_->label);
    bulk_reader reader(bulk_fd, core_->transfers, counter(protocol::link_kind::client_bulk, bulk_peer_));
    std::string reason;
    bulk_reader::end end = reader.run(reason);
    bool violation = end == bulk_reader::end::violation;
    {
      std::lock_guard lock(mutex_);
      if (closing_) return;  // we are being shut down; nothing to report
    }
    report_end(bulk_peer_, reason, violation);
    close(reason);
  });
  bulk_writer_ = std::thread([this, bulk_fd] {
    name_thread("blk-w", core_->label);
    bulk_writer writer(bulk_fd, core_->bulk, core_->outbox, core_->api, [this](const std::string& why) { close(why); },
                       counter(protocol::link_kind::client_bulk, bulk_peer_));
    writer.run();
  });
  return true;
}

bool session::attach_peer_in(unique_fd& fd, const std::string& peer, const protocol::welcome& welcome,
                             protocol::refused& why) {
  std::lock_guard lock(mutex_);
  if (closing_) {
    why = {static_cast<int32_t>(refusal::session_closing), "the session is ending"};
    return false;
  }
  if (!send_welcome(fd.get(), welcome, why)) return false;
  link_counter* counter = this->counter(protocol::link_kind::peer_in, peer);
  auto link = std::make_unique<peer_in>();
  link->fd = std::move(fd);
  link->peer = peer;
  int link_fd = link->fd.get();
  FERRY_INFO("session", "session %s: peer link attached from %s", core_->label.c_str(), peer.c_str());
  link->reader = std::thread([this, link_fd, peer, counter] {
    name_thread("peer-i", core_->label);
    peer_reader reader(link_fd, *core_, counter);
    std::string reason;
    peer_reader::end end = reader.run(reason);
    {
      std::lock_guard lock(mutex_);
      if (closing_) return;  // we are being shut down
    }
    // Only this link ends; the session and its other links go on.
    if (end == peer_reader::end::violation)
      FERRY_WARN("session", "session %s: closing the peer link from %s: %s", core_->label.c_str(), peer.c_str(),
                 reason.c_str());
    else
      FERRY_INFO("session", "session %s: %s (%s)", core_->label.c_str(), reason.c_str(), peer.c_str());
    ::shutdown(link_fd, SHUT_RDWR);
  });
  peers_in_.push_back(std::move(link));
  return true;
}

void session::join_peer_readers() {
  std::vector<std::unique_ptr<peer_in>> links;
  {
    std::lock_guard lock(mutex_);
    links.swap(peers_in_);
  }
  for (auto& link : links)
    if (link->reader.joinable()) link->reader.join();
}

link_counter* session::counter(protocol::link_kind kind, const std::string& peer) const {
  return services_.links ? services_.links->find(kind, remote_host(peer)) : nullptr;
}

void session::report_end(const std::string& connection_peer, const std::string& reason, bool violation) {
  if (violation)
    FERRY_WARN("session", "closing %s session %s: %s", connection_peer.c_str(), core_->label.c_str(), reason.c_str());
  else
    FERRY_INFO("session", "session %s: %s (%s)", core_->label.c_str(), reason.c_str(), connection_peer.c_str());
}

void session::close(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    if (closing_) return;
    closing_ = true;
    close_reason_ = reason;
    // Unblocks recv/send in every thread of this session.
    if (control_.valid()) ::shutdown(control_.get(), SHUT_RDWR);
    if (bulk_.valid()) ::shutdown(bulk_.get(), SHUT_RDWR);
    for (auto& link : peers_in_) ::shutdown(link->fd.get(), SHUT_RDWR);
  }
  core_->peers.interrupt();
  // The control writer keeps running: it still frees what finished commands
  // leave behind, until the control reader's teardown closes its outbox.
  core_->bulk.close();
  core_->transfers.abort();
}

void session::control_main() {
  std::string why;
  size_t objects = 0;
  bool settled = true;
  {
    executor handler(core_, services_.catalog);
    // Owners of the core besides native callbacks still to come.
    const long owners = core_.use_count();
    protocol::frame_assembler assembler(protocol::max_control_payload);
    pump_result result =
        run_control_reader(control_.get(), assembler, handler, why, counter(protocol::link_kind::client_control, peer_));
    {
      std::lock_guard lock(mutex_);
      if (closing_) why = close_reason_;
    }
    if (result == pump_result::violation) report_end(peer_, why, true);
    close(why);
    // Nothing may feed the transfer table any more before the native teardown.
    std::thread bulk_reader, bulk_writer;
    {
      std::lock_guard lock(mutex_);
      bulk_reader = std::move(bulk_reader_);
      bulk_writer = std::move(bulk_writer_);
    }
    if (bulk_reader.joinable()) bulk_reader.join();
    if (bulk_writer.joinable()) bulk_writer.join();
    join_peer_readers();
    // No peer will set the imports still waiting now.
    core_->imports.fail_pending(CL_DEVICE_NOT_AVAILABLE);
    objects = handler.object_count();
    handler.shutdown();
    // Every queue is finished; wait for the callbacks of its commands to
    // come in (each holds the core), so that the writer frees what they
    // leave behind and nothing of the session is touched afterwards.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (core_.use_count() > owners) {
      if (std::chrono::steady_clock::now() > deadline) {
        settled = false;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  // Peer links fail what they still hold (reported to a client that is gone).
  core_->peers.close();
  core_->imports.clear();
  core_->outbox.close();
  if (control_writer_.joinable()) control_writer_.join();
  if (settled) {
    core_->transfers.clear();
  } else {
    // The state stays alive (the callbacks' slots hold it) and is freed when they run.
    FERRY_WARN("session", "session %s: %zu native callbacks did not come within 10 s after the queues finished",
               core_->label.c_str(), core_->callbacks.outstanding());
  }
  FERRY_INFO("session", "session %s closed (%s): %s; %zu objects released", core_->label.c_str(), peer_.c_str(),
             why.c_str(), objects);
  if (finished_) finished_(*this);
}

void session::join() {
  // The control reader joins the session's other threads before it ends.
  if (control_reader_.joinable() && control_reader_.get_id() != std::this_thread::get_id()) control_reader_.join();
}

}  // namespace ferry::server
