// `ferry counters`: each server's link counters (clFerryGetLinkCounters) and worker
// processes (clFerryGetWorkers).
#pragma once

#include <string>

#include "cli/command.hpp"

namespace ferry::cli {

/// Exit status 0 when at least one server's counters were read, 1 when none, 2 for wrong
/// usage.
int counters_command(command_args args, const command_io& io);

std::string counters_usage();

}  // namespace ferry::cli
