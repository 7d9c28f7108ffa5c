// A large read cut into pieces (executor_buffers.cpp, "read in pieces"): one
// native read per piece into one staging buffer, each piece's bytes sent by
// the bulk writer as soon as its native read completes, while the device
// still reads the next ones. Without it a 1 GiB read was read whole into
// staging before its first byte went out, so the device copy and the stream
// took turns instead of overlapping.
//
// Every piece's callback hands the bulk writer a bulk_job that shares this
// record, and the executor adds one more job, the seal, once it has enqueued
// what it could (bulk_job::seal). The bulk writers (the bulk stream's, and
// each bulk lane's, which take pieces only) send each piece, count it, and
// whoever handles the last job reports the read's completion once, with the
// first failure of any piece or of the enqueueing. The staging lives as
// long as a piece job or a kept (not yet acknowledged) frame of the read needs
// it.
//
// Pieces are armed as they are enqueued, not after the last one: NVIDIA's
// read into pageable memory returns only once its bytes are there, so a 1 GiB
// read spent 95 ms in the enqueueing loop and none of it went out meanwhile.
#pragma once

#include <CL/cl.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <mutex>

#include "protocol/messages.hpp"
#include "server/transport/staging.hpp"

namespace ferry::server {

struct pipelined_read {
  /// Guards pieces_left, status and counters: the bulk stream's writer and
  /// the bulk lanes' writers may each send a piece (bulk_writer::send_piece).
  std::mutex mutex;
  protocol::object_id command = 0;
  staging_ptr data;  // the whole range; piece i lands at its offset in it
  uint64_t size = 0;
  /// Jobs (pieces, and the seal) the bulk writer has not handled yet.
  uint64_t pieces_left = 0;
  /// CL_COMPLETE, or the first failure a piece or the seal reported.
  cl_int status = CL_COMPLETE;
  /// The queue records profiling counters: the completion carries the first
  /// piece's queued, submit and start times and the last piece's end.
  bool profiling = false;
  std::array<cl_ulong, 4> counters{std::numeric_limits<cl_ulong>::max(), std::numeric_limits<cl_ulong>::max(),
                                   std::numeric_limits<cl_ulong>::max(), 0};

  /// Folds one piece's counters (queued, submit, start, end) into the read's.
  void add_counters(const std::array<cl_ulong, 4>& piece) {
    for (size_t i = 0; i < 3; ++i) counters[i] = std::min(counters[i], piece[i]);
    counters[3] = std::max(counters[3], piece[3]);
  }
};

}  // namespace ferry::server
