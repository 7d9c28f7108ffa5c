#include "graph/runtime/device_set.hpp"

#include <algorithm>
#include <cstring>
#include <cctype>

namespace ferry::graph {
namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

std::string platform_info(cl_platform_id platform, cl_platform_info what) {
  size_t size = 0;
  if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string text(size, '\0');
  if (clGetPlatformInfo(platform, what, size, text.data(), nullptr) != CL_SUCCESS) return "";
  text.resize(std::strlen(text.c_str()));
  return text;
}

std::string device_name(cl_device_id device) {
  size_t size = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_NAME, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "?";
  std::string text(size, '\0');
  if (clGetDeviceInfo(device, CL_DEVICE_NAME, size, text.data(), nullptr) != CL_SUCCESS) return "?";
  text.resize(std::strlen(text.c_str()));
  return text;
}

std::vector<cl_device_id> platform_devices(cl_platform_id platform) {
  cl_uint count = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_device_id> devices(count);
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr) != CL_SUCCESS) return {};
  return devices;
}

}  // namespace

bool parse_device_selection(const std::string& text, std::vector<device_selector>& out, std::string& error) {
  out.clear();
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) {
      error = "an empty selector (expected PLATFORM[:INDEX|:all])";
      return false;
    }
    device_selector selector;
    size_t colon = item.rfind(':');
    std::string which = "all";
    if (colon != std::string::npos) {
      which = lower(trim(item.substr(colon + 1)));
      item = trim(item.substr(0, colon));
    }
    if (item.empty()) {
      error = "a selector without a platform name (expected PLATFORM[:INDEX|:all])";
      return false;
    }
    selector.platform = lower(item);
    if (which != "all") {
      if (which.empty() || which.size() > 4 || !std::all_of(which.begin(), which.end(), ::isdigit)) {
        error = "'" + which + "' is neither a device index nor 'all'";
        return false;
      }
      selector.index = std::stoi(which);
    }
    out.push_back(selector);
  }
  return true;
}

std::unique_ptr<device_set> device_set::open(const char* selection, std::string& error) {
  std::vector<device_selector> selectors;
  if (selection != nullptr && *selection != '\0' && !parse_device_selection(selection, selectors, error)) {
    error = "FERRY_VX_DEVICES='" + std::string(selection) + "': " + error;
    return nullptr;
  }
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
    error = "no OpenCL platform is installed";
    return nullptr;
  }
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);

  cl_platform_id chosen = nullptr;
  std::vector<cl_device_id> devices;
  if (selectors.empty()) {
    chosen = platforms[0];
    devices = platform_devices(chosen);
  } else {
    for (const device_selector& selector : selectors) {
      cl_platform_id match = nullptr;
      for (cl_platform_id platform : platforms)
        if (lower(platform_info(platform, CL_PLATFORM_NAME)).find(selector.platform) != std::string::npos) {
          match = platform;
          break;
        }
      if (match == nullptr) {
        error = "FERRY_VX_DEVICES: no OpenCL platform's name contains '" + selector.platform + "'";
        return nullptr;
      }
      if (chosen != nullptr && match != chosen) {
        error = "FERRY_VX_DEVICES: the devices must belong to one platform ('" + platform_info(chosen, CL_PLATFORM_NAME) +
                "' and '" + platform_info(match, CL_PLATFORM_NAME) + "' named)";
        return nullptr;
      }
      chosen = match;
      std::vector<cl_device_id> all = platform_devices(match);
      if (selector.index >= 0) {
        if (static_cast<size_t>(selector.index) >= all.size()) {
          error = "FERRY_VX_DEVICES: platform '" + platform_info(match, CL_PLATFORM_NAME) + "' has " +
                  std::to_string(all.size()) + " device(s); there is no device " + std::to_string(selector.index);
          return nullptr;
        }
        all = {all[static_cast<size_t>(selector.index)]};
      }
      for (cl_device_id d : all)
        if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
    }
  }
  if (devices.empty()) {
    error = "OpenCL platform '" + platform_info(chosen, CL_PLATFORM_NAME) + "' has no devices";
    return nullptr;
  }

  std::unique_ptr<device_set> set(new device_set);
  set->platform_name_ = platform_info(chosen, CL_PLATFORM_NAME);
  cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(chosen), 0};
  cl_int status = CL_SUCCESS;
  set->context_ = clCreateContext(properties, static_cast<cl_uint>(devices.size()), devices.data(), nullptr, nullptr,
                                  &status);
  if (set->context_ == nullptr) {
    error = "clCreateContext on '" + set->platform_name_ + "' failed (" + std::to_string(status) + ")";
    return nullptr;
  }
  for (cl_device_id id : devices) {
    device d;
    d.id = id;
    d.name = device_name(id);
    d.queue = clCreateCommandQueue(set->context_, id, 0, &status);
    if (d.queue == nullptr) {
      error = "clCreateCommandQueue for '" + d.name + "' failed (" + std::to_string(status) + ")";
      return nullptr;
    }
    set->devices_.push_back(d);
  }
  return set;
}

device_set::~device_set() {
  for (device& d : devices_) {
    clFinish(d.queue);
    clReleaseCommandQueue(d.queue);
  }
  for (auto& [source, program] : programs_) clReleaseProgram(program);
  if (context_ != nullptr) clReleaseContext(context_);
}

cl_program device_set::program(const std::string& source, std::string& log) {
  std::lock_guard lock(programs_mutex_);
  auto found = programs_.find(source);
  if (found != programs_.end()) return found->second;
  const char* text = source.c_str();
  size_t length = source.size();
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context_, 1, &text, &length, &status);
  if (program == nullptr) {
    log = "clCreateProgramWithSource failed (" + std::to_string(status) + ")";
    return nullptr;
  }
  std::vector<cl_device_id> ids;
  for (const device& d : devices_) ids.push_back(d.id);
  status = clBuildProgram(program, static_cast<cl_uint>(ids.size()), ids.data(), "-cl-std=CL1.2", nullptr, nullptr);
  if (status != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(program, ids[0], CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string text_log(size, '\0');
    clGetProgramBuildInfo(program, ids[0], CL_PROGRAM_BUILD_LOG, size, text_log.data(), nullptr);
    log = "clBuildProgram failed (" + std::to_string(status) + "): " + text_log;
    clReleaseProgram(program);
    return nullptr;
  }
  programs_.emplace(source, program);
  return program;
}

}  // namespace ferry::graph
