// Peer links between two daemons of this host (docs/protocol.md, "Peer links"): with
// both listening on a Unix socket, migrations go over the destination's socket and
// through a shared-memory window, and the link counters of the source show it; with
// --peer-shared-memory off at the source, or a destination without --unix, they go over
// TCP, with the same results; a destination killed during a migration fails what waits
// for it, nothing hangs, and the source goes on serving.
#include <signal.h>
#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "cl_helpers.hpp"

namespace ferry::test {

suite_config this_suite() {
  suite_config config;
  config.start_daemon = false;  // each test starts the daemons it needs
  config.set_loader_env = false;  // and its children point the loader at them
  return config;
}

namespace {

/// Sizes that migrate: smaller than a window takes (on the socket), 1 MiB, one and a
/// half chunks of odd length, and many chunks.
constexpr size_t migrated_sizes[] = {12, 1000003, 1u << 20, (8u << 20) + 4099, 64u << 20};

uint64_t fnv1a(const std::vector<uint8_t>& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

/// The peer_out rows of the server of `device`: remote -> bytes out.
std::map<std::string, cl_ulong> peer_out_bytes(cl_platform_id platform, cl_device_id device) {
  auto counters = reinterpret_cast<clFerryGetLinkCounters_fn>(ferry_extension(platform, "clFerryGetLinkCounters"));
  std::map<std::string, cl_ulong> rows;
  if (counters == nullptr) return rows;
  std::vector<cl_ferry_link_counters> links(64);
  cl_uint count = 0;
  if (counters(device, static_cast<cl_uint>(links.size()), links.data(), &count) != CL_SUCCESS) return rows;
  for (cl_uint i = 0; i < std::min<cl_uint>(count, links.size()); ++i)
    if (links[i].kind == CL_FERRY_LINK_PEER_OUT) rows[links[i].remote] += links[i].bytes_out;
  return rows;
}

}  // namespace

// Buffers written on server 0 are read on server 1: each migrates there. Prints one
// line per size with a checksum of what came back, then server 0's peer_out rows.
FERRY_IT_CHILD(migrations_between_two_servers) {
  const char* servers = std::getenv("FERRY_SERVERS");
  CHILD_CHECK(servers != nullptr, "FERRY_SERVERS");
  set_ferry_env(loader_mode::ferry_only, servers);
  cl_platform_id platform = find_ferry_platform();
  CHILD_CHECK(platform != nullptr, "no Ferry platform");
  std::vector<cl_device_id> devices = platform_devices(platform);
  CHILD_CHECK(devices.size() == 2, "%zu devices", devices.size());
  cl_int rc = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 2, devices.data(), nullptr, nullptr, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateContext: %d", rc);
  cl_command_queue q0 = clCreateCommandQueueWithProperties(context, devices[0], nullptr, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "queue 0: %d", rc);
  cl_command_queue q1 = clCreateCommandQueueWithProperties(context, devices[1], nullptr, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "queue 1: %d", rc);
  for (size_t size : migrated_sizes) {
    std::vector<uint8_t> host(size);
    for (size_t i = 0; i < size; ++i) host[i] = static_cast<uint8_t>(i * 131 + size);
    cl_mem data = clCreateBuffer(context, CL_MEM_READ_WRITE, size, nullptr, &rc);
    CHILD_CHECK(rc == CL_SUCCESS, "clCreateBuffer(%zu): %d", size, rc);
    rc = clEnqueueWriteBuffer(q0, data, CL_TRUE, 0, size, host.data(), 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "write on server 0: %d", rc);
    rc = clEnqueueMigrateMemObjects(q1, 1, &data, 0, 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "migrate to server 1: %d", rc);
    std::vector<uint8_t> got(size);
    rc = clEnqueueReadBuffer(q1, data, CL_TRUE, 0, size, got.data(), 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "read on server 1: %d", rc);
    std::printf("size=%zu same=%d sum=%016" PRIx64 "\n", size, got == host ? 1 : 0, fnv1a(got));
    clReleaseMemObject(data);
  }
  for (const auto& [remote, bytes] : peer_out_bytes(platform, devices[0]))
    std::printf("peer_out %s %llu\n", remote.c_str(), static_cast<unsigned long long>(bytes));
  clReleaseCommandQueue(q0);
  clReleaseCommandQueue(q1);
  clReleaseContext(context);
  return 0;
}

// A large migration from server 0 to server 1 whose destination the parent kills once
// it is under way ("enqueued"). The read behind it on server 1 must end in an error and
// the migration must end one way or the other.
FERRY_IT_CHILD(destination_dies_during_a_migration) {
  const char* servers = std::getenv("FERRY_SERVERS");
  CHILD_CHECK(servers != nullptr, "FERRY_SERVERS");
  set_ferry_env(loader_mode::ferry_only, servers);
  cl_platform_id platform = find_ferry_platform();
  CHILD_CHECK(platform != nullptr, "no Ferry platform");
  std::vector<cl_device_id> devices = platform_devices(platform);
  CHILD_CHECK(devices.size() == 2, "%zu devices", devices.size());
  cl_int rc = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 2, devices.data(), nullptr, nullptr, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateContext: %d", rc);
  cl_command_queue q0 = clCreateCommandQueueWithProperties(context, devices[0], nullptr, &rc);
  cl_command_queue q1 = clCreateCommandQueueWithProperties(context, devices[1], nullptr, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "queues: %d", rc);
  const size_t size = 256u << 20;
  std::vector<uint8_t> host(size, 0x5a);
  cl_mem data = clCreateBuffer(context, CL_MEM_READ_WRITE, size, nullptr, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateBuffer: %d", rc);
  CHILD_CHECK(clEnqueueWriteBuffer(q0, data, CL_TRUE, 0, size, host.data(), 0, nullptr, nullptr) == CL_SUCCESS,
              "write on server 0");
  // The read waits for a user event the parent's kill comes before: it can only fail.
  cl_event gate = clCreateUserEvent(context, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateUserEvent: %d", rc);
  cl_event migrated = nullptr, read = nullptr;
  CHILD_CHECK(clEnqueueMigrateMemObjects(q1, 1, &data, 0, 0, nullptr, &migrated) == CL_SUCCESS, "migrate");
  std::vector<uint8_t> got(size);
  CHILD_CHECK(clEnqueueReadBuffer(q1, data, CL_FALSE, 0, size, got.data(), 1, &gate, &read) == CL_SUCCESS, "read");
  clFlush(q1);
  std::printf("enqueued\n");
  std::fflush(stdout);
  // The parent answers once the destination is dead.
  char line[16] = {};
  CHILD_CHECK(std::fgets(line, sizeof line, stdin) != nullptr, "no word from the parent");
  clSetUserEventStatus(gate, CL_COMPLETE);
  clWaitForEvents(1, &migrated);
  clWaitForEvents(1, &read);
  cl_int migrate_status = 1, read_status = 1;
  clGetEventInfo(migrated, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof migrate_status, &migrate_status, nullptr);
  clGetEventInfo(read, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof read_status, &read_status, nullptr);
  std::printf("migrate_ended=%d read_failed=%d\n", migrate_status <= CL_COMPLETE ? 1 : 0, read_status < 0 ? 1 : 0);
  for (cl_event e : {migrated, read, gate}) clReleaseEvent(e);
  clReleaseMemObject(data);
  clReleaseCommandQueue(q0);
  clReleaseCommandQueue(q1);
  clReleaseContext(context);
  return 0;
}

namespace {

/// A directory that session workers (user nobody) can enter: the daemons' sockets live
/// there, and each worker dials the other daemon's.
class socket_dir {
 public:
  socket_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ferry-peers-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr && ::chmod(pattern.c_str(), 0755) == 0) path_ = pattern;
  }
  ~socket_dir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct run_result {
  std::vector<std::string> sums;          // "size=... same=1 sum=..." lines
  std::map<std::string, cl_ulong> links;  // server 0's peer_out rows
  std::string out;
};

/// Runs migrations_between_two_servers against `from` then `to`.
run_result run_migrations(const std::string& from, const std::string& to) {
  run_result r;
  const auto deadline = clock::now() + std::chrono::seconds(120);
  child_process child = spawn_self("migrations_between_two_servers", {}, {{"FERRY_SERVERS", from + "," + to}});
  r.out = child.read_all(deadline);
  const std::optional<int> status = child.wait(deadline);
  if (!status) child.kill_and_wait();
  EXPECT_TRUE(status.has_value()) << "the migrations hung:\n" << r.out;
  if (status) {
    EXPECT_TRUE(exited_with(*status, 0)) << describe_wait_status(*status) << "\n" << r.out;
  }
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("size=", 0) == 0) r.sums.push_back(line);
    if (line.rfind("peer_out ", 0) == 0) {
      const size_t space = line.rfind(' ');
      r.links[line.substr(9, space - 9)] = std::stoull(line.substr(space + 1));
    }
  }
  return r;
}

uint64_t total_migrated() {
  uint64_t total = 0;
  for (size_t size : migrated_sizes) total += size;
  return total;
}

/// The bytes of the chunks (8 MiB at most, protocol::max_bulk_chunk) large enough for a
/// window (over 64 KiB, peer_window::min_chunk).
uint64_t window_sized_bytes() {
  constexpr uint64_t chunk = 8u << 20, min_window_chunk = 64u << 10;
  uint64_t total = 0;
  for (uint64_t size : migrated_sizes)
    for (uint64_t offset = 0; offset < size; offset += chunk)
      if (std::min(chunk, size - offset) > min_window_chunk) total += std::min(chunk, size - offset);
  return total;
}

void expect_every_size_arrived(const run_result& r) {
  ASSERT_EQ(r.sums.size(), std::size(migrated_sizes)) << r.out;
  for (const std::string& line : r.sums) EXPECT_NE(line.find(" same=1 "), std::string::npos) << line;
}

TEST(same_host_peers, migrations_go_over_the_unix_socket_and_through_shared_memory) {
  if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
  socket_dir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string a_socket = dir.path() + "/a.sock", b_socket = dir.path() + "/b.sock";
  daemon a({"--unix", a_socket});
  daemon b({"--unix", b_socket});
  ASSERT_TRUE(a.started() && b.started());
  // The client reaches both over TCP: the daemons find out by themselves that they share the host.
  const run_result r = run_migrations(a.address(), b.address());
  ASSERT_NO_FATAL_FAILURE(expect_every_size_arrived(r));
  ASSERT_TRUE(r.links.count("shm:" + b_socket)) << "no shared-memory window to server 1:\n" << r.out;
  ASSERT_TRUE(r.links.count("unix:" + b_socket)) << "no Unix socket link to server 1:\n" << r.out;
  // Every chunk large enough went through the window; small ones (12 bytes, the 4099
  // bytes after 8 MiB) on the socket.
  EXPECT_GE(r.links.at("shm:" + b_socket), window_sized_bytes()) << r.out;
  EXPECT_LT(r.links.at("unix:" + b_socket), 1u << 20) << "chunk bytes went on the socket:\n" << r.out;
  const auto tcp = r.links.find(b.address());
  EXPECT_TRUE(tcp == r.links.end() || tcp->second == 0) << "bytes went over TCP:\n" << r.out;
}

TEST(same_host_peers, switched_off_or_without_a_socket_the_link_uses_tcp_with_the_same_results) {
  if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
  socket_dir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string b_socket = dir.path() + "/b.sock";
  daemon b({"--unix", b_socket});
  ASSERT_TRUE(b.started());
  run_result shared;
  {
    daemon a({"--unix", dir.path() + "/a.sock"});
    ASSERT_TRUE(a.started());
    shared = run_migrations(a.address(), b.address());
  }
  ASSERT_NO_FATAL_FAILURE(expect_every_size_arrived(shared));
  ASSERT_TRUE(shared.links.count("shm:" + b_socket)) << shared.out;

  // The source switched off: TCP only.
  {
    daemon a({"--unix", dir.path() + "/a2.sock", "--peer-shared-memory", "off"});
    ASSERT_TRUE(a.started());
    const run_result off = run_migrations(a.address(), b.address());
    ASSERT_NO_FATAL_FAILURE(expect_every_size_arrived(off));
    EXPECT_EQ(off.sums, shared.sums) << "the same bytes arrive either way";
    EXPECT_EQ(off.links.count("unix:" + b_socket) + off.links.count("shm:" + b_socket), 0u) << off.out;
    ASSERT_TRUE(off.links.count(b.address())) << off.out;
    EXPECT_GE(off.links.at(b.address()), total_migrated()) << off.out;
  }
  // A destination without --unix: TCP.
  {
    daemon a({"--unix", dir.path() + "/a3.sock"});
    daemon plain;
    ASSERT_TRUE(a.started() && plain.started());
    const run_result tcp = run_migrations(a.address(), plain.address());
    ASSERT_NO_FATAL_FAILURE(expect_every_size_arrived(tcp));
    EXPECT_EQ(tcp.sums, shared.sums);
    for (const auto& [remote, bytes] : tcp.links)
      EXPECT_TRUE(remote.rfind("unix:", 0) != 0 && remote.rfind("shm:", 0) != 0) << remote;
    ASSERT_TRUE(tcp.links.count(plain.address())) << tcp.out;
    EXPECT_GE(tcp.links.at(plain.address()), total_migrated()) << tcp.out;
  }
}

TEST(same_host_peers, a_destination_killed_during_a_migration_fails_what_waits_and_nothing_hangs) {
  if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
  socket_dir dir;
  ASSERT_FALSE(dir.path().empty());
  daemon a({"--unix", dir.path() + "/a.sock", "--session-grace", "2"});
  ASSERT_TRUE(a.started());
  daemon_process::options victim_options;
  victim_options.binary = binary_paths().ferryd();
  victim_options.extra_args = {"--unix", dir.path() + "/b.sock", "--session-grace", "2"};
  std::unique_ptr<daemon_process> b = daemon_process::start(victim_options);
  ASSERT_NE(b, nullptr);
  const auto deadline = clock::now() + std::chrono::seconds(120);
  child_process child = spawn_self("destination_dies_during_a_migration", {},
                                   {{"FERRY_SERVERS", a.address() + "," + b->address()}, {"FERRY_OUTAGE", "fail-fast"}},
                                   true);
  std::string out;
  while (auto line = child.read_line(deadline)) {
    out += *line + "\n";
    if (line->find("enqueued") != std::string::npos) break;
  }
  ASSERT_NE(out.find("enqueued"), std::string::npos) << out;
  // The whole daemon: its main process and its session workers.
  for (pid_t pid : process_tree(b->pid())) ::kill(pid, SIGKILL);
  b->stop();  // reaps it; killed, it has no clean exit to check
  child.write_stdin("go\n");
  out += child.read_all(deadline);
  const std::optional<int> status = child.wait(deadline);
  if (!status) child.kill_and_wait();
  ASSERT_TRUE(status.has_value()) << "the migration to a dead daemon hung:\n" << out;
  EXPECT_TRUE(exited_with(*status, 0)) << describe_wait_status(*status) << "\n" << out;
  EXPECT_NE(out.find("migrate_ended=1 read_failed=1"), std::string::npos) << out;
  // Server 0 goes on serving, its peer links included.
  daemon c({"--unix", dir.path() + "/c.sock"});
  ASSERT_TRUE(c.started());
  const run_result after = run_migrations(a.address(), c.address());
  ASSERT_NO_FATAL_FAILURE(expect_every_size_arrived(after));
}

}  // namespace
}  // namespace ferry::test
