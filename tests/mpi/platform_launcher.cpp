// ferry_mpi_launch: runs one command (an mpirun line) on the platform a test names.
//
//   native  the command runs as it is: the system's loader offers PoCL.
//   ferry   one ferryd starts on 127.0.0.1 --port 0; the command runs with the loader
//           pointed at Ferry alone and FERRY_SERVERS at that daemon, so every rank mpirun
//           starts (they inherit the environment) reaches its device through the daemon.
//           Afterwards the daemon gets SIGTERM and must exit with status 0.
//
// The MPI tests and the Himeno comparison run every program once per platform through
// this, so one test line covers both. Exits with the command's status, or 1 when the
// daemon fails to start or does not stop cleanly.
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "process.hpp"

namespace {

using namespace ferry::test;

void print_usage(std::FILE* to) {
  std::fprintf(to,
               "Usage: ferry_mpi_launch --platform native|ferry [--bin-dir DIR] -- COMMAND [ARGS...]\n"
               "\n"
               "Runs COMMAND (typically mpirun ... PROGRAM) natively, or through Ferry with one\n"
               "ferryd started on 127.0.0.1 --port 0 for COMMAND's lifetime and the OpenCL loader\n"
               "and FERRY_SERVERS pointed at it. Exits with COMMAND's status; 1 when the daemon\n"
               "cannot start or does not exit cleanly (status 0 after SIGTERM).\n"
               "\n"
               "Options:\n"
               "  --platform native|ferry  where COMMAND's OpenCL calls go\n"
               "  --bin-dir DIR            build tree with bin/ferryd and lib/libferry.so\n"
               "                           (default: the tree this launcher was built in)\n"
               "  --help                   this text\n");
}

enum class platform { native, ferry };

struct options {
  platform where = platform::native;
  std::string bin_dir = FERRY_BINARY_DIR;
  std::vector<std::string> command;
};

/// Parses argv; on a usage error prints why and returns nullptr.
std::unique_ptr<options> parse(int argc, char** argv, bool& help) {
  auto out = std::make_unique<options>();
  bool platform_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help") {
      help = true;
      return out;
    }
    if (arg == "--") {
      out->command.assign(argv + i + 1, argv + argc);
      break;
    }
    if ((arg == "--platform" || arg == "--bin-dir") && i + 1 >= argc) {
      std::fprintf(stderr, "ferry_mpi_launch: %s needs a value\n", argv[i]);
      return nullptr;
    }
    if (arg == "--platform") {
      const std::string_view value = argv[++i];
      if (value != "native" && value != "ferry") {
        std::fprintf(stderr, "ferry_mpi_launch: --platform is native or ferry, not '%s'\n", argv[i]);
        return nullptr;
      }
      out->where = value == "ferry" ? platform::ferry : platform::native;
      platform_given = true;
    } else if (arg == "--bin-dir") {
      out->bin_dir = argv[++i];
    } else {
      std::fprintf(stderr, "ferry_mpi_launch: unknown argument '%s' (see --help)\n", argv[i]);
      return nullptr;
    }
  }
  if (!platform_given) {
    std::fprintf(stderr, "ferry_mpi_launch: --platform native|ferry is required (see --help)\n");
    return nullptr;
  }
  if (out->command.empty()) {
    std::fprintf(stderr, "ferry_mpi_launch: no command after '--' (see --help)\n");
    return nullptr;
  }
  return out;
}

/// Runs the command with `env` applied and returns its exit code as a shell would.
int run_command(const std::vector<std::string>& command, const std::vector<env_change>& env) {
  spawn_options spawn;
  spawn.argv = command;
  spawn.env = env;
  spawn.capture_stdout = false;
  child_process child = child_process::spawn(spawn);
  const int status = *child.wait(clock::time_point::max());
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  std::fprintf(stderr, "ferry_mpi_launch: %s %s\n", command[0].c_str(), describe_wait_status(status).c_str());
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

int main(int argc, char** argv) {
  bool help = false;
  std::unique_ptr<options> opts = parse(argc, argv, help);
  if (help) {
    print_usage(stdout);
    return 0;
  }
  if (!opts) return 2;
  try {
    if (opts->where == platform::native) return run_command(opts->command, {});

    const build_paths paths{opts->bin_dir};
    daemon_process::options daemon_opts;
    daemon_opts.binary = paths.ferryd();
    daemon_opts.extra_args = {"--log-level", "warn", "--device-type", "cpu"};
    std::unique_ptr<daemon_process> daemon = daemon_process::start(daemon_opts);
    const int code = run_command(opts->command, loader_env(paths, loader_mode::ferry_only, daemon->address()));
    const int daemon_status = daemon->stop();
    if (!exited_with(daemon_status, 0)) {
      std::fprintf(stderr, "ferry_mpi_launch: ferryd %s (expected a clean exit, status 0)\n",
                   describe_wait_status(daemon_status).c_str());
      return code != 0 ? code : 1;
    }
    return code;
  } catch (const process_error& e) {
    std::fprintf(stderr, "ferry_mpi_launch: %s\n", e.what());
    return 1;
  }
}
