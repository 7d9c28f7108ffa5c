#include "server/peers/peer_directory.hpp"

namespace ferry::server {

peer_directory::add_result peer_directory::add(uint32_t index, const peer_target& target) {
  std::lock_guard lock(mutex_);
  auto it = links_.find(index);
  if (it != links_.end()) return it->second->target() == target ? add_result::same : add_result::conflict;
  links_.emplace(index, std::make_unique<peer_link>(target, api_, outbox_, stats_, label_, grace_, credentials_));
  return add_result::added;
}

bool peer_directory::known(uint32_t index) const {
  std::lock_guard lock(mutex_);
  return links_.count(index) != 0;
}

peer_link* peer_directory::find(uint32_t index) {
  std::lock_guard lock(mutex_);
  if (closed_) return nullptr;
  auto it = links_.find(index);
  // Links live until the directory closes, after every poster is done.
  return it == links_.end() ? nullptr : it->second.get();
}

void peer_directory::prefer_local(uint32_t index, std::string address) {
  if (peer_link* link = find(index)) link->prefer_local(std::move(address));
}

void peer_directory::start(uint32_t index) {
  if (peer_link* link = find(index)) link->start();
}

void peer_directory::post(uint32_t index, peer_status&& item) {
  if (peer_link* link = find(index)) return link->post(std::move(item));
  peer_link::fail_item(api_, outbox_, item, CL_DEVICE_NOT_AVAILABLE);
}

void peer_directory::post(uint32_t index, peer_migration&& item) {
  if (peer_link* link = find(index)) return link->post(std::move(item));
  peer_link::fail_item(api_, outbox_, item, CL_DEVICE_NOT_AVAILABLE);
}

void peer_directory::interrupt() {
  std::lock_guard lock(mutex_);
  for (auto& [index, link] : links_) link->interrupt();
}

void peer_directory::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  // Links are not removed from the map: a poster that found one before
  // closed_ still uses it (post fails the item once the link is closed).
  std::lock_guard lock(mutex_);
  for (auto& [index, link] : links_) link->close();
}

}  // namespace ferry::server
