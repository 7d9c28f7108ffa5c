// The OpenCL devices a context's graphs run on, chosen by FERRY_VX_DEVICES,
// with one in-order queue each and a cache of built programs.
//
// FERRY_VX_DEVICES is a comma-separated list of selectors PLATFORM[:WHICH]:
// PLATFORM is a case-insensitive part of a platform's name ("ferry",
// "portable", "nvidia"), WHICH a device index in that platform or "all" (the
// default). Every selected device must belong to one platform (one OpenCL
// context: buffers move between its devices, between servers on Ferry's).
// Unset: every device of the first platform. docs/graph.md, "Devices".
#pragma once

#include <CL/cl.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ferry::graph {

class device_set {
 public:
  struct device {
    cl_device_id id = nullptr;
    cl_command_queue queue = nullptr;
    std::string name;
  };

  /// Opens the devices `selection` names (null or empty: the default); null
  /// with `error` saying why when there are none.
  static std::unique_ptr<device_set> open(const char* selection, std::string& error);
  ~device_set();
  device_set(const device_set&) = delete;
  device_set& operator=(const device_set&) = delete;

  cl_context context() const { return context_; }
  const std::vector<device>& devices() const { return devices_; }
  const std::string& platform_name() const { return platform_name_; }

  /// The program built from `source` for every device (cached by source);
  /// null with the build log in `log` when it does not build.
  cl_program program(const std::string& source, std::string& log);

 private:
  device_set() = default;
  cl_context context_ = nullptr;
  std::vector<device> devices_;
  std::string platform_name_;
  std::mutex programs_mutex_;  // guards programs_
  std::map<std::string, cl_program> programs_;
};

/// Parses one FERRY_VX_DEVICES selector; false for a malformed one.
struct device_selector {
  std::string platform;  // lower case
  int index = -1;        // -1: all
};
bool parse_device_selection(const std::string& text, std::vector<device_selector>& out, std::string& error);

}  // namespace ferry::graph
