#include "daemon.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace ferry::test {
namespace {

std::vector<std::unique_ptr<daemon>>& suite_daemon_slots() {
  static std::vector<std::unique_ptr<daemon>> slots;
  return slots;
}

std::map<std::string, child_main, std::less<>>& child_registry() {
  static std::map<std::string, child_main, std::less<>> registry;
  return registry;
}

constexpr std::string_view child_flag = "--ferry-child=";

}  // namespace

build_paths binary_paths() {
  if (const char* dir = std::getenv("FERRY_BINARY_DIR"); dir != nullptr && *dir != '\0')
    return {dir};
  return {FERRY_BINARY_DIR};
}

daemon::daemon(std::vector<std::string> extra_args, std::string log_path, std::vector<env_change> env) {
  daemon_process::options opts;
  opts.binary = binary_paths().ferryd();
  opts.extra_args = std::move(extra_args);
  opts.stderr_path = std::move(log_path);
  opts.env = std::move(env);
  try {
    process_ = daemon_process::start(opts);
  } catch (const process_error& e) {
    ADD_FAILURE() << "cannot start ferryd: " << e.what();
  }
}

daemon::~daemon() { stop(); }

std::uint16_t daemon::port() const { return process_ ? process_->port() : 0; }

pid_t daemon::pid() const { return process_ ? process_->pid() : -1; }

std::string daemon::address() const { return process_ ? process_->address() : std::string(); }

void daemon::stop() {
  if (!process_ || process_->stopped()) return;
  try {
    const int status = process_->stop();
    EXPECT_TRUE(exited_with(status, 0))
        << "ferryd (pid " << process_->pid() << ") " << describe_wait_status(status)
        << " after SIGTERM; expected a clean exit with status 0";
  } catch (const process_error& e) {
    ADD_FAILURE() << e.what();
  }
}

void set_ferry_env(loader_mode mode, const std::string& servers) {
  try {
    apply_env(loader_env(binary_paths(), mode, servers));
  } catch (const process_error& e) {
    ADD_FAILURE() << "cannot point the OpenCL loader at Ferry: " << e.what();
  }
}

daemon* suite_daemon() { return suite_daemon_slots().empty() ? nullptr : suite_daemon_slots().front().get(); }

std::vector<daemon*> suite_daemons() {
  std::vector<daemon*> out;
  for (auto& d : suite_daemon_slots()) out.push_back(d.get());
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

child_registration::child_registration(const char* name, child_main main) {
  child_registry().emplace(name, main);
}

child_process spawn_self(std::string_view name, std::vector<std::string> args,
                         std::vector<env_change> env, bool pipe_stdin) {
  spawn_options opts;
  opts.argv = {self_executable(), std::string(child_flag) + std::string(name)};
  opts.argv.insert(opts.argv.end(), args.begin(), args.end());
  opts.env = std::move(env);
  opts.capture_stdout = true;
  opts.pipe_stdin = pipe_stdin;
  return child_process::spawn(opts);
}

void expect_child_passes(const char* name, std::chrono::seconds timeout, std::vector<env_change> env) {
  const auto start = std::chrono::steady_clock::now();
  std::string out;
  std::optional<int> status;
  try {
    child_process child = spawn_self(name, {}, std::move(env));
    out = child.read_all(start + timeout);
    status = child.wait(start + timeout);
    if (!status) child.kill_and_wait();
  } catch (const process_error& e) {
    ADD_FAILURE() << e.what();
    return;
  }
  EXPECT_EQ(status, std::optional<int>(0)) << out;
  EXPECT_NE(out.find("PASS"), std::string::npos) << out;
  std::printf("%s", out.c_str());
}

std::optional<int> run_child_if_requested(int argc, char** argv) {
  if (argc < 2 || !std::string_view(argv[1]).starts_with(child_flag)) return std::nullopt;
  const std::string_view name = std::string_view(argv[1]).substr(child_flag.size());
  auto it = child_registry().find(name);
  if (it == child_registry().end()) {
    std::fprintf(stderr, "unknown child entry point \"%.*s\"\n", static_cast<int>(name.size()),
                 name.data());
    return 125;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  const int rc = it->second(args);
  std::fflush(stdout);
  return rc;
}

void suite_environment::SetUp() {
  const suite_config config = this_suite();
  if (self_check) return;
  std::string servers;
  if (config.start_daemon) {
    for (int i = 0; i < config.daemon_count; ++i) {
      suite_daemon_slots().push_back(std::make_unique<daemon>(config.daemon_args, std::string(), config.daemon_env));
      ASSERT_TRUE(suite_daemon_slots().back()->started()) << "no ferryd, no integration tests";
      if (!servers.empty()) servers += ',';
      servers += suite_daemon_slots().back()->address();
    }
  }
  if (config.set_loader_env) {
    ASSERT_TRUE(config.start_daemon) << "a suite that points the loader at Ferry needs a daemon";
    set_ferry_env(config.loader, servers);
  }
}

void suite_environment::TearDown() {
  // Every test has released its objects by now; the daemon must still shut down cleanly
  // while this process keeps its connection open.
  for (auto& slot : suite_daemon_slots()) slot->stop();
  suite_daemon_slots().clear();
}

}  // namespace ferry::test
