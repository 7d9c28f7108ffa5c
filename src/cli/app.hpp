// The `ferry` command: global options and dispatch to subcommands.
#pragma once

#include <string>

#include "cli/command.hpp"

namespace ferry::cli {

/// Runs `ferry` with `args` (argv without argv[0]); returns the exit status.
int ferry_main(command_args args, const command_io& io);

std::string ferry_usage();

}  // namespace ferry::cli
