#include "client/core/command.hpp"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "client/core/event_state.hpp"
#include "client/core/servers/server.hpp"
#include "common/log.hpp"

namespace ferry::client {

bool sync_debugging() {
  static const bool enabled = [] {
    const char* v = std::getenv("FERRY_DEBUG");
    return v && std::strstr(v, "sync") != nullptr;
  }();
  return enabled;
}

event* make_event(context* c, queue* q, cl_command_type type, protocol::object_id id) {
  auto* e = new event();
  e->context = c;
  retain_internal(c);
  if (q) {
    e->queue = q;
    retain_internal(q);
  }
  e->command_type = type;
  e->id = id;
  return e;
}

cl_int check_wait_list(const queue* q, cl_uint count, const cl_event* list) {
  // CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and
  // num_events_in_wait_list > 0, or event_wait_list is not NULL and
  // num_events_in_wait_list is 0, or if event objects in event_wait_list are
  // not valid events.
  if ((list == nullptr) != (count == 0)) return CL_INVALID_EVENT_WAIT_LIST;
  for (cl_uint i = 0; i < count; ++i) {
    const cl_event e = list[i];
    if (e == nullptr || e->dispatch != &dispatch_table || e->tag != object_tag::event || e->api_refs == 0)
      return CL_INVALID_EVENT_WAIT_LIST;
    // CL_INVALID_CONTEXT if the context associated with command_queue and
    // events in event_wait_list are not the same.
    if (q && e->context != q->context) return CL_INVALID_CONTEXT;
  }
  // A server takes new commands while its session lives, during an outage too
  // (they wait in the replay log); a context whose session a restarted server
  // lost takes none at all.
  if (q && (!q->device->accepts_work() || !reachable(q->context))) return unavailable_status(q->context);
  return CL_SUCCESS;
}

command::command(queue* q, cl_command_type type, cl_uint wait_count, const cl_event* wait_list,
                 cl_event* event_out, blocking mode, data_parts parts)
    : queue_(q),
      type_(type),
      sequence_(q->submitted.fetch_add(1, std::memory_order_acq_rel) + 1),
      target_(q->device->host),
      link_(q->device->host->link.get()),
      event_out_(event_out) {
  blocking_ = mode == blocking::yes || sync_debugging();
  header.command = next_object_id();
  header.queue = q->id;
  header.wait_list.resize(wait_count);
  waits_ = std::span<const cl_event>(wait_list, wait_count);
  for (cl_uint i = 0; i < wait_count; ++i) header.wait_list[i] = wait_list[i]->id;
  if (q->context->spans_servers()) import_events(*target_, waits_);
  // Completion is reported only for what somebody can observe.
  bool observed = event_out != nullptr || blocking_ || parts == data_parts::status_and_data;
  if (event_out) header.flags |= protocol::keep_event;
  if (observed) {
    header.flags |= protocol::notify;
    event_ = make_event(q->context, q, type, header.command);
    event_->on_server = event_out != nullptr;
    event_->home = target_;
    event_->parts = static_cast<int>(parts);
    if (parts == data_parts::status_and_data && !blocking_) {
      std::lock_guard lock(q->reads_mutex);
      std::erase_if(q->pending_reads, [](event* e) {
        if (e->status.load() > CL_COMPLETE) return false;
        release_internal(e);
        return true;
      });
      retain_internal(event_);
      q->pending_reads.push_back(event_);
    }
  }
}

command::~command() = default;

cl_int command::abandon(cl_int code) {
  // Events kept on the server for this command alone (migrations, pushed
  // host changes) are not needed any more.
  for (protocol::object_id id : release_after_send_) link_->post(protocol::release_object{id});
  release_after_send_.clear();
  if (event_) {
    event_->on_server = false;  // never sent: the server knows nothing of it
    release_api(event_);
  }
  event_ = nullptr;
  return code;
}

// Makes sure the command has an event that reports its completion to the
// client (the server keeps it only when `keep` says so).
void command::ensure_event() {
  if (event_ != nullptr) return;
  header.flags |= protocol::notify;
  event_ = make_event(queue_->context, queue_, type_, header.command);
  event_->home = target_;
}

cl_int command::uses(memory* m, access how) {
  if (m == nullptr) return CL_SUCCESS;
  if (host_sync_ && m->host_ptr != nullptr) {
    // What the program wrote into the host memory goes first.
    std::vector<protocol::object_id> pushed;
    if (cl_int code = push_host_changes(queue_, m, pushed); code != CL_SUCCESS) return code;
    for (protocol::object_id id : pushed) {
      header.wait_list.push_back(id);
      release_after_send_.push_back(id);
    }
    // Its changes come back once it has completed: that needs its event.
    if (how != access::read && is_coherent(m)) {
      ensure_event();
      coherent_written_.push_back(root_of(m));
    }
  }
  if (!queue_->context->spans_servers()) return CL_SUCCESS;
  protocol::object_id arrival = 0;
  cl_int code = bring_contents(m, how, *target_, *queue_, waits_, event_, arrival);
  if (code == CL_SUCCESS && arrival != 0) {
    header.wait_list.push_back(arrival);
    release_after_send_.push_back(arrival);
  }
  if (code == CL_SUCCESS && how != access::read) {
    // A later migration out of this server waits for this command: it needs
    // an event there, kept and reported like one the application asked for.
    ensure_event();
    event_->on_server = true;
    header.flags |= protocol::keep_event;
    written_.push_back(root_of(m));
  }
  return code;
}

cl_int command::complete() {
  cl_int code = CL_SUCCESS;
  if (blocking_) {
    connection::waiting scope(*link_, queue_->device->wait_spin());
    link_->flush();
    cl_event e = event_;
    cl_int waited = wait_for(&e, 1);
    // Once a blocking command of an in-order queue has ended, so has every
    // command before it; the same holds for a marker or barrier without a
    // wait list in any queue.
    bool in_order = !(queue_->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    bool covers_all = (event_->command_type == CL_COMMAND_MARKER || event_->command_type == CL_COMMAND_BARRIER) &&
                      header.wait_list.empty();
    if ((in_order || covers_all) && event_->status.load() <= CL_COMPLETE) queue_->completed_up_to(sequence_);
    // The command ran, so everything it waited for has ended; the news from
    // other servers may still be on its way, and the caller may look.
    if (waited == CL_SUCCESS && queue_->context->spans_servers() && !waits_.empty())
      wait_for(waits_.data(), static_cast<cl_uint>(waits_.size()));
    if (waited != CL_SUCCESS) {
      cl_int status = event_->status.load();
      // A command that failed with its session answers as the session's
      // later work does: CL_DEVICE_NOT_AVAILABLE, or CL_OUT_OF_RESOURCES
      // where the server stopped the session's worker for exceeding a limit.
      const bool with_session = status == CL_DEVICE_NOT_AVAILABLE || status == unavailable_status(queue_->context);
      code = with_session ? status : CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
      if (sync_debugging())
        FERRY_ERROR("sync", "command %llu failed with status %d", static_cast<unsigned long long>(header.command),
                    status);
    }
    // A blocking call is a point where the program may look at the host
    // memory of coherent CL_MEM_USE_HOST_PTR buffers.
    if (host_sync_) settle_coherent_buffers(queue_->context);
  }
  if (event_) {
    if (event_out_) *event_out_ = event_;
    else release_api(event_);  // internal event: nobody else holds it
  }
  return code;
}

}  // namespace ferry::client
