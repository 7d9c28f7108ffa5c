// What a child process's wait status says, in words: the daemon's log of a
// session worker's end, the `ferry` command's of its embedded daemon, the
// tests' failure messages.
#pragma once

#include <string>

namespace ferry {

/// "exited with status 3", "killed by signal 11 (SIGSEGV, Segmentation fault)".
std::string describe_wait_status(int wait_status);

}  // namespace ferry
