// Several servers in one context: devices of three daemons side by side, kernels hopping
// from server to server with their buffers migrating over the peer links (the client link
// carries no buffer bytes), wait lists that name events of other servers, out-of-order
// queues across servers, cl_pocl_content_size, a peer that cannot be reached, and object
// counts that wait for the reports of every server.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <numeric>
#include <set>

#include "cl_helpers.hpp"
#include "faultproxy/fault_proxy.hpp"

namespace ferry::test {

suite_config this_suite() {
  suite_config config;
  config.daemon_count = 3;
  return config;
}

namespace {

constexpr const char* mesh_source = R"CLC(
__kernel void mix_step(__global uint* data, uint salt) {
  size_t i = get_global_id(0);
  data[i] = data[i] * 3u + (uint)i + salt;
}
__kernel void increment(__global uint* data) {
  data[get_global_id(0)] += 1u;
}
__kernel void add_into(__global const uint* from, __global uint* to) {
  size_t i = get_global_id(0);
  to[i] += from[i];
}
)CLC";

/// What the `step` kernel does, on the host.
void step_on_host(std::vector<cl_uint>& data, cl_uint salt) {
  for (size_t i = 0; i < data.size(); ++i) data[i] = data[i] * 3u + static_cast<cl_uint>(i) + salt;
}

/// The traffic of one kind of link of one server, summed over remote hosts.
struct traffic {
  cl_ulong bytes_in = 0;
  cl_ulong bytes_out = 0;
};

class mesh : public ::testing::Test {
 protected:
  void SetUp() override {
    if constexpr (self_check) GTEST_SKIP() << "needs several ferryd";
    platform_ = find_ferry_platform();
    ASSERT_NE(platform_, nullptr);
    ASSERT_EQ(platform_name(platform_), "Ferry");
    devices_ = platform_devices(platform_);
    ASSERT_EQ(devices_.size(), 3u) << "one device per daemon";
    counters_ = reinterpret_cast<clFerryGetLinkCounters_fn>(ferry_extension(platform_, "clFerryGetLinkCounters"));
    ASSERT_NE(counters_, nullptr);
    cl_int rc = CL_SUCCESS;
    context_.reset(clCreateContext(nullptr, static_cast<cl_uint>(devices_.size()), devices_.data(), nullptr, nullptr,
                                   &rc));
    ASSERT_CL_OK(rc);
    for (cl_device_id d : devices_) {
      queues_.emplace_back(clCreateCommandQueueWithProperties(context_, d, nullptr, &rc));
      ASSERT_CL_OK(rc);
    }
    cl_program raw = nullptr;
    const char* text = mesh_source;
    raw = clCreateProgramWithSource(context_, 1, &text, nullptr, &rc);
    ASSERT_CL_OK(rc);
    program_.reset(raw);
    ASSERT_CL_OK(clBuildProgram(program_, 0, nullptr, "", nullptr, nullptr));
  }

  void TearDown() override {
    if constexpr (self_check) return;
    queues_.clear();
    program_.reset();
    context_.reset();
    for (cl_device_id d : devices_) expect_no_leaks(platform_, d);
  }

  kernel_handle kernel(const char* name) { return create_kernel(program_, name); }

  /// One kind of link's traffic at the server of `device`.
  traffic link_traffic(cl_device_id device, cl_uint kind) {
    std::array<cl_ferry_link_counters, 64> links{};
    cl_uint count = 0;
    EXPECT_CL_OK(counters_(device, static_cast<cl_uint>(links.size()), links.data(), &count));
    traffic sum;
    for (cl_uint i = 0; i < std::min<cl_uint>(count, links.size()); ++i) {
      if (links[i].kind != kind) continue;
      sum.bytes_in += links[i].bytes_in;
      sum.bytes_out += links[i].bytes_out;
    }
    return sum;
  }

  /// A buffer of `host`'s size holding its contents, written (blocking) through queue `q`.
  mem_handle written_buffer(size_t q, const std::vector<cl_uint>& host) {
    const size_t bytes = host.size() * sizeof(cl_uint);
    mem_handle data = create_buffer(context_, CL_MEM_READ_WRITE, bytes);
    EXPECT_EQ(clEnqueueWriteBuffer(queues_[q], data, CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr), CL_SUCCESS);
    return data;
  }

  /// Enqueues `step(data, salt)` on queue `q` after `wait` (may be null); returns its event.
  event_handle step(size_t q, cl_mem data, size_t items, cl_uint salt, cl_event wait) {
    kernel_handle k = kernel("mix_step");
    EXPECT_CL_OK(clSetKernelArg(k, 0, sizeof(cl_mem), &data));
    EXPECT_CL_OK(clSetKernelArg(k, 1, sizeof salt, &salt));
    event_handle done;
    EXPECT_CL_OK(clEnqueueNDRangeKernel(queues_[q], k, 1, nullptr, &items, nullptr, wait ? 1 : 0,
                                        wait ? &wait : nullptr, done.out()));
    return done;
  }

  cl_platform_id platform_ = nullptr;
  std::vector<cl_device_id> devices_;
  clFerryGetLinkCounters_fn counters_ = nullptr;
  context_handle context_;
  std::vector<queue_handle> queues_;
  program_handle program_;
};

TEST_F(mesh, platform_lists_every_server_with_native_names_and_addresses) {
  std::set<std::string> addresses;
  const std::string native_name = device_string(platform_devices(find_native_platform())[0], CL_DEVICE_NAME);
  for (cl_device_id d : devices_) {
    EXPECT_EQ(device_string(d, CL_DEVICE_NAME), native_name) << "the native device's name, unchanged";
    addresses.insert(device_string(d, CL_DEVICE_FERRY_SERVER_ADDRESS));
    EXPECT_FALSE(device_string(d, CL_DEVICE_FERRY_PEER_ADDRESS).empty());
  }
  std::set<std::string> expected;
  for (daemon* d : suite_daemons()) expected.insert(d->address());
  EXPECT_EQ(addresses, expected);
  EXPECT_EQ(info_array<cl_device_id>(FERRY_IT_INFO_QUERY(clGetContextInfo, context_, CL_CONTEXT_DEVICES)), devices_);
}

TEST_F(mesh, kernels_hop_across_three_servers_and_results_are_exact) {
  constexpr size_t items = 4096;
  std::vector<cl_uint> expected(items);
  std::iota(expected.begin(), expected.end(), 7u);
  mem_handle data = create_buffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, items * sizeof(cl_uint),
                                  expected.data());
  event_handle last;
  for (cl_uint hop = 0; hop < 30; ++hop) {
    // Each hop runs on the next server and waits for the previous one's event.
    event_handle next = step(hop % 3, data, items, hop, last.get());
    step_on_host(expected, hop);
    last = std::move(next);
  }
  std::vector<cl_uint> got(items, 0);
  // Read through a queue of yet another server than the last hop's.
  ASSERT_CL_OK(clEnqueueReadBuffer(queues_[0], data, CL_TRUE, 0, items * sizeof(cl_uint), got.data(), 1,
                                   last.address(), nullptr));
  EXPECT_EQ(got, expected);
  EXPECT_EQ(event_status(last), CL_COMPLETE);
}

TEST_F(mesh, migration_goes_server_to_server_and_the_client_link_carries_no_buffer_bytes) {
  constexpr size_t bytes = 8u << 20;
  std::vector<cl_uint> host(bytes / sizeof(cl_uint));
  std::iota(host.begin(), host.end(), 1u);
  mem_handle data = written_buffer(0, host);
  ASSERT_CL_OK(clFinish(queues_[0]));

  const traffic bulk1_before = link_traffic(devices_[1], CL_FERRY_LINK_CLIENT_BULK);
  const traffic bulk0_before = link_traffic(devices_[0], CL_FERRY_LINK_CLIENT_BULK);
  const traffic peer_out0_before = link_traffic(devices_[0], CL_FERRY_LINK_PEER_OUT);
  const traffic peer_in1_before = link_traffic(devices_[1], CL_FERRY_LINK_PEER_IN);
  const traffic control1_before = link_traffic(devices_[1], CL_FERRY_LINK_CLIENT_CONTROL);

  // The kernel on server 1 needs the contents server 0 holds.
  kernel_handle inc = kernel("increment");
  ASSERT_CL_OK(clSetKernelArg(inc, 0, sizeof(cl_mem), data.address()));
  const size_t items = host.size();
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queues_[1], inc, 1, nullptr, &items, nullptr, 0, nullptr, nullptr));
  ASSERT_CL_OK(clFinish(queues_[1]));

  const traffic bulk1 = link_traffic(devices_[1], CL_FERRY_LINK_CLIENT_BULK);
  const traffic bulk0 = link_traffic(devices_[0], CL_FERRY_LINK_CLIENT_BULK);
  const traffic control1 = link_traffic(devices_[1], CL_FERRY_LINK_CLIENT_CONTROL);
  EXPECT_EQ(bulk1.bytes_in, bulk1_before.bytes_in) << "no buffer bytes from the client to server 1";
  EXPECT_EQ(bulk0.bytes_out, bulk0_before.bytes_out) << "no buffer bytes from server 0 to the client";
  EXPECT_LT(control1.bytes_in - control1_before.bytes_in, 4096u) << "only commands on the control link";
  EXPECT_GE(link_traffic(devices_[0], CL_FERRY_LINK_PEER_OUT).bytes_out - peer_out0_before.bytes_out, bytes);
  EXPECT_GE(link_traffic(devices_[1], CL_FERRY_LINK_PEER_IN).bytes_in - peer_in1_before.bytes_in, bytes);

  // The result read back from server 1 is the migrated contents, incremented.
  std::vector<cl_uint> got(host.size());
  ASSERT_CL_OK(clEnqueueReadBuffer(queues_[1], data, CL_TRUE, 0, bytes, got.data(), 0, nullptr, nullptr));
  for (size_t i = 0; i < host.size(); ++i) ASSERT_EQ(got[i], host[i] + 1) << "at " << i;
}

TEST_F(mesh, wait_lists_name_events_of_other_servers_and_wait_for_them) {
  constexpr size_t items = 1024;
  std::vector<cl_uint> expected(items, 5u);
  mem_handle data = create_buffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, items * sizeof(cl_uint),
                                  expected.data());
  cl_int rc = CL_SUCCESS;
  event_handle gate(clCreateUserEvent(context_, &rc));
  ASSERT_CL_OK(rc);
  // Server 0 waits for the user event; server 2 waits for server 0's kernel; server 1 for
  // server 2's. Nothing may run before the gate opens.
  event_handle a = step(0, data, items, 1, gate.get());
  event_handle b = step(2, data, items, 2, a.get());
  event_handle c = step(1, data, items, 3, b.get());
  ASSERT_CL_OK(clFlush(queues_[0]));
  ASSERT_CL_OK(clFlush(queues_[1]));
  ASSERT_CL_OK(clFlush(queues_[2]));
  // The chain is parked behind the gate: a marker that depends on nothing completes
  // meanwhile on each server, and the chain's events are still pending after it.
  for (auto& q : queues_) {
    queue_handle independent(clCreateCommandQueueWithProperties(context_, info_value<cl_device_id>(
        FERRY_IT_INFO_QUERY(clGetCommandQueueInfo, q.get(), CL_QUEUE_DEVICE)), nullptr, &rc));
    ASSERT_CL_OK(rc);
    // clFinish alone would return at once on a queue with nothing submitted.
    ASSERT_CL_OK(clEnqueueMarkerWithWaitList(independent, 0, nullptr, nullptr));
    ASSERT_CL_OK(clFinish(independent));
  }
  EXPECT_GT(event_status(a), CL_COMPLETE);
  EXPECT_GT(event_status(b), CL_COMPLETE);
  EXPECT_GT(event_status(c), CL_COMPLETE);
  ASSERT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  ASSERT_CL_OK(clWaitForEvents(1, c.address()));
  for (cl_uint salt : {1u, 2u, 3u}) step_on_host(expected, salt);
  std::vector<cl_uint> got(items);
  ASSERT_CL_OK(clEnqueueReadBuffer(queues_[1], data, CL_TRUE, 0, items * sizeof(cl_uint), got.data(), 0, nullptr,
                                   nullptr));
  EXPECT_EQ(got, expected);
}

TEST_F(mesh, a_failed_event_fails_its_waiters_on_other_servers) {
  constexpr size_t items = 64;
  mem_handle data = create_buffer(context_, CL_MEM_READ_WRITE, items * sizeof(cl_uint));
  cl_int rc = CL_SUCCESS;
  event_handle gate(clCreateUserEvent(context_, &rc));
  ASSERT_CL_OK(rc);
  event_handle a = step(0, data, items, 1, gate.get());
  event_handle b = step(1, data, items, 2, a.get());
  ASSERT_CL_OK(clSetUserEventStatus(gate, -1234));
  EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, clWaitForEvents(1, b.address()));
  EXPECT_LT(event_status(b), 0);
  // Each server reports its own command: a's failure may reach the client after b's.
  EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, clWaitForEvents(1, a.address()));
  EXPECT_LT(event_status(a), 0);
}

TEST_F(mesh, out_of_order_queues_across_servers_follow_their_wait_lists) {
  constexpr size_t items = 2048;
  cl_int rc = CL_SUCCESS;
  const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  queue_handle ooo0(clCreateCommandQueueWithProperties(context_, devices_[0], props, &rc));
  ASSERT_CL_OK(rc);
  queue_handle ooo2(clCreateCommandQueueWithProperties(context_, devices_[2], props, &rc));
  ASSERT_CL_OK(rc);
  std::vector<cl_uint> x(items), y(items);
  std::iota(x.begin(), x.end(), 1u);
  std::iota(y.begin(), y.end(), 1000u);
  mem_handle bx = create_buffer(context_, CL_MEM_READ_WRITE, items * sizeof(cl_uint));
  mem_handle by = create_buffer(context_, CL_MEM_READ_WRITE, items * sizeof(cl_uint));
  event_handle wx, wy;
  ASSERT_CL_OK(clEnqueueWriteBuffer(ooo0, bx, CL_FALSE, 0, items * sizeof(cl_uint), x.data(), 0, nullptr, wx.out()));
  ASSERT_CL_OK(clEnqueueWriteBuffer(ooo2, by, CL_FALSE, 0, items * sizeof(cl_uint), y.data(), 0, nullptr, wy.out()));
  // y += x on server 2 (x comes from server 0), then x += y on server 0 (y comes back).
  kernel_handle add1 = kernel("add_into");
  ASSERT_CL_OK(clSetKernelArg(add1, 0, sizeof(cl_mem), bx.address()));
  ASSERT_CL_OK(clSetKernelArg(add1, 1, sizeof(cl_mem), by.address()));
  const cl_event both[] = {wx.get(), wy.get()};
  event_handle k1;
  ASSERT_CL_OK(clEnqueueNDRangeKernel(ooo2, add1, 1, nullptr, &items, nullptr, 2, both, k1.out()));
  kernel_handle add2 = kernel("add_into");
  ASSERT_CL_OK(clSetKernelArg(add2, 0, sizeof(cl_mem), by.address()));
  ASSERT_CL_OK(clSetKernelArg(add2, 1, sizeof(cl_mem), bx.address()));
  event_handle k2;
  ASSERT_CL_OK(clEnqueueNDRangeKernel(ooo0, add2, 1, nullptr, &items, nullptr, 1, k1.address(), k2.out()));
  std::vector<cl_uint> gx(items), gy(items);
  ASSERT_CL_OK(clEnqueueReadBuffer(ooo0, bx, CL_TRUE, 0, items * sizeof(cl_uint), gx.data(), 1, k2.address(), nullptr));
  ASSERT_CL_OK(clEnqueueReadBuffer(ooo2, by, CL_TRUE, 0, items * sizeof(cl_uint), gy.data(), 1, k2.address(), nullptr));
  for (size_t i = 0; i < items; ++i) {
    ASSERT_EQ(gy[i], x[i] + y[i]) << "at " << i;
    ASSERT_EQ(gx[i], x[i] + x[i] + y[i]) << "at " << i;
  }
}

TEST_F(mesh, programs_built_per_device_of_a_shared_context_run_where_they_were_built) {
  // FluidX3D's multi-device pattern: one context over every server, each domain's program
  // built for its own device only, halos moved between domains by migration.
  constexpr size_t items = 2048;
  cl_int rc = CL_SUCCESS;
  std::vector<program_handle> domains;
  for (cl_device_id d : devices_) {
    const char* text = mesh_source;
    program_handle p(clCreateProgramWithSource(context_, 1, &text, nullptr, &rc));
    ASSERT_CL_OK(rc);
    ASSERT_CL_OK(clBuildProgram(p, 1, &d, "", nullptr, nullptr));
    domains.push_back(std::move(p));
  }
  // Build status per device: built where asked, nothing elsewhere.
  for (size_t i = 0; i < devices_.size(); ++i) {
    for (size_t j = 0; j < devices_.size(); ++j) {
      cl_build_status status = CL_BUILD_ERROR;
      ASSERT_CL_OK(clGetProgramBuildInfo(domains[i], devices_[j], CL_PROGRAM_BUILD_STATUS, sizeof status, &status,
                                         nullptr));
      EXPECT_EQ(status, i == j ? CL_BUILD_SUCCESS : CL_BUILD_NONE) << "program " << i << " on device " << j;
    }
  }
  std::vector<cl_uint> expected(items);
  std::iota(expected.begin(), expected.end(), 3u);
  mem_handle data = create_buffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, items * sizeof(cl_uint),
                                  expected.data());
  std::vector<kernel_handle> steps;
  for (size_t i = 0; i < devices_.size(); ++i) {
    steps.push_back(create_kernel(domains[i], "mix_step"));
    ASSERT_NE(steps.back().get(), nullptr) << "a kernel of the program built for device " << i;
    size_t group = 0;
    ASSERT_CL_OK(clGetKernelWorkGroupInfo(steps[i], devices_[i], CL_KERNEL_WORK_GROUP_SIZE, sizeof group, &group,
                                          nullptr));
    EXPECT_GT(group, 0u);
    ASSERT_CL_OK(clGetKernelWorkGroupInfo(steps[i], nullptr, CL_KERNEL_WORK_GROUP_SIZE, sizeof group, &group,
                                          nullptr))
        << "the kernel has one device";
    const cl_device_id other = devices_[(i + 1) % devices_.size()];
    EXPECT_CL(CL_INVALID_DEVICE,
              clGetKernelWorkGroupInfo(steps[i], other, CL_KERNEL_WORK_GROUP_SIZE, sizeof group, &group, nullptr));
    ASSERT_CL_OK(clSetKernelArg(steps[i], 0, sizeof(cl_mem), data.address()));
  }
  // A launch on a device the program was not built for gets the spec's error.
  const cl_uint salt0 = 0;
  ASSERT_CL_OK(clSetKernelArg(steps[0], 1, sizeof salt0, &salt0));
  EXPECT_CL(CL_INVALID_PROGRAM_EXECUTABLE,
            clEnqueueNDRangeKernel(queues_[1], steps[0], 1, nullptr, &items, nullptr, 0, nullptr, nullptr));
  // Each domain's step on its own server, the buffer migrating between them.
  for (cl_uint round = 0; round < 6; ++round) {
    const size_t i = round % devices_.size();
    const cl_uint salt = 10 + round;
    ASSERT_CL_OK(clSetKernelArg(steps[i], 1, sizeof salt, &salt));
    ASSERT_CL_OK(clEnqueueMigrateMemObjects(queues_[i], 1, data.address(), 0, 0, nullptr, nullptr));
    ASSERT_CL_OK(clEnqueueNDRangeKernel(queues_[i], steps[i], 1, nullptr, &items, nullptr, 0, nullptr, nullptr));
    ASSERT_CL_OK(clFinish(queues_[i]));
    step_on_host(expected, salt);
  }
  std::vector<cl_uint> got(items);
  ASSERT_CL_OK(clEnqueueReadBuffer(queues_[2], data, CL_TRUE, 0, items * sizeof(cl_uint), got.data(), 0, nullptr,
                                   nullptr));
  EXPECT_EQ(got, expected);
  // clCreateKernelsInProgram too, and a rebuild for a second device adds it.
  cl_uint count = 0;
  ASSERT_CL_OK(clCreateKernelsInProgram(domains[1], 0, nullptr, &count));
  EXPECT_EQ(count, 3u);
  steps.clear();
  ASSERT_CL_OK(clBuildProgram(domains[0], 2, devices_.data(), "", nullptr, nullptr));
  kernel_handle both = create_kernel(domains[0], "increment");
  ASSERT_CL_OK(clSetKernelArg(both, 0, sizeof(cl_mem), data.address()));
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queues_[1], both, 1, nullptr, &items, nullptr, 0, nullptr, nullptr));
  ASSERT_CL_OK(clFinish(queues_[1]));
  EXPECT_CL(CL_INVALID_PROGRAM_EXECUTABLE,
            clEnqueueNDRangeKernel(queues_[2], both, 1, nullptr, &items, nullptr, 0, nullptr, nullptr));
}

TEST_F(mesh, fluidx3d_like_domains_share_host_memory_and_exchange_halos_by_migration) {
  // FluidX3D's multi-device pattern on CPU devices: one context, each domain's program built
  // for its own device, buffers created with CL_MEM_USE_HOST_PTR and read and written only
  // through host memory (no write, read or map), halos moved with clEnqueueMigrateMemObjects.
  constexpr size_t cells = 8192;
  constexpr size_t halo = 64;
  constexpr const char* source = R"CLC(
__kernel void domain_step(__global int* d, __global const int* in, __global int* out) {
  size_t i = get_global_id(0);
  int v = d[i] + in[i % 64] + 1;
  d[i] = v;
  if (i < 64) out[i] = v;
}
)CLC";
  struct aligned_free {
    void operator()(cl_int* p) const { std::free(p); }
  };
  auto host_array = [](size_t n) {
    return std::unique_ptr<cl_int[], aligned_free>(static_cast<cl_int*>(std::aligned_alloc(4096, (n * 4 + 4095) / 4096 * 4096)));
  };
  auto a = host_array(cells), b = host_array(cells), h01 = host_array(halo), h10 = host_array(halo);
  std::iota(a.get(), a.get() + cells, 0);
  std::iota(b.get(), b.get() + cells, 1000);
  std::fill(h01.get(), h01.get() + halo, 0);
  std::fill(h10.get(), h10.get() + halo, 5);
  std::vector<cl_int> ma(a.get(), a.get() + cells), mb(b.get(), b.get() + cells);
  std::vector<cl_int> m01(halo, 0), m10(halo, 5);
  const cl_mem_flags flags = CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR;
  mem_handle da = create_buffer(context_, flags, cells * sizeof(cl_int), a.get());
  mem_handle db = create_buffer(context_, flags, cells * sizeof(cl_int), b.get());
  mem_handle d01 = create_buffer(context_, flags, halo * sizeof(cl_int), h01.get());
  mem_handle d10 = create_buffer(context_, flags, halo * sizeof(cl_int), h10.get());
  cl_int rc = CL_SUCCESS;
  std::vector<kernel_handle> steps;
  std::vector<program_handle> programs;
  for (size_t i = 0; i < 2; ++i) {
    const char* text = source;
    programs.emplace_back(clCreateProgramWithSource(context_, 1, &text, nullptr, &rc));
    ASSERT_CL_OK(rc);
    ASSERT_CL_OK(clBuildProgram(programs[i], 1, &devices_[i], "", nullptr, nullptr));
    steps.push_back(create_kernel(programs[i], "domain_step"));
    ASSERT_NE(steps[i].get(), nullptr);
  }
  const cl_mem args0[] = {da.get(), d10.get(), d01.get()};
  const cl_mem args1[] = {db.get(), d01.get(), d10.get()};
  for (cl_uint k = 0; k < 3; ++k) {
    ASSERT_CL_OK(clSetKernelArg(steps[0], k, sizeof(cl_mem), &args0[k]));
    ASSERT_CL_OK(clSetKernelArg(steps[1], k, sizeof(cl_mem), &args1[k]));
  }
  auto model_step = [&](std::vector<cl_int>& d, const std::vector<cl_int>& in, std::vector<cl_int>& out) {
    for (size_t i = 0; i < cells; ++i) d[i] = d[i] + in[i % halo] + 1;
    for (size_t i = 0; i < halo; ++i) out[i] = d[i];
  };
  for (cl_int round = 0; round < 4; ++round) {
    // The host edits a domain directly, as an initial condition or boundary would.
    a[100 + round] = 7 * round;
    ma[100 + round] = 7 * round;
    ASSERT_CL_OK(clEnqueueMigrateMemObjects(queues_[0], 1, d10.address(), 0, 0, nullptr, nullptr));
    ASSERT_CL_OK(clEnqueueNDRangeKernel(queues_[0], steps[0], 1, nullptr, &cells, nullptr, 0, nullptr, nullptr));
    ASSERT_CL_OK(clFinish(queues_[0]));
    model_step(ma, m10, m01);
    ASSERT_CL_OK(clEnqueueMigrateMemObjects(queues_[1], 1, d01.address(), 0, 0, nullptr, nullptr));
    ASSERT_CL_OK(clEnqueueNDRangeKernel(queues_[1], steps[1], 1, nullptr, &cells, nullptr, 0, nullptr, nullptr));
    ASSERT_CL_OK(clFinish(queues_[1]));
    model_step(mb, m01, m10);
    for (size_t i = 0; i < cells; ++i) {
      ASSERT_EQ(a[i], ma[i]) << "domain 0, round " << round << ", cell " << i;
      ASSERT_EQ(b[i], mb[i]) << "domain 1, round " << round << ", cell " << i;
    }
    for (size_t i = 0; i < halo; ++i) {
      ASSERT_EQ(h01[i], m01[i]) << "halo 0 to 1, round " << round;
      ASSERT_EQ(h10[i], m10[i]) << "halo 1 to 0, round " << round;
    }
  }
}

TEST_F(mesh, explicit_migration_and_content_undefined) {
  constexpr size_t bytes = 1u << 20;
  std::vector<cl_uint> host(bytes / sizeof(cl_uint), 42u);
  mem_handle data = create_buffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host.data());
  // Explicit migration to server 2 moves the bytes over a peer link.
  const traffic in2_before = link_traffic(devices_[2], CL_FERRY_LINK_PEER_IN);
  event_handle moved;
  ASSERT_CL_OK(clEnqueueMigrateMemObjects(queues_[2], 1, data.address(), 0, 0, nullptr, moved.out()));
  ASSERT_CL_OK(clWaitForEvents(1, moved.address()));
  EXPECT_EQ(info_value<cl_command_type>(FERRY_IT_INFO_QUERY(clGetEventInfo, moved.get(), CL_EVENT_COMMAND_TYPE)),
            static_cast<cl_command_type>(CL_COMMAND_MIGRATE_MEM_OBJECTS));
  EXPECT_GE(link_traffic(devices_[2], CL_FERRY_LINK_PEER_IN).bytes_in - in2_before.bytes_in, bytes);
  // ... and a read there needs no further movement.
  std::vector<cl_uint> got(host.size());
  const traffic in2_after = link_traffic(devices_[2], CL_FERRY_LINK_PEER_IN);
  ASSERT_CL_OK(clEnqueueReadBuffer(queues_[2], data, CL_TRUE, 0, bytes, got.data(), 0, nullptr, nullptr));
  EXPECT_EQ(got, host);
  EXPECT_EQ(link_traffic(devices_[2], CL_FERRY_LINK_PEER_IN).bytes_in, in2_after.bytes_in);
  // CONTENT_UNDEFINED moves nothing.
  const traffic in1_before = link_traffic(devices_[1], CL_FERRY_LINK_PEER_IN);
  ASSERT_CL_OK(clEnqueueMigrateMemObjects(queues_[1], 1, data.address(), CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0,
                                          nullptr, nullptr));
  ASSERT_CL_OK(clFinish(queues_[1]));
  EXPECT_EQ(link_traffic(devices_[1], CL_FERRY_LINK_PEER_IN).bytes_in, in1_before.bytes_in);
  // Bad input: exact codes.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueMigrateMemObjects(queues_[1], 0, data.address(), 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueMigrateMemObjects(queues_[1], 1, data.address(), 0x100, 0, nullptr, nullptr));
  cl_mem bogus = nullptr;
  EXPECT_CL(CL_INVALID_MEM_OBJECT, clEnqueueMigrateMemObjects(queues_[1], 1, &bogus, 0, 0, nullptr, nullptr));
}

TEST_F(mesh, a_migration_into_a_queue_that_waits_lands_once_the_queue_goes_on) {
  // The destination's queue is held by a user event, so the bytes arrive before the
  // destination may write them: they wait in staging, and are written afterwards. The
  // source's blocking write may still be running when the read asks for the bytes (it
  // returns once the bytes are sent); the migration waits for it all the same.
  constexpr size_t bytes = 4u << 20;
  std::vector<cl_uint> host(bytes / sizeof(cl_uint));
  std::iota(host.begin(), host.end(), 7u);
  mem_handle data = written_buffer(0, host);
  cl_int rc = CL_SUCCESS;
  event_handle gate(clCreateUserEvent(context_, &rc));
  ASSERT_CL_OK(rc);
  ASSERT_CL_OK(clEnqueueMarkerWithWaitList(queues_[1], 1, gate.address(), nullptr));
  const traffic in1_before = link_traffic(devices_[1], CL_FERRY_LINK_PEER_IN);
  std::vector<cl_uint> got(host.size(), 0u);
  event_handle read;
  ASSERT_CL_OK(clEnqueueReadBuffer(queues_[1], data, CL_FALSE, 0, bytes, got.data(), 0, nullptr, read.out()));
  ASSERT_CL_OK(clFlush(queues_[1]));
  // The bytes cross while the queue waits (each counter query is a round trip: the
  // loop waits on the server, and the deadline only stops a broken migration).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (link_traffic(devices_[1], CL_FERRY_LINK_PEER_IN).bytes_in - in1_before.bytes_in < bytes &&
         std::chrono::steady_clock::now() < deadline) {
  }
  EXPECT_GE(link_traffic(devices_[1], CL_FERRY_LINK_PEER_IN).bytes_in - in1_before.bytes_in, bytes);
  EXPECT_EQ(info_value<cl_int>(FERRY_IT_INFO_QUERY(clGetEventInfo, read.get(), CL_EVENT_COMMAND_EXECUTION_STATUS)),
            CL_QUEUED)
      << "the read waits behind the held queue";
  ASSERT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  ASSERT_CL_OK(clWaitForEvents(1, read.address()));
  const auto wrong = std::mismatch(got.begin(), got.end(), host.begin());
  EXPECT_EQ(wrong.first, got.end()) << "word " << (wrong.first - got.begin()) << " differs";
}

TEST_F(mesh, buffers_without_host_access_migrate_between_servers) {
  // Host-access flags bind the application, not the daemons that move the bytes.
  constexpr size_t items = (2u << 20) / sizeof(cl_uint);
  std::vector<cl_uint> ones(items, 1u);
  mem_handle hidden = create_buffer(context_, CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS | CL_MEM_COPY_HOST_PTR,
                                    items * sizeof(cl_uint), ones.data());
  mem_handle result = create_buffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, items * sizeof(cl_uint),
                                    ones.data());
  kernel_handle bump = kernel("increment");
  ASSERT_CL_OK(clSetKernelArg(bump, 0, sizeof(cl_mem), hidden.address()));
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queues_[0], bump, 1, nullptr, &items, nullptr, 0, nullptr, nullptr));
  ASSERT_CL_OK(clFinish(queues_[0]));
  kernel_handle add = kernel("add_into");
  ASSERT_CL_OK(clSetKernelArg(add, 0, sizeof(cl_mem), hidden.address()));
  ASSERT_CL_OK(clSetKernelArg(add, 1, sizeof(cl_mem), result.address()));
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queues_[2], add, 1, nullptr, &items, nullptr, 0, nullptr, nullptr));
  std::vector<cl_uint> got(items, 0u);
  ASSERT_CL_OK(clEnqueueReadBuffer(queues_[2], result, CL_TRUE, 0, items * sizeof(cl_uint), got.data(), 0, nullptr,
                                   nullptr));
  EXPECT_EQ(got, std::vector<cl_uint>(items, 3u)) << "1 + (1 + 1), with the hidden buffer moved from server 0 to 2";
  // The application itself still may not read it.
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueReadBuffer(queues_[2], hidden, CL_TRUE, 0, sizeof(cl_uint), got.data(), 0, nullptr, nullptr));
}

TEST_F(mesh, content_size_limits_migrations_and_reads_to_the_meaningful_prefix) {
  auto set_content_size = reinterpret_cast<clSetContentSizeBufferPoCL_fn>(
      clGetExtensionFunctionAddressForPlatform(platform_, "clSetContentSizeBufferPoCL"));
  ASSERT_NE(set_content_size, nullptr);
  EXPECT_NE(platform_string(platform_, CL_PLATFORM_EXTENSIONS).find("cl_pocl_content_size"), std::string::npos);
  constexpr size_t bytes = 4u << 20;
  constexpr cl_ulong meaningful = 1000;
  std::vector<unsigned char> host(bytes);
  for (size_t i = 0; i < bytes; ++i) host[i] = static_cast<unsigned char>(i * 13 + 1);
  mem_handle data = create_buffer(context_, CL_MEM_READ_WRITE, bytes);
  mem_handle size = create_buffer(context_, CL_MEM_READ_WRITE, 256);
  // Bad input first: the codes PoCL gives.
  cl_buffer_region region{0, 64};
  cl_int rc = CL_SUCCESS;
  mem_handle sub(clCreateSubBuffer(size, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &rc));
  ASSERT_CL_OK(rc);
  mem_handle tiny = create_buffer(context_, CL_MEM_READ_WRITE, 4);
  EXPECT_CL(CL_INVALID_MEM_OBJECT, set_content_size(nullptr, size));
  EXPECT_CL(CL_INVALID_BUFFER_SIZE, set_content_size(data, tiny));
  EXPECT_CL(CL_INVALID_MEM_OBJECT, set_content_size(data, sub));
  context_handle other(clCreateContext(nullptr, 1, devices_.data(), nullptr, nullptr, &rc));
  ASSERT_CL_OK(rc);
  mem_handle foreign = create_buffer(other, CL_MEM_READ_WRITE, 64);
  EXPECT_CL(CL_INVALID_CONTEXT, set_content_size(data, foreign));
  ASSERT_CL_OK(set_content_size(data, size));

  ASSERT_CL_OK(clEnqueueWriteBuffer(queues_[0], data, CL_FALSE, 0, bytes, host.data(), 0, nullptr, nullptr));
  ASSERT_CL_OK(clEnqueueWriteBuffer(queues_[0], size, CL_FALSE, 0, sizeof meaningful, &meaningful, 0, nullptr,
                                    nullptr));
  ASSERT_CL_OK(clFinish(queues_[0]));
  // A read to the host brings the meaningful prefix and leaves the rest alone.
  std::vector<unsigned char> got(bytes, 0xEE);
  ASSERT_CL_OK(clEnqueueReadBuffer(queues_[0], data, CL_TRUE, 0, bytes, got.data(), 0, nullptr, nullptr));
  EXPECT_TRUE(std::equal(host.begin(), host.begin() + meaningful, got.begin()));
  EXPECT_TRUE(std::all_of(got.begin() + meaningful, got.end(), [](unsigned char c) { return c == 0xEE; }));

  // Both move to server 1; only the prefix crosses the peer link.
  const traffic in1_before = link_traffic(devices_[1], CL_FERRY_LINK_PEER_IN);
  const cl_mem both[] = {size.get(), data.get()};
  ASSERT_CL_OK(clEnqueueMigrateMemObjects(queues_[1], 2, both, 0, 0, nullptr, nullptr));
  ASSERT_CL_OK(clFinish(queues_[1]));
  const cl_ulong moved = link_traffic(devices_[1], CL_FERRY_LINK_PEER_IN).bytes_in - in1_before.bytes_in;
  EXPECT_LT(moved, 64u * 1024) << "the 4 MiB buffer moved whole";
  std::fill(got.begin(), got.end(), 0xEE);
  ASSERT_CL_OK(clEnqueueReadBuffer(queues_[1], data, CL_TRUE, 0, bytes, got.data(), 0, nullptr, nullptr));
  EXPECT_TRUE(std::equal(host.begin(), host.begin() + meaningful, got.begin()));
}

// A server that advertises a peer address nobody listens on: a migration to it cannot be
// delivered, and the command that needed it fails instead of hanging.
FERRY_IT_CHILD(unreachable_peer) {
  cl_platform_id platform = find_ferry_platform();
  std::vector<cl_device_id> devices = platform_devices(platform);
  if (devices.size() != 2) return 10;
  cl_int rc = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 2, devices.data(), nullptr, nullptr, &rc);
  if (rc != CL_SUCCESS) return 11;
  cl_command_queue q0 = clCreateCommandQueueWithProperties(context, devices[0], nullptr, &rc);
  cl_command_queue q1 = clCreateCommandQueueWithProperties(context, devices[1], nullptr, &rc);
  std::vector<cl_uint> host(1024, 3u);
  cl_mem data = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.size() * sizeof(cl_uint),
                               host.data(), &rc);
  if (rc != CL_SUCCESS) return 12;
  // The contents are on server 0; the read on server 1 needs them there.
  cl_event read = nullptr;
  std::vector<cl_uint> got(host.size());
  rc = clEnqueueReadBuffer(q1, data, CL_FALSE, 0, host.size() * sizeof(cl_uint), got.data(), 0, nullptr, &read);
  if (rc != CL_SUCCESS) return 13;
  rc = clWaitForEvents(1, &read);
  cl_int status = 0;
  clGetEventInfo(read, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  std::printf("wait=%d status=%d\n", rc, status);
  // Server 0 keeps working.
  cl_int code = clEnqueueReadBuffer(q0, data, CL_TRUE, 0, host.size() * sizeof(cl_uint), got.data(), 0, nullptr,
                                    nullptr);
  std::printf("local=%d same=%d\n", code, got == host ? 1 : 0);
  clReleaseEvent(read);
  clReleaseMemObject(data);
  clReleaseCommandQueue(q0);
  clReleaseCommandQueue(q1);
  clReleaseContext(context);
  return 0;
}

TEST(mesh_failures, a_peer_that_cannot_be_reached_fails_the_waiting_events) {
  if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
  daemon good;
  daemon lonely({"--peer-address", "127.0.0.1:1"});
  ASSERT_TRUE(good.started());
  ASSERT_TRUE(lonely.started());
  const auto deadline = clock::now() + std::chrono::seconds(60);
  child_process child = spawn_self("unreachable_peer", {},
                                   {{"FERRY_SERVERS", good.address() + "," + lonely.address()}});
  const std::string out = child.read_all(deadline);
  const std::optional<int> status = child.wait(deadline);
  if (!status) child.kill_and_wait();
  ASSERT_TRUE(status.has_value()) << "the failed migration hung: " << out;
  EXPECT_TRUE(exited_with(*status, 0)) << describe_wait_status(*status) << ": " << out;
  EXPECT_NE(out.find("wait=" + std::to_string(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) +
                     " status=" + std::to_string(CL_DEVICE_NOT_AVAILABLE)),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("local=0 same=1"), std::string::npos) << out;
}

// Two servers, the second behind a proxy that can hold its reports back: a marker on
// the first server waits, through its wait list, for one on the second, so the
// application knows the second's marker ended while its report is still held. The
// object counts then may not come back before that report has been handled: the
// count is the whole process's, and the event, its queue and the context live until
// the report lets go of them.
FERRY_IT_CHILD(counts_behind_a_held_back_report) {
  const char* near = std::getenv("FERRY_IT_NEAR");
  const char* far_port = std::getenv("FERRY_IT_FAR_PORT");
  CHILD_CHECK(near != nullptr && far_port != nullptr, "FERRY_IT_NEAR and FERRY_IT_FAR_PORT");
  ferry::tools::fault_proxy proxy("127.0.0.1", static_cast<uint16_t>(std::atoi(far_port)));
  std::string error;
  CHILD_CHECK(proxy.start(error), "proxy: %s", error.c_str());
  set_ferry_env(loader_mode::ferry_only, std::string(near) + ",127.0.0.1:" + std::to_string(proxy.port()));
  cl_platform_id platform = find_ferry_platform();
  CHILD_CHECK(platform != nullptr, "no Ferry platform");
  std::vector<cl_device_id> devices = platform_devices(platform);
  CHILD_CHECK(devices.size() == 2, "%zu devices", devices.size());
  CHILD_CHECK(device_string(devices[0], CL_DEVICE_FERRY_SERVER_ADDRESS) == near, "device order");
  auto ping = reinterpret_cast<clFerryPingServer_fn>(ferry_extension(platform, "clFerryPingServer"));
  CHILD_CHECK(ping != nullptr, "no clFerryPingServer");
  cl_int rc = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 2, devices.data(), nullptr, nullptr, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateContext: %d", rc);
  cl_command_queue near_queue = clCreateCommandQueueWithProperties(context, devices[0], nullptr, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "near queue: %d", rc);
  cl_command_queue far_queue = clCreateCommandQueueWithProperties(context, devices[1], nullptr, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "far queue: %d", rc);
  cl_event gate = clCreateUserEvent(context, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateUserEvent: %d", rc);
  cl_event opened = nullptr, far_marker = nullptr, near_marker = nullptr;
  CHILD_CHECK(clEnqueueMarkerWithWaitList(near_queue, 1, &gate, &opened) == CL_SUCCESS, "marker");
  CHILD_CHECK(clEnqueueMarkerWithWaitList(far_queue, 1, &opened, &far_marker) == CL_SUCCESS, "far marker");
  CHILD_CHECK(clEnqueueMarkerWithWaitList(near_queue, 1, &far_marker, &near_marker) == CL_SUCCESS, "near marker");
  CHILD_CHECK(clFlush(near_queue) == CL_SUCCESS && clFlush(far_queue) == CL_SUCCESS, "flush");
  // A round trip: the far server has the marker, its import and its export.
  cl_ulong round_trip = 0;
  CHILD_CHECK(ping(devices[1], &round_trip) == CL_SUCCESS, "ping");

  proxy.stall(true);
  CHILD_CHECK(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS, "open the gate");
  CHILD_CHECK(clWaitForEvents(1, &near_marker) == CL_SUCCESS, "wait");
  cl_int far_status = CL_COMPLETE;
  clGetEventInfo(far_marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof far_status, &far_status, nullptr);
  CHILD_CHECK(far_status > CL_COMPLETE, "the far marker's report came through the stalled proxy");
  for (cl_event e : {near_marker, far_marker, opened, gate}) clReleaseEvent(e);
  clReleaseCommandQueue(near_queue);
  clReleaseCommandQueue(far_queue);
  clReleaseContext(context);

  auto counting = std::async(std::launch::async, [&] {
    cl_int code = CL_SUCCESS;
    auto counts = object_counts(platform, devices[0], &code);
    return std::make_pair(code, counts.value_or(cl_ferry_object_counts{}));
  });
  // Counts that come back while the report is held back did not wait for it. The wait
  // only bounds how long a broken count has to show itself: a correct one returns once
  // the proxy forwards again, whenever that is.
  const bool early = counting.wait_for(std::chrono::seconds(1)) == std::future_status::ready;
  proxy.stall(false);
  const auto [code, counts] = counting.get();
  std::printf("early=%d code=%d client=%llu server=%llu\n", early ? 1 : 0, code,
              static_cast<unsigned long long>(counts.client_objects),
              static_cast<unsigned long long>(counts.server_objects));
  return 0;
}

TEST(mesh_leak_check, object_counts_come_after_every_servers_reports) {
  if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
  daemon near;
  daemon far({"--peer-address", "127.0.0.1"});  // peer links bypass the child's proxy
  ASSERT_TRUE(near.started());
  ASSERT_TRUE(far.started());
  const auto deadline = clock::now() + std::chrono::seconds(60);
  child_process child = spawn_self("counts_behind_a_held_back_report", {},
                                   {{"FERRY_IT_NEAR", near.address()},
                                    {"FERRY_IT_FAR_PORT", std::to_string(far.port())}});
  const std::string out = child.read_all(deadline);
  const std::optional<int> status = child.wait(deadline);
  if (!status) child.kill_and_wait();
  ASSERT_TRUE(status.has_value()) << "the child hung: " << out;
  EXPECT_TRUE(exited_with(*status, 0)) << describe_wait_status(*status) << ": " << out;
  EXPECT_NE(out.find("early=0 code=0 client=0 server=0"), std::string::npos) << out;
}

}  // namespace
}  // namespace ferry::test
