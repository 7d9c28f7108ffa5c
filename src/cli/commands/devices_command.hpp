// `ferry devices`: the servers Ferry reaches, their devices and round-trip times.
#pragma once

#include <string>

#include "cli/command.hpp"

namespace ferry::cli {

/// Exit status 0 when at least one device was listed, 1 when none, 2 for wrong usage.
int devices_command(command_args args, const command_io& io);

std::string devices_usage();

}  // namespace ferry::cli
