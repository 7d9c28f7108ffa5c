#include "cuda/server/device_catalog.hpp"
#include "cuda/server/testing/fake_driver.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace ferry::cuda {
namespace {

#ifdef FERRY_FAKE_CUDA_PATH

using testing::fake_driver;

/// Lists the fake's devices with FERRY_FAKE_CUDA_DEVICES set to `count`, then puts back one.
std::vector<cuda_device_facts> list_with(const char* count, std::string& why) {
  setenv("FERRY_FAKE_CUDA_DEVICES", count, 1);
  auto devices = list_cuda_devices(fake_driver(), why);
  setenv("FERRY_FAKE_CUDA_DEVICES", "1", 1);
  fake_driver().cuInit(0);
  unsetenv("FERRY_FAKE_CUDA_DEVICES");
  return devices;
}

TEST(cuda_device_catalog, describes_each_device_of_the_fake) {
  std::string why;
  auto devices = list_with("2", why);
  ASSERT_EQ(devices.size(), 2u) << why;
  EXPECT_TRUE(why.empty()) << why;
  for (int i = 0; i < 2; ++i) {
    const cuda_device_facts& d = devices[i];
    EXPECT_EQ(d.ordinal, i);
    EXPECT_EQ(d.name, "Ferry fake CUDA device " + std::to_string(i));
    EXPECT_EQ(d.uuid[0], 0xfe);
    EXPECT_EQ(d.uuid[1], 0x77);
    EXPECT_EQ(d.uuid[2], i);
    EXPECT_EQ(d.uuid[15], 0);
    EXPECT_EQ(d.total_memory, std::uint64_t{1} << 30);
    ASSERT_EQ(d.attributes.size(), static_cast<std::size_t>(CU_DEVICE_ATTRIBUTE_MAX));
    EXPECT_EQ(d.attributes[0], 0);
    EXPECT_EQ(d.attributes[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK], 1024);
    EXPECT_EQ(d.attributes[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z], 64);
    EXPECT_EQ(d.attributes[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X], 2147483647);
    EXPECT_EQ(d.attributes[CU_DEVICE_ATTRIBUTE_WARP_SIZE], 32);
    EXPECT_EQ(d.attributes[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR], 8);
    EXPECT_EQ(d.attributes[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR], 0);
    EXPECT_EQ(d.attributes[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR], 2048);
    EXPECT_EQ(d.attributes[CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY], 0);
    EXPECT_EQ(d.attributes[CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED], 0);
  }
}

TEST(cuda_device_catalog, no_device_is_an_empty_list_with_a_reason) {
  std::string why;
  auto devices = list_with("0", why);
  EXPECT_TRUE(devices.empty());
  EXPECT_EQ(why, "no CUDA device");
}

#else

TEST(cuda_device_catalog, DISABLED_needs_the_fake_driver) {}

#endif

}  // namespace
}  // namespace ferry::cuda
