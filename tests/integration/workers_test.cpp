// Session workers (docs/workers.md), end to end: real ferryd processes, clients in child
// processes (each its own session). A client whose kernel crashes its worker, a worker
// killed in the middle of a transfer, or one over its memory limit ends that session
// alone: the client learns it with the OpenCL code the issue names, the daemon logs why,
// and every other client's work completes exactly. The token never enters a worker's
// memory, and 64 sessions opening and closing leave nothing behind.
#include <CL/cl.h>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cl_helpers.hpp"
#include "daemon.hpp"

using namespace ferry::test;
using clock_type = std::chrono::steady_clock;

suite_config ferry::test::this_suite() {
  suite_config config;
  config.start_daemon = false;    // each test starts a daemon with its own flags and log
  config.set_loader_env = false;  // and each client is a child with its own environment
  return config;
}

namespace {

constexpr auto child_timeout = std::chrono::seconds(120);

struct opened {
  context_handle context;
  queue_handle queue;
  cl_device_id device = nullptr;
};

// A context and a queue on the one Ferry device; false when there is none.
bool open_device(opened& o) {
  cl_platform_id platform = find_ferry_platform();
  if (platform == nullptr) return false;
  auto devices = platform_devices(platform);
  if (devices.size() != 1) return false;
  o.device = devices[0];
  cl_int rc = CL_SUCCESS;
  o.context = context_handle(clCreateContext(nullptr, 1, &o.device, nullptr, nullptr, &rc));
  if (rc != CL_SUCCESS) return false;
  o.queue = queue_handle(clCreateCommandQueueWithProperties(o.context, o.device, nullptr, &rc));
  return rc == CL_SUCCESS;
}

}  // namespace

// The long, exact run: increments a buffer `args[0]` times (a clFinish every 10), prints
// STARTED after the first round and DONE when every element is exactly the count.
FERRY_IT_CHILD(steady) {
  CHILD_CHECK(!args.empty(), "no count given");
  const int rounds = std::stoi(args[0]);
  opened o;
  CHILD_CHECK(open_device(o), "no Ferry device");
  program_handle program =
      build_program(o.context, o.device, "__kernel void inc(__global uint* d) { d[get_global_id(0)] += 1u; }", "");
  CHILD_CHECK(program, "build failed");
  kernel_handle inc = create_kernel(program, "inc");
  std::vector<cl_uint> host(1 << 16, 0u);
  const size_t bytes = host.size() * sizeof(cl_uint);
  mem_handle data = create_buffer(o.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host.data());
  cl_mem arg = data;
  clSetKernelArg(inc, 0, sizeof arg, &arg);
  size_t global = host.size();
  for (int i = 1; i <= rounds; ++i) {
    cl_int rc = clEnqueueNDRangeKernel(o.queue, inc, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "kernel %d: %s", i, cl_error_name(rc).c_str());
    if (i % 10 == 0 || i == 1) {
      rc = clFinish(o.queue);
      CHILD_CHECK(rc == CL_SUCCESS, "clFinish after %d: %s", i, cl_error_name(rc).c_str());
      if (i == 1) {
        std::printf("STARTED\n");
        std::fflush(stdout);
      }
    }
  }
  cl_int rc = clEnqueueReadBuffer(o.queue, data, CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "read: %s", cl_error_name(rc).c_str());
  for (size_t i = 0; i < host.size(); ++i)
    CHILD_CHECK(host[i] == static_cast<cl_uint>(rounds), "element %zu is %u, not %d", i, host[i], rounds);
  std::printf("DONE\n");
  return 0;
}

// Stores through a pointer made of an integer (0x10): the worker's process takes SIGSEGV.
// The session is lost: clFinish fails with CL_DEVICE_NOT_AVAILABLE. Prints LOST.
FERRY_IT_CHILD(wild) {
  opened o;
  CHILD_CHECK(open_device(o), "no Ferry device");
  program_handle program = build_program(
      o.context, o.device, "__kernel void wild(__global uint* d, ulong where) { *((__global uint*)where) = d[0]; }",
      "");
  CHILD_CHECK(program, "build failed");
  kernel_handle wild = create_kernel(program, "wild");
  mem_handle data = create_buffer(o.context, CL_MEM_READ_WRITE, 64);
  cl_mem arg = data;
  cl_ulong where = 0x10;
  clSetKernelArg(wild, 0, sizeof arg, &arg);
  clSetKernelArg(wild, 1, sizeof where, &where);
  size_t global = 1;
  cl_int rc = clEnqueueNDRangeKernel(o.queue, wild, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "enqueue: %s", cl_error_name(rc).c_str());
  rc = clFinish(o.queue);
  CHILD_CHECK(rc == CL_DEVICE_NOT_AVAILABLE, "clFinish after the wild store: %s, expected CL_DEVICE_NOT_AVAILABLE",
              cl_error_name(rc).c_str());
  std::printf("LOST\n");
  return 0;
}

// One round of `bytes` written and read back in a new context and queue (the session the
// client opens after its first was lost); false when any step fails or the bytes differ.
bool round_trip_in_a_new_session(size_t bytes) {
  std::vector<unsigned char> out(bytes), back(bytes);
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(i * 7 + 1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    opened again;
    if (!open_device(again)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the new session is still being opened
      continue;
    }
    cl_int rc = CL_SUCCESS;
    mem_handle data(clCreateBuffer(again.context, CL_MEM_READ_WRITE, bytes, nullptr, &rc));
    if (rc == CL_SUCCESS) rc = clEnqueueWriteBuffer(again.queue, data.get(), CL_TRUE, 0, bytes, out.data(), 0, nullptr, nullptr);
    if (rc == CL_SUCCESS) rc = clEnqueueReadBuffer(again.queue, data.get(), CL_TRUE, 0, bytes, back.data(), 0, nullptr, nullptr);
    if (rc == CL_DEVICE_NOT_AVAILABLE) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (rc != CL_SUCCESS) std::printf("AGAIN failed with %s\n", cl_error_name(rc).c_str());
    return rc == CL_SUCCESS && back == out;
  }
  std::printf("AGAIN: no new session within 20 s\n");
  return false;
}

// Writes and reads back 32 MiB again and again until the session is lost (its worker is
// killed meanwhile); prints STARTED after the first round, then LOST with the code. Then
// the same in a new context, which the new session the client opens serves (its bulk
// lanes start afresh), and AGAIN OK.
FERRY_IT_CHILD(transfers) {
  opened o;
  CHILD_CHECK(open_device(o), "no Ferry device");
  const size_t bytes = size_t{32} << 20;
  std::vector<unsigned char> out(bytes), back(bytes);
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(i * 131 + 7);
  mem_handle data = create_buffer(o.context, CL_MEM_READ_WRITE, bytes);
  for (int round = 0; round < 100000; ++round) {
    cl_int rc = clEnqueueWriteBuffer(o.queue, data, CL_TRUE, 0, bytes, out.data(), 0, nullptr, nullptr);
    if (rc == CL_SUCCESS) rc = clEnqueueReadBuffer(o.queue, data, CL_TRUE, 0, bytes, back.data(), 0, nullptr, nullptr);
    if (rc != CL_SUCCESS) {
      std::printf("LOST %s\n", cl_error_name(rc).c_str());
      std::fflush(stdout);
      CHILD_CHECK(round_trip_in_a_new_session(bytes), "the new session did not carry a round of %zu bytes", bytes);
      std::printf("AGAIN OK\n");
      return 0;
    }
    CHILD_CHECK(back == out, "round %d read back other bytes", round);
    if (round == 0) {
      std::printf("STARTED\n");
      std::fflush(stdout);
    }
  }
  CHILD_CHECK(false, "the session was never lost");
  return 1;  // (CHILD_CHECK returned already)
}

// Allocates and fills 64 MiB buffers until something fails; prints LOST with the code.
FERRY_IT_CHILD(hungry) {
  opened o;
  CHILD_CHECK(open_device(o), "no Ferry device");
  const size_t bytes = size_t{64} << 20;
  std::vector<unsigned char> fill(bytes, 0x5a);
  std::vector<mem_handle> kept;
  for (int i = 0; i < 64; ++i) {
    cl_int rc = CL_SUCCESS;
    cl_mem m = clCreateBuffer(o.context, CL_MEM_READ_WRITE, bytes, nullptr, &rc);
    if (rc == CL_SUCCESS) {
      kept.emplace_back(m);
      rc = clEnqueueWriteBuffer(o.queue, m, CL_TRUE, 0, bytes, fill.data(), 0, nullptr, nullptr);
    }
    if (rc != CL_SUCCESS) {
      std::printf("LOST %s\n", cl_error_name(rc).c_str());
      return 0;
    }
  }
  CHILD_CHECK(false, "4 GiB went through without a limit");
  return 1;  // (CHILD_CHECK returned already)
}

namespace {

/// vector_add on the suite's one Ferry device: "" when it ran right.
std::string vector_add_on_the_device() {
  cl_platform_id platform = find_ferry_platform();
  if (platform == nullptr) return "no Ferry platform";
  auto devices = platform_devices(platform);
  if (devices.size() != 1) return std::to_string(devices.size()) + " devices";
  std::string wrong = run_vector_add(devices[0], 1024, 1.5f);
  return wrong.empty() ? wrong : "vector_add: " + wrong;
}

}  // namespace

// A short client: vector_add on the device, then it ends its session.
FERRY_IT_CHILD(brief) {
  const std::string wrong = vector_add_on_the_device();
  CHILD_CHECK(wrong.empty(), "%s", wrong.c_str());
  std::printf("RAN\n");
  return 0;
}

// A session that stays: runs a kernel, prints STARTED, then waits until it is killed, so
// that its worker serves it for as long as the test looks at that worker.
FERRY_IT_CHILD(holding) {
  const std::string wrong = vector_add_on_the_device();
  CHILD_CHECK(wrong.empty(), "%s", wrong.c_str());
  std::printf("STARTED\n");
  std::fflush(stdout);
  for (;;) ::pause();
}

namespace {

/// Whether `path` comes to contain `text` within `limit`.
bool log_shows(const std::string& path, const std::string& text, std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto end = clock_type::now() + limit;
  while (read_file(path).find(text) == std::string::npos) {
    if (clock_type::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

/// The processes whose parent is `parent`.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    std::ifstream stat("/proc/" + std::string(e->d_name) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: the command may hold spaces, so count from its ')'.
    auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && state != "Z") found.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return found;
}

/// Open descriptors of a process.
size_t open_descriptors(pid_t pid) {
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
    ++count;
  return count;
}

/// Whether a process's readable memory holds `needle` (read through /proc/PID/mem, as
/// only a privileged reader can): a kernel running in that process could find it there.
std::optional<bool> memory_holds(pid_t pid, const std::string& needle) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  int mem = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (!maps || mem < 0) return std::nullopt;
  std::string line;
  std::vector<char> chunk;
  bool found = false;
  while (!found && std::getline(maps, line)) {
    unsigned long from = 0, to = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s", &from, &to, perms) != 3 || perms[0] != 'r') continue;
    if (line.find("[vvar]") != std::string::npos) continue;
    // Reservations of many gigabytes that are mostly never touched (AddressSanitizer's
    // shadow) would take hours to read; a token would be in the heap or a stack.
    if (to - from > (uint64_t{16} << 30)) continue;
    // Read in pieces that overlap by the needle's length, so a copy across two is found too.
    const size_t piece = size_t{1} << 22;
    for (unsigned long at = from; at < to && !found;) {
      const size_t want = std::min<size_t>(piece + needle.size(), to - at);
      chunk.resize(want);
      ssize_t n = ::pread(mem, chunk.data(), want, static_cast<off_t>(at));
      if (n <= 0) break;
      found = std::string_view(chunk.data(), static_cast<size_t>(n)).find(needle) != std::string_view::npos;
      at += piece;
    }
  }
  ::close(mem);
  return found;
}

class workers : public ::testing::Test {
 protected:
  void SetUp() override {
    if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
    char pattern[] = "/tmp/ferry-workers-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    log_ = dir_ + "/ferryd.log";
  }
  void TearDown() override {
    if (!dir_.empty() && !std::getenv("FERRY_KEEP")) std::filesystem::remove_all(dir_);
  }

  child_process start_client(const std::string& name, const std::string& servers, std::vector<std::string> args = {},
                             std::vector<env_change> extra = {}) {
    std::vector<env_change> env = loader_env(binary_paths(), loader_mode::ferry_only, servers);
    env.push_back({"FERRY_LOG_FILE", dir_ + "/client-" + name + "-" + std::to_string(++clients_) + ".log"});
    for (auto& e : extra) env.push_back(std::move(e));
    return spawn_self(name, std::move(args), env);
  }

  /// Reads the child's lines until one starts with `prefix`; the whole output so far.
  static std::string read_until(child_process& child, const std::string& prefix, std::string* line_found = nullptr) {
    std::string out;
    const auto deadline = clock_type::now() + child_timeout;
    while (auto line = child.read_line(deadline)) {
      out += *line + "\n";
      if (line->rfind(prefix, 0) == 0) {
        if (line_found) *line_found = *line;
        return out;
      }
    }
    return out;
  }

  static void expect_exit_zero(child_process& child, const std::string& what) {
    const std::string rest = child.read_all(clock_type::now() + child_timeout);
    const auto status = child.wait(clock_type::now() + child_timeout);
    EXPECT_TRUE(status && exited_with(*status, 0))
        << what << ": " << (status ? describe_wait_status(*status) : "still running") << "\n" << rest;
  }

  /// The worker the daemon gave the session opened last (from its log).
  std::optional<pid_t> last_session_worker() {
    static const std::regex goes(R"(goes to worker (\d+))");
    const std::string text = read_file(log_);
    std::optional<pid_t> last;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), goes); it != std::sregex_iterator(); ++it)
      last = static_cast<pid_t>(std::stol((*it)[1]));
    return last;
  }

  std::string dir_, log_;
  int clients_ = 0;
};

TEST_F(workers, a_wild_pointer_ends_only_its_session_while_another_run_completes_exactly) {
  // Under AddressSanitizer a worker would report the SIGSEGV itself and exit with
  // status 1; the daemon must see the signal, as it does in a release build.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string options = std::string(asan ? asan : "") + ":handle_segv=0";
  ferry::test::daemon server({}, log_, {{"ASAN_OPTIONS", options}});
  ASSERT_TRUE(server.started());
  child_process steady = start_client("steady", server.address(), {"400"});
  const std::string began = read_until(steady, "STARTED");
  ASSERT_NE(began.find("STARTED"), std::string::npos) << began;

  child_process wild = start_client("wild", server.address());
  const std::string lost = read_until(wild, "LOST");
  EXPECT_NE(lost.find("LOST"), std::string::npos) << lost;
  expect_exit_zero(wild, "the wild client");
  // Both logs say why: the daemon's names the signal, and so does the client's (the
  // refusal of its resumption carries the reason).
  EXPECT_TRUE(log_shows(log_, "is lost: the session's worker")) << read_file(log_);
  EXPECT_TRUE(log_shows(log_, "SIGSEGV")) << read_file(log_);
  const std::string client_log = read_file(dir_ + "/client-wild-2.log");
  EXPECT_NE(client_log.find("SIGSEGV"), std::string::npos) << client_log;

  const std::string done = read_until(steady, "DONE");
  EXPECT_NE(done.find("DONE"), std::string::npos) << done;
  expect_exit_zero(steady, "the steady client");
  // The daemon goes on serving new sessions.
  child_process after = start_client("brief", server.address());
  expect_exit_zero(after, "a client after the crash");
  server.stop();
}

TEST_F(workers, the_token_is_in_the_main_process_and_in_no_worker) {
  // A token nobody could guess, so that finding its bytes means finding the token.
  std::string token = "ferry-worker-test-";
  for (int i = 0; i < 24; ++i) token += "0123456789abcdef"[(static_cast<unsigned>(::getpid()) * 2654435761u + i * 40503u) % 16];
  token += "-" + std::to_string(clock_type::now().time_since_epoch().count());
  const std::string token_file = dir_ + "/token";
  std::ofstream(token_file) << token << "\n";
  ::chmod(token_file.c_str(), 0600);
  ferry::test::daemon server({"--token-file", token_file}, log_);
  ASSERT_TRUE(server.started());
  // A client that stays connected: a run of a fixed length once ended before the scans
  // below reached its worker, which then was gone.
  child_process steady = start_client("holding", server.address(), {}, {{"FERRY_TOKEN_FILE", token_file}});
  const std::string began = read_until(steady, "STARTED");
  ASSERT_NE(began.find("STARTED"), std::string::npos) << began;

  // The positive control: the scan finds the token where it is.
  auto in_main = memory_holds(server.pid(), token);
  ASSERT_TRUE(in_main.has_value()) << "cannot read the daemon's memory (not root?)";
  EXPECT_TRUE(*in_main) << "the scan did not find the token in the main process, which holds it";
  // The worker of the running session, where the client's kernels run, and every other
  // (spares; one may be ending or starting meanwhile, and then cannot be read).
  auto serving = last_session_worker();
  ASSERT_TRUE(serving.has_value()) << read_file(log_);
  auto held = memory_holds(*serving, token);
  ASSERT_TRUE(held.has_value()) << "cannot read the serving worker " << *serving;
  EXPECT_FALSE(*held) << "the serving worker " << *serving << " holds the token";
  size_t read = 0;
  for (pid_t w : children_of(server.pid())) {
    if (w == *serving) continue;
    held = memory_holds(w, token);
    if (!held) continue;
    ++read;
    EXPECT_FALSE(*held) << "worker " << w << " holds the token";
  }
  EXPECT_GE(read, 1u) << "no spare worker could be read";
  steady.send_signal(SIGKILL);
  steady.kill_and_wait();
  server.stop();
}

TEST_F(workers, a_worker_killed_mid_transfer_ends_its_session_alone) {
  ferry::test::daemon server({}, log_);
  ASSERT_TRUE(server.started());
  child_process steady = start_client("steady", server.address(), {"400"});
  ASSERT_NE(read_until(steady, "STARTED").find("STARTED"), std::string::npos);
  child_process transfers = start_client("transfers", server.address());
  ASSERT_NE(read_until(transfers, "STARTED").find("STARTED"), std::string::npos);
  auto victim = last_session_worker();
  ASSERT_TRUE(victim.has_value()) << read_file(log_);
  ASSERT_EQ(::kill(*victim, SIGKILL), 0);
  std::string lost;
  read_until(transfers, "LOST", &lost);
  EXPECT_EQ(lost, "LOST CL_DEVICE_NOT_AVAILABLE");
  // The client goes on in the session it opens next, over bulk lanes too.
  std::string again;
  read_until(transfers, "AGAIN", &again);
  EXPECT_EQ(again, "AGAIN OK");
  expect_exit_zero(transfers, "the transferring client");
  EXPECT_TRUE(log_shows(log_, "SIGKILL")) << read_file(log_);
  EXPECT_NE(read_until(steady, "DONE").find("DONE"), std::string::npos);
  expect_exit_zero(steady, "the steady client");
  server.stop();
}

TEST_F(workers, a_worker_over_its_memory_limit_ends_its_session_with_out_of_resources) {
  ferry::test::daemon server({"--worker-memory", "400M"}, log_);
  ASSERT_TRUE(server.started());
  child_process steady = start_client("steady", server.address(), {"200"});
  ASSERT_NE(read_until(steady, "STARTED").find("STARTED"), std::string::npos);
  child_process hungry = start_client("hungry", server.address());
  std::string lost;
  read_until(hungry, "LOST", &lost);
  EXPECT_EQ(lost, "LOST CL_OUT_OF_RESOURCES");
  expect_exit_zero(hungry, "the hungry client");
  EXPECT_TRUE(log_shows(log_, "exceeded --worker-memory")) << read_file(log_);
  EXPECT_NE(read_until(steady, "DONE").find("DONE"), std::string::npos);
  expect_exit_zero(steady, "the steady client");
  server.stop();
}

TEST_F(workers, sixty_four_sessions_open_and_close_and_leave_nothing_behind) {
  ferry::test::daemon server({"--spare-workers", "2"}, log_);
  ASSERT_TRUE(server.started());
  // Settled: the spares are up.
  const auto settle = [&](size_t expected) {
    const auto end = clock_type::now() + std::chrono::seconds(60);
    while (children_of(server.pid()).size() != expected && clock_type::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return children_of(server.pid()).size();
  };
  ASSERT_EQ(settle(2), 2u);
  const size_t descriptors_before = open_descriptors(server.pid());
  for (int wave = 0; wave < 4; ++wave) {
    std::vector<child_process> clients;
    for (int i = 0; i < 16; ++i) clients.push_back(start_client("brief", server.address()));
    for (auto& c : clients) expect_exit_zero(c, "a brief client");
  }
  EXPECT_EQ(settle(2), 2u) << "workers left after 64 sessions: " << children_of(server.pid()).size();
  // The main process holds two descriptors per worker until it has reaped it: a
  // moment after the last exit, its count is back where it was.
  const auto end = clock_type::now() + std::chrono::seconds(10);
  while (open_descriptors(server.pid()) != descriptors_before && clock_type::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(open_descriptors(server.pid()), descriptors_before);
  const std::string text = read_file(log_);
  EXPECT_EQ(text.find("is lost"), std::string::npos) << text;
  size_t sessions = 0;
  for (size_t at = text.find("goes to worker"); at != std::string::npos; at = text.find("goes to worker", at + 1))
    ++sessions;
  EXPECT_EQ(sessions, 64u);
  server.stop();
}

TEST_F(workers, a_main_process_out_of_descriptors_pauses_accepting_and_serves_again) {
#ifdef __SANITIZE_ADDRESS__
  // The asan preset adds UBSan, whose vptr check first probes the memory it checks by
  // writing it into a pipe; with the descriptor table full the pipe cannot be made, and
  // every shared_ptr release is reported as a call on an invalid vptr (a six-line
  // program that fills its table and copies one shared_ptr shows the same report).
  GTEST_SKIP() << "UBSan reports false vptr errors in a process without free descriptors";
#endif
  ferry::test::daemon server({}, log_);
  ASSERT_TRUE(server.started());
  // Room for a few more descriptors only: a flood of connections runs it out.
  const size_t open_now = open_descriptors(server.pid());
  rlimit old{};
  ASSERT_EQ(::prlimit(server.pid(), RLIMIT_NOFILE, nullptr, &old), 0) << std::strerror(errno);
  rlimit tight{open_now + 6, old.rlim_max};
  ASSERT_EQ(::prlimit(server.pid(), RLIMIT_NOFILE, &tight, nullptr), 0) << std::strerror(errno);
  std::vector<int> flood;
  for (int i = 0; i < 40; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(server.port());
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0) << std::strerror(errno);
    flood.push_back(fd);
  }
  EXPECT_TRUE(log_shows(log_, "cannot accept a connection")) << read_file(log_);
  for (int fd : flood) ::close(fd);
  ASSERT_EQ(::prlimit(server.pid(), RLIMIT_NOFILE, &old, nullptr), 0) << std::strerror(errno);
  // The daemon goes on serving, and said so once, not once per attempt.
  child_process after = start_client("brief", server.address());
  expect_exit_zero(after, "a client after the flood");
  const std::string text = read_file(log_);
  size_t said = 0;
  for (size_t at = text.find("cannot accept a connection"); at != std::string::npos;
       at = text.find("cannot accept a connection", at + 1))
    ++said;
  EXPECT_LE(said, 3u) << text;
  server.stop();
}

}  // namespace
