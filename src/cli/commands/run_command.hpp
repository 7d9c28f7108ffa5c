// `ferry run`: run a program with Ferry set up, starting a local ferryd when no server is
// configured (the embedded default).
#pragma once

#include <string>

#include "cli/command.hpp"

namespace ferry::cli {

/// The program's exit status (128 + signal when a signal ended it); 1 when the embedded
/// daemon could not start; 2 for wrong usage; 126/127 when the program cannot be run.
int run_command(command_args args, const command_io& io);

std::string run_usage();

}  // namespace ferry::cli
