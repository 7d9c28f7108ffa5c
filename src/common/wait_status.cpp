#include "common/wait_status.hpp"

#include <sys/wait.h>

#include <cstring>

namespace ferry {

std::string describe_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    const char* abbreviation = ::sigabbrev_np(sig);
    const char* name = ::strsignal(sig);
    return "killed by signal " + std::to_string(sig) + " (SIG" + (abbreviation ? abbreviation : "?") + ", " +
           (name ? name : "?") + ")";
  }
  return "ended with wait status " + std::to_string(wait_status);
}

}  // namespace ferry
