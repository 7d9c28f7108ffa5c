// The client's object model: one struct per OpenCL object type. Each struct
// is the ICD handle itself (`cl_mem` points at a `_cl_mem`), so it starts with
// the loader's dispatch pointer; the rest is Ferry's state for that object.
//
// Lifetime: `api_refs` is what clRetain*/clRelease* change and what
// CL_*_REFERENCE_COUNT reports. `internal_refs` counts Ferry's own holders
// (child objects, commands in flight) plus one for all API references
// together; the object is freed when it reaches zero, so it never shows in
// the API count.
#pragma once

#define CL_ENABLE_BETA_EXTENSIONS 0
#include <CL/cl.h>
#include <CL/cl_icd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/messages.hpp"

namespace ferry::client {

class connection;
struct server;
struct host_coherence;

/// The loader's dispatch table, filled in icd/dispatch.cpp.
extern const cl_icd_dispatch dispatch_table;

enum class object_tag : uint32_t {
  platform = 0x46520001,
  device,
  context,
  queue,
  mem,
  program,
  kernel,
  event,
  sampler,
  released = 0x0BADF00D,  // written on final release so stale handles are caught
};

struct object_base {
  const cl_icd_dispatch* dispatch = &dispatch_table;
  object_tag tag;
  std::atomic<uint32_t> api_refs{1};
  std::atomic<uint32_t> internal_refs{1};
  /// The id this object has on its server (0 for platform and devices).
  protocol::object_id id = 0;

  explicit object_base(object_tag t);
  object_base(const object_base&) = delete;
  object_base& operator=(const object_base&) = delete;
};

/// Live Ferry objects in this process (contexts, queues, memory, programs,
/// kernels, events), for leak checks.
uint64_t live_object_count();
/// Logs each of them at debug level (type, id, references): what a leak
/// check that found some should look at.
void log_live_objects();

void retain_internal(object_base* object);
/// Drops an internal reference; frees the object at zero.
void release_internal(object_base* object);
void retain_api(object_base* object);
/// Drops an API reference; at zero tells the server and drops the internal
/// reference held for the API.
void release_api(object_base* object);

/// Whether `address` is a memory object of this process that the
/// application has not released; never dereferences a foreign `address`.
/// Lets clSetKernelArg tell a cl_mem from 8 bytes of scalar data.
bool is_live_memory(const void* address);
/// Whether `address` is a sampler of this process that the application has
/// not released (clSetKernelArg, like is_live_memory).
bool is_live_sampler(const void* address);
/// Whether `address` is any Ferry object (context, queue, memory, program,
/// kernel, event) alive in this process.
bool is_live_object(const void* address);

/// Allocates a new id for an object or command (unique in this process, so
/// unique within every session).
protocol::object_id next_object_id();

}  // namespace ferry::client

// ---------------------------------------------------------------------------
// The handle types. They live in the global namespace because cl.h declares
// them there.

struct _cl_platform_id : ferry::client::object_base {
  _cl_platform_id() : object_base(ferry::client::object_tag::platform) {}
  std::vector<_cl_device_id*> devices;
};

struct _cl_device_id : ferry::client::object_base {
  _cl_device_id() : object_base(ferry::client::object_tag::device) {}
  ferry::client::server* host = nullptr;
  uint32_t index = 0;  // the device's index on its server
  /// Every info value the native device answered, as raw bytes.
  std::unordered_map<cl_uint, std::vector<uint8_t>> info;

  // Values used by argument checks, decoded once from `info`.
  cl_device_type type = 0;
  cl_ulong max_mem_alloc_size = 0;
  cl_uint mem_base_addr_align_bits = 0;
  size_t max_work_group_size = 0;
  cl_uint max_work_item_dimensions = 0;
  std::array<size_t, 3> max_work_item_sizes{};
  cl_command_queue_properties queue_properties = 0;
  /// What Ferry offers of the native SVM capabilities: coarse-grained
  /// buffers or nothing (see platform.cpp).
  cl_device_svm_capabilities svm_capabilities = 0;
  /// CL_DEVICE_AVAILABLE: its server is connected now.
  bool available() const;
  /// How long a thread waiting for this device's commands polls before it
  /// sleeps: a GPU's or accelerator's waits poll as NVIDIA's own do
  /// (ferry::client::gpu_wait_spin), others for spin_duration().
  std::chrono::microseconds wait_spin() const;
  /// Whether its server takes new work: also during an outage while the
  /// session may still resume (connection::accepting).
  bool accepts_work() const;
};

struct _cl_context : ferry::client::object_base {
  _cl_context() : object_base(ferry::client::object_tag::context) {}
  std::vector<cl_device_id> devices;
  std::vector<cl_context_properties> properties;  // as given, with the terminating 0
  void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*) = nullptr;
  void* notify_data = nullptr;
  /// The servers of the context's devices, in the order of first
  /// appearance. Every object of the context exists on each of them under
  /// the same id, except queues and command events (on their device's
  /// server only) and programs made for some devices (programs::servers).
  std::vector<ferry::client::server*> servers;
  /// The session of each of `servers` that the context lives in
  /// (connection::epoch): after a server lost the session (restart), the
  /// context stays unusable there, with CL_DEVICE_NOT_AVAILABLE (or
  /// CL_OUT_OF_RESOURCES where the server stopped the session's worker for
  /// exceeding a limit: unavailable_status).
  std::vector<uint64_t> epochs;
  bool spans_servers() const { return servers.size() > 1; }
  bool has_device(cl_device_id d) const;

  /// clSetContextDestructorCallback: run in reverse order once the context
  /// and every object that holds it are gone.
  using destructor = std::pair<void(CL_CALLBACK*)(cl_context, void*), void*>;
  std::mutex destructors_mutex;  // guards destructors
  std::vector<destructor> destructors;

  /// Its CL_MEM_USE_HOST_PTR buffers kept coherent with their host memory
  /// (core/memory/host_ptr_coherence.hpp); each removes itself when destroyed.
  std::mutex coherent_mutex;  // guards coherent, follows_spec
  std::vector<_cl_mem*> coherent;
  std::atomic<size_t> coherent_count{0};
  /// The program mapped, read or wrote one of them: none is coherent any more.
  bool follows_spec = false;
};

struct _cl_command_queue : ferry::client::object_base {
  _cl_command_queue() : object_base(ferry::client::object_tag::queue) {}
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  cl_command_queue_properties properties = 0;
  std::vector<cl_queue_properties> properties_array;  // for CL_QUEUE_PROPERTIES_ARRAY
  bool profiling() const { return properties & CL_QUEUE_PROFILING_ENABLE; }

  /// Reads whose data may still be on its way. The server reports a read
  /// complete only after its data, so a later marker can complete first;
  /// clFinish waits for these too.
  std::mutex reads_mutex;  // guards pending_reads
  std::vector<_cl_event*> pending_reads;

  /// Commands enqueued so far (each command's sequence number is the count
  /// after it), and the highest sequence number known to be complete
  /// together with everything before it. clFinish on a queue where the two
  /// agree has nothing to wait for and asks the server nothing.
  std::atomic<uint64_t> submitted{0};
  std::atomic<uint64_t> complete_through{0};
  /// Raises complete_through to `sequence` (never lowers it).
  void completed_up_to(uint64_t sequence);
};

struct _cl_mem : ferry::client::object_base {
  _cl_mem() : object_base(ferry::client::object_tag::mem) {}
  cl_context context = nullptr;
  cl_mem_flags flags = 0;
  size_t size = 0;
  void* host_ptr = nullptr;  // CL_MEM_USE_HOST_PTR only
  cl_mem parent = nullptr;   // sub-buffers
  size_t origin = 0;
  std::vector<cl_mem_properties> properties;  // as given, with the terminating 0
  /// The SVM allocation whose memory the buffer uses (CL_MEM_USE_HOST_PTR
  /// with an SVM pointer; sub-buffers share their parent's). Held so that
  /// host_ptr stays valid as long as the buffer.
  std::shared_ptr<void> svm;

  // Images (type is CL_MEM_OBJECT_BUFFER for buffers).
  cl_mem_object_type type = CL_MEM_OBJECT_BUFFER;
  cl_image_format format{};
  /// As given, with the pitches resolved (the host's layout for
  /// USE_HOST_PTR, else packed); mem_object holds an internal reference.
  cl_image_desc image{};
  size_t element_size = 0;
  bool is_image() const { return type != CL_MEM_OBJECT_BUFFER; }

  struct mapping {
    void* pointer;
    size_t offset;
    size_t size;
    cl_map_flags flags;
    bool owned;  // allocated by Ferry (not the USE_HOST_PTR region)
    // Image mappings: the mapped region and the layout of `pointer`.
    std::array<size_t, 3> origin{};
    std::array<size_t, 3> region{};
    size_t row_pitch = 0;
    size_t slice_pitch = 0;
  };
  std::mutex mappings_mutex;  // guards mappings
  std::vector<mapping> mappings;
  std::atomic<cl_uint> map_count{0};

  using destructor = std::pair<void(CL_CALLBACK*)(cl_mem, void*), void*>;
  std::mutex destructors_mutex;  // guards destructors
  std::vector<destructor> destructors;

  /// Where the latest contents are, when the context spans servers (see
  /// core/memory/placement.hpp). Kept on the root object only: a buffer without
  /// parent, image or not; sub-buffers and images over a buffer use their
  /// root's.
  std::mutex placement_mutex;  // guards holders, content_size, last_writer
  /// Bit per server slot: the servers whose copy is current.
  uint64_t holders = 0;
  /// The latest command that may have written the contents (an API
  /// reference, so that its server keeps it): a migration out of that server waits
  /// for it, since the application need not have ordered it before the
  /// command on another server that needs the contents (a blocking write
  /// returns before the write has run).
  cl_event last_writer = nullptr;
  /// cl_pocl_content_size: the buffer that holds this one's meaningful
  /// size (an internal reference), or nullptr.
  cl_mem content_size = nullptr;

  /// A CL_MEM_USE_HOST_PTR root kept coherent with its host memory for
  /// programs that never map it (core/memory/host_ptr_coherence.hpp), or nullptr.
  std::shared_ptr<ferry::client::host_coherence> coherence;
};

struct _cl_program : ferry::client::object_base {
  _cl_program() : object_base(ferry::client::object_tag::program) {}
  cl_context context = nullptr;
  std::vector<cl_device_id> devices;
  /// The servers of `devices`: where the program and its kernels exist.
  std::vector<ferry::client::server*> servers;
  std::string source;
  /// The IL the program was created from (clCreateProgramWithIL); empty for
  /// every other program, since an IL is never empty.
  std::vector<uint8_t> il;
  bool from_binary = false;
  std::atomic<cl_uint> attached_kernels{0};

  std::mutex build_mutex;  // guards the fields below
  /// The devices with an executable (a successful build or link for them),
  /// in the order of `devices`. A program may be built for a subset of its
  /// devices (clBuildProgram with a device list): its kernels exist there.
  std::vector<cl_device_id> built_devices;
  std::vector<std::string> kernel_names;
  bool built() const { return !built_devices.empty(); }
};

struct _cl_kernel : ferry::client::object_base {
  _cl_kernel() : object_base(ferry::client::object_tag::kernel) {}
  cl_program program = nullptr;
  /// The program's devices with an executable when the kernel was made
  /// (fixed: a program with kernels cannot be rebuilt), and their servers,
  /// where the kernel exists.
  std::vector<cl_device_id> devices;
  std::vector<ferry::client::server*> servers;
  std::string name;
  cl_uint num_args = 0;

  struct arg_state {
    bool set = false;
    ferry::protocol::kernel_arg wire;  // what the launch sends
    cl_mem mem = nullptr;              // for the context check at launch
  };
  std::vector<arg_state> args;
  /// Argument shapes the server already accepted: (kind << 56 | size) per index.
  std::vector<uint64_t> validated;
  /// CL_KERNEL_EXEC_INFO_SVM_PTRS as last set (translated), for clCloneKernel.
  std::vector<ferry::protocol::svm_pointer> svm_pointers;
  bool has_svm_pointers = false;

  struct work_group_limits {
    size_t work_group_size = 0;
    std::array<size_t, 3> compile_size{};
  };
  std::mutex limits_mutex;  // guards limits
  std::map<cl_device_id, work_group_limits> limits;
};

struct _cl_event : ferry::client::object_base {
  _cl_event() : object_base(ferry::client::object_tag::event) {}
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;  // nullptr for user events
  cl_command_type command_type = 0;
  std::atomic<cl_int> status{CL_QUEUED};
  std::array<cl_ulong, 4> profiling{};  // queued, submit, start, end
  /// Whether the server keeps a native event under this id.
  bool on_server = false;
  /// The server of the command (its queue's); nullptr for user events,
  /// which exist on every server of the context.
  ferry::client::server* home = nullptr;
  /// Servers that hold an imported copy of this event for their wait lists
  /// (bit per slot), and the export commands that feed them.
  std::mutex imports_mutex;  // guards imported, exports
  uint64_t imported = 0;
  std::vector<ferry::protocol::object_id> exports;
  /// Parts still to arrive before completion: 1, or 2 for reads (data + status).
  std::atomic<int> parts{1};
  /// Runs once before the event completes successfully (e.g. unpack a rect read).
  std::function<void()> before_complete;
  /// Runs once on the callback thread when the command succeeded; the event
  /// completes after it returns (application code: clEnqueueSVMFree's
  /// callback).
  std::function<void()> complete_after;
  /// What must outlive the command: the SVM allocation whose host block a
  /// read writes into.
  std::shared_ptr<void> holds;

  /// Markers and barriers: the reads of their queue still pending when they
  /// were enqueued. The server completes a marker before a read's data has
  /// crossed the bulk stream, so waiting for the marker waits for these too.
  std::vector<_cl_event*> implied;

  struct callback {
    cl_int trigger;
    void(CL_CALLBACK* function)(cl_event, cl_int, void*);
    void* data;
  };
  std::mutex callbacks_mutex;  // guards callbacks
  std::vector<callback> callbacks;
};

struct _cl_sampler : ferry::client::object_base {
  _cl_sampler() : object_base(ferry::client::object_tag::sampler) {}
  cl_context context = nullptr;
  cl_bool normalized_coords = CL_TRUE;
  cl_addressing_mode addressing_mode = CL_ADDRESS_CLAMP;
  cl_filter_mode filter_mode = CL_FILTER_NEAREST;
  std::vector<cl_sampler_properties> properties;  // as given, with the terminating 0
};

namespace ferry::client {
using platform = _cl_platform_id;
using device = _cl_device_id;
using context = _cl_context;
using queue = _cl_command_queue;
using memory = _cl_mem;
using program = _cl_program;
using kernel = _cl_kernel;
using event = _cl_event;
using sampler = _cl_sampler;
}  // namespace ferry::client
