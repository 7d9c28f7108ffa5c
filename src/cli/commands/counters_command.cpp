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

// A server may open links between the call that counts them and the one that reads
// them; this many reads, each with room for the last count, are enough in practice.
constexpr int read_attempts = 4;

outcome<std::vector<link_entry>, cl_int> read_link_counters(clFerryGetLinkCounters_fn get,
                                                            cl_device_id device) {
  cl_uint count = 0;
  cl_int rc = get(device, 0, nullptr, &count);
  if (rc != CL_SUCCESS) return failure(rc);
  std::vector<cl_ferry_link_counters> raw;
  for (int attempt = 0; attempt < read_attempts && count > raw.size(); ++attempt) {
    raw.resize(count);
    const cl_uint capacity = count;
    rc = get(device, capacity, raw.data(), &count);
    if (rc != CL_SUCCESS) return failure(rc);
    if (count < capacity) raw.resize(count);
  }
  std::vector<link_entry> links;
  for (const cl_ferry_link_counters& c : raw) {
    links.push_back({c.kind, std::string(c.remote, strnlen(c.remote, sizeof c.remote)), c.messages_in,
                     c.messages_out, c.bytes_in, c.bytes_out});
  }
  return links;
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

  std::vector<server_counters> servers;
  bool any_answered = false;
  for (const server_devices& server : ferry.value().servers) {
    server_counters& entry = servers.emplace_back(server_counters{server.address, std::nullopt, ""});
    auto links = read_link_counters(get, server.devices.front());
    if (links) {
      entry.links = std::move(links).value();
      any_answered = true;
    } else {
      entry.problem = cl_error_name(links.error());
    }
  }
  io.out << render_counters_report(servers);
  if (!any_answered) {
    io.err << "ferry counters: no server answered\n";
    return 1;
  }
  return 0;
}

}  // namespace ferry::cli
