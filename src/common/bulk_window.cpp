#include "common/bulk_window.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/parallel_copy.hpp"

namespace ferry {

namespace {

// Shared (not FUTEX_PRIVATE_FLAG) futexes: the waiter and the waker are in
// different processes that map the same memfd.
void futex_wait(std::atomic<uint32_t>* word, uint32_t seen, int timeout_ms) {
  timespec timeout{timeout_ms / 1000, static_cast<long>(timeout_ms % 1000) * 1000000};
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, seen, &timeout, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

std::string system_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

static_assert(std::atomic<uint32_t>::is_always_lock_free, "the counter is shared between processes");

bulk_window::bulk_window(unique_fd fd, uint8_t* base, uint64_t mapped, uint32_t slots, uint64_t slot_size)
    : fd_(std::move(fd)), base_(base), mapped_(mapped), slots_(slots), slot_size_(slot_size) {}

bulk_window::~bulk_window() { ::munmap(base_, mapped_); }

std::atomic<uint32_t>& bulk_window::released() const {
  return *reinterpret_cast<std::atomic<uint32_t>*>(base_);
}

std::unique_ptr<bulk_window> bulk_window::create(uint32_t slots, uint64_t slot_size, std::string& why) {
  if (slots == 0 || slots > max_slots || slot_size < min_slot_size) {
    why = "bad window shape";
    return nullptr;
  }
  unique_fd fd(::memfd_create("ferry-bulk-window", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) {
    why = system_error("memfd_create");
    return nullptr;
  }
  const uint64_t size = header_size + uint64_t{slots} * slot_size;
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) {
    why = system_error("ftruncate");
    return nullptr;
  }
  // The daemon checks these: without F_SEAL_SHRINK the client could truncate
  // the file under the daemon's copy.
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    why = system_error("sealing the memfd");
    return nullptr;
  }
  // Populated now, so the first large write does not pay a page fault per 4 KiB.
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd.get(), 0);
  if (base == MAP_FAILED) {
    why = system_error("mmap");
    return nullptr;
  }
  return std::unique_ptr<bulk_window>(
      new bulk_window(std::move(fd), static_cast<uint8_t*>(base), size, slots, slot_size));
}

std::unique_ptr<bulk_window> bulk_window::adopt(unique_fd fd, uint32_t slots, uint64_t slot_size,
                                                uint64_t max_slot_size, std::string& why) {
  if (slots == 0 || slots > max_slots) {
    why = "a window of " + std::to_string(slots) + " slots (1 to " + std::to_string(max_slots) + " allowed)";
    return nullptr;
  }
  if (slot_size < min_slot_size || slot_size > max_slot_size) {
    why = "window slots of " + std::to_string(slot_size) + " bytes (" + std::to_string(min_slot_size) + " to " +
          std::to_string(max_slot_size) + " allowed)";
    return nullptr;
  }
  int seals = ::fcntl(fd.get(), F_GET_SEALS);
  if (seals < 0) {
    why = "the window's descriptor is not a memfd";
    return nullptr;
  }
  if ((seals & F_SEAL_SHRINK) == 0) {
    why = "the window's memfd is not sealed against shrinking";
    return nullptr;
  }
  const uint64_t size = header_size + uint64_t{slots} * slot_size;
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0 || static_cast<uint64_t>(st.st_size) < size) {
    why = "the window's memfd holds fewer than the " + std::to_string(size) + " bytes its slots need";
    return nullptr;
  }
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd.get(), 0);
  if (base == MAP_FAILED) {
    why = system_error("mapping the window");
    return nullptr;
  }
  // Mapped, the descriptor is no longer needed (the mapping keeps the memory).
  return std::unique_ptr<bulk_window>(new bulk_window(unique_fd(), static_cast<uint8_t*>(base), size, slots, slot_size));
}

bool bulk_window::wait_for_slot(int timeout_ms, uint32_t& index) {
  std::atomic<uint32_t>& counter = released();
  // Unsigned differences stay right when the counters wrap.
  uint32_t seen = counter.load(std::memory_order_acquire);
  if (sent_ - seen >= slots_) {
    futex_wait(&counter, seen, timeout_ms);
    seen = counter.load(std::memory_order_acquire);
    if (sent_ - seen >= slots_) return false;
  }
  index = sent_ % slots_;
  return true;
}

bulk_window::fill bulk_window::fill_next_slot(const uint8_t* data, uint64_t size, const std::function<bool()>& go_on,
                                             uint32_t& index) {
  while (!wait_for_slot(slot_wait_ms, index)) {
    if (!releases_in_range()) return fill::out_of_turn;
    if (!go_on()) return fill::stopped;
  }
  copy_bytes(slot(index), data, size);  // large: split over helper threads
  return fill::filled;
}

bool bulk_window::releases_in_range() const {
  // Unsigned differences stay right when the counters wrap.
  return sent_ - released().load(std::memory_order_acquire) <= slots_;
}

void bulk_window::release_slot() {
  released().fetch_add(1, std::memory_order_acq_rel);
  // One system call per slot (megabytes): cheaper than tracking whether the
  // client sleeps.
  futex_wake_all(&released());
}

bool write_with_fds(int socket, const void* data, size_t size, const int* passed, size_t count) {
  alignas(cmsghdr) char control[CMSG_SPACE(max_passed_fds * sizeof(int))] = {};
  if (count == 0 || count > max_passed_fds) return false;
  iovec piece{const_cast<void*>(data), size};
  msghdr message{};
  message.msg_iov = &piece;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = CMSG_SPACE(count * sizeof(int));
  cmsghdr* c = CMSG_FIRSTHDR(&message);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(count * sizeof(int));
  std::memcpy(CMSG_DATA(c), passed, count * sizeof(int));
  ssize_t n;
  do {
    n = ::sendmsg(socket, &message, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return false;
  // The descriptors went with the first byte; the rest, if any, goes plain.
  return static_cast<size_t>(n) == size ||
         write_all(socket, static_cast<const uint8_t*>(data) + n, size - static_cast<size_t>(n));
}

bool read_with_fd(int socket, void* data, size_t size, unique_fd& received, bool& extra) {
  extra = false;
  auto* p = static_cast<uint8_t*>(data);
  // Room for a few descriptors, so that a client sending more than one is
  // caught (and its descriptors closed) rather than cut short by the kernel.
  alignas(cmsghdr) char control[CMSG_SPACE(max_passed_fds * sizeof(int))];
  while (size > 0) {
    iovec piece{p, size};
    msghdr message{};
    message.msg_iov = &piece;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (message.msg_flags & MSG_CTRUNC) extra = true;
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        if (!received.valid() && count == 1 && !extra)
          received.reset(fd);
        else {
          ::close(fd);
          extra = true;
        }
      }
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  if (extra) received.reset();
  return true;
}

}  // namespace ferry
