// Programs: creation from source, binaries or IL, specialization constants,
// build, compile (with the client's headers) and link.
//
// Every build and compile asks for kernel argument info (see
// detail::arg_info_option): the daemon needs each argument's class to keep
// raw bytes away from handle arguments.
#include "server/commands/executor.hpp"
#include "server/commands/executor_inline.hpp"

#include <memory>
#include <string>
#include <vector>

#include "common/cl_errors.hpp"
#include "common/log.hpp"
#include "server/commands/build_headers.hpp"

namespace ferry::server {

namespace p = protocol;

namespace {

using detail::arg_info_option;

bool asks_arg_info(const std::string& options) { return options.find("-cl-kernel-arg-info") != std::string::npos; }

std::string with_arg_info(const std::string& options) {
  return asks_arg_info(options) ? options : options + std::string(arg_info_option);
}

/// How a build or compile with argument info went.
struct compile_result {
  cl_int status;
  /// It succeeded only without argument info.
  bool bare;
};

// Runs `compile` (clBuildProgram or clCompileProgram with these options) asking for
// argument info, and where that alone makes it fail, once more as the client asked:
// NVIDIA's compiler (driver 580) emits PTX that ptxas rejects for a kernel without
// arguments when argument info is asked for. Such a program's kernels are then treated
// as on a platform that keeps no argument info (pointer_arguments). `bare` says so.
template <class Compile>
compile_result compile_with_arg_info(const std::string& options, Compile&& compile) {
  compile_result result{compile(with_arg_info(options).c_str()), false};
  if ((result.status == CL_BUILD_PROGRAM_FAILURE || result.status == CL_COMPILE_PROGRAM_FAILURE) &&
      !asks_arg_info(options)) {
    result.status = compile(options.c_str());
    result.bare = result.status == CL_SUCCESS;
  }
  return result;
}

// The tree of the client's headers for one build or compile of `program`
// (build_headers.hpp), or none when the request carries no client files. A
// request whose paths the server refuses fails with `refused` (the options'
// error code of the step), a tree the server cannot write with
// CL_OUT_OF_RESOURCES; either is logged, and the session goes on.
cl_int make_build_tree(const p::build_files& files, const std::string& options, cl_int refused,
                       const std::string& label, p::object_id program, std::unique_ptr<build_tree>& tree) {
  if (files.empty()) return CL_SUCCESS;
  tree_error error = tree_error::none;
  std::string why;
  tree = build_tree::make(files, options, build_base(), error, why);
  if (tree) return CL_SUCCESS;
  FERRY_INFO("session", "session %s: headers of program %llu: %s", label.c_str(),
             static_cast<unsigned long long>(program), why.c_str());
  return error == tree_error::bad_path ? refused : CL_OUT_OF_RESOURCES;
}

}  // namespace

// ---------------------------------------------------------------------------
// Creation

bool executor::on(const p::create_program_with_source& m) {
  if (duplicate(m.id)) return false;
  object_table::found context = find_for_creation<object_kind::context>(m.context);
  if (!context) return record_failed(m.id, object_kind::program, context.error());
  const char* text = m.source.c_str();
  size_t length = m.source.size();
  cl_int error;
  cl_program program = api_.clCreateProgramWithSource(context->as_context(), 1, &text, &length, &error);
  if (program == nullptr) return record_failed(m.id, object_kind::program, error);
  auto entry = object_entry::native(object_kind::program, program, context->as_context());
  entry.printf_capable = m.source.find("printf") != std::string::npos;
  objects_.insert(m.id, entry);
  return true;
}

bool executor::on(const p::create_program_with_binary& m) {
  if (duplicate(m.id)) return false;
  auto refuse = [&](cl_int error) { return answer(p::status_reply{m.request, error, {}}); };
  // Over the session's object quota, the quota's error.
  object_table::found context = find_for_creation<object_kind::context>(m.context);
  if (!context) return refuse(context.error());
  if (m.devices.empty() || m.devices.size() != m.binaries.size()) return refuse(CL_INVALID_VALUE);
  std::vector<cl_device_id> devices;
  if (!map_devices(m.devices, devices)) return refuse(CL_INVALID_DEVICE);
  std::vector<size_t> lengths;
  std::vector<const unsigned char*> binaries;
  for (const p::bytes& binary : m.binaries) {
    lengths.push_back(binary.size());
    binaries.push_back(binary.empty() ? nullptr : binary.data());
  }
  std::vector<cl_int> status(devices.size(), CL_SUCCESS);
  cl_int error;
  cl_program program = api_.clCreateProgramWithBinary(context->as_context(), static_cast<cl_uint>(devices.size()),
                                                      devices.data(), lengths.data(), binaries.data(), status.data(),
                                                      &error);
  if (program != nullptr) {
    auto entry = object_entry::native(object_kind::program, program, context->as_context());
    entry.printf_capable = true;  // nothing tells; assume it may print
    objects_.insert(m.id, entry);
  }
  p::status_reply reply{m.request, error, {}};
  reply.details.assign(status.begin(), status.end());
  return answer(reply);
}

bool executor::on(const p::create_program_with_il& m) {
  if (duplicate(m.id)) return false;
  p::status_reply reply{m.request, CL_SUCCESS, {}};
  // Over the session's object quota, the quota's error.
  object_table::found context = find_for_creation<object_kind::context>(m.context);
  if (!context) {
    reply.status = context.error();
  } else if (m.il.empty()) {
    // CL_INVALID_VALUE if il is NULL or if length is zero.
    reply.status = CL_INVALID_VALUE;
  } else {
    cl_int error = CL_SUCCESS;
    cl_program program = api_.clCreateProgramWithIL(context->as_context(), m.il.data(), m.il.size(), &error);
    if (program == nullptr) {
      // Nothing is recorded: the client makes no object that would release the id.
      reply.status = error != CL_SUCCESS ? error : CL_OUT_OF_RESOURCES;
    } else {
      auto entry = object_entry::native(object_kind::program, program, context->as_context());
      entry.printf_capable = true;  // nothing tells; assume it may print
      entry.from_il = true;
      objects_.insert(m.id, entry);
    }
  }
  FERRY_DEBUG("session", "session %s: program %llu from %zu bytes of IL: %s", core_->label.c_str(),
              static_cast<unsigned long long>(m.id), m.il.size(), cl_error_name(reply.status).c_str());
  return answer(reply);
}

bool executor::on(const p::set_program_specialization_constant& m) {
  auto status = [&](cl_int error) { return answer(p::status_reply{m.request, error, {}}); };
  object_table::found program = objects_.find<object_kind::program>(m.program);
  if (!program) return status(program.error());
  // CL_INVALID_PROGRAM if program is not a valid program object created
  // from an intermediate language (e.g. SPIR-V).
  if (!program->from_il) return status(CL_INVALID_PROGRAM);
  // The bytes given are not spec_size bytes: the native call must never
  // read past them.
  if (!m.value.empty() && m.value.size() != m.size) return status(CL_INVALID_VALUE);
  // CL_INVALID_SPEC_ID and CL_INVALID_VALUE (size mismatch, NULL value)
  // are the native answer.
  return status(api_.clSetProgramSpecializationConstant(program->as_program(), m.spec_id, static_cast<size_t>(m.size),
                                                        m.value.empty() ? nullptr : m.value.data()));
}

// ---------------------------------------------------------------------------
// Build and compile

bool executor::on(const p::build_program& m) {
  p::build_reply reply{m.request, CL_SUCCESS, 0, {}};
  std::vector<cl_device_id> devices;
  std::unique_ptr<build_tree> tree;
  object_table::found program = objects_.find<object_kind::program>(m.program);
  if (!program) {
    reply.status = program.error();
  } else if (!map_devices(m.devices, devices)) {
    reply.status = CL_INVALID_DEVICE;
  } else if ((reply.status = make_build_tree(m.files, m.options, CL_INVALID_BUILD_OPTIONS, core_->label, m.program,
                                             tree)) != CL_SUCCESS) {
    // CL_INVALID_BUILD_OPTIONS: the client's files name paths the server refuses.
  } else {
    // The compiler reads the client's headers from the tree, through options
    // that name it.
    const std::string& options = tree ? tree->options() : m.options;
    compile_result built = compile_with_arg_info(options, [&](const char* text) {
      return api_.clBuildProgram(program->as_program(), static_cast<cl_uint>(devices.size()),
                                 devices.empty() ? nullptr : devices.data(), text, nullptr, nullptr);
    });
    reply.status = built.status;
    if (built.bare)
      FERRY_INFO("session", "session %s: program %llu builds only without%s", core_->label.c_str(),
                 static_cast<unsigned long long>(m.program), std::string(arg_info_option).c_str());
    if (reply.status == CL_SUCCESS) kernel_names(program->as_program(), reply.kernel_names);
    object_entry* entry = objects_.find_mutable(m.program);
    entry->arg_info_hidden = !asks_arg_info(m.options);
    entry->client_files = tree ? std::make_shared<const client_paths>(tree->paths()) : nullptr;
  }
  // The tree goes before the answer: once the client learns the outcome, no
  // copy of its headers is left on the server.
  tree.reset();
  FERRY_DEBUG("session", "session %s: build of program %llu: %s", core_->label.c_str(),
              static_cast<unsigned long long>(m.program), cl_error_name(reply.status).c_str());
  return answer(reply);
}

// A client of version 4 or 5 ships no headers: its build is one with none.
bool executor::on(const p::build_program_v4& m) {
  return on(p::build_program{m.request, m.program, m.devices, m.options, {}});
}

bool executor::on(const p::compile_program_v4& m) {
  return on(p::compile_program{m.request, m.program, m.devices, m.options, m.headers, m.header_names, {}});
}

bool executor::on(const p::compile_program& m) {
  p::build_reply reply{m.request, CL_SUCCESS, 0, {}};
  std::vector<cl_device_id> devices;
  std::unique_ptr<build_tree> tree;
  std::vector<cl_program> headers;
  std::vector<const char*> names;
  bool printf_capable = false;
  object_table::found program = objects_.find<object_kind::program>(m.program);
  if (!program) {
    reply.status = program.error();
  } else if (!map_devices(m.devices, devices)) {
    reply.status = CL_INVALID_DEVICE;
  } else if (m.headers.size() != m.header_names.size()) {
    reply.status = CL_INVALID_VALUE;
  } else if ((reply.status = make_build_tree(m.files, m.options, CL_INVALID_COMPILER_OPTIONS, core_->label,
                                             m.program, tree)) != CL_SUCCESS) {
    // CL_INVALID_COMPILER_OPTIONS: the client's files name paths the server refuses.
  } else {
    for (size_t i = 0; i < m.headers.size(); ++i) {
      object_table::found header = objects_.find<object_kind::program>(m.headers[i]);
      if (!header) {
        reply.status = header.error();
        break;
      }
      headers.push_back(header->as_program());
      names.push_back(m.header_names[i].c_str());
      printf_capable = printf_capable || header->printf_capable;
    }
    if (reply.status == CL_SUCCESS) {
      const std::string& options = tree ? tree->options() : m.options;
      compile_result compiled = compile_with_arg_info(options, [&](const char* text) {
        return api_.clCompileProgram(program->as_program(), static_cast<cl_uint>(devices.size()),
                                     devices.empty() ? nullptr : devices.data(), text,
                                     static_cast<cl_uint>(headers.size()), headers.empty() ? nullptr : headers.data(),
                                     names.empty() ? nullptr : names.data(), nullptr, nullptr);
      });
      reply.status = compiled.status;
      if (compiled.bare)
        FERRY_INFO("session", "session %s: program %llu compiles only without%s", core_->label.c_str(),
                   static_cast<unsigned long long>(m.program), std::string(arg_info_option).c_str());
      object_entry* entry = objects_.find_mutable(m.program);
      if (printf_capable) entry->printf_capable = true;
      entry->arg_info_hidden = !asks_arg_info(m.options);
      entry->client_files = tree ? std::make_shared<const client_paths>(tree->paths()) : nullptr;
    }
  }
  // The tree goes before the answer, as for a build.
  tree.reset();
  return answer(reply);
}

// ---------------------------------------------------------------------------
// Link

bool executor::has_binary_for(cl_program program, const std::vector<cl_device_id>& wanted) {
  std::vector<cl_device_id> devices = wanted;
  if (devices.empty()) {
    cl_uint count = 0;
    api_.clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof count, &count, nullptr);
    devices.resize(count);
    if (count && api_.clGetProgramInfo(program, CL_PROGRAM_DEVICES, count * sizeof(cl_device_id), devices.data(),
                                       nullptr) != CL_SUCCESS)
      return false;
  }
  for (cl_device_id device : devices) {
    cl_program_binary_type type = CL_PROGRAM_BINARY_TYPE_NONE;
    if (api_.clGetProgramBuildInfo(program, device, CL_PROGRAM_BINARY_TYPE, sizeof type, &type, nullptr) !=
            CL_SUCCESS ||
        type == CL_PROGRAM_BINARY_TYPE_NONE)
      return false;
  }
  return true;
}

bool executor::on(const p::link_program& m) {
  if (duplicate(m.id)) return false;
  // No program is made on a refusal: `created` stays 0.
  auto refuse = [&](cl_int error) { return answer(p::build_reply{m.request, error, 0, {}}); };
  // Over the session's object quota, the quota's error.
  object_table::found context = find_for_creation<object_kind::context>(m.context);
  if (!context) return refuse(context.error());
  std::vector<cl_device_id> devices;
  if (!map_devices(m.devices, devices)) return refuse(CL_INVALID_DEVICE);
  std::vector<cl_program> inputs;
  bool printf_capable = false;
  bool arg_info_hidden = false;
  for (p::object_id id : m.inputs) {
    object_table::found input = objects_.find<object_kind::program>(id);
    if (!input) return refuse(input.error());
    // CL_INVALID_OPERATION if an input holds no compiled binary or library
    // for the devices (PoCL 3.1 aborts the whole daemon linking one).
    if (!has_binary_for(input->as_program(), devices)) return refuse(CL_INVALID_OPERATION);
    inputs.push_back(input->as_program());
    printf_capable = printf_capable || input->printf_capable;
    arg_info_hidden = arg_info_hidden || input->arg_info_hidden;
  }
  cl_int error = CL_SUCCESS;
  cl_program program = api_.clLinkProgram(context->as_context(), static_cast<cl_uint>(devices.size()),
                                          devices.empty() ? nullptr : devices.data(), m.options.c_str(),
                                          static_cast<cl_uint>(inputs.size()), inputs.empty() ? nullptr : inputs.data(),
                                          nullptr, nullptr, &error);
  p::build_reply reply{m.request, error, 0, {}};
  if (program != nullptr) {
    // A failed link may still make a program that holds the log.
    auto entry = object_entry::native(object_kind::program, program, context->as_context());
    entry.printf_capable = printf_capable;
    entry.arg_info_hidden = arg_info_hidden;
    objects_.insert(m.id, entry);
    reply.created = 1;
    if (error == CL_SUCCESS) kernel_names(program, reply.kernel_names);
  }
  return answer(reply);
}

}  // namespace ferry::server
