#include "server/native/catalog.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "common/cl_errors.hpp"
#include "common/log.hpp"
#include "server/native/handles.hpp"
#include "server/native/info.hpp"

namespace ferry::server::native {
namespace {

bool contains_ignoring_case(const std::string& haystack, const std::string& needle) {
  auto lower = [](unsigned char c) { return static_cast<char>(std::tolower(c)); };
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [&](char a, char b) { return lower(a) == lower(b); });
  return it != haystack.end();
}

// Observes what a platform does with callbacks of a failed event: one
// registered before the failure and one after it. A conforming platform calls
// both with the negative status.
struct callback_probe {
  std::mutex mutex;
  std::condition_variable changed;
  bool early_called = false;
  cl_int early_status = 1;
  bool late_called = false;
  cl_int late_status = 1;

  static void CL_CALLBACK early(cl_event, cl_int status, void* self) {
    auto* p = static_cast<callback_probe*>(self);
    std::lock_guard lock(p->mutex);
    p->early_called = true;
    p->early_status = status;
    p->changed.notify_all();
  }
  static void CL_CALLBACK late(cl_event, cl_int status, void* self) {
    auto* p = static_cast<callback_probe*>(self);
    std::lock_guard lock(p->mutex);
    p->late_called = true;
    p->late_status = status;
    p->changed.notify_all();
  }
};

callback_behaviour probe_callbacks(cl_platform_id platform, cl_device_id device) {
  cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform),
                                        0};
  cl_int error = CL_SUCCESS;
  unique_context context(clCreateContext(properties, 1, &device, nullptr, nullptr, &error));
  if (!context) return {};
  unique_event event(clCreateUserEvent(context.get(), &error));
  if (!event) return {};
  // Lives on the heap and is leaked if a callback is still outstanding at the
  // end, so that a late call never touches a dead stack frame.
  auto* probe = new callback_probe;
  clSetEventCallback(event.get(), CL_COMPLETE, &callback_probe::early, probe);
  clSetUserEventStatus(event.get(), CL_INVALID_OPERATION);
  clSetEventCallback(event.get(), CL_COMPLETE, &callback_probe::late, probe);
  callback_behaviour behaviour;
  bool settled;
  {
    std::unique_lock lock(probe->mutex);
    probe->changed.wait_for(lock, std::chrono::milliseconds(500),
                            [&] { return probe->early_called && probe->late_called; });
    behaviour.runs_on_failure = probe->early_called;
    behaviour.reports_failure = (!probe->early_called || probe->early_status < 0) &&
                                (!probe->late_called || probe->late_status < 0);
    settled = probe->early_called && probe->late_called;
  }
  event.reset();
  context.reset();
  if (settled) {
    delete probe;
  } else {
    // A callback may still come: park the probe where it stays valid (and reachable).
    static std::mutex parked_mutex;
    static auto* parked = new std::vector<callback_probe*>;
    std::lock_guard lock(parked_mutex);
    parked->push_back(probe);
  }
  return behaviour;
}

std::string filter_text(const catalog_filter& filter) {
  std::string text = "--device-type " + device_type_name(filter.type);
  if (!filter.platform.empty()) text += " --platform '" + filter.platform + "'";
  return text;
}

// Keeps the devices at the positions --device names, in its order.
bool select(const catalog_filter& filter, std::vector<device_entry>& devices, std::string& error) {
  std::vector<device_entry> chosen;
  for (uint32_t index : filter.indices) {
    if (index >= devices.size()) {
      error = "--device " + std::to_string(index) + ": only " + std::to_string(devices.size()) +
              (devices.size() == 1 ? " device matches " : " devices match ") + filter_text(filter) + ":";
      for (uint32_t i = 0; i < devices.size(); ++i) error += "\n  " + describe_device(i, devices[i]);
      return false;
    }
    chosen.push_back(devices[index]);
  }
  devices = std::move(chosen);
  return true;
}

}  // namespace

std::string describe_device(uint32_t index, const device_entry& device) {
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB", static_cast<double>(device.global_memory) / (1u << 30));
  return std::to_string(index) + ": " +
         device_type_name(device.type & ~static_cast<cl_device_type>(CL_DEVICE_TYPE_DEFAULT)) + ", " + device.name +
         ", " + memory + " (" + device.platform_name + ")";
}

std::string device_type_name(cl_device_type type) {
  if (type == CL_DEVICE_TYPE_ALL) return "all";
  std::string out;
  auto add = [&](cl_device_type bit, const char* name) {
    if (!(type & bit)) return;
    if (!out.empty()) out += '|';
    out += name;
  };
  add(CL_DEVICE_TYPE_CPU, "cpu");
  add(CL_DEVICE_TYPE_GPU, "gpu");
  add(CL_DEVICE_TYPE_ACCELERATOR, "accelerator");
  add(CL_DEVICE_TYPE_CUSTOM, "custom");
  add(CL_DEVICE_TYPE_DEFAULT, "default");
  return out.empty() ? "none" : out;
}

bool device_catalog::discover(const catalog_filter& filter, device_catalog& out, std::string& error) {
  out = device_catalog{};
  cl_uint count = 0;
  cl_int rc = clGetPlatformIDs(0, nullptr, &count);
  if (rc != CL_SUCCESS || count == 0) {
    error = "no OpenCL platform found (clGetPlatformIDs: " + cl_error_name(rc) +
            "); is an OpenCL driver installed and registered in /etc/OpenCL/vendors?";
    return false;
  }
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);

  std::string seen;  // "'name' (cpu: 1, gpu: 0)" per platform, for the error message
  for (cl_platform_id platform : platforms) {
    std::string name = platform_string(platform, CL_PLATFORM_NAME);
    if (!seen.empty()) seen += ", ";
    seen += "'" + name + "'";
    if (name == "Ferry") {
      seen += " (skipped: Ferry's own platform)";
      continue;
    }
    cl_uint device_count = 0;
    std::vector<cl_device_id> all;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count) == CL_SUCCESS && device_count) {
      all.resize(device_count);
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, device_count, all.data(), nullptr);
    }
    std::string types;
    for (cl_device_id d : all) {
      cl_device_type t = 0;
      clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, nullptr);
      if (!types.empty()) types += ", ";
      types += device_type_name(t & ~static_cast<cl_device_type>(CL_DEVICE_TYPE_DEFAULT));
    }
    seen += " (devices: " + (types.empty() ? std::string("none") : types) + ")";
    if (!filter.platform.empty() && !contains_ignoring_case(name, filter.platform)) continue;

    bool probed = false;
    callback_behaviour callbacks;
    for (cl_device_id d : all) {
      cl_device_type t = 0;
      clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, nullptr);
      if (filter.type != CL_DEVICE_TYPE_ALL && !(t & filter.type)) continue;
      if (!probed) {
        callbacks = probe_callbacks(platform, d);
        probed = true;
        if (!callbacks.conforming())
          FERRY_INFO("native",
                     "platform '%s': event callbacks of failed commands %s; the daemon checks their status itself",
                     name.c_str(), callbacks.runs_on_failure ? "report CL_COMPLETE" : "do not run");
      }
      device_entry entry;
      entry.id = d;
      entry.platform = platform;
      entry.name = device_string(d, CL_DEVICE_NAME);
      entry.platform_name = name;
      entry.type = t;
      clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof entry.global_memory, &entry.global_memory, nullptr);
      entry.callbacks = callbacks;
      entry.blocking_context_release = contains_ignoring_case(name, "NVIDIA");
      out.devices_.push_back(std::move(entry));
    }
  }
  if (out.devices_.empty()) {
    error = "no OpenCL device matches " + filter_text(filter) + "; platforms seen: " + seen +
            ". Is the device's OpenCL driver installed and registered (a .icd file in /etc/OpenCL/vendors, or "
            "OCL_ICD_FILENAMES; NVIDIA's is libnvidia-opencl.so.1)?";
    return false;
  }
  if (!filter.indices.empty() && !select(filter, out.devices_, error)) return false;
  out.info_.platform = collect_platform_info(out.devices_.front().platform);
  for (uint32_t i = 0; i < out.devices_.size(); ++i) {
    protocol::device_desc desc;
    desc.index = i;
    desc.info = collect_device_info(out.devices_[i].id);
    out.info_.devices.push_back(std::move(desc));
    FERRY_INFO("native", "device %u: %s (%s), %zu info params", i, out.devices_[i].name.c_str(),
               out.devices_[i].platform_name.c_str(), out.info_.devices.back().info.size());
  }
  return true;
}

void device_catalog::choose_completions(completion_mode mode) {
  std::string reported;
  for (device_entry& device : devices_) {
    const bool late_callbacks = contains_ignoring_case(device.platform_name, "NVIDIA");
    device.callbacks.polled =
        mode == completion_mode::polling || (mode == completion_mode::automatic && late_callbacks);
    if (device.platform_name == reported) continue;
    reported = device.platform_name;
    FERRY_INFO("native", "platform '%s': completions %s", device.platform_name.c_str(),
               !device.callbacks.polled ? "by event callbacks"
               : mode == completion_mode::polling
                   ? "polled (--completions polling)"
                   : "polled (its callbacks of commands longer than about 0.1 ms come up to 20 ms late)");
  }
}

device_catalog device_catalog::dry(uint32_t count) {
  device_catalog out;
  auto text = [](const char* s) { return protocol::bytes(s, s + std::strlen(s) + 1); };
  out.info_.platform.push_back({CL_PLATFORM_NAME, text("Dry")});
  for (uint32_t i = 0; i < count; ++i) {
    device_entry entry;
    // Fake, never dereferenced; only the dry API sees them.
    entry.id = reinterpret_cast<cl_device_id>(static_cast<uintptr_t>(0x1000 + 16 * i));
    entry.platform = reinterpret_cast<cl_platform_id>(static_cast<uintptr_t>(0x100));
    entry.name = "dry device " + std::to_string(i);
    entry.platform_name = "Dry";
    out.devices_.push_back(entry);
    out.info_.devices.push_back({i, {{CL_DEVICE_NAME, text(entry.name.c_str())}}});
  }
  return out;
}

}  // namespace ferry::server::native
