// The pinned blocks a migration's source reads into, on the host's OpenCL
// (PoCL in CI): a read fills a block, unmap() gives it back, and a block
// comes again for the next migration of its size class.
#include "server/native/pinned_pool.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "server/testing/host_catalog.hpp"

namespace ferry::server::native {
namespace {

class pinned_pool_test : public ::testing::Test {
 protected:
  void SetUp() override {
    const device_catalog* catalog = testing::host_catalog();
    if (catalog == nullptr || catalog->size() == 0) GTEST_SKIP() << "no OpenCL device on this host";
    device_ = catalog->find(0)->id;
    cl_int rc = CL_SUCCESS;
    context_ = api_.clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &rc);
    ASSERT_EQ(rc, CL_SUCCESS);
    queue_ = api_.clCreateCommandQueueWithProperties(context_, device_, nullptr, &rc);
    ASSERT_EQ(rc, CL_SUCCESS);
  }
  void TearDown() override {
    if (queue_) api_.clReleaseCommandQueue(queue_);
    if (context_) api_.clReleaseContext(context_);
  }

  const api& api_ = real_api();
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
};

TEST_F(pinned_pool_test, a_read_into_a_block_lands_and_the_block_comes_again_once_given_back) {
  auto pool = pinned_pool::create(api_, context_, device_);
  ASSERT_TRUE(pool);
  std::vector<uint8_t> bytes(100000);
  std::iota(bytes.begin(), bytes.end(), uint8_t{3});
  cl_int rc = CL_SUCCESS;
  cl_mem buffer = api_.clCreateBuffer(context_, CL_MEM_COPY_HOST_PTR, bytes.size(), bytes.data(), &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  mapping block;
  ASSERT_TRUE(pool->take(bytes.size() - 10, block));
  ASSERT_TRUE(block.pool);
  EXPECT_EQ(block.pool_block, size_t{128} << 10) << "a power of two at least the size";
  ASSERT_EQ(api_.clEnqueueReadBuffer(queue_, buffer, CL_TRUE, 10, bytes.size() - 10, block.pointer, 0, nullptr,
                                     nullptr),
            CL_SUCCESS);
  EXPECT_EQ(std::memcmp(block.pointer, bytes.data() + 10, bytes.size() - 10), 0);
  void* first = block.pointer;
  EXPECT_EQ(unmap(api_, block, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_FALSE(block) << "a mapping is empty once given back";
  EXPECT_EQ(pool->kept(), 1u);
  mapping again;
  ASSERT_TRUE(pool->take(70000, again));
  EXPECT_EQ(again.pointer, first) << "the kept block of the size class comes again";
  EXPECT_EQ(pool->kept(), 0u);
  mapping other;
  ASSERT_TRUE(pool->take(1000, other));
  EXPECT_EQ(other.pool_block, pinned_pool::smallest_block);
  EXPECT_NE(other.pointer, first);
  unmap(api_, again, 0, nullptr, nullptr);
  unmap(api_, other, 0, nullptr, nullptr);
  EXPECT_EQ(pool->kept(), 2u);
  api_.clReleaseMemObject(buffer);
}

TEST_F(pinned_pool_test, sizes_it_does_not_serve_are_refused_for_a_map_instead) {
  auto pool = pinned_pool::create(api_, context_, device_);
  ASSERT_TRUE(pool);
  mapping out;
  EXPECT_FALSE(pool->take(0, out));
  EXPECT_FALSE(pool->take(pinned_pool::largest_block + 1, out));
  EXPECT_FALSE(out);
}

TEST_F(pinned_pool_test, blocks_beyond_what_is_kept_are_released_and_the_pool_outlives_its_owner) {
  std::vector<mapping> blocks(pinned_pool::kept_bytes / pinned_pool::largest_block + 2);
  {
    auto pool = pinned_pool::create(api_, context_, device_);
    ASSERT_TRUE(pool);
  ASSERT_TRUE(pool);
    for (mapping& m : blocks) ASSERT_TRUE(pool->take(pinned_pool::largest_block, m));
  }
  // The owner dropped the pool; the blocks still out keep it until they come back.
  for (mapping& m : blocks) std::memset(m.pointer, 1, 64);
  std::weak_ptr<pinned_pool> pool = blocks.front().pool;
  for (mapping& m : blocks) EXPECT_EQ(unmap(api_, m, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_TRUE(pool.expired());
}

}  // namespace
}  // namespace ferry::server::native
