// Program entry points: creation from source, binaries and IL, build,
// compile, link, specialization constants, and the program queries.
//
// Creation from source is posted (the id is ours, so nothing waits); creation
// from binaries and IL, build, compile, link and specialization constants are
// round trips because their outcome is what the call returns. Whatever the
// client can judge (handles, lists, devices, attached kernels, IL support) is
// judged here, before any traffic; the rest is the native implementation's
// answer, passed through unchanged.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/core/programs/include_scan.hpp"
#include "client/core/servers/server.hpp"
#include "common/log.hpp"
#include "protocol/version.hpp"
#include "protocol/dispatch.hpp"

namespace ferry::client::api {

namespace {

using program_notify = void(CL_CALLBACK*)(cl_program, void*);

// Room left in a frame for the fields around a large string or byte array.
constexpr size_t frame_overhead = 4096;

bool contains(const std::vector<cl_device_id>& devices, cl_device_id d) {
  // Compares handles only: a stale or foreign handle is never dereferenced.
  return std::find(devices.begin(), devices.end(), d) != devices.end();
}

// CL_INVALID_VALUE if device_list is NULL and num_devices is greater than
// zero, or if device_list is not NULL and num_devices is zero.
bool device_list_shape_ok(cl_uint num_devices, const cl_device_id* device_list) {
  return (device_list == nullptr) == (num_devices == 0);
}

// The server indices of the listed devices; false when one of them is not
// in `allowed` (the caller answers CL_INVALID_DEVICE).
bool device_indices(cl_uint num_devices, const cl_device_id* device_list, const std::vector<cl_device_id>& allowed,
                    std::vector<uint32_t>& out) {
  out.clear();
  out.reserve(num_devices);
  for (cl_uint i = 0; i < num_devices; ++i) {
    if (!contains(allowed, device_list[i])) return false;
    out.push_back(device_list[i]->index);
  }
  return true;
}

// The server indices of those of `devices` that `s` hosts.
std::vector<uint32_t> indices_on(const server& s, const std::vector<cl_device_id>& devices) {
  std::vector<uint32_t> out;
  for (cl_device_id d : devices)
    if (d->host == &s) out.push_back(d->index);
  return out;
}

// The servers a build, compile or link of `devices` goes to (all of
// `fallback` when no list was given).
std::vector<server*> servers_for(const cl_device_id* device_list, cl_uint num_devices,
                                 const std::vector<server*>& fallback) {
  if (device_list == nullptr) return fallback;
  return servers_of(std::vector<cl_device_id>(device_list, device_list + num_devices));
}

// One clGet*Info question the client cannot answer itself; device-specific
// questions go to the device's server.
result<protocol::bytes> remote_query(const program* p, protocol::query_kind kind, const device* d, cl_uint param) {
  connection* link = d ? d->host->link.get() : link_of(p);
  if (link == nullptr) return fail(CL_DEVICE_NOT_AVAILABLE);
  protocol::query request;
  request.kind = kind;
  request.object = p->id;
  request.device = d ? d->index : 0;
  request.param = param;
  auto reply = link->call<protocol::query_reply>(request);
  if (!reply) return fail(reply.error());
  if (reply->status != CL_SUCCESS) return fail(reply->status);
  return std::move(reply->value);
}

// Whether a device takes intermediate language programs: its
// CL_DEVICE_IL_VERSION names at least one ("" or no answer means none).
bool takes_il(const device& d) {
  auto it = d.info.find(CL_DEVICE_IL_VERSION);
  if (it == d.info.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [](uint8_t c) { return c != '\0' && c != ' '; });
}

program* make_program(cl_context c, protocol::object_id id, std::vector<cl_device_id> devices) {
  auto* p = new program();
  p->id = id;
  p->context = c;
  retain_internal(c);
  p->devices = std::move(devices);
  p->servers = servers_of(p->devices);
  return p;
}

enum class build_step { build, compile };

const char* entry_name(build_step step) { return step == build_step::build ? "clBuildProgram" : "clCompileProgram"; }

// What a build or compile needs of this machine's files: the program's
// #include lines and -I options mean what they mean here, though the
// compiler runs on the server (docs/protocol.md, "Headers from the client").
// `sources` are the texts whose includes count; `provided` the include names
// that header programs stand for. CL_OUT_OF_RESOURCES (logged) when the
// headers exceed the limits.
result<protocol::build_files> client_files(build_step step, std::string_view options,
                                           std::vector<std::string_view> sources,
                                           std::vector<std::string_view> provided) {
  include_scan_input input;
  input.options = options;
  input.sources = std::move(sources);
  input.provided = std::move(provided);
  // Relative -I directories and the source's own includes resolve against
  // the working directory, as a local compiler resolves them. Without one
  // (it was removed) nothing relative is found.
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (!ec) input.working_dir = absolute_normal(cwd.string(), {});
  std::string why;
  auto files = scan_includes(input, why);
  if (!files) FERRY_WARN("program", "%s: %s", entry_name(step), why.c_str());
  return files;
}

// Whether `request` fits its message's limit (the headers it carries may
// not); logged when it does not.
template <class Request>
bool fits_frame(const Request& request, build_step step) {
  std::vector<uint8_t> encoded;
  protocol::writer w(encoded);
  protocol::encode_value(w, request);
  const uint32_t limit = protocol::message_limit(static_cast<uint16_t>(protocol::message_traits<Request>::id));
  if (encoded.size() <= limit) return true;
  FERRY_WARN("program",
             "%s: the options and the %zu headers the program includes take %zu bytes, over the %u a build may "
             "carry",
             entry_name(step), request.files.headers.size(), encoded.size(), limit);
  return false;
}

// The layout of versions 4 and 5, for a server that takes no headers: it
// builds with the files it has, as before version 6.
protocol::build_program_v4 without_files(const protocol::build_program& r) {
  return {r.request, r.program, r.devices, r.options};
}
protocol::compile_program_v4 without_files(const protocol::compile_program& r) {
  return {r.request, r.program, r.devices, r.options, r.headers, r.header_names};
}

// Sends a build or compile of the `listed` devices (none: all) to each of
// `servers` in turn and answers as call_each does; a server older than
// version 6 gets it without the client's headers.
template <class Request>
result<protocol::build_reply> call_build(const std::vector<server*>& servers, Request& request,
                                         const std::vector<cl_device_id>& listed) {
  result<protocol::build_reply> first = fail(CL_DEVICE_NOT_AVAILABLE);
  for (size_t i = 0; i < servers.size(); ++i) {
    connection& link = *servers[i]->link;
    request.devices = indices_on(*servers[i], listed);
    result<protocol::build_reply> reply = fail(CL_DEVICE_NOT_AVAILABLE);
    if (link.version() >= protocol::headers_version) {
      reply = link.call<protocol::build_reply>(request);
    } else {
      if (!request.files.empty())
        FERRY_DEBUG("program", "server %s speaks protocol version %u: the program's headers are not shipped",
                    servers[i]->address_text.c_str(), static_cast<unsigned>(link.version()));
      auto plain = without_files(request);
      reply = link.call<protocol::build_reply>(plain);
    }
    if (!reply || reply->status != CL_SUCCESS) return reply;
    if (i == 0) first = std::move(reply);
  }
  return first;
}

// Whether the compiler ran (so the notification is due): success, or the
// step's own failure code. Other codes mean the step never began.
bool step_ran(cl_int status, build_step step) {
  cl_int failure = step == build_step::build ? CL_BUILD_PROGRAM_FAILURE : CL_COMPILE_PROGRAM_FAILURE;
  return status == CL_SUCCESS || status == failure;
}

// Records what a build or compile of `devices` left behind: a successful
// build makes an executable for them with these kernels; a compile, or a
// build that failed in the compiler, leaves none for them. Executables of
// the program's other devices stay (a program may be built for a subset of
// its devices, one device at a time). A step that never began changes
// nothing.
void record_outcome(program* p, build_step step, const std::vector<cl_device_id>& devices,
                    protocol::build_reply& reply) {
  if (!step_ran(reply.status, step)) return;
  std::lock_guard lock(p->build_mutex);
  auto& built = p->built_devices;
  std::erase_if(built, [&](cl_device_id d) { return contains(devices, d); });
  if (step == build_step::build && reply.status == CL_SUCCESS) {
    // Kept in the order of the program's devices.
    std::vector<cl_device_id> now;
    for (cl_device_id d : p->devices)
      if (contains(built, d) || contains(devices, d)) now.push_back(d);
    built = std::move(now);
    p->kernel_names = std::move(reply.kernel_names);
  }
  if (built.empty()) p->kernel_names.clear();
}

// The devices a build or compile applies to: those listed, else all of the
// program's.
std::vector<cl_device_id> step_devices(const program* p, cl_uint num_devices, const cl_device_id* device_list) {
  if (device_list == nullptr) return p->devices;
  return std::vector<cl_device_id>(device_list, device_list + num_devices);
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
  if (total > protocol::max_control_payload - frame_overhead) return fail(CL_OUT_OF_RESOURCES);
  if (!reachable(c)) return fail(CL_DEVICE_NOT_AVAILABLE);

  std::string source;
  source.reserve(total);
  for (cl_uint i = 0; i < count; ++i) {
    if (lengths && lengths[i]) source.append(strings[i], lengths[i]);
    else source.append(strings[i]);
  }
  auto* p = make_program(c, next_object_id(), c->devices);
  p->source = std::move(source);
  post_each(p->servers, protocol::create_program_with_source{p->id, c->id, p->source});
  return static_cast<cl_program>(p);
}

result<cl_program> create_program_with_binary(cl_context c, cl_uint num_devices, const cl_device_id* device_list,
                                              const size_t* lengths, const unsigned char** binaries,
                                              cl_int* binary_status) {
  // CL_INVALID_CONTEXT if context is not a valid context.
  FERRY_CHECK_HANDLE_R(c);
  // CL_INVALID_VALUE if device_list is NULL or num_devices is zero.
  if (device_list == nullptr || num_devices == 0) return fail(CL_INVALID_VALUE);
  protocol::create_program_with_binary request;
  // CL_INVALID_DEVICE if any device in device_list is not in the list of
  // devices associated with context.
  if (!device_indices(num_devices, device_list, c->devices, request.devices))
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
  if (total > protocol::max_control_payload - frame_overhead) return fail(CL_OUT_OF_RESOURCES);
  std::vector<cl_device_id> devices(device_list, device_list + num_devices);
  const std::vector<server*> servers = servers_of(devices);
  if (!reachable(c) || !all_accepting(servers)) return fail(CL_DEVICE_NOT_AVAILABLE);

  // Each server gets the binaries of its own devices; the answers are put
  // back in the caller's order.
  request.id = next_object_id();
  request.context = c->id;
  cl_int status = CL_SUCCESS;
  std::vector<server*> made;
  for (server* s : servers) {
    std::vector<cl_uint> positions;
    request.devices.clear();
    request.binaries.clear();
    for (cl_uint i = 0; i < num_devices; ++i) {
      if (device_list[i]->host != s) continue;
      positions.push_back(i);
      request.devices.push_back(device_list[i]->index);
      request.binaries.emplace_back(binaries[i], binaries[i] + lengths[i]);
    }
    auto reply = s->link->call<protocol::status_reply>(request);
    if (!reply) {
      status = reply.error();
      break;
    }
    if (binary_status) {
      for (size_t j = 0; j < positions.size(); ++j)
        binary_status[positions[j]] = j < reply->details.size() ? reply->details[j] : reply->status;
    }
    // CL_INVALID_BINARY if an invalid program binary was encountered for any
    // device (the server creates no object then).
    if (reply->status != CL_SUCCESS) {
      status = reply->status;
      break;
    }
    made.push_back(s);
  }
  if (status != CL_SUCCESS) {
    post_each(made, protocol::release_object{request.id});
    return fail(status);
  }
  auto* p = make_program(c, request.id, std::move(devices));
  p->from_binary = true;
  return static_cast<cl_program>(p);
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
  if (length > protocol::max_control_payload - frame_overhead) return fail(CL_OUT_OF_RESOURCES);
  if (!reachable(c)) return fail(CL_DEVICE_NOT_AVAILABLE);

  protocol::create_program_with_il request;
  request.id = next_object_id();
  request.context = c->id;
  const auto* first = static_cast<const uint8_t*>(il);
  request.il.assign(first, first + length);
  auto reply = call_each<protocol::status_reply>(c->servers, request);
  // CL_INVALID_VALUE if the length-byte memory pointed to by il does not
  // contain well-formed intermediate language input that can be consumed by
  // the OpenCL runtime: the native answer (the server creates no object then).
  if (!reply || reply->status != CL_SUCCESS) {
    post_each(c->servers, protocol::release_object{request.id});
    return fail(reply ? reply->status : reply.error());
  }
  // The devices associated with the program object are the devices
  // associated with context.
  auto* p = make_program(c, request.id, c->devices);
  p->il = std::move(request.il);
  return static_cast<cl_program>(p);
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
  protocol::build_program request;
  // CL_INVALID_DEVICE if any device in device_list is not in the list of
  // devices associated with program. (No list: all of them, sent as empty.)
  if (!device_indices(num_devices, device_list, p->devices, request.devices))
    return explain(CL_INVALID_DEVICE, "device_list names a device that is not the program's");
  // CL_INVALID_OPERATION if there are kernel objects attached to program.
  // Checked before the clauses only the server can judge (binaries, options,
  // compiler availability), so a program with kernels is never rebuilt.
  if (p->attached_kernels.load() != 0) return explain(CL_INVALID_OPERATION, "program %" PRIu64 " has kernels", p->id);
  request.program = p->id;
  if (options) request.options = options;
  // CL_INVALID_BUILD_OPTIONS if the build options specified by options are
  // invalid (one the protocol cannot carry is surely not valid).
  if (request.options.size() > (1u << 20) - frame_overhead) return CL_INVALID_BUILD_OPTIONS;
  // CL_OUT_OF_RESOURCES if there is a failure to allocate resources required
  // by the OpenCL implementation on the device: here, the application's
  // headers are more than a build may carry to the server.
  auto files = client_files(build_step::build, request.options, {p->source}, {});
  if (!files) return files.error();
  request.files = std::move(*files);
  if (!fits_frame(request, build_step::build)) return CL_OUT_OF_RESOURCES;

  // CL_INVALID_BINARY, CL_INVALID_BUILD_OPTIONS, CL_COMPILER_NOT_AVAILABLE,
  // CL_BUILD_PROGRAM_FAILURE and the remaining CL_INVALID_OPERATION clauses
  // are the native implementation's answer.
  const std::vector<cl_device_id> listed(device_list, device_list + num_devices);
  auto reply = call_build(servers_for(device_list, num_devices, p->servers), request, listed);
  if (!reply) return reply.error();
  record_outcome(p, build_step::build, step_devices(p, num_devices, device_list), *reply);
  // The build has completed when the call returns, so the notification comes
  // now, on the calling thread and outside every lock (as rusticl does).
  if (notify && step_ran(reply->status, build_step::build)) notify(p, user_data);
  return reply->status;
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
  protocol::compile_program request;
  // CL_INVALID_DEVICE if OpenCL devices listed in device_list are not in the
  // list of devices associated with program.
  if (!device_indices(num_devices, device_list, p->devices, request.devices))
    return explain(CL_INVALID_DEVICE, "device_list names a device that is not the program's");
  // The headers are program objects of this server created from source; the
  // server compiles with their source under the given names.
  request.headers.reserve(num_headers);
  request.header_names.reserve(num_headers);
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
    request.headers.push_back(h->id);
    request.header_names.emplace_back(header_names[i]);
    text += request.header_names.back().size() + 16;
  }
  // CL_INVALID_COMPILER_OPTIONS if the compiler options specified by options
  // are invalid (one the protocol cannot carry is surely not valid).
  if (text > (1u << 20) - frame_overhead) return CL_INVALID_COMPILER_OPTIONS;
  // CL_INVALID_OPERATION if there are kernel objects attached to program.
  if (p->attached_kernels.load() != 0) return explain(CL_INVALID_OPERATION, "program %" PRIu64 " has kernels", p->id);
  // CL_INVALID_OPERATION if program has no source or IL available, i.e. it
  // has not been created with clCreateProgramWithSource or
  // clCreateProgramWithIL. (A linked program is refused by the server.)
  if (p->from_binary) return explain(CL_INVALID_OPERATION, "program %" PRIu64 " was made from binaries", p->id);
  request.program = p->id;
  if (options) request.options = options;
  // CL_OUT_OF_RESOURCES if there is a failure to allocate resources required
  // by the OpenCL implementation on the device: here, the application's
  // headers are more than a compile may carry to the server. The header
  // programs' own includes count like the source's.
  std::vector<std::string_view> sources{p->source};
  std::vector<std::string_view> provided;
  for (cl_uint i = 0; i < num_headers; ++i) {
    sources.push_back(headers[i]->source);
    provided.push_back(header_names[i]);
  }
  auto files = client_files(build_step::compile, request.options, std::move(sources), std::move(provided));
  if (!files) return files.error();
  request.files = std::move(*files);
  if (!fits_frame(request, build_step::compile)) return CL_OUT_OF_RESOURCES;

  // CL_INVALID_COMPILER_OPTIONS, CL_COMPILER_NOT_AVAILABLE and
  // CL_COMPILE_PROGRAM_FAILURE are the native implementation's answer.
  const std::vector<cl_device_id> listed(device_list, device_list + num_devices);
  auto reply = call_build(servers_for(device_list, num_devices, p->servers), request, listed);
  if (!reply) return reply.error();
  record_outcome(p, build_step::compile, step_devices(p, num_devices, device_list), *reply);
  if (notify && step_ran(reply->status, build_step::compile)) notify(p, user_data);
  return reply->status;
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
  protocol::link_program request;
  // CL_INVALID_DEVICE if any device in device_list is not in the list of
  // devices associated with context.
  std::vector<cl_device_id> devices;
  if (device_list) {
    if (!device_indices(num_devices, device_list, c->devices, request.devices))
      return explain(CL_INVALID_DEVICE, "device_list names a device that is not in the context");
    devices.assign(device_list, device_list + num_devices);
  } else {
    devices = c->devices;
    for (auto* d : devices) request.devices.push_back(d->index);
  }
  // CL_INVALID_OPERATION if the rules for devices containing compiled
  // binaries or libraries as described in input_programs argument above are
  // not followed: an input of another server has no binary for these devices.
  const std::vector<server*> servers = servers_of(devices);
  for (cl_uint i = 0; i < num_inputs; ++i) {
    for (server* s : servers)
      if (std::find(inputs[i]->servers.begin(), inputs[i]->servers.end(), s) == inputs[i]->servers.end())
        return explain(CL_INVALID_OPERATION, "input %u does not exist on server %s", i, s->address_text.c_str());
  }
  if (options) request.options = options;
  // CL_INVALID_LINKER_OPTIONS if the linker options specified by options are
  // invalid (one the protocol cannot carry is surely not valid).
  if (request.options.size() > (1u << 20) - frame_overhead) return CL_INVALID_LINKER_OPTIONS;
  if (!reachable(c) || !all_accepting(servers)) return CL_DEVICE_NOT_AVAILABLE;
  request.id = next_object_id();
  request.context = c->id;
  request.inputs.reserve(num_inputs);
  for (cl_uint i = 0; i < num_inputs; ++i) request.inputs.push_back(inputs[i]->id);

  // CL_INVALID_LINKER_OPTIONS, CL_LINKER_NOT_AVAILABLE,
  // CL_LINK_PROGRAM_FAILURE and the device rules are the native answer. The
  // first server's reply stands for all, unless a later one made no program.
  std::optional<protocol::build_reply> reply;
  for (server* s : servers) {
    request.devices = indices_on(*s, devices);
    auto answer = s->link->call<protocol::build_reply>(request);
    if (!answer || !answer->created) {
      post_each(servers, protocol::release_object{request.id});
      if (!answer) return answer.error();
      return answer->status != CL_SUCCESS ? answer->status : CL_OUT_OF_RESOURCES;
    }
    if (!reply || (reply->status == CL_SUCCESS && answer->status != CL_SUCCESS)) reply = std::move(*answer);
  }
  auto* p = make_program(c, request.id, std::move(devices));
  {
    std::lock_guard lock(p->build_mutex);
    if (reply->status == CL_SUCCESS) {
      p->built_devices = p->devices;
      p->kernel_names = std::move(reply->kernel_names);
    }
  }
  out = p;
  if (notify) notify(p, user_data);
  return reply->status;
}

// ---------------------------------------------------------------------------
// Queries

cl_int get_program_info(cl_program p, cl_program_info param, size_t size, void* value, size_t* size_ret) {
  // CL_INVALID_PROGRAM if program is not a valid program object.
  FERRY_CHECK_HANDLE(p);
  info_out out(size, value, size_ret);
  switch (param) {
    case CL_PROGRAM_REFERENCE_COUNT: return out.value(cl_uint{p->api_refs.load()});
    case CL_PROGRAM_CONTEXT: return out.value(p->context);
    case CL_PROGRAM_NUM_DEVICES: return out.value(static_cast<cl_uint>(p->devices.size()));
    case CL_PROGRAM_DEVICES: return out.array(p->devices);
    // A program not created from source (from IL too) answers an empty string.
    case CL_PROGRAM_SOURCE: return out.string(p->source);
    // A program not created from IL answers nothing (size 0).
    case CL_PROGRAM_IL: return out.bytes(p->il);
    case CL_PROGRAM_NUM_KERNELS:
    case CL_PROGRAM_KERNEL_NAMES: {
      size_t count = 0;
      std::string names;
      {
        std::lock_guard lock(p->build_mutex);
        // CL_INVALID_PROGRAM_EXECUTABLE if param_name is
        // CL_PROGRAM_NUM_KERNELS or CL_PROGRAM_KERNEL_NAMES and a successful
        // program executable has not been built for at least one device in
        // the list of devices associated with program.
        if (!p->built()) return explain(CL_INVALID_PROGRAM_EXECUTABLE, "program %" PRIu64 " is not built", p->id);
        count = p->kernel_names.size();
        if (param == CL_PROGRAM_KERNEL_NAMES) {
          for (const auto& name : p->kernel_names) {
            if (!names.empty()) names += ';';
            names += name;
          }
        }
      }
      return param == CL_PROGRAM_NUM_KERNELS ? out.value(count) : out.string(names);
    }
    case CL_PROGRAM_BINARIES: {
      // An array of one pointer per device; the binaries are copied to the
      // memory they point at (NULL entries are skipped).
      size_t needed = p->devices.size() * sizeof(unsigned char*);
      if (value == nullptr) {
        if (size_ret) *size_ret = needed;
        return CL_SUCCESS;
      }
      // CL_INVALID_VALUE if the size in bytes specified by param_value_size
      // is < size of return type and param_value is not NULL.
      if (size < needed) return CL_INVALID_VALUE;
      auto answer = remote_query(p, protocol::query_kind::program_info, nullptr, param);
      if (!answer) return answer.error();
      std::vector<protocol::bytes> binaries;
      const char* why = "";
      if (!protocol::decode_payload(answer->data(), answer->size(), binaries, why)) return CL_OUT_OF_RESOURCES;
      auto** targets = static_cast<unsigned char**>(value);
      for (size_t i = 0; i < p->devices.size() && i < binaries.size(); ++i)
        if (targets[i] && !binaries[i].empty()) std::memcpy(targets[i], binaries[i].data(), binaries[i].size());
      if (size_ret) *size_ret = needed;
      return CL_SUCCESS;
    }
    default: {
      // CL_PROGRAM_BINARY_SIZES, CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT,
      // CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT and extension queries: the
      // native answer. CL_INVALID_VALUE if param_name is not valid comes
      // from there too.
      auto answer = remote_query(p, protocol::query_kind::program_info, nullptr, param);
      if (!answer) return answer.error();
      return out.bytes(*answer);
    }
  }
}

cl_int get_program_build_info(cl_program p, cl_device_id d, cl_program_build_info param, size_t size, void* value,
                              size_t* size_ret) {
  // CL_INVALID_PROGRAM if program is not a valid program object.
  FERRY_CHECK_HANDLE(p);
  // CL_INVALID_DEVICE if device is not in the list of devices associated with program.
  if (!contains(p->devices, d))
    return explain(CL_INVALID_DEVICE, "device %p is not the program's", static_cast<void*>(d));
  // CL_INVALID_VALUE if param_name is not valid: the native answer, like the values.
  auto answer = remote_query(p, protocol::query_kind::program_build_info, d, param);
  if (!answer) return answer.error();
  info_out out(size, value, size_ret);
  return out.bytes(*answer);
}

// ---------------------------------------------------------------------------
// Specialization constants

// Specialization constants are scalars (at most 8 bytes); a value larger than
// this is no constant's and travels as none (see below).
constexpr size_t max_spec_constant_size = 256;

cl_int set_program_specialization_constant(cl_program p, cl_uint spec_id, size_t spec_size, const void* spec_value) {
  // CL_INVALID_PROGRAM if program is not a valid program object created
  // from an intermediate language (e.g. SPIR-V). Judged here for programs
  // from source (PoCL and rusticl answer the same; PoCL 3.1 aborts on one
  // that was never built), so only IL programs reach the server.
  FERRY_CHECK_HANDLE(p);
  if (p->il.empty()) return CL_INVALID_PROGRAM;
  protocol::set_program_specialization_constant request;
  request.program = p->id;
  request.spec_id = spec_id;
  request.size = spec_size;
  // A NULL value, or one no constant has the size of, travels as none: the
  // native call then gets NULL with spec_size and answers in its own order.
  if (spec_value != nullptr && spec_size <= max_spec_constant_size) {
    const auto* first = static_cast<const uint8_t*>(spec_value);
    request.value.assign(first, first + spec_size);
  }
  // CL_INVALID_SPEC_ID if spec_id is not a valid specialization constant
  // identifier; CL_INVALID_VALUE if spec_size does not match the size of the
  // specialization constant in the module, or if spec_value is NULL: the
  // native answers.
  auto reply = call_each<protocol::status_reply>(p->servers, request);
  if (!reply) return reply.error();
  return reply->status;
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
  return guarded(__func__, [&]() -> cl_int {
    // CL_INVALID_PROGRAM if program is not a valid program object.
    FERRY_CHECK_HANDLE(program);
    retain_api(program);
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL clReleaseProgram(cl_program program) {
  return guarded(__func__, [&]() -> cl_int {
    // CL_INVALID_PROGRAM if program is not a valid program object.
    FERRY_CHECK_HANDLE(program);
    release_api(program);
    return CL_SUCCESS;
  });
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
