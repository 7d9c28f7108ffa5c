// A daemon in the test's own process on the host's OpenCL devices (PoCL in CI),
// through a given native api (a test's wrapper may make calls fail or behave
// like another platform), with one client session that holds context 1 on
// device 0 and in-order queue 2. Test-only (header-only, included by *.test.cpp).
#pragma once

#include <memory>
#include <string>

#include "server/daemon/server.hpp"
#include "server/native/api.hpp"
#include "server/testing/host_catalog.hpp"
#include "server/testing/test_client.hpp"

namespace ferry::server::testing {

struct in_process_daemon {
  std::unique_ptr<server> daemon;
  client session;

  /// Whether the host has a device to serve (tests skip otherwise).
  static bool possible() { return host_catalog() != nullptr; }

  /// Starts the daemon and opens the session; false with `why` on failure.
  bool start(const native::api& api, std::string& why) {
    server_config config;
    config.port = 0;
    config.handshake_timeout_s = 2;
    config.session_grace_s = 0;  // the session ends with its connection
    daemon = std::make_unique<server>(config, session_services{*host_catalog(), api, nullptr, nullptr, {}});
    if (!daemon->start(why)) return false;
    why = "cannot open the session";
    return session.open(daemon->port()) && session.send(protocol::create_context{1, {0}}) &&
           session.send(protocol::create_queue{2, 1, 0, 0});
  }
};

}  // namespace ferry::server::testing
