// Whether two daemons share a host, so that one can reach the other's Unix
// socket and share memory with it (peer links, docs/protocol.md).
//
// A hostname alone is not enough: containers and cloned VMs repeat them. The
// kernel's boot id tells one running kernel from any other, and the mount
// namespace tells whether a path names the same file for both daemons (two
// containers on one kernel see different /tmp). Equal identities mean the
// same kernel, hostname and filesystem view; the link still falls back to
// TCP when the socket cannot be reached after all.
#pragma once

#include <string>

namespace ferry::server {

/// The parts an identity is made of, as read from the system.
struct host_facts {
  std::string boot_id;          // /proc/sys/kernel/random/boot_id
  std::string hostname;         // gethostname
  std::string mount_namespace;  // readlink /proc/self/ns/mnt, e.g. "mnt:[4026531841]"
};

/// This process's facts; a part that cannot be read stays empty.
host_facts read_host_facts();

/// The identity text of `facts`; empty when the boot id or the mount
/// namespace is unknown: such a daemon is on no host that another can match.
std::string host_identity(const host_facts& facts);

/// host_identity(read_host_facts()).
std::string this_host_identity();

/// Whether a daemon announcing `theirs` shares this host (`ours`): both known
/// and equal.
bool same_host(const std::string& ours, const std::string& theirs);

}  // namespace ferry::server
