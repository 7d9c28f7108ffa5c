// ferry_mpi_launch: runs one command (an mpirun line) on the platform a test names.
//
//   native  the command runs as it is: the system's loader offers PoCL.
//   ferry   one ferryd starts on 127.0.0.1 --port 0; the command runs with the loader
//           pointed at Ferry alone and FERRY_SERVERS at that daemon, so every rank mpirun
//           starts (they inherit the environment) reaches its device through the daemon.
//           Afterwards the daemon gets SIGTERM and must exit with status 0. With
//           --daemons 2 two start, and rank r takes device r % 2: one server each.
//   mixed   as ferry, with the loader offering Ferry and the native platforms, and
//           FERRY_MPI_TEST_PLATFORMS=ferry,native: even ranks on Ferry, odd ones on PoCL.
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
               "Usage: ferry_mpi_launch --platform native|ferry|mixed [--daemons N] [--bin-dir DIR] -- COMMAND [ARGS...]\n"
               "\n"
               "Runs COMMAND (typically mpirun ... PROGRAM) natively, or through Ferry with one\n"
               "ferryd started on 127.0.0.1 --port 0 for COMMAND's lifetime and the OpenCL loader\n"
               "and FERRY_SERVERS pointed at it. Exits with COMMAND's status; 1 when the daemon\n"
               "cannot start or does not exit cleanly (status 0 after SIGTERM).\n"
               "\n"
               "Options:\n"
               "  --platform native|ferry|mixed\n"
               "                           where COMMAND's OpenCL calls go; mixed: even ranks on\n"
               "                           Ferry, odd ones on the native platform\n"
               "  --daemons N              ferryd processes for ferry and mixed (1 or 2, default 1);\n"
               "                           rank r takes device r %% N\n"
               "  --bin-dir DIR            build tree with bin/ferryd and lib/libferry.so\n"
               "                           (default: the tree this launcher was built in)\n"
               "  --help                   this text\n");
}

enum class platform { native, ferry, mixed };

struct options {
  platform where = platform::native;
  std::string bin_dir = FERRY_BINARY_DIR;
  int daemons = 1;
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
    if ((arg == "--platform" || arg == "--bin-dir" || arg == "--daemons") && i + 1 >= argc) {
      std::fprintf(stderr, "ferry_mpi_launch: %s needs a value\n", argv[i]);
      return nullptr;
    }
    if (arg == "--platform") {
      const std::string_view value = argv[++i];
      if (value != "native" && value != "ferry" && value != "mixed") {
        std::fprintf(stderr, "ferry_mpi_launch: --platform is native, ferry or mixed, not '%s'\n", argv[i]);
        return nullptr;
      }
      out->where = value == "ferry" ? platform::ferry : value == "mixed" ? platform::mixed : platform::native;
      platform_given = true;
    } else if (arg == "--daemons") {
      const std::string_view value = argv[++i];
      if (value != "1" && value != "2") {
        std::fprintf(stderr, "ferry_mpi_launch: --daemons is 1 or 2, not '%s'\n", argv[i]);
        return nullptr;
      }
      out->daemons = value == "2" ? 2 : 1;
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
    std::vector<std::unique_ptr<daemon_process>> daemons;
    std::string servers;
    for (int i = 0; i < opts->daemons; ++i) {
      daemons.push_back(daemon_process::start(daemon_opts));
      servers += (i ? "," : "") + daemons.back()->address();
    }
    const bool mixed = opts->where == platform::mixed;
    std::vector<env_change> env =
        loader_env(paths, mixed ? loader_mode::ferry_and_native : loader_mode::ferry_only, servers);
    if (mixed) env.push_back({"FERRY_MPI_TEST_PLATFORMS", "ferry,native"});
    const int code = run_command(opts->command, env);
    int result = code;
    for (auto& daemon : daemons) {
      const int daemon_status = daemon->stop();
      if (!exited_with(daemon_status, 0)) {
        std::fprintf(stderr, "ferry_mpi_launch: ferryd %s (expected a clean exit, status 0)\n",
                     describe_wait_status(daemon_status).c_str());
        if (result == 0) result = 1;
      }
    }
    return result;
  } catch (const process_error& e) {
    std::fprintf(stderr, "ferry_mpi_launch: %s\n", e.what());
    return 1;
  }
}
