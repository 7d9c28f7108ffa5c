// Ferry's extension functions (include/CL/cl_ext_ferry.h).
#include <CL/cl_ext_ferry.h>

#include <cstring>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/api/memory_common.hpp"
#include "client/core/memory/content_size.hpp"
#include "client/core/servers/availability.hpp"
#include "client/core/servers/platform.hpp"
#include "client/core/servers/server_counters.hpp"
#include "client/core/transfers/file_transfers.hpp"
#include "client/core/transfers/peer_transfers.hpp"
#include "protocol/limits.hpp"

namespace ferry::client::api {

namespace {

// Stores a core answer where the caller asked for it.
template <class T>
cl_int store(result<T> answer, T* out) {
  if (!answer) return answer.error();
  *out = *answer;
  return CL_SUCCESS;
}

cl_int CL_API_CALL ferry_ping_server(cl_device_id d, cl_ulong* round_trip_ns) {
  return guarded("clFerryPingServer", [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    if (round_trip_ns == nullptr) return CL_INVALID_VALUE;
    return store(ping_server(d), round_trip_ns);
  });
}

cl_int CL_API_CALL ferry_get_object_counts(cl_device_id d, cl_ferry_object_counts* counts) {
  return guarded("clFerryGetObjectCounts", [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    if (counts == nullptr) return CL_INVALID_VALUE;
    return store(object_counts(d), counts);
  });
}

cl_int CL_API_CALL ferry_get_message_counts(cl_device_id d, cl_ulong* messages_sent, cl_ulong* messages_run) {
  return guarded("clFerryGetMessageCounts", [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    if (messages_sent == nullptr && messages_run == nullptr) return CL_INVALID_VALUE;
    auto r = control_message_counts(d);
    if (!r) return r.error();
    if (messages_sent) *messages_sent = r->sent;
    if (messages_run) *messages_run = r->run;
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL ferry_get_link_counters(cl_device_id d, cl_uint capacity, cl_ferry_link_counters* counters,
                                           cl_uint* count) {
  return guarded("clFerryGetLinkCounters", [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    if ((counters == nullptr && capacity != 0) || (counters == nullptr && count == nullptr)) return CL_INVALID_VALUE;
    auto r = link_counters(d);
    if (!r) return r.error();
    for (size_t i = 0; i < r->size() && i < capacity; ++i) counters[i] = (*r)[i];
    if (count) *count = static_cast<cl_uint>(r->size());
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL ferry_get_workers(cl_device_id d, cl_uint capacity, cl_ferry_worker* workers, cl_uint* count) {
  return guarded("clFerryGetWorkers", [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    if ((workers == nullptr && capacity != 0) || (workers == nullptr && count == nullptr)) return CL_INVALID_VALUE;
    auto r = server_workers(d);
    if (!r) return r.error();
    for (size_t i = 0; i < r->size() && i < capacity; ++i) workers[i] = (*r)[i];
    if (count) *count = static_cast<cl_uint>(r->size());
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL ferry_set_availability_callback(cl_platform_id platform, cl_ferry_availability_notify notify,
                                                   void* user_data) {
  return guarded("clFerrySetAvailabilityCallback", [&]() -> cl_int {
    if (platform != nullptr && platform != &the_platform()) return CL_INVALID_PLATFORM;
    if (notify == nullptr) return CL_INVALID_VALUE;
    add_availability_callback(notify, user_data);
    return CL_SUCCESS;
  });
}

// cl_pocl_content_size: the checks and their codes are PoCL's.
cl_int CL_API_CALL set_content_size_buffer(cl_mem buffer, cl_mem content_size_buffer) {
  return guarded("clSetContentSizeBufferPoCL", [&]() -> cl_int {
    if (!is_valid(buffer) || !is_valid(content_size_buffer)) return CL_INVALID_MEM_OBJECT;
    if (buffer->context != content_size_buffer->context) return CL_INVALID_CONTEXT;
    if (content_size_buffer->size < sizeof(cl_ulong)) return CL_INVALID_BUFFER_SIZE;
    if (content_size_buffer->parent != nullptr || content_size_buffer->is_image()) return CL_INVALID_MEM_OBJECT;
    pair_content_size(buffer, content_size_buffer);
    return CL_SUCCESS;
  });
}

// Files on the buffer's server: the checks clEnqueueRead/WriteBuffer make,
// and the path's.
template <class Enqueue>
cl_int server_file_command(cl_command_queue q, cl_mem m, cl_bool blocking_call, size_t offset, size_t size,
                           const char* path, cl_uint count, const cl_event* list, Enqueue&& enqueue) {
  if (cl_int code = check_queue_and_buffer(q, m); code != CL_SUCCESS) return code;
  if (!in_bounds(m, offset, size)) return CL_INVALID_VALUE;
  if (path == nullptr || path[0] == '\0' || std::strlen(path) > protocol::max_file_path) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  return enqueue(blocking_call ? blocking::yes : blocking::no);
}

cl_int CL_API_CALL write_buffer_from_server_file(cl_command_queue q, cl_mem m, cl_bool blocking_call, size_t offset,
                                                 size_t size, const char* path, cl_ulong file_offset, cl_uint count,
                                                 const cl_event* list, cl_event* event_out) {
  return guarded("clEnqueueWriteBufferFromServerFileFERRY", [&]() -> cl_int {
    return server_file_command(q, m, blocking_call, offset, size, path, count, list, [&](blocking mode) {
      return enqueue_file_to_buffer(q, m, offset, size, path, file_offset, mode, count, list, event_out);
    });
  });
}

cl_int CL_API_CALL read_buffer_to_server_file(cl_command_queue q, cl_mem m, cl_bool blocking_call, size_t offset,
                                              size_t size, const char* path, cl_ulong file_offset, cl_uint count,
                                              const cl_event* list, cl_event* event_out) {
  return guarded("clEnqueueReadBufferToServerFileFERRY", [&]() -> cl_int {
    return server_file_command(q, m, blocking_call, offset, size, path, count, list, [&](blocking mode) {
      return enqueue_buffer_to_file(q, m, offset, size, path, file_offset, mode, count, list, event_out);
    });
  });
}

cl_int CL_API_CALL receive_from_peer(cl_command_queue q, cl_mem m, size_t offset, size_t size, cl_uint count,
                                     const cl_event* list, cl_event* event_out, cl_ferry_peer_ticket* ticket) {
  return guarded("clEnqueueReceiveFromPeerFERRY", [&]() -> cl_int {
    if (cl_int code = check_queue_and_buffer(q, m); code != CL_SUCCESS) return code;
    if (!in_bounds(m, offset, size) || ticket == nullptr) return CL_INVALID_VALUE;
    if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
    return enqueue_receive_from_peer(q, m, offset, size, count, list, event_out, *ticket);
  });
}

cl_int CL_API_CALL send_to_peer(cl_command_queue q, cl_mem m, size_t offset, const cl_ferry_peer_ticket* ticket,
                                cl_uint count, const cl_event* list, cl_event* event_out) {
  return guarded("clEnqueueSendToPeerFERRY", [&]() -> cl_int {
    if (cl_int code = check_queue_and_buffer(q, m); code != CL_SUCCESS) return code;
    std::string why;
    if (ticket == nullptr) return explain(CL_INVALID_VALUE, "clEnqueueSendToPeerFERRY: no ticket");
    if (!ticket_usable(*ticket, why)) return explain(CL_INVALID_VALUE, "clEnqueueSendToPeerFERRY: %s", why.c_str());
    if (!in_bounds(m, offset, ticket->size)) return CL_INVALID_VALUE;
    if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
    return enqueue_send_to_peer(q, m, offset, *ticket, count, list, event_out);
  });
}

}  // namespace

void* extension_function(const char* name) {
  if (std::strcmp(name, "clEnqueueReceiveFromPeerFERRY") == 0) return reinterpret_cast<void*>(&receive_from_peer);
  if (std::strcmp(name, "clEnqueueSendToPeerFERRY") == 0) return reinterpret_cast<void*>(&send_to_peer);
  if (std::strcmp(name, "clEnqueueWriteBufferFromServerFileFERRY") == 0)
    return reinterpret_cast<void*>(&write_buffer_from_server_file);
  if (std::strcmp(name, "clEnqueueReadBufferToServerFileFERRY") == 0)
    return reinterpret_cast<void*>(&read_buffer_to_server_file);
  if (std::strcmp(name, "clFerryGetMessageCounts") == 0) return reinterpret_cast<void*>(&ferry_get_message_counts);
  if (std::strcmp(name, "clFerryGetLinkCounters") == 0) return reinterpret_cast<void*>(&ferry_get_link_counters);
  if (std::strcmp(name, "clFerryGetWorkers") == 0) return reinterpret_cast<void*>(&ferry_get_workers);
  if (std::strcmp(name, "clSetContentSizeBufferPoCL") == 0)
    return reinterpret_cast<void*>(&set_content_size_buffer);
  if (std::strcmp(name, "clFerrySetAvailabilityCallback") == 0)
    return reinterpret_cast<void*>(&ferry_set_availability_callback);
  if (std::strcmp(name, "clFerryPingServer") == 0) return reinterpret_cast<void*>(&ferry_ping_server);
  if (std::strcmp(name, "clFerryGetObjectCounts") == 0) return reinterpret_cast<void*>(&ferry_get_object_counts);
  if (std::strcmp(name, "clIcdGetPlatformIDsKHR") == 0) return reinterpret_cast<void*>(&clIcdGetPlatformIDsKHR);
  return nullptr;
}

}  // namespace ferry::client::api
