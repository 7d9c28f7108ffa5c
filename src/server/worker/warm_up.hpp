// A spare worker's first use of its devices, before any session: a context,
// a queue, a small buffer and one blocking write on each, then released.
//
// A native driver does much of its per-process set-up on first use (NVIDIA's:
// its internal streams and pinned staging on the first transfer), which a
// daemon serving every session in one process paid once for all. A worker
// pays it once per session: done here, while the worker waits as a spare, it
// stays out of the session's first command (bench/session_start).
#pragma once

#include <string>

#include "server/native/api.hpp"
#include "server/native/catalog.hpp"

namespace ferry::server::worker {

/// Uses every device of `catalog` once. False with the first failure (the
/// worker then says it cannot serve: a device that fails this fails sessions).
bool warm_up(const native::api& api, const native::device_catalog& catalog, std::string& error);

}  // namespace ferry::server::worker
