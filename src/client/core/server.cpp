#include "client/core/server.hpp"

#include <algorithm>

namespace ferry::client {

connection* link_of(const context* c) {
  return c && !c->servers.empty() ? c->servers.front()->link.get() : nullptr;
}

connection* link_of(const program* p) { return p && !p->servers.empty() ? p->servers.front()->link.get() : nullptr; }

std::vector<server*> servers_of(const std::vector<cl_device_id>& devices) {
  std::vector<server*> out;
  for (cl_device_id d : devices)
    if (std::find(out.begin(), out.end(), d->host) == out.end()) out.push_back(d->host);
  return out;
}

bool all_alive(const std::vector<server*>& servers) {
  return std::all_of(servers.begin(), servers.end(), [](const server* s) { return s->link && s->link->alive(); });
}

void introduce(server& from, server& to) {
  std::lock_guard lock(from.peers_mutex);
  if (from.introduced & to.bit()) return;
  from.link->post(protocol::add_peer{to.slot, to.peer_address, to.link->session(), to.link->peer_key()});
  from.introduced |= to.bit();
}

}  // namespace ferry::client
