#include "server/daemon/host_identity.hpp"

#include <limits.h>
#include <unistd.h>

#include <fstream>

namespace ferry::server {

host_facts read_host_facts() {
  host_facts facts;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::getline(boot, facts.boot_id);
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) == 0) facts.hostname = name;
  char link[256] = {};
  const ssize_t n = ::readlink("/proc/self/ns/mnt", link, sizeof link - 1);
  if (n > 0) facts.mount_namespace.assign(link, static_cast<size_t>(n));
  return facts;
}

std::string host_identity(const host_facts& facts) {
  if (facts.boot_id.empty() || facts.mount_namespace.empty()) return {};
  // '/' appears in none of the parts' usual forms; the order is fixed, so
  // equal texts mean equal parts.
  return facts.boot_id + "/" + facts.hostname + "/" + facts.mount_namespace;
}

std::string this_host_identity() { return host_identity(read_host_facts()); }

bool same_host(const std::string& ours, const std::string& theirs) { return !ours.empty() && ours == theirs; }

}  // namespace ferry::server
