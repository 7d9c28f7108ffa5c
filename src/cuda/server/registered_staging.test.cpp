// The page-locked blocks of copies back on the bulk stream: reused by size, kept
// within their limit, and still readable after their context's pool retired.
#include "cuda/server/registered_staging.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "cuda/server/testing/fake_driver.hpp"

namespace ferry::cuda {
namespace {

#ifdef FERRY_FAKE_CUDA_PATH

/// A context of the stand-in driver, current on this thread while it lives.
class registered_staging_test : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(d.cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(d.cuCtxCreate(&context, 0, 0), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (context) d.cuCtxDestroy(context);
  }
  driver& d = testing::fake_driver();
  CUcontext context = nullptr;
};

TEST_F(registered_staging_test, a_block_comes_back_and_is_used_again_for_its_size) {
  auto pool = std::make_shared<registered_staging>(d, size_t{64} << 20);
  CUresult rc = CUDA_ERROR_UNKNOWN;
  auto block = pool->take(3 << 20, rc);
  ASSERT_EQ(rc, CUDA_SUCCESS);
  ASSERT_NE(block, nullptr);
  std::memset(block.get(), 0x5a, 3 << 20);
  uint8_t* first = block.get();
  block.reset();
  EXPECT_EQ(pool->spare_bytes(), size_t{4} << 20);  // blocks are powers of two from 1 MiB
  auto again = pool->take(4 << 20, rc);
  EXPECT_EQ(again.get(), first);
  auto other = pool->take(100, rc);
  EXPECT_NE(other.get(), first);
  EXPECT_EQ(pool->blocks_mapped(), 2u);
  // The driver pinned each block once: pinning it again is refused.
  EXPECT_EQ(d.cuMemHostRegister(first, 4 << 20, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  pool->retire();
}

TEST_F(registered_staging_test, blocks_beyond_the_limit_are_unpinned_by_the_next_take) {
  auto pool = std::make_shared<registered_staging>(d, size_t{1} << 20);
  CUresult rc;
  auto a = pool->take(1 << 20, rc);
  ASSERT_EQ(rc, CUDA_SUCCESS);
  auto b = pool->take(1 << 20, rc);
  ASSERT_EQ(rc, CUDA_SUCCESS);
  void* surplus = b.get();
  a.reset();
  b.reset();  // over the limit: waits for a thread with the context current
  EXPECT_EQ(pool->spare_bytes(), size_t{1} << 20);
  EXPECT_EQ(pool->blocks_mapped(), 2u);
  auto c = pool->take(1 << 20, rc);
  EXPECT_EQ(pool->blocks_mapped(), 1u);
  EXPECT_EQ(d.cuMemHostUnregister(surplus), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  pool->retire();
}

TEST_F(registered_staging_test, a_block_out_when_its_pool_retires_stays_readable_until_returned) {
  auto pool = std::make_shared<registered_staging>(d, size_t{64} << 20);
  CUresult rc;
  auto idle = pool->take(1 << 20, rc);
  auto held = pool->take(2 << 20, rc);
  idle.reset();
  std::memset(held.get(), 7, 2 << 20);
  pool->retire();  // the context is about to go
  EXPECT_EQ(pool->spare_bytes(), 0u);
  EXPECT_EQ(pool->blocks_mapped(), 1u);
  ASSERT_EQ(d.cuCtxDestroy(context), CUDA_SUCCESS);
  context = nullptr;
  EXPECT_EQ(held.get()[(2 << 20) - 1], 7);  // what a resend would read
  held.reset();
  EXPECT_EQ(pool->blocks_mapped(), 0u);
}

#endif  // FERRY_FAKE_CUDA_PATH

}  // namespace
}  // namespace ferry::cuda
