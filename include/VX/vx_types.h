/* OpenVX 1.3 types, enumerations and structures, for Ferry's OpenVX
 * implementation. Written from the OpenVX 1.3 specification: every name,
 * value, typedef and structure layout is the specification's, so programs
 * built against the Khronos headers build against these unchanged and share
 * their binary interface. Pure types: no declarations with linkage. */
#ifndef _OPENVX_TYPES_H_
#define _OPENVX_TYPES_H_

#include <stdint.h>
#include <stddef.h>

/* The enumerations below are built from vendor ids; including this header on
 * its own therefore brings them in too (the header has its own guard). */
#include <VX/vx_vendors.h>

/// Calling conventions. A build may define any of them beforehand; by default
/// exported functions and callbacks use __stdcall on Windows and the platform
/// default elsewhere.
#ifndef VX_API_ENTRY
#define VX_API_ENTRY
#endif
#ifndef VX_API_CALL
#if defined(_WIN32)
#define VX_API_CALL __stdcall
#else
#define VX_API_CALL
#endif
#endif
#ifndef VX_CALLBACK
#if defined(_WIN32)
#define VX_CALLBACK __stdcall
#else
#define VX_CALLBACK
#endif
#endif

/// Fixed-size scalar types.
typedef char     vx_char;
typedef uint8_t  vx_uint8;
typedef uint16_t vx_uint16;
typedef uint32_t vx_uint32;
typedef uint64_t vx_uint64;
typedef int8_t   vx_int8;
typedef int16_t  vx_int16;
typedef int32_t  vx_int32;
typedef int64_t  vx_int64;
typedef uint32_t vx_bitfield;

/// Half-precision floats exist only where the platform supplies `hfloat`
/// and defines EXPERIMENTAL_PLATFORM_SUPPORTS_16_FLOAT.
#if defined(EXPERIMENTAL_PLATFORM_SUPPORTS_16_FLOAT)
typedef hfloat   vx_float16;
#endif

typedef float    vx_float32;
typedef double   vx_float64;

/// The base of every OpenVX object handle; any object converts to it.
typedef struct _vx_reference *vx_reference;

/// Enumerated values travel in a fixed 32-bit signed container.
typedef int32_t vx_enum;

/// size_t under the OpenVX naming scheme.
typedef size_t vx_size;

/// A four-character pixel format code (see VX_DF_IMAGE).
typedef uint32_t vx_df_image;

/// The handle a map call returns and the matching unmap call takes.
typedef uintptr_t vx_map_id;

/// Opaque object handles, one per object kind.
typedef struct _vx_scalar *vx_scalar;
typedef struct _vx_image *vx_image;
typedef struct _vx_kernel *vx_kernel;
typedef struct _vx_parameter *vx_parameter;
typedef struct _vx_node *vx_node;
typedef struct _vx_graph *vx_graph;
typedef struct _vx_context *vx_context;
typedef struct _vx_delay *vx_delay;
typedef struct _vx_lut *vx_lut;
typedef struct _vx_distribution *vx_distribution;
typedef struct _vx_matrix *vx_matrix;
typedef struct _vx_pyramid *vx_pyramid;
typedef struct _vx_threshold *vx_threshold;
typedef struct _vx_convolution *vx_convolution;
typedef struct _vx_remap *vx_remap;
typedef struct _vx_array *vx_array;
typedef struct _vx_object_array *vx_object_array;
typedef struct _vx_tensor_t *vx_tensor;

/// Booleans: zero is false, anything else true; vx_bool has a fixed size.
enum vx_bool_e {
    vx_false_e = 0,
    vx_true_e,
};
typedef vx_enum vx_bool;

/// What a user kernel's validator fills in to describe an output.
typedef struct _vx_meta_format *vx_meta_format;

/// Type codes of data values (0x000..0x0FF), user and vendor structs
/// (0x100..0x7FF) and objects (0x800..0xFFF).
enum vx_type_e {
    VX_TYPE_INVALID         = 0x000,
    VX_TYPE_CHAR            = 0x001,
    VX_TYPE_INT8            = 0x002,
    VX_TYPE_UINT8           = 0x003,
    VX_TYPE_INT16           = 0x004,
    VX_TYPE_UINT16          = 0x005,
    VX_TYPE_INT32           = 0x006,
    VX_TYPE_UINT32          = 0x007,
    VX_TYPE_INT64           = 0x008,
    VX_TYPE_UINT64          = 0x009,
    VX_TYPE_FLOAT32         = 0x00A,
    VX_TYPE_FLOAT64         = 0x00B,
    VX_TYPE_ENUM            = 0x00C,
    VX_TYPE_SIZE            = 0x00D,
    VX_TYPE_DF_IMAGE        = 0x00E,
#if defined(EXPERIMENTAL_PLATFORM_SUPPORTS_16_FLOAT)
    VX_TYPE_FLOAT16         = 0x00F,
#endif
    VX_TYPE_BOOL            = 0x010,

    /// Khronos structures. 0x025..0x027 and 0x02C belong to Khronos
    /// extensions (neural networks, classifier) and are not defined here.
    VX_TYPE_RECTANGLE       = 0x020,
    VX_TYPE_KEYPOINT        = 0x021,
    VX_TYPE_COORDINATES2D   = 0x022,
    VX_TYPE_COORDINATES3D   = 0x023,
    VX_TYPE_COORDINATES2DF  = 0x024,
    VX_TYPE_HOG_PARAMS      = 0x028,
    VX_TYPE_HOUGH_LINES_PARAMS = 0x029,
    VX_TYPE_LINE_2D         = 0x02A,
    VX_TYPE_TENSOR_MATRIX_MULTIPLY_PARAMS = 0x02B,

    /// Range starts and ends.
    VX_TYPE_USER_STRUCT_START    = 0x100,
    VX_TYPE_VENDOR_STRUCT_START  = 0x400,
    VX_TYPE_KHRONOS_OBJECT_START = 0x800,
    VX_TYPE_VENDOR_OBJECT_START  = 0xC00,
    VX_TYPE_KHRONOS_STRUCT_MAX   = VX_TYPE_USER_STRUCT_START - 1,
    VX_TYPE_USER_STRUCT_END      = VX_TYPE_VENDOR_STRUCT_START - 1,
    VX_TYPE_VENDOR_STRUCT_END    = VX_TYPE_KHRONOS_OBJECT_START - 1,
    VX_TYPE_KHRONOS_OBJECT_END   = VX_TYPE_VENDOR_OBJECT_START - 1,
    VX_TYPE_VENDOR_OBJECT_END    = 0xFFF,

    /// Khronos objects. 0x814 is held for the import extension.
    VX_TYPE_REFERENCE       = 0x800,
    VX_TYPE_CONTEXT         = 0x801,
    VX_TYPE_GRAPH           = 0x802,
    VX_TYPE_NODE            = 0x803,
    VX_TYPE_KERNEL          = 0x804,
    VX_TYPE_PARAMETER       = 0x805,
    VX_TYPE_DELAY           = 0x806,
    VX_TYPE_LUT             = 0x807,
    VX_TYPE_DISTRIBUTION    = 0x808,
    VX_TYPE_PYRAMID         = 0x809,
    VX_TYPE_THRESHOLD       = 0x80A,
    VX_TYPE_MATRIX          = 0x80B,
    VX_TYPE_CONVOLUTION     = 0x80C,
    VX_TYPE_SCALAR          = 0x80D,
    VX_TYPE_ARRAY           = 0x80E,
    VX_TYPE_IMAGE           = 0x80F,
    VX_TYPE_REMAP           = 0x810,
    VX_TYPE_ERROR           = 0x811,
    VX_TYPE_META_FORMAT     = 0x812,
    VX_TYPE_OBJECT_ARRAY    = 0x813,
    VX_TYPE_TENSOR          = 0x815,
};

/// Status codes: zero is success, every error is negative.
enum vx_status_e {
    VX_STATUS_MIN                = -25,
    VX_ERROR_REFERENCE_NONZERO   = -24,
    VX_ERROR_MULTIPLE_WRITERS    = -23,
    VX_ERROR_GRAPH_ABANDONED     = -22,
    VX_ERROR_GRAPH_SCHEDULED     = -21,
    VX_ERROR_INVALID_SCOPE       = -20,
    VX_ERROR_INVALID_NODE        = -19,
    VX_ERROR_INVALID_GRAPH       = -18,
    VX_ERROR_INVALID_TYPE        = -17,
    VX_ERROR_INVALID_VALUE       = -16,
    VX_ERROR_INVALID_DIMENSION   = -15,
    VX_ERROR_INVALID_FORMAT      = -14,
    VX_ERROR_INVALID_LINK        = -13,
    VX_ERROR_INVALID_REFERENCE   = -12,
    VX_ERROR_INVALID_MODULE      = -11,
    VX_ERROR_INVALID_PARAMETERS  = -10,
    VX_ERROR_OPTIMIZED_AWAY      = -9,
    VX_ERROR_NO_MEMORY           = -8,
    VX_ERROR_NO_RESOURCES        = -7,
    VX_ERROR_NOT_COMPATIBLE      = -6,
    VX_ERROR_NOT_ALLOCATED       = -5,
    VX_ERROR_NOT_SUFFICIENT      = -4,
    VX_ERROR_NOT_SUPPORTED       = -3,
    VX_ERROR_NOT_IMPLEMENTED     = -2,
    VX_FAILURE                   = -1,
    VX_SUCCESS                   = 0,
};
typedef vx_enum vx_status;

/// A node-completion callback returns one of vx_action_e.
typedef vx_enum vx_action;
typedef vx_action (VX_CALLBACK *vx_nodecomplete_f)(vx_node node);

/// Bit fields of enumerated values: vendor (bits 20..31), object type of an
/// attribute (8..19), library of a kernel or enumeration type (12..19),
/// kernel or enumeration index (0..11), attribute index (0..7).
#define VX_VENDOR_MASK        (0xFFF00000U)
#define VX_TYPE_MASK          (0x000FFF00U)
#define VX_LIBRARY_MASK       (0x000FF000U)
#define VX_KERNEL_MASK        (0x00000FFFU)
#define VX_ATTRIBUTE_ID_MASK  (0x000000FFU)
#define VX_ENUM_TYPE_MASK     (0x000FF000U)
#define VX_ENUM_MASK          (0x00000FFFU)

/// Field extraction from an enumerated value.
#define VX_VENDOR(e)     (((vx_uint32)(e) & VX_VENDOR_MASK) >> 20)
#define VX_TYPE(e)       (((vx_uint32)(e) & VX_TYPE_MASK) >> 8)
#define VX_ENUM_TYPE(e)  (((vx_uint32)(e) & VX_ENUM_TYPE_MASK) >> 12)
#define VX_LIBRARY(e)    (((vx_uint32)(e) & VX_LIBRARY_MASK) >> 12)

/// Packs four characters into a pixel format code, the first in the low byte.
#define VX_DF_IMAGE(a, b, c, d) \
    ((vx_uint32)(vx_uint8)(a) | ((vx_uint32)(vx_uint8)(b) << 8U) | \
     ((vx_uint32)(vx_uint8)(c) << 16U) | ((vx_uint32)(vx_uint8)(d) << 24U))

/// First value of an object's attributes, a library's kernels, and an
/// enumeration type's values.
#define VX_ATTRIBUTE_BASE(vendor, object) \
    ((vx_int32)(((vx_uint32)(vendor) << 20) | ((vx_uint32)(object) << 8)))
#define VX_KERNEL_BASE(vendor, lib) \
    ((vx_int32)(((vx_uint32)(vendor) << 20) | ((vx_uint32)(lib) << 12)))
#define VX_ENUM_BASE(vendor, id) \
    ((vx_int32)(((vx_uint32)(vendor) << 20) | ((vx_uint32)(id) << 12)))

/// Enumeration type ids, as VX_ENUM_TYPE() extracts them. 0x1A..0x1F are held
/// for Khronos extensions (neural networks, classifier, import/export).
enum vx_enum_e {
    VX_ENUM_DIRECTION        = 0x00,
    VX_ENUM_ACTION           = 0x01,
    VX_ENUM_HINT             = 0x02,
    VX_ENUM_DIRECTIVE        = 0x03,
    VX_ENUM_INTERPOLATION    = 0x04,
    VX_ENUM_OVERFLOW         = 0x05,
    VX_ENUM_COLOR_SPACE      = 0x06,
    VX_ENUM_COLOR_RANGE      = 0x07,
    VX_ENUM_PARAMETER_STATE  = 0x08,
    VX_ENUM_CHANNEL          = 0x09,
    VX_ENUM_CONVERT_POLICY   = 0x0A,
    VX_ENUM_THRESHOLD_TYPE   = 0x0B,
    VX_ENUM_BORDER           = 0x0C,
    VX_ENUM_COMPARISON       = 0x0D,
    VX_ENUM_MEMORY_TYPE      = 0x0E,
    VX_ENUM_TERM_CRITERIA    = 0x0F,
    VX_ENUM_NORM_TYPE        = 0x10,
    VX_ENUM_ACCESSOR         = 0x11,
    VX_ENUM_ROUND_POLICY     = 0x12,
    VX_ENUM_TARGET           = 0x13,
    VX_ENUM_BORDER_POLICY    = 0x14,
    VX_ENUM_GRAPH_STATE      = 0x15,
    VX_ENUM_NONLINEAR        = 0x16,
    VX_ENUM_PATTERN          = 0x17,
    VX_ENUM_LBP_FORMAT       = 0x18,
    VX_ENUM_COMP_METRIC      = 0x19,
    VX_ENUM_SCALAR_OPERATION = 0x20,
};

/// What a node-completion callback asks the graph to do next.
enum vx_action_e {
    VX_ACTION_CONTINUE = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_ACTION) + 0x0,
    VX_ACTION_ABANDON  = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_ACTION) + 0x1,
};

/// Direction of a kernel parameter.
enum vx_direction_e {
    VX_INPUT  = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_DIRECTION) + 0x0,
    VX_OUTPUT = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_DIRECTION) + 0x1,
};

/// Optional hints for vxHint.
enum vx_hint_e {
    VX_HINT_PERFORMANCE_DEFAULT    = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_HINT) + 0x1,
    VX_HINT_PERFORMANCE_LOW_POWER  = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_HINT) + 0x2,
    VX_HINT_PERFORMANCE_HIGH_SPEED = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_HINT) + 0x3,
};

/// Mandatory directives for vxDirective.
enum vx_directive_e {
    VX_DIRECTIVE_DISABLE_LOGGING     = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_DIRECTIVE) + 0x0,
    VX_DIRECTIVE_ENABLE_LOGGING      = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_DIRECTIVE) + 0x1,
    VX_DIRECTIVE_DISABLE_PERFORMANCE = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_DIRECTIVE) + 0x2,
    VX_DIRECTIVE_ENABLE_PERFORMANCE  = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_DIRECTIVE) + 0x3,
};

/// Life cycle of a graph (VX_GRAPH_STATE).
enum vx_graph_state_e {
    VX_GRAPH_STATE_UNVERIFIED = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_GRAPH_STATE) + 0x0,
    VX_GRAPH_STATE_VERIFIED   = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_GRAPH_STATE) + 0x1,
    VX_GRAPH_STATE_RUNNING    = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_GRAPH_STATE) + 0x2,
    VX_GRAPH_STATE_ABANDONED  = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_GRAPH_STATE) + 0x3,
    VX_GRAPH_STATE_COMPLETED  = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_GRAPH_STATE) + 0x4,
};

/// Graph attributes (index 0x1 is unused).
enum vx_graph_attribute_e {
    VX_GRAPH_NUMNODES      = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_GRAPH) + 0x0,
    VX_GRAPH_PERFORMANCE   = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_GRAPH) + 0x2,
    VX_GRAPH_NUMPARAMETERS = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_GRAPH) + 0x3,
    VX_GRAPH_STATE         = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_GRAPH) + 0x4,
};

/// Overflow handling of arithmetic results.
enum vx_convert_policy_e {
    VX_CONVERT_POLICY_WRAP     = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_CONVERT_POLICY) + 0x0,
    VX_CONVERT_POLICY_SATURATE = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_CONVERT_POLICY) + 0x1,
};

/// Pixel formats (held in a vx_df_image).
enum vx_df_image_e {
    VX_DF_IMAGE_VIRT = VX_DF_IMAGE('V', 'I', 'R', 'T'),
    VX_DF_IMAGE_RGB  = VX_DF_IMAGE('R', 'G', 'B', '2'),
    VX_DF_IMAGE_RGBX = VX_DF_IMAGE('R', 'G', 'B', 'A'),
    VX_DF_IMAGE_NV12 = VX_DF_IMAGE('N', 'V', '1', '2'),
    VX_DF_IMAGE_NV21 = VX_DF_IMAGE('N', 'V', '2', '1'),
    VX_DF_IMAGE_UYVY = VX_DF_IMAGE('U', 'Y', 'V', 'Y'),
    VX_DF_IMAGE_YUYV = VX_DF_IMAGE('Y', 'U', 'Y', 'V'),
    VX_DF_IMAGE_IYUV = VX_DF_IMAGE('I', 'Y', 'U', 'V'),
    VX_DF_IMAGE_YUV4 = VX_DF_IMAGE('Y', 'U', 'V', '4'),
    VX_DF_IMAGE_U1   = VX_DF_IMAGE('U', '0', '0', '1'),
    VX_DF_IMAGE_U8   = VX_DF_IMAGE('U', '0', '0', '8'),
    VX_DF_IMAGE_U16  = VX_DF_IMAGE('U', '0', '1', '6'),
    VX_DF_IMAGE_S16  = VX_DF_IMAGE('S', '0', '1', '6'),
    VX_DF_IMAGE_U32  = VX_DF_IMAGE('U', '0', '3', '2'),
    VX_DF_IMAGE_S32  = VX_DF_IMAGE('S', '0', '3', '2'),
};

/// Execution targets.
enum vx_target_e {
    VX_TARGET_ANY          = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_TARGET) + 0x0000,
    VX_TARGET_STRING       = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_TARGET) + 0x0001,
    VX_TARGET_VENDOR_BEGIN = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_TARGET) + 0x1000,
};

/// Attributes every reference has.
enum vx_reference_attribute_e {
    VX_REFERENCE_COUNT = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_REFERENCE) + 0x0,
    VX_REFERENCE_TYPE  = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_REFERENCE) + 0x1,
    VX_REFERENCE_NAME  = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_REFERENCE) + 0x2,
};

/// Context attributes.
enum vx_context_attribute_e {
    VX_CONTEXT_VENDOR_ID                         = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0x0,
    VX_CONTEXT_VERSION                           = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0x1,
    VX_CONTEXT_UNIQUE_KERNELS                    = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0x2,
    VX_CONTEXT_MODULES                           = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0x3,
    VX_CONTEXT_REFERENCES                        = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0x4,
    VX_CONTEXT_IMPLEMENTATION                    = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0x5,
    VX_CONTEXT_EXTENSIONS_SIZE                   = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0x6,
    VX_CONTEXT_EXTENSIONS                        = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0x7,
    VX_CONTEXT_CONVOLUTION_MAX_DIMENSION         = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0x8,
    VX_CONTEXT_OPTICAL_FLOW_MAX_WINDOW_DIMENSION = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0x9,
    VX_CONTEXT_IMMEDIATE_BORDER                  = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0xA,
    VX_CONTEXT_UNIQUE_KERNEL_TABLE               = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0xB,
    VX_CONTEXT_IMMEDIATE_BORDER_POLICY           = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0xC,
    VX_CONTEXT_NONLINEAR_MAX_DIMENSION           = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0xD,
    VX_CONTEXT_MAX_TENSOR_DIMS                   = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0xE,
};

/// Kernel attributes.
enum vx_kernel_attribute_e {
    VX_KERNEL_PARAMETERS      = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_KERNEL) + 0x0,
    VX_KERNEL_NAME            = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_KERNEL) + 0x1,
    VX_KERNEL_ENUM            = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_KERNEL) + 0x2,
    VX_KERNEL_LOCAL_DATA_SIZE = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_KERNEL) + 0x3,
};

/// Node attributes.
enum vx_node_attribute_e {
    VX_NODE_STATUS           = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_NODE) + 0x0,
    VX_NODE_PERFORMANCE      = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_NODE) + 0x1,
    VX_NODE_BORDER           = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_NODE) + 0x2,
    VX_NODE_LOCAL_DATA_SIZE  = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_NODE) + 0x3,
    VX_NODE_LOCAL_DATA_PTR   = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_NODE) + 0x4,
    VX_NODE_PARAMETERS       = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_NODE) + 0x5,
    VX_NODE_IS_REPLICATED    = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_NODE) + 0x6,
    VX_NODE_REPLICATE_FLAGS  = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_NODE) + 0x7,
    VX_NODE_VALID_RECT_RESET = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_NODE) + 0x8,
};

/// Parameter attributes.
enum vx_parameter_attribute_e {
    VX_PARAMETER_INDEX       = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_PARAMETER) + 0x0,
    VX_PARAMETER_DIRECTION   = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_PARAMETER) + 0x1,
    VX_PARAMETER_TYPE        = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_PARAMETER) + 0x2,
    VX_PARAMETER_STATE       = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_PARAMETER) + 0x3,
    VX_PARAMETER_REF         = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_PARAMETER) + 0x4,
    VX_PARAMETER_META_FORMAT = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_PARAMETER) + 0x5,
};

/// Image attributes (index 0x6 is unused).
enum vx_image_attribute_e {
    VX_IMAGE_WIDTH         = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_IMAGE) + 0x0,
    VX_IMAGE_HEIGHT        = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_IMAGE) + 0x1,
    VX_IMAGE_FORMAT        = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_IMAGE) + 0x2,
    VX_IMAGE_PLANES        = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_IMAGE) + 0x3,
    VX_IMAGE_SPACE         = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_IMAGE) + 0x4,
    VX_IMAGE_RANGE         = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_IMAGE) + 0x5,
    VX_IMAGE_MEMORY_TYPE   = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_IMAGE) + 0x7,
    VX_IMAGE_IS_UNIFORM    = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_IMAGE) + 0x8,
    VX_IMAGE_UNIFORM_VALUE = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_IMAGE) + 0x9,
};

/// Scalar attributes.
enum vx_scalar_attribute_e {
    VX_SCALAR_TYPE = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_SCALAR) + 0x0,
};

/// Operations of the scalar-operation kernel (logic, comparison, arithmetic,
/// minimum and maximum).
enum vx_scalar_operation_e {
    VX_SCALAR_OP_AND       = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0x0,
    VX_SCALAR_OP_OR        = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0x1,
    VX_SCALAR_OP_XOR       = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0x2,
    VX_SCALAR_OP_NAND      = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0x3,
    VX_SCALAR_OP_EQUAL     = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0x4,
    VX_SCALAR_OP_NOTEQUAL  = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0x5,
    VX_SCALAR_OP_LESS      = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0x6,
    VX_SCALAR_OP_LESSEQ    = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0x7,
    VX_SCALAR_OP_GREATER   = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0x8,
    VX_SCALAR_OP_GREATEREQ = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0x9,
    VX_SCALAR_OP_ADD       = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0xA,
    VX_SCALAR_OP_SUBTRACT  = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0xB,
    VX_SCALAR_OP_MULTIPLY  = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0xC,
    VX_SCALAR_OP_DIVIDE    = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0xD,
    VX_SCALAR_OP_MODULUS   = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0xE,
    VX_SCALAR_OP_MIN       = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0xF,
    VX_SCALAR_OP_MAX       = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_SCALAR_OPERATION) + 0x10,
};

/// Look-up table attributes.
enum vx_lut_attribute_e {
    VX_LUT_TYPE   = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_LUT) + 0x0,
    VX_LUT_COUNT  = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_LUT) + 0x1,
    VX_LUT_SIZE   = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_LUT) + 0x2,
    VX_LUT_OFFSET = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_LUT) + 0x3,
};

/// Distribution attributes.
enum vx_distribution_attribute_e {
    VX_DISTRIBUTION_DIMENSIONS = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_DISTRIBUTION) + 0x0,
    VX_DISTRIBUTION_OFFSET     = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_DISTRIBUTION) + 0x1,
    VX_DISTRIBUTION_RANGE      = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_DISTRIBUTION) + 0x2,
    VX_DISTRIBUTION_BINS       = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_DISTRIBUTION) + 0x3,
    VX_DISTRIBUTION_WINDOW     = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_DISTRIBUTION) + 0x4,
    VX_DISTRIBUTION_SIZE       = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_DISTRIBUTION) + 0x5,
};

/// Kinds of threshold: one value, or a lower and upper bound.
enum vx_threshold_type_e {
    VX_THRESHOLD_TYPE_BINARY = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_THRESHOLD_TYPE) + 0x0,
    VX_THRESHOLD_TYPE_RANGE  = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_THRESHOLD_TYPE) + 0x1,
};

/// Threshold attributes. Indices 0x1..0x6 (the 1.1 value, bound and
/// true/false attributes) left the core in 1.2.
enum vx_threshold_attribute_e {
    VX_THRESHOLD_TYPE          = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_THRESHOLD) + 0x0,
    VX_THRESHOLD_INPUT_FORMAT  = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_THRESHOLD) + 0x7,
    VX_THRESHOLD_OUTPUT_FORMAT = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_THRESHOLD) + 0x8,
};

/// Matrix attributes.
enum vx_matrix_attribute_e {
    VX_MATRIX_TYPE    = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_MATRIX) + 0x0,
    VX_MATRIX_ROWS    = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_MATRIX) + 0x1,
    VX_MATRIX_COLUMNS = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_MATRIX) + 0x2,
    VX_MATRIX_SIZE    = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_MATRIX) + 0x3,
    VX_MATRIX_ORIGIN  = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_MATRIX) + 0x4,
    VX_MATRIX_PATTERN = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_MATRIX) + 0x5,
};

/// Convolution attributes.
enum vx_convolution_attribute_e {
    VX_CONVOLUTION_ROWS    = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONVOLUTION) + 0x0,
    VX_CONVOLUTION_COLUMNS = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONVOLUTION) + 0x1,
    VX_CONVOLUTION_SCALE   = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONVOLUTION) + 0x2,
    VX_CONVOLUTION_SIZE    = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONVOLUTION) + 0x3,
};

/// Pyramid attributes.
enum vx_pyramid_attribute_e {
    VX_PYRAMID_LEVELS = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_PYRAMID) + 0x0,
    VX_PYRAMID_SCALE  = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_PYRAMID) + 0x1,
    VX_PYRAMID_WIDTH  = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_PYRAMID) + 0x2,
    VX_PYRAMID_HEIGHT = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_PYRAMID) + 0x3,
    VX_PYRAMID_FORMAT = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_PYRAMID) + 0x4,
};

/// Remap attributes.
enum vx_remap_attribute_e {
    VX_REMAP_SOURCE_WIDTH       = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_REMAP) + 0x0,
    VX_REMAP_SOURCE_HEIGHT      = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_REMAP) + 0x1,
    VX_REMAP_DESTINATION_WIDTH  = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_REMAP) + 0x2,
    VX_REMAP_DESTINATION_HEIGHT = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_REMAP) + 0x3,
};

/// Array attributes.
enum vx_array_attribute_e {
    VX_ARRAY_ITEMTYPE = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_ARRAY) + 0x0,
    VX_ARRAY_NUMITEMS = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_ARRAY) + 0x1,
    VX_ARRAY_CAPACITY = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_ARRAY) + 0x2,
    VX_ARRAY_ITEMSIZE = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_ARRAY) + 0x3,
};

/// Object-array attributes.
enum vx_object_array_attribute_e {
    VX_OBJECT_ARRAY_ITEMTYPE = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_OBJECT_ARRAY) + 0x0,
    VX_OBJECT_ARRAY_NUMITEMS = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_OBJECT_ARRAY) + 0x1,
};

/// Tensor attributes.
enum vx_tensor_attribute_e {
    VX_TENSOR_NUMBER_OF_DIMS       = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_TENSOR) + 0x0,
    VX_TENSOR_DIMS                 = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_TENSOR) + 0x1,
    VX_TENSOR_DATA_TYPE            = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_TENSOR) + 0x2,
    VX_TENSOR_FIXED_POINT_POSITION = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_TENSOR) + 0x3,
};

/// Meta-format attribute: the callback that sets an output's valid rectangle.
enum vx_meta_valid_rect_attribute_e {
    VX_VALID_RECT_CALLBACK = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_META_FORMAT) + 0x1,
};

/// Channels for channel extraction: by position (0..3) or by name.
enum vx_channel_e {
    VX_CHANNEL_0 = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_CHANNEL) + 0x0,
    VX_CHANNEL_1 = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_CHANNEL) + 0x1,
    VX_CHANNEL_2 = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_CHANNEL) + 0x2,
    VX_CHANNEL_3 = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_CHANNEL) + 0x3,
    VX_CHANNEL_R = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_CHANNEL) + 0x10,
    VX_CHANNEL_G = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_CHANNEL) + 0x11,
    VX_CHANNEL_B = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_CHANNEL) + 0x12,
    VX_CHANNEL_A = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_CHANNEL) + 0x13,
    VX_CHANNEL_Y = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_CHANNEL) + 0x14,
    VX_CHANNEL_U = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_CHANNEL) + 0x15,
    VX_CHANNEL_V = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_CHANNEL) + 0x16,
};

/// Where the memory of an imported object lives.
enum vx_memory_type_e {
    VX_MEMORY_TYPE_NONE = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_MEMORY_TYPE) + 0x0,
    VX_MEMORY_TYPE_HOST = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_MEMORY_TYPE) + 0x1,
};

/// Resampling filters of scale, warp and remap.
enum vx_interpolation_type_e {
    VX_INTERPOLATION_NEAREST_NEIGHBOR = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_INTERPOLATION) + 0x0,
    VX_INTERPOLATION_BILINEAR         = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_INTERPOLATION) + 0x1,
    VX_INTERPOLATION_AREA             = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_INTERPOLATION) + 0x2,
};

/// Functions of the non-linear filter.
enum vx_non_linear_filter_e {
    VX_NONLINEAR_FILTER_MEDIAN = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NONLINEAR) + 0x0,
    VX_NONLINEAR_FILTER_MIN    = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NONLINEAR) + 0x1,
    VX_NONLINEAR_FILTER_MAX    = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NONLINEAR) + 0x2,
};

/// Matrix patterns (vxCreateMatrixFromPattern).
enum vx_pattern_e {
    VX_PATTERN_BOX   = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_PATTERN) + 0x0,
    VX_PATTERN_CROSS = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_PATTERN) + 0x1,
    VX_PATTERN_DISK  = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_PATTERN) + 0x2,
    VX_PATTERN_OTHER = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_PATTERN) + 0x3,
};

/// Image color spaces (VX_IMAGE_SPACE); BT.709 unless set.
enum vx_color_space_e {
    VX_COLOR_SPACE_NONE      = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_COLOR_SPACE) + 0x0,
    VX_COLOR_SPACE_BT601_525 = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_COLOR_SPACE) + 0x1,
    VX_COLOR_SPACE_BT601_625 = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_COLOR_SPACE) + 0x2,
    VX_COLOR_SPACE_BT709     = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_COLOR_SPACE) + 0x3,
    VX_COLOR_SPACE_DEFAULT   = VX_COLOR_SPACE_BT709,
};

/// Channel value ranges (VX_IMAGE_RANGE).
enum vx_channel_range_e {
    VX_CHANNEL_RANGE_FULL       = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_COLOR_RANGE) + 0x0,
    VX_CHANNEL_RANGE_RESTRICTED = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_COLOR_RANGE) + 0x1,
};

/// Whether a kernel parameter must be given.
enum vx_parameter_state_e {
    VX_PARAMETER_STATE_REQUIRED = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_PARAMETER_STATE) + 0x0,
    VX_PARAMETER_STATE_OPTIONAL = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_PARAMETER_STATE) + 0x1,
};

/// Border modes: what a kernel reads outside the image.
enum vx_border_e {
    VX_BORDER_UNDEFINED = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_BORDER) + 0x0,
    VX_BORDER_CONSTANT  = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_BORDER) + 0x1,
    VX_BORDER_REPLICATE = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_BORDER) + 0x2,
};

/// What immediate-mode functions do with a border mode they lack.
enum vx_border_policy_e {
    VX_BORDER_POLICY_DEFAULT_TO_UNDEFINED = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_BORDER_POLICY) + 0x0,
    VX_BORDER_POLICY_RETURN_ERROR         = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_BORDER_POLICY) + 0x1,
};

/// When an iterative algorithm (optical flow) stops.
enum vx_termination_criteria_e {
    VX_TERM_CRITERIA_ITERATIONS = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_TERM_CRITERIA) + 0x0,
    VX_TERM_CRITERIA_EPSILON    = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_TERM_CRITERIA) + 0x1,
    VX_TERM_CRITERIA_BOTH       = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_TERM_CRITERIA) + 0x2,
};

/// Gradient norms (Canny).
enum vx_norm_type_e {
    VX_NORM_L1 = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NORM_TYPE) + 0x0,
    VX_NORM_L2 = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NORM_TYPE) + 0x1,
};

/// Delay attributes.
enum vx_delay_attribute_e {
    VX_DELAY_TYPE  = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_DELAY) + 0x0,
    VX_DELAY_SLOTS = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_DELAY) + 0x1,
};

/// Access modes of copy and map calls.
enum vx_accessor_e {
    VX_READ_ONLY      = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_ACCESSOR) + 0x1,
    VX_WRITE_ONLY     = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_ACCESSOR) + 0x2,
    VX_READ_AND_WRITE = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_ACCESSOR) + 0x3,
};

/// Rounding of scaled results.
enum vx_round_policy_e {
    VX_ROUND_POLICY_TO_ZERO         = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_ROUND_POLICY) + 0x1,
    VX_ROUND_POLICY_TO_NEAREST_EVEN = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_ROUND_POLICY) + 0x2,
};

/// Local binary pattern variants.
enum vx_lbp_format_e {
    VX_LBP  = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_LBP_FORMAT) + 0x0,
    VX_MLBP = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_LBP_FORMAT) + 0x1,
    VX_ULBP = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_LBP_FORMAT) + 0x2,
};

/// Template-matching metrics.
enum vx_comp_metric_e {
    VX_COMPARE_HAMMING    = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_COMP_METRIC) + 0x0,
    VX_COMPARE_L1         = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_COMP_METRIC) + 0x1,
    VX_COMPARE_L2         = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_COMP_METRIC) + 0x2,
    VX_COMPARE_CCORR      = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_COMP_METRIC) + 0x3,
    VX_COMPARE_L2_NORM    = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_COMP_METRIC) + 0x4,
    VX_COMPARE_CCORR_NORM = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_COMP_METRIC) + 0x5,
};

/// printf conversions for printing references and sizes.
#if defined(_WIN32) || defined(UNDER_CE)
#if defined(_WIN64)
#define VX_FMT_REF  "%I64u"
#define VX_FMT_SIZE "%I64u"
#else
#define VX_FMT_REF  "%lu"
#define VX_FMT_SIZE "%lu"
#endif
#else
#define VX_FMT_REF  "%p"
#define VX_FMT_SIZE "%zu"
#endif

/// Scale 1:1 in Q22.10 fixed point (vx_imagepatch_addressing_t scale_x/y).
#define VX_SCALE_UNITY (1024u)

/// How to address the pixels of a mapped or copied image patch: dimensions in
/// pixels, byte strides, plane scale relative to plane 0 (VX_SCALE_UNITY is
/// 1:1), steps between distinct pixels, and for sub-byte formats (U1) the
/// stride in bits (stride_x is then 0).
typedef struct _vx_imagepatch_addressing_t {
    vx_uint32 dim_x;
    vx_uint32 dim_y;
    vx_int32  stride_x;
    vx_int32  stride_y;
    vx_uint32 scale_x;
    vx_uint32 scale_y;
    vx_uint32 step_x;
    vx_uint16 step_y;
    vx_uint16 stride_x_bits;
} vx_imagepatch_addressing_t;

/// Zero initializer for vx_imagepatch_addressing_t.
#define VX_IMAGEPATCH_ADDR_INIT {0u, 0u, 0, 0, 0u, 0u, 0u, 0u, 0u}

/// Timing of a graph or node, in nanoseconds.
typedef struct _vx_perf_t {
    vx_uint64 tmp;
    vx_uint64 beg;
    vx_uint64 end;
    vx_uint64 sum;
    vx_uint64 avg;
    vx_uint64 min;
    vx_uint64 num;
    vx_uint64 max;
} vx_perf_t;

/// Parameters of the probabilistic Hough lines kernel.
typedef struct _vx_hough_lines_p_t {
    vx_float32 rho;
    vx_float32 theta;
    vx_int32   threshold;
    vx_int32   line_length;
    vx_int32   line_gap;
    vx_float32 theta_max;
    vx_float32 theta_min;
} vx_hough_lines_p_t;

/// A line segment.
typedef struct _vx_line2d_t {
    vx_float32 start_x;
    vx_float32 start_y;
    vx_float32 end_x;
    vx_float32 end_y;
} vx_line2d_t;

/// Which inputs the tensor matrix multiply transposes first.
typedef struct _vx_tensor_matrix_multiply_params_t {
    vx_bool transpose_input1;
    vx_bool transpose_input2;
    vx_bool transpose_input3;
} vx_tensor_matrix_multiply_params_t;

/// Zero initializer for vx_perf_t.
#define VX_PERF_INIT {0ul, 0ul, 0ul, 0ul, 0ul, 0ul, 0ul, 0ul}

/// Length of a kernel name, with its terminating zero. vx.h defines it (with
/// this same value) before it includes this header; defined here too so that
/// this header also stands alone.
#ifndef VX_MAX_KERNEL_NAME
#define VX_MAX_KERNEL_NAME (256)
#endif

/// One entry of the context's kernel table (VX_CONTEXT_UNIQUE_KERNEL_TABLE).
typedef struct _vx_kernel_info_t {
    vx_enum enumeration;
    vx_char name[VX_MAX_KERNEL_NAME];
} vx_kernel_info_t;

/// Pyramid scales: halving, and the ORB factor 2^(-1/4).
#define VX_SCALE_PYRAMID_HALF (0.5f)
#define VX_SCALE_PYRAMID_ORB  ((vx_float32)0.8408964f)

/// A detected or tracked feature point.
typedef struct _vx_keypoint_t {
    vx_int32   x;
    vx_int32   y;
    vx_float32 strength;
    vx_float32 scale;
    vx_float32 orientation;
    vx_int32   tracking_status;
    vx_float32 error;
} vx_keypoint_t;

/// A rectangle; the end coordinates are exclusive.
typedef struct _vx_rectangle_t {
    vx_uint32 start_x;
    vx_uint32 start_y;
    vx_uint32 end_x;
    vx_uint32 end_y;
} vx_rectangle_t;

/// Coordinates: 2D integer, 2D floating point, 3D integer.
typedef struct _vx_coordinates2d_t {
    vx_uint32 x;
    vx_uint32 y;
} vx_coordinates2d_t;

typedef struct _vx_coordinates2df_t {
    vx_float32 x;
    vx_float32 y;
} vx_coordinates2df_t;

typedef struct _vx_coordinates3d_t {
    vx_uint32 x;
    vx_uint32 y;
    vx_uint32 z;
} vx_coordinates3d_t;

/// One pixel's value in any format; use the member that matches the format.
typedef union _vx_pixel_value_t {
    vx_uint8  RGB[3];
    vx_uint8  RGBX[4];
    vx_uint8  YUV[3];
    vx_bool   U1;
    vx_uint8  U8;
    vx_uint16 U16;
    vx_int16  S16;
    vx_uint32 U32;
    vx_int32  S32;
    vx_uint8  reserved[16];
} vx_pixel_value_t;

/// Parameters of the HOG kernels (cell, block and window geometry, bins, and
/// the block-normalization clip threshold).
typedef struct {
    vx_int32   cell_width;
    vx_int32   cell_height;
    vx_int32   block_width;
    vx_int32   block_height;
    vx_int32   block_stride;
    vx_int32   num_bins;
    vx_int32   window_width;
    vx_int32   window_height;
    vx_int32   window_stride;
    vx_float32 threshold;
} vx_hog_t;

/// A border mode and, for VX_BORDER_CONSTANT, the value read outside.
typedef struct _vx_border_t {
    vx_enum          mode;
    vx_pixel_value_t constant_value;
} vx_border_t;

/// Entry points a kernel module exports for vxLoadKernels / vxUnloadKernels.
typedef vx_status (VX_API_CALL *vx_publish_kernels_f)(vx_context context);
typedef vx_status (VX_API_CALL *vx_unpublish_kernels_f)(vx_context context);

/// User-kernel callbacks: run, initialize, deinitialize, validate.
typedef vx_status (VX_CALLBACK *vx_kernel_f)(vx_node node, const vx_reference *parameters, vx_uint32 num);
typedef vx_status (VX_CALLBACK *vx_kernel_initialize_f)(vx_node node, const vx_reference *parameters, vx_uint32 num);
typedef vx_status (VX_CALLBACK *vx_kernel_deinitialize_f)(vx_node node, const vx_reference *parameters, vx_uint32 num);
typedef vx_status (VX_CALLBACK *vx_kernel_validate_f)(vx_node node, const vx_reference parameters[], vx_uint32 num, vx_meta_format metas[]);

/// Computes an output image's valid rectangle(s) from the inputs' (set
/// through VX_VALID_RECT_CALLBACK).
typedef vx_status (VX_CALLBACK *vx_kernel_image_valid_rectangle_f)(vx_node node, vx_uint32 index, const vx_rectangle_t *const input_valid[], vx_rectangle_t *const output_valid[]);

/// Receives log messages (vxRegisterLogCallback).
typedef void (VX_CALLBACK *vx_log_callback_f)(vx_context context, vx_reference ref, vx_status status, const vx_char string[]);

/// Flags of map calls.
enum vx_map_flag_e {
    VX_NOGAP_X = 1,
};

#endif /* _OPENVX_TYPES_H_ */
