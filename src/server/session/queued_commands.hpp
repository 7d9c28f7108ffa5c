// How many commands of a session are enqueued and not yet complete, for the
// --session-queued quota, without a native event per command.
//
// Every `interval` commands on a queue leave a checkpoint: the command's own
// event on an in-order queue, a marker (which waits for everything enqueued
// before it) on an out-of-order one. A completed checkpoint proves the
// commands it covers complete, so the count is exact at checkpoints and over
// by less than one interval per queue in between: it errs towards refusing,
// never towards letting more in. Checkpoints are polled only when the count
// reaches the limit. Control reader thread only.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "protocol/messages.hpp"
#include "server/native/api.hpp"

namespace ferry::server {

class queued_commands {
 public:
  /// `limit` 0: nothing is counted.
  queued_commands(const native::api& api, uint64_t limit);
  ~queued_commands() { release_all(); }
  queued_commands(const queued_commands&) = delete;
  queued_commands& operator=(const queued_commands&) = delete;

  /// Commands not known to be complete; polls the checkpoints first when
  /// that count has reached the limit.
  uint64_t count();
  /// Whether the next command on in-order `queue` is a checkpoint: it must
  /// then bring its native event to enqueued().
  bool wants_event(protocol::object_id queue) const;
  /// A command was enqueued on `queue` (`handle`); `event` is its native
  /// event, if it has one.
  void enqueued(protocol::object_id queue, cl_command_queue handle, bool out_of_order, cl_event event);
  /// The client released `queue`: its commands since the last checkpoint get
  /// one (a marker), so that they stop counting once they complete.
  void queue_released(protocol::object_id queue, cl_command_queue handle);
  /// Releases every checkpoint (session teardown, queues finished).
  void release_all();

  uint64_t interval() const { return interval_; }

 private:
  struct checkpoint {
    cl_event event;   // retained
    uint64_t covers;  // commands it proves complete
  };
  void poll();
  void add_checkpoint(protocol::object_id queue, cl_command_queue handle);

  const native::api& api_;
  const uint64_t limit_;
  const uint64_t interval_;
  uint64_t count_ = 0;
  std::unordered_map<protocol::object_id, uint64_t> since_checkpoint_;  // per live queue
  std::vector<checkpoint> checkpoints_;
};

}  // namespace ferry::server
