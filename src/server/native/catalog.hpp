// The native devices this daemon serves, chosen once at startup.
//
// Device indices on the wire are positions in this list. Ferry's own platform
// is never served: a libferry loaded into the daemon by the ICD loader stays
// inert (FERRY_IN_DAEMON=1) and is skipped by name here.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/messages.hpp"

namespace ferry::server::native {

/// Which devices to serve (the --platform and --device-type flags).
struct catalog_filter {
  /// Substring of CL_PLATFORM_NAME, compared without regard to case; empty: any.
  std::string platform;
  cl_device_type type = CL_DEVICE_TYPE_ALL;
  /// Positions among the devices that match the two above (--device); empty: all.
  /// A position past the last is an error that names the devices there are.
  std::vector<uint32_t> indices;
};

/// How a platform's clSetEventCallback callbacks treat failed commands. The
/// spec says they run, with the negative status. PoCL 3.1 runs none (and runs
/// those registered after the failure with CL_COMPLETE); NVIDIA runs them
/// with CL_COMPLETE. The session repairs both (server/transport/callback_pool.hpp).
struct callback_behaviour {
  /// Callbacks registered before a command fails still run.
  bool runs_on_failure = true;
  /// They receive the negative status (not CL_COMPLETE).
  bool reports_failure = true;
  bool conforming() const { return runs_on_failure && reports_failure; }
  /// Completions are learnt by polling the event's status instead
  /// (server/transport/completion_poller.hpp): the platform's callbacks come late.
  bool polled = false;
};

/// How the daemon learns that a native command has finished (--completions).
enum class completion_mode {
  automatic,  ///< polled on NVIDIA's OpenCL, callbacks elsewhere
  callbacks,  ///< clSetEventCallback everywhere
  polling,    ///< polled everywhere
};

struct device_entry {
  cl_device_id id = nullptr;
  cl_platform_id platform = nullptr;
  std::string name;
  std::string platform_name;
  cl_device_type type = 0;
  cl_ulong global_memory = 0;
  /// Measured once per platform at startup.
  callback_behaviour callbacks;
  /// clReleaseContext may block until another context is created (NVIDIA's
  /// OpenCL, driver 580): the daemon releases such contexts on a thread of
  /// its own (context_releaser.hpp).
  bool blocking_context_release = false;
};

class device_catalog {
 public:
  /// Enumerates the host's platforms and keeps the devices that match. With
  /// none, returns false and says what was seen and what was asked for.
  static bool discover(const catalog_filter& filter, device_catalog& out, std::string& error);
  /// `count` fake devices for the dry API (tests, fuzzing).
  static device_catalog dry(uint32_t count);

  uint32_t size() const { return static_cast<uint32_t>(devices_.size()); }
  /// The device at a wire index, or nullptr when out of range.
  const device_entry* find(uint32_t index) const {
    return index < devices_.size() ? &devices_[index] : nullptr;
  }
  const std::vector<device_entry>& devices() const { return devices_; }
  /// Decides, per platform, whether completions are polled. NVIDIA's OpenCL
  /// (driver 580) runs the callback of a command that takes longer than
  /// about 0.1 ms only on a 20 ms tick, while its event status is current:
  /// `automatic` polls there (docs/performance.md has the measurements).
  void choose_completions(completion_mode mode);
  /// The answer to get_server_info (request 0), collected once.
  const protocol::server_info& server_info() const { return info_; }

 private:
  std::vector<device_entry> devices_;
  protocol::server_info info_;
};

/// One line for --list-devices: "0: gpu, NVIDIA H100 80GB HBM3, 79.2 GiB (NVIDIA CUDA)".
std::string describe_device(uint32_t index, const device_entry& device);

/// "cpu", "gpu", "accelerator", "all" (or a list like "cpu|gpu").
std::string device_type_name(cl_device_type type);

}  // namespace ferry::server::native
