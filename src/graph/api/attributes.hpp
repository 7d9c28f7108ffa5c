// vxQuery*/vxSet*Attribute's common rules: the pointer must be given and the
// size must be the attribute's exact type size, else
// VX_ERROR_INVALID_PARAMETERS; an attribute the object does not have is
// VX_ERROR_NOT_SUPPORTED (the caller's switch default).
#pragma once

#include <VX/vx.h>

#include <cstring>

namespace ferry::graph {

/// Writes `value` to a query's (ptr, size).
template <class T>
vx_status answer(void* ptr, vx_size size, const T& value) {
  if (ptr == nullptr || size != sizeof(T)) return VX_ERROR_INVALID_PARAMETERS;
  std::memcpy(ptr, &value, sizeof(T));
  return VX_SUCCESS;
}

/// Writes a string attribute (a char array of at most `size` bytes, terminated).
inline vx_status answer_text(void* ptr, vx_size size, const char* text) {
  vx_size length = std::strlen(text);
  if (ptr == nullptr || size <= length) return VX_ERROR_INVALID_PARAMETERS;
  std::memcpy(ptr, text, length + 1);
  return VX_SUCCESS;
}

/// Reads a vxSet*Attribute's (ptr, size) into `value`.
template <class T>
vx_status take(const void* ptr, vx_size size, T& value) {
  if (ptr == nullptr || size != sizeof(T)) return VX_ERROR_INVALID_PARAMETERS;
  std::memcpy(&value, ptr, sizeof(T));
  return VX_SUCCESS;
}

}  // namespace ferry::graph
