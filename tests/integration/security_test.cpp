// Who gets in, end to end: real ferryd processes with --token-file and --tls-cert, and
// clients in child processes (the loader and libferry read their environment once per
// process) with FERRY_TOKEN_FILE and FERRY_TLS_CA. Each refusal must be clear on both
// sides (the client's log and the daemon's), and the daemon must go on serving the
// clients that do hold the token.
#include <CL/cl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cl_helpers.hpp"
#include "common/test_certificates.hpp"
#include "daemon.hpp"
#include "faultproxy/fault_proxy.hpp"

using namespace ferry::test;
using clock_type = std::chrono::steady_clock;

suite_config ferry::test::this_suite() {
  suite_config config;
  config.start_daemon = false;    // each test starts daemons with its own flags
  config.set_loader_env = false;  // and each client is a child with its own environment
  return config;
}

namespace {

constexpr auto child_timeout = std::chrono::seconds(60);

}  // namespace

// A client: args[0] is "devices" (it must see every server's device and run vector_add
// on each) or "none" (it must see no device at all).
FERRY_IT_CHILD(client) {
  CHILD_CHECK(!args.empty(), "no expectation given");
  cl_platform_id platform = find_ferry_platform();
  CHILD_CHECK(platform != nullptr, "no Ferry platform");
  auto devices = platform_devices(platform);
  if (args[0] == "none") {
    CHILD_CHECK(devices.empty(), "%zu devices, expected none", devices.size());
    std::printf("NONE\n");
    return 0;
  }
  CHILD_CHECK(!devices.empty(), "no devices");
  for (cl_device_id d : devices) {
    std::string wrong = run_vector_add(d, 4096, 2.5f);
    CHILD_CHECK(wrong.empty(), "vector_add: %s", wrong.c_str());
  }
  std::printf("RAN %zu\n", devices.size());
  return 0;
}

// Two servers in one context: a buffer written on the first server's device is
// incremented on the second's, so it migrates over a peer link between the daemons.
FERRY_IT_CHILD(migrate) {
  cl_platform_id platform = find_ferry_platform();
  CHILD_CHECK(platform != nullptr, "no Ferry platform");
  auto devices = platform_devices(platform);
  CHILD_CHECK(devices.size() == 2, "%zu devices, expected one per daemon", devices.size());
  cl_int rc = CL_SUCCESS;
  context_handle context(clCreateContext(nullptr, 2, devices.data(), nullptr, nullptr, &rc));
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateContext: %s", cl_error_name(rc).c_str());
  queue_handle first(clCreateCommandQueueWithProperties(context, devices[0], nullptr, &rc));
  queue_handle second(clCreateCommandQueueWithProperties(context, devices[1], nullptr, &rc));
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateCommandQueue: %s", cl_error_name(rc).c_str());
  const char* source = "__kernel void inc(__global uint* d) { d[get_global_id(0)] += 7u; }";
  program_handle program(clCreateProgramWithSource(context, 1, &source, nullptr, &rc));
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateProgramWithSource: %s", cl_error_name(rc).c_str());
  rc = clBuildProgram(program, 0, nullptr, "", nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "clBuildProgram: %s", cl_error_name(rc).c_str());
  kernel_handle inc = create_kernel(program, "inc");
  std::vector<cl_uint> host(1 << 16);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<cl_uint>(i * 2654435761u);
  const size_t bytes = host.size() * sizeof(cl_uint);
  mem_handle data = create_buffer(context, CL_MEM_READ_WRITE, bytes);
  rc = clEnqueueWriteBuffer(first, data, CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "write: %s", cl_error_name(rc).c_str());
  cl_mem arg = data;
  clSetKernelArg(inc, 0, sizeof arg, &arg);
  size_t global = host.size();
  rc = clEnqueueNDRangeKernel(second, inc, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "kernel: %s", cl_error_name(rc).c_str());
  std::vector<cl_uint> back(host.size());
  rc = clEnqueueReadBuffer(second, data, CL_TRUE, 0, bytes, back.data(), 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "read: %s", cl_error_name(rc).c_str());
  for (size_t i = 0; i < host.size(); ++i)
    CHILD_CHECK(back[i] == host[i] + 7u, "element %zu is %u, expected %u", i, back[i], host[i] + 7u);
  std::printf("MIGRATED\n");
  return 0;
}

// A session under token and TLS survives cut connections: the child relays its link
// through a fault proxy (args[0]: the daemon's port), increments a buffer 200 times
// with a cut every 20 increments, and checks that every increment ran exactly once.
FERRY_IT_CHILD(cut) {
  CHILD_CHECK(!args.empty(), "no daemon port given");
  ferry::tools::fault_proxy proxy("127.0.0.1", static_cast<uint16_t>(std::stoi(args[0])));
  std::string error;
  CHILD_CHECK(proxy.start(error), "proxy: %s", error.c_str());
  set_ferry_env(loader_mode::ferry_only, "127.0.0.1:" + std::to_string(proxy.port()));
  cl_platform_id platform = find_ferry_platform();
  CHILD_CHECK(platform != nullptr, "no Ferry platform");
  auto devices = platform_devices(platform);
  CHILD_CHECK(devices.size() == 1, "%zu devices", devices.size());
  cl_int rc = CL_SUCCESS;
  context_handle context(clCreateContext(nullptr, 1, devices.data(), nullptr, nullptr, &rc));
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateContext: %s", cl_error_name(rc).c_str());
  queue_handle queue(clCreateCommandQueueWithProperties(context, devices[0], nullptr, &rc));
  program_handle program =
      build_program(context, devices[0], "__kernel void inc(__global uint* d) { d[get_global_id(0)] += 1u; }", "");
  CHILD_CHECK(program, "build failed");
  kernel_handle inc = create_kernel(program, "inc");
  std::vector<cl_uint> host(1024, 5u);
  const size_t bytes = host.size() * sizeof(cl_uint);
  mem_handle data = create_buffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host.data());
  cl_mem arg = data;
  clSetKernelArg(inc, 0, sizeof arg, &arg);
  size_t global = host.size();
  int cuts = 0;
  for (int i = 1; i <= 200; ++i) {
    // Accepted commands wait out a lost connection; new ones are refused while the
    // server is offline (CL_DEVICE_NOT_AVAILABLE), so those are retried.
    while ((rc = clEnqueueNDRangeKernel(queue, inc, 1, nullptr, &global, nullptr, 0, nullptr, nullptr)) ==
           CL_DEVICE_NOT_AVAILABLE)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHILD_CHECK(rc == CL_SUCCESS, "kernel %d: %s", i, cl_error_name(rc).c_str());
    if (i % 20 == 0) {
      proxy.cut();
      ++cuts;
    }
  }
  while ((rc = clEnqueueReadBuffer(queue, data, CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr)) ==
         CL_DEVICE_NOT_AVAILABLE)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHILD_CHECK(rc == CL_SUCCESS, "read: %s", cl_error_name(rc).c_str());
  for (size_t i = 0; i < host.size(); ++i) CHILD_CHECK(host[i] == 205u, "element %zu is %u, not 205", i, host[i]);
  std::printf("SURVIVED %d\n", cuts);
  return 0;
}

namespace {

/// Whether `path` comes to contain `text` within a few seconds (a daemon logs a refusal
/// on its own thread, maybe after the client has gone).
bool log_shows(const std::string& path, const std::string& text) {
  const auto end = clock_type::now() + std::chrono::seconds(10);
  while (read_file(path).find(text) == std::string::npos) {
    if (clock_type::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

class security : public ::testing::Test {
 protected:
  void SetUp() override {
    if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
    char pattern[] = "/tmp/ferry-security-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    token_ = write_token("token", "s3cret-token-for-the-security-test");
    wrong_token_ = write_token("wrong-token", "an0ther-token-nobody-configured!");
    ASSERT_TRUE(ferry::tls_testing::make_test_pki(dir_, ferry::tls_testing::certificate_validity::current, pki_));
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string write_token(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text << "\n";
    ::chmod(path.c_str(), 0600);
    return path;
  }

  /// Runs the child `name` against `servers` with the given token file and CA (empty:
  /// unset); returns its stdout, its log in `log`, and fails the test unless it exits 0.
  std::string run_client(const std::string& name, const std::string& expectation, const std::string& servers,
                         const std::string& token_file, const std::string& ca, std::string& log) {
    static int runs = 0;
    const std::string log_path = dir_ + "/client-" + std::to_string(++runs) + ".log";
    std::vector<env_change> env = loader_env(binary_paths(), loader_mode::ferry_only, servers);
    env.push_back({"FERRY_LOG_FILE", log_path});
    env.push_back({"FERRY_TOKEN_FILE", token_file.empty() ? std::nullopt : std::optional<std::string>(token_file)});
    env.push_back({"FERRY_TLS_CA", ca.empty() ? std::nullopt : std::optional<std::string>(ca)});
    env.push_back({"FERRY_CONNECT_TIMEOUT_MS", std::string("5000")});
    child_process child = spawn_self(name, {expectation}, env);
    const std::string out = child.read_all(clock_type::now() + child_timeout);
    const auto status = child.wait(clock_type::now() + child_timeout);
    log = read_file(log_path);
    EXPECT_TRUE(status && exited_with(*status, 0))
        << (status ? describe_wait_status(*status) : "still running") << "\n" << out << "\nclient log:\n" << log;
    return out;
  }

  std::string dir_, token_, wrong_token_;
  ferry::tls_testing::test_pki pki_;
};

TEST_F(security, only_clients_with_the_token_get_in_and_are_told_why_not) {
  const std::string daemon_log = dir_ + "/ferryd.log";
  ferry::test::daemon server({"--token-file", token_}, daemon_log);
  ASSERT_TRUE(server.started());
  std::string log;
  EXPECT_NE(run_client("client", "devices", server.address(), token_, "", log).find("RAN 1"), std::string::npos);

  run_client("client", "none", server.address(), "", "", log);
  EXPECT_NE(log.find("requires a token"), std::string::npos) << log;
  EXPECT_TRUE(log_shows(daemon_log, "requires a token and the client has none"))
      << read_file(daemon_log);

  run_client("client", "none", server.address(), wrong_token_, "", log);
  EXPECT_NE(log.find("wrong token"), std::string::npos) << log;
  EXPECT_TRUE(log_shows(daemon_log, "wrong token")) << read_file(daemon_log);

  // A token file that cannot be read stops the client before it connects.
  run_client("client", "none", server.address(), dir_ + "/no-such-file", "", log);
  EXPECT_NE(log.find("cannot read the token file"), std::string::npos) << log;

  // The refusals changed nothing for the right client.
  EXPECT_NE(run_client("client", "devices", server.address(), token_, "", log).find("RAN 1"), std::string::npos);
  server.stop();
}

TEST_F(security, tls_carries_the_session_and_plain_clients_are_refused) {
  const std::string daemon_log = dir_ + "/ferryd.log";
  ferry::test::daemon server({"--token-file", token_, "--tls-cert", pki_.server_cert, "--tls-key", pki_.server_key,
                              "--log-level", "debug"},
                             daemon_log);
  ASSERT_TRUE(server.started());
  std::string log;
  EXPECT_NE(run_client("client", "devices", server.address(), token_, pki_.ca_cert, log).find("RAN 1"),
            std::string::npos);
  EXPECT_TRUE(log_shows(daemon_log, "TLSv1.3")) << "the daemon logs the TLS version it agreed";

  run_client("client", "none", server.address(), token_, "", log);
  EXPECT_NE(log.find("takes TLS connections only"), std::string::npos) << log;
  EXPECT_TRUE(log_shows(daemon_log, "takes TLS connections only"));

  EXPECT_NE(run_client("client", "devices", server.address(), token_, pki_.ca_cert, log).find("RAN 1"),
            std::string::npos);
  server.stop();
}

TEST_F(security, an_expired_certificate_is_refused_on_both_sides) {
  const std::string expired_dir = dir_ + "/expired";
  std::filesystem::create_directory(expired_dir);
  ferry::tls_testing::test_pki expired;
  ASSERT_TRUE(ferry::tls_testing::make_test_pki(expired_dir, ferry::tls_testing::certificate_validity::expired,
                                                expired));
  const std::string daemon_log = dir_ + "/ferryd.log";
  ferry::test::daemon server({"--tls-cert", expired.server_cert, "--tls-key", expired.server_key}, daemon_log);
  ASSERT_TRUE(server.started());
  EXPECT_TRUE(log_shows(daemon_log, "expired on")) << "ferryd warns when it starts";
  std::string log;
  run_client("client", "none", server.address(), "", expired.ca_cert, log);
  EXPECT_NE(log.find("certificate has expired"), std::string::npos) << log;
  EXPECT_TRUE(log_shows(daemon_log, "TLS handshake failed")) << read_file(daemon_log);
  server.stop();
}

TEST_F(security, a_tls_client_of_a_plain_daemon_is_told_so) {
  const std::string daemon_log = dir_ + "/ferryd.log";
  ferry::test::daemon server({}, daemon_log);
  ASSERT_TRUE(server.started());
  std::string log;
  run_client("client", "none", server.address(), "", pki_.ca_cert, log);
  EXPECT_NE(log.find("--tls-cert"), std::string::npos) << log;
  EXPECT_TRUE(log_shows(daemon_log, "this daemon has no certificate"))
      << read_file(daemon_log);
  EXPECT_NE(run_client("client", "devices", server.address(), "", "", log).find("RAN 1"), std::string::npos);
  server.stop();
}

TEST_F(security, peer_links_prove_the_token_and_run_under_tls_too) {
  std::vector<std::string> args = {"--token-file", token_,         "--tls-cert", pki_.server_cert,
                                   "--tls-key",    pki_.server_key, "--tls-ca",   pki_.ca_cert};
  const std::string first_log = dir_ + "/first.log", second_log = dir_ + "/second.log";
  ferry::test::daemon first(args, first_log), second(args, second_log);
  ASSERT_TRUE(first.started() && second.started());
  std::string log;
  const std::string out =
      run_client("migrate", "", first.address() + "," + second.address(), token_, pki_.ca_cert, log);
  EXPECT_NE(out.find("MIGRATED"), std::string::npos) << out;
  // The bytes went over a peer link into the second daemon's session.
  EXPECT_TRUE(log_shows(second_log, "peer link attached")) << read_file(second_log);
  EXPECT_EQ(read_file(second_log).find("refusing"), std::string::npos) << read_file(second_log);
  first.stop();
  second.stop();
}

TEST_F(security, a_session_under_token_and_tls_resumes_after_cut_connections) {
  const std::string daemon_log = dir_ + "/ferryd.log";
  ferry::test::daemon server({"--token-file", token_, "--tls-cert", pki_.server_cert, "--tls-key", pki_.server_key},
                             daemon_log);
  ASSERT_TRUE(server.started());
  std::string log;
  const std::string out =
      run_client("cut", std::to_string(server.port()), server.address(), token_, pki_.ca_cert, log);
  EXPECT_NE(out.find("SURVIVED 10"), std::string::npos) << out;
  EXPECT_TRUE(log_shows(daemon_log, "resumed by")) << read_file(daemon_log);
  server.stop();
}

}  // namespace
