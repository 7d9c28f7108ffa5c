// The common path of every enqueue: wait-list checks, id assignment, the
// event the command completes, and blocking.
#pragma once

#include "client/core/objects.hpp"
#include "client/net/connection.hpp"

namespace ferry::client {

/// Checks a wait list against the queue (spec clauses common to every
/// clEnqueue*): CL_INVALID_EVENT_WAIT_LIST, CL_INVALID_CONTEXT.
cl_int check_wait_list(const queue* q, cl_uint count, const cl_event* list);

enum class blocking { no, yes };
enum class data_parts { status_only = 1, status_and_data = 2 };

/// One command being enqueued. `start` fills the header; the caller encodes
/// its message with `header`, then calls `submit`.
class command {
 public:
  /// `event_out` is the application's cl_event* (may be NULL).
  command(queue* q, cl_command_type type, cl_uint wait_count, const cl_event* wait_list, cl_event* event_out,
          blocking mode, data_parts parts = data_parts::status_only);
  command(const command&) = delete;
  ~command();

  protocol::command_header header;
  connection& link() { return *link_; }
  /// The event this command completes (nullptr when nobody observes it).
  event* tracked() { return event_; }

  /// Registers the event and sends `message`. For blocking commands waits for
  /// completion. Returns the entry point's result.
  template <class Message>
  cl_int submit(const Message& message) {
    send(message);
    return complete();
  }
  /// The two halves of submit, for commands that send bulk data in between.
  template <class Message>
  void send(const Message& message) {
    if (event_) link_->track(event_);
    link_->post(message);
  }
  cl_int complete();

 private:
  queue* queue_;
  uint64_t sequence_;  // this command's place in its queue (queue::submitted)
  connection* link_;
  event* event_ = nullptr;
  cl_event* event_out_;
  bool blocking_;
};

/// True when FERRY_DEBUG=sync asks for every enqueue to block.
bool sync_debugging();

/// Creates an event object (API count 1) for a command or user event.
event* make_event(context* c, queue* q, cl_command_type type, protocol::object_id id);

}  // namespace ferry::client
