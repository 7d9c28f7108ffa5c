// A large read cut into pieces (executor_buffers.cpp, "read in pieces"): one
// native read per piece into one staging buffer, each piece's bytes sent by
// the bulk writer as soon as its native read completes, while the device
// still reads the next ones. Without it a 1 GiB read was read whole into
// staging before its first byte went out, so the device copy and the stream
// took turns instead of overlapping.
//
// Every piece's callback hands the bulk writer a bulk_job that shares this
// record. The bulk writer (one thread at a time: a stream's writer is joined
// before the next stream's starts) sends the piece, counts it, and after the
// last piece reports the read's completion once, with the first failure of
// any piece. The staging lives as long as a piece job or a kept (not yet
// acknowledged) frame of the read needs it.
#pragma once

#include <CL/cl.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

#include "protocol/messages.hpp"
#include "server/transport/staging.hpp"

namespace ferry::server {

struct pipelined_read {
  protocol::object_id command = 0;
  staging_ptr data;  // the whole range; piece i lands at its offset in it
  uint64_t size = 0;
  /// Pieces whose jobs the bulk writer has not handled yet.
  uint64_t pieces_left = 0;
  /// CL_COMPLETE, or the first failure a piece reported.
  cl_int status = CL_COMPLETE;
  /// The executor reported the read failed already (a piece could not be
  /// enqueued): the pieces that were enqueued only free the staging when done.
  bool reported = false;
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
