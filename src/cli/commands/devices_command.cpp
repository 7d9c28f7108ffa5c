#include "cli/commands/devices_command.hpp"

#include <CL/cl_ext_ferry.h>

#include <ostream>

#include "cli/args.hpp"
#include "cli/reports/cl_query.hpp"
#include "cli/reports/cuda_query.hpp"
#include "cli/setup/install_layout.hpp"
#include "cli/reports/device_report.hpp"
#include "cli/setup/ferry_servers.hpp"
#include "cli/reports/format.hpp"
#include "cli/process/round_trip.hpp"
#include "common/cl_errors.hpp"

namespace ferry::cli {

namespace {

constexpr int ping_count = 20;

constexpr option_spec devices_options[] = {
    servers_option,
    {"help", 'h', option_kind::flag, "", "Show this help"},
};

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
         "and the measured round trip to it (median of 20 pings), then the servers' CUDA\n"
         "devices (those 'ferry run --cuda' gives a program).\n"
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
  auto ferry = open_ferry_servers("devices", parsed.value(), io);
  if (!ferry) return ferry.error();

  auto ping = reinterpret_cast<clFerryPingServer_fn>(
      clGetExtensionFunctionAddressForPlatform(ferry.value().platform, "clFerryPingServer"));

  std::vector<server_entry> servers;
  for (const server_devices& server : ferry.value().servers) {
    server_entry& entry = servers.emplace_back(server_entry{server.address, std::nullopt, "", 0, {}});
    for (cl_device_id device : server.devices) {
      entry.devices.push_back(describe(device, static_cast<cl_uint>(entry.devices.size())));
    }
    measure_round_trip(ping, server.devices.front(), entry);
  }

  io.out << render_device_report(servers);
  // The servers' CUDA devices, as Ferry's libcuda.so.1 sees them.
  if (auto layout = install_layout::of_running_executable())
    io.out << render_cuda_report(query_cuda_devices(layout.value().cuda_library_dir() / "libcuda.so.1"));
  return 0;
}

}  // namespace ferry::cli
