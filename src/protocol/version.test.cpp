// Version negotiation, the protocol identity, and the table lookups for ids
// that are not in the table.
#include "protocol/version.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "protocol/messages.hpp"

namespace ferry::protocol {
namespace {

static_assert(min_version >= 1, "0 is the 'no common version' answer of negotiate_version");
static_assert(min_version <= max_version);
static_assert(negotiate_version(min_version, max_version) == max_version);

TEST(protocol_version, a_peer_with_the_same_range_gets_the_highest_version) {
  EXPECT_EQ(negotiate_version(min_version, max_version), max_version);
}

TEST(protocol_version, a_peer_with_a_wider_range_gets_our_highest_version) {
  EXPECT_EQ(negotiate_version(0, std::numeric_limits<uint16_t>::max()), max_version);
  EXPECT_EQ(negotiate_version(min_version, max_version + 10), max_version);
}

TEST(protocol_version, a_peer_whose_range_overlaps_at_one_end_gets_that_version) {
  EXPECT_EQ(negotiate_version(0, min_version), min_version);
  EXPECT_EQ(negotiate_version(max_version, max_version + 3), max_version);
}

TEST(protocol_version, a_peer_that_only_speaks_newer_versions_gets_zero) {
  EXPECT_EQ(negotiate_version(max_version + 1, max_version + 5), 0);
  EXPECT_EQ(negotiate_version(std::numeric_limits<uint16_t>::max(), std::numeric_limits<uint16_t>::max()), 0);
}

TEST(protocol_version, a_peer_that_only_speaks_older_versions_gets_zero) {
  EXPECT_EQ(negotiate_version(0, min_version - 1), 0);
}

TEST(protocol_version, peers_of_versions_4_and_5_are_still_served) {
  // Version 6 gave the builds with headers new ids; older peers keep the old ones.
  EXPECT_EQ(negotiate_version(4, 5), 5);
  EXPECT_EQ(negotiate_version(4, 4), 4);
  EXPECT_EQ(negotiate_version(4, 6), 6);
  EXPECT_EQ(min_version, 4);
  EXPECT_LE(headers_version, max_version);
}

TEST(protocol_version, an_inverted_peer_range_gets_zero) {
  EXPECT_EQ(negotiate_version(max_version, min_version - 1), 0);
  EXPECT_EQ(negotiate_version(max_version + 2, max_version + 1), 0);
}

TEST(protocol_version, magic_is_fry1_as_a_little_endian_u32_and_the_port_is_7780) {
  EXPECT_EQ(magic, uint32_t{'F'} | uint32_t{'R'} << 8 | uint32_t{'Y'} << 16 | uint32_t{'1'} << 24);
  EXPECT_EQ(default_port, 7780);
}

TEST(protocol_table, unknown_ids_have_no_name_no_limit_and_no_direction) {
  for (uint16_t id : {uint16_t{0}, uint16_t{6}, uint16_t{9}, uint16_t{79}, uint16_t{89}, uint16_t{0xFFFF}}) {
    EXPECT_EQ(message_name(id), nullptr) << id;
    EXPECT_EQ(message_limit(id), 0u) << id;
    EXPECT_FALSE(message_to_server(id)) << id;
    EXPECT_FALSE(message_to_client(id)) << id;
  }
}

TEST(protocol_table, known_ids_map_to_their_name_and_limit) {
  EXPECT_STREQ(message_name(1), "hello");
  EXPECT_STREQ(message_name(80), "bulk_data");
  EXPECT_EQ(message_limit(10), 64u);
  EXPECT_EQ(message_limit(30), max_control_payload);
  EXPECT_EQ(message_limit(80), max_bulk_chunk + 64);
  EXPECT_TRUE(message_to_server(80));
  EXPECT_TRUE(message_to_client(80));
}

}  // namespace
}  // namespace ferry::protocol
