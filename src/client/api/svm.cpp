// Shared virtual memory entry points: allocation, freeing, and the SVM
// enqueues (map, unmap, memcpy, fill, migrate, free).
//
// Ferry offers coarse-grained buffer SVM only: host and device would have to
// share coherent memory without maps for the fine-grained kinds, which a
// network cannot give. core/memory/svm_registry.hpp describes the two blocks of an
// allocation (the host block whose address the application holds, the
// native allocation on the server) and how addresses are translated.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <vector>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/core/command.hpp"
#include "client/core/event_state.hpp"
#include "client/core/servers/server.hpp"
#include "client/core/memory/svm_registry.hpp"
#include "client/core/memory/svm_same_address.hpp"
#include "common/log.hpp"

namespace ferry::client::api {

namespace {

// The largest OpenCL data type (long16, double16): the default alignment of
// an allocation and the largest one an application may ask for. Host blocks
// and native allocations are always aligned this much, so an offset keeps
// every alignment the application can rely on.
constexpr size_t largest_type_size = 128;

constexpr cl_svm_mem_flags svm_access_flags = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;

// Native allocations tried for one clSVMAlloc until one's address is free
// here too (svm_same_address.hpp).
constexpr int max_placement_attempts = 3;

// FERRY_SVM_SAME_ADDRESS=0: host blocks anywhere (kernels then cannot follow
// pointers stored inside SVM memory); read once.
bool same_address_wanted() {
  static const bool wanted = [] {
    const char* v = std::getenv("FERRY_SVM_SAME_ADDRESS");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return wanted;
}

void* svm_alloc(cl_context c, cl_svm_mem_flags flags, size_t size, cl_uint alignment) {
  // clSVMAlloc returns NULL if context is not a valid context,
  if (!is_valid(c)) return nullptr;
  // or no devices in context support SVM,
  if (!supports_svm(c)) return nullptr;
  // or values specified in flags do not follow rules described for supported
  // values in the SVM Memory Flags table,
  if (flags & ~(svm_access_flags | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS)) return nullptr;
  cl_svm_mem_flags access = flags & svm_access_flags;
  if (access & (access - 1)) return nullptr;
  if ((flags & CL_MEM_SVM_ATOMICS) && !(flags & CL_MEM_SVM_FINE_GRAIN_BUFFER)) return nullptr;
  // or CL_MEM_SVM_FINE_GRAIN_BUFFER or CL_MEM_SVM_ATOMICS is specified in
  // flags and these are not supported by at least one device in context (no
  // Ferry device supports them),
  if (flags & (CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS)) return nullptr;
  // or size is 0 or > CL_DEVICE_MAX_MEM_ALLOC_SIZE value for any device in context,
  if (size == 0) return nullptr;
  for (const device* d : c->devices)
    if (size > d->max_mem_alloc_size) return nullptr;
  // or alignment is not a power of two or the OpenCL implementation cannot
  // support the specified alignment for at least one device in context.
  if ((alignment & (alignment - 1)) || alignment > largest_type_size) return nullptr;
  // (Ferry) SVM allocations live on one server: a context that spans several
  // has none to offer.
  if (c->spans_servers()) return nullptr;
  connection* link = link_of(c);
  if (link == nullptr || !link->accepting()) return nullptr;

  // The server allocates first: its answer names the native address, and the
  // host block goes there when this process has it free, so that pointers
  // stored inside the allocation mean the same on both sides. An address
  // taken here is tried again with a new native allocation, a few times,
  // before the allocation settles for an ordinary host block.
  protocol::svm_alloc request;
  request.context = c->id;
  request.flags = access ? flags : flags | CL_MEM_READ_WRITE;
  request.size = size;
  request.alignment = static_cast<uint32_t>(largest_type_size);
  std::vector<protocol::object_id> unplaced;  // native allocations whose address is taken here
  svm_ref allocation;
  for (int attempt = 0; attempt < max_placement_attempts && !allocation; ++attempt) {
    request.id = next_object_id();
    auto reply = link->call<protocol::status_reply>(request);
    if (!reply || reply->status != CL_SUCCESS) break;
    uint8_t* host = nullptr;
    if (reply->details.size() == 2 && same_address_wanted()) {
      const uint64_t address = static_cast<uint64_t>(static_cast<uint32_t>(reply->details[0])) |
                               static_cast<uint64_t>(static_cast<uint32_t>(reply->details[1])) << 32;
      host = map_at_server_address(address, size, link);
    }
    if (host != nullptr) {
      allocation = std::make_shared<svm_allocation>(host, size, largest_type_size, request.id, c,
                                                    svm_placement::server_address);
    } else {
      unplaced.push_back(request.id);
      if (reply->details.size() != 2 || !same_address_wanted()) break;  // no address to take
    }
  }
  if (!allocation && !unplaced.empty()) {
    if (uint8_t* host = allocate_svm_block(size, largest_type_size)) {
      allocation = std::make_shared<svm_allocation>(host, size, largest_type_size, unplaced.back(), c,
                                                    svm_placement::own_block);
      unplaced.pop_back();
      FERRY_DEBUG("svm",
                  "SVM allocation %llu: the server's address is in use here; kernels cannot follow pointers "
                  "stored inside it",
                  static_cast<unsigned long long>(allocation->id));
    }
  }
  for (protocol::object_id id : unplaced) link->post(protocol::release_object{id});
  if (!allocation) return nullptr;
  register_svm(allocation);
  return allocation->host;
}

// Tells the server that the client is done with an allocation; the server
// frees the native memory once no command can use it any more.
void release_remote(const svm_allocation& allocation) {
  if (connection* link = link_of(allocation.owner)) link->post(protocol::release_object{allocation.id});
}

void svm_free(cl_context c, void* pointer) {
  // If a NULL pointer is passed in svm_pointer, no action occurs. Anything but
  // the pointer of an allocation of `c` is undefined; Ferry ignores it (and
  // compares `c` without dereferencing it).
  if (pointer == nullptr) return;
  if (svm_ref allocation = unregister_svm(pointer, c)) release_remote(*allocation);
}

// Checks shared by the SVM enqueues.
cl_int check_svm_queue(cl_command_queue q) {
  // CL_INVALID_COMMAND_QUEUE if command_queue is not a valid host command-queue.
  FERRY_CHECK_HANDLE(q);
  // CL_INVALID_OPERATION if the device associated with command_queue does not support SVM.
  if (!supports_svm(q->device)) return CL_INVALID_OPERATION;
  return CL_SUCCESS;
}

bool valid_map_flags(cl_map_flags flags) {
  constexpr cl_map_flags known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
  if (flags & ~known) return false;
  return !((flags & CL_MAP_WRITE_INVALIDATE_REGION) && (flags & (CL_MAP_READ | CL_MAP_WRITE)));
}

// Reads still on their way into host memory when a marker is enqueued: the
// server completes the marker before their data has crossed the bulk stream,
// so waiting for the marker waits for these too (see _cl_event::implied).
void imply_pending_reads(queue* q, event* e) {
  std::lock_guard lock(q->reads_mutex);
  for (event* read : q->pending_reads)
    if (read->status.load() > CL_COMPLETE) {
      retain_internal(read);
      e->implied.push_back(read);
    }
}

enum class run_on { reader_thread, callback_thread };

// A marker that runs `work` once it has succeeded, before its event
// completes: on the thread that receives the completion (Ferry's own work),
// or on the callback thread (application code).
cl_int marker_then(queue* q, cl_command_type type, cl_uint count, const cl_event* list, cl_event* event_out,
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

cl_int plain_marker(queue* q, cl_command_type type, cl_uint count, const cl_event* list, cl_event* event_out,
                    blocking mode = blocking::no) {
  command cmd(q, type, count, list, event_out, mode);
  if (event* e = cmd.tracked()) imply_pending_reads(q, e);
  return cmd.submit(protocol::enqueue_marker{cmd.header});
}

cl_int svm_map(cl_command_queue q, cl_bool blocking_map, cl_map_flags flags, void* pointer, size_t size,
               cl_uint count, const cl_event* list, cl_event* event_out) {
  if (cl_int code = check_svm_queue(q); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if svm_ptr is NULL.
  if (pointer == nullptr) return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if size is 0 or if values specified in map_flags are not valid.
  if (size == 0 || !valid_map_flags(flags)) return CL_INVALID_VALUE;
  // (Ferry) ... or if the region is not inside one SVM allocation of the
  // queue's context: the host has no other memory that Ferry could map.
  svm_ref allocation = find_svm(pointer, q->context);
  if (!allocation || !allocation->contains(pointer, size)) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;

  blocking mode = blocking_map ? blocking::yes : blocking::no;
  cl_int code;
  if (flags & CL_MAP_WRITE_INVALIDATE_REGION) {
    // Nothing to fetch: the region's old contents are discarded.
    code = plain_marker(q, CL_COMMAND_SVM_MAP, count, list, event_out, mode);
  } else {
    // The region's contents land in the host block at the same offset.
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

cl_int svm_unmap(cl_command_queue q, void* pointer, cl_uint count, const cl_event* list, cl_event* event_out) {
  if (cl_int code = check_svm_queue(q); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if svm_ptr is NULL.
  if (pointer == nullptr) return CL_INVALID_VALUE;
  // (Ferry) ... or if it is in no SVM allocation of the queue's context.
  svm_ref allocation = find_svm(pointer, q->context);
  if (!allocation) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
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
  if (!mapped || !(found.flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)))
    return plain_marker(q, CL_COMMAND_SVM_UNMAP, count, list, event_out);
  // What the host wrote goes back to the server.
  command cmd(q, CL_COMMAND_SVM_UNMAP, count, list, event_out, blocking::no);
  cmd.send(protocol::enqueue_svm_write{cmd.header, allocation->id, allocation->offset_of(pointer), found.size});
  cmd.link().send_data(cmd.header.command, pointer, found.size);
  return cmd.complete();
}

// Whether [a, a + size) and [b, b + size) overlap (without overflowing).
bool overlapping(const void* a, const void* b, size_t size) {
  auto x = reinterpret_cast<uintptr_t>(a);
  auto y = reinterpret_cast<uintptr_t>(b);
  return x < y ? y - x < size : x - y < size;
}

cl_int svm_memcpy(cl_command_queue q, cl_bool blocking_copy, void* destination, const void* source, size_t size,
                  cl_uint count, const cl_event* list, cl_event* event_out) {
  if (cl_int code = check_svm_queue(q); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if dst_ptr or src_ptr is NULL (PoCL also refuses a size of 0).
  if (destination == nullptr || source == nullptr || size == 0) return CL_INVALID_VALUE;
  // Each side is SVM memory of the queue's context or host memory; (Ferry)
  // CL_INVALID_VALUE for a region that starts in an allocation and runs past
  // its end.
  svm_ref to = find_svm(destination, q->context);
  svm_ref from = find_svm(source, q->context);
  if ((to && !to->contains(destination, size)) || (from && !from->contains(source, size))) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  // CL_MEM_COPY_OVERLAP if the values specified for dst_ptr, src_ptr and size
  // result in an overlapping copy.
  if (overlapping(destination, source, size)) return CL_MEM_COPY_OVERLAP;

  blocking mode = blocking_copy ? blocking::yes : blocking::no;
  if (to && from) {
    command cmd(q, CL_COMMAND_SVM_MEMCPY, count, list, event_out, mode);
    return cmd.submit(protocol::enqueue_svm_copy{cmd.header, to->id, to->offset_of(destination), from->id,
                                                 from->offset_of(source), size});
  }
  if (to) {
    // Host to SVM: the bytes are on their way once send_data returns, and the
    // host sees coarse-grained SVM only through a later map, which the queue
    // orders after the copy; only a wait list whose failure the call must
    // report makes it wait.
    command cmd(q, CL_COMMAND_SVM_MEMCPY, count, list, event_out,
                blocking_copy && count > 0 ? blocking::yes : blocking::no);
    cmd.send(protocol::enqueue_svm_write{cmd.header, to->id, to->offset_of(destination), size});
    cmd.link().send_data(cmd.header.command, source, size,
                         blocking_copy ? connection::bytes_lifetime::until_return
                                       : connection::bytes_lifetime::until_completion,
                         q->id);
    return cmd.complete();
  }
  if (from) {
    // SVM to host: straight into the application's memory, like a read.
    command cmd(q, CL_COMMAND_SVM_MEMCPY, count, list, event_out, mode, data_parts::status_and_data);
    cmd.link().expect_data(cmd.header.command, destination, size, cmd.tracked());
    return cmd.submit(protocol::enqueue_svm_read{cmd.header, from->id, from->offset_of(source), size});
  }
  // Host to host: copied here, in the command's place in the queue.
  if (blocking_copy) {
    cl_int code = plain_marker(q, CL_COMMAND_SVM_MEMCPY, count, list, event_out, blocking::yes);
    if (code == CL_SUCCESS) std::memcpy(destination, source, size);
    return code;
  }
  return marker_then(
      q, CL_COMMAND_SVM_MEMCPY, count, list, event_out, [=] { std::memcpy(destination, source, size); },
      run_on::reader_thread);
}

cl_int svm_fill(cl_command_queue q, void* pointer, const void* pattern, size_t pattern_size, size_t size,
                cl_uint count, const cl_event* list, cl_event* event_out) {
  if (cl_int code = check_svm_queue(q); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if svm_ptr is NULL.
  if (pointer == nullptr) return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if pattern is NULL or if pattern_size is 0 or if
  // pattern_size is not one of { 1, 2, 4, 8, 16, 32, 64, 128 }.
  if (pattern == nullptr || pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)))
    return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if svm_ptr is not aligned to pattern_size bytes.
  if (reinterpret_cast<uintptr_t>(pointer) % pattern_size != 0) return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if size is not a multiple of pattern_size (PoCL also
  // refuses a size of 0).
  if (size == 0 || size % pattern_size != 0) return CL_INVALID_VALUE;
  // (Ferry) CL_INVALID_VALUE if the region is not inside one SVM allocation
  // of the queue's context: host memory cannot be filled on the server.
  svm_ref allocation = find_svm(pointer, q->context);
  if (!allocation || !allocation->contains(pointer, size)) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  auto* bytes = static_cast<const uint8_t*>(pattern);
  command cmd(q, CL_COMMAND_SVM_MEMFILL, count, list, event_out, blocking::no);
  return cmd.submit(protocol::enqueue_svm_fill{cmd.header, allocation->id,
                                               protocol::bytes(bytes, bytes + pattern_size),
                                               allocation->offset_of(pointer), size});
}

using free_callback = void(CL_CALLBACK*)(cl_command_queue, cl_uint, void*[], void*);

cl_int svm_free_enqueue(cl_command_queue q, cl_uint num_pointers, void* pointers[], free_callback callback,
                        void* user_data, cl_uint count, const cl_event* list, cl_event* event_out) {
  if (cl_int code = check_svm_queue(q); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if num_svm_pointers is 0 and svm_pointers is non-NULL,
  // or if svm_pointers is NULL and num_svm_pointers is not 0.
  if ((num_pointers == 0) != (pointers == nullptr)) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  if (callback) {
    // The application frees the memory itself, in its callback, once the
    // wait list is done; the command completes after the callback returns.
    std::vector<void*> copy(pointers, pointers + num_pointers);
    return marker_then(
        q, CL_COMMAND_SVM_FREE, count, list, event_out,
        [q, callback, user_data, copy = std::move(copy)]() mutable {
          callback(q, static_cast<cl_uint>(copy.size()), copy.empty() ? nullptr : copy.data(), user_data);
        },
        run_on::callback_thread);
  }
  // The marker goes first: the server frees the memory behind a marker on
  // every queue of the context, and so behind this command and its wait list.
  cl_int code = plain_marker(q, CL_COMMAND_SVM_FREE, count, list, event_out);
  if (code != CL_SUCCESS) return code;
  for (cl_uint i = 0; i < num_pointers; ++i) svm_free(q->context, pointers[i]);
  return CL_SUCCESS;
}

cl_int svm_migrate(cl_command_queue q, cl_uint num_pointers, const void** pointers, const size_t* sizes,
                   cl_mem_migration_flags flags, cl_uint count, const cl_event* list, cl_event* event_out) {
  if (cl_int code = check_svm_queue(q); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if num_svm_pointers is zero or svm_pointers is NULL.
  if (num_pointers == 0 || pointers == nullptr) return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if sizes[i] is non-zero and the range [svm_pointers[i],
  // svm_pointers[i] + sizes[i]) is not contained within an existing
  // clSVMAlloc allocation; (Ferry) likewise a pointer with size 0 that lies
  // in no allocation.
  for (cl_uint i = 0; i < num_pointers; ++i) {
    if (pointers[i] == nullptr) return CL_INVALID_VALUE;
    svm_ref allocation = find_svm(pointers[i], q->context);
    size_t size = sizes ? sizes[i] : 0;
    if (!allocation || (size != 0 && !allocation->contains(pointers[i], size))) return CL_INVALID_VALUE;
  }
  // CL_INVALID_VALUE if flags is not 0 or any of the values described in the table.
  if (flags & ~(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  // One server holds all of a context's memory: there is nowhere to move it,
  // and the command only orders.
  return plain_marker(q, CL_COMMAND_SVM_MIGRATE_MEM, count, list, event_out);
}

}  // namespace

void* CL_API_CALL clSVMAlloc(cl_context context, cl_svm_mem_flags flags, size_t size, cl_uint alignment) {
  clear_explanations();
  void* pointer = nullptr;
  try {
    pointer = svm_alloc(context, flags, size, alignment);
  } catch (...) {
  }
  // No error code to log: the arguments tell which of the spec's reasons it is.
  if (pointer == nullptr)
    FERRY_DEBUG("api", "clSVMAlloc: NULL (context %p, flags 0x%llx, size %zu, alignment %u)",
                static_cast<void*>(context), static_cast<unsigned long long>(flags), size, alignment);
  return pointer;
}

void CL_API_CALL clSVMFree(cl_context context, void* svm_pointer) {
  try {
    svm_free(context, svm_pointer);
  } catch (...) {
  }
}

cl_int CL_API_CALL clEnqueueSVMFree(cl_command_queue command_queue, cl_uint num_svm_pointers, void* svm_pointers[],
                                    void(CL_CALLBACK* pfn_free_func)(cl_command_queue queue,
                                                                     cl_uint num_svm_pointers,
                                                                     void* svm_pointers[], void* user_data),
                                    void* user_data, cl_uint num_events_in_wait_list,
                                    const cl_event* event_wait_list, cl_event* event) {
  return guarded(__func__, [&] {
    return svm_free_enqueue(command_queue, num_svm_pointers, svm_pointers, pfn_free_func, user_data,
                            num_events_in_wait_list, event_wait_list, event);
  });
}

cl_int CL_API_CALL clEnqueueSVMMemcpy(cl_command_queue command_queue, cl_bool blocking_copy, void* dst_ptr,
                                      const void* src_ptr, size_t size, cl_uint num_events_in_wait_list,
                                      const cl_event* event_wait_list, cl_event* event) {
  return guarded(__func__, [&] {
    return svm_memcpy(command_queue, blocking_copy, dst_ptr, src_ptr, size, num_events_in_wait_list,
                      event_wait_list, event);
  });
}

cl_int CL_API_CALL clEnqueueSVMMemFill(cl_command_queue command_queue, void* svm_ptr, const void* pattern,
                                       size_t pattern_size, size_t size, cl_uint num_events_in_wait_list,
                                       const cl_event* event_wait_list, cl_event* event) {
  return guarded(__func__, [&] {
    return svm_fill(command_queue, svm_ptr, pattern, pattern_size, size, num_events_in_wait_list, event_wait_list,
                    event);
  });
}

cl_int CL_API_CALL clEnqueueSVMMap(cl_command_queue command_queue, cl_bool blocking_map, cl_map_flags flags,
                                   void* svm_ptr, size_t size, cl_uint num_events_in_wait_list,
                                   const cl_event* event_wait_list, cl_event* event) {
  return guarded(__func__, [&] {
    return svm_map(command_queue, blocking_map, flags, svm_ptr, size, num_events_in_wait_list, event_wait_list,
                   event);
  });
}

cl_int CL_API_CALL clEnqueueSVMUnmap(cl_command_queue command_queue, void* svm_ptr, cl_uint num_events_in_wait_list,
                                     const cl_event* event_wait_list, cl_event* event) {
  return guarded(__func__, [&] {
    return svm_unmap(command_queue, svm_ptr, num_events_in_wait_list, event_wait_list, event);
  });
}

cl_int CL_API_CALL clEnqueueSVMMigrateMem(cl_command_queue command_queue, cl_uint num_svm_pointers,
                                          const void** svm_pointers, const size_t* sizes,
                                          cl_mem_migration_flags flags, cl_uint num_events_in_wait_list,
                                          const cl_event* event_wait_list, cl_event* event) {
  return guarded(__func__, [&] {
    return svm_migrate(command_queue, num_svm_pointers, svm_pointers, sizes, flags, num_events_in_wait_list,
                       event_wait_list, event);
  });
}

}  // namespace ferry::client::api
