// Ferry's extension functions (include/CL/cl_ext_ferry.h).
#include <CL/cl_ext_ferry.h>

#include <cstring>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/core/servers/availability.hpp"
#include "client/core/event_state.hpp"
#include "client/core/memory/placement.hpp"
#include "client/core/servers/platform.hpp"
#include "client/core/servers/server.hpp"
#include "client/core/memory/svm_registry.hpp"

namespace ferry::client::api {

namespace {

cl_int CL_API_CALL ferry_ping_server(cl_device_id d, cl_ulong* round_trip_ns) {
  return guarded("clFerryPingServer", [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    if (round_trip_ns == nullptr) return CL_INVALID_VALUE;
    auto r = d->host->link->ping();
    if (!r) return r.error();
    *round_trip_ns = *r;
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL ferry_get_object_counts(cl_device_id d, cl_ferry_object_counts* counts) {
  return guarded("clFerryGetObjectCounts", [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    if (counts == nullptr) return CL_INVALID_VALUE;
    protocol::get_object_counts request;
    // A request travels behind every command sent before it, and its reply
    // is handled after every earlier completion, releases included. The
    // count is the whole process's, so every server gets one, not only d's:
    // a server's reader drops a finished command's event (and with it a
    // queue and a context the application released) only after it has woken
    // the command's waiters, and the reports of commands that the
    // application knows ended through another server (a wait list that
    // crossed servers) may still be on their way.
    for (const auto& s : connected_servers()) {
      if (s.get() == d->host) continue;
      // An offline server answers once its session resumes (it may report
      // completions before that); one whose session is over answers nothing
      // and reports nothing either.
      (void)s->link->call<protocol::object_counts>(request);
    }
    auto first = d->host->link->call<protocol::object_counts>(request);
    if (!first) return first.error();
    // The bulk reader and the callback thread may still hold the last
    // references of objects the application released, for a moment, and
    // migrations between servers still on their way hold the buffers and
    // events they serve until their outcome is known. Letting go of those
    // sends their releases; the second request counts behind them.
    for (const auto& s : connected_servers()) s->link->settle();
    for (const auto& s : connected_servers()) s->link->quiesce_bulk();
    wait_for_callbacks();
    auto r = d->host->link->call<protocol::object_counts>(request);
    if (!r) return r.error();
    counts->client_objects = live_object_count() + svm_allocation_count();
    if (live_object_count() != 0) log_live_objects();
    counts->server_objects = r->objects;
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL ferry_get_message_counts(cl_device_id d, cl_ulong* messages_sent, cl_ulong* messages_run) {
  return guarded("clFerryGetMessageCounts", [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    if (messages_sent == nullptr && messages_run == nullptr) return CL_INVALID_VALUE;
    // The reply carries the server's count of the session's control frames
    // run, this request included; the request's own number is the count sent.
    protocol::get_object_counts request;
    uint64_t frame = 0;
    auto r = d->host->link->call<protocol::object_counts>(request, [] {}, frame);
    if (!r) return r.error();
    if (messages_sent) *messages_sent = frame;
    if (messages_run) *messages_run = r->control_frames;
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL ferry_get_link_counters(cl_device_id d, cl_uint capacity, cl_ferry_link_counters* counters,
                                           cl_uint* count) {
  return guarded("clFerryGetLinkCounters", [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    if ((counters == nullptr && capacity != 0) || (counters == nullptr && count == nullptr)) return CL_INVALID_VALUE;
    protocol::get_link_counters request;
    auto r = d->host->link->call<protocol::link_counters>(request);
    if (!r) return r.error();
    for (size_t i = 0; i < r->links.size() && i < capacity; ++i) {
      const auto& from = r->links[i];
      cl_ferry_link_counters& to = counters[i];
      to = {};
      to.kind = static_cast<cl_uint>(from.kind);
      std::strncpy(to.remote, from.remote.c_str(), sizeof to.remote - 1);
      to.bytes_in = from.bytes_in;
      to.bytes_out = from.bytes_out;
      to.messages_in = from.messages_in;
      to.messages_out = from.messages_out;
    }
    if (count) *count = static_cast<cl_uint>(r->links.size());
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
    memory* root = root_of(buffer);
    retain_internal(content_size_buffer);
    cl_mem previous;
    {
      std::lock_guard lock(root->placement_mutex);
      previous = root->content_size;
      root->content_size = content_size_buffer;
    }
    if (previous) release_internal(previous);
    // Every server of the context learns the pairing: reads to the host there
    // send only the meaningful prefix.
    post_each(buffer->context->servers, protocol::set_content_size{root->id, content_size_buffer->id});
    return CL_SUCCESS;
  });
}

}  // namespace

void* extension_function(const char* name) {
  if (std::strcmp(name, "clFerryGetMessageCounts") == 0) return reinterpret_cast<void*>(&ferry_get_message_counts);
  if (std::strcmp(name, "clFerryGetLinkCounters") == 0) return reinterpret_cast<void*>(&ferry_get_link_counters);
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
