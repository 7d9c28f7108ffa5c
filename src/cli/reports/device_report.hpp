// The text `ferry devices` prints, built from what it measured.
#pragma once

#include <CL/cl.h>

#include <optional>
#include <string>
#include <vector>

#include "cli/setup/server_config.hpp"

namespace ferry::cli {

struct device_entry {
  cl_uint index = 0;  ///< among the server's devices
  std::string name;
  cl_device_type type = 0;
  cl_uint compute_units = 0;
  cl_ulong global_memory = 0;
  bool available = true;
};

struct server_entry {
  std::string address;
  std::optional<double> round_trip_ns;  ///< median; nothing when it could not be measured
  std::string round_trip_problem;       ///< why not, when round_trip_ns is empty
  int pings = 0;
  std::vector<device_entry> devices;
};

/// One block per server (address and round trip), one line pair per device, and a count.
std::string render_device_report(const std::vector<server_entry>& servers);

/// What to tell a user for whom no server answered, given where servers came from.
std::string no_server_message(const server_configuration& config);

}  // namespace ferry::cli
