// Ferry's extension functions (include/CL/cl_ext_ferry.h).
#include <CL/cl_ext_ferry.h>

#include <cstring>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/core/event_state.hpp"
#include "client/core/platform.hpp"
#include "client/core/server.hpp"
#include "client/core/svm_registry.hpp"

namespace ferry::client::api {

namespace {

cl_int CL_API_CALL ferry_ping_server(cl_device_id d, cl_ulong* round_trip_ns) {
  return guarded([&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    if (round_trip_ns == nullptr) return CL_INVALID_VALUE;
    auto r = d->host->link->ping();
    if (!r) return r.error();
    *round_trip_ns = *r;
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL ferry_get_object_counts(cl_device_id d, cl_ferry_object_counts* counts) {
  return guarded([&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    if (counts == nullptr) return CL_INVALID_VALUE;
    protocol::get_object_counts request;
    // The request travels behind every command sent before it, so the answer
    // reflects all releases the application made so far.
    auto r = d->host->link->call<protocol::object_counts>(request);
    if (!r) return r.error();
    // The reply came after every earlier completion was handled; the bulk
    // reader and the callback thread may still hold the last references of
    // objects the application released, for a moment.
    for (const auto& s : connected_servers()) s->link->quiesce_bulk();
    wait_for_callbacks();
    counts->client_objects = live_object_count() + svm_allocation_count();
    counts->server_objects = r->objects;
    return CL_SUCCESS;
  });
}

}  // namespace

void* extension_function(const char* name) {
  if (std::strcmp(name, "clFerryPingServer") == 0) return reinterpret_cast<void*>(&ferry_ping_server);
  if (std::strcmp(name, "clFerryGetObjectCounts") == 0) return reinterpret_cast<void*>(&ferry_get_object_counts);
  if (std::strcmp(name, "clIcdGetPlatformIDsKHR") == 0) return reinterpret_cast<void*>(&clIcdGetPlatformIDsKHR);
  return nullptr;
}

}  // namespace ferry::client::api
