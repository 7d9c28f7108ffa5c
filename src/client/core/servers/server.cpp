#include "client/core/servers/server.hpp"

#include <algorithm>

#include "client/core/diagnostics.hpp"
#include "protocol/version.hpp"

namespace ferry::client {

connection* link_of(const context* c) {
  return c && !c->servers.empty() ? c->servers.front()->link.get() : nullptr;
}

connection* link_of(const program* p) { return p && !p->servers.empty() ? p->servers.front()->link.get() : nullptr; }

connection* link_of(const kernel* k) { return k && !k->servers.empty() ? k->servers.front()->link.get() : nullptr; }

std::vector<server*> servers_of(const std::vector<cl_device_id>& devices) {
  std::vector<server*> out;
  for (cl_device_id d : devices)
    if (std::find(out.begin(), out.end(), d->host) == out.end()) out.push_back(d->host);
  return out;
}

std::vector<uint32_t> device_indices_on(const server& s, const std::vector<cl_device_id>& devices) {
  std::vector<uint32_t> out;
  for (cl_device_id d : devices)
    if (d->host == &s) out.push_back(d->index);
  return out;
}

bool accepting(const server& s) {
  if (s.link && s.link->accepting()) return true;
  // Every caller answers CL_DEVICE_NOT_AVAILABLE for a server that takes no
  // work, or what its ended session's work fails with (unavailable_status).
  if (s.link && s.link->ended() && s.link->failure() == CL_OUT_OF_RESOURCES) {
    explain(CL_OUT_OF_RESOURCES, "server %s stopped the session's worker: it exceeded a limit (memory, open files)",
            s.address_text.c_str());
    return false;
  }
  explain(CL_DEVICE_NOT_AVAILABLE, "server %s unreachable: %s", s.address_text.c_str(),
          !s.link || s.link->ended() ? "its session ended" : "it is offline (FERRY_OUTAGE=fail-fast)");
  return false;
}

bool all_accepting(const std::vector<server*>& servers) {
  return std::all_of(servers.begin(), servers.end(), [](const server* s) { return accepting(*s); });
}

bool in_current_sessions(const context* c) {
  for (size_t i = 0; i < c->servers.size() && i < c->epochs.size(); ++i) {
    if (c->servers[i]->link->epoch() != c->epochs[i]) {
      if (c->servers[i]->link->failure_of(c->epochs[i]) == CL_OUT_OF_RESOURCES)
        explain(CL_OUT_OF_RESOURCES,
                "server %s stopped the worker of the session the context lives in: it exceeded a limit "
                "(memory, open files)",
                c->servers[i]->address_text.c_str());
      else
        explain(CL_DEVICE_NOT_AVAILABLE, "server %s lost the session the context lives in (it restarted)",
                c->servers[i]->address_text.c_str());
      return false;
    }
  }
  return true;
}

bool reachable(const context* c) { return all_accepting(c->servers) && in_current_sessions(c); }

cl_int unavailable_status(const context* c) {
  // A session that has not ended answers CL_DEVICE_NOT_AVAILABLE: offline
  // under FERRY_OUTAGE=fail-fast.
  for (size_t i = 0; i < c->servers.size() && i < c->epochs.size(); ++i) {
    const server& s = *c->servers[i];
    if (!s.link) continue;
    if (const cl_int failure = s.link->failure_of(c->epochs[i]); failure != CL_DEVICE_NOT_AVAILABLE) return failure;
  }
  return CL_DEVICE_NOT_AVAILABLE;
}

uint32_t peer_number(const server& to) {
  return static_cast<uint32_t>(to.slot + max_servers * (to.link->epoch() - 1));
}

namespace {

/// A new session on `from` knows no peers yet (peers_mutex held).
void forget_peers_of_older_sessions(server& from) {
  if (from.introduced_epoch == from.link->epoch()) return;
  from.introduced.clear();
  from.foreign_peers.clear();
  from.introduced_epoch = from.link->epoch();
}

}  // namespace

uint32_t introduce_foreign(server& from, const std::string& address, const protocol::session_token& session,
                           const protocol::session_token& key, const protocol::local_route& route) {
  std::lock_guard lock(from.peers_mutex);
  forget_peers_of_older_sessions(from);
  const auto [it, added] = from.foreign_peers.try_emplace(
      {address, session, key}, first_foreign_peer + static_cast<uint32_t>(from.foreign_peers.size()));
  if (!added) return it->second;
  const uint32_t number = it->second;
  from.link->post(protocol::add_peer{number, address, session, key});
  if (!route.unix_path.empty() && from.link->version() >= protocol::local_route_version)
    from.link->post(protocol::add_peer_route{number, route.unix_path, route.host});
  return number;
}

void introduce(server& from, server& to) {
  std::lock_guard lock(from.peers_mutex);
  forget_peers_of_older_sessions(from);
  const uint32_t number = peer_number(to);
  if (!from.introduced.insert(number).second) return;
  from.link->post(protocol::add_peer{number, to.peer_address, to.link->session(), to.link->peer_key()});
  // Older servers know no add_peer_route (they would end the session).
  if (!to.local_route.unix_path.empty() && from.link->version() >= protocol::local_route_version)
    from.link->post(protocol::add_peer_route{number, to.local_route.unix_path, to.local_route.host});
}

}  // namespace ferry::client
