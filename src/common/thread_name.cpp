#include "common/thread_name.hpp"

#include <pthread.h>

namespace ferry {

std::string thread_name(std::string_view role, std::string_view peer) {
  if (peer.empty()) return std::string(role.substr(0, max_thread_name));
  if (role.size() + 1 >= max_thread_name) return std::string(role.substr(0, max_thread_name));
  const size_t room = max_thread_name - role.size() - 1;
  if (peer.size() > room) peer = peer.substr(peer.size() - room);
  std::string name(role);
  name += '@';
  name += peer;
  return name;
}

void name_this_thread(std::string_view name) {
  const std::string kept(name.substr(0, max_thread_name));
  pthread_setname_np(pthread_self(), kept.c_str());
}

}  // namespace ferry
