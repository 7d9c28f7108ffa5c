// Strong scaling of a 3D Jacobi stencil: an N x N x N float grid split along z into
// slabs, first over 1 device, then over 2 (on Ferry the devices of 2 servers, natively 2
// devices of one context). Every step each device updates its slab, then the planes at
// the edges of its slab travel to its neighbours' ghost planes through small halo
// buffers: a copy on the sender's queue, clEnqueueMigrateMemObjects and a copy on the
// receiver's queue, ordered across queues by events only. Through Ferry that makes the
// halo bytes move server to server and the cross-queue events be signalled server to
// server, every step. Efficiency = t(1 device) / (devices x t(devices)).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

using ferry::bench::bench_error;
using ferry::bench::check;
using ferry::bench::event;
using ferry::bench::mem_object;
using ferry::bench::round_up;
using ferry::bench::target;

// One step for the planes of one slab. Interior cells get the mean of their 6 neighbours
// (the Jacobi iteration of Laplace's equation; the centre weighs nothing); cells on the
// grid's faces keep their value (Dirichlet). The sum is grouped as the CPU reference
// groups it and has no a*b+c in it, so FMA contraction cannot make the two differ.
// Offsets are ulong: (N + 2) * N * N cells pass 2^31 from N = 1291 on.
// jacobi_edge also writes its one plane into `edge`, the halo buffer that travels
// to the neighbour: the overlapped exchange then reads no buffer the interior's
// kernel writes (a driver may order commands on one buffer across queues).
constexpr const char* jacobi_source = R"CLC(
float jacobi_cell(global const float* restrict current, uint n, uint first_z, uint x, uint y, uint k) {
  // Local plane 0 and planes + 1 are the ghosts, the neighbours' edge planes.
  const uint z = first_z + k - 1;
  const ulong row = n, plane = (ulong)n * n;
  const ulong i = k * plane + y * row + x;
  float value = current[i];
  if (x > 0 && y > 0 && z > 0 && x < n - 1 && y < n - 1 && z < n - 1)
    value = ((current[i - 1] + current[i + 1]) + (current[i - row] + current[i + row]) +
             (current[i - plane] + current[i + plane])) * (1.0f / 6.0f);
  return value;
}
kernel void jacobi(global const float* restrict current, global float* restrict next, uint n, uint first_z) {
  const uint x = get_global_id(0), y = get_global_id(1);
  if (x >= n || y >= n) return;  // the global size is rounded up to the work-group size
  const uint k = (uint)get_global_id(2) + 1;
  next[(ulong)k * n * n + (ulong)y * n + x] = jacobi_cell(current, n, first_z, x, y, k);
}
kernel void jacobi_edge(global const float* restrict current, global float* restrict next, uint n, uint first_z,
                        global float* restrict edge) {
  const uint x = get_global_id(0), y = get_global_id(1);
  if (x >= n || y >= n) return;
  const uint k = (uint)get_global_id(2) + 1;
  const float value = jacobi_cell(current, n, first_z, x, y, k);
  next[(ulong)k * n * n + (ulong)y * n + x] = value;
  edge[(ulong)y * n + x] = value;
}
)CLC";

// 32 consecutive x per row of a work-group: whole 128-byte lines on a GPU.
constexpr size_t tile_x = 32, tile_y = 8;
// Untimed steps before the clock runs: PoCL compiles the kernel for its work-group size
// on first use, and every buffer reaches the device that uses it.
constexpr int warmup_steps = 3;
// Up to this side the whole run is repeated on the CPU and compared cell by cell.
constexpr size_t reference_limit = 64;
// max |difference| over max |value|: the kernel may round differently from the CPU
// (another compiler, contraction), never by more.
constexpr double tolerance = 1e-5;

// Noise in [0, 1) from a cell's index (splitmix64's mixing), the same whatever the split.
float hashed_noise(uint64_t i) {
  i += 0x9e3779b97f4a7c15u;
  i = (i ^ (i >> 30)) * 0xbf58476d1ce4e5b9u;
  i = (i ^ (i >> 27)) * 0x94d049bb133111ebu;
  i ^= i >> 31;
  return static_cast<float>(i >> 40) * 0x1p-24f;
}

// A hot plane at z = 0 over noise: the noise changes a lot in the first steps, so a
// halo that did not arrive shows at once.
std::vector<float> initial_grid(size_t n) {
  std::vector<float> grid(n * n * n);
  for (size_t i = 0; i < grid.size(); ++i) grid[i] = (i < n * n ? 1.0f : 0.0f) + 0.5f * hashed_noise(i);
  return grid;
}

// `steps` steps of the kernel's update on the whole grid, in the kernel's float order.
std::vector<float> reference_after(std::vector<float> grid, size_t n, int steps) {
  const size_t row = n, plane = n * n;
  std::vector<float> next = grid;  // the faces never change: copied once
  for (int s = 0; s < steps; ++s) {
    for (size_t z = 1; z + 1 < n; ++z)
      for (size_t y = 1; y + 1 < n; ++y)
        for (size_t x = 1; x + 1 < n; ++x) {
          const size_t i = z * plane + y * row + x;
          next[i] = ((grid[i - 1] + grid[i + 1]) + (grid[i - row] + grid[i + row]) +
                     (grid[i - plane] + grid[i + plane])) *
                    (1.0f / 6.0f);
        }
    grid.swap(next);
  }
  return grid;
}

// Throws bench_error at the cell that differs most from `expected`, if beyond tolerance.
void compare(const std::vector<float>& got, const std::vector<float>& expected, size_t n, const std::string& what) {
  double scale = 0, worst = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    scale = std::max(scale, std::fabs(static_cast<double>(expected[i])));
    const double difference = std::fabs(static_cast<double>(got[i]) - expected[i]);
    // A NaN (a plane no read filled, or a kernel that read garbage) fails at once.
    if (!(difference <= worst)) {
      worst = std::isnan(difference) ? std::numeric_limits<double>::infinity() : difference;
      worst_at = i;
    }
  }
  if (!(worst <= tolerance * scale)) {
    const size_t x = worst_at % n, y = worst_at / n % n, z = worst_at / (n * n);
    throw bench_error("wrong result: cell (" + std::to_string(x) + ", " + std::to_string(y) + ", " +
                      std::to_string(z) + ") is " + std::to_string(got[worst_at]) + ", " + what + " says " +
                      std::to_string(expected[worst_at]) + " (tolerance " + std::to_string(tolerance * scale) + ")");
  }
}

// The planes [first_z, first_z + planes) of the grid on one device, with a ghost plane
// below and above in each buffer. Slabs at the grid's ends have a ghost plane that
// nothing reads: the planes beside it are faces, which keep their value.
struct slab {
  size_t first_z = 0;
  size_t planes = 0;
  std::unique_ptr<mem_object> current, next;  // swapped after every step
};

// One direction across one boundary between slabs: the edge plane of `from`'s `next`
// goes to the ghost plane of `to`'s `next`. Two buffers, by the step's parity, so that
// filling one waits for the copy out of it two steps back, not one.
struct halo {
  size_t from = 0, to = 0;        // slabs
  size_t source_plane = 0;        // local plane of from's slab
  size_t ghost_plane = 0;         // local plane of to's slab
  std::array<std::unique_ptr<mem_object>, 2> buffer;
  std::array<event, 2> filled;    // the edge kernel (after: the copy) that filled buffer[p], on from's queues
  std::array<event, 2> emptied;   // the copy out of buffer[p], on to's queue
};

/// When the halos travel: after the whole step, or while the interior is updated.
enum class exchange { after, overlap };

const char* exchange_name(exchange e) { return e == exchange::after ? "after" : "overlap"; }

// The grid split over the devices of one target, stepped and read back.
class split_grid {
 public:
  split_grid(target& t, size_t n, exchange mode)
      : t_(t), n_(n), plane_bytes_(n * n * sizeof(float)), mode_(mode) {
    const size_t parts = t.devices.size();
    if (n < parts) throw bench_error("--size " + std::to_string(n) + " gives a device no plane");
    kernel_ = t.kernel(jacobi_source, "jacobi");
    if (mode_ == exchange::overlap) edge_kernel_ = t.kernel(jacobi_source, "jacobi_edge");
    for (size_t d = 0, z = 0; d < parts; ++d) {
      slab& s = slabs_.emplace_back();
      s.first_z = z;
      s.planes = n / parts + (d < n % parts ? 1 : 0);
      z += s.planes;
      const size_t bytes = (s.planes + 2) * plane_bytes_;
      s.current = std::make_unique<mem_object>(t.context, CL_MEM_READ_WRITE, bytes);
      s.next = std::make_unique<mem_object>(t.context, CL_MEM_READ_WRITE, bytes);
    }
    for (size_t d = 0; d + 1 < parts; ++d) {
      // Up: the top plane of slab d becomes the lower ghost of slab d + 1; down: the
      // bottom plane of slab d + 1 becomes the upper ghost of slab d.
      add_halo(d, d + 1, slabs_[d].planes, 0);
      add_halo(d + 1, d, 1, slabs_[d].planes + 1);
    }
    // A work-group of tile_x x tile_y where every device allows it, else the driver's choice.
    local_ok_ = true;
    for (cl_device_id device : t.devices) {
      size_t most = 0;
      check(clGetKernelWorkGroupInfo(kernel_, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most, nullptr),
            "clGetKernelWorkGroupInfo");
      local_ok_ = local_ok_ && most >= tile_x * tile_y;
    }
    if (mode_ == exchange::overlap) {
      // The exchange's own queue per device, beside the kernels' queue.
      for (cl_device_id device : t.devices) {
        cl_int rc = CL_SUCCESS;
        cl_command_queue q = clCreateCommandQueueWithProperties(t.context, device, nullptr, &rc);
        check(rc, "clCreateCommandQueueWithProperties (exchange queue)");
        exchange_queues_.push_back(q);
      }
      landed_ = std::make_unique<event[]>(t.devices.size());
    }
  }
  ~split_grid() {
    for (cl_command_queue q : exchange_queues_) {
      clFinish(q);
      clReleaseCommandQueue(q);
    }
  }
  split_grid(const split_grid&) = delete;
  split_grid& operator=(const split_grid&) = delete;

  // Each slab's planes and both ghosts into `current` (untimed); `next` needs nothing:
  // the kernel writes its planes and the halos its ghosts.
  void upload(const std::vector<float>& grid) {
    for (size_t d = 0; d < slabs_.size(); ++d) {
      const slab& s = slabs_[d];
      const size_t first = s.first_z > 0 ? s.first_z - 1 : 0;
      const size_t end = std::min(s.first_z + s.planes + 1, n_);
      check(clEnqueueWriteBuffer(t_.queues[d], s.current->get(), CL_FALSE, (first + 1 - s.first_z) * plane_bytes_,
                                 (end - first) * plane_bytes_, &grid[first * n_ * n_], 0, nullptr, nullptr),
            "clEnqueueWriteBuffer");
    }
    finish();
  }

  // Enqueues one step on every device (non-blocking) and flushes every queue.
  void step() {
    if (mode_ == exchange::overlap && slabs_.size() > 1) return step_overlapped();
    const size_t parity = steps_ % 2;
    for (size_t d = 0; d < slabs_.size(); ++d) {
      update(d, 0, slabs_[d].planes, 0, nullptr, nullptr);
    }
    // All the copies into halo buffers before any command that waits for them is
    // enqueued. Each follows its slab's kernel in its in-order queue; across queues only
    // the event says that the neighbour has copied this buffer out two steps ago.
    for (auto& h : halos_) {
      check(clEnqueueCopyBuffer(t_.queues[h->from], slabs_[h->from].next->get(), h->buffer[parity]->get(),
                                h->source_plane * plane_bytes_, 0, plane_bytes_, h->emptied[parity].count(),
                                h->emptied[parity].list(), h->filled[parity].out()),
            "clEnqueueCopyBuffer (edge plane to halo)");
      h->emptied[parity].reset();
    }
    // On the receiver's queue: the buffer moves to its device once filled, then lands in
    // the ghost plane, before the receiver's next kernel (same queue) reads it.
    for (auto& h : halos_) {
      check(clEnqueueMigrateMemObjects(t_.queues[h->to], 1, h->buffer[parity]->address(), 0, 1,
                                       h->filled[parity].list(), nullptr),
            "clEnqueueMigrateMemObjects");
      h->filled[parity].reset();
      check(clEnqueueCopyBuffer(t_.queues[h->to], h->buffer[parity]->get(), slabs_[h->to].next->get(), 0,
                                h->ghost_plane * plane_bytes_, plane_bytes_, 0, nullptr, h->emptied[parity].out()),
            "clEnqueueCopyBuffer (halo to ghost plane)");
    }
    // Starts every device's work now, and makes the events other queues wait for reach
    // their queue's device.
    for (cl_command_queue queue : t_.queues) check(clFlush(queue), "clFlush");
    for (slab& s : slabs_) s.current.swap(s.next);
    ++steps_;
  }

  void finish() {
    for (cl_command_queue queue : t_.queues) check(clFinish(queue), "clFinish");
    for (cl_command_queue queue : exchange_queues_) check(clFinish(queue), "clFinish");
  }

  // The grid after the steps so far: every slab's own planes (not the ghosts).
  void read_back(std::vector<float>& grid) {
    // A plane that no read fills stays NaN and fails the comparison.
    std::fill(grid.begin(), grid.end(), std::numeric_limits<float>::quiet_NaN());
    for (size_t d = 0; d < slabs_.size(); ++d) {
      const slab& s = slabs_[d];
      check(clEnqueueReadBuffer(t_.queues[d], s.current->get(), CL_FALSE, plane_bytes_, s.planes * plane_bytes_,
                                &grid[s.first_z * n_ * n_], 0, nullptr, nullptr),
            "clEnqueueReadBuffer");
    }
    finish();
  }

  int steps() const { return steps_; }

 private:
  // Updates `count` local planes of slab d from local plane `first` on, on
  // its kernels' queue, behind `waits` (0 or 1), giving `done` if asked.
  // With `edge` (one plane), also writes that plane into it (jacobi_edge).
  void update(size_t d, size_t first, size_t count, cl_uint waits, const cl_event* wait, cl_event* done,
              const mem_object* edge = nullptr) {
    const slab& s = slabs_[d];
    const cl_uint side = static_cast<cl_uint>(n_);
    const cl_uint first_z = static_cast<cl_uint>(s.first_z);
    cl_kernel kernel = edge ? edge_kernel_ : kernel_;
    // Arguments are captured at enqueue, so one kernel serves every device in turn.
    check(clSetKernelArg(kernel, 0, sizeof(cl_mem), s.current->address()), "clSetKernelArg");
    check(clSetKernelArg(kernel, 1, sizeof(cl_mem), s.next->address()), "clSetKernelArg");
    check(clSetKernelArg(kernel, 2, sizeof side, &side), "clSetKernelArg");
    check(clSetKernelArg(kernel, 3, sizeof first_z, &first_z), "clSetKernelArg");
    if (edge) check(clSetKernelArg(kernel, 4, sizeof(cl_mem), edge->address()), "clSetKernelArg");
    const size_t local[3] = {tile_x, tile_y, 1};
    const size_t global[3] = {local_ok_ ? round_up(n_, tile_x) : n_, local_ok_ ? round_up(n_, tile_y) : n_, count};
    // The kernel's plane is get_global_id(2) + 1: the offset picks the first.
    const size_t offset[3] = {0, 0, first};
    check(clEnqueueNDRangeKernel(t_.queues[d], kernel, 3, offset, global, local_ok_ ? local : nullptr, waits, wait,
                                 done),
          "clEnqueueNDRangeKernel");
  }

  // One overlapped step: per device the edge planes (behind the ghosts of the
  // step before), each also written into its halo buffer, then the interior on
  // the kernels' queue; the halos go to the neighbours on the exchange queues
  // meanwhile, and nothing of the exchange touches a buffer the interior writes
  // until the ghost planes land.
  void step_overlapped() {
    const size_t parity = steps_ % 2;
    for (size_t d = 0; d < slabs_.size(); ++d) {
      const slab& s = slabs_[d];
      // The edges read the ghosts: they wait for the exchange of the step before.
      const cl_uint waits = landed_[d].count();
      const cl_event* wait = landed_[d].list();
      const std::vector<size_t> edges = s.planes == 1 ? std::vector<size_t>{0} : std::vector<size_t>{0, s.planes - 1};
      bool first = true;  // only the first kernel waits: the queue runs in order
      for (size_t edge : edges) {
        std::vector<halo*> outs = halos_from(d, edge + 1);
        if (outs.empty()) outs.push_back(nullptr);  // a face of the grid: no neighbour takes it
        // A plane that goes to two neighbours (a one-plane slab) is computed once per halo.
        for (halo* out : outs) {
          if (out != nullptr) {
            // The halo buffer's last contents went into a ghost already (emptied): the
            // kernel overwrites it all, so none of them need to come back here.
            check(clEnqueueMigrateMemObjects(t_.queues[d], 1, out->buffer[parity]->address(),
                                             CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, out->emptied[parity].count(),
                                             out->emptied[parity].list(), nullptr),
                  "clEnqueueMigrateMemObjects (halo to its edge's device)");
            out->emptied[parity].reset();
          }
          update(d, edge, 1, first ? waits : 0, first ? wait : nullptr,
                 out != nullptr ? out->filled[parity].out() : nullptr,
                 out != nullptr ? out->buffer[parity].get() : nullptr);
          first = false;
        }
      }
      if (s.planes > 2) update(d, 1, s.planes - 2, 0, nullptr, nullptr);
    }
    for (auto& h : halos_) {
      check(clEnqueueMigrateMemObjects(exchange_queues_[h->to], 1, h->buffer[parity]->address(), 0, 1,
                                       h->filled[parity].list(), nullptr),
            "clEnqueueMigrateMemObjects");
      h->filled[parity].reset();
      check(clEnqueueCopyBuffer(exchange_queues_[h->to], h->buffer[parity]->get(), slabs_[h->to].next->get(), 0,
                                h->ghost_plane * plane_bytes_, plane_bytes_, 0, nullptr, h->emptied[parity].out()),
            "clEnqueueCopyBuffer (halo to ghost plane)");
    }
    // Everything the device's exchange queue did this step (its ghosts in):
    // the next step's edges wait for it.
    for (size_t d = 0; d < slabs_.size(); ++d)
      check(clEnqueueMarkerWithWaitList(exchange_queues_[d], 0, nullptr, landed_[d].out()), "clEnqueueMarkerWithWaitList");
    for (cl_command_queue queue : t_.queues) check(clFlush(queue), "clFlush");
    for (cl_command_queue queue : exchange_queues_) check(clFlush(queue), "clFlush");
    for (slab& s : slabs_) s.current.swap(s.next);
    ++steps_;
  }

  // The halos that carry slab d's local plane `plane` to its neighbours.
  std::vector<halo*> halos_from(size_t d, size_t plane) {
    std::vector<halo*> found;
    for (auto& h : halos_)
      if (h->from == d && h->source_plane == plane) found.push_back(h.get());
    return found;
  }

  void add_halo(size_t from, size_t to, size_t source_plane, size_t ghost_plane) {
    auto h = std::make_unique<halo>();
    h->from = from;
    h->to = to;
    h->source_plane = source_plane;
    h->ghost_plane = ghost_plane;
    for (auto& b : h->buffer) b = std::make_unique<mem_object>(t_.context, CL_MEM_READ_WRITE, plane_bytes_);
    halos_.push_back(std::move(h));
  }

  target& t_;
  size_t n_;
  size_t plane_bytes_;
  cl_kernel kernel_ = nullptr;       // released with the target
  cl_kernel edge_kernel_ = nullptr;  // overlap: jacobi_edge, released with the target
  bool local_ok_ = false;
  exchange mode_;
  std::vector<cl_command_queue> exchange_queues_;  // overlap: one per device
  std::unique_ptr<event[]> landed_;                // overlap: per device, its exchange of the step before
  std::vector<slab> slabs_;
  std::vector<std::unique_ptr<halo>> halos_;  // in unique_ptr: events do not move
  int steps_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  bench_info info{"stencil",
                  "3D Jacobi stencil (float, N x N x N, 6-neighbour mean) split along z over 1 and 2\n"
                  "servers (natively 1 and 2 devices of one context), halos exchanged every step,\n"
                  "after the step's kernel or overlapped with the interior's update;\n"
                  "ms per step and strong-scaling efficiency t(1) / (2 x t(2)).",
                  3, "timed runs per split, median"};
  info.devices = 2;
  info.takes_commands = true;
  info.default_commands = 50;
  info.commands_meaning = "steps per timed run";
  info.takes_size = true;
  info.default_size = 512;
  info.size_meaning = "N, the grid's side in cells (at least 3)";
  const options opts = parse_options(argc, argv, info);
  const size_t n = opts.size;
  if (n < 3) {
    std::fprintf(stderr, "ferry_bench_stencil: --size must be at least 3 (a grid with an interior)\n");
    return 2;
  }
  session s(opts, info);
  const int repeats = opts.repeats > 0 ? opts.repeats : info.default_repeats;
  const int steps_per_run = static_cast<int>(opts.commands);
  // Every split runs the same steps, so that its grid can be compared with the others'.
  const int total_steps = warmup_steps + repeats * steps_per_run;

  std::vector<float> initial;
  std::optional<std::vector<float>> reference;  // computed on first use, for both targets
  try {
    initial = initial_grid(n);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "ferry_bench_stencil: no host memory for a grid of side %zu\n", n);
    return 1;
  }

  const int status = s.run([&](target& whole) {
    const char* unit = whole.label == "ferry" ? "servers" : "devices";
    std::vector<float> single, grid;
    try {
      single.resize(n * n * n);
      grid.resize(n * n * n);
    } catch (const std::bad_alloc&) {
      throw bench_error("no host memory for the grids read back");
    }
    double single_ms = 0;
    struct split_run {
      size_t parts;
      exchange mode;
    };
    const size_t all = whole.devices.size();
    for (split_run run : {split_run{1, exchange::after}, split_run{all, exchange::after}, split_run{all, exchange::overlap}}) {
      const size_t parts = run.parts;
      std::unique_ptr<target> t = whole.first(parts);
      split_grid split(*t, n, run.mode);
      split.upload(initial);
      for (int i = 0; i < warmup_steps; ++i) split.step();
      split.finish();
      std::vector<double> ms;
      for (int r = 0; r < repeats; ++r) {
        const auto start = clock::now();
        for (int i = 0; i < steps_per_run; ++i) split.step();
        split.finish();
        ms.push_back(seconds_since(start) * 1e3);
      }

      std::string checked;
      split.read_back(grid);
      if (n <= reference_limit) {
        if (!reference) reference = reference_after(initial, n, total_steps);
        compare(grid, *reference, n, "the CPU");
        checked = "cpu";
      }
      if (parts == 1) {
        single.swap(grid);
      } else {
        compare(grid, single, n, "the 1-device run");
        checked += checked.empty() ? "1-device" : "+1-device";
      }

      const double per_step = median(ms) / steps_per_run;
      const double mcells_s = static_cast<double>(n) * n * n / (per_step * 1e-3) / 1e6;
      const std::string suffix = run.mode == exchange::overlap ? "_overlap" : "";
      std::string text = std::string(unit) + "=" + std::to_string(parts) + " n=" + std::to_string(n) +
                         (parts > 1 ? std::string(" exchange=") + exchange_name(run.mode) : std::string()) +
                         " steps=" + std::to_string(steps_per_run) + " ms_per_step=" + format(per_step, 3) +
                         " mcells_s=" + format(mcells_s);
      results::instance().record(whole.label, "ms_per_step_" + std::to_string(parts) + suffix, per_step);
      if (parts == 1) {
        single_ms = per_step;
      } else {
        const double efficiency = single_ms / (static_cast<double>(parts) * per_step);
        results::instance().record(whole.label, "efficiency" + suffix, efficiency);
        text += " speedup=" + format(single_ms / per_step, 2) + " efficiency=" + format(efficiency, 3);
      }
      text += " repeats=" + std::to_string(repeats);
      if (!checked.empty()) text += " checked=" + checked;
      print_line("stencil", whole.label, text);
    }
  });

  // Ferry's aim: lose little of the native scaling to moving halos between servers.
  for (const char* mode : {"after", "overlap"}) {
    const std::string key = std::string("efficiency") + (std::string(mode) == "overlap" ? "_overlap" : "");
    auto native = results::instance().get("native", key);
    auto ferry = results::instance().get("ferry", key);
    if (native && ferry && *native > 0)
      print_line("stencil", "ratio",
                 std::string("exchange=") + mode + " efficiency ferry/native=" + format(*ferry / *native, 3) +
                     " (target >= 0.85; at 1024^3 overlapped, ferry >= 0.80)");
  }
  return status;
}
