#include "client/core/kernels/kernel_queries.hpp"

#include <cstring>
#include <mutex>

#include "client/core/remote_query.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client {

namespace {

result<protocol::bytes> ask_about(const kernel* k, protocol::query_kind kind, const device* d, cl_uint param,
                                  uint32_t index = 0, protocol::bytes input = {}) {
  return ask_server(link_of(k), {kind, k, d, param, index, std::move(input)});
}

}  // namespace

result<protocol::bytes> kernel_info_from_server(const kernel* k, cl_uint param) {
  return ask_about(k, protocol::query_kind::kernel_info, nullptr, param);
}

result<protocol::bytes> kernel_work_group_info_from_server(const kernel* k, const device* d, cl_uint param) {
  return ask_about(k, protocol::query_kind::kernel_work_group_info, d, param);
}

result<protocol::bytes> kernel_sub_group_info_from_server(const kernel* k, const device* d, cl_uint param,
                                                          const void* input, size_t input_size) {
  protocol::bytes in;
  if (input && input_size) {
    auto* bytes = static_cast<const uint8_t*>(input);
    in.assign(bytes, bytes + input_size);
  } else if (input_size) {
    in.resize(input_size);  // NULL with a size: the native call judges it (CL_INVALID_VALUE)
  }
  return ask_about(k, protocol::query_kind::kernel_sub_group_info, d, param, 0, std::move(in));
}

result<protocol::bytes> kernel_arg_info_from_server(const kernel* k, cl_uint index, cl_uint param) {
  return ask_about(k, protocol::query_kind::kernel_arg_info, nullptr, param, index);
}

result<_cl_kernel::work_group_limits> work_group_limits_for(kernel* k, cl_device_id d) {
  {
    std::lock_guard lock(k->limits_mutex);
    if (auto it = k->limits.find(d); it != k->limits.end()) return it->second;
  }
  // Asked outside the lock: two threads may both ask once, harmlessly.
  _cl_kernel::work_group_limits limits;
  auto size = kernel_work_group_info_from_server(k, d, CL_KERNEL_WORK_GROUP_SIZE);
  if (!size) return fail(size.error());
  auto compile = kernel_work_group_info_from_server(k, d, CL_KERNEL_COMPILE_WORK_GROUP_SIZE);
  if (!compile) return fail(compile.error());
  if (size->size() != sizeof(size_t) || compile->size() != sizeof(size_t) * 3) return fail(CL_OUT_OF_RESOURCES);
  std::memcpy(&limits.work_group_size, size->data(), sizeof(size_t));
  std::memcpy(limits.compile_size.data(), compile->data(), sizeof(size_t) * 3);
  std::lock_guard lock(k->limits_mutex);
  k->limits.emplace(d, limits);
  return limits;
}

}  // namespace ferry::client
