#include "server/commands/executor.hpp"
#include "server/commands/executor_inline.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

#include "common/cl_errors.hpp"
#include "common/log.hpp"
#include "server/commands/build_headers.hpp"
#include "server/daemon/printf_capture.hpp"
#include "server/native/context_releaser.hpp"
#include "server/native/info.hpp"
#include "server/transport/staging.hpp"

namespace ferry::server {

namespace p = protocol;

namespace {

/// Whether argument `index` of a kernel is of class `c` (false when the
/// platform keeps no argument info).
bool arg_is(const object_entry& kernel, uint32_t index, uint8_t c) {
  return index < kernel.pointer_args.size() && kernel.pointer_args[index] == c;
}

// Every build asks for kernel argument info: the daemon needs each
// argument's class to keep raw bytes away from handle arguments (some
// platforms, PoCL among them, keep none otherwise). The clause is taken off
// the options reported back (see query_value).
constexpr std::string_view arg_info_option = " -cl-kernel-arg-info";

bool asks_arg_info(const std::string& options) { return options.find("-cl-kernel-arg-info") != std::string::npos; }

std::string with_arg_info(const std::string& options) {
  return asks_arg_info(options) ? options : options + std::string(arg_info_option);
}

// Runs `compile` (clBuildProgram or clCompileProgram with these options) asking for
// argument info, and where that alone makes it fail, once more as the client asked:
// NVIDIA's compiler (driver 580) emits PTX that ptxas rejects for a kernel without
// arguments when argument info is asked for. Such a program's kernels are then treated
// as on a platform that keeps no argument info (pointer_arguments). `bare` says so.
template <class Compile>
cl_int compile_with_arg_info(const std::string& options, Compile&& compile, bool& bare) {
  bare = false;
  cl_int rc = compile(with_arg_info(options).c_str());
  if ((rc == CL_BUILD_PROGRAM_FAILURE || rc == CL_COMPILE_PROGRAM_FAILURE) && !asks_arg_info(options)) {
    rc = compile(options.c_str());
    bare = rc == CL_SUCCESS;
  }
  return rc;
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
  tree = build_tree::make(files, options, temp_base(), error, why);
  if (tree) return CL_SUCCESS;
  FERRY_INFO("session", "session %s: headers of program %llu: %s", label.c_str(),
             static_cast<unsigned long long>(program), why.c_str());
  return error == tree_error::bad_path ? refused : CL_OUT_OF_RESOURCES;
}

// Size-then-value for any clGet*Info shaped query.
template <class Query>
cl_int query_bytes(Query&& query, p::bytes& out) {
  size_t size = 0;
  cl_int rc = query(0, nullptr, &size);
  if (rc != CL_SUCCESS) return rc;
  out.resize(size);
  if (size == 0) return CL_SUCCESS;
  size_t got = size;
  rc = query(size, out.data(), &got);
  if (rc == CL_SUCCESS && got < size) out.resize(got);
  return rc;
}

}  // namespace

executor::executor(std::shared_ptr<session_core> core, const native::device_catalog& catalog)
    : core_(std::move(core)),
      outbox_(core_, &core_->outbox),
      api_(core_->api),
      catalog_(catalog),
      objects_(core_->api),
      queued_(core_->api, core_->quota.limits().queued) {
  wait_list_.reserve(64);
  touched_.reserve(8);
}

executor::~executor() { shutdown(); }

bool executor::violate(std::string why) {
  violation_ = std::move(why);
  return false;
}

bool executor::duplicate(p::object_id id) {
  if (!objects_.contains(id)) return false;
  violation_ = "object id " + std::to_string(id) + " is already in use";
  return true;
}

bool executor::record_failed(p::object_id id, object_kind kind, cl_int error) {
  // A client that ignores its failures could grow the table without end:
  // past twice the object quota a failure is no longer recorded (later uses
  // of the id then fail as for an unknown one).
  if (uint64_t limit = core_->quota.limits().objects; limit != 0 && objects_.size() >= 2 * limit) {
    FERRY_DEBUG("session", "session %s: creating %s %llu failed (%s); not recorded, the table is full",
                core_->label.c_str(), kind_name(kind), static_cast<unsigned long long>(id),
                cl_error_name(error).c_str());
    return true;
  }
  object_entry entry;
  entry.kind = kind;
  entry.error = error;
  objects_.insert(id, entry);
  FERRY_DEBUG("session", "session %s: creating %s %llu failed: %s", core_->label.c_str(), kind_name(kind),
              static_cast<unsigned long long>(id), cl_error_name(error).c_str());
  return true;
}

cl_int executor::admit_objects(size_t count, uint64_t device_bytes) {
  for (size_t i = 0; i < count; ++i) {
    if (cl_int refused = core_->quota.admit_object(objects_.size() + i); refused != CL_SUCCESS) return refused;
  }
  if (device_bytes == 0) return CL_SUCCESS;
  return core_->quota.admit_memory(objects_.memory(), device_bytes);
}

uint8_t* executor::read_staging(uint64_t size, cl_int& error) {
  error = core_->quota.admit_transfer(size);
  if (error != CL_SUCCESS) return nullptr;
  uint8_t* staging = acquire_staging(size, &core_->quota.in_flight());
  if (staging == nullptr) error = CL_OUT_OF_HOST_MEMORY;
  return staging;
}

bool executor::map_devices(const std::vector<uint32_t>& indices, std::vector<cl_device_id>& out) {
  out.clear();
  for (uint32_t index : indices) {
    const native::device_entry* device = catalog_.find(index);
    if (device == nullptr) return false;
    out.push_back(device->id);
  }
  return true;
}

void executor::touch(cl_command_queue queue) {
  if (std::find(touched_.begin(), touched_.end(), queue) == touched_.end()) touched_.push_back(queue);
}

void executor::flush_touched() {
  for (cl_command_queue queue : touched_) api_.clFlush(queue);
  touched_.clear();
  if (!retired_svm_.empty() || !queue_fences_.empty()) reclaim_svm();
}

// ---------------------------------------------------------------------------
// Enqueue plumbing

executor::step executor::prepare(const p::command_header& h, const object_entry*& queue) {
  if ((h.flags & p::keep_event) && duplicate(h.command)) return step::violation;
  if (h.wait_list.size() > p::max_wait_list) {
    violation_ = "wait list of " + std::to_string(h.wait_list.size()) + " events exceeds the limit of " +
                 std::to_string(p::max_wait_list);
    return step::violation;
  }
  cl_int error;
  queue = objects_.find(h.queue, object_kind::queue, CL_INVALID_COMMAND_QUEUE, error);
  if (queue == nullptr) {
    fail(h, error);
    return step::failed;
  }
  // The session's quotas: commands not yet complete, and the event it keeps.
  error = core_->quota.admit_command(queued_.count());
  if (error == CL_SUCCESS && (h.flags & p::keep_event)) error = admit_objects();
  if (error != CL_SUCCESS) {
    fail(h, error);
    return step::failed;
  }
  checkpoint_ = !queue->out_of_order && queued_.wants_event(h.queue);
  return map_wait_list(h);
}

executor::step executor::prepare_wait_list(const p::command_header& h) {
  if ((h.flags & p::keep_event) && duplicate(h.command)) return step::violation;
  if (h.wait_list.size() > p::max_wait_list) {
    violation_ = "wait list of " + std::to_string(h.wait_list.size()) + " events exceeds the limit of " +
                 std::to_string(p::max_wait_list);
    return step::violation;
  }
  return map_wait_list(h);
}

executor::step executor::map_wait_list(const p::command_header& h) {
  cl_int error;
  wait_list_.clear();
  pending_imports_.clear();
  for (p::object_id id : h.wait_list) {
    const object_entry* event = objects_.find(id, object_kind::event, CL_INVALID_EVENT_WAIT_LIST, error);
    if (event == nullptr) {
      // A recorded event whose command failed to enqueue.
      fail(h, error == CL_INVALID_EVENT_WAIT_LIST ? error : CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
      return step::failed;
    }
    // A command behind a failed event must not run, and some platforms
    // (PoCL 3.1) never finish such a command: report it failed at once.
    cl_int status = CL_COMPLETE;
    if (api_.clGetEventInfo(event->as_event(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                            nullptr) == CL_SUCCESS &&
        status < 0) {
      fail(h, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
      return step::failed;
    }
    wait_list_.push_back(event->as_event());
    if (event->user_event && core_->imports.waiting(id)) pending_imports_.push_back(id);
  }
  return step::go;
}

bool executor::fail(const p::command_header& h, cl_int error) {
  FERRY_DEBUG("session", "session %s: command %llu failed: %s", core_->label.c_str(),
              static_cast<unsigned long long>(h.command), cl_error_name(error).c_str());
  checkpoint_ = false;
  // Failures are always reported, asked for or not.
  core_->outbox.push_failure(h.command, error);
  // The client holds the event: record it so that waits on it fail and its
  // release balances.
  if ((h.flags & p::keep_event) && !objects_.contains(h.command)) {
    object_entry entry;
    entry.kind = object_kind::event;
    entry.error = error;
    objects_.insert(h.command, entry);
  }
  return true;
}

bool executor::finish(const p::command_header& h, const object_entry& queue, cl_int rc, cl_event event,
                      callback_kind kind, bool printf, uint8_t* staging, uint64_t size, uint64_t transfer) {
  if (rc != CL_SUCCESS) {
    release_staging(staging);
    delete std::exchange(read_content_size_, nullptr);
    return fail(h, rc);
  }
  touch(queue.as_queue());
  queued_.enqueued(h.queue, queue.as_queue(), queue.out_of_order, event);
  checkpoint_ = false;
  bool keep = (h.flags & p::keep_event) != 0;
  bool notify = (h.flags & p::notify) != 0;
  bool callback = notify || kind != callback_kind::completion;
  hold_for_imports(event);
  if (event && !keep && !callback) api_.clReleaseEvent(event);  // requested only for hold_for_imports
  if (keep) {
    auto entry = object_entry::native(object_kind::event, event, queue.context);
    entry.callbacks = queue.callbacks;
    objects_.insert(h.command, entry);
    if (callback) api_.clRetainEvent(event);
  }
  if (!callback) return true;
  callback_slot* slot = core_->callbacks.acquire();
  slot->core = core_;
  slot->command = h.command;
  slot->event = event;
  slot->staging = staging;
  slot->size = size;
  if (kind == callback_kind::read) {
    slot->content_size = std::exchange(read_content_size_, nullptr);
    slot->offset = read_offset_;
  }
  slot->transfer = transfer ? transfer : h.command;
  slot->kind = kind;
  slot->notify = notify;
  slot->profiling = queue.profiling;
  // Once a kernel that may print has run, every reported completion sends
  // the text waiting in the pipe first: the client may learn of the kernel's
  // end through a later command (clFinish's marker), and its output must
  // already be on the client's stdout by then.
  slot->printf = printf || may_print_;
  slot->follow(queue.callbacks);
  callback_pool::arm(api_, slot);
  return true;
}

void executor::insert_kernel(p::object_id id, cl_kernel kernel, const object_entry& program, cl_uint args) {
  auto entry = object_entry::native(object_kind::kernel, kernel, program.context);
  entry.printf_capable = program.printf_capable;
  entry.arg_info_hidden = program.arg_info_hidden;
  entry.pointer_args = pointer_arguments(kernel, args);
  objects_.insert(id, entry);
}

std::vector<uint8_t> executor::pointer_arguments(cl_kernel kernel, cl_uint count) {
  std::vector<uint8_t> pointers(count);
  for (cl_uint i = 0; i < count; ++i) {
    cl_kernel_arg_address_qualifier qualifier = 0;
    if (api_.clGetKernelArgInfo(kernel, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof qualifier, &qualifier,
                                nullptr) != CL_SUCCESS)
      return {};  // the platform keeps no argument info for this program
    pointers[i] = qualifier == CL_KERNEL_ARG_ADDRESS_GLOBAL || qualifier == CL_KERNEL_ARG_ADDRESS_CONSTANT
                      ? argument_class::memory
                      : argument_class::other;
    if (pointers[i] == argument_class::other) {
      // A sampler is a handle too (images are __global already).
      char type[16] = {};
      if (api_.clGetKernelArgInfo(kernel, i, CL_KERNEL_ARG_TYPE_NAME, sizeof type, type, nullptr) == CL_SUCCESS)
        pointers[i] = std::strcmp(type, "sampler_t") == 0 ? argument_class::sampler : argument_class::other;
    }
  }
  return pointers;
}

cl_int executor::set_arg(const object_entry& kernel_entry, const p::kernel_arg& arg, bool& violated) {
  violated = false;
  cl_kernel kernel = kernel_entry.as_kernel();
  switch (arg.kind) {
    case p::kernel_arg_kind::value: {
      if (arg.size != arg.value.size()) return CL_INVALID_ARG_SIZE;
      // Bytes for a buffer or sampler argument would be taken as a native
      // handle and dereferenced by the driver: only zeros (NULL) may pass.
      if (arg.index < kernel_entry.pointer_args.size() && kernel_entry.pointer_args[arg.index] &&
          std::any_of(arg.value.begin(), arg.value.end(), [](uint8_t b) { return b != 0; }))
        return kernel_entry.pointer_args[arg.index] == argument_class::sampler ? CL_INVALID_SAMPLER
                                                                               : CL_INVALID_MEM_OBJECT;
      // The application's arg_value was not NULL (that travels as a local or
      // null_mem argument), so no bytes still come with a pointer: the native
      // answer is then the one for a size 0 (CL_INVALID_ARG_SIZE), not for a
      // NULL value (CL_INVALID_ARG_VALUE).
      static const uint8_t no_bytes = 0;
      return api_.clSetKernelArg(kernel, arg.index, arg.value.size(), arg.value.empty() ? &no_bytes : arg.value.data());
    }
    case p::kernel_arg_kind::mem: {
      cl_int error;
      const object_entry* mem = objects_.find(arg.object, object_kind::mem, CL_INVALID_MEM_OBJECT, error);
      if (mem == nullptr) return CL_INVALID_MEM_OBJECT;
      // Drivers take any handle for a sampler_t; only a sampler may pass.
      if (arg_is(kernel_entry, arg.index, argument_class::sampler)) return CL_INVALID_SAMPLER;
      cl_mem handle = mem->as_mem();
      return api_.clSetKernelArg(kernel, arg.index, sizeof(cl_mem), &handle);
    }
    case p::kernel_arg_kind::local:
      return api_.clSetKernelArg(kernel, arg.index, static_cast<size_t>(arg.size), nullptr);
    case p::kernel_arg_kind::null_mem:
      return api_.clSetKernelArg(kernel, arg.index, sizeof(cl_mem), nullptr);
    case p::kernel_arg_kind::sampler: {
      cl_int error;
      const object_entry* sampler = objects_.find(arg.object, object_kind::sampler, CL_INVALID_SAMPLER, error);
      if (sampler == nullptr) return CL_INVALID_SAMPLER;
      // Likewise a sampler is no memory object (nor data).
      if (!arg_is(kernel_entry, arg.index, argument_class::sampler)) {
        return arg_is(kernel_entry, arg.index, argument_class::memory) ? CL_INVALID_MEM_OBJECT : CL_INVALID_ARG_VALUE;
      }
      cl_sampler handle = sampler->as_sampler();
      return api_.clSetKernelArg(kernel, arg.index, sizeof(cl_sampler), &handle);
    }
    case p::kernel_arg_kind::svm: {
      // Only a __global or __constant pointer takes an SVM pointer; PoCL
      // checks too, but no driver may see one for another argument.
      if (arg.index < kernel_entry.pointer_args.size() && !arg_is(kernel_entry, arg.index, argument_class::memory))
        return CL_INVALID_ARG_VALUE;
      if (arg.object == 0) {
        if (arg.size != 0) return CL_INVALID_ARG_VALUE;
        return api_.clSetKernelArgSVMPointer(kernel, arg.index, nullptr);
      }
      // The pointer lies inside the allocation: offset < size.
      cl_int error;
      const svm_block* block = svm_range(arg.object, arg.size, 1, error);
      if (block == nullptr) return CL_INVALID_ARG_VALUE;
      return api_.clSetKernelArgSVMPointer(kernel, arg.index, static_cast<uint8_t*>(block->pointer) + arg.size);
    }
  }
  violated = true;
  violation_ = "unknown kernel argument kind " + std::to_string(static_cast<int>(arg.kind));
  return CL_INVALID_VALUE;
}

// ---------------------------------------------------------------------------
// Session-level messages

bool executor::on(const p::ping& m) {
  core_->outbox.push_message(p::pong{m.request});
  return true;
}

bool executor::on(const p::get_server_info& m) {
  p::server_info reply = catalog_.server_info();
  reply.request = m.request;
  reply.peer_address = core_->peer_address;
  core_->outbox.push_message(reply);
  return true;
}

bool executor::on(const p::get_object_counts& m) {
  FERRY_DEBUG("session", "session %s: %zu objects (daemon total %lld)", core_->label.c_str(), objects_.size(),
              static_cast<long long>(object_table::daemon_total()));
  core_->outbox.push_message(
      p::object_counts{m.request, objects_.size(), core_->control_in.load(std::memory_order_acquire)});
  return true;
}

void executor::count_frame() {
  core_->control_in.fetch_add(1, std::memory_order_acq_rel);
}

void executor::ack_if_due() {
  // Acks ride on completions; a client that sends much and waits for
  // nothing still hears every so often, so that it can drop what it keeps.
  constexpr uint64_t unacknowledged_frames = 128;
  const uint64_t now = core_->control_in.load(std::memory_order_acquire);
  if (now - ack_requested_at_ < unacknowledged_frames) return;
  ack_requested_at_ = now;
  core_->outbox.request_ack();
}

bool executor::on(const p::ack& m) {
  if (!core_->acked) return true;  // no replay kept (tests, the fuzz target)
  if (core_->acked(m)) return true;
  return violate("ack of " + std::to_string(m.control) + " control and " + std::to_string(m.bulk) +
                 " bulk frames, more than were sent");
}

bool executor::on(const p::goodbye&) {
  stop_requested_ = true;
  return true;
}

// ---------------------------------------------------------------------------
// Objects

bool executor::on(const p::create_context& m) {
  if (duplicate(m.id)) return false;
  if (cl_int refused = admit_objects(); refused != CL_SUCCESS) return record_failed(m.id, object_kind::context, refused);
  if (m.devices.empty()) return record_failed(m.id, object_kind::context, CL_INVALID_VALUE);
  std::vector<cl_device_id> devices;
  if (!map_devices(m.devices, devices)) return record_failed(m.id, object_kind::context, CL_INVALID_DEVICE);
  const native::device_entry* first = catalog_.find(m.devices.front());
  native::callback_behaviour callbacks;
  for (uint32_t index : m.devices) {
    const native::device_entry* device = catalog_.find(index);
    if (device->platform != first->platform) {
      // One native context cannot span native platforms (yet).
      FERRY_WARN("session", "session %s: context %llu spans native platforms '%s' and '%s'", core_->label.c_str(),
                 static_cast<unsigned long long>(m.id), first->platform_name.c_str(), device->platform_name.c_str());
      return record_failed(m.id, object_kind::context, CL_INVALID_CONTEXT);
    }
    callbacks.runs_on_failure = callbacks.runs_on_failure && device->callbacks.runs_on_failure;
    callbacks.reports_failure = callbacks.reports_failure && device->callbacks.reports_failure;
    callbacks.polled = callbacks.polled || device->callbacks.polled;
  }
  cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(first->platform),
                                        0};
  cl_int error = CL_SUCCESS;
  cl_context context = api_.clCreateContext(properties, static_cast<cl_uint>(devices.size()), devices.data(),
                                            nullptr, nullptr, &error);
  if (context == nullptr) return record_failed(m.id, object_kind::context, error);
  // Held until the client releases it, or until the teardown where events
  // are parked in it (native/event_parking.hpp).
  api_.clRetainContext(context);
  contexts_.push_back({context, first->blocking_context_release});
  object_entry entry;
  entry.kind = object_kind::context;
  entry.handle = context;
  entry.platform = first->platform;
  entry.device = first->id;
  entry.callbacks = callbacks;
  objects_.insert(m.id, entry);
  return true;
}

bool executor::on(const p::create_queue& m) {
  if (duplicate(m.id)) return false;
  cl_int error;
  const object_entry* context = objects_.find(m.context, object_kind::context, CL_INVALID_CONTEXT, error);
  if (context == nullptr) return record_failed(m.id, object_kind::queue, error);
  if (cl_int refused = admit_objects(); refused != CL_SUCCESS) return record_failed(m.id, object_kind::queue, refused);
  const native::device_entry* device = catalog_.find(m.device);
  if (device == nullptr) return record_failed(m.id, object_kind::queue, CL_INVALID_DEVICE);
  cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, static_cast<cl_queue_properties>(m.properties), 0};
  cl_command_queue queue =
      api_.clCreateCommandQueueWithProperties(context->as_context(), device->id, properties, &error);
  if (queue == nullptr) return record_failed(m.id, object_kind::queue, error);
  auto entry = object_entry::native(object_kind::queue, queue, context->as_context());
  entry.profiling = (m.properties & CL_QUEUE_PROFILING_ENABLE) != 0;
  entry.out_of_order = (m.properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
  entry.callbacks = context->callbacks;
  objects_.insert(m.id, entry);
  return true;
}

bool executor::on(const p::create_buffer& m) {
  if (duplicate(m.id)) return false;
  cl_int error;
  const object_entry* context = objects_.find(m.context, object_kind::context, CL_INVALID_CONTEXT, error);
  if (context == nullptr) {
    if (m.initial_transfer) core_->transfers.abandon(m.initial_transfer);
    return record_failed(m.id, object_kind::mem, error);
  }
  // A buffer over an SVM allocation takes no device memory of its own.
  if (cl_int refused = admit_objects(1, m.svm ? 0 : m.size); refused != CL_SUCCESS) {
    if (m.initial_transfer) core_->transfers.abandon(m.initial_transfer);
    return record_failed(m.id, object_kind::mem, refused);
  }
  // The client resolved the host-pointer flags; host pointers of another
  // process mean nothing here. The host-access flags restrict the
  // application, which the client enforces; the daemon itself must read and
  // write any buffer to migrate it between servers.
  cl_mem_flags flags = m.flags & ~daemon_ignored_flags;
  cl_context native_context = context->as_context();
  cl_mem mem = nullptr;
  if (m.svm) {
    // Storage from an SVM allocation: its contents are already here.
    if (m.initial_transfer) {
      core_->transfers.abandon(m.initial_transfer);
      return record_failed(m.id, object_kind::mem, CL_INVALID_HOST_PTR);
    }
    mem = create_buffer_over_svm(native_context, flags, m.size, m.svm, m.svm_offset, error);
  } else if (m.initial_transfer) {
    uint8_t* data = nullptr;
    cl_int refused = CL_SUCCESS;
    if (!await_initial_contents(m.initial_transfer, m.size, m.id, data, refused)) return false;
    if (refused != CL_SUCCESS) return record_failed(m.id, object_kind::mem, refused);
    mem = api_.clCreateBuffer(native_context, flags | CL_MEM_COPY_HOST_PTR, static_cast<size_t>(m.size), data,
                              &error);
    core_->transfers.erase(m.initial_transfer);
  } else {
    mem = api_.clCreateBuffer(native_context, flags, static_cast<size_t>(m.size), nullptr, &error);
  }
  if (mem == nullptr) return record_failed(m.id, object_kind::mem, error);
  auto entry = object_entry::native(object_kind::mem, mem, native_context);
  entry.size = m.size;
  entry.device_bytes = m.svm ? 0 : m.size;
  objects_.insert(m.id, entry);
  return true;
}

bool executor::await_initial_contents(uint64_t transfer, uint64_t expected, p::object_id id, uint8_t*& data,
                                      cl_int& refused) {
  uint64_t total = 0;
  // Waits on the bulk stream; session shutdown aborts the wait. Work already
  // enqueued starts first.
  flush_touched();
  if (!core_->transfers.wait_complete(transfer, data, total, refused)) {
    stop_requested_ = true;
    return violate("session closing while memory object " + std::to_string(id) + " waited for its contents");
  }
  if (refused != CL_SUCCESS) return true;  // the contents were dropped; nothing to erase
  if (total != expected) {
    core_->transfers.erase(transfer);
    return violate("initial contents of " + std::to_string(total) + " bytes for memory object " + std::to_string(id) +
                   " of " + std::to_string(expected) + " bytes");
  }
  return true;
}

bool executor::on(const p::create_sub_buffer& m) {
  if (duplicate(m.id)) return false;
  cl_int error;
  const object_entry* parent = objects_.find(m.parent, object_kind::mem, CL_INVALID_MEM_OBJECT, error);
  if (parent == nullptr) return record_failed(m.id, object_kind::mem, error);
  // CL_INVALID_VALUE if the region specified by buffer_create_info is out of
  // bounds of buffer. Checked here without overflow: PoCL 3.1 sums origin and
  // size, so a region whose end wraps around passed and later commands on the
  // sub-buffer wrote outside the parent (heap corruption in the daemon).
  // Images (which record no byte size) are left to the native call.
  const bool buffer = parent->element_size == 0;
  if (buffer && (m.origin > parent->size || m.size > parent->size - m.origin))
    return record_failed(m.id, object_kind::mem, CL_INVALID_VALUE);
  // A sub-buffer is part of its parent's memory: it counts as an object only.
  if (cl_int refused = admit_objects(); refused != CL_SUCCESS) return record_failed(m.id, object_kind::mem, refused);
  cl_buffer_region region{static_cast<size_t>(m.origin), static_cast<size_t>(m.size)};
  cl_mem mem = api_.clCreateSubBuffer(parent->as_mem(), m.flags & ~daemon_ignored_flags, CL_BUFFER_CREATE_TYPE_REGION,
                                      &region, &error);
  if (mem == nullptr) return record_failed(m.id, object_kind::mem, error);
  auto entry = object_entry::native(object_kind::mem, mem, parent->context);
  entry.size = m.size;
  objects_.insert(m.id, entry);
  return true;
}

bool executor::on(const p::create_user_event& m) {
  if (duplicate(m.id)) return false;
  cl_int error;
  const object_entry* context = objects_.find(m.context, object_kind::context, CL_INVALID_CONTEXT, error);
  if (context == nullptr) return record_failed(m.id, object_kind::event, error);
  if (cl_int refused = admit_objects(); refused != CL_SUCCESS) return record_failed(m.id, object_kind::event, refused);
  cl_event event = api_.clCreateUserEvent(context->as_context(), &error);
  if (event == nullptr) return record_failed(m.id, object_kind::event, error);
  auto entry = object_entry::native(object_kind::event, event, context->as_context());
  entry.callbacks = context->callbacks;
  entry.user_event = true;
  objects_.insert(m.id, entry);
  return true;
}

bool executor::on(const p::set_user_event_status& m) {
  object_entry* entry = objects_.find_mutable(m.id);
  if (entry == nullptr || entry->kind != object_kind::event || !entry->user_event || entry->handle == nullptr) {
    FERRY_WARN("session", "session %s: set_user_event_status names %llu, which is no live user event; ignored",
               core_->label.c_str(), static_cast<unsigned long long>(m.id));
    return true;
  }
  cl_int rc = api_.clSetUserEventStatus(entry->as_event(), m.status);
  if (rc != CL_SUCCESS) {
    FERRY_WARN("session", "session %s: setting user event %llu to %d failed: %s", core_->label.c_str(),
               static_cast<unsigned long long>(m.id), m.status, cl_error_name(rc).c_str());
    return true;
  }
  entry->status_set = true;
  if (m.status < 0 && !entry->callbacks.runs_on_failure) {
    // The platform will not call back for the commands this failure ends.
    flush_touched();
    size_t found = core_->callbacks.sweep_failures(api_);
    FERRY_DEBUG("session", "session %s: user event %llu failed; %zu dependent commands reported",
                core_->label.c_str(), static_cast<unsigned long long>(m.id), found);
  }
  return true;
}

void executor::let_go_of_context(cl_context context) {
  auto it = std::find_if(contexts_.begin(), contexts_.end(),
                         [context](const made_context& made) { return made.context == context; });
  if (it == contexts_.end() || api_.holds_parked_events(context)) return;
  made_context made = *it;
  contexts_.erase(it);
  release_made_context(made);
}

void executor::release_made_context(const made_context& made) {
  if (made.blocking_release) context_releaser::release(api_, made.context);
  else api_.clReleaseContext(made.context);
}

bool executor::on(const p::release_object& m) {
  object_entry* entry = objects_.find_mutable(m.id);
  if (entry && entry->kind == object_kind::svm && entry->handle) {
    object_entry taken;
    objects_.take(m.id, taken);
    retire_svm(taken);
    return true;
  }
  if (entry && entry->kind == object_kind::context && entry->handle) {
    release_own_queue(entry->as_context());
    let_go_of_context(entry->as_context());
  }
  if (entry && entry->kind == object_kind::event && entry->user_event) core_->imports.forget(m.id);
  if (entry && entry->kind == object_kind::mem) content_sizes_.erase(m.id);
  if (entry && entry->kind == object_kind::queue && entry->handle) {
    queued_.queue_released(m.id, entry->as_queue());
    fence_released_queue(*entry);
    // A queue about to go must not stay in the flush list (its release flushes it).
    auto it = std::find(touched_.begin(), touched_.end(), entry->as_queue());
    if (it != touched_.end()) touched_.erase(it);
  }
  if (!objects_.erase(m.id)) {
    FERRY_WARN("session", "session %s: release_object names unknown id %llu; ignored", core_->label.c_str(),
               static_cast<unsigned long long>(m.id));
  }
  return true;
}

// ---------------------------------------------------------------------------
// Programs and kernels

cl_int executor::kernel_names(cl_program program, std::vector<std::string>& out) {
  out.clear();
  p::bytes raw;
  cl_int rc = query_bytes(
      [&](size_t size, void* value, size_t* ret) {
        return api_.clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, size, value, ret);
      },
      raw);
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

bool executor::on(const p::create_program_with_source& m) {
  if (duplicate(m.id)) return false;
  cl_int error;
  const object_entry* context = objects_.find(m.context, object_kind::context, CL_INVALID_CONTEXT, error);
  if (context == nullptr) return record_failed(m.id, object_kind::program, error);
  if (cl_int refused = admit_objects(); refused != CL_SUCCESS) return record_failed(m.id, object_kind::program, refused);
  const char* text = m.source.c_str();
  size_t length = m.source.size();
  cl_program program = api_.clCreateProgramWithSource(context->as_context(), 1, &text, &length, &error);
  if (program == nullptr) return record_failed(m.id, object_kind::program, error);
  auto entry = object_entry::native(object_kind::program, program, context->as_context());
  entry.printf_capable = m.source.find("printf") != std::string::npos;
  objects_.insert(m.id, entry);
  return true;
}

bool executor::on(const p::create_program_with_binary& m) {
  if (duplicate(m.id)) return false;
  p::status_reply reply{m.request, CL_SUCCESS, {}};
  cl_int error;
  std::vector<cl_device_id> devices;
  const object_entry* context = objects_.find(m.context, object_kind::context, CL_INVALID_CONTEXT, error);
  if (context == nullptr) {
    reply.status = error;
  } else if ((reply.status = admit_objects()) != CL_SUCCESS) {
    // Over the session's object quota.
  } else if (m.devices.empty() || m.devices.size() != m.binaries.size()) {
    reply.status = CL_INVALID_VALUE;
  } else if (!map_devices(m.devices, devices)) {
    reply.status = CL_INVALID_DEVICE;
  } else {
    std::vector<size_t> lengths;
    std::vector<const unsigned char*> binaries;
    for (const p::bytes& binary : m.binaries) {
      lengths.push_back(binary.size());
      binaries.push_back(binary.empty() ? nullptr : binary.data());
    }
    std::vector<cl_int> status(devices.size(), CL_SUCCESS);
    cl_program program = api_.clCreateProgramWithBinary(context->as_context(), static_cast<cl_uint>(devices.size()),
                                                        devices.data(), lengths.data(), binaries.data(),
                                                        status.data(), &error);
    reply.status = error;
    reply.details.assign(status.begin(), status.end());
    if (program != nullptr) {
      auto entry = object_entry::native(object_kind::program, program, context->as_context());
      entry.printf_capable = true;  // nothing tells; assume it may print
      objects_.insert(m.id, entry);
    }
  }
  core_->outbox.push_message(reply);
  return true;
}

bool executor::on(const p::create_program_with_il& m) {
  if (duplicate(m.id)) return false;
  p::status_reply reply{m.request, CL_SUCCESS, {}};
  cl_int error;
  const object_entry* context = objects_.find(m.context, object_kind::context, CL_INVALID_CONTEXT, error);
  if (context == nullptr) {
    reply.status = error;
  } else if ((reply.status = admit_objects()) != CL_SUCCESS) {
    // Over the session's object quota.
  } else if (m.il.empty()) {
    // CL_INVALID_VALUE if il is NULL or if length is zero.
    reply.status = CL_INVALID_VALUE;
  } else {
    error = CL_SUCCESS;
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
  core_->outbox.push_message(reply);
  return true;
}

bool executor::on(const p::set_program_specialization_constant& m) {
  p::status_reply reply{m.request, CL_SUCCESS, {}};
  cl_int error;
  const object_entry* program = objects_.find(m.program, object_kind::program, CL_INVALID_PROGRAM, error);
  if (program == nullptr) {
    reply.status = error;
  } else if (!program->from_il) {
    // CL_INVALID_PROGRAM if program is not a valid program object created
    // from an intermediate language (e.g. SPIR-V).
    reply.status = CL_INVALID_PROGRAM;
  } else if (!m.value.empty() && m.value.size() != m.size) {
    // The bytes given are not spec_size bytes: the native call must never
    // read past them.
    reply.status = CL_INVALID_VALUE;
  } else {
    // CL_INVALID_SPEC_ID and CL_INVALID_VALUE (size mismatch, NULL value)
    // are the native answer.
    reply.status = api_.clSetProgramSpecializationConstant(program->as_program(), m.spec_id,
                                                           static_cast<size_t>(m.size),
                                                           m.value.empty() ? nullptr : m.value.data());
  }
  core_->outbox.push_message(reply);
  return true;
}

bool executor::on(const p::build_program& m) {
  p::build_reply reply{m.request, CL_SUCCESS, 0, {}};
  cl_int error;
  std::vector<cl_device_id> devices;
  std::unique_ptr<build_tree> tree;
  const object_entry* program = objects_.find(m.program, object_kind::program, CL_INVALID_PROGRAM, error);
  if (program == nullptr) {
    reply.status = error;
  } else if (!map_devices(m.devices, devices)) {
    reply.status = CL_INVALID_DEVICE;
  } else if ((reply.status = make_build_tree(m.files, m.options, CL_INVALID_BUILD_OPTIONS, core_->label, m.program,
                                             tree)) != CL_SUCCESS) {
    // CL_INVALID_BUILD_OPTIONS: the client's files name paths the server refuses.
  } else {
    // The compiler reads the client's headers from the tree, through options
    // that name it.
    const std::string& options = tree ? tree->options() : m.options;
    bool bare = false;
    reply.status = compile_with_arg_info(
        options,
        [&](const char* text) {
          return api_.clBuildProgram(program->as_program(), static_cast<cl_uint>(devices.size()),
                                     devices.empty() ? nullptr : devices.data(), text, nullptr, nullptr);
        },
        bare);
    if (bare)
      FERRY_INFO("session", "session %s: program %llu builds only without%s", core_->label.c_str(),
                 static_cast<unsigned long long>(m.program), std::string(arg_info_option).c_str());
    if (reply.status == CL_SUCCESS) kernel_names(program->as_program(), reply.kernel_names);
    object_entry* built = objects_.find_mutable(m.program);
    built->arg_info_hidden = !asks_arg_info(m.options);
    built->client_files = tree ? std::make_shared<const client_paths>(tree->paths()) : nullptr;
  }
  // The tree goes before the answer: once the client learns the outcome, no
  // copy of its headers is left on the server.
  tree.reset();
  FERRY_DEBUG("session", "session %s: build of program %llu: %s", core_->label.c_str(),
              static_cast<unsigned long long>(m.program), cl_error_name(reply.status).c_str());
  core_->outbox.push_message(reply);
  return true;
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
  cl_int error;
  std::vector<cl_device_id> devices;
  std::unique_ptr<build_tree> tree;
  std::vector<cl_program> headers;
  std::vector<const char*> names;
  bool printf_capable = false;
  const object_entry* program = objects_.find(m.program, object_kind::program, CL_INVALID_PROGRAM, error);
  if (program == nullptr) {
    reply.status = error;
  } else if (!map_devices(m.devices, devices)) {
    reply.status = CL_INVALID_DEVICE;
  } else if (m.headers.size() != m.header_names.size()) {
    reply.status = CL_INVALID_VALUE;
  } else if ((reply.status = make_build_tree(m.files, m.options, CL_INVALID_COMPILER_OPTIONS, core_->label,
                                             m.program, tree)) != CL_SUCCESS) {
    // CL_INVALID_COMPILER_OPTIONS: the client's files name paths the server refuses.
  } else {
    for (size_t i = 0; i < m.headers.size() && reply.status == CL_SUCCESS; ++i) {
      const object_entry* header = objects_.find(m.headers[i], object_kind::program, CL_INVALID_PROGRAM, error);
      if (header == nullptr) {
        reply.status = error;
        break;
      }
      headers.push_back(header->as_program());
      names.push_back(m.header_names[i].c_str());
      printf_capable = printf_capable || header->printf_capable;
    }
    if (reply.status == CL_SUCCESS) {
      const std::string& options = tree ? tree->options() : m.options;
      bool bare = false;
      reply.status = compile_with_arg_info(
          options,
          [&](const char* text) {
            return api_.clCompileProgram(program->as_program(), static_cast<cl_uint>(devices.size()),
                                         devices.empty() ? nullptr : devices.data(), text,
                                         static_cast<cl_uint>(headers.size()),
                                         headers.empty() ? nullptr : headers.data(),
                                         names.empty() ? nullptr : names.data(), nullptr, nullptr);
          },
          bare);
      if (bare)
        FERRY_INFO("session", "session %s: program %llu compiles only without%s", core_->label.c_str(),
                   static_cast<unsigned long long>(m.program), std::string(arg_info_option).c_str());
      object_entry* compiled = objects_.find_mutable(m.program);
      if (printf_capable) compiled->printf_capable = true;
      compiled->arg_info_hidden = !asks_arg_info(m.options);
      compiled->client_files = tree ? std::make_shared<const client_paths>(tree->paths()) : nullptr;
    }
  }
  // The tree goes before the answer, as for a build.
  tree.reset();
  core_->outbox.push_message(reply);
  return true;
}

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
  p::build_reply reply{m.request, CL_SUCCESS, 0, {}};
  cl_int error;
  std::vector<cl_device_id> devices;
  std::vector<cl_program> inputs;
  bool printf_capable = false;
  bool arg_info_hidden = false;
  const object_entry* context = objects_.find(m.context, object_kind::context, CL_INVALID_CONTEXT, error);
  if (context == nullptr) {
    reply.status = error;
  } else if ((reply.status = admit_objects()) != CL_SUCCESS) {
    // Over the session's object quota: no program is made (created stays 0).
  } else if (!map_devices(m.devices, devices)) {
    reply.status = CL_INVALID_DEVICE;
  } else {
    for (p::object_id id : m.inputs) {
      const object_entry* input = objects_.find(id, object_kind::program, CL_INVALID_PROGRAM, error);
      if (input == nullptr) {
        reply.status = error;
        break;
      }
      // CL_INVALID_OPERATION if an input holds no compiled binary or library
      // for the devices (PoCL 3.1 aborts the whole daemon linking one).
      if (!has_binary_for(input->as_program(), devices)) {
        reply.status = CL_INVALID_OPERATION;
        break;
      }
      inputs.push_back(input->as_program());
      printf_capable = printf_capable || input->printf_capable;
      arg_info_hidden = arg_info_hidden || input->arg_info_hidden;
    }
    if (reply.status == CL_SUCCESS) {
      error = CL_SUCCESS;
      cl_program program = api_.clLinkProgram(context->as_context(), static_cast<cl_uint>(devices.size()),
                                              devices.empty() ? nullptr : devices.data(), m.options.c_str(),
                                              static_cast<cl_uint>(inputs.size()),
                                              inputs.empty() ? nullptr : inputs.data(), nullptr, nullptr, &error);
      reply.status = error;
      if (program != nullptr) {
        // A failed link may still make a program that holds the log.
        auto entry = object_entry::native(object_kind::program, program, context->as_context());
        entry.printf_capable = printf_capable;
        entry.arg_info_hidden = arg_info_hidden;
        objects_.insert(m.id, entry);
        reply.created = 1;
        if (error == CL_SUCCESS) kernel_names(program, reply.kernel_names);
      }
    }
  }
  core_->outbox.push_message(reply);
  return true;
}

bool executor::on(const p::create_kernel& m) {
  if (duplicate(m.id)) return false;
  p::kernel_reply reply{m.request, CL_SUCCESS, {}};
  cl_int error;
  const object_entry* program = objects_.find(m.program, object_kind::program, CL_INVALID_PROGRAM, error);
  if (program == nullptr) {
    reply.status = error;
  } else if ((reply.status = admit_objects()) != CL_SUCCESS) {
    // Over the session's object quota.
  } else {
    cl_kernel kernel = api_.clCreateKernel(program->as_program(), m.name.c_str(), &error);
    reply.status = error;
    if (kernel != nullptr) {
      cl_uint args = 0;
      api_.clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr);
      insert_kernel(m.id, kernel, *program, args);
      reply.kernels.push_back({m.id, m.name, args});
    }
  }
  core_->outbox.push_message(reply);
  return true;
}

bool executor::on(const p::create_kernels_in_program& m) {
  for (size_t i = 0; i < m.ids.size(); ++i) {
    if (duplicate(m.ids[i])) return false;
    if (std::find(m.ids.begin(), m.ids.begin() + i, m.ids[i]) != m.ids.begin() + i)
      return violate("create_kernels_in_program names id " + std::to_string(m.ids[i]) + " twice");
  }
  p::kernel_reply reply{m.request, CL_SUCCESS, {}};
  cl_int error;
  std::vector<std::string> names;
  const object_entry* program = objects_.find(m.program, object_kind::program, CL_INVALID_PROGRAM, error);
  if (program == nullptr) {
    reply.status = error;
  } else if ((reply.status = kernel_names(program->as_program(), names)) != CL_SUCCESS) {
  } else if (!m.ids.empty() && m.ids.size() < names.size()) {
    // CL_INVALID_VALUE if kernels is not NULL and num_kernels is less than the number of kernels in program
    reply.status = CL_INVALID_VALUE;
  } else if ((reply.status = admit_objects(m.ids.empty() ? 0 : names.size())) != CL_SUCCESS) {
    // Over the session's object quota.
  } else {
    std::vector<cl_kernel> made;
    for (const std::string& name : names) {
      cl_kernel kernel = api_.clCreateKernel(program->as_program(), name.c_str(), &error);
      if (kernel == nullptr) {
        reply.status = error;
        break;
      }
      made.push_back(kernel);
    }
    for (size_t i = 0; i < made.size(); ++i) {
      cl_uint args = 0;
      api_.clGetKernelInfo(made[i], CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr);
      if (reply.status != CL_SUCCESS || m.ids.empty()) {
        // Counting only (no ids), or undoing a partial failure.
        if (reply.status == CL_SUCCESS) reply.kernels.push_back({0, names[i], args});
        api_.clReleaseKernel(made[i]);
        continue;
      }
      insert_kernel(m.ids[i], made[i], *program, args);
      reply.kernels.push_back({m.ids[i], names[i], args});
    }
  }
  core_->outbox.push_message(reply);
  return true;
}

bool executor::on(const p::check_kernel_arg& m) {
  p::status_reply reply{m.request, CL_SUCCESS, {}};
  cl_int error;
  const object_entry* kernel = objects_.find(m.kernel, object_kind::kernel, CL_INVALID_KERNEL, error);
  if (kernel == nullptr) {
    reply.status = error;
  } else {
    bool violated = false;
    reply.status = set_arg(*kernel, m.arg, violated);
    if (violated) return false;
  }
  core_->outbox.push_message(reply);
  return true;
}

cl_int executor::query_value(const p::query& m, p::bytes& out) {
  cl_int error;
  auto device_at = [&](cl_device_id& device) {
    const native::device_entry* entry = catalog_.find(m.device);
    if (entry == nullptr) return false;
    device = entry->id;
    return true;
  };
  switch (m.kind) {
    case p::query_kind::program_info:
    case p::query_kind::program_build_info: {
      const object_entry* program = objects_.find(m.object, object_kind::program, CL_INVALID_PROGRAM, error);
      if (program == nullptr) return error;
      cl_program handle = program->as_program();
      if (m.kind == p::query_kind::program_build_info) {
        cl_device_id device;
        if (!device_at(device)) return CL_INVALID_DEVICE;
        cl_int rc = query_bytes(
            [&](size_t size, void* value, size_t* ret) {
              return api_.clGetProgramBuildInfo(handle, device, m.param, size, value, ret);
            },
            out);
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
        cl_int rc = query_bytes(
            [&](size_t size, void* value, size_t* ret) {
              return api_.clGetProgramInfo(handle, CL_PROGRAM_BINARY_SIZES, size, value, ret);
            },
            raw_sizes);
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
      return query_bytes(
          [&](size_t size, void* value, size_t* ret) {
            return api_.clGetProgramInfo(handle, m.param, size, value, ret);
          },
          out);
    }
    case p::query_kind::kernel_info:
    case p::query_kind::kernel_work_group_info:
    case p::query_kind::kernel_sub_group_info:
    case p::query_kind::kernel_arg_info: {
      const object_entry* kernel = objects_.find(m.object, object_kind::kernel, CL_INVALID_KERNEL, error);
      if (kernel == nullptr) return error;
      cl_kernel handle = kernel->as_kernel();
      if (m.kind == p::query_kind::kernel_info) {
        if (m.param == CL_KERNEL_PROGRAM || m.param == CL_KERNEL_CONTEXT) return CL_INVALID_VALUE;
        return query_bytes(
            [&](size_t size, void* value, size_t* ret) {
              return api_.clGetKernelInfo(handle, m.param, size, value, ret);
            },
            out);
      }
      if (m.kind == p::query_kind::kernel_arg_info) {
        // The info exists because the daemon asked for it; the client did
        // not (spec: only with -cl-kernel-arg-info).
        if (kernel->arg_info_hidden) {
          return m.index < kernel->pointer_args.size() ? CL_KERNEL_ARG_INFO_NOT_AVAILABLE : CL_INVALID_ARG_INDEX;
        }
        return query_bytes(
            [&](size_t size, void* value, size_t* ret) {
              return api_.clGetKernelArgInfo(handle, m.index, m.param, size, value, ret);
            },
            out);
      }
      cl_device_id device;
      if (!device_at(device)) return CL_INVALID_DEVICE;
      if (m.kind == p::query_kind::kernel_sub_group_info) {
        return query_bytes(
            [&](size_t size, void* value, size_t* ret) {
              return api_.clGetKernelSubGroupInfo(handle, device, m.param, m.input.size(),
                                                  m.input.empty() ? nullptr : m.input.data(), size, value, ret);
            },
            out);
      }
      return query_bytes(
          [&](size_t size, void* value, size_t* ret) {
            return api_.clGetKernelWorkGroupInfo(handle, device, m.param, size, value, ret);
          },
          out);
    }
    case p::query_kind::supported_image_formats: {
      const object_entry* context = objects_.find(m.object, object_kind::context, CL_INVALID_CONTEXT, error);
      if (context == nullptr) return error;
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
  core_->outbox.push_message(reply);
  return true;
}

// ---------------------------------------------------------------------------
// Enqueues

bool executor::on(const p::enqueue_ndrange& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  cl_int error;
  const object_entry* kernel = objects_.find(m.kernel, object_kind::kernel, CL_INVALID_KERNEL, error);
  if (kernel == nullptr) return fail(m.header, error);
  cl_kernel handle = kernel->as_kernel();
  for (const p::kernel_arg& arg : m.args) {
    bool violated = false;
    cl_int rc = set_arg(*kernel, arg, violated);
    if (violated) return false;
    if (rc != CL_SUCCESS) return fail(m.header, rc);
  }
  size_t offset[3], global[3], local[3];
  to_size_t(m.offset, offset);
  to_size_t(m.global, global);
  to_size_t(m.local, local);
  bool printf = kernel->printf_capable && core_->printf != nullptr;
  if (printf) {
    core_->printf->attribute_to(outbox_, core_->key);
    may_print_ = true;
  }
  cl_event event = nullptr;
  bool want_event = (m.header.flags & needs_event_flags) != 0 || !pending_imports_.empty() || checkpoint_;
  cl_int rc = api_.clEnqueueNDRangeKernel(queue->as_queue(), handle, m.work_dim, offset, global,
                                          m.has_local ? local : nullptr, wait_count(), wait_events(),
                                          want_event ? &event : nullptr);
  return finish(m.header, *queue, rc, event, callback_kind::completion, printf);
}

executor::bulk_bytes executor::claim_bulk(const p::command_header& h, uint64_t total, uint8_t*& data,
                                          bool& result) {
  const uint64_t transfer = h.command;
  std::string why;
  // Bytes that are here already were weighed against the quota when they
  // came (transfer_table::begin_chunk); only new staging is weighed here.
  if (!core_->transfers.known(transfer)) {
    if (cl_int refused = core_->quota.admit_transfer(total); refused != CL_SUCCESS) {
      core_->transfers.abandon(transfer);
      result = fail(h, refused);
      return bulk_bytes::ended;
    }
  }
  cl_int status = CL_SUCCESS;
  switch (core_->transfers.claim(transfer, total, data, status, why)) {
    case transfer_table::claim_result::conflict:
      result = violate(why);
      return bulk_bytes::ended;
    case transfer_table::claim_result::refused:
      // The quota refused its bytes, which came first; the table drops them.
      result = fail(h, status);
      return bulk_bytes::ended;
    case transfer_table::claim_result::aborted:  // claim_at_most only
    case transfer_table::claim_result::no_memory:
      core_->transfers.abandon(transfer);
      result = fail(h, CL_OUT_OF_HOST_MEMORY);
      return bulk_bytes::ended;
    case transfer_table::claim_result::complete: return bulk_bytes::here;
    case transfer_table::claim_result::pending: break;
  }
  return bulk_bytes::coming;
}

namespace {

// A write of at least pieces_from bytes that are still arriving goes to the
// device a piece at a time as its bytes land, so the device copy overlaps
// the network instead of following it (a 1 GiB write spent ~0.15 s copying
// to an H100 after its last byte). Pieces are bulk chunks: each gate opens
// as a chunk ends.
constexpr uint64_t piece_bytes = p::max_bulk_chunk;
constexpr uint64_t pieces_from = 2 * piece_bytes;

}  // namespace

bool executor::write_in_pieces(const p::command_header& h, const object_entry& queue, cl_mem buffer,
                               uint64_t offset, uint64_t total, uint8_t* data) {
  const size_t count = static_cast<size_t>((total + piece_bytes - 1) / piece_bytes);
  std::vector<transfer_table::piece_gate> gates;
  std::vector<cl_event> writes;
  gates.reserve(count);
  writes.reserve(count);
  std::vector<cl_event> waits(wait_list_);
  waits.push_back(nullptr);  // the piece's gate
  cl_int rc = CL_SUCCESS;
  for (size_t i = 0; i < count && rc == CL_SUCCESS; ++i) {
    const uint64_t at = i * piece_bytes;
    cl_event gate = api_.clCreateUserEvent(queue.context, &rc);
    if (gate == nullptr) break;
    gates.push_back({at + std::min(piece_bytes, total - at), gate});
    waits.back() = gate;
    cl_event written = nullptr;
    rc = api_.clEnqueueWriteBuffer(queue.as_queue(), buffer, CL_FALSE, static_cast<size_t>(offset + at),
                                   static_cast<size_t>(gates.back().bytes - at), data + at,
                                   static_cast<cl_uint>(waits.size()), waits.data(), &written);
    if (rc == CL_SUCCESS) writes.push_back(written);
  }
  // The command's event: every piece written (in- or out-of-order queue).
  cl_event event = nullptr;
  if (rc == CL_SUCCESS)
    rc = api_.clEnqueueMarkerWithWaitList(queue.as_queue(), static_cast<cl_uint>(writes.size()), writes.data(),
                                          &event);
  for (cl_event written : writes) api_.clReleaseEvent(written);
  if (rc != CL_SUCCESS) {
    // Pieces enqueued so far fail behind their gates and never read staging.
    for (auto& gate : gates) {
      api_.clSetUserEventStatus(gate.event, rc);
      api_.clReleaseEvent(gate.event);
    }
    core_->transfers.abandon(h.command);
    return fail(h, rc);
  }
  core_->transfers.attach_piece_gates(h.command, std::move(gates));
  return finish(h, queue, rc, event, callback_kind::write);
}

bool executor::on(const p::enqueue_write_buffer& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) {
    if (s == step::failed && m.size) core_->transfers.abandon(m.header.command);
    return s == step::failed;
  }
  cl_int error;
  const object_entry* buffer = objects_.find(m.buffer, object_kind::mem, CL_INVALID_MEM_OBJECT, error);
  if (buffer == nullptr || m.size == 0 || m.offset > buffer->size || m.size > buffer->size - m.offset) {
    if (m.size) core_->transfers.abandon(m.header.command);
    return fail(m.header, buffer == nullptr ? error : CL_INVALID_VALUE);
  }
  cl_command_queue q = queue->as_queue();
  cl_mem b = buffer->as_mem();
  uint8_t* data = nullptr;
  bool result = true;
  bulk_bytes bytes = claim_bulk(m.header, m.size, data, result);
  if (bytes == bulk_bytes::ended) return result;
  // (A profiled write stays one native command: its counters are the client's.)
  if (bytes == bulk_bytes::coming && m.size >= pieces_from && !queue->profiling)
    return write_in_pieces(m.header, *queue, b, m.offset, m.size, data);
  return write_claimed(m.header, *queue, m.size, bytes, data, [&](const uint8_t* staged, cl_event* event) {
    return api_.clEnqueueWriteBuffer(q, b, CL_FALSE, static_cast<size_t>(m.offset), static_cast<size_t>(m.size),
                                     staged, wait_count(), wait_events(), event);
  });
}

bool executor::on(const p::enqueue_write_buffer_rect& m) {
  const object_entry* queue;
  uint64_t total = 0;
  bool sized = region_bytes(m.region, total);
  if (step s = prepare(m.header, queue); s != step::go) {
    if (s == step::failed && sized && total) core_->transfers.abandon(m.header.command);
    return s == step::failed;
  }
  cl_int error;
  const object_entry* buffer = objects_.find(m.buffer, object_kind::mem, CL_INVALID_MEM_OBJECT, error);
  // A valid rectangle never holds more bytes than its buffer.
  if (buffer == nullptr || !sized || total == 0 || total > buffer->size) {
    if (sized && total) core_->transfers.abandon(m.header.command);
    return fail(m.header, buffer == nullptr ? error : CL_INVALID_VALUE);
  }
  cl_command_queue q = queue->as_queue();
  cl_mem b = buffer->as_mem();
  size_t origin[3], region[3];
  to_size_t(m.buffer_origin, origin);
  to_size_t(m.region, region);
  size_t host_origin[3] = {0, 0, 0};
  return write_from_bulk(m.header, *queue, total, [&](const uint8_t* data, cl_event* event) {
    return api_.clEnqueueWriteBufferRect(q, b, CL_FALSE, origin, host_origin, region,
                                         static_cast<size_t>(m.buffer_row_pitch),
                                         static_cast<size_t>(m.buffer_slice_pitch), region[0], region[0] * region[1],
                                         data, wait_count(), wait_events(), event);
  });
}

bool executor::on(const p::enqueue_read_buffer& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  cl_int error;
  const object_entry* buffer = objects_.find(m.buffer, object_kind::mem, CL_INVALID_MEM_OBJECT, error);
  if (buffer == nullptr) return fail(m.header, error);
  if (m.size == 0 || m.offset > buffer->size || m.size > buffer->size - m.offset) return fail(m.header, CL_INVALID_VALUE);
  auto* staging = read_staging(m.size, error);
  if (staging == nullptr) return fail(m.header, error);
  // A content-sized buffer: its size is read first, behind the wait list, and
  // the data behind the size (the queue may run out of order); only the part
  // below the size is sent.
  std::unique_ptr<uint64_t> content;
  cl_event size_read = nullptr;
  if (auto pairing = content_sizes_.find(m.buffer); pairing != content_sizes_.end()) {
    if (const object_entry* sizes = objects_.find(pairing->second, object_kind::mem, CL_INVALID_MEM_OBJECT, error)) {
      content = std::make_unique<uint64_t>(0);
      cl_int rc = api_.clEnqueueReadBuffer(queue->as_queue(), sizes->as_mem(), CL_FALSE, 0, sizeof(uint64_t),
                                           content.get(), wait_count(), wait_events(), &size_read);
      if (rc != CL_SUCCESS) {
        release_staging(staging);
        return fail(m.header, rc);
      }
      hold_for_imports(size_read);
    }
  }
  cl_event event = nullptr;
  cl_int rc = api_.clEnqueueReadBuffer(queue->as_queue(), buffer->as_mem(), CL_FALSE, static_cast<size_t>(m.offset),
                                       static_cast<size_t>(m.size), staging, size_read ? 1 : wait_count(),
                                       size_read ? &size_read : wait_events(), &event);
  if (size_read) api_.clReleaseEvent(size_read);
  if (rc != CL_SUCCESS && content) {
    // The size read may still write into `content`.
    api_.clFinish(queue->as_queue());
    content.reset();
  }
  read_content_size_ = content.release();
  read_offset_ = m.offset;
  return finish(m.header, *queue, rc, event, callback_kind::read, false, staging, m.size);
}

bool executor::on(const p::set_content_size& m) {
  // The client checked both buffers; ids unknown here (released meanwhile)
  // only make later reads whole.
  if (m.size_buffer == 0) content_sizes_.erase(m.buffer);
  else content_sizes_[m.buffer] = m.size_buffer;
  return true;
}

bool executor::on(const p::enqueue_read_buffer_rect& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  cl_int error;
  const object_entry* buffer = objects_.find(m.buffer, object_kind::mem, CL_INVALID_MEM_OBJECT, error);
  if (buffer == nullptr) return fail(m.header, error);
  uint64_t total = 0;
  if (!region_bytes(m.region, total) || total == 0 || total > buffer->size) return fail(m.header, CL_INVALID_VALUE);
  auto* staging = read_staging(total, error);
  if (staging == nullptr) return fail(m.header, error);
  size_t origin[3], region[3];
  to_size_t(m.buffer_origin, origin);
  to_size_t(m.region, region);
  size_t host_origin[3] = {0, 0, 0};
  cl_event event = nullptr;
  cl_int rc = api_.clEnqueueReadBufferRect(queue->as_queue(), buffer->as_mem(), CL_FALSE, origin, host_origin, region,
                                           static_cast<size_t>(m.buffer_row_pitch),
                                           static_cast<size_t>(m.buffer_slice_pitch), region[0],
                                           region[0] * region[1], staging, wait_count(), wait_events(), &event);
  return finish(m.header, *queue, rc, event, callback_kind::read, false, staging, total);
}

bool executor::on(const p::enqueue_copy_buffer& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  cl_int error;
  const object_entry* source = objects_.find(m.source, object_kind::mem, CL_INVALID_MEM_OBJECT, error);
  if (source == nullptr) return fail(m.header, error);
  const object_entry* destination = objects_.find(m.destination, object_kind::mem, CL_INVALID_MEM_OBJECT, error);
  if (destination == nullptr) return fail(m.header, error);
  return enqueue_native(m.header, *queue, [&](cl_event* event) {
    return api_.clEnqueueCopyBuffer(queue->as_queue(), source->as_mem(), destination->as_mem(),
                                       static_cast<size_t>(m.source_offset), static_cast<size_t>(m.destination_offset),
                                       static_cast<size_t>(m.size), wait_count(), wait_events(),
                                       event);
  });
}

bool executor::on(const p::enqueue_copy_buffer_rect& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  cl_int error;
  const object_entry* source = objects_.find(m.source, object_kind::mem, CL_INVALID_MEM_OBJECT, error);
  if (source == nullptr) return fail(m.header, error);
  const object_entry* destination = objects_.find(m.destination, object_kind::mem, CL_INVALID_MEM_OBJECT, error);
  if (destination == nullptr) return fail(m.header, error);
  size_t source_origin[3], destination_origin[3], region[3];
  to_size_t(m.source_origin, source_origin);
  to_size_t(m.destination_origin, destination_origin);
  to_size_t(m.region, region);
  return enqueue_native(m.header, *queue, [&](cl_event* event) {
    return api_.clEnqueueCopyBufferRect(
      queue->as_queue(), source->as_mem(), destination->as_mem(), source_origin, destination_origin, region,
      static_cast<size_t>(m.source_row_pitch), static_cast<size_t>(m.source_slice_pitch),
      static_cast<size_t>(m.destination_row_pitch), static_cast<size_t>(m.destination_slice_pitch), wait_count(),
      wait_events(), event);
  });
}

bool executor::on(const p::enqueue_fill_buffer& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  cl_int error;
  const object_entry* buffer = objects_.find(m.buffer, object_kind::mem, CL_INVALID_MEM_OBJECT, error);
  if (buffer == nullptr) return fail(m.header, error);
  return enqueue_native(m.header, *queue, [&](cl_event* event) {
    return api_.clEnqueueFillBuffer(queue->as_queue(), buffer->as_mem(),
                                       m.pattern.empty() ? nullptr : m.pattern.data(), m.pattern.size(),
                                       static_cast<size_t>(m.offset), static_cast<size_t>(m.size), wait_count(),
                                       wait_events(), event);
  });
}

bool executor::on(const p::enqueue_marker& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  return enqueue_native(m.header, *queue, [&](cl_event* event) {
    return api_.clEnqueueMarkerWithWaitList(queue->as_queue(), wait_count(), wait_events(),
                                               event);
  });
}

bool executor::on(const p::enqueue_barrier& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  return enqueue_native(m.header, *queue, [&](cl_event* event) {
    return api_.clEnqueueBarrierWithWaitList(queue->as_queue(), wait_count(), wait_events(),
                                                event);
  });
}

bool executor::on(const p::flush_queue& m) {
  cl_int error;
  const object_entry* queue = objects_.find(m.queue, object_kind::queue, CL_INVALID_COMMAND_QUEUE, error);
  if (queue == nullptr) {
    FERRY_DEBUG("session", "session %s: flush_queue names %llu, which is no live queue; ignored", core_->label.c_str(),
                static_cast<unsigned long long>(m.queue));
    return true;
  }
  api_.clFlush(queue->as_queue());
  auto it = std::find(touched_.begin(), touched_.end(), queue->as_queue());
  if (it != touched_.end()) touched_.erase(it);
  return true;
}

// ---------------------------------------------------------------------------
// Teardown

void executor::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  // Nothing may wait forever: writes whose bytes never came, user events the
  // client never set. (A negative status ends the commands behind them.)
  core_->transfers.fail_pending(CL_DEVICE_NOT_AVAILABLE);
  bool sweep = false;
  objects_.for_each([&](p::object_id, object_entry& entry) {
    if (entry.kind == object_kind::event && entry.user_event && entry.handle && !entry.status_set) {
      api_.clSetUserEventStatus(entry.as_event(), CL_DEVICE_NOT_AVAILABLE);
      entry.status_set = true;
    }
    if (!entry.callbacks.runs_on_failure) sweep = true;
  });
  flush_touched();
  objects_.for_each([&](p::object_id, object_entry& entry) {
    if (entry.kind == object_kind::queue && entry.handle) api_.clFinish(entry.as_queue());
  });
  finish_own_queues();
  queued_.release_all();
  // Queues the client released may still run commands on SVM memory.
  for (const queue_fence& fence : queue_fences_) api_.clWaitForEvents(1, &fence.marker);
  if (sweep) core_->callbacks.sweep_failures(api_);
  size_t released = objects_.size();
  objects_.release_all();
  release_retired_svm();
  // Nothing is left that could notify the events parked in them.
  for (const made_context& made : contexts_) {
    api_.release_parked_events(made.context);
    release_made_context(made);
  }
  contexts_.clear();
  FERRY_DEBUG("session", "session %s: released %zu objects (daemon total %lld)", core_->label.c_str(), released,
              static_cast<long long>(object_table::daemon_total()));
}

}  // namespace ferry::server
