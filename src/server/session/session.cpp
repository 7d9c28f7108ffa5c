#include "server/session/session.hpp"

#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>

#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/version.hpp"
#include "server/commands/executor.hpp"
#include "server/daemon/handshake.hpp"
#include "server/peers/peer_reader.hpp"
#include "server/session/object_table.hpp"
#include "server/transport/bulk_reader.hpp"
#include "server/transport/bulk_writer.hpp"
#include "server/transport/control_reader.hpp"

namespace ferry::server {

namespace {

void name_thread(const char* role, const std::string& label) {
  // "ctl-r@1a2b3c4d": the thread's role and its session.
  name_this_thread(thread_name(role, label));
}

}  // namespace

session::session(const protocol::session_token& id, const protocol::session_token& secret,
                 const protocol::session_token& peer_key, stream_ptr control, std::string peer,
                 const session_services& services, std::function<void(session&)> finished)
    : secret_(secret),
      peer_key_(peer_key),
      services_(services),
      core_(std::make_shared<session_core>(id, services.api, services.printf, services.links,
                                           services.peer_address, services.grace, services.limits,
                                           services.peer_credentials)),
      control_(std::move(control)),
      peer_(std::move(peer)),
      finished_(std::move(finished)),
      bulk_lanes_(std::clamp<uint32_t>(services.bulk_lanes, 1, protocol::max_bulk_lanes)) {
  core_->daemon = services.daemon;
  core_->routes = services.routes;
  core_->files = services.files;
}

session::~session() {
  close("session destroyed");
  join();
}

void session::start() {
  FERRY_INFO("session", "session %s opened by %s", core_->label.c_str(), peer_.c_str());
  writer_ = std::make_unique<control_writer>(
      control_.get(), core_->outbox, core_->transfers, core_->printf,
      [this](const std::string& why) { connection_broken(why); }, &core_->callbacks,
      counter(protocol::link_kind::client_control, peer_),
      received_counts{&core_->control_in, &core_->bulk_in, core_->lanes_in.data(), bulk_lanes_}, &core_->reader);
  core_->acked = [this](const protocol::ack& ack) {
    return writer_->acknowledge(ack.control) && core_->bulk.kept().acknowledge(ack.bulk);
  };
  core_->lanes_acked = [this](const protocol::lane_ack& ack) {
    if (ack.received.size() >= bulk_lanes_) return false;
    for (size_t i = 0; i < ack.received.size(); ++i)
      if (!core_->lanes_out[i + 1].acknowledge(ack.received[i])) return false;
    return true;
  };
  control_writer_ = std::thread([this] {
    name_thread("ctl-w", core_->label);
    writer_->run();
  });
  control_reader_ = std::thread([this] {
    name_thread("ctl-r", core_->label);
    control_main();
  });
}

namespace {

// Sends the welcome that attaches a stream to its session; false, with the
// refusal to log, when the connection is gone already.
bool send_welcome(stream& s, const protocol::welcome& welcome, protocol::refused& why) {
  std::vector<uint8_t> frame;
  protocol::append_frame(frame, welcome);
  if (s.write_all(frame.data(), frame.size())) return true;
  why = {static_cast<int32_t>(refusal::session_closing), "cannot send welcome"};
  return false;
}

/// The client's first frame on a resumed control connection or a bulk lane:
/// an ack. The client sends it at once; a client that does not is treated
/// like a connection that broke again.
bool read_first_ack(stream& from, protocol::ack& ack, std::string& why) {
  from.set_receive_timeout(10000);
  uint8_t head[protocol::frame_header_size];
  bool ok = read_exact(&from, head, sizeof head);
  protocol::frame_header h = protocol::load_header(head);
  std::vector<uint8_t> payload;
  if (ok && h.message_id == static_cast<uint16_t>(protocol::message_id::ack) &&
      h.payload_size <= protocol::message_limit(h.message_id)) {
    payload.resize(h.payload_size);
    ok = read_exact(&from, payload.data(), payload.size());
  } else if (ok) {
    why = "the connection must begin with ack";
    return false;
  }
  from.set_receive_timeout(0);
  const char* error = "";
  if (!ok) {
    why = "the connection broke before its ack";
    return false;
  }
  if (!protocol::decode_payload(payload.data(), payload.size(), ack, error)) {
    why = std::string("malformed ack: ") + error;
    return false;
  }
  return true;
}

}  // namespace

bool session::attach_bulk(stream_ptr& fd, const std::string& peer, const protocol::welcome& welcome,
                          protocol::refused& why) {
  std::lock_guard lock(mutex_);
  if (closing_) {
    why = {static_cast<int32_t>(refusal::session_closing), "the session is ending"};
    return false;
  }
  if (bulk_) {
    why = {static_cast<int32_t>(refusal::bulk_already_attached), "the session has a bulk stream already"};
    return false;
  }
  if (!send_welcome(*fd, welcome, why)) return false;
  bulk_ = std::move(fd);
  bulk_peer_ = peer;
  stream* bulk_fd = bulk_.get();
  FERRY_INFO("session", "session %s: bulk stream attached from %s", core_->label.c_str(), peer.c_str());
  const bulk_reader::windows windows = bulk_reader::windows_for(*bulk_fd);
  // A client of version 8 on a plain Unix socket may share a window for its
  // reads too: the reader takes the offer, the writer fills the slots.
  std::shared_ptr<read_window_handoff> read_windows;
  if (windows == bulk_reader::windows::accepted && welcome.version >= protocol::read_window_version)
    read_windows = std::make_shared<read_window_handoff>();
  bulk_reader_ = std::thread([this, bulk_fd, windows, read_windows] {
    name_thread("blk-r", core_->label);
    bulk_reader reader(bulk_fd, core_->transfers, counter(protocol::link_kind::client_bulk, bulk_peer_),
                       &core_->bulk_in, &core_->outbox);
    reader.set_windows(windows, core_->label);
    reader.set_read_windows(read_windows);
    std::string reason;
    bulk_reader::end end = reader.run(reason);
    {
      std::lock_guard lock(mutex_);
      if (closing_ || bulk_.get() != bulk_fd) return;  // shut down on purpose; nothing to report
    }
    if (end == bulk_reader::end::violation) {
      report_end(bulk_peer_, reason, true);
      close(reason);
    } else {
      connection_broken(reason);
    }
  });
  bulk_writer_ = std::thread([this, bulk_fd, read_windows] {
    name_thread("blk-w", core_->label);
    uint64_t from = 0;
    uint64_t generation = 0;
    {
      // A resumed session's bulk stream may attach before the control reader
      // has heard how many bulk frames the client has.
      std::unique_lock lock(mutex_);
      resumed_.wait(lock, [&] { return closing_ || bulk_.get() != bulk_fd || client_bulk_received_.has_value(); });
      if (closing_ || bulk_.get() != bulk_fd) return;
      from = *client_bulk_received_;
      // Under the lock drop_bulk retires under: the stream is still ours, so
      // this is our generation, and dropping the stream will end this writer.
      generation = core_->bulk.writer_generation();
    }
    bulk_writer writer(bulk_fd, core_->bulk, generation, core_->outbox, core_->api,
                       [this](const std::string& why) { connection_broken(why); },
                       counter(protocol::link_kind::client_bulk, bulk_peer_), from);
    if (read_windows)
      writer.use_read_windows(read_windows, [this](const std::string& why) {
        report_end(bulk_peer_, why, true);
        close(why);
      });
    writer.run();
  });
  return true;
}

bool session::attach_lane(stream_ptr& fd, const std::string& peer, uint32_t lane, const protocol::welcome& welcome,
                          protocol::refused& why) {
  std::lock_guard lock(mutex_);
  if (closing_) {
    why = {static_cast<int32_t>(refusal::session_closing), "the session is ending"};
    return false;
  }
  if (lane == 0 || lane >= bulk_lanes_) {
    why = {static_cast<int32_t>(refusal::no_such_lane),
           "no bulk lane " + std::to_string(lane) + ": the session takes " + std::to_string(bulk_lanes_) +
               " bulk connections"};
    return false;
  }
  auto entry = std::make_unique<lane_in>();
  entry->fd = std::move(fd);
  entry->peer = peer;
  entry->lane = lane;
  if (lanes_[lane]) {
    // The client lost the old connection (or thinks so): it may look alive;
    // the new reader waits for the old one to stop, so that the count is final.
    lanes_[lane]->fd->shutdown();
    entry->previous = std::move(lanes_[lane]);
  }
  FERRY_INFO("session", "session %s: bulk lane %u attached from %s", core_->label.c_str(), lane, peer.c_str());
  lane_in* raw = entry.get();
  raw->reader = std::thread([this, raw, welcome] {
    name_thread("lane-r", core_->label);
    serve_lane(*raw, welcome);
  });
  lanes_[lane] = std::move(entry);
  return true;
}

void session::serve_lane(lane_in& lane, const protocol::welcome& welcome) {
  if (lane.previous) {
    // Its reader joined its writer: the counts and the kept frames are final.
    if (lane.previous->reader.joinable()) lane.previous->reader.join();
    lane.previous.reset();
  }
  stream* lane_fd = lane.fd.get();
  std::atomic<uint64_t>& received = core_->lanes_in[lane.lane];
  kept_frames& kept = core_->lanes_out[lane.lane];
  link_counter* counter = this->counter(protocol::link_kind::client_bulk, lane.peer);
  std::vector<uint8_t> frames;
  protocol::append_frame(frames, welcome);
  protocol::append_frame(frames, protocol::session_state{0, received.load(), static_cast<uint32_t>(services_.grace.count()),
                                                         bulk_lanes_});
  std::string reason;
  protocol::ack ack;
  if (!write_all(lane_fd, frames.data(), frames.size())) {
    FERRY_INFO("session", "session %s: bulk lane %u from %s closed before its welcome", core_->label.c_str(), lane.lane,
               lane.peer.c_str());
    return;
  }
  // What the client has of the lane's frames comes first: the writer sends
  // again what follows.
  if (!read_first_ack(*lane_fd, ack, reason)) {
    FERRY_INFO("session", "session %s: bulk lane %u from %s: %s", core_->label.c_str(), lane.lane, lane.peer.c_str(),
               reason.c_str());
    lane_fd->shutdown();
    return;
  }
  if (!kept.acknowledge(ack.bulk)) {
    reason = "bulk lane " + std::to_string(lane.lane) + " resumed with an ack of " + std::to_string(ack.bulk) +
             " frames, which were not sent";
    report_end(lane.peer, reason, true);
    close(reason);
    return;
  }
  // The writer sends pieces of large reads and CUDA copies back; the reader
  // takes chunks of large writes. Lanes carry bulk_data alone: no windows (a lane is a TCP connection).
  std::atomic<bool> stop{false};
  auto still_the_lane = [this, &lane] {
    std::lock_guard lock(mutex_);
    return !closing_ && lanes_[lane.lane].get() == &lane;
  };
  std::thread writer([&, lane_fd, counter] {
    name_thread("lane-w", core_->label);
    bulk_writer w(lane_fd, core_->bulk, 0, core_->outbox, core_->api,
                  [&](const std::string& why) {
                    if (still_the_lane()) connection_broken("bulk lane " + std::to_string(lane.lane) + ": " + why);
                  },
                  counter, ack.bulk);
    w.serve_lane(kept, stop);
    w.run();
  });
  bulk_reader reader(lane_fd, core_->transfers, counter, &received, &core_->outbox);
  reader.ack_each_chunk();
  bulk_reader::end end = reader.run(reason);
  stop.store(true, std::memory_order_release);
  lane_fd->shutdown();  // a writer inside a write returns
  core_->bulk.wake_all();
  writer.join();
  if (!still_the_lane()) return;  // shut down or replaced on purpose
  reason = "bulk lane " + std::to_string(lane.lane) + ": " + reason;
  if (end == bulk_reader::end::violation) {
    report_end(lane.peer, reason, true);
    close(reason);
  } else {
    connection_broken(reason);
  }
}

void session::drop_lanes() {
  std::vector<std::unique_ptr<lane_in>> dropped;
  {
    std::lock_guard lock(mutex_);
    for (auto& lane : lanes_)
      if (lane) {
        lane->fd->shutdown();
        dropped.push_back(std::move(lane));
      }
  }
  for (auto& lane : dropped)
    if (lane->reader.joinable()) lane->reader.join();
}

bool session::resume(stream_ptr& fd, const std::string& peer, const protocol::welcome& welcome,
                     protocol::refused& why) {
  std::lock_guard lock(mutex_);
  if (closing_) {
    why = {static_cast<int32_t>(refusal::session_closing), "the session is ending"};
    return false;
  }
  // A connection that is still up is dead to the client (roaming, or a
  // half-open TCP connection): the new one replaces it.
  if (control_) control_->shutdown();
  resume_fd_ = std::move(fd);  // an older resumption not yet taken is dropped
  resume_peer_ = peer;
  resume_welcome_ = welcome;
  resumed_.notify_all();
  return true;
}

void session::connection_broken(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    if (closing_) return;
    FERRY_DEBUG("session", "session %s: %s", core_->label.c_str(), reason.c_str());
    if (control_) control_->shutdown();
    if (bulk_) bulk_->shutdown();
    for (auto& lane : lanes_)
      if (lane) lane->fd->shutdown();
  }
  // A control reader that waits for bytes stops waiting once the grace
  // period is over (bytes on their way may still come until then), so that
  // the session ends rather than waiting for good for a client that is gone.
  core_->transfers.connection_lost_until(std::chrono::steady_clock::now() + services_.grace);
}

void session::drop_bulk() {
  std::thread reader, writer;
  stream_ptr dropped;  // closed only once both threads are gone
  {
    std::lock_guard lock(mutex_);
    if (bulk_) bulk_->shutdown();
    core_->bulk.retire_writer();  // an idle writer waits for jobs, not for the socket
    // No longer the session's stream: a writer still waiting to start (for
    // the client's ack) sees that and returns.
    dropped = std::move(bulk_);
    reader = std::move(bulk_reader_);
    writer = std::move(bulk_writer_);
    client_bulk_received_.reset();
    resumed_.notify_all();
  }
  if (reader.joinable()) reader.join();
  if (writer.joinable()) writer.join();
  // The lanes of a lost connection go with its bulk stream: a late failure
  // of one must not break the connection that resumes the session.
  drop_lanes();
}

bool session::read_resume_ack(protocol::ack& ack, std::string& why) { return read_first_ack(*control_, ack, why); }

bool session::wait_for_resume(std::string& why) {
  const auto grace = services_.grace;
  FERRY_INFO("session", "session %s: connection lost (%s); kept %.0f s for the client to resume it",
             core_->label.c_str(), why.c_str(), grace.count() / 1000.0);
  writer_->detach();
  drop_bulk();
  if (services_.on_client_state) services_.on_client_state(protocol::worker_state::detached, {});
  auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      control_.reset();
      if (!resumed_.wait_until(lock, deadline, [&] { return closing_ || resume_fd_ != nullptr; })) {
        why = "not resumed within " + std::to_string(grace.count() / 1000) + " s";
        return false;
      }
      if (closing_) {
        why = close_reason_;
        return false;
      }
      control_ = std::move(resume_fd_);
      peer_ = resume_peer_;
    }
    // A bulk stream attached since the loss belongs to an attempt that broke:
    // the client attaches a new one after this welcome.
    drop_bulk();
    core_->transfers.connection_back();
    // The counts are final now: nothing reads the old connection any more.
    std::vector<uint8_t> frames;
    protocol::append_frame(frames, resume_welcome_);
    protocol::session_state state{core_->control_in.load(), core_->bulk_in.load(),
                                  static_cast<uint32_t>(grace.count()), bulk_lanes_};
    protocol::append_frame(frames, state);
    protocol::ack ack;
    std::string broke;
    control_writer::attach_result attached = control_writer::attach_result::broken;
    if (!write_all(control_.get(), frames.data(), frames.size())) {
      broke = "the resumed connection broke before its welcome";
    } else if (!read_resume_ack(ack, broke)) {
      // handled below
    } else if ((attached = writer_->attach(control_.get(), ack.control)) == control_writer::attach_result::bad_ack) {
      why = "resumed with an ack of " + std::to_string(ack.control) + " control frames, which were not sent";
      return false;
    } else if (attached == control_writer::attach_result::broken) {
      broke = "the resumed connection broke while sending again what the client missed";
    } else if (!core_->bulk.kept().acknowledge(ack.bulk)) {
      why = "resumed with an ack of " + std::to_string(ack.bulk) + " bulk frames, which were not sent";
      return false;
    } else {
      std::lock_guard lock(mutex_);
      client_bulk_received_ = ack.bulk;
      resumed_.notify_all();
      FERRY_INFO("session", "session %s resumed by %s", core_->label.c_str(), peer_.c_str());
      if (services_.on_client_state) services_.on_client_state(protocol::worker_state::serving, peer_);
      return true;
    }
    FERRY_INFO("session", "session %s: %s (%s)", core_->label.c_str(), broke.c_str(), peer_.c_str());
  }
}

bool session::attach_peer_in(stream_ptr& fd, const std::string& peer, const protocol::session_token& link,
                             const protocol::welcome& welcome, protocol::refused& why) {
  std::lock_guard lock(mutex_);
  if (closing_) {
    why = {static_cast<int32_t>(refusal::session_closing), "the session is ending"};
    return false;
  }
  auto entry = std::make_unique<peer_in>();
  entry->fd = std::move(fd);
  entry->peer = peer;
  entry->link = link;
  if (!is_zero(link)) {
    auto old = std::find_if(peers_in_.begin(), peers_in_.end(),
                            [&](const auto& in) { return tokens_equal(in->link, link); });
    if (old != peers_in_.end()) {
      // The source lost its connection (or thinks so): the old one may look
      // alive; the new reader waits for the old one to stop.
      (*old)->fd->shutdown();
      entry->previous = std::move(*old);
      peers_in_.erase(old);
    }
  }
  link_counter* counter = this->counter(protocol::link_kind::peer_in, peer);
  peer_in* raw = entry.get();
  FERRY_INFO("session", "session %s: peer link %s from %s", core_->label.c_str(),
             raw->previous ? "reconnected" : "attached", peer.c_str());
  raw->reader = std::thread([this, raw, counter, welcome] {
    name_thread("peer-i", core_->label);
    serve_peer_in(*raw, counter, welcome);
  });
  peers_in_.push_back(std::move(entry));
  return true;
}

void session::serve_peer_in(peer_in& link, link_counter* counter, const protocol::welcome& welcome) {
  stream* link_fd = link.fd.get();
  if (link.previous) {
    // Its count is final once its reader has ended.
    if (link.previous->reader.joinable()) link.previous->reader.join();
    link.received = link.previous->received;
    link.violated = link.previous->violated;
    link.previous.reset();
  }
  std::vector<uint8_t> frames;
  if (link.violated) {
    protocol::append_frame(frames, protocol::refused{static_cast<int32_t>(refusal::unknown_session),
                                                     "this peer link was closed for breaking a rule"});
    write_all(link_fd, frames.data(), frames.size());
    FERRY_WARN("session", "session %s: refusing the peer link from %s again: it broke a rule", core_->label.c_str(),
               link.peer.c_str());
    link_fd->shutdown();
    return;
  }
  protocol::append_frame(frames, welcome);
  protocol::append_frame(frames, protocol::session_state{link.received, 0,
                                                         static_cast<uint32_t>(services_.grace.count()), 0});
  if (!write_all(link_fd, frames.data(), frames.size())) {
    FERRY_INFO("session", "session %s: the peer link from %s closed before its welcome", core_->label.c_str(),
               link.peer.c_str());
    return;
  }
  peer_reader reader(link_fd, *core_, counter, link.received);
  std::string reason;
  peer_reader::end end = reader.run(reason);
  link.received = reader.received();
  link.violated = end == peer_reader::end::violation;
  {
    std::lock_guard lock(mutex_);
    if (closing_) return;  // we are being shut down
  }
  // Only this link ends; the session and its other links go on.
  if (end == peer_reader::end::violation)
    FERRY_WARN("session", "session %s: closing the peer link from %s: %s", core_->label.c_str(), link.peer.c_str(),
               reason.c_str());
  else
    FERRY_INFO("session", "session %s: %s (%s)", core_->label.c_str(), reason.c_str(), link.peer.c_str());
  link_fd->shutdown();
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
    if (control_) control_->shutdown();
    if (bulk_) bulk_->shutdown();
    for (auto& lane : lanes_)
      if (lane) lane->fd->shutdown();
    for (auto& link : peers_in_) link->fd->shutdown();
    resumed_.notify_all();
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
    pump_result result;
    for (;;) {
      protocol::frame_assembler assembler(protocol::max_control_payload);
      result = run_control_reader(control_.get(), assembler, handler, why,
                                  counter(protocol::link_kind::client_control, peer_), &core_->reader);
      {
        std::lock_guard lock(mutex_);
        if (closing_) why = close_reason_;
        if (closing_) break;
      }
      // A lost connection (not a violation, not goodbye) leaves the session
      // waiting for its client; a partial frame it carried is sent again.
      if (result != pump_result::stop || handler.stop_requested() || services_.grace.count() == 0) break;
      if (!wait_for_resume(why)) break;
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
    drop_lanes();
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
