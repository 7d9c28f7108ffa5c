#include "cli/setup/ferry_servers.hpp"

#include <CL/cl_ext_ferry.h>

#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "cli/reports/cl_query.hpp"
#include "cli/reports/device_report.hpp"
#include "cli/reports/format.hpp"
#include "cli/setup/icd_loader_env.hpp"
#include "cli/setup/install_layout.hpp"
#include "common/cl_errors.hpp"

namespace ferry::cli {

namespace {

std::optional<cl_platform_id> find_ferry_platform() {
  auto platforms = platform_ids();
  if (!platforms) return std::nullopt;
  for (cl_platform_id p : platforms.value()) {
    auto name = platform_string(p, CL_PLATFORM_NAME);
    if (name && name.value() == CL_FERRY_PLATFORM_NAME) return p;
  }
  return std::nullopt;
}

}  // namespace

outcome<ferry_servers, int> open_ferry_servers(std::string_view command, const parsed_args& options,
                                               const command_io& io) {
  const std::string name = "ferry " + std::string(command);
  if (auto servers = options.value("servers")) {
    if (servers->empty()) return failure(usage_error(io, command, "--servers needs a non-empty list"));
    ::setenv("FERRY_SERVERS", servers->c_str(), 1);
  }

  // The loader reads these on the first OpenCL call, so they go in before it.
  auto layout = install_layout::of_running_executable();
  if (!layout) {
    io.err << name << ": " << layout.error() << "\n";
    return failure(1);
  }
  set_in_process(icd_loader_variables(environment::current(), layout.value()));

  auto platform = find_ferry_platform();
  if (!platform) {
    const char* vendors = std::getenv("OCL_ICD_VENDORS");
    io.err << name << ": the OpenCL loader offers no \"" << CL_FERRY_PLATFORM_NAME << "\" platform.\n";
    if (vendors == nullptr) {
      io.err << "OCL_ICD_VENDORS is unset (FERRY_KEEP_ICD_ENV=1?); point it at Ferry's ferry.icd.\n";
    } else if (std::error_code ec; !std::filesystem::exists(vendors, ec)) {
      io.err << vendors << " does not exist: is libferry built?\n";
    } else {
      io.err << "The loader was pointed at " << vendors << "; is libferry built and loadable?\n";
    }
    return failure(1);
  }
  auto devices = device_ids(*platform);
  if (!devices) {
    io.err << name << ": clGetDeviceIDs failed: " << cl_error_name(devices.error()) << "\n";
    return failure(1);
  }
  if (devices.value().empty()) {
    io.err << no_server_message(find_server_configuration(environment::current()));
    return failure(1);
  }
  return ferry_servers{*platform, group_by_server(devices.value(), [](cl_device_id device) {
                         auto address = device_string(device, CL_DEVICE_FERRY_SERVER_ADDRESS);
                         return address ? std::optional<std::string>(address.value()) : std::nullopt;
                       })};
}

}  // namespace ferry::cli
