// Tests of the worker's self-confinement. Every confinement is irreversible, so
// each test applies it in a forked child and the child reports back through a
// pipe (empty: passed) and its exit status; the gtest process is never confined.
// The OpenCL test goes one step further and re-executes this binary (see
// run_probe below): a forked copy of a process whose other tests already set up
// PoCL would inherit PoCL's state without its threads.
#include "server/worker/confinement.hpp"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CL/cl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ferry::server::worker {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// Running a body in a child.

struct child_report {
  std::string failure;  // empty: passed
  bool skipped = false;
};

// Runs `body` in a forked child. The body returns what went wrong, "" when
// nothing did, or "skip: why".
child_report in_child(const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {"pipe: " + std::string(std::strerror(errno))};
  pid_t pid = ::fork();
  if (pid < 0) return {"fork: " + std::string(std::strerror(errno))};
  if (pid == 0) {
    ::close(fds[0]);
    std::string text = body();
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::_exit(text.empty() ? 0 : 1);
  }
  ::close(fds[1]);
  std::string text;
  char buffer[512];
  ssize_t n;
  while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) text.append(buffer, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFSIGNALED(status)) return {text + " (child killed by signal " + std::to_string(WTERMSIG(status)) + ")"};
  if (text.rfind("skip:", 0) == 0) return {text, true};
  if (WEXITSTATUS(status) != 0 && text.empty()) return {"child exited with " + std::to_string(WEXITSTATUS(status))};
  return {text};
}

// Variadic: a lambda's commas are not in parentheses.
#define EXPECT_CHILD_PASSES(...)                          \
  do {                                                    \
    child_report report_ = in_child(__VA_ARGS__);         \
    if (report_.skipped) GTEST_SKIP() << report_.failure; \
    EXPECT_EQ(report_.failure, "");                       \
  } while (0)

std::string errno_name(int err) { return std::to_string(err) + " (" + std::strerror(err) + ")"; }

// "" when opening `path` with `flags` fails with `expected_errno`
// (0: when it succeeds), otherwise what happened.
std::string check_open(const std::string& path, int flags, int expected_errno) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0600);
  int err = errno;
  if (fd >= 0) ::close(fd);
  if (expected_errno == 0)
    return fd >= 0 ? "" : "open(" + path + ") failed: " + errno_name(err) + "\n";
  if (fd >= 0) return "open(" + path + ") succeeded, should have failed\n";
  return err == expected_errno ? ""
                               : "open(" + path + ") failed with " + errno_name(err) + ", expected " +
                                     errno_name(expected_errno) + "\n";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& text, mode_t mode = 0644) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
}

std::optional<passwd> nobody() {
  passwd* entry = ::getpwnam("nobody");
  if (entry == nullptr) return std::nullopt;
  return *entry;
}

// A temporary tree like a daemon's configuration directory:
//   root/secret/token, root/secret/key   the files to forbid
//   root/secret/sibling                  next to them
//   root/secret/sub/file                 in a directory next to them
//   root/elsewhere/                      another existing directory
class confinement_tree : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/ferry-confinement-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
    ::chmod(root_.c_str(), 0755);  // searchable by the test user of drop_privileges
    fs::create_directories(root_ / "secret" / "sub");
    fs::create_directories(root_ / "elsewhere");
    write_file(root_ / "secret" / "token", "token-text", 0600);
    write_file(root_ / "secret" / "key", "key-text", 0600);
    write_file(root_ / "secret" / "sibling", "sibling-text");
    write_file(root_ / "secret" / "sub" / "file", "sub-text");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string path(const std::string& relative) const { return (root_ / relative).string(); }
  std::vector<std::string> secrets() const { return {path("secret/token"), path("secret/key")}; }

  fs::path root_;
};

bool landlock_available() { return query_landlock().abi > 0; }

#define REQUIRE_LANDLOCK() \
  if (!landlock_available()) GTEST_SKIP() << "Landlock unavailable here"

// ---------------------------------------------------------------------------
// Landlock.

TEST(confinement, landlock_version_query_agrees_with_the_kernel) {
  const landlock_status status = query_landlock();
  long raw = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1u /* VERSION */);
  int raw_errno = errno;
  if (raw > 0) {
    EXPECT_EQ(status.abi, raw);
    EXPECT_EQ(status.error, 0);
  } else {
    EXPECT_EQ(status.abi, 0);
    EXPECT_EQ(status.error, raw_errno);
    EXPECT_TRUE(status.error == ENOSYS || status.error == EOPNOTSUPP) << errno_name(status.error);
  }
}

TEST_F(confinement_tree, a_forbidden_file_cannot_be_opened_while_its_neighbours_can) {
  REQUIRE_LANDLOCK();
  // Exists before the rules, like the driver's cache: files made in it later work.
  const std::string later = path("elsewhere/created-later");
  EXPECT_CHILD_PASSES([&] {
    std::vector<std::string> warnings;
    std::string error;
    if (!forbid_files(secrets(), warnings, error)) return "forbid_files: " + error;
    if (!warnings.empty()) return "unexpected warning: " + warnings[0];
    std::string failures;
    failures += check_open(path("secret/token"), O_RDONLY, EACCES);
    failures += check_open(path("secret/key"), O_RDONLY, EACCES);
    failures += check_open(path("secret/token"), O_WRONLY, EACCES);
    failures += check_open(path("secret/sibling"), O_RDONLY, 0);
    failures += check_open(path("secret/sub/file"), O_RDWR, 0);
    failures += check_open(path("secret"), O_RDONLY | O_DIRECTORY, 0);
    failures += check_open(later, O_CREAT | O_RDWR, 0);
    failures += check_open(path("secret/sub/created-later"), O_CREAT | O_RDWR, 0);
    if (read_file(path("secret/sibling")) != "sibling-text") failures += "sibling reads wrong\n";
    std::ofstream(later + "-2") << "new";
    if (read_file(later + "-2") != "new") failures += "a file created later reads wrong\n";
    // Far from the tree: system files and /proc stay as they were.
    failures += check_open("/etc/passwd", O_RDONLY, 0);
    failures += check_open("/proc/self/maps", O_RDONLY, 0);
    failures += check_open("/dev/null", O_RDWR, 0);
    return failures;
  });
}

TEST_F(confinement_tree, a_file_created_later_directly_in_an_ancestor_cannot_be_opened) {
  REQUIRE_LANDLOCK();
  // The limitation the header documents: new inodes in an ancestor directory
  // get its directory rights only.
  EXPECT_CHILD_PASSES([&] {
    std::vector<std::string> warnings;
    std::string error;
    if (!forbid_files(secrets(), warnings, error)) return "forbid_files: " + error;
    std::string failures;
    failures += check_open(path("secret/new"), O_CREAT | O_WRONLY, EACCES);
    if (!fs::exists(path("secret/new"))) failures += "creating in the ancestor failed\n";
    if (::unlink(path("secret/new").c_str()) != 0) failures += "removing in the ancestor failed\n";
    if (::mkdir(path("secret/newdir").c_str(), 0755) != 0) failures += "mkdir in the ancestor failed\n";
    failures += check_open(path("secret/newdir"), O_RDONLY | O_DIRECTORY, 0);
    if (::rmdir(path("secret/newdir").c_str()) != 0) failures += "rmdir in the ancestor failed\n";
    return failures;
  });
}

TEST_F(confinement_tree, a_forbidden_file_cannot_be_moved_linked_or_truncated) {
  REQUIRE_LANDLOCK();
  if (query_landlock().abi < 3) GTEST_SKIP() << "Landlock ABI < 3: no TRUNCATE right";
  EXPECT_CHILD_PASSES([&] {
    std::vector<std::string> warnings;
    std::string error;
    if (!forbid_files(secrets(), warnings, error)) return "forbid_files: " + error;
    std::string failures;
    if (::rename(path("secret/token").c_str(), path("elsewhere/token").c_str()) == 0 || errno != EXDEV)
      failures += "rename out: " + errno_name(errno) + "\n";
    if (::link(path("secret/token").c_str(), path("elsewhere/token").c_str()) == 0 || errno != EXDEV)
      failures += "link out: " + errno_name(errno) + "\n";
    if (::truncate(path("secret/token").c_str(), 0) == 0 || errno != EACCES)
      failures += "truncate: " + errno_name(errno) + "\n";
    // A rename within its directory keeps the inode, and with it the ban.
    if (::rename(path("secret/token").c_str(), path("secret/renamed").c_str()) != 0)
      failures += "rename within: " + errno_name(errno) + "\n";
    failures += check_open(path("secret/renamed"), O_RDONLY, EACCES);
    return failures;
  });
}

TEST_F(confinement_tree, a_second_name_of_a_forbidden_file_gets_no_rule) {
  REQUIRE_LANDLOCK();
  ASSERT_EQ(::link(path("secret/token").c_str(), path("secret/token.bak").c_str()), 0);
  EXPECT_CHILD_PASSES([&] {
    std::vector<std::string> warnings;
    std::string error;
    if (!forbid_files({path("secret/token")}, warnings, error)) return "forbid_files: " + error;
    std::string failures = check_open(path("secret/token.bak"), O_RDONLY, EACCES);
    if (warnings.size() != 1 || warnings[0].find("2 links") == std::string::npos)
      failures += "expected one warning about links\n";
    return failures;
  });
}

TEST_F(confinement_tree, a_forbidden_path_through_a_symlink_is_resolved) {
  REQUIRE_LANDLOCK();
  fs::create_symlink(path("secret/token"), path("elsewhere/token-link"));
  EXPECT_CHILD_PASSES([&] {
    std::vector<std::string> warnings;
    std::string error;
    if (!forbid_files({path("elsewhere/token-link")}, warnings, error)) return "forbid_files: " + error;
    return check_open(path("secret/token"), O_RDONLY, EACCES) +
           check_open(path("secret/key"), O_RDONLY, 0);
  });
}

TEST_F(confinement_tree, forbidding_a_missing_file_fails_and_names_it) {
  EXPECT_CHILD_PASSES([&] {
    std::vector<std::string> warnings;
    std::string error;
    if (forbid_files({path("secret/missing")}, warnings, error)) return std::string("succeeded");
    return error.find(path("secret/missing")) != std::string::npos ? "" : "error does not name the file: " + error;
  });
}

// A filter of the test's own that makes landlock_create_ruleset fail as it
// does on kernels without Landlock.
bool pretend_no_landlock(int err) {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_landlock_create_ruleset, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | static_cast<uint32_t>(err)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(std::size(code)), code};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

TEST_F(confinement_tree, without_landlock_forbid_files_succeeds_with_a_warning) {
  for (int err : {ENOSYS, EOPNOTSUPP}) {
    SCOPED_TRACE(errno_name(err));
    EXPECT_CHILD_PASSES([&] {
      if (!pretend_no_landlock(err)) return "test filter: " + errno_name(errno);
      if (query_landlock().abi != 0 || query_landlock().error != err) return std::string("query saw Landlock");
      std::vector<std::string> warnings;
      std::string error;
      if (!forbid_files(secrets(), warnings, error)) return "forbid_files failed: " + error;
      std::string failures;
      if (warnings.size() != 1 || warnings[0].find("permissions only") == std::string::npos)
        failures += "expected one warning about permissions\n";
      failures += check_open(path("secret/token"), O_RDONLY, 0);  // nothing was applied
      return failures;
    });
  }
}

// ---------------------------------------------------------------------------
// seccomp.

std::string install_filter() {
  std::vector<std::string> warnings;
  std::string error;
  if (!install_syscall_filter(warnings, error)) return "install_syscall_filter: " + error;
  if (!warnings.empty()) return "skip: " + warnings[0];
  return "";
}

// "" when `result` is -1 with EPERM.
std::string expect_eperm(const char* what, long result) {
  if (result == -1 && errno == EPERM) return "";
  return std::string(what) + " returned " + std::to_string(result) + " errno " + errno_name(errno) + "\n";
}

TEST(confinement, syscall_filter_denies_tracing_and_keeps_ordinary_calls) {
  EXPECT_CHILD_PASSES([] {
    int local = 42, copy = 0;
    iovec mine{&local, sizeof local}, theirs{&copy, sizeof copy};
    // Control: without the filter this process may read its own memory.
    if (::process_vm_readv(::getpid(), &theirs, 1, &mine, 1, 0) != sizeof local || copy != 42)
      return "skip: process_vm_readv unusable before the filter: " + errno_name(errno);

    if (std::string failed = install_filter(); !failed.empty()) return failed;
    std::string failures;
    failures += expect_eperm("process_vm_readv", ::process_vm_readv(::getpid(), &theirs, 1, &mine, 1, 0));
    failures += expect_eperm("process_vm_writev", ::process_vm_writev(::getpid(), &mine, 1, &theirs, 1, 0));
    const pid_t runner = ::getppid();
    long attached = ::ptrace(PTRACE_ATTACH, runner, nullptr, nullptr);
    int attach_errno = errno;
    if (attached == 0) {  // a broken filter must fail the test, not leave the runner stopped
      int status = 0;
      ::waitpid(runner, &status, __WALL);
      ::ptrace(PTRACE_DETACH, runner, nullptr, nullptr);
      ::kill(runner, SIGCONT);
    }
    errno = attach_errno;
    failures += expect_eperm("ptrace(PTRACE_ATTACH, parent)", attached);
    failures += expect_eperm("bpf", ::syscall(SYS_bpf, 0, nullptr, 0));
    failures += expect_eperm("perf_event_open", ::syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0));
    failures += expect_eperm("keyctl", ::syscall(SYS_keyctl, 0, 0, 0, 0, 0));
    failures += expect_eperm("io_uring_setup", ::syscall(SYS_io_uring_setup, 1, nullptr));
    failures += expect_eperm("userfaultfd", ::syscall(SYS_userfaultfd, 0));
    failures += expect_eperm("personality", ::syscall(SYS_personality, 0xffffffffUL));
    // Arguments that make each call fail harmlessly should the filter let it through.
    failures += expect_eperm("mount", ::syscall(SYS_mount, nullptr, "/nonexistent-ferry", nullptr, 0, nullptr));
    failures += expect_eperm("chroot", ::syscall(SYS_chroot, "/nonexistent-ferry"));
    // What drivers need goes on working.
    if (::syscall(SYS_getpid) != ::getpid()) failures += "getpid\n";
    void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) failures += "mmap: " + errno_name(errno) + "\n";
    else ::munmap(page, 4096);
    failures += check_open("/dev/null", O_RDWR, 0);
    return failures;
  });
}

TEST(confinement, syscall_filter_denies_new_namespaces_yet_threads_and_fork_work) {
  EXPECT_CHILD_PASSES([] {
    if (std::string failed = install_filter(); !failed.empty()) return failed;
    std::string failures;
    failures += expect_eperm("unshare(CLONE_NEWUSER)", ::unshare(CLONE_NEWUSER));
    failures += expect_eperm("unshare(CLONE_NEWNS)", ::unshare(CLONE_NEWNS));
    failures += expect_eperm("setns", ::setns(-1, 0));
    long cloned = ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (cloned == 0) ::_exit(0);
    if (cloned > 0) {
      ::waitpid(static_cast<pid_t>(cloned), nullptr, 0);
      failures += "clone(CLONE_NEWUSER) made a process\n";
    } else if (errno != EPERM) {
      failures += "clone(CLONE_NEWUSER): " + errno_name(errno) + "\n";
    }
#ifdef SYS_clone3
    // Its flags are out of the filter's reach: ENOSYS sends libc back to clone.
    if (::syscall(SYS_clone3, nullptr, 0) != -1 || errno != ENOSYS)
      failures += "clone3 is not answered ENOSYS: " + errno_name(errno) + "\n";
#endif
    int seen = 0;
    std::thread thread([&] { seen = 1; });
    thread.join();
    if (seen != 1) failures += "a thread did not run\n";
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(7);
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
      failures += "fork does not work: " + errno_name(errno) + "\n";
    if (std::system("exit 3") != 3 << 8) failures += "system() does not work\n";
    return failures;
  });
}

#if defined(__x86_64__)
TEST(confinement, syscall_filter_denies_x32_and_32_bit_calls) {
  EXPECT_CHILD_PASSES([] {
    if (std::string failed = install_filter(); !failed.empty()) return failed;
    std::string failures = expect_eperm("x32 getpid", ::syscall(0x40000000 | SYS_getpid));
    // In a grandchild: without IA32 emulation int 0x80 faults, which is fine too.
    pid_t pid = ::fork();
    if (pid == 0) {
      long result = 20;  // getpid in the i386 table
      asm volatile("int $0x80" : "+a"(result) : : "r8", "r9", "r10", "r11", "memory");
      ::_exit(result == -EPERM ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0) failures += "int 0x80 getpid was not refused\n";
    return failures;
  });
}
#endif

// ---------------------------------------------------------------------------
// Resource limits, dumpability.

TEST(confinement, resource_limits_cap_open_files) {
  EXPECT_CHILD_PASSES([] {
    resource_limits limits;
    limits.open_files = 32;
    std::vector<std::string> warnings;
    std::string error;
    if (!apply_resource_limits(limits, warnings, error)) return "apply_resource_limits: " + error;
    if (!warnings.empty()) return "unexpected warning: " + warnings[0];
    rlimit got{};
    ::getrlimit(RLIMIT_NOFILE, &got);
    if (got.rlim_cur != 32 || got.rlim_max != 32) return std::string("RLIMIT_NOFILE is not 32/32");
    int last_errno = 0;
    for (int i = 0; i < 64; ++i) {
      int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        last_errno = errno;
        break;
      }
      if (fd >= 32) return "opened descriptor " + std::to_string(fd);
    }
    return last_errno == EMFILE ? "" : "opening beyond the limit: " + errno_name(last_errno);
  });
}

TEST(confinement, resource_limits_are_clamped_to_the_hard_limit) {
  EXPECT_CHILD_PASSES([] {
    rlimit lowered{128, 128};
    if (::setrlimit(RLIMIT_NOFILE, &lowered) != 0) return "setrlimit: " + errno_name(errno);
    resource_limits limits;
    limits.open_files = 4096;
    std::vector<std::string> warnings;
    std::string error;
    if (!apply_resource_limits(limits, warnings, error)) return "apply_resource_limits: " + error;
    rlimit got{};
    ::getrlimit(RLIMIT_NOFILE, &got);
    std::string failures;
    if (got.rlim_cur != 128 || got.rlim_max != 128) failures += "RLIMIT_NOFILE is not 128/128\n";
    if (warnings.size() != 1 || warnings[0].find("clamped to 128") == std::string::npos)
      failures += "expected a warning about clamping\n";
    return failures;
  });
}

TEST(confinement, resource_limits_turn_core_dumps_off) {
  EXPECT_CHILD_PASSES([] {
    std::vector<std::string> warnings;
    std::string error;
    if (!apply_resource_limits(resource_limits{}, warnings, error)) return "apply_resource_limits: " + error;
    rlimit got{};
    ::getrlimit(RLIMIT_CORE, &got);
    return got.rlim_cur == 0 && got.rlim_max == 0 ? "" : std::string("RLIMIT_CORE is not 0/0");
  });
}

TEST(confinement, an_undumpable_process_says_so) {
  EXPECT_CHILD_PASSES([] {
    make_undumpable();
    int dumpable = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    return dumpable == 0 ? "" : "PR_GET_DUMPABLE is " + std::to_string(dumpable);
  });
}

// ---------------------------------------------------------------------------
// Privileges.

TEST_F(confinement_tree, drop_privileges_to_nobody_cannot_be_undone) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  const std::optional<passwd> user = nobody();
  if (!user) GTEST_SKIP() << "no user 'nobody'";
  write_file(root_ / "root-only", "secret", 0600);
  write_file(root_ / "public", "public", 0644);
  EXPECT_CHILD_PASSES([&] {
    std::string error;
    if (!drop_privileges("nobody", error)) return "drop_privileges: " + error;
    std::string failures;
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    ::getresuid(&ruid, &euid, &suid);
    ::getresgid(&rgid, &egid, &sgid);
    if (ruid != user->pw_uid || euid != user->pw_uid || suid != user->pw_uid) failures += "uids\n";
    if (::getuid() != ::geteuid()) failures += "getuid() != geteuid()\n";
    if (rgid != user->pw_gid || egid != user->pw_gid || sgid != user->pw_gid) failures += "gids\n";
    gid_t groups[64];
    int count = ::getgroups(64, groups);
    for (int i = 0; i < count; ++i)
      if (groups[i] == 0) failures += "still in group 0\n";
    failures += expect_eperm("setuid(0)", ::setuid(0));
    failures += check_open(path("root-only"), O_RDONLY, EACCES);
    failures += check_open(path("public"), O_RDONLY, 0);
    return failures;
  });
}

TEST(confinement, drop_privileges_names_an_unknown_user) {
  EXPECT_CHILD_PASSES([] {
    std::string error;
    if (drop_privileges("ferry-no-such-user", error)) return std::string("succeeded");
    std::string failures;
    if (error.find("'ferry-no-such-user'") == std::string::npos) failures += "not named: " + error + "\n";
    if (::geteuid() == 0 && error.find("unknown user") == std::string::npos) failures += "reason: " + error + "\n";
    return failures;
  });
}

TEST(confinement, drop_privileges_refuses_root) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  EXPECT_CHILD_PASSES([] {
    std::string error;
    if (drop_privileges("root", error)) return std::string("succeeded");
    return error.find("is root") != std::string::npos ? "" : "reason: " + error;
  });
}

TEST(confinement, drop_privileges_needs_root) {
  const std::optional<passwd> user = nobody();
  if (!user) GTEST_SKIP() << "no user 'nobody'";
  EXPECT_CHILD_PASSES([&] {
    // Become an ordinary user first when the tests run as root.
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setresgid(user->pw_gid, user->pw_gid, user->pw_gid) != 0 ||
                             ::setresuid(user->pw_uid, user->pw_uid, user->pw_uid) != 0))
      return "becoming nobody: " + errno_name(errno);
    std::string error;
    if (drop_privileges("nobody", error)) return std::string("succeeded");
    return error.find("--worker-user needs the daemon to run as root") != std::string::npos ? "" : "reason: " + error;
  });
}

TEST(confinement, drop_privileges_with_no_user_changes_nothing) {
  EXPECT_CHILD_PASSES([] {
    const uid_t before = ::geteuid();
    std::string error;
    if (!drop_privileges("", error)) return "failed: " + error;
    return ::geteuid() == before ? "" : std::string("euid changed");
  });
}

TEST(confinement, default_worker_user_is_nobody_for_root_only) {
  if (::geteuid() != 0) {
    EXPECT_EQ(default_worker_user(), std::nullopt);
  } else if (nobody()) {
    EXPECT_EQ(default_worker_user(), std::optional<std::string>("nobody"));
  } else {
    EXPECT_EQ(default_worker_user(), std::nullopt);
  }
}

// ---------------------------------------------------------------------------
// All together.

std::string status_line(const std::string& key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) return line.substr(key.size() + 1);
  return "";
}

// "" when every layer confine_worker promises is in place in this process.
std::string check_confined(const std::string& forbidden, uint64_t open_files) {
  std::string failures;
  if (::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0) failures += "still dumpable\n";
  if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) failures += "no_new_privs not set\n";
  if (status_line("Seccomp").find('2') == std::string::npos) failures += "no seccomp filter\n";
  if (landlock_available()) failures += check_open(forbidden, O_RDONLY, EACCES);
  int local = 1, copy = 0;
  iovec mine{&local, sizeof local}, theirs{&copy, sizeof copy};
  failures += expect_eperm("process_vm_readv", ::process_vm_readv(::getpid(), &theirs, 1, &mine, 1, 0));
  rlimit got{};
  ::getrlimit(RLIMIT_NOFILE, &got);
  if (got.rlim_max != open_files) failures += "RLIMIT_NOFILE hard is " + std::to_string(got.rlim_max) + "\n";
  ::getrlimit(RLIMIT_CORE, &got);
  if (got.rlim_max != 0) failures += "core dumps still allowed\n";
  return failures;
}

TEST_F(confinement_tree, confine_worker_applies_every_layer) {
  EXPECT_CHILD_PASSES([&] {
    confinement_options options;
    options.forbidden_files = secrets();
    options.limits.open_files = 256;
    std::vector<std::string> warnings;
    std::string error;
    if (!confine_worker(options, warnings, error)) return "confine_worker: " + error;
    std::string failures = check_confined(path("secret/token"), 256);
    if (landlock_available())
      for (const auto& warning : warnings) failures += "unexpected warning: " + warning + "\n";
    failures += check_open(path("secret/sibling"), O_RDONLY, 0);
    return failures;
  });
}

TEST_F(confinement_tree, confine_worker_as_nobody_applies_every_layer) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  const std::optional<passwd> user = nobody();
  if (!user) GTEST_SKIP() << "no user 'nobody'";
  // The tree is root's; the sibling must be readable by nobody for the control.
  EXPECT_CHILD_PASSES([&] {
    confinement_options options;
    options.worker_user = "nobody";
    options.forbidden_files = secrets();
    options.limits.open_files = 128;
    std::vector<std::string> warnings;
    std::string error;
    if (!confine_worker(options, warnings, error)) return "confine_worker: " + error;
    std::string failures = check_confined(path("secret/token"), 128);
    if (::getuid() != user->pw_uid || ::geteuid() != user->pw_uid) failures += "not nobody\n";
    failures += expect_eperm("setuid(0)", ::setuid(0));
    failures += check_open(path("secret/sibling"), O_RDONLY, 0);
    return failures;
  });
}

TEST(confinement, confine_worker_refuses_a_process_with_threads) {
  EXPECT_CHILD_PASSES([] {
    int gate[2];
    if (::pipe(gate) != 0) return "pipe: " + errno_name(errno);
    std::thread waiter([&] {
      char byte;
      (void)!::read(gate[0], &byte, 1);
    });
    std::vector<std::string> warnings;
    std::string error;
    bool confined = confine_worker(confinement_options{}, warnings, error);
    (void)!::write(gate[1], "x", 1);
    waiter.join();
    std::string failures;
    if (confined) failures += "confine_worker succeeded with two threads\n";
    if (error.find("2 threads") == std::string::npos) failures += "reason: " + error + "\n";
    if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 0) failures += "something was applied\n";
    return failures;
  });
}

// ---------------------------------------------------------------------------
// Real OpenCL work on PoCL inside a confined worker.
//
// The child re-executes this binary with FERRY_CONFINEMENT_PROBE_FD set (the
// descriptor it reports on); the static initializer below then runs the probe
// instead of the tests, as a worker's main() would: confine, then load the
// driver, then work. Exit 77 means skip.

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string opencl_work() {
  cl_uint count = 0;
  if (::clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return "skip: no OpenCL platform";
  std::vector<cl_platform_id> platforms(count);
  ::clGetPlatformIDs(count, platforms.data(), nullptr);
  cl_platform_id pocl = nullptr;
  for (cl_platform_id platform : platforms) {
    char name[256] = {};
    ::clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
    if (std::strstr(name, "Portable Computing Language") != nullptr) pocl = platform;
  }
  if (pocl == nullptr) return "skip: no PoCL platform";
  cl_device_id device = nullptr;
  if (::clGetDeviceIDs(pocl, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) return "clGetDeviceIDs";
  cl_int rc = CL_SUCCESS;
  cl_context context = ::clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  if (rc != CL_SUCCESS) return "clCreateContext: " + std::to_string(rc);
  cl_command_queue queue = ::clCreateCommandQueueWithProperties(context, device, nullptr, &rc);
  if (rc != CL_SUCCESS) return "clCreateCommandQueueWithProperties: " + std::to_string(rc);

  // A constant of this run makes the source new, so PoCL compiles and links it
  // (instead of finding it in its cache) and then dlopens the result.
  const int salt = static_cast<int>(::getpid());
  const std::string source = "__kernel void square(__global const int* in, __global int* out) {\n"
                             "  size_t i = get_global_id(0);\n"
                             "  out[i] = in[i] * in[i] + " + std::to_string(salt) + ";\n}\n";
  const char* text = source.c_str();
  cl_program program = ::clCreateProgramWithSource(context, 1, &text, nullptr, &rc);
  if (rc != CL_SUCCESS) return "clCreateProgramWithSource: " + std::to_string(rc);
  rc = ::clBuildProgram(program, 1, &device, "", nullptr, nullptr);
  if (rc != CL_SUCCESS) {
    char log[4096] = {};
    ::clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, nullptr);
    return "clBuildProgram: " + std::to_string(rc) + "\n" + log;
  }
  cl_kernel kernel = ::clCreateKernel(program, "square", &rc);
  if (rc != CL_SUCCESS) return "clCreateKernel: " + std::to_string(rc);

  constexpr size_t n = 1024;
  std::vector<cl_int> input(n), output(n, 0);
  for (size_t i = 0; i < n; ++i) input[i] = static_cast<cl_int>(i);
  cl_mem in = ::clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_int),
                               input.data(), &rc);
  cl_mem out = ::clCreateBuffer(context, CL_MEM_WRITE_ONLY, n * sizeof(cl_int), nullptr, &rc);
  ::clSetKernelArg(kernel, 0, sizeof in, &in);
  ::clSetKernelArg(kernel, 1, sizeof out, &out);
  size_t global = n;
  rc = ::clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
  if (rc != CL_SUCCESS) return "clEnqueueNDRangeKernel: " + std::to_string(rc);
  rc = ::clEnqueueReadBuffer(queue, out, CL_TRUE, 0, n * sizeof(cl_int), output.data(), 0, nullptr, nullptr);
  if (rc != CL_SUCCESS) return "clEnqueueReadBuffer: " + std::to_string(rc);
  for (size_t i = 0; i < n; ++i)
    if (output[i] != input[i] * input[i] + salt)
      return "wrong result at " + std::to_string(i) + ": " + std::to_string(output[i]);
  ::clReleaseMemObject(in);
  ::clReleaseMemObject(out);
  ::clReleaseKernel(kernel);
  ::clReleaseProgram(program);
  ::clReleaseCommandQueue(queue);
  ::clReleaseContext(context);
  return "";
}

std::string run_probe() {
  confinement_options options;
  const char* forbid = std::getenv("FERRY_CONFINEMENT_PROBE_FORBID");
  options.forbidden_files = split(forbid != nullptr ? forbid : "", ':');
  if (options.forbidden_files.empty()) return "FERRY_CONFINEMENT_PROBE_FORBID names no file";
  if (const char* user = std::getenv("FERRY_CONFINEMENT_PROBE_USER")) options.worker_user = user;
  options.limits.open_files = 1024;
  std::vector<std::string> warnings;
  std::string error;
  if (!confine_worker(options, warnings, error)) return "confine_worker: " + error;
  std::string failures = check_confined(options.forbidden_files.at(0), 1024);
  if (!failures.empty()) return failures;
  failures = opencl_work();
  // The driver ran; the files stay out of reach.
  if (failures.empty() && landlock_available()) failures = check_open(options.forbidden_files.at(0), O_RDONLY, EACCES);
  return failures;
}

[[maybe_unused]] const bool probe_ran = [] {
  const char* fd_text = std::getenv("FERRY_CONFINEMENT_PROBE_FD");
  if (fd_text == nullptr) return false;
  std::string report = run_probe();
  (void)!::write(std::atoi(fd_text), report.data(), report.size());
  ::_exit(report.rfind("skip:", 0) == 0 ? 77 : report.empty() ? 0 : 1);
}();

// Runs the probe in a fresh copy of this binary, with `environment` added.
child_report run_probe_process(const std::vector<std::string>& environment) {
  return in_child([&] {
    int fds[2];
    if (::pipe(fds) != 0) return "pipe: " + errno_name(errno);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      for (const auto& setting : environment) ::putenv(const_cast<char*>(setting.c_str()));
      ::setenv("FERRY_CONFINEMENT_PROBE_FD", std::to_string(fds[1]).c_str(), 1);
      char name[] = "ferry_unit_tests";
      char* argv[] = {name, nullptr};
      ::execv("/proc/self/exe", argv);
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string text;
    char buffer[512];
    ssize_t n;
    while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) return text + " (probe killed by signal " + std::to_string(WTERMSIG(status)) + ")";
    if (WEXITSTATUS(status) == 77 || text.rfind("skip:", 0) == 0) return text;
    if (WEXITSTATUS(status) != 0 && text.empty()) return "probe exited with " + std::to_string(WEXITSTATUS(status));
    return text;
  });
}

TEST_F(confinement_tree, a_confined_worker_builds_and_runs_a_kernel_on_pocl) {
  child_report report = run_probe_process({"FERRY_CONFINEMENT_PROBE_FORBID=" + path("secret/token") + ":" +
                                           path("secret/key")});
  if (report.skipped) GTEST_SKIP() << report.failure;
  EXPECT_EQ(report.failure, "");
}

TEST_F(confinement_tree, a_worker_confined_as_nobody_builds_and_runs_a_kernel_on_pocl) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  const std::optional<passwd> user = nobody();
  if (!user) GTEST_SKIP() << "no user 'nobody'";
  // nobody cannot write root's $HOME/.cache/pocl: the integrator sets a cache of the worker's own.
  const fs::path cache = root_ / "elsewhere" / "pocl-cache";
  fs::create_directories(cache);
  ASSERT_EQ(::chown(cache.c_str(), user->pw_uid, user->pw_gid), 0);
  child_report report = run_probe_process({"FERRY_CONFINEMENT_PROBE_FORBID=" + path("secret/token") + ":" +
                                               path("secret/key"),
                                           "FERRY_CONFINEMENT_PROBE_USER=nobody",
                                           "POCL_CACHE_DIR=" + cache.string()});
  if (report.skipped) GTEST_SKIP() << report.failure;
  EXPECT_EQ(report.failure, "");
}

}  // namespace
}  // namespace ferry::server::worker
