// Where Ferry's files are, found from the running `ferry` executable.
#pragma once

#include <filesystem>

#include "cli/outcome.hpp"

namespace ferry::cli {

/// The build or install tree the `ferry` executable belongs to (bin/, lib/, etc/).
class install_layout {
 public:
  /// `bin_dir` is the directory that holds `ferry`.
  explicit install_layout(std::filesystem::path bin_dir);

  /// The layout of the running executable, located through /proc/self/exe.
  static outcome<install_layout> of_running_executable();

  const std::filesystem::path& bin_dir() const { return bin_dir_; }
  /// <bin>/../etc/OpenCL/vendors/ferry.icd: the ICD file that names only libferry.
  std::filesystem::path vendors_file() const;
  /// <bin>/../lib/libferry.so
  std::filesystem::path client_library() const;
  /// <bin>/../lib/ferry-cuda: the directory of Ferry's libcuda.so.1
  /// (LD_LIBRARY_PATH selects it in place of NVIDIA's driver).
  std::filesystem::path cuda_library_dir() const;
  /// <bin>/ferryd
  std::filesystem::path daemon() const;

 private:
  std::filesystem::path bin_dir_;
};

}  // namespace ferry::cli
