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

  /// import_event made native user event `event` (retained here). When the
  /// peer's status came first, sets it now and returns true with it in
  /// `status`.
  bool add(protocol::object_id id, cl_event event, cl_int& status);
  enum class delivery { applied, kept, ignored, overflow };
  /// peer_event_status: sets the imported event's status (at most once), or
  /// keeps the status for an import still to come.
  delivery deliver(protocol::object_id id, cl_int status);
  /// release_object of an imported event.
  void forget(protocol::object_id id);
  /// Releases every import and forgets early statuses (session end).
  void clear();

  size_t early_count() const;

 private:
  struct import {
    cl_event event = nullptr;  // retained; null once its status is set
  };
  const native::api& api_;
  mutable std::mutex mutex_;  // guards imports_ and early_
  std::unordered_map<protocol::object_id, import> imports_;
  std::unordered_map<protocol::object_id, cl_int> early_;
};

}  // namespace ferry::server
