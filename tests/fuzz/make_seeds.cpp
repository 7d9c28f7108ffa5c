// Writes the seed corpus of ferry_fuzz_decoder: a few control streams of valid frames,
// one file per family of messages, made with the protocol's own encoder so that the
// seeds follow every change to the message table. Seeds give libFuzzer whole, well-formed
// messages to mutate from; without them it spends its first minutes discovering the frame
// header and the field layouts.
//
//   ferry_fuzz_seeds DIR     writes DIR/<name>.bin for each stream (DIR must exist)
//
// The fuzz target feeds a seed to one session's executor on the dry native API (see
// src/server/testing/fuzz_decoder.cpp): device indexes 0 and 1 exist, nothing touches a device.
// Streams that would dial out (migrate_out, export_event after add_peer) are left out:
// each would open a peer link to an address that does not answer and slow every run.
#include <CL/cl.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/dispatch.hpp"
#include "server/testing/test_client.hpp"  // header()

namespace p = ferry::protocol;

namespace {

constexpr const char* source = R"(
kernel void vadd(global const float* a, global const float* b, global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
kernel void scale(global float* x, float factor) { x[get_global_id(0)] *= factor; }
)";

class stream {
 public:
  template <class T>
  stream& operator<<(const T& message) {
    p::append_frame(bytes_, message);
    return *this;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

using ferry::server::testing::header;

p::kernel_arg arg(uint32_t index, p::kernel_arg_kind kind, uint64_t size, p::bytes value, p::object_id object) {
  return p::kernel_arg{index, kind, size, std::move(value), object};
}

// Context 1 on devices 0 and 1, profiling queue 2, buffers 3 and 4 of 256 bytes.
void objects(stream& s) {
  s << p::create_context{1, {0, 1}} << p::create_queue{2, 1, 0, CL_QUEUE_PROFILING_ENABLE}
    << p::create_buffer{3, 1, CL_MEM_READ_WRITE, 256, 0, 0, 0} << p::create_buffer{4, 1, CL_MEM_READ_WRITE, 256, 0, 0, 0};
}

stream session_and_objects() {
  stream s;
  s << p::ping{1} << p::get_server_info{2} << p::ack{0, 0};
  objects(s);
  s << p::create_sub_buffer{5, 3, CL_MEM_READ_WRITE, 0, 128} << p::create_user_event{6, 1}
    << p::set_user_event_status{6, CL_COMPLETE} << p::create_queue{7, 1, 1, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE}
    << p::get_object_counts{3};
  for (p::object_id id : {5, 6, 7, 4, 3, 2, 1}) s << p::release_object{id};
  s << p::goodbye{0};
  return s;
}

stream buffer_commands() {
  stream s;
  objects(s);
  s << p::create_user_event{5, 1};
  s << p::enqueue_write_buffer{header(10, 2, p::keep_event | p::notify, {5}), 3, 0, 64}
    << p::enqueue_read_buffer{header(11, 2, p::notify, {10}), 3, 0, 64}
    << p::enqueue_fill_buffer{header(12, 2), 4, {1, 2, 3, 4}, 0, 256}
    << p::enqueue_copy_buffer{header(13, 2), 3, 4, 0, 128, 64}
    << p::enqueue_write_buffer_rect{header(14, 2), 3, {0, 1, 0}, {16, 2, 1}, 32, 0}
    << p::enqueue_read_buffer_rect{header(15, 2), 4, {4, 0, 0}, {8, 4, 1}, 16, 64}
    << p::enqueue_copy_buffer_rect{header(16, 2), 3, 4, {0, 0, 0}, {0, 2, 0}, {16, 2, 1}, 16, 32, 16, 64}
    << p::enqueue_marker{header(17, 2, p::keep_event, {10, 5})} << p::enqueue_barrier{header(18, 2, 0, {17})}
    << p::set_user_event_status{5, -5} << p::flush_queue{2} << p::set_content_size{3, 4}
    << p::enqueue_read_buffer{header(19, 2), 3, 0, 256} << p::set_content_size{3, 0} << p::release_object{17}
    << p::release_object{10};
  return s;
}

stream programs_and_kernels() {
  stream s;
  objects(s);
  s << p::create_program_with_source{10, 1, source} << p::build_program{20, 10, {}, "-cl-fast-relaxed-math", {}}
    << p::build_program_v4{29, 10, {0}, "-DV4"} << p::compile_program_v4{30, 10, {}, "", {10}, {"self.h"}}
    << p::create_kernel{21, 11, 10, "vadd"} << p::create_kernels_in_program{22, 10, {12, 13}}
    << p::check_kernel_arg{23, 11, arg(0, p::kernel_arg_kind::mem, 8, {}, 3)}
    << p::check_kernel_arg{24, 13, arg(1, p::kernel_arg_kind::value, 4, {0, 0, 128, 63}, 0)}
    << p::query{25, p::query_kind::program_info, 10, 0, CL_PROGRAM_NUM_KERNELS, 0, {}}
    << p::query{26, p::query_kind::program_build_info, 10, 0, CL_PROGRAM_BUILD_LOG, 0, {}}
    << p::query{27, p::query_kind::kernel_info, 11, 0, CL_KERNEL_FUNCTION_NAME, 0, {}}
    << p::query{28, p::query_kind::kernel_work_group_info, 11, 1, CL_KERNEL_WORK_GROUP_SIZE, 0, {}}
    << p::query{29, p::query_kind::kernel_arg_info, 11, 0, CL_KERNEL_ARG_NAME, 2, {}};
  p::enqueue_ndrange run;
  run.header = header(30, 2, p::notify | p::keep_event);
  run.kernel = 11;
  run.work_dim = 1;
  run.global = {64, 1, 1};
  run.local = {16, 1, 1};
  run.has_local = 1;
  run.args = {arg(0, p::kernel_arg_kind::mem, 8, {}, 3), arg(1, p::kernel_arg_kind::mem, 8, {}, 4),
              arg(2, p::kernel_arg_kind::null_mem, 8, {}, 0)};
  s << run;
  run.header = header(31, 2, p::notify, {30});
  run.kernel = 13;
  run.work_dim = 2;
  run.global = {8, 8, 1};
  run.has_local = 0;
  run.args = {arg(0, p::kernel_arg_kind::mem, 8, {}, 4), arg(1, p::kernel_arg_kind::value, 4, {0, 0, 0, 64}, 0)};
  s << run;
  s << p::create_program_with_source{40, 1, "kernel void k(local int* x) { x[0] = 1; }"}
    << p::compile_program{41, 40, {0}, "", {}, {}, {}} << p::link_program{42, 43, 1, {0}, "", {40}}
    << p::create_program_with_binary{44, 45, 1, {0}, {p::bytes{0x7F, 'E', 'L', 'F'}}}
    << p::create_program_with_il{46, 47, 1, p::bytes{0x03, 0x02, 0x23, 0x07}}
    << p::set_program_specialization_constant{48, 47, 1, 4, {1, 0, 0, 0}};
  // Headers from the client (build_files): the daemon writes them into a
  // temporary tree, rewrites the -I options, and answers the log in the
  // client's paths.
  auto text = [](std::string_view t) { return p::bytes(t.begin(), t.end()); };
  p::build_files files;
  files.working_dir = "/home/user/app";
  files.include_dirs = {"/home/user/app/inc", "/opt/missing"};
  files.headers = {
      {"/home/user/app/inc/axpy.h", text("#include \"sub/scale.h\"\n#define AXPY(a, x, y) (SCALE(a, x) + (y))\n")},
      {"/home/user/app/inc/sub/scale.h", text("#define SCALE(a, x) ((a) * (x))\n")}};
  s << p::create_program_with_source{
           50, 1, "#include \"axpy.h\"\nkernel void k(global float* x) { x[0] = AXPY(2, x[1], x[2]); }\n"}
    << p::build_program{51, 50, {}, "-I inc -I/opt/missing", files}
    << p::query{52, p::query_kind::program_build_info, 50, 0, CL_PROGRAM_BUILD_LOG, 0, {}}
    << p::query{53, p::query_kind::program_build_info, 50, 0, CL_PROGRAM_BUILD_OPTIONS, 0, {}}
    << p::compile_program{54, 50, {0}, "-Iinc -I /opt/missing", {}, {}, files};
  for (p::object_id id : {30, 13, 12, 11, 10, 40, 43, 50}) s << p::release_object{id};
  return s;
}

stream images_and_svm() {
  stream s;
  objects(s);
  p::create_image image;
  image.request = 10;
  image.id = 11;
  image.context = 1;
  image.flags = CL_MEM_READ_WRITE;
  image.channel_order = CL_RGBA;
  image.channel_data_type = CL_UNORM_INT8;
  image.image_type = CL_MEM_OBJECT_IMAGE2D;
  image.width = 16;
  image.height = 8;
  s << image << p::create_sampler{12, 13, 1, {CL_SAMPLER_NORMALIZED_COORDS, 0, CL_SAMPLER_ADDRESSING_MODE,
                                             CL_ADDRESS_CLAMP, CL_SAMPLER_FILTER_MODE, CL_FILTER_NEAREST, 0}}
    << p::enqueue_write_image{header(20, 2), 11, {0, 0, 0}, {4, 4, 1}, 64}
    << p::enqueue_read_image{header(21, 2), 11, {1, 1, 0}, {2, 2, 1}, 16}
    << p::enqueue_fill_image{header(22, 2), 11, {255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0},
                             {16, 8, 1}}
    << p::enqueue_copy_image_to_buffer{header(23, 2), 11, 3, {0, 0, 0}, {8, 2, 1}, 0}
    << p::enqueue_copy_buffer_to_image{header(24, 2), 4, 11, 0, {0, 4, 0}, {8, 2, 1}}
    << p::svm_alloc{30, 31, 1, CL_MEM_READ_WRITE, 4096, 0} << p::svm_alloc{32, 33, 1, CL_MEM_READ_WRITE, 1024, 64}
    << p::enqueue_svm_write{header(34, 2), 31, 0, 128} << p::enqueue_svm_read{header(35, 2), 31, 64, 64}
    << p::enqueue_svm_copy{header(36, 2), 33, 0, 31, 128, 256}
    << p::enqueue_svm_fill{header(37, 2), 33, {1, 2, 3, 4}, 0, 1024}
    << p::create_buffer{38, 1, CL_MEM_READ_WRITE, 512, 0, 31, 1024};
  for (p::object_id id : {38, 33, 31, 13, 11}) s << p::release_object{id};
  return s;
}

stream peers() {
  stream s;
  objects(s);
  p::session_token session{}, key{};
  session[0] = 1;
  key[0] = 2;
  s << p::add_peer{1, "127.0.0.1:1", session, key} << p::import_event{10, 1}
    << p::enqueue_marker{header(11, 2, p::notify, {10})} << p::set_user_event_status{10, CL_COMPLETE}
    << p::migrate_in{header(12, 2), 3, 0, 64, 500} << p::abort_transfer{500, -5} << p::abort_transfer{501, 0}
    << p::get_link_counters{13} << p::get_workers{14} << p::release_object{10}
    // Version 8: a route on another host is taken by nobody, so nothing dials it.
    << p::get_local_route{15} << p::add_peer_route{1, "/tmp/ferry-fuzz.sock", "another-host"};
  return s;
}

// Version 9: files below the server's --file-root, with paths that are fine,
// lead outside, are empty or carry a NUL byte.
stream files() {
  stream s;
  objects(s);
  s << p::file_to_buffer{header(40, 2, p::notify), 3, 0, 128, "in/data.bin", 0}
    << p::buffer_to_file{header(41, 2, p::notify | p::keep_event), 3, 64, 64, "out.bin", 4096}
    << p::file_to_buffer{header(42, 2, 0, {41}), 3, 0, 16, "../outside", 0}
    << p::buffer_to_file{header(43, 2), 3, 0, 16, "", 0}
    << p::file_to_buffer{header(44, 2), 3, 0, 16, std::string("a\0b", 3), 0}
    << p::file_to_buffer{header(45, 2), 3, 120, 16, "past-the-end", UINT64_MAX - 4}
    << p::release_object{41};
  return s;
}

// Version 10: CUDA remoting on the stand-in driver, a context with memory, a module
// of the kernels the stand-in knows, launches both ways, copies in and out (one past
// the end of the allocation), streams, events and their waits.
constexpr const char* cuda_ptx = ".version 7.0\n.target sm_80\n"
                                 ".visible .entry saxpy(.param .u32 n, .param .f32 a, .param .u64 x, .param .u64 y)\n"
                                 ".visible .global .align 4 .u32 counter;\n";

stream cuda() {
  stream s;
  const std::string ptx = cuda_ptx;
  p::cuda_module_load load{3, 1, 10, p::bytes(ptx.begin(), ptx.end()), {}};
  load.options = std::vector<p::cuda_jit_option>{{4, 4096}, {6, 1024}, {7, 3}};
  p::cuda_launch launch{1, 0, 11, {4, 1, 1}, {64, 1, 1}, 0, p::bytes(24, 0)};
  p::cuda_launch bad_launch{1, 20, 11, {0, 1, 1}, {4096, 1, 1}, 1u << 30, p::bytes(40000, 1)};
  s << p::cuda_get_devices{1} << p::cuda_create_context{2, 1, 0, 0} << p::cuda_mem_alloc{4, 1, 4096}
    << p::cuda_mem_get_info{5, 1} << load << p::cuda_get_function{6, 10, 11, "saxpy"}
    << p::cuda_get_function{7, 10, 12, "missing"} << p::cuda_get_global{8, 10, "counter"}
    << p::cuda_func_set_attribute{9, 11, 8, 1024} << p::cuda_create_stream{1, 20, 1, 0}
    << p::cuda_create_event{1, 21, 0} << p::cuda_copy_to_device{1, 20, 0x1000, p::bytes(64, 7)}
    << launch << bad_launch << p::cuda_record_event{21, 20} << p::cuda_wait_event{1, 0, 21}
    << p::cuda_copy_from_device{10, 1, 20, 0x1000, 64} << p::cuda_copy_on_device{1, 0, 0x1000, 0x1040, 64}
    << p::cuda_memset{1, 20, 0x1000, 0xab, 4, 16} << p::cuda_memset{1, 20, 0x1000, 0, 3, UINT64_MAX}
    << p::cuda_synchronize{11, 1, 20, p::cuda_target::stream} << p::cuda_query{12, 1, 21, p::cuda_target::event}
    << p::cuda_elapsed_time{13, 21, 21} << p::cuda_synchronize{14, 1, 0, p::cuda_target::context}
    << p::cuda_link{15, 1, {p::cuda_link_input{1, p::bytes(ptx.begin(), ptx.end()), "a.ptx"}}, {}}
    << p::cuda_copy_to_device_bulk{1, 20, 0x1000, 4096, 600} << p::cuda_copy_to_device_bulk{1, 20, 0x1000, 0, 600}
    << p::cuda_copy_from_device_bulk{17, 1, 20, 0x1000, 64, 601}
    << p::cuda_copy_from_device_bulk{18, 1, 20, 0x1000, uint64_t{1} << 40, 602}
    << p::cuda_mem_free{1, 0x1000} << p::cuda_release{21} << p::cuda_release{20} << p::cuda_release{10}
    << p::cuda_release{1} << p::cuda_mem_alloc{16, 1, 64};
  return s;
}

// A client's bulk stream as the fuzz target's bulk reader takes it (the control
// reader refuses it at its first frame): a chunk, then the window messages,
// whose memfd a seed cannot carry.
stream bulk_stream() {
  stream s;
  s << p::bulk_data{5, 0, 0} << p::window_offer{2, 4096} << p::window_chunk{6, 0, 10, 0, 10}
    << p::read_window_offer{4, 8u << 20};
  return s;
}

// Acks as a client sends them: ack, and lane_ack for its bulk lanes (version 11).
stream acks() {
  stream s;
  s << p::ack{0, 0} << p::ping{1} << p::ack{1, 0} << p::lane_ack{{2, 0, 1}};
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::pair<const char*, stream> seeds[] = {
      {"session_and_objects", session_and_objects()}, {"buffer_commands", buffer_commands()},
      {"programs_and_kernels", programs_and_kernels()}, {"images_and_svm", images_and_svm()},
      {"peers", peers()}, {"files", files()}, {"bulk_stream", bulk_stream()}, {"cuda", cuda()},
      {"acks", acks()},
  };
  for (const auto& [name, s] : seeds) {
    const std::string path = std::string(argv[1]) + "/" + name + ".bin";
    std::FILE* out = std::fopen(path.c_str(), "wb");
    if (out == nullptr || std::fwrite(s.bytes().data(), 1, s.bytes().size(), out) != s.bytes().size() ||
        std::fclose(out) != 0) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
  }
  return 0;
}
