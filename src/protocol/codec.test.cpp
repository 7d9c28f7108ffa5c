// The field encoding (little endian, no padding, u32 length/count prefixes)
// and the decoder's refusal of hostile counts and lengths before it allocates.
#include "protocol/codec.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "protocol/dispatch.hpp"
#include "protocol/limits.hpp"
#include "protocol/messages.hpp"
#include "protocol/version.hpp"

namespace ferry::protocol {
namespace {

template <class T>
std::vector<uint8_t> encode_payload(const T& message) {
  std::vector<uint8_t> out;
  writer w(out);
  encode_value(w, message);
  return out;
}

void put_u32(std::vector<uint8_t>& out, uint32_t value) {
  writer w(out);
  w.put_scalar(value);
}
void put_u64(std::vector<uint8_t>& out, uint64_t value) {
  writer w(out);
  w.put_scalar(value);
}

template <class T>
bool decode(const std::vector<uint8_t>& payload, T& out, std::string& error) {
  const char* reason = "";
  bool ok = decode_payload(payload.data(), payload.size(), out, reason);
  error = reason;
  return ok;
}

// --- encoding ------------------------------------------------------------------

TEST(codec, encodes_integers_little_endian_without_padding) {
  set_user_event_status message{0x0807060504030201ull, -2};
  EXPECT_EQ(encode_payload(message), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 0xFE, 0xFF, 0xFF, 0xFF}));
}

TEST(codec, encodes_strings_as_u32_length_and_bytes_without_terminator) {
  create_program_with_source message{1, 2, "abc"};
  std::vector<uint8_t> want;
  put_u64(want, 1);
  put_u64(want, 2);
  put_u32(want, 3);
  want.insert(want.end(), {'a', 'b', 'c'});
  EXPECT_EQ(encode_payload(message), want);
}

TEST(codec, encodes_vectors_as_u32_count_and_elements_and_fixed_arrays_without_count) {
  enqueue_barrier message;
  message.header = {7, 9, {11, 12}, keep_event | notify};
  std::vector<uint8_t> want;
  put_u64(want, 7);
  put_u64(want, 9);
  put_u32(want, 2);
  put_u64(want, 11);
  put_u64(want, 12);
  put_u32(want, 3);
  EXPECT_EQ(encode_payload(message), want);

  completion entry{5, -5, {1, 2, 3, 4}};
  EXPECT_EQ(encode_payload(entry).size(), 8u + 4u + 4u * 8u);
}

TEST(codec, encodes_enums_as_their_underlying_integer) {
  EXPECT_EQ(encode_payload(kernel_arg{}).size(), 4u + 1u + 8u + 4u + 8u);  // kind is one byte
  query q;
  q.kind = query_kind::kernel_arg_info;
  std::vector<uint8_t> bytes = encode_payload(q);
  ASSERT_GE(bytes.size(), 12u);
  EXPECT_EQ(std::vector<uint8_t>(bytes.begin() + 8, bytes.begin() + 12), (std::vector<uint8_t>{5, 0, 0, 0}));
}

TEST(codec, hello_starts_with_the_magic_fry1) {
  hello message;
  message.magic = magic;
  std::vector<uint8_t> bytes = encode_payload(message);
  ASSERT_GE(bytes.size(), 4u);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "FRY1");
  // magic, versions, stream kind, session, secret, name length, link.
  EXPECT_EQ(bytes.size(), 4u + 2u + 2u + 1u + 16u + 16u + 4u + 16u);
}

TEST(codec, bulk_prefix_size_is_the_encoded_size_of_bulk_data) {
  EXPECT_EQ(encode_payload(bulk_data{1, 2, 3}).size(), bulk_prefix_size);
}

TEST(codec, empty_strings_and_vectors_round_trip) {
  compile_program message{1, 2, {}, "", {}, {""}, {}};
  compile_program back;
  std::string error;
  ASSERT_TRUE(decode(encode_payload(message), back, error)) << error;
  EXPECT_TRUE(back == message);
}

TEST(codec, out_of_range_enum_values_decode_unchanged_for_the_receiver_to_check) {
  // The codec carries enums as integers; validating them is the receiver's job.
  hello message;
  message.stream = static_cast<stream_kind>(200);
  hello back;
  std::string error;
  ASSERT_TRUE(decode(encode_payload(message), back, error)) << error;
  EXPECT_EQ(static_cast<uint8_t>(back.stream), 200);
}

// --- hostile counts and lengths ------------------------------------------------

TEST(codec, vector_count_uint32_max_fails_before_allocating) {
  std::vector<uint8_t> payload;
  put_u64(payload, 1);  // id
  put_u32(payload, std::numeric_limits<uint32_t>::max());
  payload.resize(payload.size() + 64);
  create_context message;
  std::string error;
  EXPECT_FALSE(decode(payload, message, error));
  EXPECT_EQ(error, "element count above limit");
  EXPECT_EQ(message.devices.capacity(), 0u);
}

TEST(codec, vector_count_one_above_max_array_elements_fails_before_allocating) {
  std::vector<uint8_t> payload;
  put_u32(payload, max_array_elements + 1);
  payload.resize(payload.size() + 64);
  completions message;
  std::string error;
  EXPECT_FALSE(decode(payload, message, error));
  EXPECT_EQ(error, "element count above limit");
  EXPECT_EQ(message.entries.capacity(), 0u);
}

TEST(codec, vector_count_larger_than_the_frame_fails_before_allocating) {
  std::vector<uint8_t> payload;
  put_u64(payload, 1);
  put_u32(payload, 1000);  // 4000 bytes of u32 announced, 8 present
  put_u32(payload, 1);
  put_u32(payload, 2);
  create_context message;
  std::string error;
  EXPECT_FALSE(decode(payload, message, error));
  EXPECT_EQ(error, "element count exceeds frame");
  EXPECT_EQ(message.devices.capacity(), 0u);
}

TEST(codec, string_length_uint32_max_fails_before_allocating) {
  std::vector<uint8_t> payload;
  put_u64(payload, 1);
  put_u64(payload, 2);
  put_u32(payload, std::numeric_limits<uint32_t>::max());
  payload.resize(payload.size() + 64, 'x');
  create_program_with_source message;
  std::string error;
  EXPECT_FALSE(decode(payload, message, error));
  EXPECT_EQ(error, "element count above limit");
  EXPECT_LT(message.source.capacity(), 64u);
}

TEST(codec, string_length_above_max_bytes_field_fails_before_allocating) {
  std::vector<uint8_t> payload;
  put_u32(payload, max_bytes_field + 1);
  payload.resize(payload.size() + 64, 'x');
  printf_output message;
  std::string error;
  EXPECT_FALSE(decode(payload, message, error));
  EXPECT_EQ(error, "element count above limit");
  EXPECT_EQ(message.text.capacity(), 0u);
}

TEST(codec, string_length_larger_than_the_frame_fails_before_allocating) {
  std::vector<uint8_t> payload;
  put_u64(payload, 1);
  put_u64(payload, 2);
  put_u32(payload, 1u << 20);
  payload.resize(payload.size() + 100, 'x');
  create_program_with_source message;
  std::string error;
  EXPECT_FALSE(decode(payload, message, error));
  EXPECT_EQ(error, "element count exceeds frame");
  EXPECT_LT(message.source.capacity(), 1000u);
}

TEST(codec, huge_byte_array_nested_in_a_vector_fails_before_allocating) {
  // create_program_with_binary: request, id, context, devices, binaries.
  std::vector<uint8_t> payload;
  put_u64(payload, 1);
  put_u64(payload, 2);
  put_u64(payload, 3);
  put_u32(payload, 0);  // no devices
  put_u32(payload, 1);  // one binary ...
  put_u32(payload, std::numeric_limits<uint32_t>::max() - 1);  // ... of almost 4 GiB
  payload.resize(payload.size() + 16);
  create_program_with_binary message;
  std::string error;
  EXPECT_FALSE(decode(payload, message, error));
  EXPECT_EQ(error, "element count above limit");
  ASSERT_EQ(message.binaries.size(), 1u);
  EXPECT_EQ(message.binaries[0].capacity(), 0u);
}

TEST(codec, hostile_count_inside_a_valid_frame_makes_dispatch_fail_with_the_reason) {
  std::vector<uint8_t> payload;
  put_u32(payload, std::numeric_limits<uint32_t>::max());
  payload.resize(64);
  frame_view frame{{static_cast<uint32_t>(payload.size()), static_cast<uint16_t>(message_id::completions), 0},
                   payload.data()};
  struct handler {
    bool on(const completions&) { return true; }
  } h;
  std::string why;
  EXPECT_FALSE(dispatch_frame(frame, receiver::client, h, why));
  EXPECT_EQ(why, "malformed completions: element count above limit");
}

TEST(codec, reader_keeps_the_first_failure_and_reads_zeros_after_it) {
  std::vector<uint8_t> two = {1, 2};
  reader r(two.data(), two.size());
  EXPECT_EQ(r.get_scalar<uint32_t>(), 0u);
  EXPECT_FALSE(r.ok());
  EXPECT_STREQ(r.error(), "field runs past end of frame");
  EXPECT_EQ(r.get_scalar<uint8_t>(), 0u);  // the two bytes are no longer readable
  r.fail("a later reason");
  EXPECT_STREQ(r.error(), "field runs past end of frame");
  EXPECT_EQ(r.remaining(), 0u);
}

// --- known gaps (see the protocol review): enable once the codec is fixed -------

TEST(codec, struct_vector_count_is_checked_against_the_smallest_element_encoding) {
  // 1000 bytes follow the count; one kernel_arg needs at least 25 of them, so a
  // count of 1000 cannot be honest and should fail before the vector is sized.
  enqueue_ndrange message;
  std::vector<uint8_t> payload = encode_payload(message);
  payload.resize(payload.size() - 4);  // drop the empty args count
  put_u32(payload, 1000);
  payload.resize(payload.size() + 1000);
  enqueue_ndrange back;
  std::string error;
  EXPECT_FALSE(decode(payload, back, error));
  EXPECT_EQ(error, "element count exceeds frame");
  EXPECT_EQ(back.args.capacity(), 0u);
}

TEST(codec, wait_list_above_max_wait_list_is_rejected) {
  enqueue_marker message;
  message.header.wait_list.assign(max_wait_list + 1, 1);
  enqueue_marker back;
  std::string error;
  EXPECT_FALSE(decode(encode_payload(message), back, error));
}

}  // namespace
}  // namespace ferry::protocol
