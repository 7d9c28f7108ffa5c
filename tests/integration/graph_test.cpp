// The OpenVX layer on Ferry's devices: examples/vx_edge (the standard API
// only) run natively on PoCL and through `ferry run` on one and on two
// servers (FERRY_VX_DEVICES=ferry) writes the same bytes, fused and unfused.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "daemon.hpp"

namespace ferry::test {

suite_config this_suite() {
  suite_config config;
  // The test starts its own daemons; this process never calls OpenCL.
  config.start_daemon = false;
  config.set_loader_env = false;
  return config;
}

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs vx_edge (through `ferry run` when `servers` is given) writing `output`;
// returns its stdout, failing the test unless it exits 0.
std::string run_vx_edge(const std::string& servers, const std::string& output, const std::string& fusion) {
  spawn_options options;
  std::string vx_edge = binary_paths().bin_dir + "/bin/vx_edge";
  std::vector<std::string> program = {vx_edge, "--size", "333x211", "--runs", "2", output};
  if (servers.empty()) {
    options.argv = program;
  } else {
    options.argv = {binary_paths().bin_dir + "/bin/ferry", "run", "--servers", servers, "--"};
    options.argv.insert(options.argv.end(), program.begin(), program.end());
    options.env.push_back({"FERRY_VX_DEVICES", std::string("ferry")});
  }
  options.env.push_back({"FERRY_VX_FUSION", fusion});
  child_process child = child_process::spawn(options);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::string out = child.read_all(deadline);
  auto status = child.wait(deadline);
  EXPECT_TRUE(status.has_value()) << "vx_edge did not end: " << out;
  if (status.has_value()) {
    EXPECT_TRUE(exited_with(*status, 0)) << describe_wait_status(*status) << ": " << out;
  }
  return out;
}

TEST(graph, vx_edge_writes_the_same_bytes_natively_and_on_one_and_two_servers) {
  const std::string stem = ::testing::TempDir() + "ferry_vx_edge." + std::to_string(::getpid());
  daemon first, second;
  ASSERT_TRUE(first.started());
  ASSERT_TRUE(second.started());
  for (std::string fusion : {"1", "0"}) {
    run_vx_edge("", stem + ".native.pgm", fusion);
    run_vx_edge(first.address(), stem + ".one.pgm", fusion);
    run_vx_edge(first.address() + "," + second.address(), stem + ".two.pgm", fusion);
    std::string native = read_file(stem + ".native.pgm");
    ASSERT_GT(native.size(), 333u * 211u) << "fusion " << fusion;
    EXPECT_EQ(read_file(stem + ".one.pgm"), native) << "one server, fusion " << fusion;
    EXPECT_EQ(read_file(stem + ".two.pgm"), native) << "two servers, fusion " << fusion;
  }
  for (const char* which : {".native.pgm", ".one.pgm", ".two.pgm"}) std::remove((stem + which).c_str());
}

}  // namespace

}  // namespace ferry::test
