// Info queries on programs and kernels (and a context's image formats),
// answered by the native API. Handles mean nothing to the client, so queries
// for them are refused; what the daemon changed for itself (argument info it
// asked for, the temporary tree of the client's headers) is taken back out of
// the answers.
#include "server/commands/executor.hpp"
#include "server/commands/executor_inline.hpp"

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "server/commands/build_headers.hpp"

namespace ferry::server {

namespace p = protocol;

namespace {

using detail::arg_info_option;

// Size-then-value for any clGet*Info: `get(args..., size, value, size_ret)`.
template <class Get, class... Args>
cl_int query_bytes(p::bytes& out, Get get, Args... args) {
  size_t size = 0;
  cl_int rc = get(args..., 0, nullptr, &size);
  if (rc != CL_SUCCESS) return rc;
  out.resize(size);
  if (size == 0) return CL_SUCCESS;
  size_t got = size;
  rc = get(args..., size, out.data(), &got);
  if (rc == CL_SUCCESS && got < size) out.resize(got);
  return rc;
}

}  // namespace

cl_int executor::kernel_names(cl_program program, std::vector<std::string>& out) {
  out.clear();
  p::bytes raw;
  cl_int rc = query_bytes(raw, api_.clGetProgramInfo, program, CL_PROGRAM_KERNEL_NAMES);
  if (rc != CL_SUCCESS) return rc;
  std::string all(raw.begin(), raw.end());
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find(';', start);
    if (end == std::string::npos) end = all.size();
    std::string name = all.substr(start, end - start);
    while (!name.empty() && name.back() == '\0') name.pop_back();
    if (!name.empty()) out.push_back(std::move(name));
    start = end + 1;
  }
  return CL_SUCCESS;
}

cl_int executor::query_value(const p::query& m, p::bytes& out) {
  auto device_at = [&](cl_device_id& device) {
    const native::device_entry* entry = catalog_.find(m.device);
    if (entry == nullptr) return false;
    device = entry->id;
    return true;
  };
  switch (m.kind) {
    case p::query_kind::program_info:
    case p::query_kind::program_build_info: {
      object_table::found program = objects_.find<object_kind::program>(m.object);
      if (!program) return program.error();
      cl_program handle = program->as_program();
      if (m.kind == p::query_kind::program_build_info) {
        cl_device_id device;
        if (!device_at(device)) return CL_INVALID_DEVICE;
        cl_int rc = query_bytes(out, api_.clGetProgramBuildInfo, handle, device, m.param);
        if (rc == CL_SUCCESS && program->client_files && m.param == CL_PROGRAM_BUILD_LOG) {
          // The log names the client's headers by the temporary tree's paths,
          // which mean nothing to the client (and the tree is gone).
          std::string_view text(reinterpret_cast<const char*>(out.data()), out.size());
          if (!text.empty() && text.back() == '\0') text.remove_suffix(1);
          const std::string log = client_log(text, *program->client_files);
          out.assign(log.begin(), log.end());
          out.push_back(0);
        } else if (rc == CL_SUCCESS && program->client_files && m.param == CL_PROGRAM_BUILD_OPTIONS) {
          // The options as the client gave them, not the tree's -I options.
          const std::string& options = program->client_files->client_options;
          out.assign(options.begin(), options.end());
          out.push_back(0);
        } else if (rc == CL_SUCCESS && m.param == CL_PROGRAM_BUILD_OPTIONS) {
          // The options as the client gave them (see with_arg_info).
          std::string_view text(reinterpret_cast<const char*>(out.data()), out.size());
          if (!text.empty() && text.back() == '\0') text.remove_suffix(1);
          if (text.ends_with(arg_info_option)) {
            out.resize(text.size() - arg_info_option.size());
            out.push_back(0);
          }
        }
        return rc;
      }
      // Handles are the client's to answer.
      if (m.param == CL_PROGRAM_CONTEXT || m.param == CL_PROGRAM_DEVICES) return CL_INVALID_VALUE;
      if (m.param == CL_PROGRAM_BINARIES) {
        p::bytes raw_sizes;
        cl_int rc = query_bytes(raw_sizes, api_.clGetProgramInfo, handle, CL_PROGRAM_BINARY_SIZES);
        if (rc != CL_SUCCESS) return rc;
        std::vector<size_t> sizes(raw_sizes.size() / sizeof(size_t));
        std::memcpy(sizes.data(), raw_sizes.data(), sizes.size() * sizeof(size_t));
        std::vector<p::bytes> binaries(sizes.size());
        std::vector<unsigned char*> pointers(sizes.size());
        for (size_t i = 0; i < sizes.size(); ++i) {
          binaries[i].resize(sizes[i]);
          pointers[i] = sizes[i] ? binaries[i].data() : nullptr;
        }
        rc = api_.clGetProgramInfo(handle, CL_PROGRAM_BINARIES, pointers.size() * sizeof(unsigned char*),
                                   pointers.data(), nullptr);
        if (rc != CL_SUCCESS) return rc;
        out.clear();
        p::writer w(out);
        p::encode_value(w, binaries);
        return CL_SUCCESS;
      }
      return query_bytes(out, api_.clGetProgramInfo, handle, m.param);
    }
    case p::query_kind::kernel_info:
    case p::query_kind::kernel_work_group_info:
    case p::query_kind::kernel_sub_group_info:
    case p::query_kind::kernel_arg_info: {
      object_table::found kernel = objects_.find<object_kind::kernel>(m.object);
      if (!kernel) return kernel.error();
      cl_kernel handle = kernel->as_kernel();
      if (m.kind == p::query_kind::kernel_info) {
        if (m.param == CL_KERNEL_PROGRAM || m.param == CL_KERNEL_CONTEXT) return CL_INVALID_VALUE;
        return query_bytes(out, api_.clGetKernelInfo, handle, m.param);
      }
      if (m.kind == p::query_kind::kernel_arg_info) {
        // The info exists because the daemon asked for it; the client did
        // not (spec: only with -cl-kernel-arg-info).
        if (kernel->arg_info_hidden) {
          return m.index < kernel->pointer_args.size() ? CL_KERNEL_ARG_INFO_NOT_AVAILABLE : CL_INVALID_ARG_INDEX;
        }
        return query_bytes(out, api_.clGetKernelArgInfo, handle, m.index, m.param);
      }
      cl_device_id device;
      if (!device_at(device)) return CL_INVALID_DEVICE;
      if (m.kind == p::query_kind::kernel_sub_group_info) {
        return query_bytes(out, api_.clGetKernelSubGroupInfo, handle, device, m.param, m.input.size(),
                           m.input.empty() ? nullptr : m.input.data());
      }
      return query_bytes(out, api_.clGetKernelWorkGroupInfo, handle, device, m.param);
    }
    case p::query_kind::supported_image_formats: {
      object_table::found context = objects_.find<object_kind::context>(m.object);
      if (!context) return context.error();
      cl_mem_flags flags = 0;
      if (m.input.size() != sizeof flags) return CL_INVALID_VALUE;
      std::memcpy(&flags, m.input.data(), sizeof flags);
      cl_uint count = 0;
      cl_int rc = api_.clGetSupportedImageFormats(context->as_context(), flags, m.param, 0, nullptr, &count);
      if (rc != CL_SUCCESS) return rc;
      std::vector<cl_image_format> formats(count);
      if (count) {
        rc = api_.clGetSupportedImageFormats(context->as_context(), flags, m.param, count, formats.data(), &count);
        if (rc != CL_SUCCESS) return rc;
        formats.resize(count);
      }
      out.resize(formats.size() * sizeof(cl_image_format));
      if (!formats.empty()) std::memcpy(out.data(), formats.data(), out.size());
      return CL_SUCCESS;
    }
  }
  return CL_INVALID_VALUE;
}

bool executor::on(const p::query& m) {
  p::query_reply reply{m.request, CL_SUCCESS, {}};
  reply.status = query_value(m, reply.value);
  if (reply.status != CL_SUCCESS) reply.value.clear();
  return answer(reply);
}

}  // namespace ferry::server
