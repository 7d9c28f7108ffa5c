// Shared machinery of the C entry points: the noexcept wrappers, handle
// checks, and the clGet*Info size negotiation.
#pragma once

#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "client/core/diagnostics.hpp"
#include "client/core/objects.hpp"
#include "client/core/result.hpp"

namespace ferry::client::api {

/// Records the reason for an exception that reached an entry point and
/// returns the code the entry point answers for it.
inline cl_int code_for_exception() noexcept {
  try {
    throw;
  } catch (const std::bad_alloc& e) {
    return explain(CL_OUT_OF_HOST_MEMORY, "out of memory in libferry (%s)", e.what());
  } catch (const std::exception& e) {
    return explain(CL_OUT_OF_RESOURCES, "libferry failed: %s", e.what());
  } catch (...) {
    return explain(CL_OUT_OF_RESOURCES, "libferry failed with an unknown exception");
  }
}

/// Runs the body of entry point `entry` (its name, as in the spec) that
/// returns cl_int; exceptions never cross the C ABI. An error is logged at
/// debug with the reason recorded for it (client/core/diagnostics.hpp).
template <class F>
cl_int guarded(const char* entry, F&& body) noexcept {
  clear_explanations();
  cl_int code;
  try {
    code = body();
  } catch (...) {
    code = code_for_exception();
  }
  if (code != CL_SUCCESS) [[unlikely]]
    log_entry_failure(entry, code);
  return code;
}

/// Runs the body of creating entry point `entry` that returns result<T>;
/// writes errcode_ret only when it is not NULL. Errors are logged as by
/// guarded.
template <class T, class F>
T guarded_create(const char* entry, cl_int* errcode_ret, F&& body) noexcept {
  clear_explanations();
  cl_int code;
  T value{};
  try {
    result<T> r = body();
    code = r.error();
    if (r) value = *r;
  } catch (...) {
    code = code_for_exception();
  }
  if (code != CL_SUCCESS) [[unlikely]]
    log_entry_failure(entry, code);
  if (errcode_ret) *errcode_ret = code;
  return value;
}

template <class Handle>
struct handle_traits;
#define FERRY_HANDLE(handle_type, tag_value, error)              \
  template <>                                                    \
  struct handle_traits<handle_type> {                            \
    static constexpr object_tag tag = object_tag::tag_value;     \
    static constexpr cl_int invalid = error;                     \
    static constexpr const char* name = #handle_type;            \
  };
FERRY_HANDLE(cl_platform_id, platform, CL_INVALID_PLATFORM)
FERRY_HANDLE(cl_device_id, device, CL_INVALID_DEVICE)
FERRY_HANDLE(cl_context, context, CL_INVALID_CONTEXT)
FERRY_HANDLE(cl_command_queue, queue, CL_INVALID_COMMAND_QUEUE)
FERRY_HANDLE(cl_mem, mem, CL_INVALID_MEM_OBJECT)
FERRY_HANDLE(cl_program, program, CL_INVALID_PROGRAM)
FERRY_HANDLE(cl_kernel, kernel, CL_INVALID_KERNEL)
FERRY_HANDLE(cl_event, event, CL_INVALID_EVENT)
FERRY_HANDLE(cl_sampler, sampler, CL_INVALID_SAMPLER)
#undef FERRY_HANDLE

/// True when `h` is a live Ferry object of its type (not NULL, our dispatch
/// table, the right tag, not released by the application).
template <class Handle>
bool is_valid(Handle h) {
  if (h == nullptr) return false;
  auto* base = static_cast<object_base*>(h);
  if (base->dispatch != &dispatch_table || base->tag != handle_traits<Handle>::tag) return false;
  if constexpr (handle_traits<Handle>::tag == object_tag::platform ||
                handle_traits<Handle>::tag == object_tag::device)
    return true;
  else
    return base->api_refs.load(std::memory_order_relaxed) > 0;
}

/// The error code for an invalid handle of this type.
template <class Handle>
constexpr cl_int invalid_code() {
  return handle_traits<Handle>::invalid;
}

/// What is wrong with a handle that is_valid refused (read only after
/// is_valid has read the same fields).
inline const char* handle_problem(const object_base* base, object_tag expected) noexcept {
  if (base == nullptr) return "NULL";
  if (base->dispatch != &dispatch_table) return "not an object of Ferry's";
  if (base->tag != expected) return "an object of another type, or one already freed";
  return "released by the application";
}

/// Records why handle argument `argument` is invalid and returns its type's
/// error code.
template <class Handle>
cl_int invalid_handle(Handle h, const char* argument) noexcept {
  return explain(invalid_code<Handle>(), "invalid %s handle %p in argument %s: %s", handle_traits<Handle>::name,
                 static_cast<const void*>(h), argument,
                 handle_problem(static_cast<const object_base*>(h), handle_traits<Handle>::tag));
}

#define FERRY_CHECK_HANDLE(h)                                                     \
  do {                                                                            \
    if (!::ferry::client::api::is_valid(h))                                      \
      return ::ferry::client::api::invalid_handle(h, #h);                        \
  } while (0)
#define FERRY_CHECK_HANDLE_R(h)                                                   \
  do {                                                                            \
    if (!::ferry::client::api::is_valid(h))                                      \
      return ::ferry::client::fail(::ferry::client::api::invalid_handle(h, #h)); \
  } while (0)

enum class count_change { retain, release };

/// clRetain* and clRelease* (entry point `entry`): the API count of handle
/// argument `argument` goes up or down; its type's error code (CL_INVALID_
/// CONTEXT, CL_INVALID_KERNEL, ...) if it is not a valid object of its type.
template <class Handle>
cl_int change_api_count(const char* entry, Handle h, const char* argument, count_change change) noexcept {
  return guarded(entry, [&]() -> cl_int {
    if (!is_valid(h)) return invalid_handle(h, argument);
    if (change == count_change::retain) retain_api(h);
    else release_api(h);
    return CL_SUCCESS;
  });
}

/// The out-parameters of a clGet*Info call. Every answer goes through `put`,
/// which implements the spec's size rules once.
class info_out {
 public:
  info_out(size_t size, void* value, size_t* size_ret) : size_(size), value_(value), size_ret_(size_ret) {}

  // CL_INVALID_VALUE if the size in bytes specified by param_value_size is <
  // the size of the return type and param_value is not NULL.
  cl_int put(const void* data, size_t size) {
    if (value_ != nullptr) {
      if (size_ < size) return CL_INVALID_VALUE;
      if (size) std::memcpy(value_, data, size);
    }
    if (size_ret_) *size_ret_ = size;
    return CL_SUCCESS;
  }
  template <class T>
  cl_int value(const T& v) {
    return put(&v, sizeof(T));
  }
  cl_int string(const std::string& s) { return put(s.c_str(), s.size() + 1); }
  template <class T>
  cl_int array(const std::vector<T>& v) {
    return put(v.data(), v.size() * sizeof(T));
  }
  cl_int bytes(const std::vector<uint8_t>& v) { return put(v.data(), v.size()); }

 private:
  size_t size_;
  void* value_;
  size_t* size_ret_;
};

}  // namespace ferry::client::api
