// The CPU stand-in driver (tests/cuda/fake_driver) as the unit tests load it:
// once per process, through cuGetProcAddress like the daemon, no device
// initialized yet. Only where the build names it (FERRY_FAKE_CUDA_PATH).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "cuda/server/driver.hpp"

namespace ferry::cuda::testing {

#ifdef FERRY_FAKE_CUDA_PATH
inline driver& fake_driver() {
  static driver* d = [] {
    std::string why;
    auto loaded = driver::load_from(FERRY_FAKE_CUDA_PATH, symbol_lookup::proc_address, why);
    if (!loaded) ADD_FAILURE() << why;
    return loaded.release();
  }();
  return *d;
}
#endif

}  // namespace ferry::cuda::testing
