// libFuzzer target: arbitrary bytes on a session's control stream.
//
// The bytes go through exactly what the daemon's control reader runs
// (frame_assembler -> dispatch_frame -> executor, via pump_frames), with the
// executor on the dry native API, so no device is touched and every handler,
// lookup and table update is exercised. Nothing arrives on a bulk stream:
// the transfer table is aborted up front, so a create_buffer waiting for
// initial contents gives up at once.
//
// The cuda_* messages go to the session's CUDA backend on the CPU stand-in
// driver of tests/cuda (FERRY_CUDA_DRIVER), which checks every pointer it is
// handed as the daemon's own checks should have.
//
// The same bytes (their first 64 KiB, what a socket pair holds without a
// reader) then go through a bulk reader, as a client's bulk stream on a
// plain Unix socket of version 8: bulk_data, window_offer, window_chunk and
// read_window_offer frames, each checked before anything is read into place.
//
// Build with clang and coverage for the library too, e.g.
//   cmake -B build/fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
//         -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address" -DFERRY_BUILD_TESTS=OFF
//   cmake --build build/fuzz --target ferry_fuzz_decoder
//   build/fuzz/bin/ferry_fuzz_decoder -max_total_time=60
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/log.hpp"
#include "server/files/file_root.hpp"
#include "server/native/api.hpp"
#include "server/native/catalog.hpp"
#include "server/session/session_core.hpp"
#include "server/session/session_quota.hpp"
#include "common/socket.hpp"
#include "server/transport/bulk_reader.hpp"
#include "server/transport/control_reader.hpp"
#include "server/transport/staging.hpp"

using namespace ferry;
using namespace ferry::server;

namespace {

void feed_bulk_reader(const uint8_t* data, size_t size) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return;
  unique_fd client(pair[0]);
  stream_ptr server = plain_stream(unique_fd(pair[1]));
  // Written whole before the reader runs, then closed: the reader ends at
  // the first refusal or at the end of the bytes.
  if (!write_all(client.get(), data, std::min<size_t>(size, 64 * 1024))) return;
  ::shutdown(client.get(), SHUT_WR);
  // Staging as a daemon started with --session-in-flight 64M would grant in a
  // busy session (one that holds some staging already: the first transfer
  // alone may be any size, by design). A chunk may announce a total of up to
  // 1 TiB; the quota refuses it (its bytes are then dropped) before the
  // fuzzer's memory limit would.
  session_limits limits;
  limits.in_flight = uint64_t{64} << 20;
  session_quota quota(limits, "fuzz");
  staging_ptr busy(acquire_staging(4096, &quota.in_flight()));
  transfer_table transfers(native::dry_api(), &quota);
  bulk_reader reader(server.get(), transfers);
  reader.set_windows(bulk_reader::windows::accepted, "fuzz");
  auto read_windows = std::make_shared<read_window_handoff>();
  reader.set_read_windows(read_windows);
  std::string why;
  reader.run(why);
  transfers.abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const native::device_catalog catalog = [] {
    set_log_level(log_level::error);
#ifdef FERRY_FUZZ_CUDA_DRIVER
    // The CUDA backend loads the stand-in driver (once, at the first cuda_* message).
    ::setenv("FERRY_CUDA_DRIVER", FERRY_FUZZ_CUDA_DRIVER, 0);
#endif
    return native::device_catalog::dry(2);
  }();
  protocol::session_token id{};
  id[0] = 0xF0;
  auto core = std::make_shared<session_core>(id, native::dry_api(), nullptr);
  core->transfers.abort();
  // File commands get as far as opening their root, which does not exist:
  // every handler and the file thread run, and no file is ever written.
  core->files = std::make_shared<const file_root>("/nonexistent/ferry-fuzz-file-root");
  {
    executor handler(core, catalog);
    protocol::frame_assembler assembler(protocol::max_control_payload, 4096);
    // Two deliveries, split where the first byte says, so that frames also
    // arrive in pieces as they do from a socket.
    size_t split = size ? data[0] % (size + 1) : 0;
    std::string why;
    assembler.feed(data, split);
    pump_result r = pump_frames(assembler, handler, why);
    if (r == pump_result::need_more) {
      assembler.feed(data + split, size - split);
      pump_frames(assembler, handler, why);
    }
  }
  core->outbox.close();
  core->bulk.close();
  feed_bulk_reader(data, size);
  return 0;
}
