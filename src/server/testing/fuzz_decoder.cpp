// libFuzzer target: arbitrary bytes on a session's control stream.
//
// The bytes go through exactly what the daemon's control reader runs
// (frame_assembler -> dispatch_frame -> executor, via pump_frames), with the
// executor on the dry native API, so no device is touched and every handler,
// lookup and table update is exercised. Nothing arrives on a bulk stream:
// the transfer table is aborted up front, so a create_buffer waiting for
// initial contents gives up at once.
//
// Build with clang and coverage for the library too, e.g.
//   cmake -B build/fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
//         -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address" -DFERRY_BUILD_TESTS=OFF
//   cmake --build build/fuzz --target ferry_fuzz_decoder
//   build/fuzz/bin/ferry_fuzz_decoder -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/log.hpp"
#include "server/native/api.hpp"
#include "server/native/catalog.hpp"
#include "server/session/session_core.hpp"
#include "server/transport/control_reader.hpp"

using namespace ferry;
using namespace ferry::server;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const native::device_catalog catalog = [] {
    set_log_level(log_level::error);
    return native::device_catalog::dry(2);
  }();
  protocol::session_token id{};
  id[0] = 0xF0;
  auto core = std::make_shared<session_core>(id, native::dry_api(), nullptr);
  core->transfers.abort();
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
  return 0;
}
