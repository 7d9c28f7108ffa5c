// Passing SIGINT and SIGTERM on to the program that `ferry run` wraps.
#pragma once

#include <signal.h>
#include <sys/types.h>

namespace ferry::cli {

/// While alive, catches SIGINT and SIGTERM: records the first one, wakes wake_fd(), and
/// sends each to the target child, if any. A signal the terminal generated (Ctrl-C) is not
/// sent again: it already reached the child, which shares our process group. Only one
/// relay may exist at a time.
class signal_relay {
 public:
  signal_relay();
  ~signal_relay();
  signal_relay(const signal_relay&) = delete;
  signal_relay& operator=(const signal_relay&) = delete;

  /// Readable once a signal has arrived; for poll().
  int wake_fd() const;
  /// The first signal caught, or 0.
  int received() const;
  /// Where later signals go; 0 for nobody.
  void forward_to(pid_t pid);

  /// Holds SIGINT and SIGTERM back in the calling thread while alive, so a child can be
  /// started and registered with forward_to() without losing a signal in between.
  class hold {
   public:
    hold();
    ~hold();
    hold(const hold&) = delete;
    hold& operator=(const hold&) = delete;

   private:
    sigset_t previous_;
  };

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
  int pipe_[2] = {-1, -1};
};

}  // namespace ferry::cli
