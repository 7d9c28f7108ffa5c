// What `ferry devices` and `ferry counters` share: the --servers option, the loader
// pointed at Ferry, Ferry's platform, and its devices grouped by server.
#pragma once

#include <CL/cl.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/args.hpp"
#include "cli/command.hpp"
#include "cli/outcome.hpp"

namespace ferry::cli {

/// The --servers option, for a command's option table.
inline constexpr option_spec servers_option = {
    "servers", 0, option_kind::value, "LIST",
    "Servers to ask (host[:port],...; sets FERRY_SERVERS for this run)"};

/// One server and its devices, in the order the platform lists them.
struct server_devices {
  std::string address;  ///< CL_DEVICE_FERRY_SERVER_ADDRESS, or "(unknown server)"
  std::vector<cl_device_id> devices;
};

struct ferry_servers {
  cl_platform_id platform = nullptr;
  std::vector<server_devices> servers;  ///< never empty
};

/// Devices grouped by server address, servers in the order of their first device.
/// `address_of` returns the server of a device, nullopt when it cannot tell.
template <class AddressOf>
std::vector<server_devices> group_by_server(const std::vector<cl_device_id>& devices, AddressOf address_of) {
  std::vector<server_devices> servers;
  for (cl_device_id device : devices) {
    std::optional<std::string> address = address_of(device);
    std::string key = address ? *address : "(unknown server)";
    auto it = servers.begin();
    while (it != servers.end() && it->address != key) ++it;
    if (it == servers.end()) it = servers.insert(servers.end(), server_devices{key, {}});
    it->devices.push_back(device);
  }
  return servers;
}

/// Sets FERRY_SERVERS from --servers (a usage error when it is empty), points the loader
/// at Ferry, finds Ferry's platform and its servers. On failure it prints why to io.err
/// ("ferry COMMAND: ...") and the error is the exit status: 2 for wrong usage, 1 when
/// there is no Ferry platform or no server answered.
outcome<ferry_servers, int> open_ferry_servers(std::string_view command, const parsed_args& options,
                                               const command_io& io);

}  // namespace ferry::cli
