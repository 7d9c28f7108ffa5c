// The message table: the single source of message ids, names, directions and
// size limits. Ids are explicit and never reused; a retired message keeps its
// number reserved. Every message is a plain struct with FERRY_FIELDS, encoded
// field by field by codec.hpp. docs/protocol.md describes each one.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/codec.hpp"
#include "protocol/limits.hpp"

namespace ferry::protocol {

using object_id = uint64_t;
using session_token = std::array<uint8_t, 16>;

/// "1a2b3c4d": the first 8 hex digits of a session id, how the daemon's and
/// the client's logs name a session.
std::string session_label(const session_token& id);

/// The most bulk connections a session may take, its bulk stream included
/// (docs/protocol.md, "Bulk lanes").
inline constexpr uint32_t max_bulk_lanes = 16;
/// hello.link of bulk lane `lane`: the lane number as a little-endian u32 in
/// the first four bytes, zeros after them. Lane 0 (the bulk stream) is all zero.
session_token lane_token(uint32_t lane);
/// The lane a bulk stream's hello.link names; false when it is not a lane
/// token (bytes after the first four not zero, or a lane >= max_bulk_lanes).
bool lane_of(const session_token& link, uint32_t& lane);

/// What a connection carries; the hello says it, so one port serves all.
enum class stream_kind : uint8_t { control = 0, bulk = 1, peer = 2 };

/// Which way a message may travel; the receiver rejects the other direction.
enum class direction : uint8_t { to_server, to_client, both };

// X(id, name, direction, max payload bytes)
#define FERRY_MESSAGES(X)                                                          \
  X(1, hello, direction::to_server, 4096)                                          \
  X(2, welcome, direction::to_client, 4096)                                        \
  X(3, refused, direction::to_client, 4096)                                        \
  X(4, challenge, direction::to_client, 64)                                        \
  X(5, proof, direction::both, 128)                                                \
  X(10, ping, direction::to_server, 64)                                            \
  X(11, pong, direction::to_client, 64)                                            \
  X(12, get_server_info, direction::to_server, 64)                                 \
  X(13, server_info, direction::to_client, max_control_payload)                    \
  X(14, get_object_counts, direction::to_server, 64)                               \
  X(15, object_counts, direction::to_client, 64)                                   \
  X(16, goodbye, direction::to_server, 64)                                          \
  X(17, ack, direction::both, 64)                                                  \
  X(18, session_state, direction::to_client, 64)                                   \
  X(19, lane_ack, direction::both, 256)                                            \
  X(20, create_context, direction::to_server, 1 << 20)                             \
  X(21, create_queue, direction::to_server, 4096)                                  \
  X(22, create_buffer, direction::to_server, 4096)                                 \
  X(23, create_sub_buffer, direction::to_server, 4096)                             \
  X(24, create_user_event, direction::to_server, 64)                               \
  X(25, set_user_event_status, direction::to_server, 64)                           \
  X(26, release_object, direction::to_server, 64)                                  \
  X(27, create_image, direction::to_server, 4096)                                  \
  X(28, create_sampler, direction::to_server, 4096)                                \
  X(29, svm_alloc, direction::to_server, 4096)                                     \
  X(30, create_program_with_source, direction::to_server, max_control_payload)     \
  X(31, create_program_with_binary, direction::to_server, max_control_payload)     \
  X(32, build_program_v4, direction::to_server, 1 << 20)                           \
  X(33, compile_program_v4, direction::to_server, 1 << 20)                         \
  X(34, link_program, direction::to_server, 1 << 20)                               \
  X(35, build_reply, direction::to_client, 1 << 20)                                \
  X(36, create_kernel, direction::to_server, 4096)                                 \
  X(37, create_kernels_in_program, direction::to_server, 1 << 20)                  \
  X(38, kernel_reply, direction::to_client, 1 << 20)                               \
  X(39, check_kernel_arg, direction::to_server, 1 << 20)                           \
  X(40, query, direction::to_server, 1 << 20)                                      \
  X(41, query_reply, direction::to_client, max_control_payload)                    \
  X(42, status_reply, direction::to_client, 1 << 20)                               \
  X(43, create_program_with_il, direction::to_server, max_control_payload)         \
  X(44, set_program_specialization_constant, direction::to_server, 4096)           \
  X(50, enqueue_ndrange, direction::to_server, 1 << 20)                            \
  X(51, enqueue_write_buffer, direction::to_server, 1 << 20)                       \
  X(52, enqueue_read_buffer, direction::to_server, 1 << 20)                        \
  X(53, enqueue_write_buffer_rect, direction::to_server, 1 << 20)                  \
  X(54, enqueue_read_buffer_rect, direction::to_server, 1 << 20)                   \
  X(55, enqueue_copy_buffer, direction::to_server, 1 << 20)                        \
  X(56, enqueue_copy_buffer_rect, direction::to_server, 1 << 20)                   \
  X(57, enqueue_fill_buffer, direction::to_server, 1 << 20)                        \
  X(58, enqueue_marker, direction::to_server, 1 << 20)                             \
  X(59, enqueue_barrier, direction::to_server, 1 << 20)                            \
  X(60, flush_queue, direction::to_server, 64)                                     \
  X(61, enqueue_write_image, direction::to_server, 1 << 20)                        \
  X(62, enqueue_read_image, direction::to_server, 1 << 20)                         \
  X(63, enqueue_copy_image, direction::to_server, 1 << 20)                         \
  X(64, enqueue_fill_image, direction::to_server, 1 << 20)                         \
  X(65, enqueue_copy_image_to_buffer, direction::to_server, 1 << 20)               \
  X(66, enqueue_copy_buffer_to_image, direction::to_server, 1 << 20)               \
  X(67, enqueue_svm_read, direction::to_server, 1 << 20)                           \
  X(68, enqueue_svm_write, direction::to_server, 1 << 20)                          \
  X(70, completions, direction::to_client, max_control_payload)                    \
  X(71, printf_output, direction::to_client, max_control_payload)                  \
  X(72, enqueue_svm_copy, direction::to_server, 1 << 20)                           \
  X(73, enqueue_svm_fill, direction::to_server, 1 << 20)                           \
  X(74, set_kernel_exec_info, direction::to_server, 1 << 20)                       \
  X(90, add_peer, direction::to_server, 4096)                                      \
  X(91, export_event, direction::to_server, 64)                                    \
  X(92, import_event, direction::to_server, 64)                                    \
  X(93, migrate_out, direction::to_server, 1 << 20)                                \
  X(94, migrate_in, direction::to_server, 1 << 20)                                 \
  X(95, abort_transfer, direction::to_server, 64)                                  \
  X(96, peer_event_status, direction::to_server, 64)                               \
  X(97, get_link_counters, direction::to_server, 64)                               \
  X(98, link_counters, direction::to_client, max_control_payload)                  \
  X(99, set_content_size, direction::to_server, 64)                                \
  X(100, build_program, direction::to_server, max_build_payload)                   \
  X(101, compile_program, direction::to_server, max_build_payload)                 \
  X(102, get_workers, direction::to_server, 64)                                     \
  X(103, workers, direction::to_client, max_control_payload)                        \
  X(104, get_local_route, direction::to_server, 64)                                 \
  X(105, local_route, direction::to_client, 8192)                                   \
  X(106, add_peer_route, direction::to_server, 8192)                                \
  X(107, file_to_buffer, direction::to_server, 8192)                                \
  X(108, buffer_to_file, direction::to_server, 8192)                                \
  X(120, cuda_get_devices, direction::to_server, 64)                               \
  X(121, cuda_devices, direction::to_client, max_control_payload)                  \
  X(122, cuda_create_context, direction::to_server, 64)                            \
  X(123, cuda_release, direction::to_server, 64)                                   \
  X(124, cuda_mem_alloc, direction::to_server, 64)                                 \
  X(125, cuda_pointer, direction::to_client, 64)                                   \
  X(126, cuda_mem_free, direction::to_server, 64)                                  \
  X(127, cuda_mem_get_info, direction::to_server, 64)                              \
  X(128, cuda_mem_info, direction::to_client, 64)                                  \
  X(129, cuda_module_load, direction::to_server, max_control_payload)              \
  X(130, cuda_module_reply, direction::to_client, 4u << 20)                        \
  X(131, cuda_get_function, direction::to_server, 4096)                            \
  X(132, cuda_function_reply, direction::to_client, 1 << 20)                       \
  X(133, cuda_get_global, direction::to_server, 4096)                              \
  X(134, cuda_link, direction::to_server, max_control_payload)                     \
  X(135, cuda_link_reply, direction::to_client, max_control_payload)               \
  X(136, cuda_func_set_attribute, direction::to_server, 64)                        \
  X(137, cuda_launch, direction::to_server, 1 << 20)                               \
  X(138, cuda_copy_to_device, direction::to_server, max_cuda_copy_piece + 256)     \
  X(139, cuda_copy_from_device, direction::to_server, 128)                         \
  X(140, cuda_data, direction::to_client, max_cuda_copy_piece + 256)               \
  X(141, cuda_copy_on_device, direction::to_server, 128)                           \
  X(142, cuda_memset, direction::to_server, 128)                                   \
  X(143, cuda_create_stream, direction::to_server, 64)                             \
  X(144, cuda_create_event, direction::to_server, 64)                              \
  X(145, cuda_record_event, direction::to_server, 64)                              \
  X(146, cuda_wait_event, direction::to_server, 64)                                \
  X(147, cuda_synchronize, direction::to_server, 64)                               \
  X(148, cuda_query, direction::to_server, 64)                                     \
  X(149, cuda_elapsed_time, direction::to_server, 64)                              \
  X(150, cuda_elapsed, direction::to_client, 64)                                   \
  X(151, cuda_status, direction::to_client, 64)                                    \
  X(152, cuda_copy_to_device_bulk, direction::to_server, 128)                      \
  X(153, cuda_copy_from_device_bulk, direction::to_server, 128)                    \
  X(80, bulk_data, direction::both, max_bulk_chunk + 64)                           \
  X(81, window_offer, direction::to_server, 64)                                    \
  X(82, window_chunk, direction::to_server, 64)                                    \
  X(83, read_window_offer, direction::to_server, 64)                               \
  X(84, read_window_chunk, direction::to_client, 64)

enum class message_id : uint16_t {
#define FERRY_ENUM(id, name, dir, limit) name = id,
  FERRY_MESSAGES(FERRY_ENUM)
#undef FERRY_ENUM
};

/// Whether a frame of message `id` counts among a stream's frames for
/// resumption (docs/protocol.md, "Resuming a session"): acks do not.
constexpr bool counted_frame(uint16_t id) {
  return id != static_cast<uint16_t>(message_id::ack) && id != static_cast<uint16_t>(message_id::lane_ack);
}

/// Name for logs ("enqueue_ndrange"), or nullptr for an unknown id.
const char* message_name(uint16_t id);
/// Size limit of a known message's payload; 0 for an unknown id.
uint32_t message_limit(uint16_t id);
/// Whether a message may be sent to the server (false for unknown ids).
bool message_to_server(uint16_t id);
bool message_to_client(uint16_t id);

// ---------------------------------------------------------------------------
// Shared field types

/// One (param, raw bytes) pair of a clGet*Info answer, as the native
/// implementation returned it.
struct info_entry {
  uint32_t param = 0;
  bytes value;
  FERRY_FIELDS(param, value)
  bool operator==(const info_entry&) const = default;
};

struct device_desc {
  uint32_t index = 0;  // the device's position in the server's list
  std::vector<info_entry> info;
  FERRY_FIELDS(index, info)
  bool operator==(const device_desc&) const = default;
};

/// Per-command bits of `command_header::flags`.
enum command_flag : uint32_t {
  /// Keep the native event: the client may name this command in wait lists
  /// or query it later.
  keep_event = 1u << 0,
  /// Report completion (success too); failures are always reported.
  notify = 1u << 1,
};

/// Prefix of every enqueue: the client-assigned command id (also the event
/// id), the queue, and the events to wait for.
struct command_header {
  object_id command = 0;
  object_id queue = 0;
  limited_vector<object_id, max_wait_list> wait_list;
  uint32_t flags = 0;
  FERRY_FIELDS(command, queue, wait_list, flags)
  bool operator==(const command_header&) const = default;
};

enum class kernel_arg_kind : uint8_t { value = 0, mem = 1, local = 2, null_mem = 3, sampler = 4, svm = 5 };

struct kernel_arg {
  uint32_t index = 0;
  kernel_arg_kind kind = kernel_arg_kind::value;
  uint64_t size = 0;     // value and local: the size passed to clSetKernelArg; svm: the byte offset
  bytes value;           // value: the argument bytes
  object_id object = 0;  // mem: the buffer or image; sampler: the sampler; svm: the allocation (0: NULL)
  FERRY_FIELDS(index, kind, size, value, object)
  bool operator==(const kernel_arg&) const = default;
};

/// A pointer into an SVM allocation: the allocation's id and a byte offset
/// inside it (pointers of the client's address space mean nothing on the
/// server, so they travel translated).
struct svm_pointer {
  object_id allocation = 0;
  uint64_t offset = 0;
  FERRY_FIELDS(allocation, offset)
  bool operator==(const svm_pointer&) const = default;
};

struct kernel_desc {
  object_id id = 0;
  std::string name;
  uint32_t num_args = 0;
  FERRY_FIELDS(id, name, num_args)
  bool operator==(const kernel_desc&) const = default;
};

struct completion {
  object_id command = 0;
  int32_t status = 0;  // CL_COMPLETE (0) or a negative error code
  /// CL_PROFILING_COMMAND_QUEUED, SUBMIT, START, END (zeros without profiling).
  std::array<uint64_t, 4> profiling{};
  FERRY_FIELDS(command, status, profiling)
  bool operator==(const completion&) const = default;
};

using size3 = std::array<uint64_t, 3>;

/// What `query` asks about; each maps to one native clGet*Info call.
enum class query_kind : uint32_t {
  program_info = 1,
  program_build_info = 2,
  kernel_info = 3,
  kernel_work_group_info = 4,
  kernel_arg_info = 5,
  /// clGetSupportedImageFormats: object = context, param = image type,
  /// input = the cl_mem_flags (8 bytes); the value is the cl_image_format array.
  supported_image_formats = 6,
  /// clGetKernelSubGroupInfo: input = the input value (local sizes or a
  /// sub-group count), as the native call takes it.
  kernel_sub_group_info = 7,
};

// ---------------------------------------------------------------------------
// Messages (field order is the wire order)

struct hello {
  uint32_t magic = 0;
  uint16_t min_version = 0;
  uint16_t max_version = 0;
  stream_kind stream = stream_kind::control;
  session_token session{};  // all zero: open a new session (control only)
  session_token secret{};
  std::string client_name;
  /// Peer links: the source's random id for the link, the same on every
  /// connection of it, so that the destination knows which frames it has
  /// (docs/protocol.md, "Peer links"). Bulk streams (version 11): which lane
  /// of the session's bulk connections this is (lane_token; zero: the bulk
  /// stream itself). Zero on control streams.
  session_token link{};
  FERRY_FIELDS(magic, min_version, max_version, stream, session, secret, client_name, link)
  bool operator==(const hello&) const = default;
};
/// The hello this build sends: its magic and version range, for `stream`.
hello make_hello(stream_kind stream, const session_token& session, const session_token& secret,
                 std::string client_name, const session_token& link = {});

struct welcome {
  uint16_t version = 0;
  session_token session{};
  session_token secret{};
  /// What another server must show to open a peer link into this session
  /// (hello with stream peer, this session's id and this key). It admits
  /// peer messages only, never the client's own streams, so the client can
  /// hand it to the other servers of its contexts.
  session_token peer_key{};
  FERRY_FIELDS(version, session, secret, peer_key)
  bool operator==(const welcome&) const = default;
};
struct refused {
  int32_t code = 0;
  std::string reason;
  FERRY_FIELDS(code, reason)
  bool operator==(const refused&) const = default;
};

/// 32 random bytes, fresh for each authentication.
using nonce = std::array<uint8_t, 32>;
/// HMAC-SHA256 output.
using mac = std::array<uint8_t, 32>;

/// The server's answer to a hello when it requires a token
/// (docs/protocol.md, "Authentication").
struct challenge {
  nonce server_nonce{};
  FERRY_FIELDS(server_nonce)
  bool operator==(const challenge&) const = default;
};
/// To the server: the client's nonce and its proof of holding the token. To
/// the client: the server's proof, over the same nonces (`client_nonce`
/// repeats the client's).
struct proof {
  nonce client_nonce{};
  mac proof_mac{};
  FERRY_FIELDS(client_nonce, proof_mac)
  bool operator==(const proof&) const = default;
};

struct ping {
  uint64_t request = 0;
  FERRY_FIELDS(request)
  bool operator==(const ping&) const = default;
};
struct pong {
  uint64_t request = 0;
  FERRY_FIELDS(request)
  bool operator==(const pong&) const = default;
};
struct get_server_info {
  uint64_t request = 0;
  FERRY_FIELDS(request)
  bool operator==(const get_server_info&) const = default;
};
struct server_info {
  uint64_t request = 0;
  std::vector<info_entry> platform;
  std::vector<device_desc> devices;
  /// Where other servers reach this one for peer links ("host:port";
  /// ferryd --peer-address); empty: the address the client used.
  std::string peer_address;
  FERRY_FIELDS(request, platform, devices, peer_address)
  bool operator==(const server_info&) const = default;
};
struct get_object_counts {
  uint64_t request = 0;
  FERRY_FIELDS(request)
  bool operator==(const get_object_counts&) const = default;
};
struct object_counts {
  uint64_t request = 0;
  uint64_t objects = 0;
  /// Control frames of the session the server has run, this request
  /// included (docs/protocol.md, "Resuming a session").
  uint64_t control_frames = 0;
  FERRY_FIELDS(request, objects, control_frames)
  bool operator==(const object_counts&) const = default;
};
struct goodbye {
  uint32_t reserved = 0;
  FERRY_FIELDS(reserved)
  bool operator==(const goodbye&) const = default;
};
/// How many frames of the session's control and bulk streams the sender has
/// received from the other side, over every connection so far (ack, hello,
/// welcome, refused and session_state frames are not counted). The other
/// side lets go of what it kept to send again up to there.
struct ack {
  uint64_t control = 0;
  uint64_t bulk = 0;
  FERRY_FIELDS(control, bulk)
  bool operator==(const ack&) const = default;
};
/// Follows every welcome of a control stream: how many frames of each of
/// the client's streams the session has received (zero for a new session;
/// the client sends the rest again), and how long the session outlives a
/// lost connection. Also follows the welcome of a peer link: `control` is
/// then the frames received on that link so far, `bulk` is 0; and the
/// welcome of a bulk lane (version 11): `control` 0, `bulk` the frames the
/// session has received on that lane so far.
struct session_state {
  uint64_t control = 0;
  uint64_t bulk = 0;
  uint32_t grace_ms = 0;
  /// Version 11: how many bulk connections the session takes, the bulk
  /// stream (lane 0) included; 0 (older servers) or 1: the bulk stream alone.
  uint32_t bulk_lanes = 0;
  FERRY_FIELDS(control, bulk, grace_ms, bulk_lanes)
  bool operator==(const session_state&) const = default;
};

/// Version 11, on the control stream, both ways: how many frames the sender
/// has received on each of the session's bulk lanes, over every connection
/// of the lane so far; `received[i]` is lane i + 1's (the bulk stream's
/// count is ack.bulk). Sent like ack (ahead of a batch when a count moved),
/// so that an ack covering a write's bytes comes before any completion they
/// enabled.
struct lane_ack {
  std::vector<uint64_t> received;
  FERRY_FIELDS(received)
  bool operator==(const lane_ack&) const = default;
};

struct create_context {
  object_id id = 0;
  std::vector<uint32_t> devices;
  FERRY_FIELDS(id, devices)
  bool operator==(const create_context&) const = default;
};
struct create_queue {
  object_id id = 0;
  object_id context = 0;
  uint32_t device = 0;
  uint64_t properties = 0;  // cl_command_queue_properties bits
  FERRY_FIELDS(id, context, device, properties)
  bool operator==(const create_queue&) const = default;
};
struct create_buffer {
  object_id id = 0;
  object_id context = 0;
  uint64_t flags = 0;  // host-pointer flags already resolved by the client
  uint64_t size = 0;
  /// Non-zero: the initial contents arrive on the bulk stream as this transfer.
  uint64_t initial_transfer = 0;
  /// Non-zero: the buffer's storage is this SVM allocation, from byte
  /// `svm_offset` on (clCreateBuffer with CL_MEM_USE_HOST_PTR and an SVM
  /// pointer); `initial_transfer` is then 0.
  object_id svm = 0;
  uint64_t svm_offset = 0;
  FERRY_FIELDS(id, context, flags, size, initial_transfer, svm, svm_offset)
  bool operator==(const create_buffer&) const = default;
};
struct create_sub_buffer {
  object_id id = 0;
  object_id parent = 0;
  uint64_t flags = 0;
  uint64_t origin = 0;
  uint64_t size = 0;
  FERRY_FIELDS(id, parent, flags, origin, size)
  bool operator==(const create_sub_buffer&) const = default;
};
struct create_user_event {
  object_id id = 0;
  object_id context = 0;
  FERRY_FIELDS(id, context)
  bool operator==(const create_user_event&) const = default;
};
struct set_user_event_status {
  object_id id = 0;
  int32_t status = 0;
  FERRY_FIELDS(id, status)
  bool operator==(const set_user_event_status&) const = default;
};
struct release_object {
  object_id id = 0;
  FERRY_FIELDS(id)
  bool operator==(const release_object&) const = default;
};

/// An image. Answered with a status_reply (native creation errors are exact).
/// `buffer` names the buffer of a 1D buffer image or of a 2D image made from
/// a buffer (0 for none). Initial contents, if any, arrive packed (no row or
/// slice padding) on the bulk stream as `initial_transfer`; the pitches then
/// are 0.
struct create_image {
  uint64_t request = 0;
  object_id id = 0;
  object_id context = 0;
  uint64_t flags = 0;
  uint32_t channel_order = 0;
  uint32_t channel_data_type = 0;
  uint32_t image_type = 0;
  uint64_t width = 0;
  uint64_t height = 0;
  uint64_t depth = 0;
  uint64_t array_size = 0;
  uint64_t row_pitch = 0;
  uint64_t slice_pitch = 0;
  uint32_t num_mip_levels = 0;
  uint32_t num_samples = 0;
  object_id buffer = 0;
  limited_vector<uint64_t, 64> properties;  // cl_mem_properties, 0-terminated or empty
  uint64_t initial_transfer = 0;
  FERRY_FIELDS(request, id, context, flags, channel_order, channel_data_type, image_type, width, height, depth,
               array_size, row_pitch, slice_pitch, num_mip_levels, num_samples, buffer, properties, initial_transfer)
  bool operator==(const create_image&) const = default;
};
/// A sampler from cl_sampler_properties (0-terminated). Answered with a
/// status_reply.
struct create_sampler {
  uint64_t request = 0;
  object_id id = 0;
  object_id context = 0;
  limited_vector<uint64_t, 64> properties;
  FERRY_FIELDS(request, id, context, properties)
  bool operator==(const create_sampler&) const = default;
};

/// A coarse-grained SVM allocation (clSVMAlloc) named `id`. Answered with a
/// status_reply; on failure the id names nothing.
struct svm_alloc {
  uint64_t request = 0;
  object_id id = 0;
  object_id context = 0;
  uint64_t flags = 0;  // cl_svm_mem_flags
  uint64_t size = 0;
  uint32_t alignment = 0;  // 0: the default
  FERRY_FIELDS(request, id, context, flags, size, alignment)
  bool operator==(const svm_alloc&) const = default;
};

struct create_program_with_source {
  object_id id = 0;
  object_id context = 0;
  std::string source;
  FERRY_FIELDS(id, context, source)
  bool operator==(const create_program_with_source&) const = default;
};
/// Answered by status_reply: status, then one binary status per device.
struct create_program_with_binary {
  uint64_t request = 0;
  object_id id = 0;
  object_id context = 0;
  std::vector<uint32_t> devices;
  std::vector<bytes> binaries;
  FERRY_FIELDS(request, id, context, devices, binaries)
  bool operator==(const create_program_with_binary&) const = default;
};
/// clCreateProgramWithIL. Answered by status_reply; on failure the id names
/// nothing (the client made no object that would release it).
struct create_program_with_il {
  uint64_t request = 0;
  object_id id = 0;
  object_id context = 0;
  bytes il;
  FERRY_FIELDS(request, id, context, il)
  bool operator==(const create_program_with_il&) const = default;
};
/// clSetProgramSpecializationConstant on a program created from IL. An empty
/// `value` makes the native call get NULL with `size` (the client sends none
/// for a NULL spec_value, and for a size no specialization constant has);
/// otherwise `value` holds exactly `size` bytes. Answered by status_reply.
struct set_program_specialization_constant {
  uint64_t request = 0;
  object_id program = 0;
  uint32_t spec_id = 0;
  uint64_t size = 0;
  bytes value;
  FERRY_FIELDS(request, program, spec_id, size, value)
  bool operator==(const set_program_specialization_constant&) const = default;
};
/// A header file of the client, found for an #include line of a program
/// being built, under the client's absolute path (lexically normal: no "."
/// or ".." components).
struct client_header {
  std::string path;
  bytes content;
  FERRY_FIELDS(path, content)
  bool operator==(const client_header&) const = default;
};
/// What a build or compile needs of the client's file system, so that
/// #include lines and -I options mean what they mean on the client
/// (docs/protocol.md, "Headers from the client"). Empty when the options name
/// no -I directory and the client shipped no header: the build then runs as
/// the options say.
struct build_files {
  /// The client's working directory (absolute): relative -I options and the
  /// quoted includes of the program source resolve against it.
  std::string working_dir;
  /// The directory of each -I option of the options, in their order
  /// (protocol/include_options.hpp finds them), made absolute by the client.
  limited_vector<std::string, max_build_include_dirs> include_dirs;
  limited_vector<client_header, max_build_headers> headers;
  FERRY_FIELDS(working_dir, include_dirs, headers)
  bool operator==(const build_files&) const = default;
  bool empty() const { return include_dirs.empty() && headers.empty(); }
};
/// Versions 4 and 5: a build without the client's files (ferryd builds it as
/// a build_program with none).
struct build_program_v4 {
  uint64_t request = 0;
  object_id program = 0;
  std::vector<uint32_t> devices;  // empty: all devices of the program
  std::string options;
  FERRY_FIELDS(request, program, devices, options)
  bool operator==(const build_program_v4&) const = default;
};
/// Versions 4 and 5: a compile without the client's files.
struct compile_program_v4 {
  uint64_t request = 0;
  object_id program = 0;
  std::vector<uint32_t> devices;
  std::string options;
  std::vector<object_id> headers;
  std::vector<std::string> header_names;
  FERRY_FIELDS(request, program, devices, options, headers, header_names)
  bool operator==(const compile_program_v4&) const = default;
};
/// Version 6 on.
struct build_program {
  uint64_t request = 0;
  object_id program = 0;
  std::vector<uint32_t> devices;  // empty: all devices of the program
  std::string options;
  build_files files;
  FERRY_FIELDS(request, program, devices, options, files)
  bool operator==(const build_program&) const = default;
};
/// Version 6 on.
struct compile_program {
  uint64_t request = 0;
  object_id program = 0;
  std::vector<uint32_t> devices;
  std::string options;
  std::vector<object_id> headers;
  std::vector<std::string> header_names;
  build_files files;
  FERRY_FIELDS(request, program, devices, options, headers, header_names, files)
  bool operator==(const compile_program&) const = default;
};
struct link_program {
  uint64_t request = 0;
  object_id id = 0;  // the new program
  object_id context = 0;
  std::vector<uint32_t> devices;
  std::string options;
  std::vector<object_id> inputs;
  FERRY_FIELDS(request, id, context, devices, options, inputs)
  bool operator==(const link_program&) const = default;
};
/// Outcome of build/compile/link. `created` tells whether link made a program
/// object (a failed link may still create one that holds the log).
struct build_reply {
  uint64_t request = 0;
  int32_t status = 0;
  uint8_t created = 0;
  std::vector<std::string> kernel_names;
  FERRY_FIELDS(request, status, created, kernel_names)
  bool operator==(const build_reply&) const = default;
};
struct create_kernel {
  uint64_t request = 0;
  object_id id = 0;
  object_id program = 0;
  std::string name;
  FERRY_FIELDS(request, id, program, name)
  bool operator==(const create_kernel&) const = default;
};
/// Creates one kernel per id, in the order of the program's kernel names.
struct create_kernels_in_program {
  uint64_t request = 0;
  object_id program = 0;
  std::vector<object_id> ids;
  FERRY_FIELDS(request, program, ids)
  bool operator==(const create_kernels_in_program&) const = default;
};
struct kernel_reply {
  uint64_t request = 0;
  int32_t status = 0;
  std::vector<kernel_desc> kernels;
  FERRY_FIELDS(request, status, kernels)
  bool operator==(const kernel_reply&) const = default;
};
/// Validates one argument with the native clSetKernelArg (answered by status_reply).
struct check_kernel_arg {
  uint64_t request = 0;
  object_id kernel = 0;
  kernel_arg arg;
  FERRY_FIELDS(request, kernel, arg)
  bool operator==(const check_kernel_arg&) const = default;
};
/// clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_PTRS) with the pointers
/// translated; answered by status_reply.
struct set_kernel_exec_info {
  uint64_t request = 0;
  object_id kernel = 0;
  std::vector<svm_pointer> pointers;
  FERRY_FIELDS(request, kernel, pointers)
  bool operator==(const set_kernel_exec_info&) const = default;
};
struct query {
  uint64_t request = 0;
  query_kind kind = query_kind::program_info;
  object_id object = 0;
  uint32_t device = 0;
  uint32_t param = 0;
  uint32_t index = 0;  // kernel argument index
  bytes input;         // input value of work-group queries that take one
  FERRY_FIELDS(request, kind, object, device, param, index, input)
  bool operator==(const query&) const = default;
};
struct query_reply {
  uint64_t request = 0;
  int32_t status = 0;
  bytes value;
  FERRY_FIELDS(request, status, value)
  bool operator==(const query_reply&) const = default;
};
struct status_reply {
  uint64_t request = 0;
  int32_t status = 0;
  std::vector<int32_t> details;
  FERRY_FIELDS(request, status, details)
  bool operator==(const status_reply&) const = default;
};

struct enqueue_ndrange {
  command_header header;
  object_id kernel = 0;
  uint32_t work_dim = 0;
  size3 offset{};
  size3 global{};
  size3 local{};
  uint8_t has_local = 0;  // 0: local size left to the implementation
  std::vector<kernel_arg> args;
  FERRY_FIELDS(header, kernel, work_dim, offset, global, local, has_local, args)
  bool operator==(const enqueue_ndrange&) const = default;
};
/// The data follows on the bulk stream as transfer `header.command`.
struct enqueue_write_buffer {
  command_header header;
  object_id buffer = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  FERRY_FIELDS(header, buffer, offset, size)
  bool operator==(const enqueue_write_buffer&) const = default;
};
/// The data returns on the bulk stream as transfer `header.command`, then the
/// completion follows on the control stream.
struct enqueue_read_buffer {
  command_header header;
  object_id buffer = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  FERRY_FIELDS(header, buffer, offset, size)
  bool operator==(const enqueue_read_buffer&) const = default;
};
/// Rectangular transfers: the host side travels packed (row pitch =
/// region[0], slice pitch = region[0] * region[1]); the client packs/unpacks.
struct enqueue_write_buffer_rect {
  command_header header;
  object_id buffer = 0;
  size3 buffer_origin{};
  size3 region{};
  uint64_t buffer_row_pitch = 0;
  uint64_t buffer_slice_pitch = 0;
  FERRY_FIELDS(header, buffer, buffer_origin, region, buffer_row_pitch, buffer_slice_pitch)
  bool operator==(const enqueue_write_buffer_rect&) const = default;
};
struct enqueue_read_buffer_rect {
  command_header header;
  object_id buffer = 0;
  size3 buffer_origin{};
  size3 region{};
  uint64_t buffer_row_pitch = 0;
  uint64_t buffer_slice_pitch = 0;
  FERRY_FIELDS(header, buffer, buffer_origin, region, buffer_row_pitch, buffer_slice_pitch)
  bool operator==(const enqueue_read_buffer_rect&) const = default;
};
struct enqueue_copy_buffer {
  command_header header;
  object_id source = 0;
  object_id destination = 0;
  uint64_t source_offset = 0;
  uint64_t destination_offset = 0;
  uint64_t size = 0;
  FERRY_FIELDS(header, source, destination, source_offset, destination_offset, size)
  bool operator==(const enqueue_copy_buffer&) const = default;
};
struct enqueue_copy_buffer_rect {
  command_header header;
  object_id source = 0;
  object_id destination = 0;
  size3 source_origin{};
  size3 destination_origin{};
  size3 region{};
  uint64_t source_row_pitch = 0;
  uint64_t source_slice_pitch = 0;
  uint64_t destination_row_pitch = 0;
  uint64_t destination_slice_pitch = 0;
  FERRY_FIELDS(header, source, destination, source_origin, destination_origin, region, source_row_pitch,
               source_slice_pitch, destination_row_pitch, destination_slice_pitch)
  bool operator==(const enqueue_copy_buffer_rect&) const = default;
};
struct enqueue_fill_buffer {
  command_header header;
  object_id buffer = 0;
  bytes pattern;
  uint64_t offset = 0;
  uint64_t size = 0;
  FERRY_FIELDS(header, buffer, pattern, offset, size)
  bool operator==(const enqueue_fill_buffer&) const = default;
};
struct enqueue_marker {
  command_header header;
  FERRY_FIELDS(header)
  bool operator==(const enqueue_marker&) const = default;
};
struct enqueue_barrier {
  command_header header;
  FERRY_FIELDS(header)
  bool operator==(const enqueue_barrier&) const = default;
};
struct flush_queue {
  object_id queue = 0;
  FERRY_FIELDS(queue)
  bool operator==(const flush_queue&) const = default;
};

/// Image transfers: host data travels packed (row pitch = region width x
/// element size, slice pitch = row pitch x rows), on the bulk stream as
/// transfer `header.command` like the buffer transfers.
struct enqueue_write_image {
  command_header header;
  object_id image = 0;
  size3 origin{};
  size3 region{};
  uint64_t size = 0;  // packed bytes that follow
  FERRY_FIELDS(header, image, origin, region, size)
  bool operator==(const enqueue_write_image&) const = default;
};
struct enqueue_read_image {
  command_header header;
  object_id image = 0;
  size3 origin{};
  size3 region{};
  uint64_t size = 0;  // packed bytes that return
  FERRY_FIELDS(header, image, origin, region, size)
  bool operator==(const enqueue_read_image&) const = default;
};
struct enqueue_copy_image {
  command_header header;
  object_id source = 0;
  object_id destination = 0;
  size3 source_origin{};
  size3 destination_origin{};
  size3 region{};
  FERRY_FIELDS(header, source, destination, source_origin, destination_origin, region)
  bool operator==(const enqueue_copy_image&) const = default;
};
/// `color` is the fill colour as the spec gives it: four floats, ints or uints.
struct enqueue_fill_image {
  command_header header;
  object_id image = 0;
  std::array<uint8_t, 16> color{};
  size3 origin{};
  size3 region{};
  FERRY_FIELDS(header, image, color, origin, region)
  bool operator==(const enqueue_fill_image&) const = default;
};
struct enqueue_copy_image_to_buffer {
  command_header header;
  object_id image = 0;
  object_id buffer = 0;
  size3 origin{};
  size3 region{};
  uint64_t offset = 0;
  FERRY_FIELDS(header, image, buffer, origin, region, offset)
  bool operator==(const enqueue_copy_image_to_buffer&) const = default;
};
struct enqueue_copy_buffer_to_image {
  command_header header;
  object_id buffer = 0;
  object_id image = 0;
  uint64_t offset = 0;
  size3 origin{};
  size3 region{};
  FERRY_FIELDS(header, buffer, image, offset, origin, region)
  bool operator==(const enqueue_copy_buffer_to_image&) const = default;
};

/// SVM contents to the client (clEnqueueSVMMap, clEnqueueSVMMemcpy to host
/// memory): [offset, offset + size) of the allocation returns on the bulk
/// stream as transfer `header.command`, then the completion follows.
struct enqueue_svm_read {
  command_header header;
  object_id allocation = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  FERRY_FIELDS(header, allocation, offset, size)
  bool operator==(const enqueue_svm_read&) const = default;
};
/// SVM contents from the client (clEnqueueSVMUnmap of a write mapping,
/// clEnqueueSVMMemcpy from host memory): the bytes follow on the bulk stream
/// as transfer `header.command`.
struct enqueue_svm_write {
  command_header header;
  object_id allocation = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  FERRY_FIELDS(header, allocation, offset, size)
  bool operator==(const enqueue_svm_write&) const = default;
};
/// clEnqueueSVMMemcpy between two SVM allocations.
struct enqueue_svm_copy {
  command_header header;
  object_id destination = 0;
  uint64_t destination_offset = 0;
  object_id source = 0;
  uint64_t source_offset = 0;
  uint64_t size = 0;
  FERRY_FIELDS(header, destination, destination_offset, source, source_offset, size)
  bool operator==(const enqueue_svm_copy&) const = default;
};
/// clEnqueueSVMMemFill.
struct enqueue_svm_fill {
  command_header header;
  object_id allocation = 0;
  bytes pattern;
  uint64_t offset = 0;
  uint64_t size = 0;
  FERRY_FIELDS(header, allocation, pattern, offset, size)
  bool operator==(const enqueue_svm_fill&) const = default;
};

// ---------------------------------------------------------------------------
// Several servers: peer links, cross-server events, migration (docs/protocol.md,
// "Peer links"). The client's objects of a context that spans servers exist on
// each of them under the same ids; a peer link carries one client's traffic
// from its session on one server into its session on another.

/// Tells this server how to reach the client's session on another server;
/// `peer` is the client's number for that server, used by the messages
/// below. The link is opened when first used. Sending it again for the same
/// `peer` with the same values is harmless; different values are refused
/// (a violation).
struct add_peer {
  uint32_t peer = 0;
  std::string address;     // "host:port" or "unix:/path"
  session_token session{}; // the client's session on that server
  session_token key{};     // that session's welcome.peer_key
  FERRY_FIELDS(peer, address, session, key)
  bool operator==(const add_peer&) const = default;
};
/// When the native event `event` (a command of this session whose event is
/// kept, or a user or imported event) completes or fails, send its status to
/// `peer` as peer_event_status. When the status cannot be delivered (the peer
/// cannot be reached), a completion for `command` with
/// CL_DEVICE_NOT_AVAILABLE tells the client, which then fails the importer's
/// copy itself (set_user_event_status). An unknown `event` is answered the
/// same way with CL_INVALID_EVENT.
struct export_event {
  object_id event = 0;
  uint32_t peer = 0;
  object_id command = 0;
  FERRY_FIELDS(event, peer, command)
  bool operator==(const export_event&) const = default;
};
/// Creates the native user event `event` in `context`, completed by the
/// peer_event_status the exporting server sends (which may have arrived
/// first; it is then applied at once). Later wait lists of this session may
/// name `event`; set_user_event_status on it is allowed (the client fails it
/// when the exporter cannot deliver). Released with release_object.
struct import_event {
  object_id event = 0;
  object_id context = 0;
  FERRY_FIELDS(event, context)
  bool operator==(const import_event&) const = default;
};
/// Source side of a buffer migration: once the wait list has completed,
/// read [offset, offset + size) of `buffer` (with a content-size buffer,
/// only the part below the size it holds; see `content_size`) and push the
/// bytes to `peer` as bulk transfer `transfer`. `header.queue` is 0: the
/// server reads on a queue of its own for the buffer's context. Completion
/// is reported with the usual flags once the bytes have been handed to the
/// peer link; failure (the peer unreachable, a native error) always is.
struct migrate_out {
  command_header header;
  object_id buffer = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t peer = 0;
  uint64_t transfer = 0;
  /// Non-zero: a buffer of this session whose first 8 bytes (a cl_ulong)
  /// hold how many bytes of `buffer` are meaningful (cl_pocl_content_size);
  /// only [offset, min(offset + size, that value)) is sent.
  object_id content_size = 0;
  FERRY_FIELDS(header, buffer, offset, size, peer, transfer, content_size)
  bool operator==(const migrate_out&) const = default;
};
/// Destination side: a write of the bytes of bulk transfer `transfer`,
/// arriving on a peer link, into `buffer` from `offset` on, in the order of
/// `header.queue`. The transfer may carry fewer than `size` bytes (a content
/// size); the rest of the range is left as it is.
struct migrate_in {
  command_header header;
  object_id buffer = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t transfer = 0;
  FERRY_FIELDS(header, buffer, offset, size, transfer)
  bool operator==(const migrate_in&) const = default;
};
/// The transfer a migrate_in waits for will not come (its source failed):
/// the write fails with `status` (negative) instead of waiting forever.
struct abort_transfer {
  uint64_t transfer = 0;
  int32_t status = 0;
  FERRY_FIELDS(transfer, status)
  bool operator==(const abort_transfer&) const = default;
};
/// Peer links only: the exported event `event` ended with `status`
/// (CL_COMPLETE or negative).
struct peer_event_status {
  object_id event = 0;
  int32_t status = 0;
  FERRY_FIELDS(event, status)
  bool operator==(const peer_event_status&) const = default;
};

/// cl_pocl_content_size (clSetContentSizeBufferPoCL): from now on the first
/// 8 bytes (a cl_ulong) of buffer `size_buffer` say how many leading bytes of
/// buffer `buffer` are meaningful, and a read of `buffer` to the client
/// (enqueue_read_buffer) sends only the part of its range below that size:
/// the bulk transfer's total is then smaller than the read's size, and the
/// rest of the client's memory is left as it was. `size_buffer` 0 ends the
/// pairing. Unknown ids: ignored with a log line (the client checked them).
struct set_content_size {
  object_id buffer = 0;
  object_id size_buffer = 0;
  FERRY_FIELDS(buffer, size_buffer)
  bool operator==(const set_content_size&) const = default;
};

/// What a link is, for link_counters.
enum class link_kind : uint8_t { client_control = 0, client_bulk = 1, peer_out = 2, peer_in = 3 };

/// Traffic of one kind of link with one remote host since the daemon started,
/// summed over sessions (frames are messages; bytes include frame headers).
struct link_counter {
  link_kind kind = link_kind::client_control;
  std::string remote;  // peer_out: the address dialled; otherwise the remote host
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t messages_in = 0;
  uint64_t messages_out = 0;
  FERRY_FIELDS(kind, remote, bytes_in, bytes_out, messages_in, messages_out)
  bool operator==(const link_counter&) const = default;
};
struct get_link_counters {
  uint64_t request = 0;
  FERRY_FIELDS(request)
  bool operator==(const get_link_counters&) const = default;
};
struct link_counters {
  uint64_t request = 0;
  std::vector<link_counter> links;
  FERRY_FIELDS(request, links)
  bool operator==(const link_counters&) const = default;
};

/// What a session worker is doing (ferryd runs each session in a worker
/// process of its own, docs/workers.md).
enum class worker_state : uint8_t {
  starting = 0,  ///< spawned; loading the native platforms
  spare = 1,     ///< ready, waiting for a session
  serving = 2,   ///< serving a session whose client is connected
  detached = 3,  ///< serving a session whose client's connection is lost (grace period)
  ending = 4,    ///< its session ended; the process is exiting
};

/// One worker process of the daemon, for `ferry counters`.
struct worker_entry {
  uint32_t pid = 0;
  worker_state state = worker_state::starting;
  std::string session;  // the session's label (empty: none yet)
  std::string client;   // the client's address (empty: none)
  uint64_t memory_bytes = 0;  // resident set size
  uint64_t age_ms = 0;        // since the process started
  FERRY_FIELDS(pid, state, session, client, memory_bytes, age_ms)
  bool operator==(const worker_entry&) const = default;
};
struct get_workers {
  uint64_t request = 0;
  FERRY_FIELDS(request)
  bool operator==(const get_workers&) const = default;
};
struct workers {
  uint64_t request = 0;
  std::vector<worker_entry> entries;
  FERRY_FIELDS(request, entries)
  bool operator==(const workers&) const = default;
};

/// Version 8: how another daemon on the same host may reach this one without
/// TCP (docs/protocol.md, "Peer links"). The client asks each server once and
/// passes the answer on with add_peer_route.
struct get_local_route {
  uint64_t request = 0;
  FERRY_FIELDS(request)
  bool operator==(const get_local_route&) const = default;
};
struct local_route {
  uint64_t request = 0;
  /// The daemon's Unix socket (ferryd --unix, absolute); empty: none, or
  /// ferryd --peer-shared-memory off.
  std::string unix_path;
  /// The identity of the host and filesystem view the path belongs to
  /// (server/daemon/host_identity.hpp); the same text means the same host.
  std::string host;
  FERRY_FIELDS(request, unix_path, host)
  bool operator==(const local_route&) const = default;
};
/// Version 8, after add_peer of the same `peer`: that server's local_route.
/// The link prefers the Unix socket when `host` is this daemon's own.
struct add_peer_route {
  uint32_t peer = 0;
  std::string unix_path;
  std::string host;
  FERRY_FIELDS(peer, unix_path, host)
  bool operator==(const add_peer_route&) const = default;
};
/// Version 9: a file on the server, below its --file-root, into `size`
/// bytes of `buffer` from `offset` (the file's bytes from `file_offset`), in
/// the order of `header.queue` like a write (docs/transfer.md, "Files on the
/// server"). `path` is relative to the root (1 to max_file_path bytes, no
/// NUL); the daemon opens it when the command's wait list has ended. The
/// completion's status says how it went: CL_INVALID_OPERATION (no
/// --file-root), CL_INVALID_VALUE (outside the root, missing, not allowed,
/// shorter than asked), CL_OUT_OF_RESOURCES (an I/O error), or the device
/// copy's own error.
struct file_to_buffer {
  command_header header;
  object_id buffer = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  std::string path;
  uint64_t file_offset = 0;
  FERRY_FIELDS(header, buffer, offset, size, path, file_offset)
  bool operator==(const file_to_buffer&) const = default;
};
/// Version 9: `size` bytes of `buffer` from `offset` into a file on the
/// server at `file_offset` (created when missing, never truncated), like a
/// read; statuses as file_to_buffer's.
struct buffer_to_file {
  command_header header;
  object_id buffer = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  std::string path;
  uint64_t file_offset = 0;
  FERRY_FIELDS(header, buffer, offset, size, path, file_offset)
  bool operator==(const buffer_to_file&) const = default;
};

// ---------------------------------------------------------------------------
// CUDA remoting (version 10, docs/cuda.md). The client's libcuda.so.1 sends
// these in its own session. Ids (contexts, modules, functions, streams,
// events) are chosen by the client like every other id; device pointers are
// the server's real addresses (programs do arithmetic on them and pass them
// inside kernel arguments), checked against the session's allocations
// wherever the server reads or writes through them. `result` fields carry a
// CUresult (not `status`: the client reads a reply's `status` as an OpenCL code). Stream 0 is the context's NULL stream.

/// What cuda_synchronize and cuda_query are about.
enum class cuda_target : uint8_t { context = 0, stream = 1, event = 2 };

/// One of the server's CUDA devices: its ordinal there, name, UUID, memory,
/// and every CUdevice_attribute (index = the attribute's value; 0 for one
/// the driver does not know), so that the client answers device queries
/// without a round trip.
struct cuda_device_desc {
  uint32_t ordinal = 0;
  std::string name;
  std::array<uint8_t, 16> uuid{};
  uint64_t total_memory = 0;
  limited_vector<int32_t, 1024> attributes;
  FERRY_FIELDS(ordinal, name, uuid, total_memory, attributes)
  bool operator==(const cuda_device_desc&) const = default;
};
struct cuda_get_devices {
  uint64_t request = 0;
  FERRY_FIELDS(request)
  bool operator==(const cuda_get_devices&) const = default;
};
/// `result`: CUDA_SUCCESS with the devices (possibly none), or why the
/// server has none (its driver could not be loaded or initialised); `note`
/// says it in words for the client's log.
struct cuda_devices {
  uint64_t request = 0;
  int32_t result = 0;
  int32_t driver_version = 0;
  std::string note;
  std::vector<cuda_device_desc> devices;
  FERRY_FIELDS(request, result, driver_version, note, devices)
  bool operator==(const cuda_devices&) const = default;
};
/// A context of this session on device `ordinal` (the client's primary
/// contexts are ordinary contexts here: a session never shares one).
struct cuda_create_context {
  uint64_t request = 0;
  object_id context = 0;
  uint32_t ordinal = 0;
  uint32_t flags = 0;
  FERRY_FIELDS(request, context, ordinal, flags)
  bool operator==(const cuda_create_context&) const = default;
};
/// Destroys a context, module, stream or event (with what it owns: a
/// context's streams, events, modules and allocations).
struct cuda_release {
  object_id id = 0;
  FERRY_FIELDS(id)
  bool operator==(const cuda_release&) const = default;
};
struct cuda_mem_alloc {
  uint64_t request = 0;
  object_id context = 0;
  uint64_t size = 0;
  FERRY_FIELDS(request, context, size)
  bool operator==(const cuda_mem_alloc&) const = default;
};
/// An allocation's or a module global's address and size.
struct cuda_pointer {
  uint64_t request = 0;
  int32_t result = 0;
  uint64_t address = 0;
  uint64_t size = 0;
  FERRY_FIELDS(request, result, address, size)
  bool operator==(const cuda_pointer&) const = default;
};
struct cuda_mem_free {
  object_id context = 0;
  uint64_t address = 0;
  FERRY_FIELDS(context, address)
  bool operator==(const cuda_mem_free&) const = default;
};
struct cuda_mem_get_info {
  uint64_t request = 0;
  object_id context = 0;
  FERRY_FIELDS(request, context)
  bool operator==(const cuda_mem_get_info&) const = default;
};
struct cuda_mem_info {
  uint64_t request = 0;
  int32_t result = 0;
  uint64_t free = 0;
  uint64_t total = 0;
  FERRY_FIELDS(request, result, free, total)
  bool operator==(const cuda_mem_info&) const = default;
};
/// A JIT option whose value is a number (CUjit_option and its value); the
/// log buffers are the server's, their sizes travel as values.
struct cuda_jit_option {
  uint32_t option = 0;
  int64_t value = 0;
  FERRY_FIELDS(option, value)
  bool operator==(const cuda_jit_option&) const = default;
};
struct cuda_module_load {
  uint64_t request = 0;
  object_id context = 0;
  object_id module = 0;
  bytes image;  // PTX (NUL-terminated), a cubin or a fatbin, as the program gave it
  limited_vector<cuda_jit_option, 64> options;
  FERRY_FIELDS(request, context, module, image, options)
  bool operator==(const cuda_module_load&) const = default;
};
/// The JIT's logs and wall time (nanoseconds), for the program's log buffers.
struct cuda_module_reply {
  uint64_t request = 0;
  int32_t result = 0;
  std::string info_log;
  std::string error_log;
  uint64_t wall_time_ns = 0;
  FERRY_FIELDS(request, result, info_log, error_log, wall_time_ns)
  bool operator==(const cuda_module_reply&) const = default;
};
struct cuda_get_function {
  uint64_t request = 0;
  object_id module = 0;
  object_id function = 0;
  std::string name;
  FERRY_FIELDS(request, module, function, name)
  bool operator==(const cuda_get_function&) const = default;
};
/// Where a kernel parameter lies in the packed argument buffer.
struct cuda_param {
  uint32_t offset = 0;
  uint32_t size = 0;
  FERRY_FIELDS(offset, size)
  bool operator==(const cuda_param&) const = default;
};
/// A kernel's parameter layout (from cuFuncGetParamInfo; `params_known` 0
/// where the driver cannot tell) and its CUfunction_attribute values.
struct cuda_function_reply {
  uint64_t request = 0;
  int32_t result = 0;
  uint8_t params_known = 0;
  limited_vector<cuda_param, 4096> params;
  limited_vector<int32_t, 64> attributes;
  FERRY_FIELDS(request, result, params_known, params, attributes)
  bool operator==(const cuda_function_reply&) const = default;
};
struct cuda_get_global {
  uint64_t request = 0;
  object_id module = 0;
  std::string name;
  FERRY_FIELDS(request, module, name)
  bool operator==(const cuda_get_global&) const = default;
};
struct cuda_link_input {
  uint32_t type = 0;  // CUjitInputType
  bytes data;
  std::string name;
  FERRY_FIELDS(type, data, name)
  bool operator==(const cuda_link_input&) const = default;
};
/// cuLinkCreate, cuLinkAddData for each input and cuLinkComplete in one:
/// the client collects the inputs and asks when the program completes.
struct cuda_link {
  uint64_t request = 0;
  object_id context = 0;
  limited_vector<cuda_link_input, 4096> inputs;
  limited_vector<cuda_jit_option, 64> options;
  FERRY_FIELDS(request, context, inputs, options)
  bool operator==(const cuda_link&) const = default;
};
struct cuda_link_reply {
  uint64_t request = 0;
  int32_t result = 0;
  bytes image;  // the linked cubin, for cuModuleLoadData
  std::string info_log;
  std::string error_log;
  uint64_t wall_time_ns = 0;
  FERRY_FIELDS(request, result, image, info_log, error_log, wall_time_ns)
  bool operator==(const cuda_link_reply&) const = default;
};
struct cuda_func_set_attribute {
  uint64_t request = 0;
  object_id function = 0;
  int32_t attribute = 0;
  int32_t value = 0;
  FERRY_FIELDS(request, function, attribute, value)
  bool operator==(const cuda_func_set_attribute&) const = default;
};
/// cuLaunchKernel with its parameters packed by the function's layout.
struct cuda_launch {
  object_id context = 0;
  object_id stream = 0;
  object_id function = 0;
  std::array<uint32_t, 3> grid{};
  std::array<uint32_t, 3> block{};
  uint32_t shared_bytes = 0;
  bytes params;
  FERRY_FIELDS(context, stream, function, grid, block, shared_bytes, params)
  bool operator==(const cuda_launch&) const = default;
};
/// Host to device, in stream order; larger copies travel as several pieces.
struct cuda_copy_to_device {
  object_id context = 0;
  object_id stream = 0;
  uint64_t destination = 0;
  bytes data;
  FERRY_FIELDS(context, stream, destination, data)
  bool operator==(const cuda_copy_to_device&) const = default;
};
/// Host to device, the bytes on the bulk stream as transfer `transfer`
/// (`size` of them, what a chunk's `total` says): the daemon receives them
/// into pinned memory and copies from there in stream order.
struct cuda_copy_to_device_bulk {
  object_id context = 0;
  object_id stream = 0;
  uint64_t destination = 0;
  uint64_t size = 0;
  uint64_t transfer = 0;
  FERRY_FIELDS(context, stream, destination, size, transfer)
  bool operator==(const cuda_copy_to_device_bulk&) const = default;
};
/// Device to host: answered with cuda_data once the stream got there.
struct cuda_copy_from_device {
  uint64_t request = 0;
  object_id context = 0;
  object_id stream = 0;
  uint64_t source = 0;
  uint64_t size = 0;
  FERRY_FIELDS(request, context, stream, source, size)
  bool operator==(const cuda_copy_from_device&) const = default;
};
/// Device to host, the bytes on the bulk stream as transfer `transfer`
/// (`size` of them, at most max_cuda_bulk_piece): the daemon copies them into
/// page-locked memory in stream order, sends them once the stream got there,
/// then answers cuda_status (an error: no bytes come).
struct cuda_copy_from_device_bulk {
  uint64_t request = 0;
  object_id context = 0;
  object_id stream = 0;
  uint64_t source = 0;
  uint64_t size = 0;
  uint64_t transfer = 0;
  FERRY_FIELDS(request, context, stream, source, size, transfer)
  bool operator==(const cuda_copy_from_device_bulk&) const = default;
};
struct cuda_data {
  uint64_t request = 0;
  int32_t result = 0;
  bytes data;
  FERRY_FIELDS(request, result, data)
  bool operator==(const cuda_data&) const = default;
};
struct cuda_copy_on_device {
  object_id context = 0;
  object_id stream = 0;
  uint64_t destination = 0;
  uint64_t source = 0;
  uint64_t size = 0;
  FERRY_FIELDS(context, stream, destination, source, size)
  bool operator==(const cuda_copy_on_device&) const = default;
};
/// cuMemsetD8/D16/D32: `count` elements of `element_size` (1, 2 or 4) bytes.
struct cuda_memset {
  object_id context = 0;
  object_id stream = 0;
  uint64_t destination = 0;
  uint32_t value = 0;
  uint32_t element_size = 0;
  uint64_t count = 0;
  FERRY_FIELDS(context, stream, destination, value, element_size, count)
  bool operator==(const cuda_memset&) const = default;
};
struct cuda_create_stream {
  object_id context = 0;
  object_id stream = 0;
  uint32_t flags = 0;
  int32_t priority = 0;
  FERRY_FIELDS(context, stream, flags, priority)
  bool operator==(const cuda_create_stream&) const = default;
};
struct cuda_create_event {
  object_id context = 0;
  object_id event = 0;
  uint32_t flags = 0;
  FERRY_FIELDS(context, event, flags)
  bool operator==(const cuda_create_event&) const = default;
};
/// cuEventRecord (stream 0: the NULL stream of the event's context).
struct cuda_record_event {
  object_id event = 0;
  object_id stream = 0;
  FERRY_FIELDS(event, stream)
  bool operator==(const cuda_record_event&) const = default;
};
struct cuda_wait_event {
  object_id context = 0;
  object_id stream = 0;
  object_id event = 0;
  FERRY_FIELDS(context, stream, event)
  bool operator==(const cuda_wait_event&) const = default;
};
/// Answered (cuda_status) once the target got there: the context's streams,
/// one stream (what a stream callback waits for), or an event. The result
/// is the first error of the context's work not reported yet, if any.
struct cuda_synchronize {
  uint64_t request = 0;
  object_id context = 0;
  object_id target = 0;
  cuda_target kind = cuda_target::context;
  FERRY_FIELDS(request, context, target, kind)
  bool operator==(const cuda_synchronize&) const = default;
};
/// Answered at once: CUDA_SUCCESS, CUDA_ERROR_NOT_READY or an error.
struct cuda_query {
  uint64_t request = 0;
  object_id context = 0;
  object_id target = 0;
  cuda_target kind = cuda_target::stream;
  FERRY_FIELDS(request, context, target, kind)
  bool operator==(const cuda_query&) const = default;
};
struct cuda_elapsed_time {
  uint64_t request = 0;
  object_id start = 0;
  object_id end = 0;
  FERRY_FIELDS(request, start, end)
  bool operator==(const cuda_elapsed_time&) const = default;
};
struct cuda_elapsed {
  uint64_t request = 0;
  int32_t result = 0;
  uint64_t nanoseconds = 0;
  FERRY_FIELDS(request, result, nanoseconds)
  bool operator==(const cuda_elapsed&) const = default;
};
struct cuda_status {
  uint64_t request = 0;
  int32_t result = 0;
  FERRY_FIELDS(request, result)
  bool operator==(const cuda_status&) const = default;
};

struct completions {
  std::vector<completion> entries;
  FERRY_FIELDS(entries)
  bool operator==(const completions&) const = default;
};
struct printf_output {
  bytes text;
  FERRY_FIELDS(text)
  bool operator==(const printf_output&) const = default;
};
/// Bulk stream only. Only the prefix is encoded by the codec; the chunk's
/// bytes follow it to the end of the frame and are read straight into place.
struct bulk_data {
  uint64_t transfer = 0;  // the command id, or create_buffer.initial_transfer
  uint64_t offset = 0;    // where this chunk goes inside the transfer
  uint64_t total = 0;     // size of the whole transfer, the same in every chunk
  FERRY_FIELDS(transfer, offset, total)
  bool operator==(const bulk_data&) const = default;
};
inline constexpr size_t bulk_prefix_size = 24;
/// Bulk stream only, version 5, a plain Unix socket: the client's shared
/// memory window (common/bulk_window.hpp). A memfd travels with the payload
/// (SCM_RIGHTS), not with the frame header.
struct window_offer {
  uint32_t slots = 0;      // 1 to bulk_window::max_slots
  uint64_t slot_size = 0;  // bytes a slot holds: 4 KiB to max_bulk_chunk
  FERRY_FIELDS(slots, slot_size)
  bool operator==(const window_offer&) const = default;
};
/// Bulk stream only, after window_offer: a chunk whose bytes wait in a
/// window slot instead of following the prefix. Slots are used round robin.
struct window_chunk {
  uint64_t transfer = 0;  // as in bulk_data
  uint64_t offset = 0;
  uint64_t total = 0;
  uint32_t slot = 0;  // which slot holds the bytes
  uint64_t size = 0;  // how many bytes of the slot the chunk is
  FERRY_FIELDS(transfer, offset, total, slot, size)
  bool operator==(const window_chunk&) const = default;
};

/// Bulk stream only (version 8), to the server: a second window, for the
/// bytes of reads. The daemon fills its slots (round robin, in the order it
/// sends read_window_chunk) and the client releases each one once copied out.
struct read_window_offer {
  uint32_t slots = 0;      // 1 to bulk_window::max_slots
  uint64_t slot_size = 0;  // bytes a slot holds: 4 KiB to max_bulk_chunk
  FERRY_FIELDS(slots, slot_size)
  bool operator==(const read_window_offer&) const = default;
};
/// Bulk stream only, to the client, after read_window_offer: a chunk of a
/// read whose bytes wait in a slot of the read window.
struct read_window_chunk {
  uint64_t transfer = 0;  // as in bulk_data
  uint64_t offset = 0;
  uint64_t total = 0;
  uint32_t slot = 0;  // which slot holds the bytes
  uint64_t size = 0;  // how many bytes of the slot the chunk is
  FERRY_FIELDS(transfer, offset, total, slot, size)
  bool operator==(const read_window_chunk&) const = default;
};

/// Maps each message struct to its id (message_traits<T>::id).
template <class T>
struct message_traits;
#define FERRY_TRAITS(num, name, dir, limit)                        \
  template <>                                                      \
  struct message_traits<name> {                                    \
    static constexpr message_id id = message_id::name;             \
    static constexpr std::string_view label = #name;               \
  };
FERRY_MESSAGES(FERRY_TRAITS)
#undef FERRY_TRAITS

}  // namespace ferry::protocol
