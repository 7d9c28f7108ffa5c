// Sampler entry points. A sampler is created on the server with one round
// trip (so the native code of a refusal reaches the caller) and answered
// from the client afterwards.
#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/api/info_table.hpp"
#include "client/core/samplers.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client::api {

namespace {

bool valid_addressing(cl_ulong mode) {
  switch (mode) {
    case CL_ADDRESS_NONE: case CL_ADDRESS_CLAMP_TO_EDGE: case CL_ADDRESS_CLAMP: case CL_ADDRESS_REPEAT:
    case CL_ADDRESS_MIRRORED_REPEAT: return true;
    default: return false;
  }
}

bool valid_filter(cl_ulong mode) { return mode == CL_FILTER_NEAREST || mode == CL_FILTER_LINEAR; }

result<cl_sampler> create_sampler(cl_context c, const cl_sampler_properties* properties) {
  // CL_INVALID_CONTEXT if context is not a valid context.
  FERRY_CHECK_HANDLE_R(c);
  // Parsed into a plain value first: a sampler object exists only once the
  // server made one.
  sampler_settings parsed, *s = &parsed;
  if (properties) {
    // CL_INVALID_VALUE if the property name in sampler_properties is not a
    // supported property name, if the value specified for a supported
    // property name is not valid, or if the same property name is specified
    // more than once.
    bool seen[3] = {false, false, false};
    for (const cl_sampler_properties* p = properties; *p != 0; p += 2) {
      cl_ulong value = static_cast<cl_ulong>(p[1]);
      switch (p[0]) {
        case CL_SAMPLER_NORMALIZED_COORDS:
          if (seen[0] || (value != CL_TRUE && value != CL_FALSE)) return fail(CL_INVALID_VALUE);
          seen[0] = true;
          s->normalized_coords = static_cast<cl_bool>(value);
          break;
        case CL_SAMPLER_ADDRESSING_MODE:
          if (seen[1] || !valid_addressing(value)) return fail(CL_INVALID_VALUE);
          seen[1] = true;
          s->addressing_mode = static_cast<cl_addressing_mode>(value);
          break;
        case CL_SAMPLER_FILTER_MODE:
          if (seen[2] || !valid_filter(value)) return fail(CL_INVALID_VALUE);
          seen[2] = true;
          s->filter_mode = static_cast<cl_filter_mode>(value);
          break;
        default: return fail(CL_INVALID_VALUE);
      }
      s->properties.push_back(p[0]);
      s->properties.push_back(p[1]);
    }
    s->properties.push_back(0);
  }
  if (!reachable(c)) return fail(unavailable_status(c));
  return create_sampler_on_servers(c, std::move(parsed));
}

using sampler_row = info_row<cl_sampler>;
const sampler_row sampler_info[] = {
    sampler_row::of<cl_uint>(CL_SAMPLER_REFERENCE_COUNT, [](cl_sampler s) { return s->api_refs.load(); }),
    sampler_row::of<cl_context>(CL_SAMPLER_CONTEXT, [](cl_sampler s) { return s->context; }),
    sampler_row::of<cl_bool>(CL_SAMPLER_NORMALIZED_COORDS, [](cl_sampler s) { return s->normalized_coords; }),
    sampler_row::of<cl_addressing_mode>(CL_SAMPLER_ADDRESSING_MODE, [](cl_sampler s) { return s->addressing_mode; }),
    sampler_row::of<cl_filter_mode>(CL_SAMPLER_FILTER_MODE, [](cl_sampler s) { return s->filter_mode; }),
    sampler_row::of<std::vector<cl_sampler_properties>>(CL_SAMPLER_PROPERTIES,
                                                        [](cl_sampler s) { return s->properties; }),
};

}  // namespace

cl_sampler CL_API_CALL clCreateSampler(cl_context c, cl_bool normalized_coords, cl_addressing_mode addressing_mode,
                                       cl_filter_mode filter_mode, cl_int* errcode_ret) {
  const cl_sampler_properties properties[] = {CL_SAMPLER_NORMALIZED_COORDS, normalized_coords,
                                              CL_SAMPLER_ADDRESSING_MODE,   addressing_mode,
                                              CL_SAMPLER_FILTER_MODE,       filter_mode,
                                              0};
  return guarded_create<cl_sampler>(__func__, errcode_ret, [&]() -> result<cl_sampler> {
    auto created = create_sampler(c, properties);
    // A sampler made by clCreateSampler reports no properties.
    if (created) (*created)->properties.clear();
    return created;
  });
}

cl_sampler CL_API_CALL clCreateSamplerWithProperties(cl_context c, const cl_sampler_properties* properties,
                                                     cl_int* errcode_ret) {
  return guarded_create<cl_sampler>(__func__, errcode_ret, [&] { return create_sampler(c, properties); });
}

cl_int CL_API_CALL clRetainSampler(cl_sampler s) {
  return change_api_count(__func__, s, "s", count_change::retain);
}

cl_int CL_API_CALL clReleaseSampler(cl_sampler s) {
  return change_api_count(__func__, s, "s", count_change::release);
}

cl_int CL_API_CALL clGetSamplerInfo(cl_sampler s, cl_sampler_info param, size_t size, void* value, size_t* size_ret) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(s);
    info_out out(size, value, size_ret);
    return answer_info(sampler_info, s, param, out);
  });
}

}  // namespace ferry::client::api
