// vx_image through the public OpenVX API only: creation of every supported
// format, attributes, host access through maps and copies, images over the
// application's memory and their handle swaps, ROIs, channels, uniform
// images, valid regions, and the exact status of every refusal.
#include <VX/vx.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

// ---- What the tests expect of each format (from the spec's format table) ----

/// One plane: pixels per element along x and y, and bytes per element.
struct plane_layout {
  uint32_t step_x, step_y, element_bytes, pixels_per_element;
};
struct format_info {
  vx_df_image format;
  const char* name;
  vx_size planes;
  bool yuv;
  plane_layout plane[3];
};

const format_info formats[] = {
    {VX_DF_IMAGE_U8, "U8", 1, false, {{1, 1, 1, 1}}},
    {VX_DF_IMAGE_U16, "U16", 1, false, {{1, 1, 2, 1}}},
    {VX_DF_IMAGE_S16, "S16", 1, false, {{1, 1, 2, 1}}},
    {VX_DF_IMAGE_U32, "U32", 1, false, {{1, 1, 4, 1}}},
    {VX_DF_IMAGE_S32, "S32", 1, false, {{1, 1, 4, 1}}},
    {VX_DF_IMAGE_RGB, "RGB", 1, false, {{1, 1, 3, 1}}},
    {VX_DF_IMAGE_RGBX, "RGBX", 1, false, {{1, 1, 4, 1}}},
    {VX_DF_IMAGE_UYVY, "UYVY", 1, true, {{2, 1, 4, 2}}},
    {VX_DF_IMAGE_YUYV, "YUYV", 1, true, {{2, 1, 4, 2}}},
    {VX_DF_IMAGE_NV12, "NV12", 2, true, {{1, 1, 1, 1}, {2, 2, 2, 1}}},
    {VX_DF_IMAGE_NV21, "NV21", 2, true, {{1, 1, 1, 1}, {2, 2, 2, 1}}},
    {VX_DF_IMAGE_IYUV, "IYUV", 3, true, {{1, 1, 1, 1}, {2, 2, 1, 1}, {2, 2, 1, 1}}},
    {VX_DF_IMAGE_YUV4, "YUV4", 3, true, {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}}},
};

constexpr vx_uint32 width = 16, height = 12;

vx_status status_of(void* ref) { return vxGetStatus(static_cast<vx_reference>(ref)); }

/// A recognizable byte for byte `k` of the element at (x, y) of plane `p`.
uint8_t pattern(uint32_t seed, uint32_t p, uint32_t x, uint32_t y, uint32_t k) {
  return static_cast<uint8_t>(seed * 31 + p * 67 + x * 7 + y * 13 + k * 3 + 1);
}

/// The bytes of one element of plane `p` when every pixel is `value`.
std::vector<uint8_t> element_of(vx_df_image format, uint32_t p, const vx_pixel_value_t& value) {
  const uint8_t y = value.YUV[0], u = value.YUV[1], v = value.YUV[2];
  auto bytes_of = [](const void* from, size_t n) {
    const auto* b = static_cast<const uint8_t*>(from);
    return std::vector<uint8_t>(b, b + n);
  };
  switch (format) {
    case VX_DF_IMAGE_U8: return {value.U8};
    case VX_DF_IMAGE_U16: return bytes_of(&value.U16, 2);
    case VX_DF_IMAGE_S16: return bytes_of(&value.S16, 2);
    case VX_DF_IMAGE_U32: return bytes_of(&value.U32, 4);
    case VX_DF_IMAGE_S32: return bytes_of(&value.S32, 4);
    case VX_DF_IMAGE_RGB: return {value.RGB[0], value.RGB[1], value.RGB[2]};
    case VX_DF_IMAGE_RGBX: return {value.RGBX[0], value.RGBX[1], value.RGBX[2], value.RGBX[3]};
    case VX_DF_IMAGE_UYVY: return {u, y, v, y};
    case VX_DF_IMAGE_YUYV: return {y, u, y, v};
    case VX_DF_IMAGE_NV12: return p == 0 ? std::vector<uint8_t>{y} : std::vector<uint8_t>{u, v};
    case VX_DF_IMAGE_NV21: return p == 0 ? std::vector<uint8_t>{y} : std::vector<uint8_t>{v, u};
    default: return {p == 0 ? y : p == 1 ? u : v};  // IYUV, YUV4
  }
}

/// A packed user layout for plane `p` of a w x h patch (pixels).
vx_imagepatch_addressing_t packed_user_layout(const plane_layout& plane, vx_uint32 w, vx_uint32 h) {
  vx_imagepatch_addressing_t addr = VX_IMAGEPATCH_ADDR_INIT;
  addr.dim_x = w;
  addr.dim_y = h;
  addr.stride_x = static_cast<vx_int32>(plane.element_bytes / plane.pixels_per_element);
  addr.stride_y = static_cast<vx_int32>(w / plane.step_x * plane.element_bytes);
  return addr;
}

/// Reads plane `p` of `rect` through vxCopyImagePatch into a packed buffer.
std::vector<uint8_t> read_plane(vx_image image, const plane_layout& plane, uint32_t p, const vx_rectangle_t& rect) {
  vx_uint32 w = rect.end_x - rect.start_x, h = rect.end_y - rect.start_y;
  vx_imagepatch_addressing_t addr = packed_user_layout(plane, w, h);
  std::vector<uint8_t> out(size_t(addr.stride_y) * (h / plane.step_y));
  EXPECT_EQ(VX_SUCCESS, vxCopyImagePatch(image, &rect, p, &addr, out.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  return out;
}

struct log_line {
  vx_status status;
  std::string text;
};
std::vector<log_line>* log_lines = nullptr;

void VX_CALLBACK keep_log(vx_context, vx_reference, vx_status status, const vx_char string[]) {
  if (log_lines != nullptr) log_lines->push_back({status, string});
}

class ImageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context_ = vxCreateContext();
    ASSERT_EQ(VX_SUCCESS, status_of(context_));
    log_lines = &log_;
    vxRegisterLogCallback(context_, keep_log, vx_false_e);
  }
  void TearDown() override {
    log_lines = nullptr;
    EXPECT_EQ(VX_SUCCESS, vxReleaseContext(&context_));
  }

  vx_image make(vx_df_image format, vx_uint32 w = width, vx_uint32 h = height) {
    vx_image image = vxCreateImage(context_, w, h, format);
    EXPECT_EQ(VX_SUCCESS, status_of(image));
    return image;
  }

  vx_context context_ = nullptr;
  std::vector<log_line> log_;
};

const vx_rectangle_t whole{0, 0, width, height};

// ---- Creation and attributes ----

TEST_F(ImageTest, EveryFormatIsCreatedWithItsAttributes) {
  for (const format_info& f : formats) {
    SCOPED_TRACE(f.name);
    vx_image image = make(f.format);
    vx_uint32 w = 0, h = 0;
    vx_df_image format = 0;
    vx_size planes = 0;
    vx_enum space = 0, range = 0, memory_type = 0;
    vx_bool uniform = vx_true_e;
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_WIDTH, &w, sizeof w));
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_HEIGHT, &h, sizeof h));
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_FORMAT, &format, sizeof format));
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_PLANES, &planes, sizeof planes));
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_SPACE, &space, sizeof space));
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_RANGE, &range, sizeof range));
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_MEMORY_TYPE, &memory_type, sizeof memory_type));
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_IS_UNIFORM, &uniform, sizeof uniform));
    EXPECT_EQ(width, w);
    EXPECT_EQ(height, h);
    EXPECT_EQ(f.format, format);
    EXPECT_EQ(f.planes, planes);
    EXPECT_EQ(f.yuv ? VX_COLOR_SPACE_BT709 : VX_COLOR_SPACE_NONE, space);
    EXPECT_EQ(VX_CHANNEL_RANGE_FULL, range);
    EXPECT_EQ(VX_MEMORY_TYPE_NONE, memory_type);
    EXPECT_EQ(vx_false_e, uniform);
    vx_rectangle_t valid{};
    EXPECT_EQ(VX_SUCCESS, vxGetValidRegionImage(image, &valid));
    EXPECT_EQ(0u, valid.start_x);
    EXPECT_EQ(0u, valid.start_y);
    EXPECT_EQ(width, valid.end_x);
    EXPECT_EQ(height, valid.end_y);
    EXPECT_EQ(VX_SUCCESS, vxReleaseImage(&image));
    EXPECT_EQ(nullptr, image);
  }
}

TEST_F(ImageTest, CreationRefusesBadSizesAndFormats) {
  EXPECT_EQ(VX_ERROR_INVALID_DIMENSION, status_of(vxCreateImage(context_, 0, 8, VX_DF_IMAGE_U8)));
  EXPECT_EQ(VX_ERROR_INVALID_DIMENSION, status_of(vxCreateImage(context_, 8, 0, VX_DF_IMAGE_U8)));
  // "NV12, NV21, IYUV, UYVY, YUYV must have even width; NV12, NV21, IYUV even height."
  EXPECT_EQ(VX_ERROR_INVALID_DIMENSION, status_of(vxCreateImage(context_, 15, 8, VX_DF_IMAGE_NV12)));
  EXPECT_EQ(VX_ERROR_INVALID_DIMENSION, status_of(vxCreateImage(context_, 16, 7, VX_DF_IMAGE_IYUV)));
  EXPECT_EQ(VX_ERROR_INVALID_DIMENSION, status_of(vxCreateImage(context_, 15, 8, VX_DF_IMAGE_UYVY)));
  EXPECT_EQ(VX_ERROR_INVALID_DIMENSION, status_of(vxCreateImage(context_, 15, 8, VX_DF_IMAGE_YUYV)));
  vx_image odd_rows = vxCreateImage(context_, 16, 7, VX_DF_IMAGE_UYVY);  // 4:2:2 has full rows
  EXPECT_EQ(VX_SUCCESS, status_of(odd_rows));
  vxReleaseImage(&odd_rows);
  // Rows whose pitch would not fit a vx_int32 stride_y.
  EXPECT_EQ(VX_ERROR_INVALID_DIMENSION, status_of(vxCreateImage(context_, 0x80000000u, 1, VX_DF_IMAGE_RGB)));
  EXPECT_EQ(VX_ERROR_INVALID_FORMAT, status_of(vxCreateImage(context_, 8, 8, VX_DF_IMAGE_VIRT)));
  EXPECT_EQ(VX_ERROR_INVALID_FORMAT, status_of(vxCreateImage(context_, 8, 8, VX_DF_IMAGE('B', 'A', 'D', '!'))));
  EXPECT_EQ(VX_ERROR_INVALID_FORMAT, status_of(vxCreateImage(context_, 8, 8, VX_DF_IMAGE_U1)));
  EXPECT_NE(VX_SUCCESS, status_of(vxCreateImage(nullptr, 8, 8, VX_DF_IMAGE_U8)));
  // A reference of another type where the context goes.
  vx_image image = make(VX_DF_IMAGE_U8);
  EXPECT_NE(VX_SUCCESS, status_of(vxCreateImage(reinterpret_cast<vx_context>(image), 8, 8, VX_DF_IMAGE_U8)));
  vxReleaseImage(&image);
  // The refusals reached the log.
  ASSERT_FALSE(log_.empty());
  EXPECT_NE(std::string::npos, log_.front().text.find("vxCreateImage"));
}

TEST_F(ImageTest, QueryRefusesBadArguments) {
  vx_image image = make(VX_DF_IMAGE_U8);
  vx_uint32 w = 0;
  vx_uint64 too_big = 0;
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxQueryImage(image, VX_IMAGE_WIDTH, &too_big, sizeof too_big));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxQueryImage(image, VX_IMAGE_WIDTH, nullptr, sizeof w));
  // 0x6 was VX_IMAGE_SIZE before OpenVX 1.1; it is no attribute now.
  EXPECT_EQ(VX_ERROR_NOT_SUPPORTED,
            vxQueryImage(image, VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_IMAGE) + 0x6, &w, sizeof w));
  // "Queries the image uniform value if any": a plain image has none.
  vx_pixel_value_t value{};
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxQueryImage(image, VX_IMAGE_UNIFORM_VALUE, &value, sizeof value));
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE, vxQueryImage(nullptr, VX_IMAGE_WIDTH, &w, sizeof w));
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE,
            vxQueryImage(reinterpret_cast<vx_image>(context_), VX_IMAGE_WIDTH, &w, sizeof w));
  vxReleaseImage(&image);
}

TEST_F(ImageTest, OnlyTheColorSpaceCanBeSet) {
  vx_image image = make(VX_DF_IMAGE_NV12);
  vx_enum space = VX_COLOR_SPACE_BT601_625;
  EXPECT_EQ(VX_SUCCESS, vxSetImageAttribute(image, VX_IMAGE_SPACE, &space, sizeof space));
  vx_enum read = 0;
  EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_SPACE, &read, sizeof read));
  EXPECT_EQ(VX_COLOR_SPACE_BT601_625, read);
  vx_enum bad = VX_CHANNEL_RANGE_FULL;
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxSetImageAttribute(image, VX_IMAGE_SPACE, &bad, sizeof bad));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxSetImageAttribute(image, VX_IMAGE_SPACE, &space, 2));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxSetImageAttribute(image, VX_IMAGE_SPACE, nullptr, sizeof space));
  vx_uint32 w = 4;
  EXPECT_EQ(VX_ERROR_NOT_SUPPORTED, vxSetImageAttribute(image, VX_IMAGE_WIDTH, &w, sizeof w));
  vx_enum range = VX_CHANNEL_RANGE_RESTRICTED;
  EXPECT_EQ(VX_ERROR_NOT_SUPPORTED, vxSetImageAttribute(image, VX_IMAGE_RANGE, &range, sizeof range));
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE, vxSetImageAttribute(nullptr, VX_IMAGE_SPACE, &space, sizeof space));
  vxReleaseImage(&image);
}

TEST_F(ImageTest, ReleaseRefusesWhatIsNoImage) {
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE, vxReleaseImage(nullptr));
  vx_image none = nullptr;
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE, vxReleaseImage(&none));
  auto not_image = reinterpret_cast<vx_image>(context_);
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE, vxReleaseImage(&not_image));
  vx_image image = make(VX_DF_IMAGE_U8);
  EXPECT_EQ(VX_SUCCESS, vxReleaseImage(&image));
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE, vxReleaseImage(&image));  // zeroed by the first
}

// ---- Maps and copies ----

TEST_F(ImageTest, MappedWritesAreCopiedBackForEveryFormatAndPlane) {
  for (const format_info& f : formats) {
    SCOPED_TRACE(f.name);
    vx_image image = make(f.format);
    for (uint32_t p = 0; p < f.planes; ++p) {
      SCOPED_TRACE(p);
      const plane_layout& plane = f.plane[p];
      vx_map_id id = 0;
      vx_imagepatch_addressing_t addr = VX_IMAGEPATCH_ADDR_INIT;
      void* base = nullptr;
      ASSERT_EQ(VX_SUCCESS, vxMapImagePatch(image, &whole, p, &id, &addr, &base, VX_WRITE_ONLY,
                                            VX_MEMORY_TYPE_HOST, VX_NOGAP_X));
      EXPECT_EQ(width, addr.dim_x);
      EXPECT_EQ(height, addr.dim_y);
      EXPECT_EQ(static_cast<vx_int32>(plane.element_bytes / plane.pixels_per_element), addr.stride_x);
      EXPECT_GE(addr.stride_y, static_cast<vx_int32>(width / plane.step_x * plane.element_bytes));
      EXPECT_EQ(plane.step_x, addr.step_x);
      EXPECT_EQ(plane.step_y, addr.step_y);
      EXPECT_EQ(VX_SCALE_UNITY / (plane.step_y), addr.scale_y);
      for (uint32_t y = 0; y < height; y += plane.step_y)
        for (uint32_t x = 0; x < width; x += plane.step_x) {
          auto* at = static_cast<uint8_t*>(vxFormatImagePatchAddress2d(base, x, y, &addr));
          ASSERT_NE(nullptr, at);
          for (uint32_t k = 0; k < plane.element_bytes; ++k) at[k] = pattern(1, p, x, y, k);
        }
      EXPECT_EQ(VX_SUCCESS, vxUnmapImagePatch(image, id));
      std::vector<uint8_t> read = read_plane(image, plane, p, whole);
      size_t row = width / plane.step_x * plane.element_bytes;
      for (uint32_t y = 0; y < height; y += plane.step_y)
        for (uint32_t x = 0; x < width; x += plane.step_x)
          for (uint32_t k = 0; k < plane.element_bytes; ++k)
            ASSERT_EQ(pattern(1, p, x, y, k), read[y / plane.step_y * row + x / plane.step_x * plane.element_bytes + k])
                << "x " << x << " y " << y << " byte " << k;
    }
    vxReleaseImage(&image);
  }
}

TEST_F(ImageTest, CopiedWritesAreSeenThroughAReadMap) {
  for (const format_info& f : formats) {
    SCOPED_TRACE(f.name);
    vx_image image = make(f.format);
    for (uint32_t p = 0; p < f.planes; ++p) {
      const plane_layout& plane = f.plane[p];
      // A patch away from the corners, on whole elements of the plane.
      vx_rectangle_t rect{2, 2, 10, 8};
      vx_uint32 w = rect.end_x - rect.start_x, h = rect.end_y - rect.start_y;
      vx_imagepatch_addressing_t user = packed_user_layout(plane, w, h);
      std::vector<uint8_t> data(size_t(user.stride_y) * (h / plane.step_y));
      size_t row = size_t(user.stride_y);
      for (uint32_t y = 0; y < h; y += plane.step_y)
        for (uint32_t x = 0; x < w; x += plane.step_x)
          for (uint32_t k = 0; k < plane.element_bytes; ++k)
            data[y / plane.step_y * row + x / plane.step_x * plane.element_bytes + k] = pattern(2, p, x, y, k);
      ASSERT_EQ(VX_SUCCESS,
                vxCopyImagePatch(image, &rect, p, &user, data.data(), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
      vx_map_id id = 0;
      vx_imagepatch_addressing_t addr = VX_IMAGEPATCH_ADDR_INIT;
      void* base = nullptr;
      ASSERT_EQ(VX_SUCCESS,
                vxMapImagePatch(image, &rect, p, &id, &addr, &base, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
      EXPECT_EQ(w, addr.dim_x);
      EXPECT_EQ(h, addr.dim_y);
      for (uint32_t y = 0; y < h; y += plane.step_y)
        for (uint32_t x = 0; x < w; x += plane.step_x) {
          auto* at = static_cast<uint8_t*>(vxFormatImagePatchAddress2d(base, x, y, &addr));
          for (uint32_t k = 0; k < plane.element_bytes; ++k) ASSERT_EQ(pattern(2, p, x, y, k), at[k]);
        }
      // The 1d form walks the same pixels row by row.
      for (uint32_t i = 0; i < w * h; ++i)
        EXPECT_EQ(vxFormatImagePatchAddress2d(base, i % w, i / w, &addr), vxFormatImagePatchAddress1d(base, i, &addr));
      EXPECT_EQ(VX_SUCCESS, vxUnmapImagePatch(image, id));
    }
    vxReleaseImage(&image);
  }
}

TEST_F(ImageTest, CopyHonoursTheUserStrides) {
  vx_image image = make(VX_DF_IMAGE_U16);
  // Every other vx_uint16 of the user buffer, and rows padded to 80 bytes.
  vx_imagepatch_addressing_t user = VX_IMAGEPATCH_ADDR_INIT;
  user.dim_x = width;
  user.dim_y = height;
  user.stride_x = 4;
  user.stride_y = 80;
  std::vector<uint16_t> data(80 / 2 * height, 0);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) data[y * 40 + x * 2] = static_cast<uint16_t>(1000 + y * 100 + x);
  ASSERT_EQ(VX_SUCCESS, vxCopyImagePatch(image, &whole, 0, &user, data.data(), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
  std::vector<uint8_t> packed = read_plane(image, formats[1].plane[0], 0, whole);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      uint16_t v;
      std::memcpy(&v, &packed[(y * width + x) * 2], 2);
      ASSERT_EQ(1000 + y * 100 + x, v);
    }
  std::vector<uint16_t> back(80 / 2 * height, 0xffff);
  ASSERT_EQ(VX_SUCCESS, vxCopyImagePatch(image, &whole, 0, &user, back.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      EXPECT_EQ(data[y * 40 + x * 2], back[y * 40 + x * 2]);
      EXPECT_EQ(0xffff, back[y * 40 + x * 2 + 1]);  // the gaps are left alone
    }
  vxReleaseImage(&image);
}

TEST_F(ImageTest, MapRefusesBadArguments) {
  vx_image image = make(VX_DF_IMAGE_NV12);
  vx_map_id id = 0;
  vx_imagepatch_addressing_t addr = VX_IMAGEPATCH_ADDR_INIT;
  void* base = nullptr;
  auto map = [&](const vx_rectangle_t* rect, vx_uint32 plane, vx_enum usage, vx_enum type, vx_uint32 flags) {
    return vxMapImagePatch(image, rect, plane, &id, &addr, &base, usage, type, flags);
  };
  const vx_rectangle_t outside{0, 0, width + 2, height};
  const vx_rectangle_t empty{4, 4, 4, 8};
  const vx_rectangle_t reversed{8, 4, 4, 8};
  const vx_rectangle_t odd{1, 0, 5, 4};
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, map(nullptr, 0, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, map(&outside, 0, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, map(&empty, 0, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, map(&reversed, 0, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, map(&whole, 2, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
  // The chroma plane holds one element per 2x2 pixels.
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, map(&odd, 1, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, map(&whole, 0, VX_READ_ONLY, VX_MEMORY_TYPE_NONE, 0));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, map(&whole, 0, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 2));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, map(&whole, 0, VX_INPUT, VX_MEMORY_TYPE_HOST, 0));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS,
            vxMapImagePatch(image, &whole, 0, nullptr, &addr, &base, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS,
            vxMapImagePatch(image, &whole, 0, &id, nullptr, &base, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS,
            vxMapImagePatch(image, &whole, 0, &id, &addr, nullptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE,
            vxMapImagePatch(nullptr, &whole, 0, &id, &addr, &base, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
  // Unmap takes only a live map of the same image, once.
  ASSERT_EQ(VX_SUCCESS, map(&whole, 1, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST, 0));
  vx_image other = make(VX_DF_IMAGE_NV12);
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxUnmapImagePatch(other, id));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxUnmapImagePatch(image, id + 100));
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE, vxUnmapImagePatch(nullptr, id));
  EXPECT_EQ(VX_SUCCESS, vxUnmapImagePatch(image, id));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxUnmapImagePatch(image, id));
  // The first refusal told the log why.
  ASSERT_FALSE(log_.empty());
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, log_.front().status);
  EXPECT_NE(std::string::npos, log_.front().text.find("vxMapImagePatch"));
  vxReleaseImage(&other);
  vxReleaseImage(&image);
}

TEST_F(ImageTest, CopyRefusesBadArguments) {
  vx_image image = make(VX_DF_IMAGE_NV12);
  const plane_layout& luma = formats[9].plane[0];
  vx_imagepatch_addressing_t user = packed_user_layout(luma, width, height);
  std::vector<uint8_t> data(width * height);
  auto copy = [&](const vx_rectangle_t* rect, vx_uint32 plane, const vx_imagepatch_addressing_t* addr, void* ptr,
                  vx_enum usage, vx_enum type) { return vxCopyImagePatch(image, rect, plane, addr, ptr, usage, type); };
  const vx_rectangle_t outside{0, 0, width, height + 1};
  const vx_rectangle_t odd{0, 1, 4, 5};
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, copy(nullptr, 0, &user, data.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, copy(&outside, 0, &user, data.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, copy(&whole, 2, &user, data.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, copy(&odd, 1, &user, data.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, copy(&whole, 0, nullptr, data.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, copy(&whole, 0, &user, nullptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  // "Only VX_READ_ONLY and VX_WRITE_ONLY are supported."
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS,
            copy(&whole, 0, &user, data.data(), VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, copy(&whole, 0, &user, data.data(), VX_READ_ONLY, VX_MEMORY_TYPE_NONE));
  vx_imagepatch_addressing_t narrow = user;
  narrow.stride_x = 0;
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, copy(&whole, 0, &narrow, data.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  vx_imagepatch_addressing_t short_rows = user;
  short_rows.stride_y = width - 1;
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS,
            copy(&whole, 0, &short_rows, data.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  vx_imagepatch_addressing_t small = user;
  small.dim_y = height / 2;
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, copy(&whole, 0, &small, data.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE,
            vxCopyImagePatch(nullptr, &whole, 0, &user, data.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  // The chroma plane's dims may be given in elements too.
  const plane_layout& chroma = formats[9].plane[1];
  vx_imagepatch_addressing_t in_elements = packed_user_layout(chroma, width, height);
  in_elements.dim_x = width / 2;
  in_elements.dim_y = height / 2;
  EXPECT_EQ(VX_SUCCESS, copy(&whole, 1, &in_elements, data.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  vxReleaseImage(&image);
}

TEST_F(ImageTest, PatchAddressesFollowTheSpecFormula) {
  uint8_t buffer[256];
  vx_imagepatch_addressing_t addr = VX_IMAGEPATCH_ADDR_INIT;
  addr.dim_x = 8;
  addr.dim_y = 4;
  addr.stride_x = 2;
  addr.stride_y = 20;
  addr.scale_x = VX_SCALE_UNITY / 2;
  addr.scale_y = VX_SCALE_UNITY / 2;
  addr.step_x = 2;
  addr.step_y = 2;
  // (5, 3) on a half-scaled plane is element (2, 1).
  EXPECT_EQ(buffer + 1 * 20 + 2 * 2, vxFormatImagePatchAddress2d(buffer, 5, 3, &addr));
  EXPECT_EQ(buffer + 0 * 20 + 2 * 2, vxFormatImagePatchAddress1d(buffer, 13, &addr));  // (5, 1)
  EXPECT_EQ(nullptr, vxFormatImagePatchAddress2d(buffer, 8, 0, &addr));
  EXPECT_EQ(nullptr, vxFormatImagePatchAddress2d(buffer, 0, 4, &addr));
  EXPECT_EQ(nullptr, vxFormatImagePatchAddress1d(buffer, 32, &addr));
  EXPECT_EQ(nullptr, vxFormatImagePatchAddress2d(nullptr, 0, 0, &addr));
  EXPECT_EQ(nullptr, vxFormatImagePatchAddress1d(buffer, 0, nullptr));
  addr.scale_x = addr.scale_y = VX_SCALE_UNITY;
  EXPECT_EQ(buffer + 3 * 20 + 7 * 2, vxFormatImagePatchAddress2d(buffer, 7, 3, &addr));
  // Bit-packed rows: the byte holding the pixel's bit.
  addr.stride_x = 0;
  addr.stride_x_bits = 1;
  EXPECT_EQ(buffer + 2 * 20 + 0, vxFormatImagePatchAddress2d(buffer, 7, 2, &addr));
  addr.dim_x = 16;
  EXPECT_EQ(buffer + 2 * 20 + 1, vxFormatImagePatchAddress2d(buffer, 9, 2, &addr));
}

// ---- Images over the application's memory ----

TEST_F(ImageTest, HandleImagesUseTheApplicationsPaddedRows) {
  // U8, 10x6, rows of 16 bytes.
  std::vector<uint8_t> pixels(16 * 6);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i);
  vx_imagepatch_addressing_t addr = VX_IMAGEPATCH_ADDR_INIT;
  addr.dim_x = 10;
  addr.dim_y = 6;
  addr.stride_x = 1;
  addr.stride_y = 16;
  void* ptrs[] = {pixels.data()};
  vx_image image = vxCreateImageFromHandle(context_, VX_DF_IMAGE_U8, &addr, ptrs, VX_MEMORY_TYPE_HOST);
  ASSERT_EQ(VX_SUCCESS, status_of(image));
  vx_uint32 w = 0, h = 0;
  vx_enum memory_type = 0;
  EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_WIDTH, &w, sizeof w));
  EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_HEIGHT, &h, sizeof h));
  EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_MEMORY_TYPE, &memory_type, sizeof memory_type));
  EXPECT_EQ(10u, w);
  EXPECT_EQ(6u, h);
  EXPECT_EQ(VX_MEMORY_TYPE_HOST, memory_type);
  // "If image was created via vxCreateImageFromHandle then the returned
  // address will be the address of the patch in the original pixel buffer",
  // with the same layout.
  vx_rectangle_t rect{2, 1, 8, 5};
  vx_map_id id = 0;
  vx_imagepatch_addressing_t mapped = VX_IMAGEPATCH_ADDR_INIT;
  void* base = nullptr;
  ASSERT_EQ(VX_SUCCESS, vxMapImagePatch(image, &rect, 0, &id, &mapped, &base, VX_READ_AND_WRITE,
                                        VX_MEMORY_TYPE_HOST, 0));
  EXPECT_EQ(pixels.data() + 16 + 2, base);
  EXPECT_EQ(16, mapped.stride_y);
  EXPECT_EQ(1, mapped.stride_x);
  EXPECT_EQ(6u, mapped.dim_x);
  EXPECT_EQ(4u, mapped.dim_y);
  EXPECT_EQ(pixels[3 * 16 + 5], *static_cast<uint8_t*>(vxFormatImagePatchAddress2d(base, 3, 2, &mapped)));
  *static_cast<uint8_t*>(vxFormatImagePatchAddress2d(base, 0, 0, &mapped)) = 200;
  EXPECT_EQ(VX_SUCCESS, vxUnmapImagePatch(image, id));
  // A copy reads the padded rows as the image's.
  std::vector<uint8_t> read(10 * 6);
  vx_imagepatch_addressing_t user = VX_IMAGEPATCH_ADDR_INIT;
  user.dim_x = 10;
  user.dim_y = 6;
  user.stride_x = 1;
  user.stride_y = 10;
  vx_rectangle_t all{0, 0, 10, 6};
  ASSERT_EQ(VX_SUCCESS, vxCopyImagePatch(image, &all, 0, &user, read.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  for (uint32_t y = 0; y < 6; ++y)
    for (uint32_t x = 0; x < 10; ++x) EXPECT_EQ(pixels[y * 16 + x], read[y * 10 + x]);
  EXPECT_EQ(200, read[1 * 10 + 2]);
  vxReleaseImage(&image);
}

TEST_F(ImageTest, HandleImagesOfEveryPlanarFormatMapIntoTheApplicationsPlanes) {
  for (const format_info& f : formats) {
    SCOPED_TRACE(f.name);
    std::vector<std::vector<uint8_t>> planes(f.planes);
    vx_imagepatch_addressing_t addrs[3];
    void* ptrs[3] = {};
    for (uint32_t p = 0; p < f.planes; ++p) {
      const plane_layout& plane = f.plane[p];
      addrs[p] = VX_IMAGEPATCH_ADDR_INIT;
      addrs[p].dim_x = width;
      addrs[p].dim_y = height;
      addrs[p].stride_x = static_cast<vx_int32>(plane.element_bytes / plane.pixels_per_element);
      addrs[p].stride_y = static_cast<vx_int32>(width / plane.step_x * plane.element_bytes + 8);  // padded
      planes[p].assign(size_t(addrs[p].stride_y) * (height / plane.step_y), 0);
      for (size_t i = 0; i < planes[p].size(); ++i) planes[p][i] = static_cast<uint8_t>(i * 5 + p);
      ptrs[p] = planes[p].data();
    }
    vx_image image = vxCreateImageFromHandle(context_, f.format, addrs, ptrs, VX_MEMORY_TYPE_HOST);
    ASSERT_EQ(VX_SUCCESS, status_of(image));
    for (uint32_t p = 0; p < f.planes; ++p) {
      const plane_layout& plane = f.plane[p];
      vx_map_id id = 0;
      vx_imagepatch_addressing_t mapped = VX_IMAGEPATCH_ADDR_INIT;
      void* base = nullptr;
      ASSERT_EQ(VX_SUCCESS,
                vxMapImagePatch(image, &whole, p, &id, &mapped, &base, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
      EXPECT_EQ(ptrs[p], base);
      EXPECT_EQ(addrs[p].stride_y, mapped.stride_y);
      EXPECT_EQ(addrs[p].stride_x, mapped.stride_x);
      std::vector<uint8_t> read = read_plane(image, plane, p, whole);
      size_t row = width / plane.step_x * plane.element_bytes;
      for (uint32_t r = 0; r < height / plane.step_y; ++r)
        for (size_t b = 0; b < row; ++b) ASSERT_EQ(planes[p][r * addrs[p].stride_y + b], read[r * row + b]);
      EXPECT_EQ(VX_SUCCESS, vxUnmapImagePatch(image, id));
    }
    vxReleaseImage(&image);
  }
}

TEST_F(ImageTest, SwapReturnsTheUpToDateMemoryAndRoisFollow) {
  vx_imagepatch_addressing_t addr = VX_IMAGEPATCH_ADDR_INIT;
  addr.dim_x = 8;
  addr.dim_y = 4;
  addr.stride_x = 1;
  addr.stride_y = 12;
  std::vector<uint8_t> first(12 * 4, 1), second(12 * 4, 2), third(12 * 4, 3);
  void* ptrs[] = {first.data()};
  vx_image image = vxCreateImageFromHandle(context_, VX_DF_IMAGE_U8, &addr, ptrs, VX_MEMORY_TYPE_HOST);
  ASSERT_EQ(VX_SUCCESS, status_of(image));
  vx_rectangle_t part{2, 1, 6, 3};
  vx_image roi = vxCreateImageFromROI(image, &part);
  ASSERT_EQ(VX_SUCCESS, status_of(roi));
  // A write through the image lands in the first buffer, which the swap returns.
  vx_pixel_value_t nine{};
  nine.U8 = 9;
  ASSERT_EQ(VX_SUCCESS, vxSetImagePixelValues(image, &nine));
  void* new_ptrs[] = {second.data()};
  void* prev_ptrs[] = {nullptr};
  ASSERT_EQ(VX_SUCCESS, vxSwapImageHandle(image, new_ptrs, prev_ptrs, 1));
  EXPECT_EQ(first.data(), prev_ptrs[0]);
  for (uint32_t y = 0; y < 4; ++y)
    for (uint32_t x = 0; x < 8; ++x) EXPECT_EQ(9, first[y * 12 + x]);
  // The ROI now views the second buffer.
  std::vector<uint8_t> seen = read_plane(roi, formats[0].plane[0], 0, vx_rectangle_t{0, 0, 4, 2});
  for (uint8_t v : seen) EXPECT_EQ(2, v);
  // Swapping while the ROI is mapped: "The image was already being accessed."
  vx_map_id id = 0;
  vx_imagepatch_addressing_t mapped = VX_IMAGEPATCH_ADDR_INIT;
  void* base = nullptr;
  vx_rectangle_t roi_all{0, 0, 4, 2};
  ASSERT_EQ(VX_SUCCESS, vxMapImagePatch(roi, &roi_all, 0, &id, &mapped, &base, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
  EXPECT_EQ(second.data() + 1 * 12 + 2, base);
  new_ptrs[0] = third.data();
  EXPECT_EQ(VX_FAILURE, vxSwapImageHandle(image, new_ptrs, prev_ptrs, 1));
  EXPECT_EQ(VX_SUCCESS, vxUnmapImagePatch(roi, id));
  // No new handle: the application takes its memory back; the image keeps working.
  ASSERT_EQ(VX_SUCCESS, vxSwapImageHandle(image, nullptr, prev_ptrs, 1));
  EXPECT_EQ(second.data(), prev_ptrs[0]);
  std::vector<uint8_t> read = read_plane(image, formats[0].plane[0], 0, vx_rectangle_t{0, 0, 8, 4});
  EXPECT_EQ(32u, read.size());
  // The next swap has no application memory to hand back, and the new one
  // keeps the layout vxCreateImageFromHandle was given.
  prev_ptrs[0] = first.data();
  ASSERT_EQ(VX_SUCCESS, vxSwapImageHandle(image, new_ptrs, prev_ptrs, 1));
  EXPECT_EQ(nullptr, prev_ptrs[0]);
  ASSERT_EQ(VX_SUCCESS, vxMapImagePatch(image, &part, 0, &id, &mapped, &base, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
  EXPECT_EQ(third.data() + 1 * 12 + 2, base);
  EXPECT_EQ(12, mapped.stride_y);
  EXPECT_EQ(VX_SUCCESS, vxUnmapImagePatch(image, id));
  // Back to the application before release.
  EXPECT_EQ(VX_SUCCESS, vxSwapImageHandle(image, nullptr, nullptr, 1));
  vxReleaseImage(&roi);
  vxReleaseImage(&image);
}

TEST_F(ImageTest, SwapRefusesBadArguments) {
  std::vector<uint8_t> luma(16 * 12), chroma(16 * 6), spare(16 * 12);
  vx_imagepatch_addressing_t addrs[2] = {VX_IMAGEPATCH_ADDR_INIT, VX_IMAGEPATCH_ADDR_INIT};
  addrs[0].dim_x = addrs[1].dim_x = 16;
  addrs[0].dim_y = addrs[1].dim_y = 12;
  addrs[0].stride_x = 1;
  addrs[0].stride_y = 16;
  addrs[1].stride_x = 2;
  addrs[1].stride_y = 16;
  void* ptrs[] = {luma.data(), chroma.data()};
  vx_image image = vxCreateImageFromHandle(context_, VX_DF_IMAGE_NV12, addrs, ptrs, VX_MEMORY_TYPE_HOST);
  ASSERT_EQ(VX_SUCCESS, status_of(image));
  void* prev[2] = {};
  void* half[2] = {spare.data(), nullptr};
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxSwapImageHandle(image, half, prev, 2));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxSwapImageHandle(image, ptrs, prev, 1));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxSwapImageHandle(image, ptrs, prev, 3));
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE, vxSwapImageHandle(nullptr, ptrs, prev, 2));
  // Only an image created from a handle has one.
  vx_image plain = make(VX_DF_IMAGE_U8);
  void* one[] = {spare.data()};
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxSwapImageHandle(plain, one, prev, 1));
  vx_rectangle_t part{0, 0, 8, 8};
  vx_image roi = vxCreateImageFromROI(image, &part);
  ASSERT_EQ(VX_SUCCESS, status_of(roi));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxSwapImageHandle(roi, ptrs, prev, 2));
  vxReleaseImage(&roi);
  vxReleaseImage(&plain);
  EXPECT_EQ(VX_SUCCESS, vxSwapImageHandle(image, nullptr, nullptr, 2));
  vxReleaseImage(&image);
}

TEST_F(ImageTest, HandleCreationRefusesBadLayouts) {
  std::vector<uint8_t> memory(64 * 64);
  vx_imagepatch_addressing_t addr = VX_IMAGEPATCH_ADDR_INIT;
  addr.dim_x = 16;
  addr.dim_y = 8;
  addr.stride_x = 1;
  addr.stride_y = 16;
  void* ptrs[] = {memory.data(), memory.data() + 1024, memory.data() + 2048};
  auto create = [&](vx_df_image format, const vx_imagepatch_addressing_t* a, void* const* p, vx_enum type) {
    vx_image image = vxCreateImageFromHandle(context_, format, a, p, type);
    vx_status status = status_of(image);
    if (status == VX_SUCCESS) vxReleaseImage(&image);
    return status;
  };
  EXPECT_EQ(VX_SUCCESS, create(VX_DF_IMAGE_U8, &addr, ptrs, VX_MEMORY_TYPE_HOST));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, create(VX_DF_IMAGE_U8, &addr, ptrs, VX_MEMORY_TYPE_NONE));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, create(VX_DF_IMAGE_U8, nullptr, ptrs, VX_MEMORY_TYPE_HOST));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, create(VX_DF_IMAGE_U8, &addr, nullptr, VX_MEMORY_TYPE_HOST));
  void* null_plane[] = {nullptr};
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, create(VX_DF_IMAGE_U8, &addr, null_plane, VX_MEMORY_TYPE_HOST));
  EXPECT_EQ(VX_ERROR_INVALID_FORMAT, create(VX_DF_IMAGE_VIRT, &addr, ptrs, VX_MEMORY_TYPE_HOST));
  // "stride_x should be equal to the number of bytes represented by the image data format."
  vx_imagepatch_addressing_t wide = addr;
  wide.stride_x = 2;
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, create(VX_DF_IMAGE_U8, &wide, ptrs, VX_MEMORY_TYPE_HOST));
  // "... and stride_y >= stride_x * dim_x."
  vx_imagepatch_addressing_t short_rows = addr;
  short_rows.stride_y = 15;
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, create(VX_DF_IMAGE_U8, &short_rows, ptrs, VX_MEMORY_TYPE_HOST));
  vx_imagepatch_addressing_t negative = addr;
  negative.stride_y = -16;
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, create(VX_DF_IMAGE_U8, &negative, ptrs, VX_MEMORY_TYPE_HOST));
  vx_imagepatch_addressing_t empty = addr;
  empty.dim_x = 0;
  EXPECT_EQ(VX_ERROR_INVALID_DIMENSION, create(VX_DF_IMAGE_U8, &empty, ptrs, VX_MEMORY_TYPE_HOST));
  // NV12: an odd width, and a chroma plane with too short rows.
  vx_imagepatch_addressing_t nv12[2] = {addr, addr};
  nv12[1].stride_x = 2;
  EXPECT_EQ(VX_SUCCESS, create(VX_DF_IMAGE_NV12, nv12, ptrs, VX_MEMORY_TYPE_HOST));
  nv12[0].dim_x = 15;
  EXPECT_EQ(VX_ERROR_INVALID_DIMENSION, create(VX_DF_IMAGE_NV12, nv12, ptrs, VX_MEMORY_TYPE_HOST));
  nv12[0].dim_x = 16;
  nv12[1].stride_y = 14;
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, create(VX_DF_IMAGE_NV12, nv12, ptrs, VX_MEMORY_TYPE_HOST));
  nv12[1].stride_y = 16;
  nv12[1].stride_x = 1;  // a UV element is two bytes
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, create(VX_DF_IMAGE_NV12, nv12, ptrs, VX_MEMORY_TYPE_HOST));
  // UYVY's stride_x is per pixel: 2 bytes (a 4-byte pair holds two).
  vx_imagepatch_addressing_t uyvy = addr;
  uyvy.stride_x = 2;
  uyvy.stride_y = 32;
  EXPECT_EQ(VX_SUCCESS, create(VX_DF_IMAGE_UYVY, &uyvy, ptrs, VX_MEMORY_TYPE_HOST));
  uyvy.stride_x = 4;
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, create(VX_DF_IMAGE_UYVY, &uyvy, ptrs, VX_MEMORY_TYPE_HOST));
  EXPECT_NE(VX_SUCCESS, status_of(vxCreateImageFromHandle(nullptr, VX_DF_IMAGE_U8, &addr, ptrs, VX_MEMORY_TYPE_HOST)));
}

// ---- ROIs and channels ----

TEST_F(ImageTest, RoiWritesAreSeenByTheParentAndBack) {
  for (vx_df_image format : {VX_DF_IMAGE_U8, VX_DF_IMAGE_RGB, VX_DF_IMAGE_NV12}) {
    const format_info& f = *std::find_if(std::begin(formats), std::end(formats),
                                         [&](const format_info& i) { return i.format == format; });
    SCOPED_TRACE(f.name);
    vx_image parent = make(format);
    vx_pixel_value_t zero{};
    ASSERT_EQ(VX_SUCCESS, vxSetImagePixelValues(parent, &zero));
    vx_rectangle_t rect{4, 2, 12, 10};
    vx_image roi = vxCreateImageFromROI(parent, &rect);
    ASSERT_EQ(VX_SUCCESS, status_of(roi));
    vx_uint32 w = 0, h = 0;
    vx_df_image roi_format = 0;
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(roi, VX_IMAGE_WIDTH, &w, sizeof w));
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(roi, VX_IMAGE_HEIGHT, &h, sizeof h));
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(roi, VX_IMAGE_FORMAT, &roi_format, sizeof roi_format));
    EXPECT_EQ(8u, w);
    EXPECT_EQ(8u, h);
    EXPECT_EQ(format, roi_format);
    for (uint32_t p = 0; p < f.planes; ++p) {
      const plane_layout& plane = f.plane[p];
      // Write the whole ROI through a map of the ROI.
      vx_rectangle_t roi_all{0, 0, 8, 8};
      vx_map_id id = 0;
      vx_imagepatch_addressing_t addr = VX_IMAGEPATCH_ADDR_INIT;
      void* base = nullptr;
      ASSERT_EQ(VX_SUCCESS,
                vxMapImagePatch(roi, &roi_all, p, &id, &addr, &base, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST, 0));
      for (uint32_t y = 0; y < 8; y += plane.step_y)
        for (uint32_t x = 0; x < 8; x += plane.step_x) {
          auto* at = static_cast<uint8_t*>(vxFormatImagePatchAddress2d(base, x, y, &addr));
          for (uint32_t k = 0; k < plane.element_bytes; ++k) at[k] = pattern(3, p, x + 4, y + 2, k);
        }
      ASSERT_EQ(VX_SUCCESS, vxUnmapImagePatch(roi, id));
      // The parent shows it inside the rectangle and nothing outside.
      std::vector<uint8_t> read = read_plane(parent, plane, p, whole);
      size_t row = width / plane.step_x * plane.element_bytes;
      for (uint32_t y = 0; y < height; y += plane.step_y)
        for (uint32_t x = 0; x < width; x += plane.step_x) {
          bool inside = x >= 4 && x < 12 && y >= 2 && y < 10;
          for (uint32_t k = 0; k < plane.element_bytes; ++k)
            ASSERT_EQ(inside ? pattern(3, p, x, y, k) : element_of(format, p, zero)[k],
                      read[y / plane.step_y * row + x / plane.step_x * plane.element_bytes + k])
                << "x " << x << " y " << y;
        }
    }
    // The parent's writes are seen through the ROI.
    vx_pixel_value_t value{};
    value.RGB[0] = value.YUV[0] = 77;
    value.YUV[1] = 78;
    value.YUV[2] = 79;
    ASSERT_EQ(VX_SUCCESS, vxSetImagePixelValues(parent, &value));
    for (uint32_t p = 0; p < f.planes; ++p) {
      std::vector<uint8_t> read = read_plane(roi, f.plane[p], p, vx_rectangle_t{0, 0, 8, 8});
      std::vector<uint8_t> element = element_of(format, p, value);
      for (size_t i = 0; i < read.size(); ++i) ASSERT_EQ(element[i % element.size()], read[i]);
    }
    vxReleaseImage(&roi);
    vxReleaseImage(&parent);
  }
}

TEST_F(ImageTest, RoiOfRoiAddsOffsetsAndOutlivesItsParent) {
  vx_image parent = make(VX_DF_IMAGE_U8);
  std::vector<uint8_t> data(width * height);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i);
  vx_imagepatch_addressing_t user = packed_user_layout(formats[0].plane[0], width, height);
  ASSERT_EQ(VX_SUCCESS, vxCopyImagePatch(parent, &whole, 0, &user, data.data(), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
  vx_rectangle_t outer{2, 1, 14, 11};
  vx_image roi = vxCreateImageFromROI(parent, &outer);
  vx_rectangle_t inner{3, 2, 7, 5};
  vx_image inner_roi = vxCreateImageFromROI(roi, &inner);
  ASSERT_EQ(VX_SUCCESS, status_of(inner_roi));
  // The parent goes first: its ROIs keep its pixels alive.
  EXPECT_EQ(VX_SUCCESS, vxReleaseImage(&parent));
  EXPECT_EQ(VX_SUCCESS, vxReleaseImage(&roi));
  std::vector<uint8_t> read = read_plane(inner_roi, formats[0].plane[0], 0, vx_rectangle_t{0, 0, 4, 3});
  for (uint32_t y = 0; y < 3; ++y)
    for (uint32_t x = 0; x < 4; ++x) EXPECT_EQ(data[(y + 1 + 2) * width + (x + 2 + 3)], read[y * 4 + x]);
  vxReleaseImage(&inner_roi);
}

TEST_F(ImageTest, RoiRefusesBadRectangles) {
  vx_image image = make(VX_DF_IMAGE_NV12);
  const vx_rectangle_t outside{0, 0, width + 2, height};
  const vx_rectangle_t empty{4, 4, 4, 8};
  const vx_rectangle_t odd_start{1, 0, 5, 4};
  const vx_rectangle_t odd_end{0, 0, 4, 5};
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, status_of(vxCreateImageFromROI(image, nullptr)));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, status_of(vxCreateImageFromROI(image, &outside)));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, status_of(vxCreateImageFromROI(image, &empty)));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, status_of(vxCreateImageFromROI(image, &odd_start)));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, status_of(vxCreateImageFromROI(image, &odd_end)));
  EXPECT_NE(VX_SUCCESS, status_of(vxCreateImageFromROI(nullptr, &whole)));
  vx_graph graph = vxCreateGraph(context_);
  vx_image virt = vxCreateVirtualImage(graph, width, height, VX_DF_IMAGE_U8);
  EXPECT_EQ(VX_ERROR_NOT_SUPPORTED, status_of(vxCreateImageFromROI(virt, &whole)));
  vxReleaseImage(&virt);
  vxReleaseGraph(&graph);
  vxReleaseImage(&image);
}

TEST_F(ImageTest, RoiValidRegionIsTheParentsSeenFromTheRoi) {
  vx_image image = make(VX_DF_IMAGE_U8);
  vx_rectangle_t valid{1, 1, 10, 9};
  ASSERT_EQ(VX_SUCCESS, vxSetImageValidRectangle(image, &valid));
  vx_rectangle_t rect{4, 2, 12, 10};
  vx_image roi = vxCreateImageFromROI(image, &rect);
  vx_rectangle_t seen{};
  EXPECT_EQ(VX_SUCCESS, vxGetValidRegionImage(roi, &seen));
  EXPECT_EQ(0u, seen.start_x);
  EXPECT_EQ(0u, seen.start_y);
  EXPECT_EQ(6u, seen.end_x);
  EXPECT_EQ(7u, seen.end_y);
  vxReleaseImage(&roi);
  vxReleaseImage(&image);
}

TEST_F(ImageTest, TheYChannelViewsTheLumaPlane) {
  for (vx_df_image format : {VX_DF_IMAGE_NV12, VX_DF_IMAGE_NV21, VX_DF_IMAGE_IYUV, VX_DF_IMAGE_YUV4}) {
    vx_image image = make(format);
    vx_pixel_value_t value{};
    value.YUV[0] = 50;
    value.YUV[1] = 60;
    value.YUV[2] = 70;
    ASSERT_EQ(VX_SUCCESS, vxSetImagePixelValues(image, &value));
    vx_image y = vxCreateImageFromChannel(image, VX_CHANNEL_Y);
    ASSERT_EQ(VX_SUCCESS, status_of(y));
    vx_df_image y_format = 0;
    vx_uint32 w = 0;
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(y, VX_IMAGE_FORMAT, &y_format, sizeof y_format));
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(y, VX_IMAGE_WIDTH, &w, sizeof w));
    EXPECT_EQ(VX_DF_IMAGE_U8, y_format);
    EXPECT_EQ(width, w);
    for (uint8_t v : read_plane(y, formats[0].plane[0], 0, whole)) ASSERT_EQ(50, v);
    // Writes through the channel reach the parent's luma, not its chroma.
    vx_pixel_value_t luma{};
    luma.U8 = 90;
    ASSERT_EQ(VX_SUCCESS, vxSetImagePixelValues(y, &luma));
    for (uint8_t v : read_plane(image, formats[0].plane[0], 0, whole)) ASSERT_EQ(90, v);
    const format_info& f = *std::find_if(std::begin(formats), std::end(formats),
                                         [&](const format_info& i) { return i.format == format; });
    std::vector<uint8_t> chroma = read_plane(image, f.plane[1], 1, whole);
    EXPECT_EQ(element_of(format, 1, value)[0], chroma[0]);
    vxReleaseImage(&y);
    vxReleaseImage(&image);
  }
}

TEST_F(ImageTest, ChannelsRefuseWhatIsNoWholePlane) {
  vx_image nv12 = make(VX_DF_IMAGE_NV12);
  vx_image iyuv = make(VX_DF_IMAGE_IYUV);
  vx_image rgb = make(VX_DF_IMAGE_RGB);
  // "Other cases are not supported": U of NV12 shares its plane with V.
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, status_of(vxCreateImageFromChannel(nv12, VX_CHANNEL_U)));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, status_of(vxCreateImageFromChannel(rgb, VX_CHANNEL_R)));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, status_of(vxCreateImageFromChannel(rgb, VX_CHANNEL_Y)));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, status_of(vxCreateImageFromChannel(iyuv, VX_CHANNEL_0)));
  // The U and V planes of IYUV and YUV4 are not viewable yet.
  EXPECT_EQ(VX_ERROR_NOT_SUPPORTED, status_of(vxCreateImageFromChannel(iyuv, VX_CHANNEL_U)));
  EXPECT_EQ(VX_ERROR_NOT_SUPPORTED, status_of(vxCreateImageFromChannel(iyuv, VX_CHANNEL_V)));
  EXPECT_NE(VX_SUCCESS, status_of(vxCreateImageFromChannel(nullptr, VX_CHANNEL_Y)));
  vxReleaseImage(&rgb);
  vxReleaseImage(&iyuv);
  vxReleaseImage(&nv12);
}

// ---- Uniform images and pixel values ----

vx_pixel_value_t value_for(vx_df_image format) {
  vx_pixel_value_t value{};
  switch (format) {
    case VX_DF_IMAGE_U8: value.U8 = 0xa5; break;
    case VX_DF_IMAGE_U16: value.U16 = 0xbeef; break;
    case VX_DF_IMAGE_S16: value.S16 = -1234; break;
    case VX_DF_IMAGE_U32: value.U32 = 0xdeadbeef; break;
    case VX_DF_IMAGE_S32: value.S32 = -123456789; break;
    case VX_DF_IMAGE_RGB: value.RGB[0] = 10, value.RGB[1] = 20, value.RGB[2] = 30; break;
    case VX_DF_IMAGE_RGBX: value.RGBX[0] = 10, value.RGBX[1] = 20, value.RGBX[2] = 30, value.RGBX[3] = 40; break;
    default: value.YUV[0] = 100, value.YUV[1] = 110, value.YUV[2] = 120; break;
  }
  return value;
}

TEST_F(ImageTest, UniformImagesHoldTheirValueInEveryPlane) {
  for (const format_info& f : formats) {
    SCOPED_TRACE(f.name);
    vx_pixel_value_t value = value_for(f.format);
    vx_image image = vxCreateUniformImage(context_, width, height, f.format, &value);
    ASSERT_EQ(VX_SUCCESS, status_of(image));
    vx_bool uniform = vx_false_e;
    vx_pixel_value_t stored{};
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_IS_UNIFORM, &uniform, sizeof uniform));
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(image, VX_IMAGE_UNIFORM_VALUE, &stored, sizeof stored));
    EXPECT_EQ(vx_true_e, uniform);
    EXPECT_EQ(0, std::memcmp(&value, &stored, sizeof value));
    for (uint32_t p = 0; p < f.planes; ++p) {
      std::vector<uint8_t> element = element_of(f.format, p, value);
      ASSERT_EQ(f.plane[p].element_bytes, element.size());
      std::vector<uint8_t> read = read_plane(image, f.plane[p], p, whole);
      for (size_t i = 0; i < read.size(); ++i) ASSERT_EQ(element[i % element.size()], read[i]) << "byte " << i;
    }
    // "The uniform image created is read-only."
    vx_map_id id = 0;
    vx_imagepatch_addressing_t addr = VX_IMAGEPATCH_ADDR_INIT;
    void* base = nullptr;
    EXPECT_EQ(VX_ERROR_NOT_SUPPORTED,
              vxMapImagePatch(image, &whole, 0, &id, &addr, &base, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST, 0));
    EXPECT_EQ(VX_ERROR_NOT_SUPPORTED,
              vxMapImagePatch(image, &whole, 0, &id, &addr, &base, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST, 0));
    EXPECT_EQ(VX_SUCCESS,
              vxMapImagePatch(image, &whole, 0, &id, &addr, &base, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
    EXPECT_EQ(VX_SUCCESS, vxUnmapImagePatch(image, id));
    vx_imagepatch_addressing_t user = packed_user_layout(f.plane[0], width, height);
    std::vector<uint8_t> data(size_t(user.stride_y) * height);
    EXPECT_EQ(VX_ERROR_NOT_SUPPORTED,
              vxCopyImagePatch(image, &whole, 0, &user, data.data(), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    EXPECT_EQ(VX_ERROR_INVALID_REFERENCE, vxSetImagePixelValues(image, &value));
    // An ROI of it is uniform too.
    vx_rectangle_t rect{2, 2, 6, 6};
    vx_image roi = vxCreateImageFromROI(image, &rect);
    ASSERT_EQ(VX_SUCCESS, status_of(roi));
    EXPECT_EQ(VX_SUCCESS, vxQueryImage(roi, VX_IMAGE_IS_UNIFORM, &uniform, sizeof uniform));
    EXPECT_EQ(vx_true_e, uniform);
    vxReleaseImage(&roi);
    vxReleaseImage(&image);
  }
}

TEST_F(ImageTest, UniformCreationRefusesBadArguments) {
  vx_pixel_value_t value{};
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS,
            status_of(vxCreateUniformImage(context_, width, height, VX_DF_IMAGE_U8, nullptr)));
  EXPECT_EQ(VX_ERROR_INVALID_DIMENSION, status_of(vxCreateUniformImage(context_, 0, height, VX_DF_IMAGE_U8, &value)));
  EXPECT_EQ(VX_ERROR_INVALID_DIMENSION, status_of(vxCreateUniformImage(context_, 15, 8, VX_DF_IMAGE_IYUV, &value)));
  EXPECT_EQ(VX_ERROR_INVALID_FORMAT, status_of(vxCreateUniformImage(context_, 8, 8, VX_DF_IMAGE_VIRT, &value)));
  EXPECT_NE(VX_SUCCESS, status_of(vxCreateUniformImage(nullptr, 8, 8, VX_DF_IMAGE_U8, &value)));
}

TEST_F(ImageTest, PixelValuesFillEveryFormat) {
  for (const format_info& f : formats) {
    SCOPED_TRACE(f.name);
    vx_image image = make(f.format);
    vx_pixel_value_t value = value_for(f.format);
    ASSERT_EQ(VX_SUCCESS, vxSetImagePixelValues(image, &value));
    for (uint32_t p = 0; p < f.planes; ++p) {
      std::vector<uint8_t> element = element_of(f.format, p, value);
      std::vector<uint8_t> read = read_plane(image, f.plane[p], p, whole);
      for (size_t i = 0; i < read.size(); ++i) ASSERT_EQ(element[i % element.size()], read[i]) << "byte " << i;
    }
    // "The valid region of the image is unaffected by this function."
    vx_rectangle_t valid{1, 1, 2, 2};
    ASSERT_EQ(VX_SUCCESS, vxSetImageValidRectangle(image, &valid));
    ASSERT_EQ(VX_SUCCESS, vxSetImagePixelValues(image, &value));
    vx_rectangle_t after{};
    EXPECT_EQ(VX_SUCCESS, vxGetValidRegionImage(image, &after));
    EXPECT_EQ(0, std::memcmp(&valid, &after, sizeof valid));
    vxReleaseImage(&image);
  }
}

TEST_F(ImageTest, PixelValuesOfAnRoiStayInsideIt) {
  vx_image image = make(VX_DF_IMAGE_S16);
  vx_pixel_value_t zero{}, value{};
  value.S16 = -7;
  ASSERT_EQ(VX_SUCCESS, vxSetImagePixelValues(image, &zero));
  vx_rectangle_t rect{3, 3, 9, 7};
  vx_image roi = vxCreateImageFromROI(image, &rect);
  ASSERT_EQ(VX_SUCCESS, vxSetImagePixelValues(roi, &value));
  std::vector<uint8_t> read = read_plane(image, formats[2].plane[0], 0, whole);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      int16_t v;
      std::memcpy(&v, &read[(y * width + x) * 2], 2);
      bool inside = x >= 3 && x < 9 && y >= 3 && y < 7;
      ASSERT_EQ(inside ? -7 : 0, v) << "x " << x << " y " << y;
    }
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxSetImagePixelValues(image, nullptr));
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE, vxSetImagePixelValues(nullptr, &value));
  vxReleaseImage(&roi);
  vxReleaseImage(&image);
}

// ---- Valid regions ----

TEST_F(ImageTest, ValidRectangleIsSetReadAndReset) {
  vx_image image = make(VX_DF_IMAGE_U8);
  vx_rectangle_t rect{2, 3, 10, 9};
  ASSERT_EQ(VX_SUCCESS, vxSetImageValidRectangle(image, &rect));
  vx_rectangle_t read{};
  ASSERT_EQ(VX_SUCCESS, vxGetValidRegionImage(image, &read));
  EXPECT_EQ(0, std::memcmp(&rect, &read, sizeof rect));
  // An empty valid region is a proper one: nothing is valid.
  vx_rectangle_t none{4, 4, 4, 4};
  EXPECT_EQ(VX_SUCCESS, vxSetImageValidRectangle(image, &none));
  // "A NULL indicates that the valid region is the entire image."
  ASSERT_EQ(VX_SUCCESS, vxSetImageValidRectangle(image, nullptr));
  ASSERT_EQ(VX_SUCCESS, vxGetValidRegionImage(image, &read));
  EXPECT_EQ(0, std::memcmp(&whole, &read, sizeof whole));
  vx_rectangle_t outside{0, 0, width + 1, height};
  vx_rectangle_t reversed{5, 0, 4, height};
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxSetImageValidRectangle(image, &outside));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxSetImageValidRectangle(image, &reversed));
  EXPECT_EQ(VX_ERROR_INVALID_PARAMETERS, vxGetValidRegionImage(image, nullptr));
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE, vxGetValidRegionImage(nullptr, &read));
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE, vxSetImageValidRectangle(nullptr, &rect));
  vxReleaseImage(&image);
}

// ---- Virtual images ----

TEST_F(ImageTest, VirtualImagesLeaveSizeAndFormatOpenAndCannotBeAccessed) {
  vx_graph graph = vxCreateGraph(context_);
  ASSERT_EQ(VX_SUCCESS, status_of(graph));
  vx_image open = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
  ASSERT_EQ(VX_SUCCESS, status_of(open));
  vx_uint32 w = 1;
  vx_df_image format = 0;
  vx_size planes = 1;
  EXPECT_EQ(VX_SUCCESS, vxQueryImage(open, VX_IMAGE_WIDTH, &w, sizeof w));
  EXPECT_EQ(VX_SUCCESS, vxQueryImage(open, VX_IMAGE_FORMAT, &format, sizeof format));
  EXPECT_EQ(VX_SUCCESS, vxQueryImage(open, VX_IMAGE_PLANES, &planes, sizeof planes));
  EXPECT_EQ(0u, w);
  EXPECT_EQ(VX_DF_IMAGE_VIRT, format);
  EXPECT_EQ(0u, planes);
  vx_image sized = vxCreateVirtualImage(graph, width, height, VX_DF_IMAGE_U8);
  ASSERT_EQ(VX_SUCCESS, status_of(sized));
  // "Passing this reference to vxMapImagePatch will return an error."
  vx_map_id id = 0;
  vx_imagepatch_addressing_t addr = VX_IMAGEPATCH_ADDR_INIT;
  void* base = nullptr;
  EXPECT_EQ(VX_ERROR_OPTIMIZED_AWAY,
            vxMapImagePatch(sized, &whole, 0, &id, &addr, &base, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
  std::vector<uint8_t> data(width * height);
  vx_imagepatch_addressing_t user = packed_user_layout(formats[0].plane[0], width, height);
  EXPECT_EQ(VX_ERROR_OPTIMIZED_AWAY,
            vxCopyImagePatch(sized, &whole, 0, &user, data.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
  vx_pixel_value_t value{};
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE, vxSetImagePixelValues(sized, &value));
  EXPECT_EQ(VX_ERROR_INVALID_DIMENSION, status_of(vxCreateVirtualImage(graph, 15, 8, VX_DF_IMAGE_NV12)));
  EXPECT_EQ(VX_ERROR_INVALID_FORMAT, status_of(vxCreateVirtualImage(graph, 8, 8, VX_DF_IMAGE('B', 'A', 'D', '!'))));
  EXPECT_EQ(VX_ERROR_INVALID_REFERENCE,
            status_of(vxCreateVirtualImage(reinterpret_cast<vx_graph>(context_), 8, 8, VX_DF_IMAGE_U8)));
  vxReleaseImage(&sized);
  vxReleaseImage(&open);
  vxReleaseGraph(&graph);
}

}  // namespace
