// Program entry points: creation from source, binaries and IL, build,
// compile, link, specialization constants, and the program queries.
//
// Whatever the client can judge (handles, lists, devices, attached kernels,
// IL support) is judged here, before any traffic; core/programs/ sends the
// rest, whose outcome is the native implementation's answer, passed through
// unchanged.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/api/info_table.hpp"
#include "client/core/device_list.hpp"
#include "client/core/programs/build.hpp"
#include "client/core/programs/link.hpp"
#include "client/core/programs/program_creation.hpp"
#include "client/core/programs/program_queries.hpp"
#include "client/core/programs/specialization.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client::api {

namespace {

// CL_INVALID_VALUE if device_list is NULL and num_devices is greater than
// zero, or if device_list is not NULL and num_devices is zero.
bool device_list_shape_ok(cl_uint num_devices, const cl_device_id* device_list) {
  return (device_list == nullptr) == (num_devices == 0);
}

// Whether every listed device is one of `allowed` (else the caller answers
// CL_INVALID_DEVICE).
bool all_listed_in(cl_uint num_devices, const cl_device_id* device_list, const std::vector<cl_device_id>& allowed) {
  for (cl_uint i = 0; i < num_devices; ++i)
    if (!contains(allowed, device_list[i])) return false;
  return true;
}

// The listed devices (none when there is no list).
std::vector<cl_device_id> listed(cl_uint num_devices, const cl_device_id* device_list) {
  if (device_list == nullptr) return {};
  return std::vector<cl_device_id>(device_list, device_list + num_devices);
}

// Whether a device takes intermediate language programs: its
// CL_DEVICE_IL_VERSION names at least one ("" or no answer means none).
bool takes_il(const device& d) {
  auto it = d.info.find(CL_DEVICE_IL_VERSION);
  if (it == d.info.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [](uint8_t c) { return c != '\0' && c != ' '; });
}

// ---------------------------------------------------------------------------
// Creation

result<cl_program> create_program_with_source(cl_context c, cl_uint count, const char** strings,
                                              const size_t* lengths) {
  // CL_INVALID_CONTEXT if context is not a valid context.
  FERRY_CHECK_HANDLE_R(c);
  // CL_INVALID_VALUE if count is zero or if strings or any entry in strings is NULL.
  if (count == 0 || strings == nullptr) return fail(CL_INVALID_VALUE);
  size_t total = 0;
  for (cl_uint i = 0; i < count; ++i) {
    if (strings[i] == nullptr) return fail(CL_INVALID_VALUE);
    // If lengths is NULL, all strings are null-terminated; a zero entry in
    // lengths means its string is null-terminated.
    total += lengths && lengths[i] ? lengths[i] : std::strlen(strings[i]);
  }
  // A source the protocol cannot carry would make the server drop the session.
  if (total > max_program_text) return fail(CL_OUT_OF_RESOURCES);
  if (!reachable(c)) return fail(unavailable_status(c));

  std::string source;
  source.reserve(total);
  for (cl_uint i = 0; i < count; ++i) {
    if (lengths && lengths[i]) source.append(strings[i], lengths[i]);
    else source.append(strings[i]);
  }
  return create_from_source(c, std::move(source));
}

result<cl_program> create_program_with_binary(cl_context c, cl_uint num_devices, const cl_device_id* device_list,
                                              const size_t* lengths, const unsigned char** binaries,
                                              cl_int* binary_status) {
  // CL_INVALID_CONTEXT if context is not a valid context.
  FERRY_CHECK_HANDLE_R(c);
  // CL_INVALID_VALUE if device_list is NULL or num_devices is zero.
  if (device_list == nullptr || num_devices == 0) return fail(CL_INVALID_VALUE);
  // CL_INVALID_DEVICE if any device in device_list is not in the list of
  // devices associated with context.
  if (!all_listed_in(num_devices, device_list, c->devices))
    return fail(explain(CL_INVALID_DEVICE, "device_list names a device that is not in the context"));
  // CL_INVALID_VALUE if lengths or binaries is NULL or if any entry in
  // lengths[i] is zero or binaries[i] is NULL.
  if (lengths == nullptr || binaries == nullptr) return fail(CL_INVALID_VALUE);
  bool any_missing = false;
  size_t total = 0;
  for (cl_uint i = 0; i < num_devices; ++i) {
    bool missing = lengths[i] == 0 || binaries[i] == nullptr;
    // binary_status[i] is CL_INVALID_VALUE if lengths[i] is zero or if
    // binaries[i] is a NULL value.
    if (binary_status) binary_status[i] = missing ? CL_INVALID_VALUE : CL_SUCCESS;
    any_missing |= missing;
    total += lengths[i];
  }
  if (any_missing) return fail(CL_INVALID_VALUE);
  if (total > max_program_text) return fail(CL_OUT_OF_RESOURCES);
  std::vector<cl_device_id> devices(device_list, device_list + num_devices);
  if (!reachable(c) || !all_accepting(servers_of(devices))) return fail(unavailable_status(c));
  return create_from_binaries(c, devices, lengths, binaries, binary_status);
}

result<cl_program> create_program_with_built_in_kernels(cl_context c, cl_uint num_devices,
                                                        const cl_device_id* device_list, const char* kernel_names) {
  // CL_INVALID_CONTEXT if context is not a valid context.
  FERRY_CHECK_HANDLE_R(c);
  // CL_INVALID_VALUE if device_list is NULL or num_devices is zero.
  if (device_list == nullptr || num_devices == 0) return fail(CL_INVALID_VALUE);
  // CL_INVALID_VALUE if kernel_names is NULL or kernel_names contains a
  // kernel name that is not supported by any of the devices in device_list.
  // Ferry serves no built-in kernels, so every name is unsupported.
  return fail(CL_INVALID_VALUE);
}

result<cl_program> create_program_with_il(cl_context c, const void* il, size_t length) {
  // CL_INVALID_CONTEXT if context is not a valid context.
  FERRY_CHECK_HANDLE_R(c);
  // CL_INVALID_VALUE if il is NULL or if length is zero. (Judged before the
  // device clause, as PoCL and rusticl do: no IL is wrong on any device.)
  if (il == nullptr || length == 0) return fail(CL_INVALID_VALUE);
  // CL_INVALID_OPERATION if no devices in context support intermediate
  // language programs.
  if (std::none_of(c->devices.begin(), c->devices.end(), [](cl_device_id d) { return takes_il(*d); }))
    return fail(explain(CL_INVALID_OPERATION, "no device of the context takes IL (CL_DEVICE_IL_VERSION)"));
  // An IL the protocol cannot carry would make the server drop the session.
  if (length > max_program_text) return fail(CL_OUT_OF_RESOURCES);
  if (!reachable(c)) return fail(unavailable_status(c));
  return create_from_il(c, il, length);
}

// ---------------------------------------------------------------------------
// Build, compile, link

cl_int build_program(cl_program p, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                     program_notify notify, void* user_data) {
  // CL_INVALID_PROGRAM if program is not a valid program object.
  FERRY_CHECK_HANDLE(p);
  // CL_INVALID_VALUE if device_list is NULL and num_devices is greater than
  // zero, or if device_list is not NULL and num_devices is zero.
  if (!device_list_shape_ok(num_devices, device_list)) return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL.
  if (notify == nullptr && user_data != nullptr) return CL_INVALID_VALUE;
  // CL_INVALID_DEVICE if any device in device_list is not in the list of
  // devices associated with program. (No list: all of them, sent as empty.)
  if (!all_listed_in(num_devices, device_list, p->devices))
    return explain(CL_INVALID_DEVICE, "device_list names a device that is not the program's");
  // CL_INVALID_OPERATION if there are kernel objects attached to program.
  // Checked before the clauses only the server can judge (binaries, options,
  // compiler availability), so a program with kernels is never rebuilt.
  if (p->attached_kernels.load() != 0) return explain(CL_INVALID_OPERATION, "program %" PRIu64 " has kernels", p->id);
  std::string text = options ? options : "";
  // CL_INVALID_BUILD_OPTIONS if the build options specified by options are
  // invalid (one the protocol cannot carry is surely not valid).
  if (text.size() > max_build_options) return CL_INVALID_BUILD_OPTIONS;
  return build(p, listed(num_devices, device_list), std::move(text), notify, user_data);
}

cl_int compile_program(cl_program p, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                       cl_uint num_headers, const cl_program* headers, const char** header_names,
                       program_notify notify, void* user_data) {
  // CL_INVALID_PROGRAM if program is not a valid program object.
  FERRY_CHECK_HANDLE(p);
  // CL_INVALID_VALUE if device_list is NULL and num_devices is greater than
  // zero, or if device_list is not NULL and num_devices is zero.
  if (!device_list_shape_ok(num_devices, device_list)) return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if num_input_headers is zero and header_include_names or
  // input_headers are not NULL or if num_input_headers is not zero and
  // header_include_names or input_headers are NULL.
  if (num_headers == 0 ? (headers != nullptr || header_names != nullptr)
                       : (headers == nullptr || header_names == nullptr))
    return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL.
  if (notify == nullptr && user_data != nullptr) return CL_INVALID_VALUE;
  // CL_INVALID_DEVICE if OpenCL devices listed in device_list are not in the
  // list of devices associated with program.
  if (!all_listed_in(num_devices, device_list, p->devices))
    return explain(CL_INVALID_DEVICE, "device_list names a device that is not the program's");
  // The headers are program objects of this server created from source; the
  // server compiles with their source under the given names.
  compile_headers included;
  size_t text = options ? std::strlen(options) : 0;
  for (cl_uint i = 0; i < num_headers; ++i) {
    cl_program h = headers[i];
    FERRY_CHECK_HANDLE(h);
    if (header_names[i] == nullptr) return CL_INVALID_VALUE;
    // A header must exist on every server the program does.
    bool everywhere = std::all_of(p->servers.begin(), p->servers.end(), [&](server* s) {
      return std::find(h->servers.begin(), h->servers.end(), s) != h->servers.end();
    });
    if (h->from_binary || !everywhere)
      return explain(CL_INVALID_OPERATION, "header %u has no source on every server of the program", i);
    included.programs.push_back(h);
    included.names.emplace_back(header_names[i]);
    text += included.names.back().size() + 16;
  }
  // CL_INVALID_COMPILER_OPTIONS if the compiler options specified by options
  // are invalid (one the protocol cannot carry is surely not valid).
  if (text > max_build_options) return CL_INVALID_COMPILER_OPTIONS;
  // CL_INVALID_OPERATION if there are kernel objects attached to program.
  if (p->attached_kernels.load() != 0) return explain(CL_INVALID_OPERATION, "program %" PRIu64 " has kernels", p->id);
  // CL_INVALID_OPERATION if program has no source or IL available, i.e. it
  // has not been created with clCreateProgramWithSource or
  // clCreateProgramWithIL. (A linked program is refused by the server.)
  if (p->from_binary) return explain(CL_INVALID_OPERATION, "program %" PRIu64 " was made from binaries", p->id);
  return compile(p, listed(num_devices, device_list), options ? options : "", std::move(included), notify,
                 user_data);
}

// Links into a new program. `out` receives the program whenever the server
// made one, which a failed link may do (it holds the log); the return value
// is the call's error code either way.
cl_int link_program(cl_context c, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                    cl_uint num_inputs, const cl_program* inputs, program_notify notify, void* user_data,
                    cl_program& out) {
  out = nullptr;
  // CL_INVALID_CONTEXT if context is not a valid context.
  FERRY_CHECK_HANDLE(c);
  // CL_INVALID_VALUE if device_list is NULL and num_devices is greater than
  // zero, or if device_list is not NULL and num_devices is zero.
  if (!device_list_shape_ok(num_devices, device_list)) return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if num_input_programs is zero and input_programs is NULL
  // or if num_input_programs is zero and input_programs is not NULL or if
  // num_input_programs is not zero and input_programs is NULL.
  if (num_inputs == 0 || inputs == nullptr) return CL_INVALID_VALUE;
  // CL_INVALID_PROGRAM if programs specified in input_programs are not valid
  // program objects.
  for (cl_uint i = 0; i < num_inputs; ++i) {
    cl_program input = inputs[i];
    FERRY_CHECK_HANDLE(input);
  }
  // CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL.
  if (notify == nullptr && user_data != nullptr) return CL_INVALID_VALUE;
  // CL_INVALID_DEVICE if any device in device_list is not in the list of
  // devices associated with context.
  if (!all_listed_in(num_devices, device_list, c->devices))
    return explain(CL_INVALID_DEVICE, "device_list names a device that is not in the context");
  std::vector<cl_device_id> devices = device_list ? listed(num_devices, device_list) : c->devices;
  // CL_INVALID_OPERATION if the rules for devices containing compiled
  // binaries or libraries as described in input_programs argument above are
  // not followed: an input of another server has no binary for these devices.
  const std::vector<server*> servers = servers_of(devices);
  for (cl_uint i = 0; i < num_inputs; ++i) {
    for (server* s : servers)
      if (std::find(inputs[i]->servers.begin(), inputs[i]->servers.end(), s) == inputs[i]->servers.end())
        return explain(CL_INVALID_OPERATION, "input %u does not exist on server %s", i, s->address_text.c_str());
  }
  std::string text = options ? options : "";
  // CL_INVALID_LINKER_OPTIONS if the linker options specified by options are
  // invalid (one the protocol cannot carry is surely not valid).
  if (text.size() > max_build_options) return CL_INVALID_LINKER_OPTIONS;
  if (!reachable(c) || !all_accepting(servers)) return unavailable_status(c);
  return link_programs(c, std::move(devices), std::move(text), std::vector<cl_program>(inputs, inputs + num_inputs),
                       notify, user_data, out);
}

// ---------------------------------------------------------------------------
// Queries

// The names of the program's kernels.
// CL_INVALID_PROGRAM_EXECUTABLE if param_name is CL_PROGRAM_NUM_KERNELS or
// CL_PROGRAM_KERNEL_NAMES and a successful program executable has not been
// built for at least one device in the list of devices associated with
// program.
result<std::vector<std::string>> built_kernel_names(cl_program p) {
  std::lock_guard lock(p->build_mutex);
  if (!p->built()) return fail(explain(CL_INVALID_PROGRAM_EXECUTABLE, "program %" PRIu64 " is not built", p->id));
  return p->kernel_names;
}

result<size_t> kernel_count(cl_program p) {
  auto names = built_kernel_names(p);
  if (!names) return fail(names.error());
  return names->size();
}

result<std::string> kernel_names_text(cl_program p) {
  auto names = built_kernel_names(p);
  if (!names) return fail(names.error());
  std::string text;
  for (const auto& name : *names) {
    if (!text.empty()) text += ';';
    text += name;
  }
  return text;
}

using program_row = info_row<cl_program>;
const program_row program_info[] = {
    program_row::of<cl_uint>(CL_PROGRAM_REFERENCE_COUNT, [](cl_program p) { return p->api_refs.load(); }),
    program_row::of<cl_context>(CL_PROGRAM_CONTEXT, [](cl_program p) { return p->context; }),
    program_row::of<cl_uint>(CL_PROGRAM_NUM_DEVICES, [](cl_program p) { return p->devices.size(); }),
    program_row::of<std::vector<cl_device_id>>(CL_PROGRAM_DEVICES, [](cl_program p) { return p->devices; }),
    // A program not created from source (from IL too) answers an empty string.
    program_row::of<std::string>(CL_PROGRAM_SOURCE, [](cl_program p) { return p->source; }),
    // A program not created from IL answers nothing (size 0).
    program_row::of<std::vector<uint8_t>>(CL_PROGRAM_IL, [](cl_program p) { return p->il; }),
    program_row::of<size_t>(CL_PROGRAM_NUM_KERNELS, [](cl_program p) { return kernel_count(p); }),
    program_row::of<std::string>(CL_PROGRAM_KERNEL_NAMES, [](cl_program p) { return kernel_names_text(p); }),
};

// CL_PROGRAM_BINARIES: an array of one pointer per device; the binaries are
// copied to the memory they point at (NULL entries are skipped).
cl_int copy_binaries(cl_program p, size_t size, void* value, size_t* size_ret) {
  size_t needed = p->devices.size() * sizeof(unsigned char*);
  if (value == nullptr) {
    if (size_ret) *size_ret = needed;
    return CL_SUCCESS;
  }
  // CL_INVALID_VALUE if the size in bytes specified by param_value_size
  // is < size of return type and param_value is not NULL.
  if (size < needed) return CL_INVALID_VALUE;
  auto binaries = program_binaries(p);
  if (!binaries) return binaries.error();
  auto** targets = static_cast<unsigned char**>(value);
  for (size_t i = 0; i < p->devices.size() && i < binaries->size(); ++i) {
    const auto& binary = (*binaries)[i];
    if (targets[i] && !binary.empty()) std::memcpy(targets[i], binary.data(), binary.size());
  }
  if (size_ret) *size_ret = needed;
  return CL_SUCCESS;
}

cl_int get_program_info(cl_program p, cl_program_info param, size_t size, void* value, size_t* size_ret) {
  // CL_INVALID_PROGRAM if program is not a valid program object.
  FERRY_CHECK_HANDLE(p);
  info_out out(size, value, size_ret);
  return answer_info(program_info, p, param, out, [&]() -> cl_int {
    if (param == CL_PROGRAM_BINARIES) return copy_binaries(p, size, value, size_ret);
    // CL_PROGRAM_BINARY_SIZES, CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT,
    // CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT and extension queries: the
    // native answer. CL_INVALID_VALUE if param_name is not valid comes
    // from there too.
    return put_native(out, program_info_from_server(p, param));
  });
}

cl_int get_program_build_info(cl_program p, cl_device_id d, cl_program_build_info param, size_t size, void* value,
                              size_t* size_ret) {
  // CL_INVALID_PROGRAM if program is not a valid program object.
  FERRY_CHECK_HANDLE(p);
  // CL_INVALID_DEVICE if device is not in the list of devices associated with program.
  if (!contains(p->devices, d))
    return explain(CL_INVALID_DEVICE, "device %p is not the program's", static_cast<void*>(d));
  // CL_INVALID_VALUE if param_name is not valid: the native answer, like the values.
  info_out out(size, value, size_ret);
  return put_native(out, program_build_info_from_server(p, d, param));
}

// ---------------------------------------------------------------------------
// Specialization constants

cl_int set_program_specialization_constant(cl_program p, cl_uint spec_id, size_t spec_size, const void* spec_value) {
  // CL_INVALID_PROGRAM if program is not a valid program object created
  // from an intermediate language (e.g. SPIR-V). Judged here for programs
  // from source (PoCL and rusticl answer the same; PoCL 3.1 aborts on one
  // that was never built), so only IL programs reach the server.
  FERRY_CHECK_HANDLE(p);
  if (p->il.empty()) return CL_INVALID_PROGRAM;
  // CL_INVALID_SPEC_ID if spec_id is not a valid specialization constant
  // identifier; CL_INVALID_VALUE if spec_size does not match the size of the
  // specialization constant in the module, or if spec_value is NULL: the
  // native answers.
  return set_specialization_constant(p, spec_id, spec_size, spec_value);
}

}  // namespace

// ---------------------------------------------------------------------------
// Entry points

cl_program CL_API_CALL clCreateProgramWithSource(cl_context context, cl_uint count, const char** strings,
                                                 const size_t* lengths, cl_int* errcode_ret) {
  return guarded_create<cl_program>(__func__, errcode_ret,
                                    [&] { return create_program_with_source(context, count, strings, lengths); });
}

cl_program CL_API_CALL clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                                 const cl_device_id* device_list, const size_t* lengths,
                                                 const unsigned char** binaries, cl_int* binary_status,
                                                 cl_int* errcode_ret) {
  return guarded_create<cl_program>(__func__, errcode_ret, [&] {
    return create_program_with_binary(context, num_devices, device_list, lengths, binaries, binary_status);
  });
}

cl_program CL_API_CALL clCreateProgramWithBuiltInKernels(cl_context context, cl_uint num_devices,
                                                         const cl_device_id* device_list, const char* kernel_names,
                                                         cl_int* errcode_ret) {
  return guarded_create<cl_program>(__func__, errcode_ret, [&] {
    return create_program_with_built_in_kernels(context, num_devices, device_list, kernel_names);
  });
}

cl_program CL_API_CALL clCreateProgramWithIL(cl_context context, const void* il, size_t length,
                                             cl_int* errcode_ret) {
  return guarded_create<cl_program>(__func__, errcode_ret, [&] { return create_program_with_il(context, il, length); });
}

cl_int CL_API_CALL clRetainProgram(cl_program program) {
  return change_api_count(__func__, program, "program", count_change::retain);
}

cl_int CL_API_CALL clReleaseProgram(cl_program program) {
  return change_api_count(__func__, program, "program", count_change::release);
}

cl_int CL_API_CALL clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                                  const char* options, void(CL_CALLBACK* pfn_notify)(cl_program, void*),
                                  void* user_data) {
  return guarded(__func__, [&] {
    return build_program(program, num_devices, device_list, options, pfn_notify, user_data);
  });
}

cl_int CL_API_CALL clCompileProgram(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                                    const char* options, cl_uint num_input_headers, const cl_program* input_headers,
                                    const char** header_include_names,
                                    void(CL_CALLBACK* pfn_notify)(cl_program, void*), void* user_data) {
  return guarded(__func__, [&] {
    return compile_program(program, num_devices, device_list, options, num_input_headers, input_headers,
                           header_include_names, pfn_notify, user_data);
  });
}

cl_program CL_API_CALL clLinkProgram(cl_context context, cl_uint num_devices, const cl_device_id* device_list,
                                     const char* options, cl_uint num_input_programs,
                                     const cl_program* input_programs,
                                     void(CL_CALLBACK* pfn_notify)(cl_program, void*), void* user_data,
                                     cl_int* errcode_ret) {
  // Not guarded_create: a failed link may still return a program, so the
  // program and the error code travel separately.
  cl_program linked = nullptr;
  cl_int code = guarded(__func__, [&] {
    return link_program(context, num_devices, device_list, options, num_input_programs, input_programs, pfn_notify,
                        user_data, linked);
  });
  if (errcode_ret) *errcode_ret = code;
  return linked;
}

cl_int CL_API_CALL clUnloadCompiler() {
  // A hint; the compilers are the servers' and stay loaded.
  return CL_SUCCESS;
}

cl_int CL_API_CALL clGetProgramInfo(cl_program program, cl_program_info param_name, size_t param_value_size,
                                    void* param_value, size_t* param_value_size_ret) {
  return guarded(__func__, [&] {
    return get_program_info(program, param_name, param_value_size, param_value, param_value_size_ret);
  });
}

cl_int CL_API_CALL clGetProgramBuildInfo(cl_program program, cl_device_id device, cl_program_build_info param_name,
                                         size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  return guarded(__func__, [&] {
    return get_program_build_info(program, device, param_name, param_value_size, param_value,
                                  param_value_size_ret);
  });
}

cl_int CL_API_CALL clSetProgramReleaseCallback(cl_program program,
                                               void(CL_CALLBACK* pfn_notify)(cl_program, void*),
                                               void* user_data) {
  return guarded(__func__, [&]() -> cl_int {
    // CL_INVALID_PROGRAM if program is not a valid program object.
    FERRY_CHECK_HANDLE(program);
    // CL_INVALID_VALUE if pfn_notify is NULL.
    if (pfn_notify == nullptr) return CL_INVALID_VALUE;
    // CL_INVALID_OPERATION if no devices in the context associated with
    // program support destructors for program scope global variables (none
    // do through Ferry; PoCL 3.x answers the same natively).
    return explain(CL_INVALID_OPERATION, "no device of the context has program scope global destructors");
  });
}

cl_int CL_API_CALL clSetProgramSpecializationConstant(cl_program program, cl_uint spec_id, size_t spec_size,
                                                      const void* spec_value) {
  return guarded(__func__, [&] {
    return set_program_specialization_constant(program, spec_id, spec_size, spec_value);
  });
}

}  // namespace ferry::client::api
