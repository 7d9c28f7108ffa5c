#include "server/worker/confinement.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>

#include "common/socket.hpp"

namespace ferry::server::worker {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// ---------------------------------------------------------------------------
// Landlock, from the kernel's UAPI documentation. Defined here rather than
// taken from <linux/landlock.h> because build hosts carry older headers than
// the kernels they run on (Debian 12's stop at ABI 2).

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

struct landlock_ruleset_attr_v1 {
  uint64_t handled_access_fs;
};

struct landlock_path_beneath {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

constexpr uint32_t landlock_create_ruleset_version = 1u << 0;
constexpr int landlock_rule_path_beneath = 1;

namespace fs_access {
constexpr uint64_t execute = 1ull << 0;
constexpr uint64_t write_file = 1ull << 1;
constexpr uint64_t read_file = 1ull << 2;
constexpr uint64_t read_dir = 1ull << 3;
constexpr uint64_t remove_dir = 1ull << 4;
constexpr uint64_t remove_file = 1ull << 5;
constexpr uint64_t make_char = 1ull << 6;
constexpr uint64_t make_dir = 1ull << 7;
constexpr uint64_t make_reg = 1ull << 8;
constexpr uint64_t make_sock = 1ull << 9;
constexpr uint64_t make_fifo = 1ull << 10;
constexpr uint64_t make_block = 1ull << 11;
constexpr uint64_t make_sym = 1ull << 12;
constexpr uint64_t refer = 1ull << 13;      // ABI 2
constexpr uint64_t truncate = 1ull << 14;   // ABI 3
constexpr uint64_t ioctl_dev = 1ull << 15;  // ABI 5

// Rights about a file's contents. The only ones a rule on a non-directory may
// carry; on a directory they hold for every file beneath it.
constexpr uint64_t file_rights = execute | write_file | read_file | truncate | ioctl_dev;
// Rights about a directory's entries (and READ_DIR, listing it). Granting them
// on an ancestor of a forbidden file opens none of its contents.
constexpr uint64_t directory_rights = read_dir | remove_dir | remove_file | make_char | make_dir |
                                      make_reg | make_sock | make_fifo | make_block | make_sym |
                                      refer;
}  // namespace fs_access

// The filesystem rights of an ABI, as far as this code knows them. ABI 4 added
// network rights, 6 and 7 scopes and logging: no filesystem right since 5.
uint64_t handled_fs_rights(int abi) {
  uint64_t rights = (fs_access::make_sym << 1) - 1;  // ABI 1: EXECUTE .. MAKE_SYM
  if (abi >= 2) rights |= fs_access::refer;
  if (abi >= 3) rights |= fs_access::truncate;
  if (abi >= 5) rights |= fs_access::ioctl_dev;
  return rights;
}

bool add_path_rule(int ruleset, int fd, uint64_t rights, const std::string& path, std::string& error) {
  landlock_path_beneath rule{rights, fd};
  if (::syscall(SYS_landlock_add_rule, ruleset, landlock_rule_path_beneath, &rule, 0) != 0) {
    error = "landlock_add_rule(" + path + "): " + errno_text(errno);
    return false;
  }
  return true;
}

std::string join(const std::string& dir, const char* name) {
  return dir == "/" ? "/" + std::string(name) : dir + "/" + name;
}

using inode_id = std::pair<dev_t, ino_t>;

// Grants D's own directory rights, and every entry of D that leads to no
// forbidden file all it can hold.
bool add_ancestor_rules(int ruleset, const std::string& dir, uint64_t handled,
                        const std::set<std::string>& skip_paths, const std::set<inode_id>& skip_inodes,
                        std::vector<std::string>& warnings, std::string& error) {
  unique_fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd.valid()) {
    error = "cannot open " + dir + " to build the Landlock rules: " + errno_text(errno);
    return false;
  }
  if (!add_path_rule(ruleset, dir_fd.get(), handled & fs_access::directory_rights, dir, error))
    return false;

  int list_fd = ::fcntl(dir_fd.get(), F_DUPFD_CLOEXEC, 0);
  DIR* listing = list_fd >= 0 ? ::fdopendir(list_fd) : nullptr;
  if (listing == nullptr) {
    error = "cannot list " + dir + " to build the Landlock rules: " + errno_text(errno);
    if (list_fd >= 0) ::close(list_fd);
    return false;
  }
  bool ok = true;
  for (;;) {
    errno = 0;  // readdir's only way to tell the end from an error
    const dirent* entry = ::readdir(listing);
    if (entry == nullptr) {
      if (errno != 0) {
        error = "cannot list " + dir + ": " + errno_text(errno);
        ok = false;
      }
      break;
    }
    const char* name = entry->d_name;
    if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
    std::string path = join(dir, name);
    if (skip_paths.count(path) != 0) continue;
    unique_fd entry_fd(::openat(dir_fd.get(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!entry_fd.valid() || ::fstat(entry_fd.get(), &st) != 0) {
      if (errno == ENOENT) continue;  // removed since the listing: nothing to grant
      if (errno == EACCES || errno == EPERM) {
        // Say, a FUSE mount root may not enter. Without a rule the entry is
        // merely out of the worker's reach: safe, so no reason to fail.
        warnings.push_back(path + " stays closed to the worker: cannot open it to grant it (" +
                           errno_text(errno) + ")");
        continue;
      }
      error = "cannot open " + path + " to build the Landlock rules: " + errno_text(errno);
      ok = false;
      break;
    }
    // A link elsewhere is checked where it leads; a second name of a forbidden
    // inode must not lend it its rule (rules bind inodes, not names).
    if (S_ISLNK(st.st_mode) || skip_inodes.count({st.st_dev, st.st_ino}) != 0) continue;
    uint64_t rights = S_ISDIR(st.st_mode) ? handled : handled & fs_access::file_rights;
    if (!add_path_rule(ruleset, entry_fd.get(), rights, path, error)) {
      ok = false;
      break;
    }
  }
  ::closedir(listing);
  return ok;
}

bool is_beneath(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         (dir == "/" || path[dir.size()] == '/');
}

bool set_no_new_privs(std::string& error) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    error = "prctl(PR_SET_NO_NEW_PRIVS): " + errno_text(errno);
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Users.

struct identity {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

bool look_up_user(const std::string& user, identity& out, std::string& error) {
  long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(hint > 0 ? static_cast<size_t>(hint) : 4096);
  passwd entry{};
  passwd* found = nullptr;
  int rc;
  while ((rc = ::getpwnam_r(user.c_str(), &entry, buffer.data(), buffer.size(), &found)) == ERANGE &&
         buffer.size() < (1u << 20))
    buffer.resize(buffer.size() * 2);
  if (rc != 0) {
    error = "cannot look up user '" + user + "': " + errno_text(rc);
    return false;
  }
  if (found == nullptr) {
    error = "unknown user '" + user + "'";
    return false;
  }
  out.name = user;
  out.uid = entry.pw_uid;
  out.gid = entry.pw_gid;

  int count = 16;
  for (;;) {
    out.groups.resize(static_cast<size_t>(count));
    int asked = count;
    if (::getgrouplist(user.c_str(), out.gid, out.groups.data(), &count) >= 0) {
      out.groups.resize(static_cast<size_t>(count));
      break;
    }
    if (count <= asked) count = asked * 2;  // some libcs do not say how many
    if (count > 65536) {
      error = "cannot list the groups of user '" + user + "'";
      return false;
    }
  }

  if (out.uid == 0) {
    error = "user '" + user + "' is root (uid 0); a worker must run as an unprivileged user";
    return false;
  }
  bool root_group = out.gid == 0;
  for (gid_t g : out.groups) root_group = root_group || g == 0;
  if (root_group) {
    error = "user '" + user + "' is in group 0 (root); a worker must run as an unprivileged user";
    return false;
  }
  return true;
}

bool no_capabilities_left(std::string& error) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) {
    error = "capget: " + errno_text(errno);
    return false;
  }
  for (const auto& word : data) {
    if (word.effective != 0 || word.permitted != 0) {
      error = "capabilities remain after the uid change (securebits keep them?)";
      return false;
    }
  }
  return true;
}

bool switch_to(const identity& who, std::string& error) {
  const std::string quoted = "'" + who.name + "'";
  if (::setgroups(who.groups.size(), who.groups.data()) != 0) {
    error = "setgroups for " + quoted + ": " + errno_text(errno);
    return false;
  }
  if (::setresgid(who.gid, who.gid, who.gid) != 0) {
    error = "setresgid(" + std::to_string(who.gid) + ") for " + quoted + ": " + errno_text(errno);
    return false;
  }
  if (::setresuid(who.uid, who.uid, who.uid) != 0) {
    error = "setresuid(" + std::to_string(who.uid) + ") for " + quoted + ": " + errno_text(errno);
    return false;
  }

  uid_t ruid, euid, suid;
  gid_t rgid, egid, sgid;
  if (::getresuid(&ruid, &euid, &suid) != 0 || ::getresgid(&rgid, &egid, &sgid) != 0 ||
      ruid != who.uid || euid != who.uid || suid != who.uid || rgid != who.gid ||
      egid != who.gid || sgid != who.gid) {
    error = "the uid/gid change to " + quoted + " did not take on all of real, effective, saved";
    return false;
  }
  // The proof that matters: root cannot be had back.
  if (::setuid(0) == 0 || ::setgid(0) == 0) {
    error = "root could be regained after switching to " + quoted;
    return false;
  }
  return no_capabilities_left(error);
}

bool check_may_switch(const std::string& user, std::string& error) {
  if (::geteuid() != 0) {
    error = "--worker-user needs the daemon to run as root (asked for user '" + user + "')";
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// seccomp.

#if defined(__x86_64__)
constexpr uint32_t native_audit_arch = AUDIT_ARCH_X86_64;
constexpr bool filter_supported = true;
#elif defined(__aarch64__)
constexpr uint32_t native_audit_arch = AUDIT_ARCH_AARCH64;
constexpr bool filter_supported = true;
#else
constexpr uint32_t native_audit_arch = 0;
constexpr bool filter_supported = false;
#endif

// Calls a session worker never makes and that would let a compromised one reach
// other processes or the kernel's rarer paths. #ifdef: not every arch has all.
constexpr long denied_syscalls[] = {
#ifdef __NR_ptrace
    __NR_ptrace,
#endif
#ifdef __NR_process_vm_readv
    __NR_process_vm_readv,
#endif
#ifdef __NR_process_vm_writev
    __NR_process_vm_writev,
#endif
#ifdef __NR_kcmp
    __NR_kcmp,
#endif
#ifdef __NR_pidfd_getfd
    __NR_pidfd_getfd,
#endif
#ifdef __NR_mount
    __NR_mount,
#endif
#ifdef __NR_umount2
    __NR_umount2,
#endif
#ifdef __NR_pivot_root
    __NR_pivot_root,
#endif
#ifdef __NR_chroot
    __NR_chroot,
#endif
#ifdef __NR_unshare
    __NR_unshare,
#endif
#ifdef __NR_setns
    __NR_setns,
#endif
#ifdef __NR_swapon
    __NR_swapon,
#endif
#ifdef __NR_swapoff
    __NR_swapoff,
#endif
#ifdef __NR_reboot
    __NR_reboot,
#endif
#ifdef __NR_kexec_load
    __NR_kexec_load,
#endif
#ifdef __NR_kexec_file_load
    __NR_kexec_file_load,
#endif
#ifdef __NR_init_module
    __NR_init_module,
#endif
#ifdef __NR_finit_module
    __NR_finit_module,
#endif
#ifdef __NR_delete_module
    __NR_delete_module,
#endif
#ifdef __NR_bpf
    __NR_bpf,
#endif
#ifdef __NR_perf_event_open
    __NR_perf_event_open,
#endif
#ifdef __NR_keyctl
    __NR_keyctl,
#endif
#ifdef __NR_add_key
    __NR_add_key,
#endif
#ifdef __NR_request_key
    __NR_request_key,
#endif
#ifdef __NR_userfaultfd
    __NR_userfaultfd,
#endif
#ifdef __NR_open_by_handle_at
    __NR_open_by_handle_at,
#endif
#ifdef __NR_name_to_handle_at
    __NR_name_to_handle_at,
#endif
#ifdef __NR_acct
    __NR_acct,
#endif
#ifdef __NR_quotactl
    __NR_quotactl,
#endif
#ifdef __NR_settimeofday
    __NR_settimeofday,
#endif
#ifdef __NR_clock_settime
    __NR_clock_settime,
#endif
#ifdef __NR_clock_adjtime
    __NR_clock_adjtime,
#endif
#ifdef __NR_adjtimex
    __NR_adjtimex,
#endif
#ifdef __NR_syslog
    __NR_syslog,
#endif
#ifdef __NR_iopl
    __NR_iopl,
#endif
#ifdef __NR_ioperm
    __NR_ioperm,
#endif
#ifdef __NR_personality
    __NR_personality,
#endif
#ifdef __NR_mount_setattr
    __NR_mount_setattr,
#endif
#ifdef __NR_move_mount
    __NR_move_mount,
#endif
#ifdef __NR_open_tree
    __NR_open_tree,
#endif
#ifdef __NR_fsopen
    __NR_fsopen,
#endif
#ifdef __NR_fsmount
    __NR_fsmount,
#endif
#ifdef __NR_fspick
    __NR_fspick,
#endif
#ifdef __NR_io_uring_setup
    __NR_io_uring_setup,
#endif
};

// clone flags that create namespaces. CLONE_NEWTIME is left out: through
// clone(2) its bit is part of the exit signal, and only clone3/unshare take it.
constexpr uint32_t clone_namespace_flags = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS |
                                           CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
                                           CLONE_NEWNET;

// x32 system calls on x86_64 carry this bit in their number.
constexpr uint32_t x32_syscall_bit = 0x40000000;

// A tiny assembler for the filter: jumps name their target, offsets are
// resolved once the program is laid out.
class filter_program {
 public:
  enum class label { next, deny, enosys, clone_flags };

  void load(uint32_t offset) { emit(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset), label::next, label::next); }
  void ret(uint32_t value) { emit(BPF_STMT(BPF_RET | BPF_K, value), label::next, label::next); }
  // if (A <op> k) goto if_true; else goto if_false
  void jump(uint16_t op, uint32_t k, label if_true, label if_false) {
    emit(BPF_JUMP(BPF_JMP | op | BPF_K, k, 0, 0), if_true, if_false);
  }
  void mark(label where) { marks_.emplace_back(where, code_.size()); }

  bool resolve(std::vector<sock_filter>& out, std::string& error) const {
    out = code_;
    for (size_t i = 0; i < code_.size(); ++i) {
      if (BPF_CLASS(code_[i].code) != BPF_JMP) continue;
      for (int branch = 0; branch < 2; ++branch) {
        label target = branch == 0 ? jumps_[i].first : jumps_[i].second;
        size_t offset = 0;
        if (target != label::next) {
          size_t at = position(target);
          if (at <= i || at - i - 1 > 255) {  // forward only, 8-bit offsets
            error = "internal error: seccomp filter jump out of range";
            return false;
          }
          offset = at - i - 1;
        }
        (branch == 0 ? out[i].jt : out[i].jf) = static_cast<uint8_t>(offset);
      }
    }
    return true;
  }

 private:
  void emit(sock_filter instruction, label if_true, label if_false) {
    code_.push_back(instruction);
    jumps_.emplace_back(if_true, if_false);
  }
  size_t position(label where) const {
    for (const auto& [name, at] : marks_)
      if (name == where) return at;
    return SIZE_MAX;
  }

  std::vector<sock_filter> code_;
  std::vector<std::pair<label, label>> jumps_;
  std::vector<std::pair<label, size_t>> marks_;
};

bool build_filter(std::vector<sock_filter>& out, std::string& error) {
  using label = filter_program::label;
  filter_program p;
  // Another ABI (int 0x80, AArch32) numbers calls differently: refuse it whole.
  p.load(offsetof(seccomp_data, arch));
  p.jump(BPF_JEQ, native_audit_arch, label::next, label::deny);
  p.load(offsetof(seccomp_data, nr));
#if defined(__x86_64__)
  p.jump(BPF_JGE, x32_syscall_bit, label::deny, label::next);
#endif
#ifdef __NR_clone
  p.jump(BPF_JEQ, __NR_clone, label::clone_flags, label::next);
#endif
#ifdef __NR_clone3
  p.jump(BPF_JEQ, __NR_clone3, label::enosys, label::next);
#endif
  for (long nr : denied_syscalls) p.jump(BPF_JEQ, static_cast<uint32_t>(nr), label::deny, label::next);
  p.ret(SECCOMP_RET_ALLOW);

  // clone(flags, ...) on both arches; the flags fit the low 32 bits.
  p.mark(label::clone_flags);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  p.load(offsetof(seccomp_data, args[0]));
#else
  p.load(offsetof(seccomp_data, args[0]) + 4);
#endif
  p.jump(BPF_JSET, clone_namespace_flags, label::deny, label::next);
  p.ret(SECCOMP_RET_ALLOW);  // BPF jumps only forward: no way back to the first

  p.mark(label::enosys);
  p.ret(SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
  p.mark(label::deny);
  p.ret(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
  return p.resolve(out, error);
}

size_t thread_count() {
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return 0;
  size_t count = 0;
  while (dirent* entry = ::readdir(tasks))
    if (entry->d_name[0] != '.') ++count;
  ::closedir(tasks);
  return count;
}

bool lower_limit(int resource, const char* name, uint64_t wanted, std::vector<std::string>& warnings,
                 std::string& error) {
  rlimit current{};
  if (::getrlimit(resource, &current) != 0) {
    error = std::string("getrlimit(") + name + "): " + errno_text(errno);
    return false;
  }
  rlim_t value = static_cast<rlim_t>(wanted);
  if (current.rlim_max != RLIM_INFINITY && value > current.rlim_max) {
    warnings.push_back(std::string(name) + " " + std::to_string(wanted) +
                       " is above the hard limit; clamped to " + std::to_string(current.rlim_max));
    value = current.rlim_max;
  }
  // Hard limit too: the worker must not raise its soft limit back.
  rlimit wanted_limit{value, value};
  if (::setrlimit(resource, &wanted_limit) != 0) {
    error = std::string("setrlimit(") + name + ", " + std::to_string(value) + "): " + errno_text(errno);
    return false;
  }
  return true;
}

}  // namespace

void make_undumpable() { ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

bool apply_resource_limits(const resource_limits& limits, std::vector<std::string>& warnings,
                           std::string& error) {
  if (limits.no_core_dumps && !lower_limit(RLIMIT_CORE, "RLIMIT_CORE", 0, warnings, error))
    return false;
  if (limits.open_files != 0 &&
      !lower_limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", limits.open_files, warnings, error))
    return false;
  if (limits.address_space != 0 &&
      !lower_limit(RLIMIT_AS, "RLIMIT_AS", limits.address_space, warnings, error))
    return false;
  return true;
}

landlock_status query_landlock() {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, landlock_create_ruleset_version);
  if (abi < 0) return {0, errno};
  return {static_cast<int>(abi), 0};
}

bool forbid_files(const std::vector<std::string>& paths, std::vector<std::string>& warnings,
                  std::string& error) {
  if (paths.empty()) return true;

  std::set<std::string> forbidden;
  std::set<inode_id> skip_inodes;
  for (const auto& given : paths) {
    std::error_code ec;
    std::string path = std::filesystem::canonical(given, ec).string();
    if (ec) {
      error = "cannot resolve " + given + " to forbid it: " + ec.message();
      return false;
    }
    if (path == "/") {
      error = "cannot forbid the root directory";
      return false;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      error = "cannot stat " + path + ": " + errno_text(errno);
      return false;
    }
    if (!S_ISDIR(st.st_mode) && st.st_nlink > 1)
      warnings.push_back(path + " has " + std::to_string(st.st_nlink) +
                         " links; its names outside " + std::filesystem::path(path).parent_path().string() +
                         " stay readable");
    forbidden.insert(path);
    skip_inodes.insert({st.st_dev, st.st_ino});
  }

  const landlock_status status = query_landlock();
  if (status.abi == 0) {
    warnings.push_back("Landlock is unavailable (" + errno_text(status.error) +
                       "): the token and key files are protected by file permissions only");
    return true;
  }

  // A file beneath a forbidden directory is forbidden already.
  for (auto it = forbidden.begin(); it != forbidden.end();) {
    bool covered = false;
    for (const auto& other : forbidden) covered = covered || is_beneath(*it, other);
    it = covered ? forbidden.erase(it) : std::next(it);
  }
  std::set<std::string> ancestors;
  for (const auto& path : forbidden) {
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    for (;;) {
      ancestors.insert(dir.string());
      if (dir == dir.root_path()) break;
      dir = dir.parent_path();
    }
  }
  std::set<std::string> skip_paths = forbidden;
  skip_paths.insert(ancestors.begin(), ancestors.end());
  for (const auto& dir : ancestors) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) skip_inodes.insert({st.st_dev, st.st_ino});
  }

  const uint64_t handled = handled_fs_rights(status.abi);
  landlock_ruleset_attr_v1 attr{handled};
  unique_fd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0)));
  if (!ruleset.valid()) {
    error = "landlock_create_ruleset: " + errno_text(errno);
    return false;
  }
  for (const auto& dir : ancestors)
    if (!add_ancestor_rules(ruleset.get(), dir, handled, skip_paths, skip_inodes, warnings, error))
      return false;

  if (!set_no_new_privs(error)) return false;
  if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0) {
    error = "landlock_restrict_self: " + errno_text(errno);
    return false;
  }
  return true;
}

std::optional<std::string> default_worker_user() {
  if (::geteuid() != 0) return std::nullopt;
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwnam_r("nobody", &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
    return std::nullopt;
  return std::string("nobody");
}

bool drop_privileges(const std::string& user, std::string& error) {
  if (user.empty()) return true;
  identity who;
  return check_may_switch(user, error) && look_up_user(user, who, error) && switch_to(who, error);
}

bool install_syscall_filter(std::vector<std::string>& warnings, std::string& error) {
  if (!filter_supported) {
    warnings.push_back("no system call filter for this architecture (only x86_64 and aarch64)");
    return true;
  }
  if (::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL) {
    warnings.push_back("the kernel has no seccomp: no system call filter");
    return true;
  }
  std::vector<sock_filter> code;
  if (!build_filter(code, error)) return false;
  sock_fprog program{static_cast<unsigned short>(code.size()), code.data()};
  if (!set_no_new_privs(error)) return false;
  long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program);
  if (rc != 0) {
    error = rc > 0 ? "seccomp: thread " + std::to_string(rc) + " could not take the filter"
                   : "seccomp(SECCOMP_SET_MODE_FILTER): " + errno_text(errno);
    return false;
  }
  return true;
}

bool confine_worker(const confinement_options& options, std::vector<std::string>& warnings,
                    std::string& error) {
  // 0. Landlock and no_new_privs bind the calling thread only.
  const size_t threads = thread_count();
  if (threads > 1) {
    error = "confinement must come before any thread starts (" + std::to_string(threads) +
            " threads running)";
    return false;
  }
  if (threads == 0) warnings.push_back("cannot count threads (/proc/self/task): assuming one");

  // 1.
  make_undumpable();

  // 2. The identity is looked up while nothing is restricted.
  identity who;
  if (!options.worker_user.empty() &&
      !(check_may_switch(options.worker_user, error) && look_up_user(options.worker_user, who, error)))
    return false;

  // 3. As the daemon's user, who can list every ancestor directory.
  if (!forbid_files(options.forbidden_files, warnings, error)) return false;

  // 4.
  if (!options.worker_user.empty()) {
    if (!switch_to(who, error)) return false;
    make_undumpable();
  }

  // 5.
  if (!apply_resource_limits(options.limits, warnings, error)) return false;

  // 6.
  return install_syscall_filter(warnings, error);
}

}  // namespace ferry::server::worker
