#include "cli/devices_command.hpp"

#include <CL/cl_ext_ferry.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "cli/args.hpp"
#include "cli/cl_query.hpp"
#include "cli/device_report.hpp"
#include "cli/format.hpp"
#include "cli/icd_loader_env.hpp"
#include "cli/install_layout.hpp"
#include "cli/round_trip.hpp"

namespace ferry::cli {

namespace {

constexpr int ping_count = 20;

constexpr option_spec devices_options[] = {
    {"servers", 0, option_kind::value, "LIST",
     "Servers to ask (host[:port],...; sets FERRY_SERVERS for this run)"},
    {"help", 'h', option_kind::flag, "", "Show this help"},
};

std::optional<cl_platform_id> find_ferry_platform() {
  auto platforms = platform_ids();
  if (!platforms) return std::nullopt;
  for (cl_platform_id p : platforms.value()) {
    auto name = platform_string(p, CL_PLATFORM_NAME);
    if (name && name.value() == CL_FERRY_PLATFORM_NAME) return p;
  }
  return std::nullopt;
}

device_entry describe(cl_device_id device, cl_uint fallback_index) {
  device_entry d;
  auto index = device_value<cl_uint>(device, CL_DEVICE_FERRY_SERVER_DEVICE_INDEX);
  d.index = index ? index.value() : fallback_index;
  auto name = device_string(device, CL_DEVICE_NAME);
  d.name = name ? name.value() : "(name unavailable: " + cl_error_name(name.error()) + ")";
  if (auto v = device_value<cl_device_type>(device, CL_DEVICE_TYPE)) d.type = v.value();
  if (auto v = device_value<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS))
    d.compute_units = v.value();
  if (auto v = device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE))
    d.global_memory = v.value();
  if (auto v = device_value<cl_bool>(device, CL_DEVICE_AVAILABLE))
    d.available = v.value() != CL_FALSE;
  return d;
}

// One warm-up ping (it may pay for connection setup), then ping_count measured ones.
void measure_round_trip(clFerryPingServer_fn ping, cl_device_id device, server_entry& server) {
  if (ping == nullptr) {
    server.round_trip_problem = "clFerryPingServer is not available";
    return;
  }
  std::vector<std::uint64_t> samples;
  for (int i = 0; i <= ping_count; ++i) {
    cl_ulong ns = 0;
    cl_int rc = ping(device, &ns);
    if (rc != CL_SUCCESS) {
      server.round_trip_problem = cl_error_name(rc);
      return;
    }
    if (i > 0) samples.push_back(ns);
  }
  server.round_trip_ns = median(samples);
  server.pings = static_cast<int>(samples.size());
}

}  // namespace

std::string devices_usage() {
  return "Usage: ferry devices [--servers LIST]\n"
         "\n"
         "Lists each Ferry server, its devices (name, type, compute units, global memory)\n"
         "and the measured round trip to it (median of 20 pings).\n"
         "Servers come from --servers, FERRY_SERVERS or the config file.\n"
         "\n"
         "Options:\n" +
         format_options(devices_options);
}

int devices_command(command_args args, const command_io& io) {
  auto parsed = parse_args(args, devices_options, positionals::forbidden);
  if (!parsed) return usage_error(io, "devices", parsed.error());
  if (parsed.value().has("help")) {
    io.out << devices_usage();
    return 0;
  }
  if (auto servers = parsed.value().value("servers")) {
    if (servers->empty()) return usage_error(io, "devices", "--servers needs a non-empty list");
    ::setenv("FERRY_SERVERS", servers->c_str(), 1);
  }

  // The loader reads these on the first OpenCL call, so they go in before it.
  auto layout = install_layout::of_running_executable();
  if (!layout) {
    io.err << "ferry devices: " << layout.error() << "\n";
    return 1;
  }
  set_in_process(icd_loader_variables(environment::current(), layout.value()));

  auto platform = find_ferry_platform();
  if (!platform) {
    const char* vendors = std::getenv("OCL_ICD_VENDORS");
    io.err << "ferry devices: the OpenCL loader offers no \"" << CL_FERRY_PLATFORM_NAME
           << "\" platform.\n";
    if (vendors == nullptr) {
      io.err
          << "OCL_ICD_VENDORS is unset (FERRY_KEEP_ICD_ENV=1?); point it at Ferry's ferry.icd.\n";
    } else if (std::error_code ec; !std::filesystem::exists(vendors, ec)) {
      io.err << vendors << " does not exist: is libferry built?\n";
    } else {
      io.err << "The loader was pointed at " << vendors << "; is libferry built and loadable?\n";
    }
    return 1;
  }
  auto devices = device_ids(*platform);
  if (!devices) {
    io.err << "ferry devices: clGetDeviceIDs failed: " << cl_error_name(devices.error()) << "\n";
    return 1;
  }
  if (devices.value().empty()) {
    io.err << no_server_message(find_server_configuration(environment::current()));
    return 1;
  }

  auto ping = reinterpret_cast<clFerryPingServer_fn>(
      clGetExtensionFunctionAddressForPlatform(*platform, "clFerryPingServer"));

  // Group devices by server, in the order the platform lists them.
  std::vector<server_entry> servers;
  std::vector<cl_device_id> first_device;
  for (cl_device_id device : devices.value()) {
    auto address = device_string(device, CL_DEVICE_FERRY_SERVER_ADDRESS);
    std::string key = address ? address.value() : "(unknown server)";
    auto it = std::find_if(servers.begin(), servers.end(),
                           [&](const server_entry& s) { return s.address == key; });
    if (it == servers.end()) {
      servers.push_back(server_entry{key, std::nullopt, "", 0, {}});
      first_device.push_back(device);
      it = servers.end() - 1;
    }
    it->devices.push_back(describe(device, static_cast<cl_uint>(it->devices.size())));
  }
  for (std::size_t i = 0; i < servers.size(); ++i) {
    measure_round_trip(ping, first_device[i], servers[i]);
  }

  io.out << render_device_report(servers);
  return 0;
}

}  // namespace ferry::cli
