#include "client/core/queues.hpp"

#include <algorithm>
#include <mutex>

#include "client/core/context_objects.hpp"
#include "client/core/event_state.hpp"
#include "client/core/markers.hpp"
#include "client/core/servers/server.hpp"
#include "common/log.hpp"

namespace ferry::client {

cl_command_queue create_queue_on_server(cl_context c, cl_device_id d, cl_command_queue_properties bits,
                                        std::vector<cl_queue_properties> array) {
  auto* q = make_in_context<queue>(c, next_object_id());
  q->device = d;
  q->properties = bits;
  q->properties_array = std::move(array);
  d->host->link->post(protocol::create_queue{q->id, c->id, d->index, bits});
  return q;
}

cl_int flush_queue(queue* q) {
  connection* link = q->device->host->link.get();
  // Offline, the flush waits in the replay log with the commands it covers.
  if (link->ended() || !in_current_sessions(q->context)) return unavailable_status(q->context);
  link->post(protocol::flush_queue{q->id});
  link->flush();
  return CL_SUCCESS;
}

cl_int finish_queue(queue* q) {
  // Nothing enqueued since the last point known complete, and no read
  // data in transit: nothing to wait for (the common case of a program
  // that calls clFinish after a blocking read).
  if (q->submitted.load(std::memory_order_acquire) == q->complete_through.load(std::memory_order_acquire)) {
    std::lock_guard lock(q->reads_mutex);
    bool reads_done = std::all_of(q->pending_reads.begin(), q->pending_reads.end(),
                                  [](event* e) { return e->status.load() <= CL_COMPLETE; });
    if (reads_done) return CL_SUCCESS;
  }
  // Commands already accepted wait for the server to come back, and so
  // does the marker that waits for them.
  if (!q->device->host->link->wait_online()) return unavailable_status(q->context);
  // Coherent CL_MEM_USE_HOST_PTR buffers written on this queue come back
  // with the finish.
  pull_before_finish(q);
  // A marker whose completion means every earlier command of the queue is done.
  FERRY_TRACE("timeline", "clFinish: waiting");
  cl_int code = enqueue_sync(q, sync_kind::marker, CL_COMMAND_MARKER, 0, nullptr, nullptr, blocking::yes,
                             pending_reads::implied);
  FERRY_TRACE("timeline", "clFinish: the marker ended");
  if (code != CL_SUCCESS && code != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) return code;
  // Reads report completion after their data, which may trail the marker.
  std::vector<cl_event> reads;
  {
    std::lock_guard lock(q->reads_mutex);
    reads.swap(q->pending_reads);
  }
  if (!reads.empty()) {
    connection::waiting scope(*q->device->host->link, q->device->wait_spin());
    wait_for(reads.data(), static_cast<cl_uint>(reads.size()));
    for (cl_event e : reads) release_internal(e);
  }
  settle_coherent_buffers(q->context);
  return CL_SUCCESS;
}

}  // namespace ferry::client
