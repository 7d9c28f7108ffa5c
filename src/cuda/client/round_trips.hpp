// A measuring aid: how many times each driver call waited for its server.
//
// With FERRY_CUDA_ROUND_TRIPS=1 in the program's environment, Ferry's libcuda.so.1
// counts the calls that waited for an answer (a synchronization, a copy back, an
// allocation, a query), by entry point, and writes the counts to stderr when the
// program exits: what a program's time through Ferry is made of, since each such
// call costs one round trip to the server (docs/cuda.md "What a program pays").
// Off, counting costs one load of a flag.
#pragma once

#include <string>

namespace ferry::cuda {

/// Counts one wait of entry point `call` (a string literal) when counting is on.
void count_round_trip(const char* call);
/// The counts so far, one "name count" line each, most first (tests).
std::string round_trip_report();

}  // namespace ferry::cuda
