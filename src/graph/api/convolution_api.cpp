// The convolution's entry points: creation (odd sizes from 3 to the context's
// maximum), its attributes and scale, copies of its coefficients, release.
#include "graph/api/attributes.hpp"
#include "graph/api/data_access.hpp"
#include "graph/core/convolution.hpp"

#include <cstring>

using namespace ferry::graph;

namespace {

/// "For 1.0, only powers of 2 are supported up to 2^31."
constexpr vx_uint32 max_convolution_scale = 1u << 31;

// "Must be odd and greater than or equal to 3 and less than the value
// returned from VX_CONTEXT_CONVOLUTION_MAX_DIMENSION". Read as "at most":
// the context's maximum is a size the implementation runs.
bool is_convolution_dimension(vx_size n) { return n >= 3 && n % 2 == 1 && n <= max_convolution_dimension; }

vx_status check_dimensions(const char* entry, vx_reference owner, vx_size columns, vx_size rows) {
  if (!is_convolution_dimension(columns) || !is_convolution_dimension(rows))
    return refuse_logged(owner, VX_ERROR_INVALID_DIMENSION,
                         "%s: %zux%zu: columns and rows must be odd, at least 3 and at most %zu", entry, columns, rows,
                         max_convolution_dimension);
  return VX_SUCCESS;
}

vx_convolution make_convolution(vx_context context, vx_size columns, vx_size rows) {
  auto* convolution = new _vx_convolution(context);
  convolution->columns = columns;
  convolution->rows = rows;
  convolution->scale = 1;
  convolution->coefficients.assign(columns * rows, 0);
  register_reference(convolution);
  return convolution;
}

}  // namespace

VX_API_ENTRY vx_convolution VX_API_CALL vxCreateConvolution(vx_context context, vx_size columns, vx_size rows) {
  return entry_object<vx_convolution>("vxCreateConvolution", context, [&](vx_status& status) -> vx_convolution {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = refuse("vxCreateConvolution", VX_ERROR_INVALID_REFERENCE, "not a context");
      return nullptr;
    }
    status = check_dimensions("vxCreateConvolution", c, columns, rows);
    if (status != VX_SUCCESS) return nullptr;
    return make_convolution(c, columns, rows);
  });
}

VX_API_ENTRY vx_convolution VX_API_CALL vxCreateVirtualConvolution(vx_graph graph, vx_size columns, vx_size rows) {
  return entry_object<vx_convolution>("vxCreateVirtualConvolution", context_for_failure(graph),
                                      [&](vx_status& status) -> vx_convolution {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) {
      status = refuse("vxCreateVirtualConvolution", VX_ERROR_INVALID_REFERENCE, "not a graph");
      return nullptr;
    }
    status = check_dimensions("vxCreateVirtualConvolution", g, columns, rows);
    if (status != VX_SUCCESS) return nullptr;
    vx_convolution convolution = make_convolution(g->context, columns, rows);
    convolution->is_virtual = true;
    convolution->scope = g;
    return convolution;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseConvolution(vx_convolution* conv) {
  return release_handle(conv, VX_TYPE_CONVOLUTION);
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryConvolution(vx_convolution conv, vx_enum attribute, void* ptr,
                                                      vx_size size) {
  return entry("vxQueryConvolution", [&]() -> vx_status {
    vx_convolution c = as<_vx_convolution>(conv, VX_TYPE_CONVOLUTION);
    if (c == nullptr) return refuse("vxQueryConvolution", VX_ERROR_INVALID_REFERENCE, "not a convolution");
    switch (attribute) {
      case VX_CONVOLUTION_ROWS: return answer(ptr, size, c->rows);
      case VX_CONVOLUTION_COLUMNS: return answer(ptr, size, c->columns);
      case VX_CONVOLUTION_SCALE: return answer(ptr, size, c->scale);
      case VX_CONVOLUTION_SIZE:
        return answer(ptr, size, static_cast<vx_size>(c->coefficients.size() * sizeof(vx_int16)));
      default:
        return refuse_logged(c, VX_ERROR_NOT_SUPPORTED, "vxQueryConvolution: no convolution attribute 0x%x",
                             attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetConvolutionAttribute(vx_convolution conv, vx_enum attribute, const void* ptr,
                                                             vx_size size) {
  return entry("vxSetConvolutionAttribute", [&]() -> vx_status {
    vx_convolution c = as<_vx_convolution>(conv, VX_TYPE_CONVOLUTION);
    if (c == nullptr) return refuse("vxSetConvolutionAttribute", VX_ERROR_INVALID_REFERENCE, "not a convolution");
    switch (attribute) {
      case VX_CONVOLUTION_SCALE: {
        vx_uint32 scale = 0;
        vx_status status = take(ptr, size, scale);
        if (status != VX_SUCCESS)
          return refuse_logged(c, status, "vxSetConvolutionAttribute: VX_CONVOLUTION_SCALE takes one vx_uint32");
        // "only powers of 2 are supported up to 2^31"
        if (scale == 0 || (scale & (scale - 1)) != 0 || scale > max_convolution_scale)
          return refuse_logged(c, VX_ERROR_INVALID_VALUE,
                               "vxSetConvolutionAttribute: scale %u is not a power of two up to 2^31", scale);
        c->scale = scale;
        return VX_SUCCESS;
      }
      case VX_CONVOLUTION_ROWS:
      case VX_CONVOLUTION_COLUMNS:
      case VX_CONVOLUTION_SIZE:
        return refuse_logged(c, VX_ERROR_NOT_SUPPORTED, "vxSetConvolutionAttribute: attribute 0x%x is read-only",
                             attribute);
      default:
        return refuse_logged(c, VX_ERROR_NOT_SUPPORTED, "vxSetConvolutionAttribute: no convolution attribute 0x%x",
                             attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyConvolutionCoefficients(vx_convolution conv, void* user_ptr, vx_enum usage,
                                                                 vx_enum user_mem_type) {
  return entry("vxCopyConvolutionCoefficients", [&]() -> vx_status {
    vx_convolution c = as<_vx_convolution>(conv, VX_TYPE_CONVOLUTION);
    if (c == nullptr) return refuse("vxCopyConvolutionCoefficients", VX_ERROR_INVALID_REFERENCE, "not a convolution");
    vx_status status = check_copy("vxCopyConvolutionCoefficients", c, user_ptr, usage, user_mem_type);
    if (status != VX_SUCCESS) return status;
    // "a row-major 2D array" of vx_int16, rows x columns: the order the coefficients are held in.
    vx_size bytes = c->coefficients.size() * sizeof(vx_int16);
    if (usage == VX_READ_ONLY)
      std::memcpy(user_ptr, c->coefficients.data(), bytes);
    else
      std::memcpy(c->coefficients.data(), user_ptr, bytes);
    return VX_SUCCESS;
  });
}
