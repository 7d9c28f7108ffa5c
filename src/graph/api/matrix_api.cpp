// The matrix's entry points: creation from a size or from a pattern (box,
// cross, disk), attributes, copies of its values, release.
#include "graph/api/attributes.hpp"
#include "graph/api/data_access.hpp"
#include "graph/core/matrix.hpp"

#include <cstdint>
#include <cstring>

using namespace ferry::graph;

namespace {

/// "The matrix created by this function is of type VX_TYPE_UINT8, with the
/// value 0 representing False, and the value 255 representing True."
constexpr vx_uint8 pattern_true = 255;

// "VX_TYPE_UINT8 or VX_TYPE_INT32 or VX_TYPE_FLOAT32".
vx_size element_size(vx_enum data_type) {
  switch (data_type) {
    case VX_TYPE_UINT8: return sizeof(vx_uint8);
    case VX_TYPE_INT32: return sizeof(vx_int32);
    case VX_TYPE_FLOAT32: return sizeof(vx_float32);
    default: return 0;
  }
}

// The type and size checks of every creator; `bytes` is the values' size.
vx_status check_matrix(const char* entry, vx_reference owner, vx_enum data_type, vx_size columns, vx_size rows,
                       vx_size& bytes) {
  vx_size element = element_size(data_type);
  if (element == 0)
    return refuse_logged(owner, VX_ERROR_INVALID_TYPE,
                         "%s: type 0x%x is none of VX_TYPE_UINT8, VX_TYPE_INT32, VX_TYPE_FLOAT32", entry, data_type);
  if (columns == 0 || rows == 0)
    return refuse_logged(owner, VX_ERROR_INVALID_DIMENSION, "%s: a %zux%zu matrix has no values", entry, columns, rows);
  // VX_MATRIX_ORIGIN is a vx_coordinates2d_t of vx_uint32s, so each side fits one.
  vx_size cells = 0;
  if (columns > UINT32_MAX || rows > UINT32_MAX || __builtin_mul_overflow(columns, rows, &cells) ||
      __builtin_mul_overflow(cells, element, &bytes) || !storable(bytes))
    return refuse_logged(owner, VX_ERROR_INVALID_DIMENSION, "%s: a %zux%zu matrix is too large", entry, columns,
                         rows);
  return VX_SUCCESS;
}

vx_matrix make_matrix(vx_context context, vx_enum data_type, vx_size columns, vx_size rows, vx_size bytes) {
  auto* matrix = new _vx_matrix(context);
  matrix->data_type = data_type;
  matrix->columns = columns;
  matrix->rows = rows;
  // VX_MATRIX_ORIGIN: "a default value of [floor(VX_MATRIX_COLUMNS/2), floor(VX_MATRIX_ROWS/2)]"
  matrix->origin = {static_cast<vx_uint32>(columns / 2), static_cast<vx_uint32>(rows / 2)};
  matrix->pattern = VX_PATTERN_OTHER;
  matrix->data.assign(bytes, 0);
  register_reference(matrix);
  return matrix;
}

// Cell (c, r) of a pattern, from the spec's definitions in
// vxCreateMatrixFromPatternAndOrigin.
bool pattern_cell(vx_enum pattern, vx_size columns, vx_size rows, vx_size c, vx_size r) {
  switch (pattern) {
    case VX_PATTERN_BOX: return true;
    // "All cells in the center row and center column are equal to 255"
    case VX_PATTERN_CROSS: return r == rows / 2 || c == columns / 2;
    // "(r-R/2 + 0.5)^2 / (R/2)^2 + (c-C/2 + 0.5)^2 / (C/2)^2 is less than or equal to 1"
    case VX_PATTERN_DISK: {
      double half_rows = rows / 2.0, half_columns = columns / 2.0;
      double dr = r - half_rows + 0.5, dc = c - half_columns + 0.5;
      return dr * dr / (half_rows * half_rows) + dc * dc / (half_columns * half_columns) <= 1.0;
    }
    default: return false;
  }
}

// vxCreateMatrixFromPattern(AndOrigin)'s work.
vx_matrix matrix_from_pattern(const char* entry, vx_context context, vx_enum pattern, vx_size columns, vx_size rows,
                              vx_size origin_col, vx_size origin_row, vx_status& status) {
  vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
  if (c == nullptr) {
    status = refuse(entry, VX_ERROR_INVALID_REFERENCE, "not a context");
    return nullptr;
  }
  // The spec defines the cells of VX_PATTERN_BOX, CROSS and DISK;
  // VX_PATTERN_OTHER ("any pattern other than above") has none to make.
  if (pattern != VX_PATTERN_BOX && pattern != VX_PATTERN_CROSS && pattern != VX_PATTERN_DISK) {
    status = refuse_logged(c, VX_ERROR_INVALID_PARAMETERS,
                           "%s: pattern 0x%x is none of VX_PATTERN_BOX, VX_PATTERN_CROSS, VX_PATTERN_DISK (other "
                           "patterns are made with vxCreateMatrix and vxCopyMatrix)",
                           entry, pattern);
    return nullptr;
  }
  vx_size bytes = 0;
  status = check_matrix(entry, c, VX_TYPE_UINT8, columns, rows, bytes);
  if (status != VX_SUCCESS) return nullptr;
  // CROSS: "rows and columns, which both must be odd numbers"; DISK: "where R and C are odd".
  if (pattern != VX_PATTERN_BOX && (columns % 2 == 0 || rows % 2 == 0)) {
    status = refuse_logged(c, VX_ERROR_INVALID_DIMENSION, "%s: a cross or disk pattern needs odd sizes, not %zux%zu",
                           entry, columns, rows);
    return nullptr;
  }
  if (origin_col >= columns || origin_row >= rows) {
    status = refuse_logged(c, VX_ERROR_INVALID_PARAMETERS, "%s: origin (%zu, %zu) lies outside the %zux%zu matrix",
                           entry, origin_col, origin_row, columns, rows);
    return nullptr;
  }
  vx_matrix matrix = make_matrix(c, VX_TYPE_UINT8, columns, rows, bytes);
  matrix->pattern = pattern;
  matrix->origin = {static_cast<vx_uint32>(origin_col), static_cast<vx_uint32>(origin_row)};
  for (vx_size r = 0; r < rows; ++r)
    for (vx_size col = 0; col < columns; ++col)
      matrix->data[r * columns + col] = pattern_cell(pattern, columns, rows, col, r) ? pattern_true : 0;
  return matrix;
}

}  // namespace

VX_API_ENTRY vx_matrix VX_API_CALL vxCreateMatrix(vx_context c, vx_enum data_type, vx_size columns, vx_size rows) {
  return entry_object<vx_matrix>("vxCreateMatrix", c, [&](vx_status& status) -> vx_matrix {
    vx_context context = as<_vx_context>(c, VX_TYPE_CONTEXT);
    if (context == nullptr) {
      status = refuse("vxCreateMatrix", VX_ERROR_INVALID_REFERENCE, "not a context");
      return nullptr;
    }
    vx_size bytes = 0;
    status = check_matrix("vxCreateMatrix", context, data_type, columns, rows, bytes);
    if (status != VX_SUCCESS) return nullptr;
    return make_matrix(context, data_type, columns, rows, bytes);
  });
}

VX_API_ENTRY vx_matrix VX_API_CALL vxCreateVirtualMatrix(vx_graph graph, vx_enum data_type, vx_size columns,
                                                         vx_size rows) {
  return entry_object<vx_matrix>("vxCreateVirtualMatrix", context_for_failure(graph),
                                 [&](vx_status& status) -> vx_matrix {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) {
      status = refuse("vxCreateVirtualMatrix", VX_ERROR_INVALID_REFERENCE, "not a graph");
      return nullptr;
    }
    vx_size bytes = 0;
    status = check_matrix("vxCreateVirtualMatrix", g, data_type, columns, rows, bytes);
    if (status != VX_SUCCESS) return nullptr;
    vx_matrix matrix = make_matrix(g->context, data_type, columns, rows, bytes);
    matrix->is_virtual = true;
    matrix->scope = g;
    return matrix;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseMatrix(vx_matrix* mat) { return release_handle(mat, VX_TYPE_MATRIX); }

VX_API_ENTRY vx_status VX_API_CALL vxQueryMatrix(vx_matrix mat, vx_enum attribute, void* ptr, vx_size size) {
  return entry("vxQueryMatrix", [&]() -> vx_status {
    vx_matrix m = as<_vx_matrix>(mat, VX_TYPE_MATRIX);
    if (m == nullptr) return refuse("vxQueryMatrix", VX_ERROR_INVALID_REFERENCE, "not a matrix");
    switch (attribute) {
      case VX_MATRIX_TYPE: return answer(ptr, size, m->data_type);
      case VX_MATRIX_ROWS: return answer(ptr, size, m->rows);
      case VX_MATRIX_COLUMNS: return answer(ptr, size, m->columns);
      case VX_MATRIX_SIZE: return answer(ptr, size, static_cast<vx_size>(m->data.size()));
      case VX_MATRIX_ORIGIN: return answer(ptr, size, m->origin);
      case VX_MATRIX_PATTERN: return answer(ptr, size, m->pattern);
      default:
        return refuse_logged(m, VX_ERROR_NOT_SUPPORTED, "vxQueryMatrix: no matrix attribute 0x%x", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyMatrix(vx_matrix matrix, void* user_ptr, vx_enum usage,
                                                vx_enum user_mem_type) {
  return entry("vxCopyMatrix", [&]() -> vx_status {
    vx_matrix m = as<_vx_matrix>(matrix, VX_TYPE_MATRIX);
    if (m == nullptr) return refuse("vxCopyMatrix", VX_ERROR_INVALID_REFERENCE, "not a matrix");
    vx_status status = check_copy("vxCopyMatrix", m, user_ptr, usage, user_mem_type);
    if (status != VX_SUCCESS) return status;
    // "A matrix created from pattern is read-only. The behavior when
    // attempting to modify such a matrix is implementation-defined": refused,
    // so that VX_MATRIX_PATTERN keeps describing the values.
    if (usage == VX_WRITE_ONLY && m->pattern != VX_PATTERN_OTHER)
      return refuse_logged(m, VX_ERROR_NOT_SUPPORTED, "vxCopyMatrix: a matrix made from a pattern is read-only");
    // "a row-major 2D array" of VX_MATRIX_TYPE, rows x columns: the order the values are held in.
    if (usage == VX_READ_ONLY)
      std::memcpy(user_ptr, m->data.data(), m->data.size());
    else
      std::memcpy(m->data.data(), user_ptr, m->data.size());
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_matrix VX_API_CALL vxCreateMatrixFromPattern(vx_context context, vx_enum pattern, vx_size columns,
                                                             vx_size rows) {
  return entry_object<vx_matrix>("vxCreateMatrixFromPattern", context, [&](vx_status& status) -> vx_matrix {
    // The origin defaults to the centre, as for any matrix.
    return matrix_from_pattern("vxCreateMatrixFromPattern", context, pattern, columns, rows, columns / 2, rows / 2,
                               status);
  });
}

VX_API_ENTRY vx_matrix VX_API_CALL vxCreateMatrixFromPatternAndOrigin(vx_context context, vx_enum pattern,
                                                                      vx_size columns, vx_size rows,
                                                                      vx_size origin_col, vx_size origin_row) {
  return entry_object<vx_matrix>("vxCreateMatrixFromPatternAndOrigin", context, [&](vx_status& status) -> vx_matrix {
    return matrix_from_pattern("vxCreateMatrixFromPatternAndOrigin", context, pattern, columns, rows, origin_col,
                               origin_row, status);
  });
}
