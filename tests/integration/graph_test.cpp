// The OpenVX layer on Ferry's devices: examples/vx_edge (the standard API
// only) run natively on PoCL and through `ferry run` on one and on two
// servers (FERRY_VX_DEVICES=ferry) writes the same bytes, fused and unfused;
// a server lost between two runs of a graph fails the second run with the
// spec's status and its nodes named, and the context goes on working.
#include <VX/vx.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
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

// What the context's log callback heard (the child's own process).
std::vector<std::string>& vx_log_lines() {
  static std::vector<std::string> lines;
  return lines;
}

void VX_CALLBACK keep_vx_log(vx_context, vx_reference, vx_status, const vx_char message[]) {
  vx_log_lines().push_back(message);
  std::printf("vx log: %s\n", message);
}

// Copies all of a U8 image to or from `pixels` (width x height, packed).
bool copy_whole_image(vx_image image, vx_uint32 width, vx_uint32 height, std::vector<vx_uint8>& pixels,
                      vx_enum usage) {
  vx_rectangle_t all{0, 0, width, height};
  vx_imagepatch_addressing_t layout{};
  layout.dim_x = width;
  layout.dim_y = height;
  layout.stride_x = 1;
  layout.stride_y = static_cast<vx_int32>(width);
  return vxCopyImagePatch(image, &all, 0, &layout, pixels.data(), usage, VX_MEMORY_TYPE_HOST) == VX_SUCCESS;
}

// A U8 image of `value` everywhere.
bool fill_image(vx_image image, vx_uint32 width, vx_uint32 height, vx_uint8 value) {
  std::vector<vx_uint8> pixels(static_cast<size_t>(width) * height, value);
  return copy_whole_image(image, width, height, pixels, VX_WRITE_ONLY);
}

// The count of pixels of a U8 image that are not `value`.
long pixels_unlike(vx_image image, vx_uint32 width, vx_uint32 height, vx_uint8 value) {
  std::vector<vx_uint8> pixels(static_cast<size_t>(width) * height, 0);
  if (!copy_whole_image(image, width, height, pixels, VX_READ_ONLY)) return -1;
  long unlike = 0;
  for (vx_uint8 p : pixels) unlike += p != value;
  return unlike;
}

// The child: a graph (Box3x3 -> virtual -> Not) on the devices of the one server in
// args[0], run once; then, told that the server is gone, run again.
FERRY_IT_CHILD(vx_server_lost) {
  CHILD_CHECK(args.size() == 1, "usage: vx_server_lost ADDRESS");
  set_ferry_env(loader_mode::ferry_only, args[0]);
  ::setenv("FERRY_VX_DEVICES", "ferry", 1);
  constexpr vx_uint32 width = 67, height = 45;
  vx_context context = vxCreateContext();
  CHILD_CHECK(vxGetStatus(reinterpret_cast<vx_reference>(context)) == VX_SUCCESS, "vxCreateContext failed");
  vxRegisterLogCallback(context, keep_vx_log, vx_false_e);
  vx_graph graph = vxCreateGraph(context);
  vx_image input = vxCreateImage(context, width, height, VX_DF_IMAGE_U8);
  vx_image output = vxCreateImage(context, width, height, VX_DF_IMAGE_U8);
  vx_image between = vxCreateVirtualImage(graph, width, height, VX_DF_IMAGE_U8);
  vx_node box = vxBox3x3Node(graph, input, between);
  vx_node invert = vxNotNode(graph, between, output);
  CHILD_CHECK(vxGetStatus(reinterpret_cast<vx_reference>(box)) == VX_SUCCESS &&
                  vxGetStatus(reinterpret_cast<vx_reference>(invert)) == VX_SUCCESS,
              "the nodes could not be made");
  CHILD_CHECK(vxSetReferenceName(reinterpret_cast<vx_reference>(box), "lost_box") == VX_SUCCESS, "naming");
  CHILD_CHECK(vxSetReferenceName(reinterpret_cast<vx_reference>(invert), "lost_not") == VX_SUCCESS, "naming");
  CHILD_CHECK(fill_image(input, width, height, 10), "writing the input");
  CHILD_CHECK(vxVerifyGraph(graph) == VX_SUCCESS, "vxVerifyGraph failed");
  CHILD_CHECK(vxProcessGraph(graph) == VX_SUCCESS, "the first run failed");
  const long wrong = pixels_unlike(output, width, height, 255 - 10);
  CHILD_CHECK(wrong == 0, "the first run left %ld pixels unlike 245", wrong);
  std::printf("PROCESSED\n");
  std::fflush(stdout);
  std::string line;
  CHILD_CHECK(std::getline(std::cin, line) && line == "GONE", "no GONE line from the parent");

  // The server is gone: the run fails with the spec's status (a failed node's), the
  // log names the nodes, and every node reports its failure.
  vx_log_lines().clear();
  const vx_status lost = vxProcessGraph(graph);
  CHILD_CHECK(lost == VX_FAILURE, "the run without a server returned %d, not VX_FAILURE (%d)", lost, VX_FAILURE);
  bool named = false;
  for (const std::string& message : vx_log_lines())
    named = named || message.find("lost_box") != std::string::npos || message.find("lost_not") != std::string::npos;
  CHILD_CHECK(named, "no log line names a node of the graph (%zu lines)", vx_log_lines().size());
  vx_status node_status = VX_SUCCESS;
  CHILD_CHECK(vxQueryNode(invert, VX_NODE_STATUS, &node_status, sizeof node_status) == VX_SUCCESS, "query");
  CHILD_CHECK(node_status == VX_FAILURE, "the last node's status is %d, not VX_FAILURE", node_status);
  vx_perf_t perf{};
  CHILD_CHECK(vxQueryGraph(graph, VX_GRAPH_PERFORMANCE, &perf, sizeof perf) == VX_SUCCESS, "the graph answers");

  // The context goes on: objects are made, written and released; everything releases.
  vx_image later = vxCreateImage(context, 5, 3, VX_DF_IMAGE_U8);
  CHILD_CHECK(vxGetStatus(reinterpret_cast<vx_reference>(later)) == VX_SUCCESS, "no image after the loss");
  CHILD_CHECK(vxReleaseImage(&later) == VX_SUCCESS, "release");
  CHILD_CHECK(vxReleaseNode(&box) == VX_SUCCESS && vxReleaseNode(&invert) == VX_SUCCESS, "releasing the nodes");
  CHILD_CHECK(vxReleaseImage(&between) == VX_SUCCESS && vxReleaseImage(&input) == VX_SUCCESS &&
                  vxReleaseImage(&output) == VX_SUCCESS,
              "releasing the images");
  CHILD_CHECK(vxReleaseGraph(&graph) == VX_SUCCESS, "releasing the graph");
  CHILD_CHECK(vxReleaseContext(&context) == VX_SUCCESS, "releasing the context");
  std::printf("PASS\n");
  return 0;
}

TEST(graph, a_server_lost_mid_graph_fails_the_run_names_its_nodes_and_the_context_goes_on) {
  if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
  // A short grace: the client gives the session up a second after the server goes.
  daemon_process::options options;
  options.binary = binary_paths().ferryd();
  options.extra_args = {"--session-grace", "1"};
  std::unique_ptr<daemon_process> server = daemon_process::start(options);
  ASSERT_NE(server, nullptr);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  child_process child = spawn_self("vx_server_lost", {server->address()}, {}, /*pipe_stdin=*/true);
  std::string out;
  while (auto line = child.read_line(deadline)) {
    out += *line + "\n";
    if (*line == "PROCESSED") break;
  }
  ASSERT_NE(out.find("PROCESSED"), std::string::npos) << out;
  // The whole daemon: its main process and its session workers.
  for (pid_t pid : process_tree(server->pid())) ::kill(pid, SIGKILL);
  server->stop();  // reaps it; killed, it has no clean exit to check
  child.write_stdin("GONE\n");
  child.close_stdin();
  out += child.read_all(deadline);
  const std::optional<int> status = child.wait(deadline);
  if (!status) child.kill_and_wait();
  ASSERT_TRUE(status.has_value()) << "the graph's run without its server hung:\n" << out;
  EXPECT_TRUE(exited_with(*status, 0)) << describe_wait_status(*status) << "\n" << out;
  EXPECT_NE(out.find("PASS"), std::string::npos) << out;
}

}  // namespace

}  // namespace ferry::test
