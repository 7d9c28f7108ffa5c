// The common path of every enqueue: wait-list checks, id assignment, the
// event the command completes, and blocking.
#pragma once

#include <span>

#include "client/core/memory/host_ptr_coherence.hpp"
#include "client/core/objects.hpp"
#include "client/core/memory/placement.hpp"
#include "client/net/connection.hpp"

namespace ferry::client {

/// Checks a wait list against the queue (spec clauses common to every
/// clEnqueue*): CL_INVALID_EVENT_WAIT_LIST, CL_INVALID_CONTEXT.
cl_int check_wait_list(const queue* q, cl_uint count, const cl_event* list);

enum class blocking { no, yes };
enum class data_parts { status_only = 1, status_and_data = 2 };

/// How a write that the application asked to block (`asked`) waits: its
/// data is on its way once sent, which is all a blocking write promises
/// ("ptr can be reused"); only a wait list whose failure the call must
/// report makes it wait for completion.
inline blocking write_blocking(blocking asked, cl_uint wait_count) {
  return asked == blocking::yes && wait_count > 0 ? blocking::yes : blocking::no;
}

/// An origin or region (size_t[3]) as the wire carries it.
inline protocol::size3 to_size3(const size_t* v) { return {v[0], v[1], v[2]}; }

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
  server& target() { return *target_; }

  /// Declares that the command uses `m` this way: in a context that spans
  /// servers, migrates the contents to this command's server first (the
  /// command then waits for them) and records the new holders. Call before
  /// send. An error means the command cannot run; return abandon(code).
  cl_int uses(memory* m, access how);
  /// Gives up on a command that was never sent; returns `code`.
  cl_int abandon(cl_int code);
  /// The event this command completes (nullptr when nobody observes it).
  event* tracked() { return event_; }
  /// Its place in its queue (queue::submitted after it).
  uint64_t sequence() const { return sequence_; }
  /// A command Ferry makes to keep CL_MEM_USE_HOST_PTR memory coherent: it
  /// neither pushes host changes itself nor settles others when it ends.
  void without_host_sync() { host_sync_ = false; }

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
    for (memory* root : written_) note_writer(root, event_);
    // Its place counts the writes of host changes enqueued after it but sent
    // ahead of it.
    for (memory* root : coherent_written_)
      note_coherent_writer(root, event_, queue_->submitted.load(std::memory_order_acquire));
    // Events the command waited for that only it needed (migrations).
    for (protocol::object_id id : release_after_send_) link_->post(protocol::release_object{id});
  }
  cl_int complete();

 private:
  void ensure_event();

  queue* queue_;
  cl_command_type type_;
  uint64_t sequence_;  // this command's place in its queue (queue::submitted)
  server* target_;     // the queue's server
  connection* link_;
  std::span<const cl_event> waits_;  // the application's wait list (valid during the call)
  std::vector<protocol::object_id> release_after_send_;
  std::vector<memory*> written_;  // roots this command may write (contexts that span servers)
  std::vector<memory*> coherent_written_;  // coherent roots it may write (host_ptr_coherence.hpp)
  bool host_sync_ = true;
  event* event_ = nullptr;
  cl_event* event_out_;
  bool blocking_;
};

/// True when FERRY_DEBUG=sync asks for every enqueue to block.
bool sync_debugging();

/// Creates an event object (API count 1) for a command or user event.
event* make_event(context* c, queue* q, cl_command_type type, protocol::object_id id);

}  // namespace ferry::client
