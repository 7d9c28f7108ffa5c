// The one Ferry platform: built on first use from the configured servers.
#pragma once

#include <memory>
#include <vector>

#include "client/core/objects.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client {

/// The platform, connecting to the configured servers the first time
/// (servers that do not answer are logged and left out).
platform& the_platform();

/// All servers that answered.
const std::vector<std::unique_ptr<server>>& connected_servers();

/// Reads a cached device info value as T (zero when absent).
template <class T>
T device_info_as(const device& d, cl_uint param) {
  T value{};
  auto it = d.info.find(param);
  if (it != d.info.end() && it->second.size() >= sizeof(T)) std::memcpy(&value, it->second.data(), sizeof(T));
  return value;
}

}  // namespace ferry::client
