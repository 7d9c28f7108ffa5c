// Human-readable numbers for `ferry devices` and `ferry counters`.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <string>

namespace ferry::cli {

/// "512 B", "64.0 KiB", "7.61 GiB": binary units, three significant digits.
std::string format_bytes(std::uint64_t bytes);

/// "CPU", "GPU", "accelerator", "custom", joined with '+' when several bits are set.
std::string format_device_type(cl_device_type type);

/// Nanoseconds as microseconds: "48.2 µs", or "1234 µs" from 1000 µs on.
std::string format_microseconds(double nanoseconds);

/// Milliseconds as the two largest units that matter: "850 ms", "12.3 s",
/// "5 min 03 s", "2 h 05 min", "3 d 04 h".
std::string format_duration_ms(std::uint64_t milliseconds);

}  // namespace ferry::cli
