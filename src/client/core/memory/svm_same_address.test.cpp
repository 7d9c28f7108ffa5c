#include "client/core/memory/svm_same_address.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace ferry::client {
namespace {

// An address range nobody uses now: reserved and given back.
uint64_t free_range(size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  ::munmap(p, bytes);
  return reinterpret_cast<uintptr_t>(p);
}

const int server_a = 1;
const int server_b = 2;

TEST(svm_same_address, a_free_address_is_taken_and_usable) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t base = free_range(4 * page);
  const uint64_t address = base + 128;  // native allocations need not start a page
  uint8_t* block = map_at_server_address(address, 2 * page, &server_a);
  ASSERT_EQ(block, reinterpret_cast<uint8_t*>(address));
  std::memset(block, 0x5a, 2 * page);
  EXPECT_EQ(block[2 * page - 1], 0x5a);
  unmap_server_address(block, 2 * page);
}

TEST(svm_same_address, blocks_of_one_server_share_pages_and_the_last_one_unmaps) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t base = free_range(page);
  uint8_t* first = map_at_server_address(base, 64, &server_a);
  uint8_t* second = map_at_server_address(base + 128, 64, &server_a);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(map_at_server_address(base + 256, 64, &server_b), nullptr) << "another server's page";
  unmap_server_address(first, 64);
  second[0] = 1;  // still mapped for the second block
  unmap_server_address(second, 64);
  // Now free again: anybody may take it.
  uint8_t* again = map_at_server_address(base, 64, &server_b);
  EXPECT_EQ(again, reinterpret_cast<uint8_t*>(base));
  unmap_server_address(again, 64);
}

TEST(svm_same_address, an_address_the_process_uses_is_never_taken) {
  static int in_use[1024];
  EXPECT_EQ(map_at_server_address(reinterpret_cast<uintptr_t>(&in_use[512]), 16, &server_a), nullptr);
  in_use[512] = 7;  // untouched, still ours
  EXPECT_EQ(in_use[512], 7);
}

TEST(svm_same_address, unusable_ranges_are_refused) {
  EXPECT_EQ(map_at_server_address(0, 64, &server_a), nullptr);
  EXPECT_EQ(map_at_server_address(0x1000, 0, &server_a), nullptr);
  EXPECT_EQ(map_at_server_address(UINT64_MAX - 10, 64, &server_a), nullptr);
  EXPECT_EQ(map_at_server_address(uint64_t{1} << 50, 64, &server_a), nullptr) << "no user address here";
  EXPECT_EQ(map_at_server_address(0x10000000, max_same_address_size + 1, &server_a), nullptr);
}

}  // namespace
}  // namespace ferry::client
