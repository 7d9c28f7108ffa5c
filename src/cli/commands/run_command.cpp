#include "cli/commands/run_command.hpp"

#include <sys/wait.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <ostream>

#include "cli/args.hpp"
#include "cli/process/child_process.hpp"
#include "cli/process/embedded_daemon.hpp"
#include "cli/setup/icd_loader_env.hpp"
#include "cli/setup/install_layout.hpp"
#include "cli/setup/server_config.hpp"
#include "cli/process/signal_relay.hpp"

namespace ferry::cli {

namespace {

constexpr option_spec run_options[] = {
    {"servers", 0, option_kind::value, "LIST",
     "Servers to use (host[:port],...; sets FERRY_SERVERS for PROGRAM)"},
    {"daemon-arg", 0, option_kind::repeated_value, "ARG",
     "Pass ARG to the embedded ferryd (repeatable)"},
    {"cuda", 0, option_kind::flag, "",
     "Also point PROGRAM's CUDA driver at Ferry (LD_LIBRARY_PATH, NUMBA_CUDA_DRIVER)"},
    {"help", 'h', option_kind::flag, "", "Show this help"},
};

// FERRY_LOG at info or more verbose: say what the wrapper does.
bool verbose(const environment& env) {
  auto level = env.get("FERRY_LOG").value_or("");
  return level == "info" || level == "debug" || level == "trace";
}

}  // namespace

std::string run_usage() {
  return "Usage: ferry run [--servers LIST] [--daemon-arg ARG]... [--cuda] [--] PROGRAM [ARGS...]\n"
         "\n"
         "Runs PROGRAM with the OpenCL loader pointed at Ferry (OCL_ICD_VENDORS,\n"
         "OCL_ICD_FILENAMES; FERRY_KEEP_ICD_ENV=1 leaves them alone) and FERRY_SERVERS set.\n"
         "When no server is configured (no --servers, no FERRY_SERVERS, no config file),\n"
         "starts a local ferryd for PROGRAM's lifetime:\n"
         "  ferryd --port 0 --listen 127.0.0.1 --device-type cpu [ARG...]\n"
         "With --cuda, PROGRAM's CUDA driver API (libcuda.so.1: GCC's OpenACC and OpenMP\n"
         "offload, numba-cuda, driver API programs) goes to the servers' CUDA devices too.\n"
         "SIGINT and SIGTERM are passed on to PROGRAM. Exits with PROGRAM's status\n"
         "(128 + signal number when a signal ended it).\n"
         "\n"
         "Options:\n" +
         format_options(run_options);
}

int run_command(command_args args, const command_io& io) {
  auto parsed = parse_args(args, run_options, positionals::rest);
  if (!parsed) return usage_error(io, "run", parsed.error());
  const parsed_args& options = parsed.value();
  if (options.has("help")) {
    io.out << run_usage();
    return 0;
  }
  if (options.positional.empty()) return usage_error(io, "run", "missing PROGRAM");
  auto servers = options.value("servers");
  if (servers && servers->empty())
    return usage_error(io, "run", "--servers needs a non-empty list");

  auto layout = install_layout::of_running_executable();
  if (!layout) {
    io.err << "ferry run: " << layout.error() << "\n";
    return 1;
  }

  // The daemon gets our environment as it came (it must see the native platforms); the
  // program gets it with the loader pointed at Ferry.
  const environment original = environment::current();
  environment program_env = original;
  for (const auto& [name, value] : icd_loader_variables(original, layout.value())) {
    program_env.set(name, value);
    if (std::error_code ec; !std::filesystem::exists(value, ec)) {
      io.err << "ferry run: warning: " << value << " does not exist; the program will not find "
             << "the Ferry platform\n";
    }
  }
  if (servers) program_env.set("FERRY_SERVERS", *servers);
  if (options.has("cuda")) {
    for (const auto& [name, value] : cuda_driver_variables(original, layout.value())) program_env.set(name, value);
    const auto library = layout.value().cuda_library_dir() / "libcuda.so.1";
    if (std::error_code ec; !std::filesystem::exists(library, ec))
      io.err << "ferry run: warning: " << library.string() << " does not exist; the program will not find "
             << "Ferry's CUDA driver\n";
  }

  signal_relay relay;
  std::optional<embedded_daemon> daemon;
  auto config = find_server_configuration(program_env);
  if (config.source == server_source::none) {
    daemon_options daemon_opts;
    daemon_opts.executable = layout.value().daemon();
    daemon_opts.extra_args = options.values("daemon-arg");
    auto started = embedded_daemon::start(daemon_opts, original, relay.wake_fd());
    if (!started) {
      if (started.error().interrupted) return 128 + relay.received();
      io.err << "ferry run: " << started.error().message << "\n"
             << "Configure a server instead with --servers or FERRY_SERVERS "
                "(see 'ferry run --help').\n";
      return 1;
    }
    daemon.emplace(std::move(started).value());
    program_env.set("FERRY_SERVERS", daemon->address());
    if (verbose(original)) {
      io.err << "ferry run: started " << daemon_opts.executable.string() << " on "
             << daemon->address() << " (pid " << daemon->pid() << ")\n";
    }
  } else if (!options.values("daemon-arg").empty()) {
    io.err
        << "ferry run: servers are configured, so no daemon is started; --daemon-arg is ignored\n";
  }

  pid_t child = -1;
  {
    // Signals wait until the child is registered, so none can slip between.
    signal_relay::hold hold;
    if (relay.received() != 0) return 128 + relay.received();  // the daemon stops on scope exit
    auto spawned = spawn_program(options.positional, program_env);
    if (!spawned) {
      io.err << "ferry run: " << spawned.error().message << "\n";
      return spawned.error().errno_value == ENOENT ? 127 : 126;
    }
    child = spawned.value();
    relay.forward_to(child);
  }
  int status = wait_for_exit(child);
  relay.forward_to(0);

  if (daemon) {
    int daemon_status = daemon->stop();
    bool clean = WIFEXITED(daemon_status) && WEXITSTATUS(daemon_status) == 0;
    if (!clean) {
      io.err << "ferry run: warning: the embedded ferryd " << describe_wait_status(daemon_status)
             << "\n";
    }
  }
  return shell_status(status);
}

}  // namespace ferry::cli
