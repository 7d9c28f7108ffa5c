#include "client/core/markers.hpp"

#include <mutex>

namespace ferry::client {

namespace {

void imply_pending_reads(queue* q, event* e) {
  std::lock_guard lock(q->reads_mutex);
  for (event* read : q->pending_reads)
    if (read->status.load() > CL_COMPLETE) {
      retain_internal(read);
      e->implied.push_back(read);
    }
}

}  // namespace

cl_int enqueue_sync(queue* q, sync_kind kind, cl_command_type type, cl_uint count, const cl_event* list,
                    cl_event* event_out, blocking mode, pending_reads reads) {
  command cmd(q, type, count, list, event_out, mode);
  if (event* e = cmd.tracked(); e && reads == pending_reads::implied) imply_pending_reads(q, e);
  if (kind == sync_kind::barrier) return cmd.submit(protocol::enqueue_barrier{cmd.header});
  return cmd.submit(protocol::enqueue_marker{cmd.header});
}

cl_int enqueue_marker_then(queue* q, cl_command_type type, cl_uint count, const cl_event* list, cl_event* event_out,
                           std::function<void()> work, run_on where) {
  // Work needs a completion to hang on: an event of Ferry's own when the
  // application asked for none.
  cl_event own = nullptr;
  command cmd(q, type, count, list, event_out ? event_out : &own, blocking::no);
  event* e = cmd.tracked();
  if (where == run_on::callback_thread) e->complete_after = std::move(work);
  else e->before_complete = std::move(work);
  imply_pending_reads(q, e);
  cl_int code = cmd.submit(protocol::enqueue_marker{cmd.header});
  if (own) release_api(own);
  return code;
}

}  // namespace ferry::client
