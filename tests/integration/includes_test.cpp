// Kernel sources that #include the application's headers (issue 19, item 5): the client
// finds them through its own -I options and working directory, ships them with the build,
// and the daemon compiles from a temporary tree that is gone once the build returns.
//
// Client and daemon share this machine, so an absolute -I works even without shipping.
// What only shipping makes work is what the daemon cannot see: this process changes its
// working directory after the daemon started (relative -I options, the source's own quoted
// includes), and a relative -I naming a directory that exists only beside the daemon must
// not reach it. The daemon gets a TMPDIR of its own, so the tests can see that its build
// trees are gone after every build.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cl_helpers.hpp"
#include "protocol/limits.hpp"

namespace ferry::test {

namespace {

namespace fs = std::filesystem;

std::string make_temp_dir(const std::string& base, const char* prefix) {
  std::string pattern = base + "/" + prefix + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return {};
  return pattern;
}

std::string process_tmpdir() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

// The daemon's TMPDIR, where it makes its build trees; removed when this process exits.
struct daemon_tmpdir_holder {
  std::string path = make_temp_dir(process_tmpdir(), "ferry-it-daemon-tmp-");
  ~daemon_tmpdir_holder() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};
const std::string& daemon_tmpdir() {
  static const daemon_tmpdir_holder holder;
  return holder.path;
}

constexpr const char* axpy_h =
    "#include \"sub/scale.h\"\n"
    "#define AXPY_OFFSET 0.5f\n"
    "float axpy(float a, float x, float y) { return SCALE(a, x) + y + AXPY_OFFSET; }\n";
constexpr const char* scale_h =
    "#warning ferry_scale_header_seen\n"
    "#define SCALE(a, x) ((a) * (x))\n";
constexpr const char* axpy_kernel =
    "kernel void axpy_kernel(float a, global const float* x, global float* y) {\n"
    "  size_t i = get_global_id(0);\n"
    "  y[i] = axpy(a, x[i], y[i]);\n"
    "}\n";

}  // namespace

suite_config this_suite() {
  suite_config config;
  config.daemon_env = {{"TMPDIR", daemon_tmpdir()}};
  return config;
}

class includes : public ferry_test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(daemon_tmpdir().empty());
    std::error_code ec;
    daemon_cwd_ = fs::current_path(ec).string();
    ASSERT_FALSE(ec) << ec.message();
    // The application's tree: inc/axpy.h includes inc/sub/scale.h with a quoted include.
    client_dir_ = make_temp_dir(process_tmpdir(), "ferry-it-client-");
    ASSERT_FALSE(client_dir_.empty());
    write(client_dir_ + "/inc/axpy.h", axpy_h);
    write(client_dir_ + "/inc/sub/scale.h", scale_h);
    ASSERT_NO_FATAL_FAILURE(ferry_test::SetUp());
  }
  void TearDown() override {
    // Back where the daemon runs, whatever the test did.
    EXPECT_EQ(::chdir(daemon_cwd_.c_str()), 0);
    ferry_test::TearDown();
    std::error_code ec;
    if (!client_dir_.empty()) fs::remove_all(client_dir_, ec);
  }

  static void write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << text;
  }

  // The client moves to its own directory; the daemon keeps the one it started in.
  void enter_client_dir() { ASSERT_EQ(::chdir(client_dir_.c_str()), 0) << client_dir_; }

  program_handle create(const std::string& source) {
    const char* text = source.c_str();
    cl_int rc = CL_SUCCESS;
    program_handle p(clCreateProgramWithSource(context_, 1, &text, nullptr, &rc));
    EXPECT_CL_OK(rc);
    return p;
  }

  // Every build tree the daemon made is gone.
  void expect_no_build_trees() {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(daemon_tmpdir(), ec))
      ADD_FAILURE() << "left behind in the daemon's TMPDIR: " << entry.path();
    EXPECT_FALSE(ec) << ec.message();
  }

  // A log that names no path of the daemon's build trees.
  void expect_no_server_paths(const std::string& log) {
    EXPECT_EQ(log.find("ferry-build-"), std::string::npos) << log;
    EXPECT_EQ(log.find(daemon_tmpdir()), std::string::npos) << log;
  }

  // Runs axpy_kernel over n floats and checks y = a * x + y + 0.5.
  void expect_axpy_works(cl_program p) {
    auto kernel = create_kernel(p, "axpy_kernel");
    ASSERT_TRUE(kernel);
    constexpr size_t n = 257;
    std::vector<float> x(n), y(n);
    for (size_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i);
      y[i] = 1000.0f + static_cast<float>(i);
    }
    auto xs = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), x.data());
    auto ys = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float), y.data());
    const float a = 3.0f;
    cl_mem xm = xs, ym = ys;
    ASSERT_CL_OK(clSetKernelArg(kernel, 0, sizeof a, &a));
    ASSERT_CL_OK(clSetKernelArg(kernel, 1, sizeof xm, &xm));
    ASSERT_CL_OK(clSetKernelArg(kernel, 2, sizeof ym, &ym));
    ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    std::vector<float> out(n);
    ASSERT_CL_OK(clEnqueueReadBuffer(queue_, ys, CL_TRUE, 0, n * sizeof(float), out.data(), 0, nullptr, nullptr));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], a * x[i] + y[i] + 0.5f) << "at " << i;
  }

  std::string daemon_cwd_;
  std::string client_dir_;
};

TEST_F(includes, an_absolute_include_directory_builds_and_the_log_names_the_clients_headers) {
  const std::string options = "-I " + client_dir_ + "/inc";
  auto p = create("#include \"axpy.h\"\n" + std::string(axpy_kernel));
  ASSERT_TRUE(p);
  ASSERT_CL_OK(clBuildProgram(p, 1, &device_, options.c_str(), nullptr, nullptr)) << build_log(p, device_);
  expect_no_build_trees();
  ASSERT_NO_FATAL_FAILURE(expect_axpy_works(p));
  // The warning in scale.h is reported where the client keeps scale.h.
  const std::string log = build_log(p, device_);
  EXPECT_NE(log.find(client_dir_ + "/inc/sub/scale.h"), std::string::npos) << log;
  EXPECT_NE(log.find("ferry_scale_header_seen"), std::string::npos) << log;
  expect_no_server_paths(log);
  // The options are the application's, not the daemon's rewritten ones.
  EXPECT_EQ(info_string(FERRY_IT_INFO_QUERY(clGetProgramBuildInfo, p, device_, CL_PROGRAM_BUILD_OPTIONS)), options);
}

TEST_F(includes, relative_include_directories_resolve_in_the_clients_working_directory) {
  ASSERT_NO_FATAL_FAILURE(enter_client_dir());
  for (const char* options : {"-I inc", "-Iinc", "-I ./inc/ -DUNUSED=1"}) {
    SCOPED_TRACE(options);
    auto p = create("#include <axpy.h>\n" + std::string(axpy_kernel));
    ASSERT_TRUE(p);
    ASSERT_CL_OK(clBuildProgram(p, 1, &device_, options, nullptr, nullptr)) << build_log(p, device_);
    expect_no_build_trees();
    ASSERT_NO_FATAL_FAILURE(expect_axpy_works(p));
    expect_no_server_paths(build_log(p, device_));
  }
}

TEST_F(includes, the_sources_quoted_includes_resolve_in_the_clients_working_directory) {
  ASSERT_NO_FATAL_FAILURE(enter_client_dir());
  auto p = create("#include \"inc/axpy.h\"\n" + std::string(axpy_kernel));
  ASSERT_TRUE(p);
  ASSERT_CL_OK(clBuildProgram(p, 1, &device_, "", nullptr, nullptr)) << build_log(p, device_);
  expect_no_build_trees();
  ASSERT_NO_FATAL_FAILURE(expect_axpy_works(p));
}

TEST_F(includes, compile_and_link_take_the_clients_headers_too) {
  ASSERT_NO_FATAL_FAILURE(enter_client_dir());
  auto p = create("#include \"axpy.h\"\n" + std::string(axpy_kernel));
  ASSERT_TRUE(p);
  ASSERT_CL_OK(clCompileProgram(p, 1, &device_, "-I inc", 0, nullptr, nullptr, nullptr, nullptr))
      << build_log(p, device_);
  expect_no_build_trees();
  EXPECT_NE(build_log(p, device_).find(client_dir_ + "/inc/sub/scale.h"), std::string::npos)
      << build_log(p, device_);
  const cl_program inputs[] = {p};
  cl_int rc = CL_SUCCESS;
  program_handle linked(clLinkProgram(context_, 1, &device_, "", 1, inputs, nullptr, nullptr, &rc));
  ASSERT_CL_OK(rc);
  ASSERT_NO_FATAL_FAILURE(expect_axpy_works(linked));
}

TEST_F(includes, a_missing_header_fails_the_build_with_a_log_that_names_it) {
  ASSERT_NO_FATAL_FAILURE(enter_client_dir());
  auto p = create("#include \"axpy.h\"\n#include \"ferry_missing_header.h\"\n" + std::string(axpy_kernel));
  ASSERT_TRUE(p);
  // CL_BUILD_PROGRAM_FAILURE if there is a failure to build the program executable.
  EXPECT_CL(CL_BUILD_PROGRAM_FAILURE, clBuildProgram(p, 1, &device_, "-I inc", nullptr, nullptr));
  expect_no_build_trees();
  const std::string log = build_log(p, device_);
  EXPECT_NE(log.find("ferry_missing_header.h"), std::string::npos) << log;
  expect_no_server_paths(log);
}

TEST_F(includes, a_relative_directory_that_exists_only_beside_the_daemon_is_not_searched) {
  // Beside the daemon (its working directory), but not in the client's.
  const std::string server_only = make_temp_dir(daemon_cwd_, "ferry-it-server-only-");
  ASSERT_FALSE(server_only.empty());
  write(server_only + "/server_only.h", "#define FROM_THE_SERVER 1\n");
  ASSERT_NO_FATAL_FAILURE(enter_client_dir());
  const std::string options = "-I " + fs::path(server_only).filename().string();
  auto p = create("#include \"server_only.h\"\nkernel void k(global int* x) { x[0] = FROM_THE_SERVER; }\n");
  ASSERT_TRUE(p);
  EXPECT_CL(CL_BUILD_PROGRAM_FAILURE, clBuildProgram(p, 1, &device_, options.c_str(), nullptr, nullptr));
  const std::string log = build_log(p, device_);
  EXPECT_NE(log.find("server_only.h"), std::string::npos) << log;
  expect_no_server_paths(log);
  expect_no_build_trees();
  std::error_code ec;
  fs::remove_all(server_only, ec);
}

TEST_F(includes, headers_over_the_limit_fail_with_out_of_resources_before_any_traffic) {
  ASSERT_NO_FATAL_FAILURE(enter_client_dir());
  // A comment one byte longer than every header of a build may be together.
  std::string big = "/*";
  big.resize(protocol::max_build_header_bytes + 1, ' ');
  big += "*/\n";
  write(client_dir_ + "/inc/big.h", big);
  auto p = create("#include \"big.h\"\nkernel void k(global int* x) { x[0] = 1; }\n");
  ASSERT_TRUE(p);
  // CL_OUT_OF_RESOURCES if there is a failure to allocate resources required by the
  // OpenCL implementation on the device.
  EXPECT_CL(CL_OUT_OF_RESOURCES, clBuildProgram(p, 1, &device_, "-I inc", nullptr, nullptr));
  EXPECT_EQ(
      info_value<cl_build_status>(FERRY_IT_INFO_QUERY(clGetProgramBuildInfo, p, device_, CL_PROGRAM_BUILD_STATUS)),
      CL_BUILD_NONE);
  expect_no_build_trees();
  // Without the include the same program builds.
  auto small = create("kernel void k(global int* x) { x[0] = 1; }\n");
  ASSERT_TRUE(small);
  EXPECT_CL_OK(clBuildProgram(small, 1, &device_, "-I inc", nullptr, nullptr));
}

}  // namespace ferry::test
