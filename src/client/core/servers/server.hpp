// A configured server as the client sees it: its address, its session
// (connection), its devices and the native platform's info.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "client/core/objects.hpp"
#include "client/core/result.hpp"
#include "client/net/connection.hpp"
#include "common/socket.hpp"

namespace ferry::client {

/// At most this many servers take part (a buffer's holders are a bit set).
inline constexpr size_t max_servers = 64;

struct server {
  endpoint address;
  std::string address_text;
  /// Where other servers reach this one (server_info.peer_address, else
  /// address_text).
  std::string peer_address;
  /// How a server on the same host reaches this one without TCP
  /// (local_route, protocol version 8; empty unix_path: no such way). Passed
  /// on with add_peer_route; the other server decides whether it shares the host.
  protocol::local_route local_route;
  /// This server's place among the connected servers: its bit in holder
  /// sets and its peer number in add_peer.
  uint32_t slot = 0;
  std::unique_ptr<connection> link;
  std::vector<device*> devices;
  std::vector<protocol::info_entry> platform_info;

  std::mutex peers_mutex;  // guards introduced, introduced_epoch, foreign_peers
  /// The peer numbers this server's session has been told about (add_peer),
  /// valid while its session is `introduced_epoch`.
  std::unordered_set<uint32_t> introduced;
  uint64_t introduced_epoch = 0;
  /// Sessions of other programs this server's session sends to
  /// (clEnqueueSendToPeerFERRY), by address, session and key (a ticket with a
  /// wrong key must not spoil the peer of the right one): their peer numbers,
  /// from first_foreign_peer on, valid while its session is `introduced_epoch`.
  std::map<std::tuple<std::string, protocol::session_token, protocol::session_token>, uint32_t> foreign_peers;

  uint64_t bit() const { return uint64_t{1} << slot; }
};

/// The connection of a context's first server (queries that any server of
/// the context can answer).
connection* link_of(const context* c);

/// The connection of the first server where a program (and its kernels)
/// exists.
connection* link_of(const program* p);

/// The connection of the first server where a kernel exists.
connection* link_of(const kernel* k);

/// Sends `request` to each of `servers` in turn (a round trip each), after
/// `adjust(request, server)` has fitted it to that server, and returns the
/// first failure (transport error, or a reply whose status is not
/// CL_SUCCESS), else the first server's reply. Objects the request creates
/// under client ids exist on the servers that succeeded; the caller releases
/// them on failure.
template <class Reply, class Request, class Adjust>
result<Reply> call_each(const std::vector<server*>& servers, Request& request, Adjust&& adjust) {
  result<Reply> first = fail(CL_DEVICE_NOT_AVAILABLE);
  for (size_t i = 0; i < servers.size(); ++i) {
    adjust(request, *servers[i]);
    auto reply = servers[i]->link->template call<Reply>(request);
    if (!reply || reply->status != CL_SUCCESS) return reply;
    if (i == 0) first = std::move(reply);
  }
  return first;
}
template <class Reply, class Request>
result<Reply> call_each(const std::vector<server*>& servers, Request& request) {
  return call_each<Reply>(servers, request, [](Request&, server&) {});
}

/// Posts `message` to each of `servers`.
template <class Message>
void post_each(const std::vector<server*>& servers, const Message& message) {
  for (server* s : servers) s->link->post(message);
}

/// The servers that hold some of `devices`, in the order of first appearance.
std::vector<server*> servers_of(const std::vector<cl_device_id>& devices);

/// The indices on `s` of those of `devices` that it hosts.
std::vector<uint32_t> device_indices_on(const server& s, const std::vector<cl_device_id>& devices);

/// Whether `s` takes new work (connection::accepting: connected, or
/// resuming within its grace period). When not, records why for
/// CL_DEVICE_NOT_AVAILABLE, or for what its ended session's work fails with
/// (diagnostics.hpp), as do the checks below.
bool accepting(const server& s);
/// Whether every server in `servers` takes new work.
bool all_accepting(const std::vector<server*>& servers);
/// Whether every server of `c` still holds the session the context lives in
/// (a restarted server lost it).
bool in_current_sessions(const context* c);
/// Whether every server of `c` takes new work and still holds the session
/// the context lives in.
bool reachable(const context* c);
/// What work in `c` fails with when reachable(c) is false: what the end of
/// the session it lives in on one of its servers named (CL_OUT_OF_RESOURCES
/// when that server stopped the session's worker for exceeding a limit,
/// docs/resilience.md), else CL_DEVICE_NOT_AVAILABLE.
cl_int unavailable_status(const context* c);

/// The number under which other servers know `to`'s current session
/// (add_peer.peer): its slot, made unique per session so that a server whose
/// session was renewed is introduced afresh rather than contradicting an
/// earlier add_peer.
uint32_t peer_number(const server& to);

/// Tells `from` how to reach this client's session on `to` (add_peer), once.
void introduce(server& from, server& to);

/// Peer numbers of other programs' sessions start here, far above peer_number's.
inline constexpr uint32_t first_foreign_peer = 0x80000000u;
/// Tells `from` how to reach another program's session (add_peer, and
/// add_peer_route when `route` names a socket), once per session of `from`;
/// returns its peer number there.
uint32_t introduce_foreign(server& from, const std::string& address, const protocol::session_token& session,
                           const protocol::session_token& key, const protocol::local_route& route);

}  // namespace ferry::client
