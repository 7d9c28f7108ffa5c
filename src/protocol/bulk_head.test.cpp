// The bulk frame's head: what both ends write before a chunk, and the checks
// that keep a hostile peer's chunk inside its transfer.
#include "protocol/bulk_head.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace ferry::protocol {
namespace {

TEST(bulk_head, a_stored_head_loads_back_with_its_chunk_size) {
  uint8_t head[bulk_head_size];
  store_bulk_head(head, bulk_data{7, 4096, 1 << 20}, 512);
  bulk_data prefix;
  uint64_t chunk = 0;
  std::string why;
  ASSERT_TRUE(load_bulk_head(head, prefix, chunk, why)) << why;
  EXPECT_EQ(prefix, (bulk_data{7, 4096, 1 << 20}));
  EXPECT_EQ(chunk, 512u);
}

TEST(bulk_head, an_offset_whose_sum_with_the_chunk_wraps_is_refused) {
  // offset + chunk wraps to a small number: a naive `offset + chunk <= total`
  // passes it and writes before the destination.
  uint8_t head[bulk_head_size];
  store_bulk_head(head, bulk_data{1, UINT64_MAX - 15, 4096}, 64);
  bulk_data prefix;
  uint64_t chunk = 0;
  std::string why;
  EXPECT_FALSE(load_bulk_head(head, prefix, chunk, why));
  EXPECT_NE(why.find("runs past"), std::string::npos) << why;
  EXPECT_FALSE(chunk_within(UINT64_MAX - 15, 64, 4096));
  EXPECT_TRUE(chunk_within(4032, 64, 4096));
  EXPECT_FALSE(chunk_within(4033, 64, 4096));
  EXPECT_TRUE(chunk_within(4096, 0, 4096));
}

TEST(bulk_head, other_messages_flags_and_oversize_chunks_are_refused) {
  uint8_t head[bulk_head_size];
  bulk_data prefix;
  uint64_t chunk = 0;
  std::string why;
  store_bulk_head(head, bulk_data{1, 0, 16}, 16);
  frame_header h = load_header(head);
  h.message_id = static_cast<uint16_t>(message_id::ping);
  store_header(head, h);
  EXPECT_FALSE(load_bulk_head(head, prefix, chunk, why));
  EXPECT_NE(why.find("not expected"), std::string::npos) << why;

  h.message_id = static_cast<uint16_t>(message_id::bulk_data);
  h.flags = 1;
  store_header(head, h);
  EXPECT_FALSE(load_bulk_head(head, prefix, chunk, why));

  h.flags = 0;
  h.payload_size = bulk_prefix_size - 1;
  store_header(head, h);
  EXPECT_FALSE(load_bulk_head(head, prefix, chunk, why));

  h.payload_size = static_cast<uint32_t>(bulk_prefix_size + max_bulk_chunk + 1);
  store_header(head, h);
  EXPECT_FALSE(load_bulk_head(head, prefix, chunk, why));
  EXPECT_NE(why.find("exceeds"), std::string::npos) << why;
}

TEST(bulk_head, a_transfer_beyond_the_limit_is_refused) {
  uint8_t head[bulk_head_size];
  store_bulk_head(head, bulk_data{1, 0, max_transfer_size + 1}, 0);
  bulk_data prefix;
  uint64_t chunk = 0;
  std::string why;
  EXPECT_FALSE(load_bulk_head(head, prefix, chunk, why));
}

}  // namespace
}  // namespace ferry::protocol
