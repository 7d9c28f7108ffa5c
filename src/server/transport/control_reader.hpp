// The control stream's incoming side: bytes -> frame_assembler -> dispatch_frame
// -> executor. The daemon's control reader and the fuzz target run the same
// pump_frames, so the fuzzer exercises exactly the daemon's decoding path.
#pragma once

#include <string>

#include "common/stream.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/frame.hpp"
#include "server/commands/executor.hpp"
#include "server/daemon/link_stats.hpp"
#include "common/reader_wake.hpp"

namespace ferry::server {

enum class pump_result {
  need_more,  ///< every whole frame was handled; receive more bytes
  stop,       ///< the session ends cleanly (goodbye, or closing)
  violation,  ///< malformed frame or protocol violation; `why` says what
};

/// Handles every whole frame in `assembler`. When no whole frame is left it
/// flushes the queues that got work (before the caller blocks in recv).
/// Counts each frame on `counter` (may be null).
pump_result pump_frames(protocol::frame_assembler& assembler, executor& handler, std::string& why,
                        link_counter* counter = nullptr);

/// The control reader thread's body: receives from `fd` until the peer
/// closes, a violation, or goodbye. `why` describes how it ended. `wake`
/// (may be null) keeps it polling after completions went out.
pump_result run_control_reader(stream* fd, protocol::frame_assembler& assembler, executor& handler, std::string& why,
                               link_counter* counter = nullptr, reader_wake* wake = nullptr);

}  // namespace ferry::server
