#include "server/session/session_core.hpp"

#include <cstring>

namespace ferry::server {

namespace {
uint64_t key_of(const protocol::session_token& id) {
  uint64_t key;
  std::memcpy(&key, id.data(), sizeof key);
  return key | 1;  // never 0, the "nobody" key
}
}  // namespace

session_core::session_core(const protocol::session_token& session, const native::api& native,
                           printf_capture* capture, link_stats* link_counters, std::string address,
                           std::chrono::milliseconds grace, const session_limits& limits,
                           std::shared_ptr<const protocol::credentials> credentials)
    : id(session),
      label(session_label(session)),
      key(key_of(session)),
      api(native),
      printf(capture),
      links(link_counters),
      peer_address(std::move(address)),
      quota(limits, label),
      outbox(native),
      bulk(native),
      transfers(native, &quota),
      imports(native),
      peers(native, outbox, link_counters, label, grace, std::move(credentials)) {}

}  // namespace ferry::server
