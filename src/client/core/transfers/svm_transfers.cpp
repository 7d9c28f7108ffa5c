#include "client/core/transfers/svm_transfers.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <mutex>
#include <vector>

#include "client/core/markers.hpp"
#include "client/core/memory/svm_lifetime.hpp"
#include "client/core/transfers/maps.hpp"

namespace ferry::client {

namespace {

// A command that only orders (the reads on their way count as before it).
cl_int svm_marker(queue* q, cl_command_type type, cl_uint count, const cl_event* list, cl_event* event_out,
                  blocking mode) {
  return enqueue_sync(q, sync_kind::marker, type, count, list, event_out, mode, pending_reads::implied);
}

}  // namespace

cl_int enqueue_svm_map(queue* q, const svm_ref& allocation, blocking mode, cl_map_flags flags, void* pointer,
                       size_t size, cl_uint count, const cl_event* list, cl_event* event_out) {
  cl_int code;
  if (flags & CL_MAP_WRITE_INVALIDATE_REGION) {
    // Nothing to fetch: the region's old contents are discarded.
    code = svm_marker(q, CL_COMMAND_SVM_MAP, count, list, event_out, mode);
  } else {
    command cmd(q, CL_COMMAND_SVM_MAP, count, list, event_out, mode, data_parts::status_and_data);
    cmd.tracked()->holds = allocation;
    cmd.link().expect_data(cmd.header.command, pointer, size, cmd.tracked());
    code = cmd.submit(protocol::enqueue_svm_read{cmd.header, allocation->id, allocation->offset_of(pointer), size});
  }
  if (code != CL_SUCCESS && code != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) return code;
  std::lock_guard lock(allocation->mappings_mutex);
  allocation->mappings.push_back({pointer, size, flags});
  return code;
}

cl_int enqueue_svm_unmap(queue* q, const svm_ref& allocation, void* pointer, cl_uint count, const cl_event* list,
                         cl_event* event_out) {
  svm_allocation::mapping found{};
  bool mapped = false;
  {
    std::lock_guard lock(allocation->mappings_mutex);
    auto& all = allocation->mappings;
    auto it = std::find_if(all.rbegin(), all.rend(), [&](const auto& m) { return m.pointer == pointer; });
    if (it != all.rend()) {
      found = *it;
      mapped = true;
      all.erase(std::next(it).base());
    }
  }
  // A pointer that was not mapped unmaps nothing (undefined by the spec;
  // PoCL accepts it too): the command only orders.
  if (!mapped || !(found.flags & map_flags_writing))
    return svm_marker(q, CL_COMMAND_SVM_UNMAP, count, list, event_out, blocking::no);
  // What the host wrote goes back to the server.
  command cmd(q, CL_COMMAND_SVM_UNMAP, count, list, event_out, blocking::no);
  cmd.send(protocol::enqueue_svm_write{cmd.header, allocation->id, allocation->offset_of(pointer), found.size});
  cmd.link().send_data(cmd.header.command, pointer, found.size);
  return cmd.complete();
}

cl_int enqueue_svm_memcpy(queue* q, blocking mode, svm_side to, svm_side from, size_t size, cl_uint count,
                          const cl_event* list, cl_event* event_out) {
  void* destination = const_cast<void*>(to.pointer);
  const void* source = from.pointer;
  if (to.allocation && from.allocation) {
    command cmd(q, CL_COMMAND_SVM_MEMCPY, count, list, event_out, mode);
    return cmd.submit(protocol::enqueue_svm_copy{cmd.header, to.allocation->id, to.allocation->offset_of(destination),
                                                 from.allocation->id, from.allocation->offset_of(source), size});
  }
  if (to.allocation) {
    // Host to SVM: the bytes are on their way once send_data returns, and the
    // host sees coarse-grained SVM only through a later map, which the queue
    // orders after the copy; only a wait list whose failure the call must
    // report makes it wait.
    command cmd(q, CL_COMMAND_SVM_MEMCPY, count, list, event_out, write_blocking(mode, count));
    cmd.send(protocol::enqueue_svm_write{cmd.header, to.allocation->id, to.allocation->offset_of(destination), size});
    cmd.link().send_data(cmd.header.command, source, size,
                         mode == blocking::yes ? connection::bytes_lifetime::until_return
                                               : connection::bytes_lifetime::until_completion,
                         q->id);
    return cmd.complete();
  }
  if (from.allocation) {
    // SVM to host: straight into the application's memory, like a read.
    command cmd(q, CL_COMMAND_SVM_MEMCPY, count, list, event_out, mode, data_parts::status_and_data);
    cmd.link().expect_data(cmd.header.command, destination, size, cmd.tracked());
    return cmd.submit(protocol::enqueue_svm_read{cmd.header, from.allocation->id, from.allocation->offset_of(source),
                                                 size});
  }
  // Host to host: copied here, in the command's place in the queue.
  if (mode == blocking::yes) {
    cl_int code = svm_marker(q, CL_COMMAND_SVM_MEMCPY, count, list, event_out, blocking::yes);
    if (code == CL_SUCCESS) std::memcpy(destination, source, size);
    return code;
  }
  return enqueue_marker_then(
      q, CL_COMMAND_SVM_MEMCPY, count, list, event_out, [=] { std::memcpy(destination, source, size); },
      run_on::reader_thread);
}

cl_int enqueue_svm_free(queue* q, cl_uint num_pointers, void* pointers[], svm_free_callback callback,
                        void* user_data, cl_uint count, const cl_event* list, cl_event* event_out) {
  if (callback) {
    // The application frees the memory itself, in its callback, once the
    // wait list is done; the command completes after the callback returns.
    std::vector<void*> copy(pointers, pointers + num_pointers);
    return enqueue_marker_then(
        q, CL_COMMAND_SVM_FREE, count, list, event_out,
        [q, callback, user_data, copy = std::move(copy)]() mutable {
          callback(q, static_cast<cl_uint>(copy.size()), copy.empty() ? nullptr : copy.data(), user_data);
        },
        run_on::callback_thread);
  }
  // The marker goes first: the server frees the memory behind a marker on
  // every queue of the context, and so behind this command and its wait list.
  cl_int code = svm_marker(q, CL_COMMAND_SVM_FREE, count, list, event_out, blocking::no);
  if (code != CL_SUCCESS) return code;
  for (cl_uint i = 0; i < num_pointers; ++i) free_svm(q->context, pointers[i]);
  return CL_SUCCESS;
}

}  // namespace ferry::client
