// How daemons of one host reach each other without TCP (docs/protocol.md,
// "Peer links"): what this daemon announces in local_route, and whether its
// peer links take the routes other daemons announce.
#pragma once

#include <string>

namespace ferry::server {

struct local_routes {
  /// This daemon's Unix socket (ferryd --unix, absolute); empty: none.
  std::string unix_path;
  /// This daemon's host identity (server/daemon/host_identity.hpp); empty:
  /// unknown, so no route is ever taken.
  std::string host;
  /// ferryd --peer-shared-memory: off announces no route and takes none.
  bool enabled = false;
};

}  // namespace ferry::server
