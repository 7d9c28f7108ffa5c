// `result<T>`: a value or an OpenCL error code (C++20 has no std::expected).
#pragma once

#include <CL/cl.h>

#include <utility>
#include <variant>

namespace ferry {

template <class T>
class result {
 public:
  result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  static result failure(cl_int code) { return result(code, 0); }

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  cl_int error() const { return ok() ? CL_SUCCESS : std::get<1>(state_); }
  T& value() { return std::get<0>(state_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }

 private:
  result(cl_int code, int) : state_(std::in_place_index<1>, code) {}
  std::variant<T, cl_int> state_;
};

/// Shorthand for returning an error from a function that returns result<T>.
struct error_code {
  cl_int code;
  template <class T>
  operator result<T>() const {  // NOLINT: implicit by design
    return result<T>::failure(code);
  }
};
inline error_code fail(cl_int code) { return {code}; }

}  // namespace ferry
