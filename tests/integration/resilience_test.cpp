// Sessions that outlive their connections (issue 5): every scenario runs in a child
// process of its own that starts a ferryd, puts the fault proxy (tools/faultproxy) between
// it and libferry, points the loader at Ferry and then breaks the link on purpose. The
// loader reads its environment once per process, hence a process per scenario.
#include <CL/cl_ext_ferry.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cl_helpers.hpp"
#include "daemon.hpp"
#include "faultproxy/fault_proxy.hpp"

using namespace ferry::test;
using clock_type = std::chrono::steady_clock;

suite_config ferry::test::this_suite() {
  suite_config config;
  config.start_daemon = false;    // each child starts its own
  config.set_loader_env = false;  // and points its own loader at it
  return config;
}

namespace {

constexpr const char* accumulate_source = R"CLC(
__kernel void scale_add(__global uint* acc, __global const uint* src, uint factor) {
  size_t i = get_global_id(0);
  acc[i] = acc[i] * 3u + src[i] * factor;
}
__kernel void mix_into(__global uint* acc2, __global const uint* src, uint step) {
  size_t i = get_global_id(0);
  acc2[i] = (acc2[i] ^ (src[i] + step)) * 2654435761u;
}
)CLC";

// A daemon, the proxy in front of it, and the loader pointed at the proxy.
struct rig {
  explicit rig(std::vector<std::string> daemon_args = {}) : server(std::move(daemon_args)) {
    if (!server.started()) return;
    proxy = std::make_unique<ferry::tools::fault_proxy>("127.0.0.1", server.port());
    std::string error;
    if (!proxy->start(error)) {
      std::printf("proxy: %s\n", error.c_str());
      proxy.reset();
      return;
    }
    set_ferry_env(loader_mode::ferry_only, "127.0.0.1:" + std::to_string(proxy->port()));
  }
  bool ready() const { return proxy != nullptr; }

  ferry::test::daemon server;
  std::unique_ptr<ferry::tools::fault_proxy> proxy;
};

// The first Ferry device with a context, an in-order queue and the accumulate program.
struct session {
  bool open() {
    platform = find_ferry_platform();
    if (platform == nullptr) return false;
    auto devices = platform_devices(platform);
    if (devices.empty()) return false;
    device = devices.front();
    return open_context();
  }
  bool open_context() {
    cl_int rc = CL_SUCCESS;
    context.reset(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc));
    if (rc != CL_SUCCESS) return false;
    queue.reset(clCreateCommandQueueWithProperties(context, device, nullptr, &rc));
    if (rc != CL_SUCCESS) return false;
    program = build_program(context, device, accumulate_source, "", false);
    if (!program) return false;
    scale_add = create_kernel(program, "scale_add");
    mix = create_kernel(program, "mix_into");
    return scale_add && mix;
  }
  bool available() const { return device_value<cl_bool>(device, CL_DEVICE_AVAILABLE) == CL_TRUE; }
  clFerryGetMessageCounts_fn message_counts() const {
    return reinterpret_cast<clFerryGetMessageCounts_fn>(ferry_extension(platform, "clFerryGetMessageCounts"));
  }
  // Waits (polling) until the device reports `wanted`; false after `limit`.
  bool wait_available(bool wanted, std::chrono::milliseconds limit = std::chrono::seconds(20)) const {
    const auto end = clock_type::now() + limit;
    while (available() != wanted) {
      if (clock_type::now() > end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  context_handle context;
  queue_handle queue;
  program_handle program;
  kernel_handle scale_add;
  kernel_handle mix;
};

// A fill of one 4-byte buffer (holding 41) with 1, held back by a user event and flushed:
// a command the server has accepted and cannot run until the gate opens.
struct gated_fill {
  event_handle gate;
  mem_handle buffer;
  event_handle fill;

  bool enqueue(const session& s) {
    cl_int rc = CL_SUCCESS;
    const uint32_t initial = 41, one = 1;
    buffer = create_buffer(s.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, const_cast<uint32_t*>(&initial));
    gate.reset(clCreateUserEvent(s.context, &rc));
    if (!buffer || rc != CL_SUCCESS) return false;
    rc = clEnqueueFillBuffer(s.queue, buffer, &one, 4, 0, 4, 1, gate.address(), fill.out());
    return rc == CL_SUCCESS && clFlush(s.queue) == CL_SUCCESS;
  }
};

// Waits up to two seconds until the proxy has made `count` cuts; false if it has not.
bool wait_for_cuts(const ferry::tools::fault_proxy& proxy, uint64_t count) {
  const auto end = clock_type::now() + std::chrono::seconds(2);
  while (proxy.cuts() < count) {
    if (clock_type::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

uint32_t source_value(uint32_t round, size_t i) { return round * 2246822519u + static_cast<uint32_t>(i) * 3266489917u; }

// The workload: each round writes a source buffer, runs two kernels that fold it into two
// accumulators (an order-sensitive update each, so a lost or repeated command changes every
// later value) and reads one accumulator back; 2500 rounds make 10,000 commands. Fifty cuts
// fall at random points, half of them in the middle of a frame.
FERRY_IT_CHILD(cut_workload) {
  rig r;
  CHILD_CHECK(r.ready(), "no daemon or proxy");
  session s;
  CHILD_CHECK(s.open(), "no Ferry device, context or program");
  auto message_counts = s.message_counts();
  constexpr size_t n = 1024;
  constexpr uint32_t rounds = 2500;
  constexpr int cuts = 50;
  constexpr uint32_t check_every = 50;
  cl_int rc = CL_SUCCESS;
  std::vector<uint32_t> zeros(n, 0);
  mem_handle acc = create_buffer(s.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, zeros.data());
  mem_handle acc2 = create_buffer(s.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, zeros.data());
  mem_handle src = create_buffer(s.context, CL_MEM_READ_ONLY, n * 4);
  CHILD_CHECK(acc && acc2 && src, "buffers");

  std::mt19937 random(20261124);
  std::vector<uint32_t> cut_rounds;
  for (int i = 0; i < cuts; ++i) cut_rounds.push_back(1 + random() % (rounds - 2));
  std::sort(cut_rounds.begin(), cut_rounds.end());

  std::vector<uint32_t> expected(n, 0), expected2(n, 0), host(n);
  std::vector<std::vector<uint32_t>> snapshots(check_every, std::vector<uint32_t>(n));
  std::vector<std::vector<uint32_t>> expected_snapshots(check_every);
  size_t next_cut = 0;
  for (uint32_t round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < n; ++i) host[i] = source_value(round, i);
    const uint32_t factor = round % 7 + 1;
    rc = clEnqueueWriteBuffer(s.queue, src, CL_TRUE, 0, n * 4, host.data(), 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "write in round %u: %d", round, rc);
    clSetKernelArg(s.scale_add, 0, sizeof(cl_mem), acc.address());
    clSetKernelArg(s.scale_add, 1, sizeof(cl_mem), src.address());
    clSetKernelArg(s.scale_add, 2, sizeof factor, &factor);
    rc = clEnqueueNDRangeKernel(s.queue, s.scale_add, 1, nullptr, &n, nullptr, 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "scale_add in round %u: %d", round, rc);
    clSetKernelArg(s.mix, 0, sizeof(cl_mem), acc2.address());
    clSetKernelArg(s.mix, 1, sizeof(cl_mem), src.address());
    clSetKernelArg(s.mix, 2, sizeof round, &round);
    rc = clEnqueueNDRangeKernel(s.queue, s.mix, 1, nullptr, &n, nullptr, 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "mix in round %u: %d", round, rc);
    auto& snapshot = snapshots[round % check_every];
    rc = clEnqueueReadBuffer(s.queue, acc, CL_FALSE, 0, n * 4, snapshot.data(), 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "read in round %u: %d", round, rc);
    for (size_t i = 0; i < n; ++i) {
      expected[i] = expected[i] * 3u + host[i] * factor;
      expected2[i] = (expected2[i] ^ (host[i] + round)) * 2654435761u;
    }
    expected_snapshots[round % check_every] = expected;

    while (next_cut < cut_rounds.size() && cut_rounds[next_cut] == round) {
      // A cut armed earlier fires once its bytes have gone by; arming another first
      // would replace it.
      wait_for_cuts(*r.proxy, next_cut);
      // Alternately a cut at once (frames in flight are lost on the wire) and one a few
      // bytes further, in either direction (the receiver sees half a frame).
      if (next_cut % 2 == 0) {
        r.proxy->cut();
      } else {
        const auto way = next_cut % 4 == 1 ? ferry::tools::direction::to_target : ferry::tools::direction::to_client;
        r.proxy->cut_after(1 + random() % 3000, way);
      }
      ++next_cut;
    }
    if ((round + 1) % check_every == 0) {
      rc = clFinish(s.queue);
      CHILD_CHECK(rc == CL_SUCCESS, "clFinish after round %u: %d", round, rc);
      for (uint32_t k = 0; k < check_every; ++k)
        CHILD_CHECK(snapshots[k] == expected_snapshots[k], "snapshot of round %u differs", round + 1 - check_every + k);
    }
  }
  // The last armed cut fires with the traffic of the final reads; one that never got its
  // bytes (the workload went quiet) is made up for with a cut at once.
  if (!wait_for_cuts(*r.proxy, cuts)) r.proxy->cut();
  std::vector<uint32_t> final_acc(n), final_acc2(n);
  rc = clEnqueueReadBuffer(s.queue, acc2, CL_TRUE, 0, n * 4, final_acc2.data(), 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "final read: %d", rc);
  rc = clEnqueueReadBuffer(s.queue, acc, CL_TRUE, 0, n * 4, final_acc.data(), 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "final read: %d", rc);
  CHILD_CHECK(final_acc == expected, "accumulator differs from the host's");
  CHILD_CHECK(final_acc2 == expected2, "second accumulator differs from the host's");

  // The server's count of control messages it ran equals the client's count of those it
  // sent: none lost, none run twice, over every reconnection.
  CHILD_CHECK(message_counts != nullptr, "clFerryGetMessageCounts is not offered");
  CHILD_CHECK(message_counts(s.device, nullptr, nullptr) == CL_INVALID_VALUE, "two NULL outputs accepted");
  cl_ulong sent = 0, run = 0;
  rc = message_counts(s.device, &sent, &run);
  CHILD_CHECK(rc == CL_SUCCESS, "message counts: %d", rc);
  CHILD_CHECK(sent == run, "sent %llu messages, server ran %llu", static_cast<unsigned long long>(sent),
              static_cast<unsigned long long>(run));
  CHILD_CHECK(sent > 4 * rounds, "only %llu messages", static_cast<unsigned long long>(sent));
  CHILD_CHECK(r.proxy->cuts() >= static_cast<uint64_t>(cuts), "only %llu cuts happened",
              static_cast<unsigned long long>(r.proxy->cuts()));
  std::printf("PASS commands=%u cuts=%llu messages=%llu\n", 4 * rounds,
              static_cast<unsigned long long>(r.proxy->cuts()), static_cast<unsigned long long>(sent));
  return 0;
}

struct availability_log {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::pair<cl_device_id, cl_bool>> calls;

  static void CL_CALLBACK record(cl_device_id device, cl_bool available, void* self) {
    auto* log = static_cast<availability_log*>(self);
    {
      std::lock_guard lock(log->mutex);
      log->calls.emplace_back(device, available);
    }
    log->changed.notify_all();
  }
  // Waits for the `count`th call; false after ten seconds.
  bool wait_for(size_t count) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(10), [&] { return calls.size() >= count; });
  }
};

// While the link is down the device reports itself unavailable, and the application hears
// both changes through its availability callback. A command accepted before the outage
// waits and completes once the link is back. New commands meet the outage policy: by
// default they are taken and run on the resumption, and a blocking call waits for it
// (an unmodified program notices nothing); with FERRY_OUTAGE=fail-fast they are refused
// at once, for a program that moves its work elsewhere.
int availability_scenario(bool fail_fast) {
  rig r;
  CHILD_CHECK(r.ready(), "no daemon or proxy");
  session s;
  CHILD_CHECK(s.open(), "no Ferry device, context or program");
  auto set_callback = reinterpret_cast<clFerrySetAvailabilityCallback_fn>(
      ferry_extension(s.platform, "clFerrySetAvailabilityCallback"));
  CHILD_CHECK(set_callback != nullptr, "clFerrySetAvailabilityCallback is not offered");
  // Callbacks cannot be removed, and more come when the daemon stops at the end:
  // the log lives as long as the process.
  auto& log = *new availability_log;
  CHILD_CHECK(set_callback(s.platform, nullptr, &log) == CL_INVALID_VALUE, "NULL callback accepted");
  CHILD_CHECK(set_callback(s.platform, &availability_log::record, &log) == CL_SUCCESS, "registration");

  cl_int rc = CL_SUCCESS;
  gated_fill gated;
  CHILD_CHECK(gated.enqueue(s), "a fill behind a user event");
  auto& [gate, buffer, fill] = gated;

  r.proxy->refuse(true);
  r.proxy->cut();
  CHILD_CHECK(log.wait_for(1), "no callback after the link went down");
  {
    std::lock_guard lock(log.mutex);
    CHILD_CHECK(log.calls[0].first == s.device && log.calls[0].second == CL_FALSE, "first call is not 'unavailable'");
  }
  CHILD_CHECK(!s.available(), "CL_DEVICE_AVAILABLE stays true while offline");
  const uint32_t seven = 7;
  rc = clEnqueueWriteBuffer(s.queue, buffer, CL_FALSE, 0, 4, &seven, 0, nullptr, nullptr);
  if (fail_fast)
    CHILD_CHECK(rc == CL_DEVICE_NOT_AVAILABLE, "a new command while offline gave %d under fail-fast", rc);
  else
    CHILD_CHECK(rc == CL_SUCCESS, "a new command while offline gave %d", rc);
  // A blocking read while offline waits for the resumption (fail-fast: fails at once).
  uint32_t during = 0;
  std::atomic<bool> read_returned{false};
  std::atomic<cl_int> read_rc{CL_SUCCESS};
  std::thread reader([&] {
    read_rc = clEnqueueReadBuffer(s.queue, buffer, CL_TRUE, 0, 4, &during, 0, nullptr, nullptr);
    read_returned = true;
  });
  // Releasing the gate while offline: the status goes out with the resumption.
  CHILD_CHECK(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS, "user event status");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // stay offline a while: the session waits
  CHILD_CHECK(event_status(fill) > CL_COMPLETE, "the fill completed while the link was down");
  const bool returned_offline = read_returned;

  const uint64_t tries_while_refused = r.proxy->connections_accepted();
  r.proxy->refuse(false);
  reader.join();
  // On failure, the connections the proxy took say whether the client went on
  // trying (and the daemon did not take it back) or stopped trying.
  CHILD_CHECK(log.wait_for(2), "no callback after the link came back (the proxy took %llu connections while "
              "refusing, %llu since)", static_cast<unsigned long long>(tries_while_refused),
              static_cast<unsigned long long>(r.proxy->connections_accepted() - tries_while_refused));
  {
    std::lock_guard lock(log.mutex);
    CHILD_CHECK(log.calls[1].first == s.device && log.calls[1].second == CL_TRUE, "second call is not 'available'");
  }
  if (fail_fast) {
    CHILD_CHECK(returned_offline && read_rc == CL_DEVICE_NOT_AVAILABLE, "the offline read gave %d",
                static_cast<cl_int>(read_rc));
  } else {
    CHILD_CHECK(!returned_offline, "a blocking read returned while the link was down");
    CHILD_CHECK(read_rc == CL_SUCCESS && during == seven, "the offline read: rc %d value %u",
                static_cast<cl_int>(read_rc), during);
  }
  CHILD_CHECK(clWaitForEvents(1, fill.address()) == CL_SUCCESS, "the accepted fill did not complete");
  uint32_t result = 0;
  rc = clEnqueueReadBuffer(s.queue, buffer, CL_TRUE, 0, 4, &result, 0, nullptr, nullptr);
  const uint32_t expected = fail_fast ? 1 : seven;
  CHILD_CHECK(rc == CL_SUCCESS && result == expected, "read after the resumption: rc %d value %u", rc, result);
  std::printf("PASS callbacks=%zu\n", log.calls.size());
  return 0;
}

FERRY_IT_CHILD(availability) { return availability_scenario(false); }
FERRY_IT_CHILD(availability_fail_fast) { return availability_scenario(true); }

// A program that knows nothing of Ferry or of outages, as a user would write it: 100,000
// small kernels that each add their step to every element, a blocking read after every
// hundred that checks the sums, no error handling. Meanwhile the link is cut every 100 to
// 300 ms, fifty times. Every call must succeed, every sum must be exact, and the server
// must have run exactly the messages the client sent.
FERRY_IT_CHILD(unaware_program_through_cuts) {
  rig r;
  CHILD_CHECK(r.ready(), "no daemon or proxy");
  session s;
  CHILD_CHECK(s.open(), "no Ferry device, context or program");
  auto message_counts = s.message_counts();
  constexpr size_t n = 64;
  constexpr uint32_t kernels = 100000;
  constexpr uint32_t read_every = 100;
  constexpr uint64_t cuts = 50;
  std::vector<uint32_t> zeros(n, 0), host(n);
  mem_handle acc = create_buffer(s.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, zeros.data());
  mem_handle unused = create_buffer(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, zeros.data());
  CHILD_CHECK(acc && unused, "buffers");
  // scale_add with a factor of 0 would not accumulate; mix_into's steps do, and are
  // order-sensitive: a lost or repeated kernel changes every later sum.
  CHILD_CHECK(clSetKernelArg(s.mix, 0, sizeof(cl_mem), acc.address()) == CL_SUCCESS, "arg 0");
  CHILD_CHECK(clSetKernelArg(s.mix, 1, sizeof(cl_mem), unused.address()) == CL_SUCCESS, "arg 1");

  std::atomic<bool> done{false};
  std::thread cutter([&] {
    std::mt19937 random(20261126);
    while (!done && r.proxy->cuts() < cuts) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100 + random() % 201));
      if (!done) r.proxy->cut();
    }
  });
  std::vector<uint32_t> expected(n, 0);
  uint32_t kernel = 0;
  cl_int failure = CL_SUCCESS;
  const char* failed_call = "";
  // At least 100,000 kernels, and on until the fiftieth cut has fallen inside the run.
  while (failure == CL_SUCCESS && (kernel < kernels || r.proxy->cuts() < cuts)) {
    for (uint32_t k = 0; k < read_every; ++k, ++kernel) {
      clSetKernelArg(s.mix, 2, sizeof kernel, &kernel);
      cl_int rc = clEnqueueNDRangeKernel(s.queue, s.mix, 1, nullptr, &n, nullptr, 0, nullptr, nullptr);
      if (rc != CL_SUCCESS && failure == CL_SUCCESS) failure = rc, failed_call = "clEnqueueNDRangeKernel";
      for (size_t i = 0; i < n; ++i) expected[i] = (expected[i] ^ (0u + kernel)) * 2654435761u;
    }
    cl_int rc = clEnqueueReadBuffer(s.queue, acc, CL_TRUE, 0, n * 4, host.data(), 0, nullptr, nullptr);
    if (rc != CL_SUCCESS && failure == CL_SUCCESS) failure = rc, failed_call = "clEnqueueReadBuffer";
    if (failure == CL_SUCCESS && host != expected) failed_call = "the sums";
    if (*failed_call) break;
  }
  done = true;
  cutter.join();
  CHILD_CHECK(*failed_call == 0, "%s failed (%d) after %u kernels and %llu cuts", failed_call, failure, kernel,
              static_cast<unsigned long long>(r.proxy->cuts()));
  CHILD_CHECK(r.proxy->cuts() >= cuts, "only %llu cuts", static_cast<unsigned long long>(r.proxy->cuts()));
  cl_ulong sent = 0, run = 0;
  CHILD_CHECK(message_counts(s.device, &sent, &run) == CL_SUCCESS, "message counts");
  CHILD_CHECK(sent == run, "sent %llu messages, server ran %llu", static_cast<unsigned long long>(sent),
              static_cast<unsigned long long>(run));
  std::printf("PASS kernels=%u cuts=%llu messages=%llu\n", kernel, static_cast<unsigned long long>(r.proxy->cuts()),
              static_cast<unsigned long long>(sent));
  return 0;
}

// A large non-blocking write while the link is down returns at once: its bytes wait in the
// replay log, pointing into the application's memory (which it leaves alone until the
// command completes), and go out on the resumption. Waiting for the server's
// acknowledgement instead would hold the application's thread for the whole outage.
FERRY_IT_CHILD(nonblocking_write_during_outage) {
  rig r;
  CHILD_CHECK(r.ready(), "no daemon or proxy");
  session s;
  CHILD_CHECK(s.open(), "no Ferry device, context or program");
  constexpr size_t size = size_t{16} << 20;
  std::vector<uint8_t> pattern(size);
  for (size_t i = 0; i < size; ++i) pattern[i] = static_cast<uint8_t>(i * 13 + (i >> 16));
  mem_handle buffer = create_buffer(s.context, CL_MEM_READ_WRITE, size);
  CHILD_CHECK(buffer, "buffer");
  r.proxy->refuse(true);
  r.proxy->cut();
  CHILD_CHECK(s.wait_available(false), "the device stayed available");
  event_handle written;
  cl_int rc = clEnqueueWriteBuffer(s.queue, buffer, CL_FALSE, 0, size, pattern.data(), 0, nullptr, written.out());
  CHILD_CHECK(rc == CL_SUCCESS, "the write gave %d", rc);
  CHILD_CHECK(!s.available(), "the write returned only after the link came back");
  CHILD_CHECK(event_status(written) > CL_COMPLETE, "the write completed while the link was down");
  r.proxy->refuse(false);
  CHILD_CHECK(clWaitForEvents(1, written.address()) == CL_SUCCESS, "the write failed");
  std::vector<uint8_t> back(size);
  rc = clEnqueueReadBuffer(s.queue, buffer, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS && back == pattern, "read back: rc %d, %s", rc, back == pattern ? "same" : "different");
  std::printf("PASS\n");
  return 0;
}

// Large reads (in pieces, each sent as soon as it is read) whose bytes are cut off on
// their way to the client: the connection breaks after a few megabytes of each, the
// session resumes, the daemon sends again what the client had not received, and every
// read still arrives whole and in place.
FERRY_IT_CHILD(large_reads_through_cuts) {
  rig r;
  CHILD_CHECK(r.ready(), "no daemon or proxy");
  session s;
  CHILD_CHECK(s.open(), "no Ferry device, context or program");
  constexpr size_t size = (size_t{56} << 20) + 333;
  std::vector<uint8_t> pattern(size);
  for (size_t i = 0; i < size; ++i) pattern[i] = static_cast<uint8_t>(i * 31 + (i >> 18));
  mem_handle buffer = create_buffer(s.context, CL_MEM_READ_WRITE, size);
  CHILD_CHECK(buffer, "buffer");
  cl_int rc = clEnqueueWriteBuffer(s.queue, buffer, CL_TRUE, 0, size, pattern.data(), 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "write: %d", rc);
  uint64_t cuts = r.proxy->cuts();
  // Cut inside the first chunk, on a chunk's edge, and deep in the read.
  for (uint64_t after : {uint64_t{3} << 20, uint64_t{16} << 20, (uint64_t{41} << 20) + 77}) {
    std::vector<uint8_t> back(size, 0);
    r.proxy->cut_after(after, ferry::tools::direction::to_client);
    rc = clEnqueueReadBuffer(s.queue, buffer, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "read with a cut after %llu bytes: %d", static_cast<unsigned long long>(after), rc);
    CHILD_CHECK(back == pattern, "the read with a cut after %llu bytes differs",
                static_cast<unsigned long long>(after));
    CHILD_CHECK(wait_for_cuts(*r.proxy, ++cuts), "no cut after %llu bytes", static_cast<unsigned long long>(after));
  }
  std::printf("PASS\n");
  return 0;
}

// Large writes striped over the bulk stream and its lanes (ferryd grants 4 bulk
// connections by default), cut off on their way to the server at several places: the
// session resumes, each lane sends again what the server lacks of it, and every write
// lands whole. A non-blocking write and a blocking one, each read back.
FERRY_IT_CHILD(striped_writes_through_cuts) {
  rig r;
  CHILD_CHECK(r.ready(), "no daemon or proxy");
  session s;
  CHILD_CHECK(s.open(), "no Ferry device, context or program");
  // Control, bulk stream and three lanes: the writes below are striped.
  CHILD_CHECK(r.proxy->connections_accepted() == 5, "the client opened %llu connections, not 5",
              static_cast<unsigned long long>(r.proxy->connections_accepted()));
  constexpr size_t size = (size_t{72} << 20) + 4097;
  std::vector<uint8_t> pattern(size);
  for (size_t i = 0; i < size; ++i) pattern[i] = static_cast<uint8_t>(i * 29 + (i >> 19));
  mem_handle buffer = create_buffer(s.context, CL_MEM_READ_WRITE, size);
  CHILD_CHECK(buffer, "buffer");
  uint64_t cuts = r.proxy->cuts();
  // Inside the first chunk, on a chunk's edge, and deep in the write.
  int round = 0;
  for (uint64_t after : {uint64_t{5} << 20, uint64_t{24} << 20, (uint64_t{61} << 20) + 99}) {
    for (size_t i = 0; i < size; i += 4096) pattern[i] = static_cast<uint8_t>(round + i);  // a new write each time
    r.proxy->cut_after(after, ferry::tools::direction::to_target);
    const cl_bool blocking = round % 2 == 0 ? CL_TRUE : CL_FALSE;
    event_handle written;
    cl_int rc = clEnqueueWriteBuffer(s.queue, buffer, blocking, 0, size, pattern.data(), 0, nullptr, written.out());
    CHILD_CHECK(rc == CL_SUCCESS, "write with a cut after %llu bytes: %d", static_cast<unsigned long long>(after), rc);
    CHILD_CHECK(clWaitForEvents(1, written.address()) == CL_SUCCESS, "the write with a cut after %llu bytes failed",
                static_cast<unsigned long long>(after));
    std::vector<uint8_t> back(size, 0);
    rc = clEnqueueReadBuffer(s.queue, buffer, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "read back: %d", rc);
    CHILD_CHECK(back == pattern, "the write with a cut after %llu bytes did not land whole",
                static_cast<unsigned long long>(after));
    CHILD_CHECK(wait_for_cuts(*r.proxy, ++cuts), "no cut after %llu bytes", static_cast<unsigned long long>(after));
    ++round;
  }
  // Every resumption attached the lanes again.
  CHILD_CHECK(r.proxy->connections_accepted() >= 5 * 4, "only %llu connections after three resumptions",
              static_cast<unsigned long long>(r.proxy->connections_accepted()));
  std::printf("PASS cuts=%llu connections=%llu\n", static_cast<unsigned long long>(r.proxy->cuts()),
              static_cast<unsigned long long>(r.proxy->connections_accepted()));
  return 0;
}

// A link down for longer than the grace period: the session is over. A blocking wait on a
// command accepted before the outage returns CL_DEVICE_NOT_AVAILABLE instead of hanging,
// the old context's queue refuses new work, and a new context on the same device works
// once the server is reachable again.
FERRY_IT_CHILD(grace_expiry) {
  rig r({"--session-grace", "1"});
  CHILD_CHECK(r.ready(), "no daemon or proxy");
  session s;
  CHILD_CHECK(s.open(), "no Ferry device, context or program");
  cl_int rc = CL_SUCCESS;
  gated_fill gated;
  CHILD_CHECK(gated.enqueue(s), "a fill behind a user event");
  auto& [gate, buffer, fill] = gated;

  r.proxy->refuse(true);
  r.proxy->cut();
  const auto start = clock_type::now();
  rc = clWaitForEvents(1, fill.address());
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start);
  CHILD_CHECK(rc == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "wait gave %d", rc);
  CHILD_CHECK(event_status(fill) == CL_DEVICE_NOT_AVAILABLE, "the fill's status is %d", event_status(fill));
  const cl_int finish = clFinish(s.queue);  // returns rather than waiting for a lost session
  CHILD_CHECK(finish == CL_SUCCESS || finish == CL_DEVICE_NOT_AVAILABLE, "clFinish gave %d", finish);
  r.proxy->refuse(false);
  CHILD_CHECK(s.wait_available(true), "the device did not come back");
  uint32_t scratch = 0;
  rc = clEnqueueWriteBuffer(s.queue, buffer, CL_TRUE, 0, 4, &scratch, 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_DEVICE_NOT_AVAILABLE, "the old context took a command: %d", rc);
  CHILD_CHECK(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS, "user event");

  session fresh;
  fresh.platform = s.platform;
  fresh.device = s.device;
  CHILD_CHECK(fresh.open_context(), "a new context on the device after the session ended");
  std::string error = run_vector_add(s.device, 4096, 2.0f);
  CHILD_CHECK(error.empty(), "vector_add in a new context: %s", error.c_str());
  std::printf("PASS waited_ms=%lld\n", static_cast<long long>(waited.count()));
  return 0;
}

// The server restarts (same address, new process): it knows nothing of the session, so
// the resumption is refused. The affected events fail with CL_DEVICE_NOT_AVAILABLE, no call
// hangs, and the restarted server serves new contexts.
FERRY_IT_CHILD(server_restart) {
  auto first = std::make_unique<ferry::test::daemon>();
  CHILD_CHECK(first->started(), "no daemon");
  const uint16_t port = first->port();
  set_ferry_env(loader_mode::ferry_only, first->address());
  session s;
  CHILD_CHECK(s.open(), "no Ferry device, context or program");
  cl_int rc = CL_SUCCESS;
  gated_fill gated;
  CHILD_CHECK(gated.enqueue(s), "a fill behind a user event");
  auto& [gate, buffer, fill] = gated;

  first->stop();
  first.reset();
  ferry::test::daemon second({"--port", std::to_string(port)});
  CHILD_CHECK(second.started(), "the daemon did not restart on port %u", port);
  rc = clWaitForEvents(1, fill.address());
  CHILD_CHECK(rc == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "wait gave %d", rc);
  CHILD_CHECK(event_status(fill) == CL_DEVICE_NOT_AVAILABLE, "the fill's status is %d", event_status(fill));
  CHILD_CHECK(s.wait_available(true), "the device did not come back");
  uint32_t scratch = 0;
  rc = clEnqueueWriteBuffer(s.queue, buffer, CL_TRUE, 0, 4, &scratch, 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_DEVICE_NOT_AVAILABLE, "the old context took a command: %d", rc);
  mem_handle another;
  cl_mem raw = clCreateBuffer(s.context, CL_MEM_READ_WRITE, 4, nullptr, &rc);
  another.reset(raw);
  CHILD_CHECK(rc == CL_DEVICE_NOT_AVAILABLE, "the old context made a buffer: %d", rc);
  CHILD_CHECK(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS, "user event");
  std::string error = run_vector_add(s.device, 4096, 3.0f);
  CHILD_CHECK(error.empty(), "vector_add in a new context: %s", error.c_str());
  std::printf("PASS\n");
  return 0;
}

// The client's address changes mid-run (the proxy connects from another loopback address
// after a cut): the session resumes from the new address and the work goes on.
FERRY_IT_CHILD(roaming_source_address) {
  rig r;
  CHILD_CHECK(r.ready(), "no daemon or proxy");
  session s;
  CHILD_CHECK(s.open(), "no Ferry device, context or program");
  constexpr size_t n = 256;
  std::vector<uint32_t> zeros(n, 0), host(n);
  mem_handle acc = create_buffer(s.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, zeros.data());
  mem_handle src = create_buffer(s.context, CL_MEM_READ_ONLY, n * 4);
  std::vector<uint32_t> expected(n, 0);
  const char* addresses[] = {"127.0.0.2", "127.0.0.3", ""};
  for (uint32_t round = 0; round < 300; ++round) {
    if (round % 100 == 50) {
      r.proxy->set_source_address(addresses[round / 100]);
      r.proxy->cut();
    }
    for (size_t i = 0; i < n; ++i) host[i] = source_value(round, i);
    const uint32_t factor = 3;
    cl_int rc = clEnqueueWriteBuffer(s.queue, src, CL_TRUE, 0, n * 4, host.data(), 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "write: %d", rc);
    clSetKernelArg(s.scale_add, 0, sizeof(cl_mem), acc.address());
    clSetKernelArg(s.scale_add, 1, sizeof(cl_mem), src.address());
    clSetKernelArg(s.scale_add, 2, sizeof factor, &factor);
    rc = clEnqueueNDRangeKernel(s.queue, s.scale_add, 1, nullptr, &n, nullptr, 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "kernel: %d", rc);
    for (size_t i = 0; i < n; ++i) expected[i] = expected[i] * 3u + host[i] * factor;
  }
  std::vector<uint32_t> result(n);
  cl_int rc = clEnqueueReadBuffer(s.queue, acc, CL_TRUE, 0, n * 4, result.data(), 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "read: %d", rc);
  CHILD_CHECK(result == expected, "results differ after roaming");
  std::printf("PASS cuts=%llu\n", static_cast<unsigned long long>(r.proxy->cuts()));
  return 0;
}

}  // namespace

TEST(resilience, ten_thousand_commands_through_fifty_cuts_run_once_each) { expect_child_passes("cut_workload"); }

TEST(resilience, new_work_during_an_outage_waits_for_the_resumption_and_the_callback_hears_both_changes) {
  expect_child_passes("availability");
}

TEST(resilience, fail_fast_refuses_new_work_during_an_outage) {
  expect_child_passes("availability_fail_fast", std::chrono::seconds(240), {{"FERRY_OUTAGE", "fail-fast"}});
}

TEST(resilience, a_large_nonblocking_write_during_an_outage_returns_at_once_and_lands_after_it) {
  expect_child_passes("nonblocking_write_during_outage");
}

TEST(resilience, an_unaware_program_runs_a_hundred_thousand_kernels_through_fifty_cuts) {
  expect_child_passes("unaware_program_through_cuts", std::chrono::seconds(280));
}

TEST(resilience, large_reads_cut_off_on_their_way_resume_and_arrive_whole) {
  expect_child_passes("large_reads_through_cuts");
}

TEST(resilience, large_writes_striped_over_bulk_lanes_resume_through_cuts_and_land_whole) {
  expect_child_passes("striped_writes_through_cuts");
}

TEST(resilience, grace_period_expiry_fails_waiting_work_and_a_new_context_works) {
  expect_child_passes("grace_expiry");
}

TEST(resilience, restarted_server_fails_the_lost_session_and_serves_new_contexts) {
  expect_child_passes("server_restart");
}

TEST(resilience, a_client_whose_address_changes_resumes_its_session) { expect_child_passes("roaming_source_address"); }
