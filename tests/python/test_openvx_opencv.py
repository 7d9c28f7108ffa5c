"""Ferry's OpenVX immediate functions (libvxu.so) against OpenCV, on the same random input.

Each test runs one `vxu*` function through ctypes, using only the standard OpenVX 1.3 API
of include/VX, and compares the output with what OpenCV (cv2) computes from the same
numpy array. Only kernels, and options of kernels, where the OpenVX 1.3 specification and
OpenCV define the same result are compared, and then byte for byte (numpy.array_equal);
MeanStdDev alone is floating point and is compared within 1e-3 relative.

Every test runs twice: on PoCL natively (FERRY_VX_DEVICES=portable) and through the
session's ferryd (FERRY_VX_DEVICES=ferry; conftest starts the daemon and points the
OpenCL loader at both platforms). Inputs are random (a fixed seed); the 3x3 stencils run
at 1x1, 3x5, 64x48 and 641x479, the other kernels at 1x1, 3x5 and 641x479.

Compared:
- Erode3x3, Dilate3x3 (cv2.erode / cv2.dilate, 3x3 box), Median3x3 (cv2.medianBlur,
  ksize 3), Sobel3x3 (cv2.Sobel, CV_16S, ksize 3; both correlate the spec's matrices, so
  x is right minus left and y bottom minus top, as in OpenCV): border REPLICATE and
  CONSTANT (value 7) at 1x1, 3x5, 64x48 and 641x479. OpenCV's erode and dilate take the
  constant themselves; medianBlur takes no border and Sobel only a constant of 0, so for
  those the input is padded by one pixel of 7 (cv2.copyMakeBorder) and the result cropped:
  every output pixel then reads the same nine values as OpenVX's.
- The same four under border UNDEFINED (one test): only the interior, which the spec
  defines, and which must be the output's valid region.
- AbsDiff, Add and Subtract (SATURATE) with U8 and with S16 output; Multiply (SATURATE,
  TO_NEAREST_EVEN) with scales 1 and 1/256, where OpenCV's float32 product is exact and
  both round half to even; And, Or, Xor, Not.
- Threshold, binary (true when > value) against cv2.threshold THRESH_BINARY, and range
  (true when lower <= v <= upper) against cv2.inRange; output 255/0.
- TableLookup (cv2.LUT); IntegralImage (cv2.integral without its first row and column);
  Histogram with 256 and with 16 bins over [0, 256) (cv2.calcHist; a power-of-two bin
  width makes OpenCV's scaled bin index exact); MinMaxLoc on U8 and S16 (cv2.minMaxLoc
  values; the locations as sets and their counts against cv2.findNonZero and
  cv2.countNonZero of cv2.compare, since the spec returns every extreme but leaves their
  order open); MeanStdDev (cv2.meanStdDev, the population deviation in both).
- Magnitude: the spec's uint16(sqrt(x*x + y*y) + 0.5), clamped to 32767, against
  cv2.magnitude in float64 converted to CV_16S (OpenCV rounds half to even, but
  sqrt(integer) is never exactly k + 0.5, and in float64 it is never close enough to it
  to round the other way).
- ConvertDepth U8 -> S16 (shifts 0, 1, 7: a multiplication by 2^shift) and S16 -> U8 with
  SATURATE and shift 0 (a clamp), against OpenCV's saturating conversion.

Left out, and why:
- Box3x3 and Gaussian3x3: the spec gives their matrices times 1/9 and 1/16 but not how
  the result becomes an integer; Ferry truncates (sum / 9, sum >> 4), as Khronos's
  conformance reference does, while OpenCV's blur and GaussianBlur round to nearest. On
  random input about half of the pixels differ by one, so the two definitions are not the
  same, and a comparison within a tolerance is not what this file does.
- ConvertDepth S16 -> U8 with a shift > 0 (OpenVX shifts, which floors; OpenCV's scaled
  conversion rounds) and with WRAP, and Add/Subtract/Multiply with WRAP (OpenCV has no
  wrapping arithmetic). Multiply with TO_ZERO or with scales that are not powers of two
  (OpenCV rounds a float32 product to nearest).
- Phase (OpenVX quantizes the angle to 0..255 with its own rounding; cv2.phase gives
  radians), WeightedAverage (OpenVX truncates, cv2.addWeighted rounds), Convolve (OpenVX
  truncates sum / scale toward zero, filter2D rounds), NonLinearFilter (not compared
  here), and the vision kernels Ferry does not implement yet.
- Min and Max: libvxu declares them but Ferry does not implement their kernels yet.
- Histogram bins whose width is not a power of two: OpenCV computes the bin index in
  floating point, which may differ from the spec's exact floor at bin edges.
"""

import ctypes
import os

import numpy as np
import pytest

from conftest import BIN

try:
    import cv2
except ImportError as error:  # reported by every test, as a failure
    cv2 = None
    CV2_IMPORT_ERROR = str(error)


def require_opencv():
    """Fails (never skips) the calling test when cv2 cannot be imported."""
    if cv2 is None:
        pytest.fail(
            f"cannot import cv2 ({CV2_IMPORT_ERROR}): these tests compare with OpenCV; scripts/setup installs "
            "opencv-python-headless into .venv (or run .venv/bin/python -m pip install opencv-python-headless)",
            pytrace=False,
        )


# --- Values from include/VX/vx_types.h and vx_vendors.h, computed as the macros do ------

VX_ID_KHRONOS = 0x000  # vx_vendors.h


def vx_enum_base(vendor, enum_type):
    """VX_ENUM_BASE(vendor, id)."""
    return (vendor << 20) | (enum_type << 12)


def vx_attribute_base(vendor, object_type):
    """VX_ATTRIBUTE_BASE(vendor, object)."""
    return (vendor << 20) | (object_type << 8)


def vx_df_image(a, b, c, d):
    """VX_DF_IMAGE(a, b, c, d): four characters, the first in the low byte."""
    return ord(a) | (ord(b) << 8) | (ord(c) << 16) | (ord(d) << 24)


VX_SUCCESS = 0  # vx_status_e

# vx_type_e
VX_TYPE_UINT8 = 0x003
VX_TYPE_INT16 = 0x004
VX_TYPE_SIZE = 0x00D
VX_TYPE_COORDINATES2D = 0x022
VX_TYPE_CONTEXT = 0x801
VX_TYPE_ARRAY = 0x80E

# vx_enum_e (enumeration type ids)
VX_ENUM_CONVERT_POLICY = 0x0A
VX_ENUM_THRESHOLD_TYPE = 0x0B
VX_ENUM_BORDER = 0x0C
VX_ENUM_MEMORY_TYPE = 0x0E
VX_ENUM_ACCESSOR = 0x11
VX_ENUM_ROUND_POLICY = 0x12
VX_ENUM_BORDER_POLICY = 0x14

VX_CONVERT_POLICY_SATURATE = vx_enum_base(VX_ID_KHRONOS, VX_ENUM_CONVERT_POLICY) + 0x1
VX_THRESHOLD_TYPE_BINARY = vx_enum_base(VX_ID_KHRONOS, VX_ENUM_THRESHOLD_TYPE) + 0x0
VX_THRESHOLD_TYPE_RANGE = vx_enum_base(VX_ID_KHRONOS, VX_ENUM_THRESHOLD_TYPE) + 0x1
VX_BORDER_UNDEFINED = vx_enum_base(VX_ID_KHRONOS, VX_ENUM_BORDER) + 0x0
VX_BORDER_CONSTANT = vx_enum_base(VX_ID_KHRONOS, VX_ENUM_BORDER) + 0x1
VX_BORDER_REPLICATE = vx_enum_base(VX_ID_KHRONOS, VX_ENUM_BORDER) + 0x2
VX_BORDER_POLICY_RETURN_ERROR = vx_enum_base(VX_ID_KHRONOS, VX_ENUM_BORDER_POLICY) + 0x1
VX_MEMORY_TYPE_HOST = vx_enum_base(VX_ID_KHRONOS, VX_ENUM_MEMORY_TYPE) + 0x1
VX_READ_ONLY = vx_enum_base(VX_ID_KHRONOS, VX_ENUM_ACCESSOR) + 0x1
VX_WRITE_ONLY = vx_enum_base(VX_ID_KHRONOS, VX_ENUM_ACCESSOR) + 0x2
VX_ROUND_POLICY_TO_NEAREST_EVEN = vx_enum_base(VX_ID_KHRONOS, VX_ENUM_ROUND_POLICY) + 0x2

VX_CONTEXT_IMMEDIATE_BORDER = vx_attribute_base(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0xA
VX_CONTEXT_IMMEDIATE_BORDER_POLICY = vx_attribute_base(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0xC
VX_ARRAY_NUMITEMS = vx_attribute_base(VX_ID_KHRONOS, VX_TYPE_ARRAY) + 0x1

VX_DF_IMAGE_U8 = vx_df_image("U", "0", "0", "8")
VX_DF_IMAGE_S16 = vx_df_image("S", "0", "1", "6")
VX_DF_IMAGE_U32 = vx_df_image("U", "0", "3", "2")

VX_SCALE_UNITY = 1024  # vx_imagepatch_addressing_t scale_x/y for 1:1

# The pixel format of each numpy element type, and back.
FORMAT_OF_DTYPE = {np.dtype(np.uint8): VX_DF_IMAGE_U8, np.dtype(np.int16): VX_DF_IMAGE_S16,
                   np.dtype(np.uint32): VX_DF_IMAGE_U32}
DTYPE_OF_FORMAT = {fmt: dtype for dtype, fmt in FORMAT_OF_DTYPE.items()}


# --- Structures of vx_types.h, field for field ------------------------------------------

class VxRectangle(ctypes.Structure):  # vx_rectangle_t; the end coordinates are exclusive
    _fields_ = [("start_x", ctypes.c_uint32), ("start_y", ctypes.c_uint32),
                ("end_x", ctypes.c_uint32), ("end_y", ctypes.c_uint32)]


class VxImagepatchAddressing(ctypes.Structure):  # vx_imagepatch_addressing_t
    _fields_ = [("dim_x", ctypes.c_uint32), ("dim_y", ctypes.c_uint32),
                ("stride_x", ctypes.c_int32), ("stride_y", ctypes.c_int32),
                ("scale_x", ctypes.c_uint32), ("scale_y", ctypes.c_uint32),
                ("step_x", ctypes.c_uint32), ("step_y", ctypes.c_uint16),
                ("stride_x_bits", ctypes.c_uint16)]


class VxPixelValue(ctypes.Union):  # vx_pixel_value_t
    _fields_ = [("RGB", ctypes.c_uint8 * 3), ("RGBX", ctypes.c_uint8 * 4), ("YUV", ctypes.c_uint8 * 3),
                ("U1", ctypes.c_int32), ("U8", ctypes.c_uint8), ("U16", ctypes.c_uint16),
                ("S16", ctypes.c_int16), ("U32", ctypes.c_uint32), ("S32", ctypes.c_int32),
                ("reserved", ctypes.c_uint8 * 16)]


class VxBorder(ctypes.Structure):  # vx_border_t
    _fields_ = [("mode", ctypes.c_int32), ("constant_value", VxPixelValue)]


class VxCoordinates2d(ctypes.Structure):  # vx_coordinates2d_t
    _fields_ = [("x", ctypes.c_uint32), ("y", ctypes.c_uint32)]


assert ctypes.sizeof(VxImagepatchAddressing) == 32
assert ctypes.sizeof(VxPixelValue) == 16
assert ctypes.sizeof(VxBorder) == 20


# --- The libraries ---------------------------------------------------------------------

HANDLE = ctypes.c_void_p  # every vx_* object handle (vx_context, vx_image, ...)
STATUS = ctypes.c_int32  # vx_status
ENUM = ctypes.c_int32  # vx_enum
SIZE = ctypes.c_size_t  # vx_size

# name: (restype, argtypes), from vx_api.h and vxu.h.
OPENVX_FUNCTIONS = {
    "vxCreateContext": (HANDLE, []),
    "vxReleaseContext": (STATUS, [ctypes.POINTER(HANDLE)]),
    "vxSetContextAttribute": (STATUS, [HANDLE, ENUM, ctypes.c_void_p, SIZE]),
    "vxGetStatus": (STATUS, [HANDLE]),
    "vxCreateImage": (HANDLE, [HANDLE, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32]),
    "vxReleaseImage": (STATUS, [ctypes.POINTER(HANDLE)]),
    "vxCopyImagePatch": (STATUS, [HANDLE, ctypes.POINTER(VxRectangle), ctypes.c_uint32,
                                  ctypes.POINTER(VxImagepatchAddressing), ctypes.c_void_p, ENUM, ENUM]),
    "vxGetValidRegionImage": (STATUS, [HANDLE, ctypes.POINTER(VxRectangle)]),
    "vxCreateThresholdForImage": (HANDLE, [HANDLE, ENUM, ctypes.c_uint32, ctypes.c_uint32]),
    "vxCopyThresholdValue": (STATUS, [HANDLE, ctypes.POINTER(VxPixelValue), ENUM, ENUM]),
    "vxCopyThresholdRange": (STATUS, [HANDLE, ctypes.POINTER(VxPixelValue), ctypes.POINTER(VxPixelValue),
                                      ENUM, ENUM]),
    "vxCopyThresholdOutput": (STATUS, [HANDLE, ctypes.POINTER(VxPixelValue), ctypes.POINTER(VxPixelValue),
                                       ENUM, ENUM]),
    "vxReleaseThreshold": (STATUS, [ctypes.POINTER(HANDLE)]),
    "vxCreateLUT": (HANDLE, [HANDLE, ENUM, SIZE]),
    "vxCopyLUT": (STATUS, [HANDLE, ctypes.c_void_p, ENUM, ENUM]),
    "vxReleaseLUT": (STATUS, [ctypes.POINTER(HANDLE)]),
    "vxCreateDistribution": (HANDLE, [HANDLE, SIZE, ctypes.c_int32, ctypes.c_uint32]),
    "vxCopyDistribution": (STATUS, [HANDLE, ctypes.c_void_p, ENUM, ENUM]),
    "vxReleaseDistribution": (STATUS, [ctypes.POINTER(HANDLE)]),
    "vxCreateScalar": (HANDLE, [HANDLE, ENUM, ctypes.c_void_p]),
    "vxCopyScalar": (STATUS, [HANDLE, ctypes.c_void_p, ENUM, ENUM]),
    "vxReleaseScalar": (STATUS, [ctypes.POINTER(HANDLE)]),
    "vxCreateArray": (HANDLE, [HANDLE, ENUM, SIZE]),
    "vxQueryArray": (STATUS, [HANDLE, ENUM, ctypes.c_void_p, SIZE]),
    "vxCopyArrayRange": (STATUS, [HANDLE, SIZE, SIZE, SIZE, ctypes.c_void_p, ENUM, ENUM]),
    "vxReleaseArray": (STATUS, [ctypes.POINTER(HANDLE)]),
}

_IMAGE_BINARY = [HANDLE, HANDLE, HANDLE, HANDLE]  # context, in1, in2, out
_IMAGE_UNARY = [HANDLE, HANDLE, HANDLE]  # context, input, output
VXU_FUNCTIONS = {
    "vxuErode3x3": (STATUS, _IMAGE_UNARY),
    "vxuDilate3x3": (STATUS, _IMAGE_UNARY),
    "vxuMedian3x3": (STATUS, _IMAGE_UNARY),
    "vxuSobel3x3": (STATUS, [HANDLE, HANDLE, HANDLE, HANDLE]),  # context, input, output_x, output_y
    "vxuAbsDiff": (STATUS, _IMAGE_BINARY),
    "vxuAdd": (STATUS, [HANDLE, HANDLE, HANDLE, ENUM, HANDLE]),  # context, in1, in2, policy, out
    "vxuSubtract": (STATUS, [HANDLE, HANDLE, HANDLE, ENUM, HANDLE]),
    # context, in1, in2, scale, overflow_policy, rounding_policy, out
    "vxuMultiply": (STATUS, [HANDLE, HANDLE, HANDLE, ctypes.c_float, ENUM, ENUM, HANDLE]),
    "vxuAnd": (STATUS, _IMAGE_BINARY),
    "vxuOr": (STATUS, _IMAGE_BINARY),
    "vxuXor": (STATUS, _IMAGE_BINARY),
    "vxuNot": (STATUS, _IMAGE_UNARY),
    "vxuThreshold": (STATUS, [HANDLE, HANDLE, HANDLE, HANDLE]),  # context, input, thresh, output
    "vxuTableLookup": (STATUS, [HANDLE, HANDLE, HANDLE, HANDLE]),  # context, input, lut, output
    "vxuIntegralImage": (STATUS, _IMAGE_UNARY),
    "vxuHistogram": (STATUS, [HANDLE, HANDLE, HANDLE]),  # context, input, distribution
    # context, input, minVal, maxVal, minLoc, maxLoc, minCount, maxCount
    "vxuMinMaxLoc": (STATUS, [HANDLE] * 8),
    "vxuMeanStdDev": (STATUS, [HANDLE, HANDLE, ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float)]),
    "vxuMagnitude": (STATUS, [HANDLE, HANDLE, HANDLE, HANDLE]),  # context, grad_x, grad_y, mag
    "vxuConvertDepth": (STATUS, [HANDLE, HANDLE, HANDLE, ENUM, ctypes.c_int32]),  # context, in, out, policy, shift
}


class OpenVX:
    """libopenvx.so and libvxu.so of the build tree, with every function used declared."""

    def __init__(self):
        self.openvx = ctypes.CDLL(str(BIN / "lib" / "libopenvx.so"))
        self.vxu = ctypes.CDLL(str(BIN / "lib" / "libvxu.so"))
        for library, functions in ((self.openvx, OPENVX_FUNCTIONS), (self.vxu, VXU_FUNCTIONS)):
            for name, (restype, argtypes) in functions.items():
                function = getattr(library, name)
                function.restype = restype
                function.argtypes = argtypes
                setattr(self, name, function)


def check(status, what):
    assert status == VX_SUCCESS, f"{what} returned {status}"


class Context:
    """A vx_context whose graphs run on one device set, and the border its immediate calls use."""

    def __init__(self, api, device_set):
        self.api = api
        self.device_set = device_set
        self.handle = api.vxCreateContext()
        assert self.handle, "vxCreateContext returned NULL"
        check(api.vxGetStatus(self.handle), "vxGetStatus(context)")
        # A border mode a kernel refuses must fail the call, not run silently as UNDEFINED
        # (the default policy), which would only show as a difference at the edges.
        policy = ctypes.c_int32(VX_BORDER_POLICY_RETURN_ERROR)
        check(api.vxSetContextAttribute(self.handle, VX_CONTEXT_IMMEDIATE_BORDER_POLICY, ctypes.byref(policy),
                                        ctypes.sizeof(policy)), "vxSetContextAttribute(IMMEDIATE_BORDER_POLICY)")

    def set_border(self, mode, constant=0):
        border = VxBorder(mode=mode)
        border.constant_value.U8 = constant
        check(self.api.vxSetContextAttribute(self.handle, VX_CONTEXT_IMMEDIATE_BORDER, ctypes.byref(border),
                                             ctypes.sizeof(border)), "vxSetContextAttribute(IMMEDIATE_BORDER)")

    def release(self):
        handle = HANDLE(self.handle)
        status = self.api.vxReleaseContext(ctypes.byref(handle))
        self.handle = None
        return status


class Objects:
    """The OpenVX objects one test makes in a context; released when the test ends."""

    def __init__(self, context):
        self.context = context
        self.api = context.api
        self.owned = []  # (release function, handle, what)

    def _own(self, handle, release, what):
        assert handle, f"{what} returned NULL"
        check(self.api.vxGetStatus(handle), f"vxGetStatus({what})")
        self.owned.append((release, handle, what))
        return handle

    def release_all(self):
        failures = []
        for release, handle, what in reversed(self.owned):
            status = release(ctypes.byref(HANDLE(handle)))
            if status != VX_SUCCESS:
                failures.append(f"releasing {what}: {status}")
        self.owned.clear()
        return failures

    # Images

    def empty_image(self, width, height, dtype):
        image = self.api.vxCreateImage(self.context.handle, width, height, FORMAT_OF_DTYPE[np.dtype(dtype)])
        return self._own(image, self.api.vxReleaseImage, "vxCreateImage")

    def image(self, pixels):
        """A new image holding a copy of the 2-D array `pixels` (rows first)."""
        height, width = pixels.shape
        image = self.empty_image(width, height, pixels.dtype)
        self._copy_patch(image, np.ascontiguousarray(pixels), VX_WRITE_ONLY)
        return image

    def read(self, image, width, height, dtype):
        pixels = np.empty((height, width), dtype=dtype)
        self._copy_patch(image, pixels, VX_READ_ONLY)
        return pixels

    def _copy_patch(self, image, pixels, usage):
        height, width = pixels.shape
        rect = VxRectangle(0, 0, width, height)
        addressing = VxImagepatchAddressing(dim_x=width, dim_y=height, stride_x=pixels.itemsize,
                                            stride_y=pixels.strides[0], scale_x=VX_SCALE_UNITY,
                                            scale_y=VX_SCALE_UNITY, step_x=1, step_y=1)
        check(self.api.vxCopyImagePatch(image, ctypes.byref(rect), 0, ctypes.byref(addressing),
                                       pixels.ctypes.data_as(ctypes.c_void_p), usage, VX_MEMORY_TYPE_HOST),
              "vxCopyImagePatch")

    def valid_region(self, image):
        rect = VxRectangle()
        check(self.api.vxGetValidRegionImage(image, ctypes.byref(rect)), "vxGetValidRegionImage")
        return rect.start_x, rect.start_y, rect.end_x, rect.end_y

    # Other data objects

    def threshold(self, kind):
        thresh = self.api.vxCreateThresholdForImage(self.context.handle, kind, VX_DF_IMAGE_U8, VX_DF_IMAGE_U8)
        self._own(thresh, self.api.vxReleaseThreshold, "vxCreateThresholdForImage")
        true_value, false_value = VxPixelValue(), VxPixelValue()
        true_value.U8, false_value.U8 = 255, 0
        check(self.api.vxCopyThresholdOutput(thresh, ctypes.byref(true_value), ctypes.byref(false_value),
                                            VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), "vxCopyThresholdOutput")
        return thresh

    def lut(self, table):
        lut = self.api.vxCreateLUT(self.context.handle, VX_TYPE_UINT8, len(table))
        self._own(lut, self.api.vxReleaseLUT, "vxCreateLUT")
        values = np.ascontiguousarray(table, dtype=np.uint8)
        check(self.api.vxCopyLUT(lut, values.ctypes.data_as(ctypes.c_void_p), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST),
              "vxCopyLUT")
        return lut

    def distribution(self, bins, offset, value_range):
        distribution = self.api.vxCreateDistribution(self.context.handle, bins, offset, value_range)
        return self._own(distribution, self.api.vxReleaseDistribution, "vxCreateDistribution")

    def read_distribution(self, distribution, bins):
        counts = np.zeros(bins, dtype=np.uint32)  # vxCopyDistribution: a vx_uint32 per bin
        check(self.api.vxCopyDistribution(distribution, counts.ctypes.data_as(ctypes.c_void_p), VX_READ_ONLY,
                                         VX_MEMORY_TYPE_HOST), "vxCopyDistribution")
        return counts

    def scalar(self, vx_type, ctype):
        initial = ctype(0)
        scalar = self.api.vxCreateScalar(self.context.handle, vx_type, ctypes.byref(initial))
        return self._own(scalar, self.api.vxReleaseScalar, "vxCreateScalar")

    def read_scalar(self, scalar, ctype):
        value = ctype()
        check(self.api.vxCopyScalar(scalar, ctypes.byref(value), VX_READ_ONLY, VX_MEMORY_TYPE_HOST), "vxCopyScalar")
        return value.value

    def coordinates_array(self, capacity):
        array = self.api.vxCreateArray(self.context.handle, VX_TYPE_COORDINATES2D, capacity)
        return self._own(array, self.api.vxReleaseArray, "vxCreateArray")

    def read_coordinates(self, array):
        """The array's items as a set of (x, y)."""
        count = ctypes.c_size_t()
        check(self.api.vxQueryArray(array, VX_ARRAY_NUMITEMS, ctypes.byref(count), ctypes.sizeof(count)),
              "vxQueryArray(NUMITEMS)")
        if count.value == 0:
            return set()
        items = (VxCoordinates2d * count.value)()
        check(self.api.vxCopyArrayRange(array, 0, count.value, ctypes.sizeof(VxCoordinates2d), items, VX_READ_ONLY,
                                       VX_MEMORY_TYPE_HOST), "vxCopyArrayRange")
        return {(item.x, item.y) for item in items}


# --- Fixtures ------------------------------------------------------------------------------

# FERRY_VX_DEVICES selectors: a part of the platform's name, so "portable" can only be
# PoCL's "Portable Computing Language" and "ferry" only Ferry's platform.
DEVICE_SETS = ("portable", "ferry")


@pytest.fixture(scope="session")
def openvx_libraries():
    return OpenVX()


@pytest.fixture(scope="module", params=DEVICE_SETS)
def vx_context(request, openvx_libraries):
    """One context per device set for the module: PoCL builds each kernel once per context."""
    device_set = request.param
    if device_set == "ferry":
        request.getfixturevalue("ferry_daemon")  # fails the tests clearly when ferryd did not start
    # The context reads FERRY_VX_DEVICES when it first needs its devices, which is when its
    # first graph is verified (graph::open_devices), not in vxCreateContext: keep the
    # variable set until a first immediate call has run, and restore it afterwards.
    saved = os.environ.get("FERRY_VX_DEVICES")
    os.environ["FERRY_VX_DEVICES"] = device_set
    context = None
    try:
        context = Context(openvx_libraries, device_set)
        first = Objects(context)
        pixel = first.image(np.zeros((1, 1), np.uint8))
        check(openvx_libraries.vxuNot(context.handle, pixel, first.empty_image(1, 1, np.uint8)),
              f"vxuNot, the first call with FERRY_VX_DEVICES={device_set}")
        assert not first.release_all()
    except BaseException:
        if context is not None:
            context.release()
        raise
    finally:
        if saved is None:
            del os.environ["FERRY_VX_DEVICES"]
        else:
            os.environ["FERRY_VX_DEVICES"] = saved
    yield context
    assert context.release() == VX_SUCCESS, f"vxReleaseContext ({device_set}) did not return VX_SUCCESS"


@pytest.fixture
def vx(vx_context):
    """The objects of one test, released after it; the context's border back to the default."""
    objects = Objects(vx_context)
    yield objects
    failures = objects.release_all()
    vx_context.set_border(VX_BORDER_UNDEFINED)
    assert not failures, failures


# --- Inputs and comparisons ---------------------------------------------------------------

SEED = 20261207
# (width, height): a single pixel; as narrow as a 3x3 stencil, so that every column is at
# the border; ordinary; and odd in both dimensions at a realistic size.
SIZES = [(1, 1), (3, 5), (64, 48), (641, 479)]
SIZE_IDS = [f"{w}x{h}" for w, h in SIZES]
# The kernels without a neighbourhood skip the ordinary size: the odd ones cover it, and
# on a cold PoCL cache every new size of every program costs a compile.
POINT_SIZES = [(1, 1), (3, 5), (641, 479)]
POINT_SIZE_IDS = [f"{w}x{h}" for w, h in POINT_SIZES]
BORDER_CONSTANT_VALUE = 7


def random_image(width, height, dtype=np.uint8, stream=0):
    """Uniform random pixels over the whole range of `dtype`, the same in every run."""
    rng = np.random.default_rng([SEED, width, height, stream])
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=(height, width), endpoint=True, dtype=dtype)


def assert_same_pixels(actual, expected, what):
    """Exact equality; on a difference, says where the first one is and both values."""
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, OpenCV's {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: type {actual.dtype}, OpenCV's {expected.dtype}"
    if not np.array_equal(actual, expected):
        differing = np.argwhere(actual != expected)
        y, x = differing[0]
        message = (f"{what}: {len(differing)} of {actual.size} pixels differ; the first at x={x}, y={y}: "
                   f"OpenVX {actual[y, x]}, OpenCV {expected[y, x]}")
        print(message)
        pytest.fail(message, pytrace=False)


# --- 3x3 stencils under REPLICATE and CONSTANT ------------------------------------------

BOX_3X3 = np.ones((3, 3), np.uint8)


def opencv_border_args(border):
    if border == "replicate":
        return {"borderType": cv2.BORDER_REPLICATE}
    return {"borderType": cv2.BORDER_CONSTANT, "borderValue": BORDER_CONSTANT_VALUE}


def opencv_on_padded(pixels, border, operation):
    """`operation` on the input padded by one pixel as the border mode reads it, cropped
    back: for OpenCV functions that cannot take the border themselves. Every kept pixel
    reads only the original image and the padding, so how `operation` treats the edges of
    the padded image does not matter."""
    padded = cv2.copyMakeBorder(pixels, 1, 1, 1, 1, **(
        {"borderType": cv2.BORDER_REPLICATE} if border == "replicate"
        else {"borderType": cv2.BORDER_CONSTANT, "value": BORDER_CONSTANT_VALUE}))
    return operation(padded)[1:-1, 1:-1]


def opencv_median(pixels, border):
    # medianBlur takes no border argument; it replicates. The padding gives it either mode.
    return opencv_on_padded(pixels, border, lambda padded: cv2.medianBlur(padded, 3))


def opencv_sobel(pixels, border, dx, dy):
    # Sobel's BORDER_CONSTANT is always 0, hence the explicit padding.
    return opencv_on_padded(pixels, border, lambda padded: cv2.Sobel(
        padded, cv2.CV_16S, dx, dy, ksize=3, borderType=cv2.BORDER_REPLICATE))


# kernel: (vxu function name, [(output dtype, OpenCV function of (input, border))]); the
# outputs in the vxu function's order.
STENCILS = {
    "Erode3x3": ("vxuErode3x3", [(np.uint8, lambda p, b: cv2.erode(p, BOX_3X3, **opencv_border_args(b)))]),
    "Dilate3x3": ("vxuDilate3x3", [(np.uint8, lambda p, b: cv2.dilate(p, BOX_3X3, **opencv_border_args(b)))]),
    "Median3x3": ("vxuMedian3x3", [(np.uint8, opencv_median)]),
    "Sobel3x3": ("vxuSobel3x3", [(np.int16, lambda p, b: opencv_sobel(p, b, 1, 0)),
                                 (np.int16, lambda p, b: opencv_sobel(p, b, 0, 1))]),
}


def run_stencil(vx, kernel, pixels):
    """Runs the kernel's vxu function on `pixels`; returns its output images and their types."""
    height, width = pixels.shape
    function_name, outputs = STENCILS[kernel]
    source = vx.image(pixels)
    images = [vx.empty_image(width, height, dtype) for dtype, _ in outputs]
    check(getattr(vx.api, function_name)(vx.context.handle, source, *images), function_name)
    return images, outputs


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("border", ["replicate", "constant"])
@pytest.mark.parametrize("kernel", list(STENCILS))
def test_stencil_matches_opencv(vx, kernel, border, size):
    require_opencv()
    width, height = size
    pixels = random_image(width, height)
    if border == "replicate":
        vx.context.set_border(VX_BORDER_REPLICATE)
    else:
        vx.context.set_border(VX_BORDER_CONSTANT, BORDER_CONSTANT_VALUE)
    images, outputs = run_stencil(vx, kernel, pixels)
    for index, (image, (dtype, opencv_function)) in enumerate(zip(images, outputs)):
        actual = vx.read(image, width, height, dtype)
        assert_same_pixels(actual, opencv_function(pixels, border),
                           f"{kernel} output {index}, {border} border, {width}x{height}, {vx.context.device_set}")


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("kernel", list(STENCILS))
def test_stencil_interior_matches_opencv_under_undefined_border(vx, kernel, size):
    """The spec leaves the outermost pixels undefined under VX_BORDER_UNDEFINED: compare the
    rest, which must also be what vxGetValidRegionImage reports."""
    require_opencv()
    width, height = size
    pixels = random_image(width, height, stream=1)
    vx.context.set_border(VX_BORDER_UNDEFINED)
    images, outputs = run_stencil(vx, kernel, pixels)
    # The pixels whose whole neighbourhood lies inside the image (none in a 1x1 image).
    interior = (1, 1, width - 1, height - 1)
    start_x, start_y, end_x, end_y = interior
    interior_is_empty = end_x <= start_x or end_y <= start_y
    for index, (image, (dtype, opencv_function)) in enumerate(zip(images, outputs)):
        region = vx.valid_region(image)
        if interior_is_empty:
            assert region[2] <= region[0] or region[3] <= region[1], \
                f"{kernel} output {index}: valid region {region} of a {width}x{height} image, expected an empty one"
            continue
        assert region == interior, f"{kernel} output {index}: valid region {region}, expected {interior}"
        actual = vx.read(image, width, height, dtype)[start_y:end_y, start_x:end_x]
        # Under REPLICATE OpenCV's interior is the same as under any border.
        expected = opencv_function(pixels, "replicate")[start_y:end_y, start_x:end_x]
        assert_same_pixels(actual, expected,
                           f"{kernel} output {index} interior, undefined border, {width}x{height}, "
                           f"{vx.context.device_set}")


# --- Pixel-wise kernels -------------------------------------------------------------------

# name: (call of the vxu function with (vx, in1, in2, out), OpenCV of (in1, in2, output dtype))
PIXELWISE_BINARY = {
    "AbsDiff": (lambda vx, a, b, out: vx.api.vxuAbsDiff(vx.context.handle, a, b, out),
                lambda a, b, dtype: cv2.absdiff(a, b) if dtype == np.uint8
                else cv2.absdiff(a.astype(np.int16), b.astype(np.int16))),
    "Add": (lambda vx, a, b, out: vx.api.vxuAdd(vx.context.handle, a, b, VX_CONVERT_POLICY_SATURATE, out),
            lambda a, b, dtype: cv2.add(a, b, dtype=cv2.CV_8U if dtype == np.uint8 else cv2.CV_16S)),
    "Subtract": (lambda vx, a, b, out: vx.api.vxuSubtract(vx.context.handle, a, b, VX_CONVERT_POLICY_SATURATE, out),
                 lambda a, b, dtype: cv2.subtract(a, b, dtype=cv2.CV_8U if dtype == np.uint8 else cv2.CV_16S)),
    "And": (lambda vx, a, b, out: vx.api.vxuAnd(vx.context.handle, a, b, out),
            lambda a, b, dtype: cv2.bitwise_and(a, b)),
    "Or": (lambda vx, a, b, out: vx.api.vxuOr(vx.context.handle, a, b, out),
           lambda a, b, dtype: cv2.bitwise_or(a, b)),
    "Xor": (lambda vx, a, b, out: vx.api.vxuXor(vx.context.handle, a, b, out),
            lambda a, b, dtype: cv2.bitwise_xor(a, b)),
}
# The spec lets AbsDiff, Add and Subtract of two U8 images write U8 or S16; the bitwise
# kernels write U8 only.
PIXELWISE_CASES = [(name, np.uint8) for name in PIXELWISE_BINARY] + [
    (name, np.int16) for name in ("AbsDiff", "Add", "Subtract")]


@pytest.mark.parametrize("size", POINT_SIZES, ids=POINT_SIZE_IDS)
@pytest.mark.parametrize("kernel,output_dtype", PIXELWISE_CASES,
                         ids=[f"{name}-{np.dtype(dtype).name}" for name, dtype in PIXELWISE_CASES])
def test_pixelwise_binary_matches_opencv(vx, kernel, output_dtype, size):
    require_opencv()
    width, height = size
    first, second = random_image(width, height, stream=2), random_image(width, height, stream=3)
    output = vx.empty_image(width, height, output_dtype)
    vxu_call, opencv_function = PIXELWISE_BINARY[kernel]
    check(vxu_call(vx, vx.image(first), vx.image(second), output), f"vxu{kernel}")
    assert_same_pixels(vx.read(output, width, height, output_dtype), opencv_function(first, second, output_dtype),
                       f"{kernel} to {np.dtype(output_dtype).name}, {width}x{height}, {vx.context.device_set}")


@pytest.mark.parametrize("size", POINT_SIZES, ids=POINT_SIZE_IDS)
@pytest.mark.parametrize("scale", [1.0, 1.0 / 256], ids=["scale1", "scale1_256"])
def test_multiply_matches_opencv(vx, scale, size):
    """Scales that are powers of two: OpenCV's float32 product is then exact, and both round
    half to even (VX_ROUND_POLICY_TO_NEAREST_EVEN; OpenCV's saturate_cast) and saturate."""
    require_opencv()
    width, height = size
    first, second = random_image(width, height, stream=4), random_image(width, height, stream=5)
    output = vx.empty_image(width, height, np.uint8)
    check(vx.api.vxuMultiply(vx.context.handle, vx.image(first), vx.image(second), scale, VX_CONVERT_POLICY_SATURATE,
                            VX_ROUND_POLICY_TO_NEAREST_EVEN, output), "vxuMultiply")
    assert_same_pixels(vx.read(output, width, height, np.uint8), cv2.multiply(first, second, scale=scale),
                       f"Multiply by {scale}, {width}x{height}, {vx.context.device_set}")


@pytest.mark.parametrize("size", POINT_SIZES, ids=POINT_SIZE_IDS)
def test_not_matches_opencv(vx, size):
    require_opencv()
    width, height = size
    pixels = random_image(width, height, stream=6)
    output = vx.empty_image(width, height, np.uint8)
    check(vx.api.vxuNot(vx.context.handle, vx.image(pixels), output), "vxuNot")
    assert_same_pixels(vx.read(output, width, height, np.uint8), cv2.bitwise_not(pixels),
                       f"Not, {width}x{height}, {vx.context.device_set}")


@pytest.mark.parametrize("size", POINT_SIZES, ids=POINT_SIZE_IDS)
@pytest.mark.parametrize("value", [0, 127, 254, 255])
def test_binary_threshold_matches_opencv(vx, value, size):
    """Spec: true (255) where src > value, else false (0); cv2.THRESH_BINARY: maxval where
    src > thresh, else 0."""
    require_opencv()
    width, height = size
    pixels = random_image(width, height, stream=7)
    thresh = vx.threshold(VX_THRESHOLD_TYPE_BINARY)
    threshold_value = VxPixelValue()
    threshold_value.U8 = value
    check(vx.api.vxCopyThresholdValue(thresh, ctypes.byref(threshold_value), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST),
          "vxCopyThresholdValue")
    output = vx.empty_image(width, height, np.uint8)
    check(vx.api.vxuThreshold(vx.context.handle, vx.image(pixels), thresh, output), "vxuThreshold")
    _, expected = cv2.threshold(pixels, value, 255, cv2.THRESH_BINARY)
    assert_same_pixels(vx.read(output, width, height, np.uint8), expected,
                       f"binary Threshold > {value}, {width}x{height}, {vx.context.device_set}")


@pytest.mark.parametrize("size", POINT_SIZES, ids=POINT_SIZE_IDS)
@pytest.mark.parametrize("lower,upper", [(60, 190), (0, 255), (100, 100)])
def test_range_threshold_matches_opencv(vx, lower, upper, size):
    """Spec: false where src > upper or src < lower, else true; cv2.inRange: 255 where
    lower <= src <= upper, else 0."""
    require_opencv()
    width, height = size
    pixels = random_image(width, height, stream=8)
    thresh = vx.threshold(VX_THRESHOLD_TYPE_RANGE)
    lower_value, upper_value = VxPixelValue(), VxPixelValue()
    lower_value.U8, upper_value.U8 = lower, upper
    check(vx.api.vxCopyThresholdRange(thresh, ctypes.byref(lower_value), ctypes.byref(upper_value), VX_WRITE_ONLY,
                                     VX_MEMORY_TYPE_HOST), "vxCopyThresholdRange")
    output = vx.empty_image(width, height, np.uint8)
    check(vx.api.vxuThreshold(vx.context.handle, vx.image(pixels), thresh, output), "vxuThreshold")
    assert_same_pixels(vx.read(output, width, height, np.uint8), cv2.inRange(pixels, lower, upper),
                       f"range Threshold [{lower}, {upper}], {width}x{height}, {vx.context.device_set}")


@pytest.mark.parametrize("size", POINT_SIZES, ids=POINT_SIZE_IDS)
def test_table_lookup_matches_opencv(vx, size):
    require_opencv()
    width, height = size
    pixels = random_image(width, height, stream=9)
    table = random_image(256, 1, stream=10)[0]  # a U8 LUT's offset is 0: entry v for value v
    output = vx.empty_image(width, height, np.uint8)
    check(vx.api.vxuTableLookup(vx.context.handle, vx.image(pixels), vx.lut(table), output), "vxuTableLookup")
    assert_same_pixels(vx.read(output, width, height, np.uint8), cv2.LUT(pixels, table),
                       f"TableLookup, {width}x{height}, {vx.context.device_set}")


@pytest.mark.parametrize("size", POINT_SIZES, ids=POINT_SIZE_IDS)
def test_magnitude_matches_opencv(vx, size):
    require_opencv()
    width, height = size
    # Gradients of every magnitude, small to full range (a random shift of full-range
    # values), so that both small results and the clamp at 32767 occur.
    rng = np.random.default_rng([SEED, width, height, 11])
    grad_x, grad_y = (
        (rng.integers(-32768, 32767, size=(height, width), endpoint=True)
         >> rng.integers(0, 15, size=(height, width))).astype(np.int16)
        for _ in range(2))
    output = vx.empty_image(width, height, np.int16)
    check(vx.api.vxuMagnitude(vx.context.handle, vx.image(grad_x), vx.image(grad_y), output), "vxuMagnitude")
    magnitude = cv2.magnitude(grad_x.astype(np.float64), grad_y.astype(np.float64))
    # OpenCV's saturating conversion to CV_16S (Mat::convertTo's formula, as addWeighted
    # applies it with the second term's weight 0).
    expected = cv2.addWeighted(magnitude, 1.0, magnitude, 0.0, 0.0, dtype=cv2.CV_16S)
    assert_same_pixels(vx.read(output, width, height, np.int16), expected,
                       f"Magnitude, {width}x{height}, {vx.context.device_set}")


@pytest.mark.parametrize("size", POINT_SIZES, ids=POINT_SIZE_IDS)
@pytest.mark.parametrize("shift", [0, 1, 7])
def test_convert_depth_u8_to_s16_matches_opencv(vx, shift, size):
    """Spec: output = ((int16)input) << shift, the policy ignored; OpenCV: the conversion
    scaled by 2^shift, exact here."""
    require_opencv()
    width, height = size
    pixels = random_image(width, height, stream=12)
    output = vx.empty_image(width, height, np.int16)
    check(vx.api.vxuConvertDepth(vx.context.handle, vx.image(pixels), output, VX_CONVERT_POLICY_SATURATE, shift),
          "vxuConvertDepth")
    expected = cv2.addWeighted(pixels, float(1 << shift), pixels, 0.0, 0.0, dtype=cv2.CV_16S)
    assert_same_pixels(vx.read(output, width, height, np.int16), expected,
                       f"ConvertDepth U8->S16 << {shift}, {width}x{height}, {vx.context.device_set}")


@pytest.mark.parametrize("size", POINT_SIZES, ids=POINT_SIZE_IDS)
def test_convert_depth_s16_to_u8_saturate_matches_opencv(vx, size):
    """Spec, SATURATE with shift 0: input clamped to 0..255; OpenCV's saturating conversion."""
    require_opencv()
    width, height = size
    pixels = random_image(width, height, np.int16, stream=13)
    pixels.flat[::7] //= 128  # many values inside 0..255 too, not only clamped ones
    output = vx.empty_image(width, height, np.uint8)
    check(vx.api.vxuConvertDepth(vx.context.handle, vx.image(pixels), output, VX_CONVERT_POLICY_SATURATE, 0),
          "vxuConvertDepth")
    expected = cv2.addWeighted(pixels, 1.0, pixels, 0.0, 0.0, dtype=cv2.CV_8U)
    assert_same_pixels(vx.read(output, width, height, np.uint8), expected,
                       f"ConvertDepth S16->U8 saturate, {width}x{height}, {vx.context.device_set}")


# --- Statistics ----------------------------------------------------------------------------

@pytest.mark.parametrize("size", POINT_SIZES, ids=POINT_SIZE_IDS)
def test_integral_image_matches_opencv(vx, size):
    """cv2.integral has a leading row and column of zeros; the spec's sum(x, y) includes
    src(x, y) itself, which is OpenCV's sum at (x + 1, y + 1)."""
    require_opencv()
    width, height = size
    pixels = random_image(width, height, stream=14)
    output = vx.empty_image(width, height, np.uint32)
    check(vx.api.vxuIntegralImage(vx.context.handle, vx.image(pixels), output), "vxuIntegralImage")
    expected = cv2.integral(pixels)[1:, 1:].astype(np.uint32)  # 255 * 641 * 479 fits either
    assert_same_pixels(vx.read(output, width, height, np.uint32), expected,
                       f"IntegralImage, {width}x{height}, {vx.context.device_set}")


@pytest.mark.parametrize("size", POINT_SIZES, ids=POINT_SIZE_IDS)
@pytest.mark.parametrize("bins", [256, 16])
def test_histogram_matches_opencv(vx, bins, size):
    require_opencv()
    width, height = size
    pixels = random_image(width, height, stream=15)
    distribution = vx.distribution(bins, 0, 256)
    check(vx.api.vxuHistogram(vx.context.handle, vx.image(pixels), distribution), "vxuHistogram")
    actual = vx.read_distribution(distribution, bins)
    counts = cv2.calcHist([pixels], [0], None, [bins], [0, 256]).ravel()  # float32 counts, exact here
    assert_same_pixels(actual, counts.astype(np.uint32), f"Histogram, {bins} bins, {width}x{height}, "
                       f"{vx.context.device_set}")


@pytest.mark.parametrize("size", POINT_SIZES, ids=POINT_SIZE_IDS)
@pytest.mark.parametrize("dtype", [np.uint8, np.int16], ids=["U8", "S16"])
def test_min_max_loc_matches_opencv(vx, dtype, size):
    require_opencv()
    width, height = size
    pixels = random_image(width, height, dtype, stream=16)
    # The spec's minVal/maxVal scalars are of the input's type.
    scalar_type, ctype = (VX_TYPE_UINT8, ctypes.c_uint8) if dtype == np.uint8 else (VX_TYPE_INT16, ctypes.c_int16)
    min_value, max_value = vx.scalar(scalar_type, ctype), vx.scalar(scalar_type, ctype)
    min_count, max_count = vx.scalar(VX_TYPE_SIZE, ctypes.c_size_t), vx.scalar(VX_TYPE_SIZE, ctypes.c_size_t)
    # Room for every pixel: the spec keeps only as many locations as the array holds.
    min_locations, max_locations = vx.coordinates_array(width * height), vx.coordinates_array(width * height)
    check(vx.api.vxuMinMaxLoc(vx.context.handle, vx.image(pixels), min_value, max_value, min_locations,
                             max_locations, min_count, max_count), "vxuMinMaxLoc")

    opencv_min, opencv_max, _, _ = cv2.minMaxLoc(pixels)
    where = f"MinMaxLoc {np.dtype(dtype).name}, {width}x{height}, {vx.context.device_set}"
    for name, value, count, locations, opencv_value in (
            ("minimum", min_value, min_count, min_locations, opencv_min),
            ("maximum", max_value, max_count, max_locations, opencv_max)):
        actual_value = vx.read_scalar(value, ctype)
        assert actual_value == int(opencv_value), f"{where}: {name} {actual_value}, OpenCV {opencv_value}"
        at_extreme = cv2.compare(pixels, int(opencv_value), cv2.CMP_EQ)
        actual_count = vx.read_scalar(count, ctypes.c_size_t)
        assert actual_count == cv2.countNonZero(at_extreme), \
            f"{where}: {name} count {actual_count}, OpenCV {cv2.countNonZero(at_extreme)}"
        opencv_locations = {(int(x), int(y)) for x, y in cv2.findNonZero(at_extreme).reshape(-1, 2)}
        actual_locations = vx.read_coordinates(locations)
        assert actual_locations == opencv_locations, (
            f"{where}: {name} locations differ; only OpenVX's: {sorted(actual_locations - opencv_locations)[:5]}, "
            f"only OpenCV's: {sorted(opencv_locations - actual_locations)[:5]}")


@pytest.mark.parametrize("size", POINT_SIZES, ids=POINT_SIZE_IDS)
def test_mean_std_dev_matches_opencv(vx, size):
    """Both the population deviation (divided by the pixel count); OpenVX's results are
    VX_TYPE_FLOAT32, hence a relative tolerance."""
    require_opencv()
    width, height = size
    pixels = random_image(width, height, stream=17)
    mean, stddev = ctypes.c_float(), ctypes.c_float()
    check(vx.api.vxuMeanStdDev(vx.context.handle, vx.image(pixels), ctypes.byref(mean), ctypes.byref(stddev)),
          "vxuMeanStdDev")
    opencv_mean, opencv_stddev = (float(v[0][0]) for v in cv2.meanStdDev(pixels))
    where = f"MeanStdDev, {width}x{height}, {vx.context.device_set}"
    assert mean.value == pytest.approx(opencv_mean, rel=1e-3), f"{where}: mean {mean.value}, OpenCV {opencv_mean}"
    assert stddev.value == pytest.approx(opencv_stddev, rel=1e-3), \
        f"{where}: standard deviation {stddev.value}, OpenCV {opencv_stddev}"
