#include "cli/reports/device_report.hpp"

#include "cli/reports/format.hpp"

namespace ferry::cli {

namespace {

std::string plural(std::size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

std::string render_device_report(const std::vector<server_entry>& servers) {
  std::string out;
  std::size_t device_count = 0;
  for (const server_entry& server : servers) {
    out += "server " + server.address + "  round trip ";
    if (server.round_trip_ns) {
      out += format_microseconds(*server.round_trip_ns) + " (median of " +
             std::to_string(server.pings) + " pings)";
    } else {
      out += "unknown (" + server.round_trip_problem + ")";
    }
    out += '\n';
    for (const device_entry& device : server.devices) {
      ++device_count;
      std::string index = "  [" + std::to_string(device.index) + "] ";
      out += index + device.name + (device.available ? "" : "  (unavailable)") + '\n';
      out += std::string(index.size(), ' ') + format_device_type(device.type) + ", " +
             plural(device.compute_units, "compute unit") + ", " +
             format_bytes(device.global_memory) + " global memory\n";
    }
  }
  out += plural(servers.size(), "server") + ", " + plural(device_count, "device") + "\n";
  return out;
}

std::string no_server_message(const server_configuration& config) {
  std::string out = "ferry: no Ferry server answered";
  switch (config.source) {
    case server_source::servers_variable:
      out += " (FERRY_SERVERS=" + config.detail + ")";
      break;
    case server_source::config_file:
      out += " (servers from " + config.detail + ")";
      break;
    case server_source::none:
      out += ": no server is configured";
      break;
  }
  out +=
      ".\n"
      "Start a daemon on the machine with the devices:  ferryd --listen 0.0.0.0 --token-file FILE\n"
      "(port 7780; clients then set FERRY_TOKEN_FILE to a copy of FILE),\n"
      "then point Ferry at it, either for one command:  ferry devices --servers HOST[:PORT]\n"
      "or with FERRY_SERVERS=HOST[:PORT][,HOST[:PORT]...], or with lines \"server HOST:PORT\"\n"
      "in $FERRY_CONFIG or ~/.config/ferry/config.\n"
      "To try Ferry on this machine alone:  ferry run -- ferry devices\n";
  return out;
}

}  // namespace ferry::cli
