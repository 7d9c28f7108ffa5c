// Lists of device handles as objects keep them (a context's, a program's,
// a kernel's devices).
#pragma once

#include <algorithm>
#include <vector>

#include "client/core/objects.hpp"

namespace ferry::client {

/// Whether `d` is one of `devices`. Compares handles only: a stale or foreign
/// handle is never dereferenced.
inline bool contains(const std::vector<cl_device_id>& devices, cl_device_id d) {
  return std::find(devices.begin(), devices.end(), d) != devices.end();
}

}  // namespace ferry::client
