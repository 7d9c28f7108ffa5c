// The text `ferry counters` prints: per server, a table of link counters and
// one of the daemon's worker processes.
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

/// One worker process of a server (clFerryGetWorkers), as it was when asked.
struct worker_info {
  std::uint32_t pid = 0;
  cl_uint state = 0;    ///< CL_FERRY_WORKER_*
  std::string session;  ///< the session's label; empty for a spare
  std::string client;   ///< the client's address; empty for a spare
  std::uint64_t memory_bytes = 0;
  std::uint64_t age_ms = 0;
};

struct server_counters {
  std::string address;
  std::optional<std::vector<link_entry>> links;  ///< nothing when they could not be read
  std::string problem;                           ///< why not, when links is empty
  std::optional<std::vector<worker_info>> workers = std::nullopt;  ///< nothing when they could not be read
  std::string workers_problem = "";                                ///< why not, when workers is empty
};

/// "client-control", "client-bulk", "peer-out", "peer-in", or "kind N" for one this
/// build does not know.
std::string link_kind_name(cl_uint kind);

/// "starting", "spare", "serving", "detached", "ending", or "state N" for one this build
/// does not know.
std::string worker_state_name(cl_uint state);

/// "3 workers: 1 serving, 2 spare": how many, then how many in each state that has any:
/// serving, detached, spare, starting, ending, then states this build does not know.
std::string workers_summary(const std::vector<worker_info>& workers);

/// "800 B", or the human-readable size and the exact count: "64.0 MiB (67108864)".
std::string format_bytes_exact(std::uint64_t bytes);

/// One block per server: its address, then a table with a header and a row per link
/// (by kind, then remote), numbers right-aligned, then a table of its workers (by pid:
/// pid, state, session, client, memory, age) and their summary; a line saying why for a
/// server whose counters, or workers, could not be read.
std::string render_counters_report(const std::vector<server_counters>& servers);

}  // namespace ferry::cli
