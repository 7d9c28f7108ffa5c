// A configured server as the client sees it: its address, its session
// (connection), its devices and the native platform's info.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client/net/connection.hpp"
#include "common/socket.hpp"

namespace ferry::client {

struct server {
  endpoint address;
  std::string address_text;
  std::unique_ptr<connection> link;
  std::vector<device*> devices;
  std::vector<protocol::info_entry> platform_info;
};

/// The connection that serves an object (through its context).
connection* link_of(const context* c);

}  // namespace ferry::client
