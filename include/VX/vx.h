/* OpenVX 1.3, the header programs include, for Ferry's OpenVX implementation.
 * Written from the OpenVX 1.3 specification: names and values are the
 * specification's, so programs built against the Khronos headers build
 * against these unchanged. The deprecated 1.0 names (vx_compatibility.h) are
 * not included, as in the specification's vx.h. */
#ifndef _OPENVX_H_
#define _OPENVX_H_

/// String lengths, each counting the terminating zero: implementation name
/// (VX_CONTEXT_IMPLEMENTATION), kernel name, log message, reference name.
#define VX_MAX_IMPLEMENTATION_NAME (64)
#define VX_MAX_KERNEL_NAME (256)
#define VX_MAX_LOG_MESSAGE_LEN (1024)
#define VX_MAX_REFERENCE_NAME (64)

#include <VX/vx_vendors.h>
#include <VX/vx_types.h>
#include <VX/vx_kernels.h>
#include <VX/vx_api.h>
#include <VX/vx_nodes.h>

/// Version numbers: major in bits 8..15, minor in bits 0..7 (the value of
/// VX_CONTEXT_VERSION).
#define VX_VERSION_MAJOR(x) ((vx_uint32)((vx_uint32)(x) & 0xFFU) << 8)
#define VX_VERSION_MINOR(x) ((vx_uint32)((vx_uint32)(x) & 0xFFU) << 0)

#define VX_VERSION_1_0 (VX_VERSION_MAJOR(1) | VX_VERSION_MINOR(0))
#define VX_VERSION_1_1 (VX_VERSION_MAJOR(1) | VX_VERSION_MINOR(1))
#define VX_VERSION_1_2 (VX_VERSION_MAJOR(1) | VX_VERSION_MINOR(2))
#define VX_VERSION_1_3 (VX_VERSION_MAJOR(1) | VX_VERSION_MINOR(3))

/// The version these headers describe.
#define VX_VERSION (VX_VERSION_1_3)

#endif /* _OPENVX_H_ */
