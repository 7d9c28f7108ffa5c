// What a Ferry device reports about its capabilities: the native device's
// answers, restricted to what Ferry serves.
//
// Device info passes through from the server unchanged except where Ferry
// cannot honour a capability the native device has. A program that trusts
// the answers must never be told about a feature whose entry points would
// then fail, so those answers are rewritten once, when the device is first
// described (docs/extensions.md lists each rule).
#pragma once

#include <string_view>

#include "client/core/objects.hpp"

namespace ferry::client {

/// Rewrites the cached info of `d` (see the file comment).
void restrict_to_served_capabilities(device& d);

/// Whether Ferry serves the host-side entry points of extension `name`; an
/// extension that only affects the OpenCL C compiler always passes.
bool extension_served(std::string_view name);

}  // namespace ferry::client
