#include "cli/setup/install_layout.hpp"

#include <system_error>

namespace ferry::cli {

install_layout::install_layout(std::filesystem::path bin_dir)
    : bin_dir_(std::move(bin_dir).lexically_normal()) {}

outcome<install_layout> install_layout::of_running_executable() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return failure("cannot locate the ferry executable (/proc/self/exe): " + ec.message());
  return install_layout(exe.parent_path());
}

// lexically_normal turns <bin>/../etc into <root>/etc; /proc/self/exe has already
// resolved every symlink, so this names the same file as the unnormalised path.
std::filesystem::path install_layout::vendors_file() const {
  return (bin_dir_ / ".." / "etc" / "OpenCL" / "vendors" / "ferry.icd").lexically_normal();
}

std::filesystem::path install_layout::client_library() const {
  return (bin_dir_ / ".." / "lib" / "libferry.so").lexically_normal();
}

std::filesystem::path install_layout::cuda_library_dir() const {
  return (bin_dir_ / ".." / "lib" / "ferry-cuda").lexically_normal();
}

std::filesystem::path install_layout::daemon() const { return bin_dir_ / "ferryd"; }

}  // namespace ferry::cli
