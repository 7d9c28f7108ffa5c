#include "transfer/block_pipeline.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "transfer/first_device.test.hpp"

namespace ferry::transfer {
namespace {

TEST(forced_block_size, takes_bytes_and_binary_suffixes) {
  EXPECT_EQ(forced_block_size("4096", nullptr), 4096u);
  EXPECT_EQ(forced_block_size("512K", nullptr), 512u << 10);
  EXPECT_EQ(forced_block_size("4m", nullptr), 4u << 20);
  EXPECT_EQ(forced_block_size("1G", nullptr), size_t{1} << 30);
  EXPECT_EQ(forced_block_size(nullptr, nullptr), 0u);
  EXPECT_EQ(forced_block_size("", nullptr), 0u);
}

TEST(forced_block_size, refuses_what_is_no_size_with_a_reason) {
  for (const char* text : {"0", "-4", "4X", "4MB", "K", "abc", "99999999999999999999", "18014398509481984G"}) {
    const char* why = nullptr;
    EXPECT_EQ(forced_block_size(text, &why), 0u) << text;
    EXPECT_NE(why, nullptr) << text;
  }
}

TEST(block_size_for, whole_up_to_a_mebibyte_then_a_quarter_within_bounds) {
  if (std::getenv("FERRY_TRANSFER_BLOCK")) GTEST_SKIP() << "FERRY_TRANSFER_BLOCK forces the size";
  EXPECT_EQ(block_size_for(0), 1u);
  EXPECT_EQ(block_size_for(4097), 4097u);
  EXPECT_EQ(block_size_for(1u << 20), 1u << 20);
  EXPECT_EQ(block_size_for(2u << 20), 1u << 20);      // a quarter is below 1 MiB
  EXPECT_EQ(block_size_for(12u << 20), 3u << 20);     // a quarter
  EXPECT_EQ(block_size_for(size_t{1} << 30), 4u << 20);  // a quarter is above 4 MiB
}

// A buffer on the first device.
class block_pipeline : public first_device_test {
 protected:
  void SetUp() override {
    first_device_test::SetUp();
    if (HasFatalFailure()) return;
    cl_int rc = CL_SUCCESS;
    buffer_ = clCreateBuffer(context_, CL_MEM_READ_WRITE, buffer_size, nullptr, &rc);
    ASSERT_EQ(rc, CL_SUCCESS);
  }
  void TearDown() override {
    if (buffer_) clReleaseMemObject(buffer_);
    first_device_test::TearDown();
  }

  static std::vector<uint8_t> pattern(size_t size, uint8_t seed) {
    std::vector<uint8_t> bytes(size);
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 31 + (i >> 11) + seed);
    return bytes;
  }

  static constexpr size_t buffer_size = 1u << 20;
  cl_mem buffer_ = nullptr;
};

TEST_F(block_pipeline, writer_then_reader_round_trip_in_odd_blocks) {
  const size_t offset = 1000, size = 300001, block = 4099;
  const std::vector<uint8_t> bytes = pattern(size, 7);
  {
    device_writer writer(queue_, buffer_, offset, size, block);
    while (writer.written() < size) {
      const size_t n = std::min(block, size - writer.written());
      uint8_t* slot = writer.next_slot(n);
      ASSERT_NE(slot, nullptr);
      std::memcpy(slot, bytes.data() + writer.written(), n);
      ASSERT_TRUE(writer.commit(n));
    }
    ASSERT_EQ(writer.finish(), CL_SUCCESS);
  }
  std::vector<uint8_t> back(size);
  size_t pieces = 0, expected_at = 0;
  device_reader reader(queue_, buffer_, offset, size, block);
  device_reader::piece piece;
  while (reader.next(piece)) {
    ASSERT_EQ(piece.at, expected_at);
    ASSERT_LE(piece.size, block);
    std::memcpy(back.data() + piece.at, piece.data, piece.size);
    expected_at += piece.size;
    ++pieces;
  }
  EXPECT_EQ(reader.error(), CL_SUCCESS);
  EXPECT_EQ(expected_at, size);
  EXPECT_EQ(pieces, (size + block - 1) / block);
  EXPECT_EQ(back, bytes);
}

TEST_F(block_pipeline, a_writer_slot_grows_for_a_piece_larger_than_a_block) {
  // A host's single MPI message of the whole range arrives in one piece.
  const std::vector<uint8_t> bytes = pattern(200000, 3);
  device_writer writer(queue_, buffer_, 0, bytes.size(), 4096);
  uint8_t* slot = writer.next_slot(bytes.size());
  ASSERT_NE(slot, nullptr);
  std::memcpy(slot, bytes.data(), bytes.size());
  ASSERT_TRUE(writer.commit(bytes.size()));
  ASSERT_EQ(writer.finish(), CL_SUCCESS);
  std::vector<uint8_t> back(bytes.size());
  ASSERT_EQ(clEnqueueReadBuffer(queue_, buffer_, CL_TRUE, 0, back.size(), back.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(back, bytes);
}

TEST_F(block_pipeline, a_writer_refuses_more_than_its_range_or_its_slot) {
  device_writer writer(queue_, buffer_, 0, 100, 64);
  ASSERT_NE(writer.next_slot(64), nullptr);
  EXPECT_FALSE(writer.commit(65));  // more than the slot holds
  EXPECT_EQ(writer.error(), CL_INVALID_VALUE);
  device_writer second(queue_, buffer_, 0, 100, 128);
  ASSERT_NE(second.next_slot(128), nullptr);
  EXPECT_FALSE(second.commit(101));  // more than the range
  EXPECT_EQ(second.finish(), CL_INVALID_VALUE);
}

TEST_F(block_pipeline, a_read_past_the_buffer_reports_the_platforms_error) {
  device_reader reader(queue_, buffer_, buffer_size - 10, 100, 64);
  device_reader::piece piece;
  EXPECT_FALSE(reader.next(piece));
  EXPECT_EQ(reader.error(), CL_INVALID_VALUE);
}

TEST_F(block_pipeline, an_empty_range_yields_nothing) {
  device_reader reader(queue_, buffer_, 0, 0, 1);
  device_reader::piece piece;
  EXPECT_FALSE(reader.next(piece));
  EXPECT_EQ(reader.error(), CL_SUCCESS);
  device_writer writer(queue_, buffer_, 0, 0, 1);
  EXPECT_EQ(writer.finish(), CL_SUCCESS);
}

}  // namespace
}  // namespace ferry::transfer
