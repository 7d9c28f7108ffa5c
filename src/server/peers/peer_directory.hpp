// A session's peers: the client's number for each other server (add_peer)
// -> where its session there is, and the outgoing link to it.
//
// The control reader adds peers; native callbacks post items to links. Links
// are made with their peer (no thread, no connection until first used) and
// closed with the session.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "server/peers/peer_link.hpp"

namespace ferry::server {

class peer_directory {
 public:
  /// `grace`: how long each link tries to get a lost connection back.
  /// `credentials`: what links show other daemons (null: nothing, plain).
  peer_directory(const native::api& api, control_outbox& outbox, link_stats* stats, std::string label,
                 std::chrono::milliseconds grace = {},
                 std::shared_ptr<const protocol::credentials> credentials = {})
      : api_(api),
        outbox_(outbox),
        stats_(stats),
        label_(std::move(label)),
        grace_(grace),
        credentials_(std::move(credentials)) {}
  ~peer_directory() { close(); }
  peer_directory(const peer_directory&) = delete;
  peer_directory& operator=(const peer_directory&) = delete;

  enum class add_result { added, same, conflict };
  /// add_peer: the same values again are harmless, others for a known
  /// index conflict.
  add_result add(uint32_t index, const peer_target& target);
  bool known(uint32_t index) const;
  /// add_peer_route: the peer shares this host; its link tries `address`
  /// ("unix:/path") first. An unknown index changes nothing.
  void prefer_local(uint32_t index, std::string address);
  /// Starts the link of a known peer (see peer_link::start).
  void start(uint32_t index);

  /// Queue an item on the link of `index` (any thread). An unknown index
  /// or a closed directory fails the item at once.
  void post(uint32_t index, peer_status&& item);
  void post(uint32_t index, peer_migration&& item);

  /// Unblocks every link's writes (session closing; any thread).
  void interrupt();
  /// Closes every link, failing what they still hold. Idempotent.
  void close();

 private:
  peer_link* find(uint32_t index);

  const native::api& api_;
  control_outbox& outbox_;
  link_stats* stats_;
  const std::string label_;
  const std::chrono::milliseconds grace_;
  const std::shared_ptr<const protocol::credentials> credentials_;
  mutable std::mutex mutex_;  // guards links_ and closed_ (links guard themselves)
  std::map<uint32_t, std::unique_ptr<peer_link>> links_;
  bool closed_ = false;
};

}  // namespace ferry::server
