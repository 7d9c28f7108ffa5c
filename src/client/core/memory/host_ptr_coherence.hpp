// CL_MEM_USE_HOST_PTR buffers whose host memory stays coherent with the
// server's copy, for programs that never map them.
//
// Many programs written for CPUs and integrated GPUs (FluidX3D among them)
// treat a CPU device as sharing the host's memory: they create buffers with
// CL_MEM_USE_HOST_PTR, write and read the host memory directly, and never
// enqueue a write, a read or a map. Natively on a CPU that works because the
// device uses that very memory. Through Ferry the device is on a server, so
// the client keeps the two coherent at the points a program can observe:
//   - before a command that uses the buffer, the pages the program changed
//     since the last agreement go to the server (a write command ahead of
//     it, found by comparing with a shadow copy: host_mirror.hpp);
//   - once a command that may write it has completed, a blocking wait
//     (clFinish, clWaitForEvents, a blocking enqueue) brings the pages the
//     server changed back into the host memory.
// Only buffers of contexts with a device that shares memory with its host
// natively (a CPU device, or CL_DEVICE_HOST_UNIFIED_MEMORY) get this: a
// program written for a discrete GPU maps. A program that maps, reads or
// writes a CL_MEM_USE_HOST_PTR buffer of a context explicitly follows the
// specification: from then on every buffer of that context gets the plain
// caching, with no cost (it need not map the buffers it never looks at).
// FERRY_HOST_PTR=coherent keeps coherence regardless, =cached turns it off.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "client/core/memory/host_mirror.hpp"
#include "client/core/memory/host_ptr_mode.hpp"
#include "client/core/objects.hpp"

namespace ferry::client {

/// The coherence state of one root buffer.
struct host_coherence {
  host_coherence(void* host, size_t size) : mirror(host, size) {}
  ~host_coherence();

  std::mutex mutex;  // guards everything below
  host_mirror mirror;
  bool push_allowed = true;  // the host may write it (not CL_MEM_HOST_READ_ONLY)
  bool pull_allowed = true;  // the host may read it (not CL_MEM_HOST_WRITE_ONLY)
  /// False once the program mapped, read or wrote it explicitly.
  bool active = true;
  /// Counts pushes: a pull enqueued before a later push is stale for the
  /// pages pushed, so it is dropped (a later pull brings them).
  uint64_t push_epoch = 0;
  /// The latest command that may have changed the server's copy and whose
  /// changes have not come back yet (internal reference), its queue and its
  /// place in that queue.
  event* writer = nullptr;
  queue* writer_queue = nullptr;
  uint64_t writer_sequence = 0;
  /// The read in flight that brings the server's bytes back (internal
  /// reference), the writer it follows, the push epoch it saw, and where its
  /// bytes land (also held by the read's event, so a buffer released while
  /// the read is in flight leaves them valid).
  event* pull = nullptr;
  event* pull_follows = nullptr;
  uint64_t pull_epoch = 0;
  std::shared_ptr<std::vector<uint8_t>> staging;
};

/// Makes `m` (a new CL_MEM_USE_HOST_PTR buffer whose initial contents are
/// its host memory's) coherent when its context and the mode call for it.
void start_coherence(memory* m);
/// Forgets a root that is being destroyed.
void stop_coherence(memory* m);
/// The program maps, reads or writes `m` explicitly. When `m` is a
/// CL_MEM_USE_HOST_PTR buffer, the program follows the specification: the
/// plain caching applies to every buffer of its context from now on (mode
/// automatic).
void end_coherence(memory* m);

/// Before a command on `q` uses `m`: sends what the program changed in the
/// host memory as write commands ahead of it; their ids go to `waits` (the
/// command must wait for them; the caller releases them after sending).
cl_int push_host_changes(queue* q, memory* m, std::vector<protocol::object_id>& waits);
/// Whether `m`'s root is coherent now (a command that may write it must
/// then have an event, given to note_coherent_writer).
bool is_coherent(memory* m);
/// Records that `writer`, the command at `sequence` of its queue (the
/// event holds the queue), may change `root`.
void note_coherent_writer(memory* root, event* writer, uint64_t sequence);

/// clFinish on `q`, before its marker: reads back every coherent buffer last
/// written on `q`, so that the finish covers those reads too.
void pull_before_finish(queue* q);
/// After a blocking wait in `c`: brings back what completed writers changed
/// and what finished reads brought.
void settle_coherent_buffers(context* c);

}  // namespace ferry::client
