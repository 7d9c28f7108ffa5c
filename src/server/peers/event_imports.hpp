// A session's imported events (import_event) and the statuses peers sent for
// them (peer_event_status), which may come first.
//
// The control reader adds and forgets imports; incoming peer links deliver
// statuses. Both sides meet here under one lock; the native
// clSetUserEventStatus runs outside it, because it may run callbacks.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "protocol/messages.hpp"
#include "server/native/api.hpp"

namespace ferry::server {

class event_imports {
 public:
  explicit event_imports(const native::api& api) : api_(api) {}
  ~event_imports() { clear(); }
  event_imports(const event_imports&) = delete;
  event_imports& operator=(const event_imports&) = delete;

  /// Statuses kept for events not imported yet, at most; a peer that sends
  /// more is broken (its link closes).
  static constexpr size_t max_early = 1u << 16;

  /// import_event made native user event `event` in `context` (both retained
  /// here until the status is set: the client may release its objects while
  /// commands still wait for the event). When the peer's status came first,
  /// sets it now and returns true with it in `status`.
  bool add(protocol::object_id id, cl_event event, cl_context context, cl_int& status);
  enum class delivery { applied, kept, ignored, overflow };
  /// peer_event_status: sets the imported event's status (at most once), or
  /// keeps the status for an import still to come.
  delivery deliver(protocol::object_id id, cl_int status);
  /// release_object of an imported event: forgotten at once if its status
  /// came, else once it comes (commands already enqueued still wait for it).
  void forget(protocol::object_id id);
  /// Releases every import and forgets early statuses (session end).
  void clear();
  /// Session end, before the queues are finished: sets every import still
  /// waiting for its status to `status` (negative), so that no command waits
  /// forever for a peer that will not speak again, and releases them.
  void fail_pending(cl_int status);

  size_t early_count() const;
  /// Whether `id` is an import still waiting for its status.
  bool waiting(protocol::object_id id) const;
  /// Keeps the native event of a command that waits for import `id` alive
  /// until the import's status is set. PoCL 3.1 touches the waiting commands
  /// when a user event is set, even those that failed meanwhile (because
  /// another event they waited for failed) and were released: without this,
  /// a late status crashes it. Does nothing when the status came already.
  void hold(protocol::object_id id, cl_event dependent);

 private:
  struct import {
    cl_event event = nullptr;      // retained; null once its status is set
    cl_context context = nullptr;  // retained while `event` is
    bool released = false;         // the client released it; erase once the status is set
    std::vector<cl_event> dependents;  // retained until the status is set (see hold)
  };
  /// Sets `i`'s status and lets go of everything it held (outside the lock).
  void settle(import& i, cl_int status);
  /// Empties the table; returns the imports still waiting for a status.
  std::vector<import> take_pending();
  const native::api& api_;
  mutable std::mutex mutex_;  // guards imports_ and early_
  std::unordered_map<protocol::object_id, import> imports_;
  std::unordered_map<protocol::object_id, cl_int> early_;
};

}  // namespace ferry::server
