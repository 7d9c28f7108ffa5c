#include "client/core/programs/build.hpp"

#include <filesystem>
#include <mutex>
#include <string_view>

#include "client/core/device_list.hpp"
#include "client/core/programs/include_scan.hpp"
#include "client/core/servers/server.hpp"
#include "common/log.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/version.hpp"

namespace ferry::client {

namespace {

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
    request.devices = device_indices_on(*servers[i], listed);
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

// The devices' indices on their servers (the size a request is checked
// with; each server gets only its own).
std::vector<uint32_t> indices_of(const std::vector<cl_device_id>& devices) {
  std::vector<uint32_t> out;
  out.reserve(devices.size());
  for (cl_device_id d : devices) out.push_back(d->index);
  return out;
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

// Runs `request` for the `listed` devices (none: all of the program's) and
// records and notifies what it left behind. The build has completed when the
// call returns, so the notification comes now, on the calling thread and
// outside every lock (as rusticl does).
template <class Request>
cl_int run_step(program* p, build_step step, Request& request, const std::vector<cl_device_id>& listed,
                program_notify notify, void* user_data) {
  auto reply = call_build(listed.empty() ? p->servers : servers_of(listed), request, listed);
  if (!reply) return reply.error();
  record_outcome(p, step, listed.empty() ? p->devices : listed, *reply);
  if (notify && step_ran(reply->status, step)) notify(p, user_data);
  return reply->status;
}

}  // namespace

cl_int build(program* p, const std::vector<cl_device_id>& listed, std::string options, program_notify notify,
             void* user_data) {
  protocol::build_program request;
  request.devices = indices_of(listed);
  request.program = p->id;
  request.options = std::move(options);
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
  return run_step(p, build_step::build, request, listed, notify, user_data);
}

cl_int compile(program* p, const std::vector<cl_device_id>& listed, std::string options, compile_headers headers,
               program_notify notify, void* user_data) {
  // The headers are program objects of this server created from source; the
  // server compiles with their source under the given names.
  protocol::compile_program request;
  request.devices = indices_of(listed);
  request.program = p->id;
  request.options = std::move(options);
  // CL_OUT_OF_RESOURCES if there is a failure to allocate resources required
  // by the OpenCL implementation on the device: here, the application's
  // headers are more than a compile may carry to the server. The header
  // programs' own includes count like the source's.
  std::vector<std::string_view> sources{p->source};
  std::vector<std::string_view> provided;
  for (size_t i = 0; i < headers.programs.size(); ++i) {
    request.headers.push_back(headers.programs[i]->id);
    sources.push_back(headers.programs[i]->source);
    provided.push_back(headers.names[i]);
  }
  auto files = client_files(build_step::compile, request.options, std::move(sources), std::move(provided));
  if (!files) return files.error();
  request.header_names = std::move(headers.names);
  request.files = std::move(*files);
  if (!fits_frame(request, build_step::compile)) return CL_OUT_OF_RESOURCES;
  // CL_INVALID_COMPILER_OPTIONS, CL_COMPILER_NOT_AVAILABLE and
  // CL_COMPILE_PROGRAM_FAILURE are the native implementation's answer.
  return run_step(p, build_step::compile, request, listed, notify, user_data);
}

}  // namespace ferry::client
