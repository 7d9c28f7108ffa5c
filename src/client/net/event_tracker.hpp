// The commands whose outcome the client waits for: the events the server's
// completions complete, and the failure hooks of commands that have no
// client event (migrations, event exports), whose failure the client must
// pass on to another server.
//
// Locks: tracked_mutex_ guards tracked_, failure_hooks_ and hooks_alive_;
// hooks_cv_ waits with it. Nothing runs under it but map operations: hooks
// and event completions run after it is released.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "client/net/bulk_receiver.hpp"
#include "client/net/bulk_sender.hpp"
#include "client/net/link_state.hpp"
#include "protocol/messages.hpp"

namespace ferry::client {

class event_tracker {
 public:
  event_tracker(link_state& link, bulk_sender& sender, bulk_receiver& receiver)
      : link_(link), sender_(sender), receiver_(receiver) {}

  /// See connection: track, on_failure, forget_failure, settle.
  void track(event* e);
  void on_failure(protocol::object_id command, std::function<void(cl_int)> hook);
  void forget_failure(protocol::object_id command);
  void settle();

  /// Completes what the server's completions report.
  void on_completions(const protocol::completions& batch);
  /// The session ended: every tracked event, awaited read and hook fails
  /// with what its end named (link_state::failure: CL_DEVICE_NOT_AVAILABLE,
  /// or CL_OUT_OF_RESOURCES), and so does what is tracked from now on. The
  /// bulk reader must have stopped.
  void fail_outstanding();

 private:
  /// Counts `count` hooks as gone and wakes settle().
  void retire_hooks(size_t count);

  link_state& link_;
  bulk_sender& sender_;
  bulk_receiver& receiver_;
  std::mutex tracked_mutex_;  // guards tracked_, failure_hooks_, hooks_alive_
  std::unordered_map<protocol::object_id, event*> tracked_;
  std::unordered_map<protocol::object_id, std::function<void(cl_int)>> failure_hooks_;
  size_t hooks_alive_ = 0;  // hooks registered and not yet destroyed (in the map or running)
  std::condition_variable hooks_cv_;  // with tracked_mutex_: settle() waits on it
};

}  // namespace ferry::client
