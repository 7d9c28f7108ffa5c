// Context entry points.
#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/api/info_table.hpp"
#include "client/core/contexts.hpp"
#include "client/core/servers/platform.hpp"
#include "client/core/servers/server.hpp"
#include "common/log.hpp"

namespace ferry::client::api {

namespace {

using notify_fn = void(CL_CALLBACK*)(const char*, const void*, size_t, void*);

// Validates the property list and copies it (with its terminating 0).
cl_int parse_properties(const cl_context_properties* properties, std::vector<cl_context_properties>& out) {
  out.clear();
  if (!properties) return CL_SUCCESS;
  bool seen_platform = false, seen_sync = false;
  for (const cl_context_properties* p = properties; *p != 0; p += 2) {
    switch (p[0]) {
      case CL_CONTEXT_PLATFORM:
        // CL_INVALID_PROPERTY if the same property name is specified more than once.
        if (seen_platform) return CL_INVALID_PROPERTY;
        seen_platform = true;
        // CL_INVALID_PLATFORM if platform value specified in properties is not a valid platform.
        if (!is_valid(reinterpret_cast<cl_platform_id>(p[1]))) return CL_INVALID_PLATFORM;
        break;
      case CL_CONTEXT_INTEROP_USER_SYNC:
        if (seen_sync) return CL_INVALID_PROPERTY;
        seen_sync = true;
        break;
      // CL_INVALID_PROPERTY if context property name in properties is not a
      // supported property name.
      default: return CL_INVALID_PROPERTY;
    }
    out.push_back(p[0]);
    out.push_back(p[1]);
  }
  out.push_back(0);
  return CL_SUCCESS;
}

result<cl_context> create_context(const cl_context_properties* properties, cl_uint count,
                                  const cl_device_id* devices, notify_fn notify, void* user_data) {
  std::vector<cl_context_properties> props;
  if (cl_int code = parse_properties(properties, props); code != CL_SUCCESS) return fail(code);
  // CL_INVALID_VALUE if devices is NULL; if num_devices is equal to zero; or
  // if pfn_notify is NULL but user_data is not NULL.
  if (devices == nullptr || count == 0 || (notify == nullptr && user_data != nullptr)) return fail(CL_INVALID_VALUE);
  // CL_INVALID_DEVICE if any device in devices is not a valid device.
  for (cl_uint i = 0; i < count; ++i)
    if (!is_valid(devices[i])) return fail(CL_INVALID_DEVICE);
  for (cl_uint i = 0; i < count; ++i) {
    // CL_DEVICE_NOT_AVAILABLE if a device in devices is currently not available.
    // (Ferry) A server resuming its session after a short outage still takes
    // work (connection::accepting), unless the program asked to fail fast.
    if (!devices[i]->accepts_work()) return fail(CL_DEVICE_NOT_AVAILABLE);
  }
  return create_context_on_servers(count, devices, std::move(props), notify, user_data);
}

using context_row = info_row<cl_context>;
const context_row context_info[] = {
    context_row::of<cl_uint>(CL_CONTEXT_REFERENCE_COUNT, [](cl_context c) { return c->api_refs.load(); }),
    context_row::of<cl_uint>(CL_CONTEXT_NUM_DEVICES, [](cl_context c) { return c->devices.size(); }),
    context_row::of<std::vector<cl_device_id>>(CL_CONTEXT_DEVICES, [](cl_context c) { return c->devices; }),
    context_row::of<std::vector<cl_context_properties>>(CL_CONTEXT_PROPERTIES,
                                                        [](cl_context c) { return c->properties; }),
};

}  // namespace

cl_context CL_API_CALL clCreateContext(const cl_context_properties* properties, cl_uint num_devices,
                                       const cl_device_id* devices, notify_fn notify, void* user_data,
                                       cl_int* errcode_ret) {
  return guarded_create<cl_context>(__func__, errcode_ret, [&] {
    return create_context(properties, num_devices, devices, notify, user_data);
  });
}

cl_context CL_API_CALL clCreateContextFromType(const cl_context_properties* properties, cl_device_type type,
                                               notify_fn notify, void* user_data, cl_int* errcode_ret) {
  return guarded_create<cl_context>(__func__, errcode_ret, [&]() -> result<cl_context> {
    std::vector<cl_context_properties> props;
    if (cl_int code = parse_properties(properties, props); code != CL_SUCCESS) return fail(code);
    if (notify == nullptr && user_data != nullptr) return fail(CL_INVALID_VALUE);
    cl_uint count = 0;
    cl_int code = api::clGetDeviceIDs(&the_platform(), type, 0, nullptr, &count);
    if (code != CL_SUCCESS) return fail(code);
    std::vector<cl_device_id> devices(count);
    api::clGetDeviceIDs(&the_platform(), type, count, devices.data(), nullptr);
    return create_context(properties, count, devices.data(), notify, user_data);
  });
}

cl_int CL_API_CALL clRetainContext(cl_context c) {
  return change_api_count(__func__, c, "c", count_change::retain);
}

cl_int CL_API_CALL clReleaseContext(cl_context c) {
  return change_api_count(__func__, c, "c", count_change::release);
}

cl_int CL_API_CALL clGetContextInfo(cl_context c, cl_context_info param, size_t size, void* value,
                                    size_t* size_ret) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(c);
    info_out out(size, value, size_ret);
    return answer_info(context_info, c, param, out);
  });
}

cl_int CL_API_CALL clSetContextDestructorCallback(cl_context c, void(CL_CALLBACK* notify)(cl_context, void*),
                                                  void* user_data) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(c);
    // CL_INVALID_VALUE if pfn_notify is NULL.
    if (notify == nullptr) return CL_INVALID_VALUE;
    std::lock_guard lock(c->destructors_mutex);
    c->destructors.emplace_back(notify, user_data);
    return CL_SUCCESS;
  });
}

}  // namespace ferry::client::api
