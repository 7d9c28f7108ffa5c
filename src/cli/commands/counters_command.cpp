#include "cli/commands/counters_command.hpp"

#include <CL/cl_ext_ferry.h>

#include <cstring>
#include <ostream>

#include "cli/args.hpp"
#include "cli/reports/counters_report.hpp"
#include "cli/setup/ferry_servers.hpp"
#include "cli/reports/format.hpp"
#include "common/cl_errors.hpp"

namespace ferry::cli {

namespace {

constexpr option_spec counters_options[] = {
    servers_option,
    {"help", 'h', option_kind::flag, "", "Show this help"},
};

// A server may open links (or start workers) between the call that counts them and the
// one that reads them; this many reads, each with room for the last count, are enough in
// practice.
constexpr int read_attempts = 4;

// Reads every entry of a clFerryGetLinkCounters-shaped function: count first, then the
// entries.
template <class Entry, class Get>
outcome<std::vector<Entry>, cl_int> read_entries(Get get, cl_device_id device) {
  cl_uint count = 0;
  cl_int rc = get(device, 0, nullptr, &count);
  if (rc != CL_SUCCESS) return failure(rc);
  std::vector<Entry> raw;
  for (int attempt = 0; attempt < read_attempts && count > raw.size(); ++attempt) {
    raw.resize(count);
    const cl_uint capacity = count;
    rc = get(device, capacity, raw.data(), &count);
    if (rc != CL_SUCCESS) return failure(rc);
    if (count < capacity) raw.resize(count);
  }
  return raw;
}

// The text of a C string field that may fill it completely.
template <std::size_t N>
std::string field_text(const char (&field)[N]) {
  return std::string(field, strnlen(field, N));
}

outcome<std::vector<link_entry>, cl_int> read_link_counters(clFerryGetLinkCounters_fn get, cl_device_id device) {
  auto raw = read_entries<cl_ferry_link_counters>(get, device);
  if (!raw) return failure(raw.error());
  std::vector<link_entry> links;
  for (const cl_ferry_link_counters& c : raw.value())
    links.push_back({c.kind, field_text(c.remote), c.messages_in, c.messages_out, c.bytes_in, c.bytes_out});
  return links;
}

outcome<std::vector<worker_info>, cl_int> read_workers(clFerryGetWorkers_fn get, cl_device_id device) {
  auto raw = read_entries<cl_ferry_worker>(get, device);
  if (!raw) return failure(raw.error());
  std::vector<worker_info> workers;
  for (const cl_ferry_worker& w : raw.value())
    workers.push_back({w.pid, w.state, field_text(w.session), field_text(w.client), w.memory_bytes, w.age_ms});
  return workers;
}

// Why a server's workers are not shown.
std::string workers_problem(cl_int rc) {
  // An older daemon would take the question for a protocol violation, so libferry
  // does not ask it.
  if (rc == CL_INVALID_OPERATION) return "this ferryd does not report workers: it predates protocol version 7";
  return cl_error_name(rc);
}

}  // namespace

std::string counters_usage() {
  return "Usage: ferry counters [--servers LIST]\n"
         "\n"
         "Prints each Ferry server's link counters since the daemon started: one table per\n"
         "server, a row per kind of link and remote host, with messages (frames) and bytes\n"
         "(frame headers included) in and out, as the server sees them.\n"
         "  client-control  clients' control streams (this command's own included)\n"
         "  client-bulk     clients' bulk streams (buffer contents)\n"
         "  peer-out        links this server opened to other servers\n"
         "  peer-in         links other servers opened to this one\n"
         "Then a table of the server's worker processes (ferryd runs each client session in\n"
         "a worker process of its own and keeps spares ready): pid, state (starting, spare,\n"
         "serving, detached: its client's connection is lost, ending), the session's label,\n"
         "the client's address, resident memory and age, and a summary such as\n"
         "\"3 workers: 1 serving, 2 spare\". A ferryd older than protocol version 7 does not\n"
         "report workers; the line \"workers unavailable\" says so.\n"
         "Servers come from --servers, FERRY_SERVERS or the config file.\n"
         "\n"
         "Options:\n" +
         format_options(counters_options);
}

int counters_command(command_args args, const command_io& io) {
  auto parsed = parse_args(args, counters_options, positionals::forbidden);
  if (!parsed) return usage_error(io, "counters", parsed.error());
  if (parsed.value().has("help")) {
    io.out << counters_usage();
    return 0;
  }
  auto ferry = open_ferry_servers("counters", parsed.value(), io);
  if (!ferry) return ferry.error();

  auto get = reinterpret_cast<clFerryGetLinkCounters_fn>(
      clGetExtensionFunctionAddressForPlatform(ferry.value().platform, "clFerryGetLinkCounters"));
  if (get == nullptr) {
    io.err << "ferry counters: this libferry offers no clFerryGetLinkCounters (is it older than "
              "the servers' link counters?)\n";
    return 1;
  }

  // Part of the same libferry as clFerryGetLinkCounters, unless this command runs over
  // an older one: the link tables are still worth printing then.
  auto get_workers = reinterpret_cast<clFerryGetWorkers_fn>(
      clGetExtensionFunctionAddressForPlatform(ferry.value().platform, "clFerryGetWorkers"));

  std::vector<server_counters> servers;
  bool any_answered = false;
  for (const server_devices& server : ferry.value().servers) {
    server_counters& entry = servers.emplace_back(server_counters{server.address, std::nullopt, ""});
    auto links = read_link_counters(get, server.devices.front());
    if (!links) {
      entry.problem = cl_error_name(links.error());
      continue;
    }
    entry.links = std::move(links).value();
    any_answered = true;
    if (get_workers == nullptr) {
      entry.workers_problem = "this libferry offers no clFerryGetWorkers";
      continue;
    }
    auto workers = read_workers(get_workers, server.devices.front());
    if (workers)
      entry.workers = std::move(workers).value();
    else
      entry.workers_problem = workers_problem(workers.error());
  }
  io.out << render_counters_report(servers);
  if (!any_answered) {
    io.err << "ferry counters: no server answered\n";
    return 1;
  }
  return 0;
}

}  // namespace ferry::cli
