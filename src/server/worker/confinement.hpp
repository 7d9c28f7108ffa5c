// What a session worker does to itself before it loads the native OpenCL driver.
//
// A session worker runs one client's kernels as native code (PoCL on CPU): a
// kernel can forge pointers and read or write anything in the worker. These
// functions bound what such a compromised worker can reach: other sessions'
// workers (same uid unless --worker-user), the main process, the token file and
// the TLS private key, the kernel's more dangerous interfaces.
//
// All of them act on the calling process only and are irreversible. Landlock,
// no_new_privs and (without TSYNC) seccomp are per-thread attributes inherited by
// threads and children created later, so they must be applied while the process
// has one thread: confine_worker() checks that. Functions report failures as
// `false` plus a message in `error`; degraded-but-safe outcomes (a limit
// clamped, Landlock missing) as `true` plus a line in `warnings`, for the caller
// to log. Nothing here logs by itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ferry::server::worker {

/// Makes the process non-dumpable (prctl PR_SET_DUMPABLE 0): processes of the
/// same uid, such as other sessions' workers, can then neither ptrace it nor
/// open its /proc/<pid>/mem, /proc/<pid>/environ or /proc/<pid>/fd/*, and no core
/// file is written. The MAIN process should call it too, at start-up: it holds
/// the token and the TLS key in memory and runs under the uid that unprivileged
/// workers would otherwise share.
///
/// Cannot: stop root (CAP_SYS_PTRACE). The kernel resets the flag whenever the
/// effective uid or gid changes (to /proc/sys/fs/suid_dumpable, which may be 1),
/// so call it again after drop_privileges(); confine_worker() does.
void make_undumpable();

struct resource_limits {
  uint64_t open_files = 0;     ///< RLIMIT_NOFILE; 0 leaves it as it is
  /// RLIMIT_AS in bytes; 0 leaves it. Leave 0 with GPU drivers (CUDA reserves
  /// far more virtual address space than it uses) and under AddressSanitizer.
  uint64_t address_space = 0;
  bool no_core_dumps = true;   ///< RLIMIT_CORE 0: a core file would hold session data
};

/// Sets each requested limit as both soft and hard limit, so the worker cannot
/// raise it again. A request above the current hard limit is clamped to it (a
/// warning says so); the function never raises a hard limit, even as root.
/// Fails only when setrlimit does.
bool apply_resource_limits(const resource_limits& limits, std::vector<std::string>& warnings,
                           std::string& error);

/// What the kernel says about Landlock.
struct landlock_status {
  int abi = 0;    ///< highest Landlock ABI version; 0 when unavailable
  int error = 0;  ///< errno when unavailable: ENOSYS (not built), EOPNOTSUPP (disabled at boot)
};

/// Asks the kernel for its Landlock ABI (landlock_create_ruleset with
/// LANDLOCK_CREATE_RULESET_VERSION). Changes nothing.
landlock_status query_landlock();

/// Makes the given files (the token file, the TLS private key; directories are
/// accepted and then cover everything beneath) impossible to open for reading,
/// writing, executing or truncating by this process and its future children,
/// while everything else stays as usable as before. Uses Landlock; sets
/// no_new_privs (irreversible: set-uid programs no longer gain privileges on
/// execve, which a worker never needs).
///
/// Landlock only grants, so the rules are built around the files. Every path is
/// resolved (realpath). For each ancestor directory D of a forbidden file:
///   - D itself gets READ_DIR, MAKE_* (all seven), REMOVE_DIR, REMOVE_FILE and
///     REFER. These are the rights that are about a directory rather than a
///     file's contents; the kernel applies them to D and to every directory
///     beneath it, which is harmless because none of them opens a file.
///     D gets none of the file rights (EXECUTE, READ_FILE, WRITE_FILE, TRUNCATE,
///     IOCTL_DEV): they too would be inherited by everything beneath D,
///     the forbidden file included.
///   - every entry of D, except the next component towards a forbidden file and
///     any other name of a forbidden inode (a hard link), gets every handled
///     right (a non-directory only the file rights, which is all it can hold).
///     Symbolic links get no rule: the kernel checks the path they lead to.
/// Handled rights are the filesystem rights of the running kernel's ABI, as far
/// as this code knows them (REFER from ABI 2, TRUNCATE from 3, IOCTL_DEV from
/// 5; none added since): all are granted wherever anything is, so handling
/// them changes nothing away from the forbidden files. A right a later ABI
/// adds stays unhandled, i.e. allowed everywhere, not denied for lack of rules.
///
/// Consequences and limits (the rules bind inodes that exist when this runs):
///   - A file created later directly in an ancestor directory D (say /tmp when
///     the token sits in /tmp/x/) can be created, renamed and removed, but not
///     opened for reading or writing, executed or truncated. A directory
///     created later there can be listed and filled, and its files likewise not
///     opened. Files created later anywhere else (beneath an entry that existed)
///     are fully usable. Keep the token and key out of directories the driver
///     writes into directly (/tmp, $TMPDIR, the PoCL cache).
///   - REMOVE_FILE and MAKE_REG on the ancestors also hold in the forbidden
///     file's own directory: the process may unlink or replace the file, if
///     file permissions let it. Landlock only stops reading; keep the files in
///     a root-owned directory and run workers as another user (drop_privileges)
///     to stop tampering.
///   - Moving the file out (rename, link) to a place with more rights is
///     refused by the kernel (EXDEV), since REFER forbids gaining rights.
///   - Other names of the file outside its ancestor directories (a hard link in
///     another directory, a bind mount) stay readable: a warning names a
///     forbidden file with more than one link.
///   - Files already open are not affected: open none of these files before.
/// When the kernel has no Landlock (ENOSYS) or it is disabled (EOPNOTSUPP),
/// returns true with a warning: the files are then protected by permissions
/// only. Fails when a path cannot be resolved or an ancestor cannot be listed;
/// an entry of an ancestor that cannot be opened (EACCES) gets no rule, so it
/// is closed to the process, and a warning names it.
bool forbid_files(const std::vector<std::string>& paths, std::vector<std::string>& warnings,
                  std::string& error);

/// "nobody" when the process runs as root and that user exists; otherwise
/// nothing. The caller decides whether that is its default.
std::optional<std::string> default_worker_user();

/// Switches to `user` for good: its supplementary groups (setgroups), then real,
/// effective and saved gid, then uid (setresgid, setresuid). Then checks that
/// the switch holds: every uid and gid is the user's, setuid(0) and setgid(0)
/// fail, no capability is left. Refuses a user that is root or in group 0.
/// Empty `user`: does nothing and succeeds. Non-empty `user` without root:
/// fails ("--worker-user needs the daemon to run as root").
///
/// Cannot: change the environment, the working directory or open descriptors:
/// HOME (and so the PoCL cache in $HOME/.cache/pocl) still points at the old
/// user's, which the new one usually cannot write; set POCL_CACHE_DIR.
bool drop_privileges(const std::string& user, std::string& error);

/// Installs a seccomp-BPF deny-list on all threads (TSYNC) and sets
/// no_new_privs. Blocked calls fail with EPERM; everything else, including what
/// OpenCL drivers use (ioctl, mmap, clone, futex, sockets, execve of a linker),
/// stays allowed. Denied: debugging and memory access of other processes
/// (ptrace, process_vm_readv/writev, kcmp, pidfd_getfd), mounts and namespaces
/// (mount, umount2, pivot_root, chroot, unshare, setns, the new mount API),
/// kernel and system administration (modules, kexec, reboot, swap, acct,
/// quotactl, clocks, syslog, iopl/ioperm), large attack surfaces (bpf,
/// perf_event_open, keyrings, userfaultfd, io_uring_setup, open_by_handle_at,
/// name_to_handle_at, personality).
/// Beyond that list, because unshare alone would leave the same door open:
/// clone with a CLONE_NEW* flag fails with EPERM, and clone3 (whose flags a
/// filter cannot read) fails with ENOSYS, so that libc falls back to clone.
/// Any call through another ABI (x32 numbers on x86_64, 32-bit int 0x80 or
/// AArch32) fails with EPERM: a worker is a 64-bit process and never uses them.
/// On architectures other than x86_64 and aarch64 installs nothing and succeeds
/// with a warning; likewise when the kernel has no seccomp filters.
bool install_syscall_filter(std::vector<std::string>& warnings, std::string& error);

struct confinement_options {
  std::string worker_user;                   ///< empty: keep the daemon's user
  resource_limits limits;
  std::vector<std::string> forbidden_files;  ///< the token file, the TLS key
};

/// Everything above, in this order, for a worker's main() before it starts a
/// thread or loads the native driver:
///   0. check that the process has one thread (otherwise fail: the others
///      would escape Landlock and no_new_privs);
///   1. make_undumpable: first, so no same-uid process can attach meanwhile;
///   2. look `worker_user` up (NSS may read files, load modules or talk to
///      nscd/sssd; done while nothing is restricted yet);
///   3. forbid_files, while still the daemon's user: building the rules lists
///      every ancestor directory, which root can and `nobody` often cannot
///      (a 0700 /etc/ferry). The rules bind inodes, not credentials, and
///      survive the uid change; no_new_privs does not hinder setresuid;
///   4. switch to `worker_user` as drop_privileges does, then make_undumpable
///      again, because the uid change resets the flag. The filter leaves
///      setgroups/setresgid/setresuid alone, so this could also follow it; it
///      precedes it so that the filter stays the last step and the switch's
///      checks (setuid(0) must fail with EPERM) see the kernel's answer, not
///      the filter's;
///   5. apply_resource_limits: after the steps that open descriptors and load
///      NSS modules, so a small open_files cannot break them, before the driver
///      so that the driver is bound too;
///   6. install_syscall_filter, last: none of the earlier steps needs a
///      blocked call, and it closes namespaces that could undo the others.
/// Stops at the first failure; the caller must then exit, not serve.
/// Afterwards the driver may be loaded: it can open anything but the
/// forbidden files and run any call the filter leaves (see above). Device
/// nodes must already exist: nvidia-modprobe (set-uid) no longer gains root.
bool confine_worker(const confinement_options& options, std::vector<std::string>& warnings,
                    std::string& error);

}  // namespace ferry::server::worker
