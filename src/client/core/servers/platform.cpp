#include "client/core/servers/platform.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "client/core/servers/availability.hpp"
#include "client/core/servers/config.hpp"
#include "client/core/servers/device_capabilities.hpp"
#include "common/log.hpp"
#include "common/tls.hpp"
#include "protocol/auth.hpp"
#include "protocol/outgoing.hpp"
#include "protocol/version.hpp"

namespace ferry::client {
namespace {

struct platform_state {
  platform the_platform;
  std::vector<std::unique_ptr<server>> servers;
};

void decode_device_fields(device& d) {
  d.type = device_info_as<cl_device_type>(d, CL_DEVICE_TYPE);
  d.max_mem_alloc_size = device_info_as<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  d.mem_base_addr_align_bits = device_info_as<cl_uint>(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
  d.max_work_group_size = device_info_as<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  d.max_work_item_dimensions = device_info_as<cl_uint>(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
  auto it = d.info.find(CL_DEVICE_MAX_WORK_ITEM_SIZES);
  if (it != d.info.end())
    std::memcpy(d.max_work_item_sizes.data(), it->second.data(),
                std::min(it->second.size(), sizeof(size_t) * 3));
  d.queue_properties = device_info_as<cl_command_queue_properties>(d, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES);
  if (d.queue_properties == 0)
    d.queue_properties = device_info_as<cl_command_queue_properties>(d, CL_DEVICE_QUEUE_PROPERTIES);
  d.svm_capabilities = device_info_as<cl_device_svm_capabilities>(d, CL_DEVICE_SVM_CAPABILITIES);
}

// Connects to one server and fetches its devices; nullptr (logged) on failure.
std::unique_ptr<server> connect_server(const std::string& text, const protocol::credentials& who) {
  auto s = std::make_unique<server>();
  s->address_text = text;
  std::string error;
  if (!parse_endpoint(text, protocol::default_port, s->address, error)) {
    FERRY_WARN("config", "ignoring server '%s': %s", text.c_str(), error.c_str());
    return nullptr;
  }
  s->link = connection::open(s->address, who, error);
  if (!s->link) {
    FERRY_WARN("net", "server %s is not available: %s; its devices are left out", text.c_str(), error.c_str());
    return nullptr;
  }
  protocol::get_server_info request;
  auto info = s->link->call<protocol::server_info>(request);
  if (!info) {
    FERRY_WARN("net", "server %s did not describe its devices; its devices are left out", text.c_str());
    return nullptr;
  }
  s->platform_info = std::move(info->platform);
  s->peer_address = info->peer_address.empty() ? s->address.to_string() : info->peer_address;
  if (s->link->version() >= protocol::local_route_version) {
    // Only asked of servers that answer it; without an answer peer links use TCP.
    protocol::get_local_route ask;
    if (auto route = s->link->call<protocol::local_route>(ask)) s->local_route = std::move(*route);
  }
  for (auto& desc : info->devices) {
    auto* d = new device();
    d->host = s.get();
    d->index = desc.index;
    for (auto& entry : desc.info) d->info[entry.param] = std::move(entry.value);
    restrict_to_served_capabilities(*d);
    decode_device_fields(*d);
    s->devices.push_back(d);
  }
  s->link->set_availability_listener([target = s.get()](bool available) { announce_availability(*target, available); });
  FERRY_INFO("net", "server %s: %zu device(s)", text.c_str(), s->devices.size());
  return s;
}

platform_state& state();

void say_goodbye_to_servers() {
  for (const auto& s : state().servers) s->link->say_goodbye();
}

platform_state& state() {
  static platform_state* instance = [] {
    auto* st = new platform_state;  // lives as long as the process
    if (std::getenv("FERRY_IN_DAEMON")) return st;  // inside ferryd: never connect to ourselves
    server_list list = configured_servers();
    if (list.addresses.empty()) {
      FERRY_WARN("config",
                 "no Ferry server configured (set FERRY_SERVERS=host:port or write 'server host:port' "
                 "to ~/.config/ferry/config); the Ferry platform has no devices");
      return st;
    }
    protocol::credentials who;
    std::string error;
    if (!load_credentials(who, error)) {
      FERRY_ERROR("config", "%s; the Ferry platform has no devices", error.c_str());
      return st;
    }
    // Connect to all servers at once so one slow address does not delay the rest.
    std::vector<std::unique_ptr<server>> results(list.addresses.size());
    std::vector<std::thread> workers;
    for (size_t i = 0; i < list.addresses.size(); ++i)
      workers.emplace_back([&, i] { results[i] = connect_server(list.addresses[i], who); });
    for (auto& w : workers) w.join();
    for (auto& s : results) {
      if (!s) continue;
      if (st->servers.size() == max_servers) {
        FERRY_WARN("config", "more than %zu servers answered; %s and later ones are left out", max_servers,
                   s->address_text.c_str());
        break;
      }
      s->slot = static_cast<uint32_t>(st->servers.size());
      for (device* d : s->devices) st->the_platform.devices.push_back(d);
      st->servers.push_back(std::move(s));
    }
    // A process that ends frees its sessions at once; without goodbye each
    // server would keep them for a resumption until the grace period passed.
    if (!st->servers.empty()) std::atexit(say_goodbye_to_servers);
    return st;
  }();
  return *instance;
}

}  // namespace

platform& the_platform() { return state().the_platform; }

const std::vector<std::unique_ptr<server>>& connected_servers() { return state().servers; }

}  // namespace ferry::client
