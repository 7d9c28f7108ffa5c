// The text `ferry counters` prints: one table of link counters per server.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ferry::cli {

/// One row: a kind of link (CL_FERRY_LINK_*) with one remote host, since the daemon started.
struct link_entry {
  cl_uint kind = 0;
  std::string remote;
  std::uint64_t messages_in = 0;
  std::uint64_t messages_out = 0;
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
};

struct server_counters {
  std::string address;
  std::optional<std::vector<link_entry>> links;  ///< nothing when they could not be read
  std::string problem;                           ///< why not, when links is empty
};

/// "client-control", "client-bulk", "peer-out", "peer-in", or "kind N" for one this
/// build does not know.
std::string link_kind_name(cl_uint kind);

/// "800 B", or the human-readable size and the exact count: "64.0 MiB (67108864)".
std::string format_bytes_exact(std::uint64_t bytes);

/// One block per server: its address, then a table with a header and a row per link
/// (by kind, then remote), numbers right-aligned; a line saying why for a server whose
/// counters could not be read.
std::string render_counters_report(const std::vector<server_counters>& servers);

}  // namespace ferry::cli
