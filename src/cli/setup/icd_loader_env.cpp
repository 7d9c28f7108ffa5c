#include "cli/setup/icd_loader_env.hpp"

#include <cstdlib>

namespace ferry::cli {

variable_list icd_loader_variables(const environment& env, const install_layout& layout) {
  if (env.get("FERRY_KEEP_ICD_ENV") == "1") return {};
  return {
      {"OCL_ICD_VENDORS", layout.vendors_file().string()},
      {"OCL_ICD_FILENAMES", layout.client_library().string()},
  };
}

variable_list cuda_driver_variables(const environment& env, const install_layout& layout) {
  const std::string dir = layout.cuda_library_dir().string();
  std::string path = dir;
  if (auto existing = env.get("LD_LIBRARY_PATH"); existing && !existing->empty()) path += ":" + std::string(*existing);
  return {
      {"LD_LIBRARY_PATH", path},
      {"NUMBA_CUDA_DRIVER", dir + "/libcuda.so.1"},
  };
}

void set_in_process(const variable_list& variables) {
  for (const auto& [name, value] : variables) ::setenv(name.c_str(), value.c_str(), 1);
}

}  // namespace ferry::cli
