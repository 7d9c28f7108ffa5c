// Every message of the FERRY_MESSAGES table survives encode -> frame ->
// assembly -> dispatch -> decode unchanged, decodes only from its exact
// payload, and frames cut into random pieces come out whole and in order.
#include "protocol/messages.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <any>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "protocol/codec.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/frame.hpp"
#include "protocol/limits.hpp"

namespace ferry::protocol {
namespace {

/// Gives every field of a message a value that differs from its default,
/// driven by the message's fields() tuple: integers get distinct values,
/// enums the enumerator after their default, strings, byte arrays and vectors
/// non-empty contents, fixed arrays every element, nested structs recurse.
class filler {
 public:
  /// `max_length` bounds string, byte-array and vector lengths (at least 1);
  /// the lengths are drawn from `seed`, so a test can ask for varied sizes.
  explicit filler(uint32_t seed = 1, size_t max_length = 3) : rng_(seed), max_length_(max_length) {}

  template <class T>
  void fill(T& value) {
    if constexpr (std::is_enum_v<T>) {
      value = static_cast<T>(static_cast<std::underlying_type_t<T>>(value) + 1);
    } else if constexpr (std::is_integral_v<T>) {
      value = next_integer<T>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      std::string text = "field " + std::to_string(counter_++) + " ";
      text.resize(std::max(text.size(), next_length()), 'x');
      value = text;
    } else if constexpr (std::is_same_v<T, bytes>) {
      value.resize(next_length());
      for (auto& b : value) b = next_integer<uint8_t>();
    } else if constexpr (is_vector<T>::value) {
      value.resize(std::min<size_t>(next_length(), 4));
      for (auto& element : value) fill(element);
    } else if constexpr (is_array<T>::value) {
      for (auto& element : value) fill(element);
    } else {
      static_assert(has_fields<T>, "filler does not know this field type");
      std::apply([&](auto&... field) { (fill(field), ...); }, value.fields());
    }
  }

 private:
  template <class T>
  T next_integer() {
    // An odd multiplier maps consecutive counters to distinct low bytes, so
    // even the u8 fields of one message differ; zero is the default, skip it.
    uint64_t raw = 0x9E3779B97F4A7C15ull * counter_++;
    T value = static_cast<T>(raw);
    return value == T{} ? T{1} : value;
  }
  size_t next_length() { return 1 + rng_() % max_length_; }

  std::mt19937 rng_;
  size_t max_length_;
  uint64_t counter_ = 1;
};

template <class T>
T filled(uint32_t seed = 1, size_t max_length = 3) {
  T message;
  filler(seed, max_length).fill(message);
  return message;
}

template <class T>
std::vector<uint8_t> encode_payload(const T& message) {
  std::vector<uint8_t> out;
  writer w(out);
  encode_value(w, message);
  return out;
}

template <class T>
constexpr uint16_t id_of() {
  return static_cast<uint16_t>(message_traits<T>::id);
}

/// The receiver a message of type T is legal for (bulk_data: either).
template <class T>
receiver receiver_of() {
  return message_to_server(id_of<T>()) ? receiver::server : receiver::client;
}

/// Frame limit of the stream a message travels on.
template <class T>
uint32_t stream_limit() {
  return std::is_same_v<T, bulk_data> ? message_limit(id_of<bulk_data>()) : max_control_payload;
}

/// Handler that accepts every message and keeps the last one it got. One
/// handler type for every test means one instantiation of dispatch_frame (a
/// handler per message type instantiated its switch over the whole table once
/// per message: minutes of compile time under the sanitizers).
struct keeper {
  std::any got;
  int calls = 0;
  template <class M>
  bool on(const M& message) {
    got = message;
    ++calls;
    return true;
  }
  /// The kept message as a T, or null when none or another type was kept.
  template <class T>
  const T* as() const {
    return std::any_cast<T>(&got);
  }
};

/// Handler that accepts every message and re-encodes it; because the encoding
/// is canonical, equal bytes mean an equal message.
struct reencoder {
  std::vector<uint8_t> payload;
  template <class M>
  bool on(const M& message) {
    payload = encode_payload(message);
    return true;
  }
};

template <class T>
void expect_every_field_set(const T& message) {
  const T blank{};
  auto set = message.fields();
  auto unset = blank.fields();
  auto check = [&]<size_t I>(std::integral_constant<size_t, I>) {
    EXPECT_FALSE(std::get<I>(set) == std::get<I>(unset)) << "field " << I << " kept its default";
  };
  [&]<size_t... I>(std::index_sequence<I...>) {
    (check(std::integral_constant<size_t, I>{}), ...);
  }(std::make_index_sequence<std::tuple_size_v<decltype(set)>>{});
}

template <class T>
void expect_round_trip() {
  const T original = filled<T>();
  expect_every_field_set(original);

  std::vector<uint8_t> wire;
  append_frame(wire, original);
  ASSERT_GE(wire.size(), frame_header_size);
  frame_header header = load_header(wire.data());
  EXPECT_EQ(header.message_id, id_of<T>());
  EXPECT_EQ(header.payload_size, wire.size() - frame_header_size);
  EXPECT_EQ(header.flags, 0);
  EXPECT_LE(header.payload_size, message_limit(id_of<T>()));

  frame_assembler assembler(stream_limit<T>());
  assembler.feed(wire.data(), wire.size());
  frame_view frame;
  std::string why;
  ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::frame) << why;

  keeper handler;
  ASSERT_TRUE(dispatch_frame(frame, receiver_of<T>(), handler, why)) << why;
  ASSERT_EQ(handler.calls, 1);
  const T* got = handler.as<T>();
  ASSERT_NE(got, nullptr) << "the frame decoded as another message";
  EXPECT_TRUE(*got == original);
  // Canonical: the decoded value encodes to the very bytes that were sent.
  EXPECT_EQ(encode_payload(*got), std::vector<uint8_t>(wire.begin() + frame_header_size, wire.end()));

  EXPECT_EQ(assembler.next(frame, why), frame_assembler::result::need_more);
  EXPECT_EQ(assembler.pending(), 0u);
}

template <class T>
void expect_exact_payload_required() {
  const std::vector<uint8_t> payload = encode_payload(filled<T>());
  const std::string prefix = std::string("malformed ") + std::string(message_traits<T>::label) + ": ";
  keeper handler;
  for (size_t cut = 0; cut < payload.size(); ++cut) {
    frame_view frame{{static_cast<uint32_t>(cut), id_of<T>(), 0}, payload.data()};
    std::string why;
    EXPECT_FALSE(dispatch_frame(frame, receiver_of<T>(), handler, why)) << "cut at " << cut;
    EXPECT_EQ(why.rfind(prefix, 0), 0u) << why;
    EXPECT_GT(why.size(), prefix.size()) << "no reason given for cut at " << cut;
  }
  std::vector<uint8_t> longer = payload;
  longer.push_back(0);
  frame_view frame{{static_cast<uint32_t>(longer.size()), id_of<T>(), 0}, longer.data()};
  std::string why;
  EXPECT_FALSE(dispatch_frame(frame, receiver_of<T>(), handler, why));
  EXPECT_EQ(why, prefix + "trailing bytes after message");
  EXPECT_EQ(handler.calls, 0);
}

// One pair of tests per row of the message table, so a new message is covered
// the moment it is added.
#define FERRY_MESSAGE_TESTS(num, name, dir, limit)                                      \
  TEST(protocol_messages, name##_arrives_equal_after_framing_assembly_and_dispatch) {   \
    expect_round_trip<name>();                                                           \
  }                                                                                      \
  TEST(protocol_messages, name##_decodes_only_from_its_exact_payload) {                  \
    expect_exact_payload_required<name>();                                               \
  }
FERRY_MESSAGES(FERRY_MESSAGE_TESTS)
#undef FERRY_MESSAGE_TESTS

TEST(protocol_messages, a_lane_token_names_its_lane_and_nothing_else_is_one) {
  for (uint32_t lane : {0u, 1u, 7u, max_bulk_lanes - 1}) {
    uint32_t back = 99;
    ASSERT_TRUE(lane_of(lane_token(lane), back)) << lane;
    EXPECT_EQ(back, lane);
  }
  EXPECT_EQ(lane_token(0), session_token{}) << "lane 0, the bulk stream, is the link of older clients";
  EXPECT_EQ(lane_token(0x04030201)[0], 1u) << "little endian";
  uint32_t back = 99;
  EXPECT_FALSE(lane_of(lane_token(max_bulk_lanes), back));
  session_token junk = lane_token(2);
  junk[4] = 1;
  EXPECT_FALSE(lane_of(junk, back));
  EXPECT_EQ(back, 99u) << "untouched when refused";
}

TEST(protocol_messages, bulk_data_is_accepted_by_both_client_and_server) {
  const bulk_data original = filled<bulk_data>();
  std::vector<uint8_t> wire;
  append_frame(wire, original);
  frame_view frame{load_header(wire.data()), wire.data() + frame_header_size};
  for (receiver who : {receiver::server, receiver::client}) {
    keeper handler;
    std::string why;
    ASSERT_TRUE(dispatch_frame(frame, who, handler, why)) << why;
    ASSERT_NE(handler.as<bulk_data>(), nullptr);
    EXPECT_TRUE(*handler.as<bulk_data>() == original);
  }
}

TEST(protocol_messages, bulk_chunk_prefix_decodes_and_chunk_bytes_follow_it) {
  const bulk_data prefix{0x1122334455667788ull, 4096, 1u << 20};
  std::vector<uint8_t> chunk(1000);
  for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<uint8_t>(i * 7);

  // A bulk frame: header, the codec-encoded prefix, then the raw chunk bytes.
  std::vector<uint8_t> wire;
  append_frame(wire, prefix);
  ASSERT_EQ(wire.size(), frame_header_size + bulk_prefix_size);
  wire.insert(wire.end(), chunk.begin(), chunk.end());
  frame_header header = load_header(wire.data());
  header.payload_size += static_cast<uint32_t>(chunk.size());
  store_header(wire.data(), header);

  frame_assembler assembler(message_limit(id_of<bulk_data>()));
  assembler.feed(wire.data(), wire.size());
  frame_view frame;
  std::string why;
  ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::frame) << why;
  ASSERT_EQ(frame.header.message_id, id_of<bulk_data>());
  ASSERT_GE(frame.header.payload_size, bulk_prefix_size);

  bulk_data decoded;
  const char* error = "";
  ASSERT_TRUE(decode_payload(frame.payload, bulk_prefix_size, decoded, error)) << error;
  EXPECT_TRUE(decoded == prefix);
  EXPECT_EQ(std::vector<uint8_t>(frame.payload + bulk_prefix_size, frame.payload + frame.header.payload_size), chunk);
}

TEST(protocol_messages, largest_bulk_chunk_with_its_prefix_fits_the_bulk_limit) {
  EXPECT_LE(bulk_prefix_size + max_bulk_chunk, message_limit(id_of<bulk_data>()));
}

/// One encoded frame of a random message type, with what should come out.
struct expected_frame {
  uint16_t id;
  std::vector<uint8_t> payload;
};

/// Appends one frame of every message type, in a random order, with random
/// string/vector lengths, until `count` frames are written.
std::vector<expected_frame> append_random_frames(std::vector<uint8_t>& wire, size_t count, std::mt19937& rng) {
  std::vector<std::function<void(uint32_t)>> makers;
  std::vector<expected_frame> expected;
#define FERRY_MAKER(num, name, dir, limit)                                      \
  makers.push_back([&](uint32_t seed) {                                         \
    const name message = filled<name>(seed, 1 + seed % 3000);                   \
    size_t start = wire.size();                                                 \
    append_frame(wire, message);                                                \
    expected.push_back({static_cast<uint16_t>(num),                             \
                        std::vector<uint8_t>(wire.begin() + start + frame_header_size, wire.end())}); \
  });
  FERRY_MESSAGES(FERRY_MAKER)
#undef FERRY_MAKER
  for (size_t i = 0; i < count; ++i) makers[rng() % makers.size()](static_cast<uint32_t>(rng()));
  return expected;
}

TEST(protocol_messages, frames_delivered_in_random_pieces_come_out_whole_and_in_order) {
  std::mt19937 rng(0xF3223);
  std::vector<uint8_t> wire;
  const std::vector<expected_frame> expected = append_random_frames(wire, 400, rng);

  for (size_t max_piece : {size_t{1}, size_t{3}, size_t{64}, size_t{4096}, size_t{1} << 20}) {
    for (size_t initial_capacity : {size_t{16}, size_t{256} * 1024}) {
      SCOPED_TRACE("pieces of 1.." + std::to_string(max_piece) + " bytes, initial capacity " +
                   std::to_string(initial_capacity));
      frame_assembler assembler(max_control_payload, initial_capacity);
      size_t sent = 0;
      size_t received = 0;
      while (sent < wire.size()) {
        size_t piece = std::min<size_t>(1 + rng() % max_piece, wire.size() - sent);
        if (rng() % 2) {
          assembler.feed(wire.data() + sent, piece);
        } else {
          // The path a socket reader takes: receive straight into the buffer.
          size_t available = 0;
          uint8_t* area = assembler.write_area(piece, available);
          ASSERT_GE(available, piece);
          std::memcpy(area, wire.data() + sent, piece);
          assembler.commit(piece);
        }
        sent += piece;

        frame_view frame;
        std::string why;
        frame_assembler::result r;
        while ((r = assembler.next(frame, why)) == frame_assembler::result::frame) {
          ASSERT_LT(received, expected.size());
          const expected_frame& want = expected[received];
          ASSERT_EQ(frame.header.message_id, want.id) << "frame " << received;
          ASSERT_EQ(frame.header.payload_size, want.payload.size()) << "frame " << received;
          ASSERT_EQ(std::memcmp(frame.payload, want.payload.data(), want.payload.size()), 0) << "frame " << received;
          reencoder handler;
          receiver who = message_to_server(want.id) ? receiver::server : receiver::client;
          ASSERT_TRUE(dispatch_frame(frame, who, handler, why)) << "frame " << received << ": " << why;
          ASSERT_EQ(handler.payload, want.payload) << "frame " << received;
          ++received;
        }
        ASSERT_EQ(r, frame_assembler::result::need_more) << why;
      }
      EXPECT_EQ(received, expected.size());
      EXPECT_EQ(assembler.pending(), 0u);
    }
  }
}

TEST(protocol_messages, table_names_limits_directions_and_traits_agree) {
#define FERRY_ROW(num, name, dir, limit)                                                      \
  {                                                                                          \
    SCOPED_TRACE(#name);                                                                     \
    EXPECT_STREQ(message_name(num), #name);                                                  \
    EXPECT_EQ(message_limit(num), static_cast<uint32_t>(limit));                             \
    EXPECT_EQ(static_cast<uint16_t>(message_traits<name>::id), num);                         \
    EXPECT_EQ(message_traits<name>::label, #name);                                           \
    EXPECT_EQ(message_to_server(num), dir != direction::to_client);                          \
    EXPECT_EQ(message_to_client(num), dir != direction::to_server);                          \
    EXPECT_LE(message_limit(num), stream_limit<name>());                                    \
    /* A typical instance fits its own limit. */                                             \
    EXPECT_LE(encode_payload(filled<name>()).size(), message_limit(num));                    \
  }
  FERRY_MESSAGES(FERRY_ROW)
#undef FERRY_ROW
}

}  // namespace
}  // namespace ferry::protocol
