/* Ferry's own OpenVX kernels: those the pipelines of the paper behind Ferry's
 * graph layer need that are not standard (docs/graph.md, "Vendor kernels").
 *
 * OpenVX has no vendor id for Ferry, so its kernels sit in the user vendor
 * range (VX_ID_USER) in library 0xFF, which vxAllocateUserKernelLibraryId
 * never hands out (it gives 1..0xFE). */
#ifndef _VX_EXT_FERRY_H_
#define _VX_EXT_FERRY_H_

#include <VX/vx.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The library Ferry's own kernels belong to.
#define VX_LIBRARY_FERRY (0xFF)

enum vx_kernel_ferry_e {
    /// Scharr 3x3 gradients: like VX_KERNEL_SOBEL_3x3 (a U8 input, optional S16
    /// outputs in x and y) with the coefficients [-3 0 3; -10 0 10; -3 0 3] and
    /// its transpose. Name "ferry.openvx.scharr_3x3".
    VX_KERNEL_FERRY_SCHARR_3x3 = VX_KERNEL_BASE(VX_ID_USER, VX_LIBRARY_FERRY) + 0x1,
};

/// A Scharr3x3 node (VX_KERNEL_FERRY_SCHARR_3x3): `input` U8; `output_x`,
/// `output_y` S16, either may be null but not both.
VX_API_ENTRY vx_node VX_API_CALL vxFerryScharr3x3Node(vx_graph graph, vx_image input, vx_image output_x,
                                                      vx_image output_y);

/// The same in immediate mode (libvxu).
VX_API_ENTRY vx_status VX_API_CALL vxuFerryScharr3x3(vx_context context, vx_image input, vx_image output_x,
                                                     vx_image output_y);

#ifdef __cplusplus
}
#endif

#endif
