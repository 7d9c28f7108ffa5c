// A value or an error, for the `ferry` command's internal functions.
//
// C++20 has no std::expected; this is the small subset the command needs.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ferry::cli {

/// Wraps an error so that outcome<T, E> can be built from it even when T and E are the same type.
template <class E>
struct failure {
  explicit failure(E e) : error(std::move(e)) {}
  E error;
};

template <class E>
failure(E) -> failure<E>;

/// Either a T or an E (a message by default).
template <class T, class E = std::string>
class outcome {
 public:
  outcome(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  template <class F>
  outcome(failure<F> f) : state_(std::in_place_index<1>, E(std::move(f.error))) {}

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & {
    assert(has_value());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(has_value());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(has_value());
    return std::get<0>(std::move(state_));
  }
  const E& error() const& {
    assert(!has_value());
    return std::get<1>(state_);
  }

 private:
  std::variant<T, E> state_;
};

}  // namespace ferry::cli
