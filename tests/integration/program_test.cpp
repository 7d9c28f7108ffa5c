// Programs and kernels through Ferry, compared with the native platform where the answer
// is the device's own (build logs, work-group info, argument info).
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <set>

#include "cl_helpers.hpp"
#include "kernels.hpp"

namespace ferry::test {

suite_config this_suite() {
  suite_config config;
  config.loader = loader_mode::ferry_and_native;
  return config;
}

namespace {

constexpr const char* broken_source = R"CLC(
kernel void broken(global int* x) {
  x[0] = ferry_undeclared_identifier;
}
)CLC";

constexpr const char* args_source = R"CLC(
typedef struct { int a; float b; long c; } triple;

kernel void args(global const float* restrict in, local int* scratch, constant float* coeffs,
                 float scale, global volatile int* flags, const int count) {
  scratch[get_local_id(0)] = (int)(in[get_global_id(0)] * scale * coeffs[0]) + count;
  barrier(CLK_LOCAL_MEM_FENCE);
  flags[get_global_id(0)] = scratch[(get_local_id(0) + 1) % get_local_size(0)];
}

kernel void scalars(global long* out, char c, short s, int i, long l, float f, float4 v, triple t) {
  out[0] = c; out[1] = s; out[2] = i; out[3] = l;
  out[4] = (long)(f * 1000.0f);
  out[5] = (long)(v.x + 10.0f * v.y + 100.0f * v.z + 1000.0f * v.w);
  out[6] = t.a; out[7] = (long)(t.b * 4.0f); out[8] = t.c;
}

kernel void is_null(global int* maybe, global int* out) {
  out[0] = maybe == 0 ? 1 : 2;
}

kernel void group_sum(global const int* in, local int* scratch, global int* out) {
  size_t l = get_local_id(0);
  scratch[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
    if (l < stride) scratch[l] += scratch[l + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = scratch[0];
}

__attribute__((reqd_work_group_size(4, 1, 1)))
kernel void fixed_group(global int* out) {
  out[get_global_id(0)] = (int)get_local_id(0);
}

kernel void coords(global int* out, int width, int height) {
  size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  out[(z * height + y) * width + x] = (int)(x + 100 * y + 10000 * z);
}
)CLC";

// A minimal SPIR-V module: the header, OpCapability Addresses, OpCapability
// Kernel and OpMemoryModel Physical64 OpenCL. Well-formed IL for OpenCL
// (without kernels), the shape an implementation recognizes as SPIR-V.
constexpr cl_uint minimal_spirv[] = {
    0x07230203, 0x00010000, 0, 1, 0,  // magic, version 1.0, generator, bound, schema
    0x00020011, 4,                    // OpCapability Addresses
    0x00020011, 6,                    // OpCapability Kernel
    0x0003000e, 2, 2,                 // OpMemoryModel Physical64 OpenCL
};

std::set<std::string> split_names(const std::string& joined) {
  std::set<std::string> out;
  size_t start = 0;
  while (start <= joined.size()) {
    const size_t end = std::min(joined.find(';', start), joined.size());
    if (end > start) out.insert(joined.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

class program : public ferry_and_native_test {
 protected:
  template <class T>
  T program_value(cl_program p, cl_program_info param) {
    return info_value<T>(FERRY_IT_INFO_QUERY(clGetProgramInfo, p, param));
  }
  std::string program_string(cl_program p, cl_program_info param) {
    return info_string(FERRY_IT_INFO_QUERY(clGetProgramInfo, p, param));
  }
  template <class T>
  T build_value(cl_program p, cl_device_id d, cl_program_build_info param) {
    return info_value<T>(FERRY_IT_INFO_QUERY(clGetProgramBuildInfo, p, d, param));
  }
  // Runs `iota` from `p` over n ints and checks x[i] == base + extra + i.
  void expect_iota_works(cl_program p, cl_int base, cl_int extra = 0) {
    auto kernel = create_kernel(p, "iota");
    ASSERT_TRUE(kernel);
    constexpr size_t n = 333;
    auto mem = buffer(CL_MEM_WRITE_ONLY, n * sizeof(cl_int));
    cl_mem m = mem;
    ASSERT_CL_OK(clSetKernelArg(kernel, 0, sizeof m, &m));
    ASSERT_CL_OK(clSetKernelArg(kernel, 1, sizeof base, &base));
    ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    std::vector<cl_int> out(n);
    ASSERT_CL_OK(clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, n * sizeof(cl_int), out.data(), 0, nullptr, nullptr));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], base + extra + static_cast<cl_int>(i)) << "at " << i;
  }
};
using kernel = program;

TEST_F(program, source_program_reports_its_source_and_kernels) {
  // Three pieces: NUL-terminated (length 0), explicit length, and a NULL lengths entry.
  const std::string part1 = "kernel void iota(global int* x, int base) {\n";
  const std::string part2 = "  x[get_global_id(0)] = base + (int)get_global_id(0);\n}\nGARBAGE";
  const std::string part3 = "\nkernel void empty() {}\n";
  const char* strings[] = {part1.c_str(), part2.c_str(), part3.c_str()};
  const size_t lengths[] = {0, part2.size() - 7, 0};
  cl_int rc = CL_SUCCESS;
  program_handle p(clCreateProgramWithSource(context_, 3, strings, lengths, &rc));
  ASSERT_CL_OK(rc);
  const std::string source = part1 + part2.substr(0, part2.size() - 7) + part3;
  EXPECT_EQ(program_string(p, CL_PROGRAM_SOURCE), source);
  EXPECT_EQ(program_value<cl_context>(p, CL_PROGRAM_CONTEXT), context_);
  EXPECT_EQ(program_value<cl_uint>(p, CL_PROGRAM_NUM_DEVICES), 1u);
  EXPECT_EQ(info_array<cl_device_id>(FERRY_IT_INFO_QUERY(clGetProgramInfo, p, CL_PROGRAM_DEVICES)),
            std::vector<cl_device_id>{device_});
  EXPECT_EQ(program_value<cl_uint>(p, CL_PROGRAM_REFERENCE_COUNT), 1u);
  EXPECT_EQ(build_value<cl_build_status>(p, device_, CL_PROGRAM_BUILD_STATUS), CL_BUILD_NONE);

  const char* options = "-DUNUSED=1 -cl-fast-relaxed-math";
  ASSERT_CL_OK(clBuildProgram(p, 1, &device_, options, nullptr, nullptr)) << build_log(p, device_);
  EXPECT_EQ(build_value<cl_build_status>(p, device_, CL_PROGRAM_BUILD_STATUS), CL_BUILD_SUCCESS);
  EXPECT_EQ(info_string(FERRY_IT_INFO_QUERY(clGetProgramBuildInfo, p, device_, CL_PROGRAM_BUILD_OPTIONS)), options);
  EXPECT_EQ(build_value<cl_program_binary_type>(p, device_, CL_PROGRAM_BINARY_TYPE),
            cl_program_binary_type{CL_PROGRAM_BINARY_TYPE_EXECUTABLE});
  EXPECT_EQ(program_value<size_t>(p, CL_PROGRAM_NUM_KERNELS), 2u);
  EXPECT_EQ(split_names(program_string(p, CL_PROGRAM_KERNEL_NAMES)), (std::set<std::string>{"iota", "empty"}));
  ASSERT_NO_FATAL_FAILURE(expect_iota_works(p, 17));
}

TEST_F(program, build_options_reach_the_compiler) {
  auto p = build("kernel void iota(global int* x, int base) { x[get_global_id(0)] = base + OFFSET + (int)get_global_id(0); }",
                 "-DOFFSET=1000");
  ASSERT_TRUE(p);
  ASSERT_NO_FATAL_FAILURE(expect_iota_works(p, 7, 1000));
}

TEST_F(program, binaries_round_trip_into_a_working_program) {
  auto original = build(kernels::basics);
  ASSERT_TRUE(original);
  auto sizes = info_array<size_t>(FERRY_IT_INFO_QUERY(clGetProgramInfo, original, CL_PROGRAM_BINARY_SIZES));
  ASSERT_EQ(sizes.size(), 1u);
  ASSERT_GT(sizes[0], 0u);
  std::vector<unsigned char> binary(sizes[0]);
  unsigned char* slots[] = {binary.data()};
  ASSERT_CL_OK(clGetProgramInfo(original, CL_PROGRAM_BINARIES, sizeof slots, slots, nullptr));
  original.reset();

  const unsigned char* binaries[] = {binary.data()};
  const size_t lengths[] = {binary.size()};
  cl_int status = 1, rc = CL_SUCCESS;
  program_handle loaded(clCreateProgramWithBinary(context_, 1, &device_, lengths, binaries, &status, &rc));
  ASSERT_CL_OK(rc);
  EXPECT_CL_OK(status);
  ASSERT_CL_OK(clBuildProgram(loaded, 1, &device_, "", nullptr, nullptr)) << build_log(loaded, device_);
  EXPECT_EQ(split_names(program_string(loaded, CL_PROGRAM_KERNEL_NAMES)),
            (std::set<std::string>{"scale", "add_one", "iota", "empty", "spin"}));
  ASSERT_NO_FATAL_FAILURE(expect_iota_works(loaded, 5));
}

TEST_F(program, build_errors_come_with_the_compiler_log) {
  for (cl_side* side : {&ferry_, &native_}) {
    SCOPED_TRACE(platform_name(side->platform));
    const char* src = broken_source;
    cl_int rc = CL_SUCCESS;
    program_handle p(clCreateProgramWithSource(side->context, 1, &src, nullptr, &rc));
    ASSERT_CL_OK(rc);
    // CL_BUILD_PROGRAM_FAILURE if there is a failure to build the program executable.
    EXPECT_CL(CL_BUILD_PROGRAM_FAILURE, clBuildProgram(p, 1, &side->device, "", nullptr, nullptr));
    EXPECT_EQ(build_value<cl_build_status>(p, side->device, CL_PROGRAM_BUILD_STATUS), CL_BUILD_ERROR);
    const std::string log = build_log(p, side->device);
    EXPECT_NE(log.find("ferry_undeclared_identifier"), std::string::npos) << log;
    // CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built executable for program.
    EXPECT_EQ(clCreateKernel(p, "broken", &rc), nullptr);
    EXPECT_CL(CL_INVALID_PROGRAM_EXECUTABLE, rc);
  }
}

TEST_F(program, build_callback_runs_once_the_build_is_done) {
  static std::mutex mutex;
  static std::condition_variable cv;
  static int calls = 0;  // guarded by mutex
  {
    std::lock_guard lock(mutex);
    calls = 0;
  }
  const char* src = kernels::basics;
  cl_int rc = CL_SUCCESS;
  program_handle p(clCreateProgramWithSource(context_, 1, &src, nullptr, &rc));
  ASSERT_CL_OK(rc);
  ASSERT_CL_OK(clBuildProgram(
      p, 1, &device_, "",
      [](cl_program, void*) {
        std::lock_guard lock(mutex);
        ++calls;
        cv.notify_all();
      },
      nullptr));
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [] { return calls > 0; }));
  }
  EXPECT_EQ(build_value<cl_build_status>(p, device_, CL_PROGRAM_BUILD_STATUS), CL_BUILD_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(expect_iota_works(p, 3));
  std::lock_guard lock(mutex);
  EXPECT_EQ(calls, 1);
}

TEST_F(program, compile_with_headers_then_link_makes_an_executable) {
  const char* header_src = "int offset_of(int i);\n#define BASE 500\n";
  const char* user_src =
      "#include \"ferry/helpers.h\"\n"
      "kernel void iota(global int* x, int base) {\n"
      "  x[get_global_id(0)] = offset_of((int)get_global_id(0)) + base - BASE;\n}\n";
  const char* lib_src = "int offset_of(int i) { return i + 500; }\n";
  cl_int rc = CL_SUCCESS;
  program_handle header(clCreateProgramWithSource(context_, 1, &header_src, nullptr, &rc));
  ASSERT_CL_OK(rc);
  program_handle user(clCreateProgramWithSource(context_, 1, &user_src, nullptr, &rc));
  ASSERT_CL_OK(rc);
  program_handle lib(clCreateProgramWithSource(context_, 1, &lib_src, nullptr, &rc));
  ASSERT_CL_OK(rc);
  const cl_program headers[] = {header};
  const char* header_names[] = {"ferry/helpers.h"};
  ASSERT_CL_OK(clCompileProgram(user, 1, &device_, "", 1, headers, header_names, nullptr, nullptr))
      << build_log(user, device_);
  ASSERT_CL_OK(clCompileProgram(lib, 1, &device_, "", 0, nullptr, nullptr, nullptr, nullptr)) << build_log(lib, device_);
  EXPECT_EQ(build_value<cl_program_binary_type>(user, device_, CL_PROGRAM_BINARY_TYPE),
            cl_program_binary_type{CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT});
  const cl_program inputs[] = {user, lib};
  program_handle linked(clLinkProgram(context_, 1, &device_, "", 2, inputs, nullptr, nullptr, &rc));
  ASSERT_CL_OK(rc);
  EXPECT_EQ(build_value<cl_program_binary_type>(linked, device_, CL_PROGRAM_BINARY_TYPE),
            cl_program_binary_type{CL_PROGRAM_BINARY_TYPE_EXECUTABLE});
  ASSERT_NO_FATAL_FAILURE(expect_iota_works(linked, 40));
  // A compile error is CL_COMPILE_PROGRAM_FAILURE, with a log.
  const char* bad = broken_source;
  program_handle broken(clCreateProgramWithSource(context_, 1, &bad, nullptr, &rc));
  ASSERT_CL_OK(rc);
  EXPECT_CL(CL_COMPILE_PROGRAM_FAILURE, clCompileProgram(broken, 1, &device_, "", 0, nullptr, nullptr, nullptr, nullptr));
  EXPECT_NE(build_log(broken, device_).find("ferry_undeclared_identifier"), std::string::npos);
}

TEST_F(program, il_programs_need_il_and_a_device_that_takes_it) {
  cl_int rc = CL_SUCCESS;
  for (cl_side* side : {&ferry_, &native_}) {
    SCOPED_TRACE(platform_name(side->platform));
    // CL_INVALID_VALUE if il is NULL or if length is zero.
    EXPECT_EQ(clCreateProgramWithIL(side->context, nullptr, sizeof minimal_spirv, &rc), nullptr);
    EXPECT_CL(CL_INVALID_VALUE, rc);
    EXPECT_EQ(clCreateProgramWithIL(side->context, minimal_spirv, 0, &rc), nullptr);
    EXPECT_CL(CL_INVALID_VALUE, rc);
    // CL_INVALID_CONTEXT if context is not a valid context.
    EXPECT_EQ(clCreateProgramWithIL(nullptr, minimal_spirv, sizeof minimal_spirv, &rc), nullptr);
    EXPECT_CL(CL_INVALID_CONTEXT, rc);
  }
  // Ferry reports the device's IL support as the device does.
  const std::string il_version = device_string(device_, CL_DEVICE_IL_VERSION);
  EXPECT_EQ(il_version, device_string(native_.device, CL_DEVICE_IL_VERSION));
  if (!il_version.empty()) GTEST_SKIP() << "the device takes IL (" << il_version << ")";
  // CL_INVALID_OPERATION if no devices in context support intermediate
  // language programs. Debian's PoCL 3.1 is built without SPIR-V and answers
  // CL_INVALID_VALUE for any IL instead, so the clause is checked on Ferry.
  EXPECT_EQ(clCreateProgramWithIL(context_, minimal_spirv, sizeof minimal_spirv, &rc), nullptr);
  EXPECT_CL_SPEC(CL_INVALID_OPERATION, rc);
  EXPECT_EQ(clCreateProgramWithIL(native_.context, minimal_spirv, sizeof minimal_spirv, &rc), nullptr);
  EXPECT_TRUE(rc == CL_INVALID_OPERATION || rc == CL_INVALID_VALUE) << cl_error_name(rc);
}

TEST_F(program, source_programs_have_no_il_and_take_no_specialization_constants) {
  const cl_int value = 7;
  for (cl_side* side : {&ferry_, &native_}) {
    SCOPED_TRACE(platform_name(side->platform));
    auto p = build_program(side->context, side->device, kernels::basics);
    ASSERT_TRUE(p);
    // A program not created from IL answers an empty CL_PROGRAM_IL.
    size_t size = 1;
    EXPECT_CL_OK(clGetProgramInfo(p, CL_PROGRAM_IL, 0, nullptr, &size));
    EXPECT_EQ(size, 0u);
    // CL_INVALID_PROGRAM if program is not a valid program object created
    // from an intermediate language (e.g. SPIR-V).
    EXPECT_CL(CL_INVALID_PROGRAM, clSetProgramSpecializationConstant(p, 0, sizeof value, &value));
  }
  // Before any build too; asked of Ferry only, since PoCL 3.1 aborts the
  // process on a program that was never built.
  if constexpr (!self_check) {
    const char* src = kernels::basics;
    cl_int rc = CL_SUCCESS;
    program_handle unbuilt(clCreateProgramWithSource(context_, 1, &src, nullptr, &rc));
    ASSERT_CL_OK(rc);
    EXPECT_CL(CL_INVALID_PROGRAM, clSetProgramSpecializationConstant(unbuilt, 0, sizeof value, &value));
    EXPECT_CL(CL_INVALID_PROGRAM, clSetProgramSpecializationConstant(unbuilt, 0, sizeof value, nullptr));
  }
}

TEST_F(kernel, create_kernels_in_program_makes_one_per_kernel) {
  auto p = build(kernels::basics);
  ASSERT_TRUE(p);
  cl_uint count = 0;
  ASSERT_CL_OK(clCreateKernelsInProgram(p, 0, nullptr, &count));
  ASSERT_EQ(count, 5u);
  std::vector<cl_kernel> raw(count);
  ASSERT_CL_OK(clCreateKernelsInProgram(p, count, raw.data(), nullptr));
  std::vector<kernel_handle> owned;
  std::set<std::string> names;
  for (cl_kernel k : raw) {
    owned.emplace_back(k);
    names.insert(info_string(FERRY_IT_INFO_QUERY(clGetKernelInfo, k, CL_KERNEL_FUNCTION_NAME)));
  }
  EXPECT_EQ(names, (std::set<std::string>{"scale", "add_one", "iota", "empty", "spin"}));
}

TEST_F(kernel, info_describes_the_kernel_like_native) {
  auto p = build(args_source);
  auto np = build_program(native_.context, native_.device, args_source);
  ASSERT_TRUE(p && np);
  for (const char* name : {"args", "scalars", "fixed_group", "coords"}) {
    SCOPED_TRACE(name);
    auto k = create_kernel(p, name);
    auto nk = create_kernel(np, name);
    ASSERT_TRUE(k && nk);
    EXPECT_EQ(info_string(FERRY_IT_INFO_QUERY(clGetKernelInfo, k, CL_KERNEL_FUNCTION_NAME)), name);
    EXPECT_EQ(info_value<cl_uint>(FERRY_IT_INFO_QUERY(clGetKernelInfo, k, CL_KERNEL_NUM_ARGS)),
              info_value<cl_uint>(FERRY_IT_INFO_QUERY(clGetKernelInfo, nk, CL_KERNEL_NUM_ARGS)));
    EXPECT_EQ(info_value<cl_context>(FERRY_IT_INFO_QUERY(clGetKernelInfo, k, CL_KERNEL_CONTEXT)), context_);
    EXPECT_EQ(info_value<cl_program>(FERRY_IT_INFO_QUERY(clGetKernelInfo, k, CL_KERNEL_PROGRAM)), p.get());
    EXPECT_EQ(info_value<cl_uint>(FERRY_IT_INFO_QUERY(clGetKernelInfo, k, CL_KERNEL_REFERENCE_COUNT)), 1u);
    EXPECT_EQ(info_string(FERRY_IT_INFO_QUERY(clGetKernelInfo, k, CL_KERNEL_ATTRIBUTES)),
              info_string(FERRY_IT_INFO_QUERY(clGetKernelInfo, nk, CL_KERNEL_ATTRIBUTES)));
  }
}

TEST_F(kernel, work_group_info_matches_native) {
  auto p = build(args_source);
  auto np = build_program(native_.context, native_.device, args_source);
  ASSERT_TRUE(p && np);
  for (const char* name : {"args", "group_sum", "fixed_group"}) {
    SCOPED_TRACE(name);
    auto k = create_kernel(p, name);
    auto nk = create_kernel(np, name);
    ASSERT_TRUE(k && nk);
    if (std::string_view(name) != "fixed_group") {
      // Local memory depends on the __local argument sizes.
      ASSERT_CL_OK(clSetKernelArg(k, 1, 64 * sizeof(cl_int), nullptr));
      ASSERT_CL_OK(clSetKernelArg(nk, 1, 64 * sizeof(cl_int), nullptr));
    }
    auto wg = [](cl_kernel kk, cl_device_id d, cl_kernel_work_group_info param, auto tag) {
      return info_value<decltype(tag)>(FERRY_IT_INFO_QUERY(clGetKernelWorkGroupInfo, kk, d, param));
    };
    EXPECT_EQ(wg(k, device_, CL_KERNEL_WORK_GROUP_SIZE, size_t{}), wg(nk, native_.device, CL_KERNEL_WORK_GROUP_SIZE, size_t{}));
    EXPECT_EQ(wg(k, device_, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, size_t{}),
              wg(nk, native_.device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, size_t{}));
    EXPECT_EQ(wg(k, device_, CL_KERNEL_LOCAL_MEM_SIZE, cl_ulong{}), wg(nk, native_.device, CL_KERNEL_LOCAL_MEM_SIZE, cl_ulong{}));
    EXPECT_EQ(wg(k, device_, CL_KERNEL_PRIVATE_MEM_SIZE, cl_ulong{}), wg(nk, native_.device, CL_KERNEL_PRIVATE_MEM_SIZE, cl_ulong{}));
    EXPECT_EQ(info_array<size_t>(FERRY_IT_INFO_QUERY(clGetKernelWorkGroupInfo, k, device_, CL_KERNEL_COMPILE_WORK_GROUP_SIZE)),
              info_array<size_t>(FERRY_IT_INFO_QUERY(clGetKernelWorkGroupInfo, nk, native_.device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE)));
  }
  auto fixed = create_kernel(p, "fixed_group");
  EXPECT_EQ(info_array<size_t>(FERRY_IT_INFO_QUERY(clGetKernelWorkGroupInfo, fixed, device_, CL_KERNEL_COMPILE_WORK_GROUP_SIZE)),
            (std::vector<size_t>{4, 1, 1}));
  // A NULL device is fine when the kernel's program has one device.
  size_t size = 0;
  EXPECT_CL_OK(clGetKernelWorkGroupInfo(fixed, nullptr, CL_KERNEL_WORK_GROUP_SIZE, sizeof size, &size, nullptr));
}

TEST_F(kernel, arg_info_with_kernel_arg_info_matches_native_and_the_source) {
  auto p = build(args_source, "-cl-kernel-arg-info");
  auto np = build_program(native_.context, native_.device, args_source, "-cl-kernel-arg-info");
  ASSERT_TRUE(p && np);
  auto k = create_kernel(p, "args");
  auto nk = create_kernel(np, "args");
  ASSERT_TRUE(k && nk);
  struct expected_arg {
    cl_kernel_arg_address_qualifier address;
    cl_kernel_arg_type_qualifier type_qualifier;
    const char* type_name;
    const char* name;
  };
  const expected_arg expected[] = {
      {CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_RESTRICT, "float*", "in"},
      {CL_KERNEL_ARG_ADDRESS_LOCAL, CL_KERNEL_ARG_TYPE_NONE, "int*", "scratch"},
      {CL_KERNEL_ARG_ADDRESS_CONSTANT, CL_KERNEL_ARG_TYPE_CONST, "float*", "coeffs"},
      {CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE, "float", "scale"},
      {CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_TYPE_VOLATILE, "int*", "flags"},
      {CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE, "int", "count"},
  };
  for (cl_uint i = 0; i < std::size(expected); ++i) {
    SCOPED_TRACE("argument " + std::to_string(i));
    auto arg = [&](cl_kernel kk, cl_kernel_arg_info param, auto tag) {
      return info_value<decltype(tag)>(FERRY_IT_INFO_QUERY(clGetKernelArgInfo, kk, i, param));
    };
    auto arg_string = [&](cl_kernel kk, cl_kernel_arg_info param) {
      return info_string(FERRY_IT_INFO_QUERY(clGetKernelArgInfo, kk, i, param));
    };
    for (auto param : {CL_KERNEL_ARG_ADDRESS_QUALIFIER, CL_KERNEL_ARG_ACCESS_QUALIFIER})
      EXPECT_EQ(arg(k, param, cl_uint{}), arg(nk, param, cl_uint{}));
    EXPECT_EQ(arg(k, CL_KERNEL_ARG_TYPE_QUALIFIER, cl_bitfield{}), arg(nk, CL_KERNEL_ARG_TYPE_QUALIFIER, cl_bitfield{}));
    EXPECT_EQ(arg_string(k, CL_KERNEL_ARG_TYPE_NAME), arg_string(nk, CL_KERNEL_ARG_TYPE_NAME));
    EXPECT_EQ(arg_string(k, CL_KERNEL_ARG_NAME), arg_string(nk, CL_KERNEL_ARG_NAME));
    EXPECT_EQ(arg(k, CL_KERNEL_ARG_ADDRESS_QUALIFIER, cl_uint{}), expected[i].address);
    EXPECT_EQ(arg(k, CL_KERNEL_ARG_ACCESS_QUALIFIER, cl_uint{}), cl_uint{CL_KERNEL_ARG_ACCESS_NONE});
    EXPECT_EQ(arg_string(k, CL_KERNEL_ARG_TYPE_NAME), expected[i].type_name);
    EXPECT_EQ(arg_string(k, CL_KERNEL_ARG_NAME), expected[i].name);
    EXPECT_EQ(arg(k, CL_KERNEL_ARG_TYPE_QUALIFIER, cl_bitfield{}) & ~cl_bitfield{CL_KERNEL_ARG_TYPE_CONST},
              expected[i].type_qualifier & ~cl_bitfield{CL_KERNEL_ARG_TYPE_CONST});
  }
  // CL_INVALID_ARG_INDEX if arg_indx is not a valid argument index.
  cl_uint q = 0;
  EXPECT_CL(CL_INVALID_ARG_INDEX, clGetKernelArgInfo(k, 6, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, nullptr));
  EXPECT_CL(CL_INVALID_ARG_INDEX, clGetKernelArgInfo(nk, 6, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, nullptr));
}

TEST_F(kernel, sub_group_info_answers_like_native) {
  auto p = build(args_source);
  auto np = build_program(native_.context, native_.device, args_source);
  ASSERT_TRUE(p && np);
  auto k = create_kernel(p, "args");
  auto nk = create_kernel(np, "args");
  const size_t local[3] = {64, 1, 1};
  for (cl_kernel_sub_group_info param : {CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
                                         CL_KERNEL_MAX_NUM_SUB_GROUPS, CL_KERNEL_COMPILE_NUM_SUB_GROUPS}) {
    SCOPED_TRACE("param 0x" + std::to_string(param));
    size_t ferry_value = 0, native_value = 0;
    const cl_int native_rc = clGetKernelSubGroupInfo(nk, native_.device, param, sizeof(size_t), local,
                                                     sizeof native_value, &native_value, nullptr);
    EXPECT_CL(native_rc, clGetKernelSubGroupInfo(k, device_, param, sizeof(size_t), local, sizeof ferry_value,
                                                 &ferry_value, nullptr));
    EXPECT_EQ(ferry_value, native_value);
  }
  size_t value = 0;
  // A parameter of clGetKernelWorkGroupInfo is no sub-group query, and the reverse.
  EXPECT_CL(clGetKernelSubGroupInfo(nk, native_.device, CL_KERNEL_WORK_GROUP_SIZE, 0, nullptr, sizeof value, &value,
                                    nullptr),
            clGetKernelSubGroupInfo(k, device_, CL_KERNEL_WORK_GROUP_SIZE, 0, nullptr, sizeof value, &value, nullptr));
  EXPECT_CL(clGetKernelWorkGroupInfo(nk, native_.device, CL_KERNEL_MAX_NUM_SUB_GROUPS, sizeof value, &value, nullptr),
            clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_MAX_NUM_SUB_GROUPS, sizeof value, &value, nullptr));
  EXPECT_CL(CL_INVALID_KERNEL, clGetKernelSubGroupInfo(nullptr, device_, CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, nullptr,
                                                       sizeof value, &value, nullptr));
  EXPECT_CL(CL_INVALID_DEVICE, clGetKernelSubGroupInfo(k, native_.device, CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, nullptr,
                                                       sizeof value, &value, nullptr));
}

TEST_F(kernel, arg_info_without_the_option_answers_like_native) {
  auto p = build(args_source);
  auto np = build_program(native_.context, native_.device, args_source);
  ASSERT_TRUE(p && np);
  auto k = create_kernel(p, "args");
  auto nk = create_kernel(np, "args");
  size_t size = 0;
  // CL_KERNEL_ARG_INFO_NOT_AVAILABLE if the argument information is not available.
  const cl_int native_rc = clGetKernelArgInfo(nk, 0, CL_KERNEL_ARG_NAME, 0, nullptr, &size);
  EXPECT_TRUE(native_rc == CL_SUCCESS || native_rc == CL_KERNEL_ARG_INFO_NOT_AVAILABLE) << cl_error_name(native_rc);
  EXPECT_CL(native_rc, clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_NAME, 0, nullptr, &size));
}

TEST_F(kernel, local_memory_arguments_get_one_allocation_per_group) {
  auto p = build(args_source);
  ASSERT_TRUE(p);
  auto k = create_kernel(p, "group_sum");
  constexpr size_t n = 1024, local = 64;
  std::vector<cl_int> in(n);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<cl_int>(i % 97);
  auto min = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_int), in.data());
  auto mout = buffer(CL_MEM_WRITE_ONLY, n / local * sizeof(cl_int));
  cl_mem a = min, c = mout;
  ASSERT_CL_OK(clSetKernelArg(k, 0, sizeof a, &a));
  ASSERT_CL_OK(clSetKernelArg(k, 1, local * sizeof(cl_int), nullptr));
  ASSERT_CL_OK(clSetKernelArg(k, 2, sizeof c, &c));
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &n, &local, 0, nullptr, nullptr));
  std::vector<cl_int> out(n / local);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, mout, CL_TRUE, 0, out.size() * sizeof(cl_int), out.data(), 0, nullptr, nullptr));
  for (size_t g = 0; g < n / local; ++g) {
    cl_int want = 0;
    for (size_t i = g * local; i < (g + 1) * local; ++i) want += in[i];
    ASSERT_EQ(out[g], want) << "group " << g;
  }
}

TEST_F(kernel, null_buffer_arguments_reach_the_kernel_as_null) {
  auto p = build(args_source);
  ASSERT_TRUE(p);
  auto k = create_kernel(p, "is_null");
  auto out = buffer(CL_MEM_READ_WRITE, sizeof(cl_int));
  auto some = buffer(CL_MEM_READ_WRITE, sizeof(cl_int));
  cl_mem o = out, s = some, null_mem = nullptr;
  ASSERT_CL_OK(clSetKernelArg(k, 1, sizeof o, &o));
  auto run = [&] {
    const size_t one = 1;
    cl_int v = -1;
    EXPECT_CL_OK(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &one, nullptr, 0, nullptr, nullptr));
    EXPECT_CL_OK(clEnqueueReadBuffer(queue_, out, CL_TRUE, 0, sizeof v, &v, 0, nullptr, nullptr));
    return v;
  };
  // "If the argument is a buffer object, the arg_value pointer can be NULL or point to a
  // NULL value in which case a NULL value will be used as the value for the argument."
  ASSERT_CL_OK(clSetKernelArg(k, 0, sizeof(cl_mem), nullptr));
  EXPECT_EQ(run(), 1);
  ASSERT_CL_OK(clSetKernelArg(k, 0, sizeof s, &s));
  EXPECT_EQ(run(), 2);
  ASSERT_CL_OK(clSetKernelArg(k, 0, sizeof null_mem, &null_mem));
  EXPECT_EQ(run(), 1);
}

TEST_F(kernel, scalar_vector_and_struct_arguments_arrive_intact) {
  auto p = build(args_source);
  ASSERT_TRUE(p);
  auto k = create_kernel(p, "scalars");
  auto out = buffer(CL_MEM_WRITE_ONLY, 9 * sizeof(cl_long));
  cl_mem o = out;
  const cl_char c = -5;
  const cl_short s = -30000;
  const cl_int i = 2'000'000'000;
  const cl_long l = -9'000'000'000'000'000'000;
  const cl_float f = 1.5f;
  const cl_float4 v = {{1.0f, 2.0f, 3.0f, 4.0f}};
  struct triple {
    cl_int a;
    cl_float b;
    cl_long c;
  } t{-7, 2.25f, 1ll << 40};
  ASSERT_CL_OK(clSetKernelArg(k, 0, sizeof o, &o));
  ASSERT_CL_OK(clSetKernelArg(k, 1, sizeof c, &c));
  ASSERT_CL_OK(clSetKernelArg(k, 2, sizeof s, &s));
  ASSERT_CL_OK(clSetKernelArg(k, 3, sizeof i, &i));
  ASSERT_CL_OK(clSetKernelArg(k, 4, sizeof l, &l));
  ASSERT_CL_OK(clSetKernelArg(k, 5, sizeof f, &f));
  ASSERT_CL_OK(clSetKernelArg(k, 6, sizeof v, &v));
  ASSERT_CL_OK(clSetKernelArg(k, 7, sizeof t, &t));
  ASSERT_CL_OK(clEnqueueTask(queue_, k, 0, nullptr, nullptr));
  std::vector<cl_long> got(9);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, out, CL_TRUE, 0, got.size() * sizeof(cl_long), got.data(), 0, nullptr, nullptr));
  EXPECT_EQ(got, (std::vector<cl_long>{c, s, i, l, 1500, 4321, -7, 9, 1ll << 40}));
}

TEST_F(kernel, arguments_are_captured_at_enqueue_time) {
  auto p = build(kernels::basics);
  ASSERT_TRUE(p);
  auto k = create_kernel(p, "iota");
  constexpr size_t n = 64;
  auto first = buffer(CL_MEM_WRITE_ONLY, n * sizeof(cl_int));
  auto second = buffer(CL_MEM_WRITE_ONLY, n * sizeof(cl_int));
  cl_mem a = first, b = second;
  cl_int base = 10;
  ASSERT_CL_OK(clSetKernelArg(k, 0, sizeof a, &a));
  ASSERT_CL_OK(clSetKernelArg(k, 1, sizeof base, &base));
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
  base = 20;  // changing the host variable after clSetKernelArg has no effect
  ASSERT_CL_OK(clSetKernelArg(k, 0, sizeof b, &b));
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
  base = 30;
  ASSERT_CL_OK(clSetKernelArg(k, 1, sizeof base, &base));  // affects only later enqueues
  std::vector<cl_int> x(n), y(n);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, first, CL_TRUE, 0, n * sizeof(cl_int), x.data(), 0, nullptr, nullptr));
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, second, CL_TRUE, 0, n * sizeof(cl_int), y.data(), 0, nullptr, nullptr));
  EXPECT_EQ(x[5], 15);
  EXPECT_EQ(y[5], 15);
}

TEST_F(kernel, ndrange_with_offset_and_three_dimensions_covers_every_item) {
  auto p = build(args_source);
  ASSERT_TRUE(p);
  auto k = create_kernel(p, "coords");
  const cl_int width = 12, height = 10, depth = 6;
  auto out = buffer(CL_MEM_READ_WRITE, width * height * depth * sizeof(cl_int));
  const cl_int fill = -1;
  ASSERT_CL_OK(clEnqueueFillBuffer(queue_, out, &fill, sizeof fill, 0, width * height * depth * sizeof(cl_int), 0, nullptr, nullptr));
  cl_mem o = out;
  ASSERT_CL_OK(clSetKernelArg(k, 0, sizeof o, &o));
  ASSERT_CL_OK(clSetKernelArg(k, 1, sizeof width, &width));
  ASSERT_CL_OK(clSetKernelArg(k, 2, sizeof height, &height));
  const size_t offset[3] = {2, 1, 3}, global[3] = {8, 6, 2}, local[3] = {4, 2, 1};
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, k, 3, offset, global, local, 0, nullptr, nullptr));
  std::vector<cl_int> got(width * height * depth);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, out, CL_TRUE, 0, got.size() * sizeof(cl_int), got.data(), 0, nullptr, nullptr));
  for (cl_int z = 0; z < depth; ++z)
    for (cl_int y = 0; y < height; ++y)
      for (cl_int x = 0; x < width; ++x) {
        const bool inside = x >= 2 && x < 10 && y >= 1 && y < 7 && z >= 3 && z < 5;
        ASSERT_EQ(got[(z * height + y) * width + x], inside ? x + 100 * y + 10000 * z : -1)
            << "at " << x << "," << y << "," << z;
      }
}

}  // namespace ferry::test
