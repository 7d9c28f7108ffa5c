// The host's OpenCL devices for the daemon's unit tests that run a real
// server in the process (PoCL in CI), and a bulk_data frame a hand-made peer
// sends. Test-only (header-only, included by *.test.cpp).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "protocol/codec.hpp"
#include "protocol/frame.hpp"
#include "protocol/messages.hpp"
#include "server/native/catalog.hpp"

namespace ferry::server::testing {

/// Discovered once; FERRY_TEST_PLATFORM picks the native platform (default:
/// any). Null when the host has no device (the tests then skip).
inline const native::device_catalog* host_catalog() {
  static native::device_catalog catalog;
  static bool found = [] {
    ::setenv("FERRY_IN_DAEMON", "1", 1);
    std::string error;
    native::catalog_filter filter;
    if (const char* platform = std::getenv("FERRY_TEST_PLATFORM")) filter.platform = platform;
    return native::device_catalog::discover(filter, catalog, error);
  }();
  return found ? &catalog : nullptr;
}

/// A bulk_data frame carrying all of `bytes` as transfer `transfer`.
inline std::vector<uint8_t> chunk_frame(uint64_t transfer, const std::vector<uint8_t>& bytes) {
  namespace p = protocol;
  std::vector<uint8_t> frame(p::frame_header_size);
  p::writer w(frame);
  p::encode_value(w, p::bulk_data{transfer, 0, bytes.size()});
  frame.insert(frame.end(), bytes.begin(), bytes.end());
  p::store_header(frame.data(), p::frame_header{static_cast<uint32_t>(frame.size() - p::frame_header_size),
                                                static_cast<uint16_t>(p::message_id::bulk_data), 0});
  return frame;
}

}  // namespace ferry::server::testing
