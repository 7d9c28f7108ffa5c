// Field-by-field binary codec: little endian, no padding, no packed structs.
//
// Every message is a plain struct that lists its fields once with
// FERRY_FIELDS(...); `encode` and `decode` walk that list. Integers are fixed
// width, enums travel as their underlying integer, strings and byte arrays as
// u32 length + bytes, vectors as u32 count + elements, fixed arrays as their
// elements. The reader checks every count against the remaining bytes and the
// limits before it allocates, so hostile lengths fail cleanly.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <type_traits>
#include <vector>

#include "protocol/limits.hpp"

namespace ferry::protocol {

// fields() is a template only so that it is instantiated where it is used: deducing the
// std::tie type of ~140 message structs in every file that includes messages.hpp took
// 2.3 s of each such compile.
#define FERRY_FIELDS(...)                                          \
  template <int = 0>                                               \
  auto fields() { return std::tie(__VA_ARGS__); }                  \
  template <int = 0>                                               \
  auto fields() const { return std::tie(__VA_ARGS__); }

using bytes = std::vector<uint8_t>;

/// Appends encoded values to a byte vector owned by the caller (usually a
/// connection's send buffer, so steady-state encoding does not allocate).
class writer {
 public:
  explicit writer(std::vector<uint8_t>& out) : out_(out) {}

  template <class T>
  void put_scalar(T value) {
    static_assert(std::is_arithmetic_v<T>);
    size_t at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &value, sizeof(T));  // host is little endian (checked in messages.cpp)
  }
  void put_raw(const void* data, size_t size) {
    if (size == 0) return;
    size_t at = out_.size();
    out_.resize(at + size);
    std::memcpy(out_.data() + at, data, size);
  }
  std::vector<uint8_t>& buffer() { return out_; }

 private:
  std::vector<uint8_t>& out_;
};

/// Reads values from a byte range; the first failure sticks and every later
/// read returns zero values, so decoders check `ok()` once at the end.
class reader {
 public:
  reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

  template <class T>
  T get_scalar() {
    static_assert(std::is_arithmetic_v<T>);
    T value{};
    if (!need(sizeof(T))) return value;
    std::memcpy(&value, p_, sizeof(T));
    p_ += sizeof(T);
    return value;
  }
  bool get_raw(void* out, size_t size) {
    if (!need(size)) return false;
    if (size) std::memcpy(out, p_, size);
    p_ += size;
    return true;
  }
  /// Checks that `count` elements of at least `min_element_size` bytes can
  /// still be present; used before any vector is sized.
  bool can_hold(uint64_t count, size_t min_element_size, uint32_t limit) {
    if (count > limit) return fail("element count above limit");
    if (count * min_element_size > remaining()) return fail("element count exceeds frame");
    return ok_;
  }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  bool ok() const { return ok_; }
  bool at_end() const { return p_ == end_; }
  bool fail(const char* why) {
    if (ok_) error_ = why;
    ok_ = false;
    p_ = end_;
    return false;
  }
  const char* error() const { return error_; }

 private:
  bool need(size_t size) {
    if (!ok_) return false;
    if (remaining() < size) return fail("field runs past end of frame");
    return true;
  }
  const uint8_t* p_;
  const uint8_t* end_;
  bool ok_ = true;
  const char* error_ = "";
};

template <class T>
concept has_fields = requires(T& t) { t.fields(); };

/// A vector field with its own element limit (below max_array_elements).
template <class T, uint32_t Limit>
struct limited_vector : std::vector<T> {
  using std::vector<T>::vector;
  limited_vector() = default;
  limited_vector(std::vector<T> other) : std::vector<T>(std::move(other)) {}  // NOLINT: implicit by design
  static constexpr uint32_t limit = Limit;
};

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};
template <class T, uint32_t Limit>
struct is_vector<limited_vector<T, Limit>> : std::true_type {};
template <class T>
constexpr uint32_t element_limit() {
  if constexpr (requires { T::limit; }) return T::limit;
  else return max_array_elements;
}
template <class T>
struct is_array : std::false_type {};
template <class T, size_t N>
struct is_array<std::array<T, N>> : std::true_type {};

/// Smallest encoded size of a T; lets the reader reject impossible counts early.
template <class T>
constexpr size_t min_encoded_size();
template <class Tuple>
struct min_fields_size;
template <class... Fields>
struct min_fields_size<std::tuple<Fields...>> {
  static constexpr size_t value = (size_t{0} + ... + min_encoded_size<std::remove_cvref_t<Fields>>());
};
template <class T>
constexpr size_t min_encoded_size() {
  if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) return sizeof(T);
  else if constexpr (is_array<T>::value) return std::tuple_size_v<T> * min_encoded_size<typename T::value_type>();
  else if constexpr (std::is_same_v<T, std::string> || is_vector<T>::value) return sizeof(uint32_t);  // length or count
  else return min_fields_size<decltype(std::declval<T&>().fields())>::value;  // a struct: its fields
}

template <class T>
void encode_value(writer& w, const T& value) {
  if constexpr (std::is_enum_v<T>) {
    w.put_scalar(static_cast<std::underlying_type_t<T>>(value));
  } else if constexpr (std::is_arithmetic_v<T>) {
    w.put_scalar(value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    w.put_scalar(static_cast<uint32_t>(value.size()));
    w.put_raw(value.data(), value.size());
  } else if constexpr (std::is_same_v<T, bytes>) {
    w.put_scalar(static_cast<uint32_t>(value.size()));
    w.put_raw(value.data(), value.size());
  } else if constexpr (is_vector<T>::value) {
    w.put_scalar(static_cast<uint32_t>(value.size()));
    for (const auto& element : value) encode_value(w, element);
  } else if constexpr (is_array<T>::value) {
    for (const auto& element : value) encode_value(w, element);
  } else {
    static_assert(has_fields<T>, "message field type has no encoding");
    std::apply([&](const auto&... field) { (encode_value(w, field), ...); }, value.fields());
  }
}

template <class T>
void decode_value(reader& r, T& value) {
  if constexpr (std::is_enum_v<T>) {
    value = static_cast<T>(r.get_scalar<std::underlying_type_t<T>>());
  } else if constexpr (std::is_arithmetic_v<T>) {
    value = r.get_scalar<T>();
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bytes>) {
    uint32_t size = r.get_scalar<uint32_t>();
    if (!r.can_hold(size, 1, max_bytes_field)) return;
    value.resize(size);
    r.get_raw(value.data(), size);
  } else if constexpr (is_vector<T>::value) {
    using element = typename T::value_type;
    uint32_t count = r.get_scalar<uint32_t>();
    if (!r.can_hold(count, min_encoded_size<element>(), element_limit<T>())) return;
    value.resize(count);
    for (auto& e : value) {
      decode_value(r, e);
      if (!r.ok()) return;
    }
  } else if constexpr (is_array<T>::value) {
    for (auto& element : value) decode_value(r, element);
  } else {
    static_assert(has_fields<T>, "message field type has no decoding");
    std::apply([&](auto&... field) { (decode_value(r, field), ...); }, value.fields());
  }
}

/// Decodes a whole payload into `out`; fails on truncation, on trailing bytes
/// and on any limit. `error` names the reason for the log.
template <class T>
bool decode_payload(const uint8_t* data, size_t size, T& out, const char*& error) {
  reader r(data, size);
  decode_value(r, out);
  if (r.ok() && !r.at_end()) r.fail("trailing bytes after message");
  error = r.error();
  return r.ok();
}

}  // namespace ferry::protocol
