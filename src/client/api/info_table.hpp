// The clGet*Info tables (OpenCL-CLHPP's param_traits): each (param, C type)
// pair the client answers itself is one row, naming the param, the C type
// of its value and how to read that value from the object. answer_info finds
// the row and hands the value to info_out, which applies the spec's size
// rules; a param without a row gets the entry point's own answer (the
// native one, or CL_INVALID_VALUE).
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "client/api/entry.hpp"

namespace ferry::client::api {

template <class T>
struct is_vector : std::false_type {};
template <class E>
struct is_vector<std::vector<E>> : std::true_type {};

template <class T>
struct is_result : std::false_type {};
template <class V>
struct is_result<result<V>> : std::true_type {};

/// Writes `v` as a value of C type T: a string with its terminating NUL, an
/// array of its elements, or the scalar itself. A result<> that holds an
/// error answers that error (a value that is not always there).
template <class T, class V>
cl_int put_as(info_out& out, V&& v) {
  if constexpr (is_result<std::remove_cvref_t<V>>::value) {
    if (!v) return v.error();
    return put_as<T>(out, *v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return out.string(v);
  } else if constexpr (is_vector<T>::value) {
    return out.array(static_cast<const T&>(v));
  } else {
    return out.value(static_cast<T>(v));
  }
}

/// Writes the server's native answer as the native call wrote it, or
/// answers its error.
inline cl_int put_native(info_out& out, result<protocol::bytes> answer) {
  if (!answer) return answer.error();
  return out.bytes(*answer);
}

/// One row of a clGet*Info table for objects of handle type `Object`.
template <class Object>
struct info_row {
  cl_uint param;
  cl_int (*answer)(Object, info_out&);

  /// The row of `param`, whose value of C type T is `get(object)`; `get` is
  /// a lambda without captures.
  template <class T, class Get>
  static constexpr info_row of(cl_uint param, Get) {
    return {param, [](Object object, info_out& out) -> cl_int { return put_as<T>(out, Get{}(object)); }};
  }
};

/// Answers `param` of `object` from `table` (rows of info_row<Object>), or
/// with `otherwise()` when no row names it.
template <class Table, class Object, class Otherwise>
cl_int answer_info(const Table& table, Object object, cl_uint param, info_out& out, Otherwise&& otherwise) {
  for (const auto& row : table)
    if (row.param == param) return row.answer(object, out);
  return otherwise();
}

/// The same for tables that hold every param the entry point knows:
/// CL_INVALID_VALUE if param_name is not one of the supported values.
template <class Table, class Object>
cl_int answer_info(const Table& table, Object object, cl_uint param, info_out& out) {
  return answer_info(table, object, param, out, [] { return CL_INVALID_VALUE; });
}

}  // namespace ferry::client::api
