#include "graph/core/scalar.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace ferry::graph {
namespace {

// A scalar's bytes as a T (the caller picked T from data_type, whose size
// the value was made with; a shorter value reads as zero rather than past its end).
template <class T>
T value_as(vx_scalar scalar) {
  T value{};
  if (scalar->value.size() >= sizeof(T)) std::memcpy(&value, scalar->value.data(), sizeof(T));
  return value;
}

}  // namespace

vx_size scalar_size(vx_enum type) {
  switch (type) {
    case VX_TYPE_CHAR: return sizeof(vx_char);
    case VX_TYPE_INT8: return sizeof(vx_int8);
    case VX_TYPE_UINT8: return sizeof(vx_uint8);
    case VX_TYPE_INT16: return sizeof(vx_int16);
    case VX_TYPE_UINT16: return sizeof(vx_uint16);
    case VX_TYPE_INT32: return sizeof(vx_int32);
    case VX_TYPE_UINT32: return sizeof(vx_uint32);
    case VX_TYPE_INT64: return sizeof(vx_int64);
    case VX_TYPE_UINT64: return sizeof(vx_uint64);
    case VX_TYPE_FLOAT32: return sizeof(vx_float32);
    case VX_TYPE_FLOAT64: return sizeof(vx_float64);
    case VX_TYPE_ENUM: return sizeof(vx_enum);
    case VX_TYPE_SIZE: return sizeof(vx_size);
    case VX_TYPE_DF_IMAGE: return sizeof(vx_df_image);
#if defined(EXPERIMENTAL_PLATFORM_SUPPORTS_16_FLOAT)
    case VX_TYPE_FLOAT16: return sizeof(vx_float16);
#endif
    case VX_TYPE_BOOL: return sizeof(vx_bool);
    // The spec's structs, which scalars and arrays may hold (VX_TYPE_INVALID <
    // type <= VX_TYPE_VENDOR_STRUCT_END).
    case VX_TYPE_RECTANGLE: return sizeof(vx_rectangle_t);
    case VX_TYPE_KEYPOINT: return sizeof(vx_keypoint_t);
    case VX_TYPE_COORDINATES2D: return sizeof(vx_coordinates2d_t);
    case VX_TYPE_COORDINATES3D: return sizeof(vx_coordinates3d_t);
    case VX_TYPE_COORDINATES2DF: return sizeof(vx_coordinates2df_t);
    case VX_TYPE_HOG_PARAMS: return sizeof(vx_hog_t);
    case VX_TYPE_HOUGH_LINES_PARAMS: return sizeof(vx_hough_lines_p_t);
    case VX_TYPE_LINE_2D: return sizeof(vx_line2d_t);
    case VX_TYPE_TENSOR_MATRIX_MULTIPLY_PARAMS: return sizeof(vx_tensor_matrix_multiply_params_t);
    default: return 0;
  }
}

double scalar_number(vx_scalar scalar) {
  switch (scalar->data_type) {
    case VX_TYPE_CHAR: return value_as<vx_char>(scalar);
    case VX_TYPE_INT8: return value_as<vx_int8>(scalar);
    case VX_TYPE_UINT8: return value_as<vx_uint8>(scalar);
    case VX_TYPE_INT16: return value_as<vx_int16>(scalar);
    case VX_TYPE_UINT16: return value_as<vx_uint16>(scalar);
    case VX_TYPE_INT32: return value_as<vx_int32>(scalar);
    case VX_TYPE_UINT32: return value_as<vx_uint32>(scalar);
    case VX_TYPE_INT64: return static_cast<double>(value_as<vx_int64>(scalar));
    case VX_TYPE_UINT64: return static_cast<double>(value_as<vx_uint64>(scalar));
    case VX_TYPE_FLOAT32: return value_as<vx_float32>(scalar);
    case VX_TYPE_FLOAT64: return value_as<vx_float64>(scalar);
    case VX_TYPE_ENUM: return value_as<vx_enum>(scalar);
    case VX_TYPE_SIZE: return static_cast<double>(value_as<vx_size>(scalar));
    case VX_TYPE_DF_IMAGE: return value_as<vx_df_image>(scalar);
    // vx_bool: zero is false, anything else true.
    case VX_TYPE_BOOL: return value_as<vx_bool>(scalar) != vx_false_e ? 1.0 : 0.0;
    default: return 0.0;  // structs are not numbers a kernel takes
  }
}

int64_t scalar_integer(vx_scalar scalar) {
  switch (scalar->data_type) {
    case VX_TYPE_INT64: return value_as<vx_int64>(scalar);
    // Exact for every value, where the path through double would round above 2^53.
    case VX_TYPE_UINT64:
    case VX_TYPE_SIZE: {
      uint64_t value = scalar->data_type == VX_TYPE_UINT64 ? value_as<vx_uint64>(scalar) : value_as<vx_size>(scalar);
      constexpr auto most = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      return value > most ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(value);
    }
    case VX_TYPE_FLOAT32:
    case VX_TYPE_FLOAT64: {
      // Toward zero, as a C cast, but NaN reads as 0 and the ends saturate
      // (casting either to an integer is undefined behaviour).
      double value = scalar_number(scalar);
      if (std::isnan(value)) return 0;
      if (value >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
      if (value <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(value);
    }
    default:
      // Every other number type fits a double exactly.
      return static_cast<int64_t>(scalar_number(scalar));
  }
}

}  // namespace ferry::graph
