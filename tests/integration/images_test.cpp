// Images and samplers through Ferry: creation with every host-pointer flag and pitch, the
// image transfers (read, write, copy, fill, map, to and from buffers) checked against a
// host-side model, kernels that sample and write images, info queries, and the error codes
// of bad calls compared with the native implementation.
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "cl_helpers.hpp"

namespace ferry::test {

suite_config this_suite() {
  suite_config config;
  config.loader = loader_mode::ferry_and_native;
  return config;
}

namespace {

using sampler_handle = std::unique_ptr<std::remove_pointer_t<cl_sampler>, decltype(&clReleaseSampler)>;

constexpr const char* image_kernels = R"CLC(
__kernel void sample_2d(__read_only image2d_t src, sampler_t smp, __global float4* out, int width) {
  int x = get_global_id(0), y = get_global_id(1);
  out[y * width + x] = read_imagef(src, smp, (int2)(x, y));
}
__kernel void write_2d(__write_only image2d_t dst, float scale) {
  int x = get_global_id(0), y = get_global_id(1);
  write_imagef(dst, (int2)(x, y), (float4)(x * scale, y * scale, x + y, 1.0f));
}
__kernel void sample_3d(__read_only image3d_t src, __global uint4* out, int width, int height) {
  const sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
  int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  out[(z * height + y) * width + x] = read_imageui(src, smp, (int4)(x, y, z, 0));
}
)CLC";

// A deterministic byte image of `n` bytes.
std::vector<unsigned char> pixels(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 37u + seed * 11u + (i >> 7)) & 0xff);
  return v;
}

// Copies `region` (x in elements) of an image held in a host layout (element size, row and
// slice pitch) into another layout: the host-side meaning of every image transfer.
struct layout {
  size_t element;
  size_t row_pitch;
  size_t slice_pitch;
  size_t at(size_t x, size_t y, size_t z) const { return z * slice_pitch + y * row_pitch + x * element; }
};
void model_copy(const unsigned char* src, const layout& s, const std::array<size_t, 3>& so, unsigned char* dst,
                const layout& d, const std::array<size_t, 3>& dor, const std::array<size_t, 3>& region) {
  for (size_t z = 0; z < region[2]; ++z)
    for (size_t y = 0; y < region[1]; ++y)
      std::memcpy(dst + d.at(dor[0], dor[1] + y, dor[2] + z), src + s.at(so[0], so[1] + y, so[2] + z),
                  region[0] * s.element);
}

}  // namespace

class images : public ferry_and_native_test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ferry_and_native_test::SetUp());
    if (!device_value<cl_bool>(device_, CL_DEVICE_IMAGE_SUPPORT)) GTEST_SKIP() << "the server device has no images";
  }

  mem_handle image(cl_context context, cl_mem_flags flags, cl_image_format format, cl_image_desc desc,
                   void* host = nullptr, cl_int expected = CL_SUCCESS) {
    cl_int error = -9999;
    mem_handle m(clCreateImage(context, flags, &format, &desc, host, &error));
    EXPECT_CL(expected, error);
    return m;
  }
  mem_handle image(cl_mem_flags flags, cl_image_format format, cl_image_desc desc, void* host = nullptr) {
    return image(context_, flags, format, desc, host);
  }
  static cl_image_desc desc(cl_mem_object_type type, size_t w, size_t h = 0, size_t d = 0, size_t array = 0,
                            size_t row_pitch = 0, size_t slice_pitch = 0) {
    cl_image_desc out{};
    out.image_type = type;
    out.image_width = w;
    out.image_height = h;
    out.image_depth = d;
    out.image_array_size = array;
    out.image_row_pitch = row_pitch;
    out.image_slice_pitch = slice_pitch;
    return out;
  }
  template <class T>
  T image_value(cl_mem m, cl_image_info param) {
    return info_value<T>(FERRY_IT_INFO_QUERY(clGetImageInfo, m, param));
  }
  std::vector<unsigned char> read(cl_mem m, std::array<size_t, 3> origin, std::array<size_t, 3> region,
                                  size_t element, size_t row_pitch = 0, size_t slice_pitch = 0) {
    size_t row = row_pitch ? row_pitch : region[0] * element;
    size_t slice = slice_pitch ? slice_pitch : row * region[1];
    std::vector<unsigned char> out(slice * region[2], 0);
    EXPECT_CL_OK(clEnqueueReadImage(queue_, m, CL_TRUE, origin.data(), region.data(), row_pitch, slice_pitch,
                                    out.data(), 0, nullptr, nullptr));
    return out;
  }
};

TEST_F(images, supported_formats_match_the_native_device) {
  for (cl_mem_object_type type : {CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE3D, CL_MEM_OBJECT_IMAGE1D_ARRAY}) {
    for (cl_mem_flags flags : {cl_mem_flags{CL_MEM_READ_ONLY}, cl_mem_flags{CL_MEM_READ_WRITE}}) {
      auto formats = [&](cl_context c) {
        cl_uint n = 0;
        EXPECT_CL_OK(clGetSupportedImageFormats(c, flags, type, 0, nullptr, &n));
        std::vector<cl_image_format> out(n);
        if (n) {
          EXPECT_CL_OK(clGetSupportedImageFormats(c, flags, type, n, out.data(), nullptr));
        }
        std::vector<std::pair<cl_uint, cl_uint>> pairs;
        for (auto& f : out) pairs.emplace_back(f.image_channel_order, f.image_channel_data_type);
        return pairs;
      };
      auto ferry = formats(context_);
      EXPECT_FALSE(ferry.empty());
      EXPECT_EQ(ferry, formats(native_.context)) << "image type " << type << " flags " << flags;
    }
  }
  // Fewer entries than there are formats: the first ones, and the full count.
  cl_image_format one{};
  cl_uint n = 0;
  EXPECT_CL_OK(clGetSupportedImageFormats(context_, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 1, &one, &n));
  EXPECT_GT(n, 1u);
  EXPECT_NE(one.image_channel_order, 0u);
  EXPECT_CL(CL_INVALID_VALUE, clGetSupportedImageFormats(context_, CL_MEM_READ_ONLY, CL_MEM_OBJECT_BUFFER, 0,
                                                         nullptr, &n));
  EXPECT_CL(CL_INVALID_VALUE, clGetSupportedImageFormats(context_, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0,
                                                         &one, &n));
  EXPECT_CL(CL_INVALID_CONTEXT, clGetSupportedImageFormats(nullptr, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0,
                                                           nullptr, &n));
}

TEST_F(images, image_2d_round_trips_with_padded_host_pitches) {
  const cl_image_format rgba8{CL_RGBA, CL_UNSIGNED_INT8};
  const size_t w = 37, h = 23, element = 4, host_pitch = w * element + 12;
  auto host = pixels(host_pitch * h, 1);
  auto img = image(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, rgba8,
                   desc(CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0, host_pitch), host.data());
  ASSERT_TRUE(img);
  EXPECT_EQ(image_value<size_t>(img, CL_IMAGE_WIDTH), w);
  EXPECT_EQ(image_value<size_t>(img, CL_IMAGE_HEIGHT), h);
  EXPECT_EQ(image_value<size_t>(img, CL_IMAGE_DEPTH), 0u);
  EXPECT_EQ(image_value<size_t>(img, CL_IMAGE_ELEMENT_SIZE), element);
  EXPECT_EQ(image_value<size_t>(img, CL_IMAGE_ARRAY_SIZE), 0u);
  EXPECT_EQ(image_value<size_t>(img, CL_IMAGE_ROW_PITCH), host_pitch);
  cl_image_format format = image_value<cl_image_format>(img, CL_IMAGE_FORMAT);
  EXPECT_EQ(format.image_channel_order, cl_uint{CL_RGBA});
  EXPECT_EQ(format.image_channel_data_type, cl_uint{CL_UNSIGNED_INT8});
  EXPECT_EQ(info_value<cl_mem_object_type>(FERRY_IT_INFO_QUERY(clGetMemObjectInfo, img, CL_MEM_TYPE)),
            cl_mem_object_type{CL_MEM_OBJECT_IMAGE2D});

  // The whole image, packed, equals the host data without its padding.
  const layout host_layout{element, host_pitch, host_pitch * h};
  const layout packed{element, w * element, w * element * h};
  std::vector<unsigned char> expected(w * h * element);
  model_copy(host.data(), host_layout, {0, 0, 0}, expected.data(), packed, {0, 0, 0}, {w, h, 1});
  EXPECT_EQ(read(img, {0, 0, 0}, {w, h, 1}, element), expected);

  // A sub-rectangle written with a pitch of its own, read back with yet another pitch.
  const std::array<size_t, 3> origin{5, 3, 0}, region{11, 7, 1};
  const size_t write_pitch = region[0] * element + 8;
  auto patch = pixels(write_pitch * region[1], 2);
  ASSERT_CL_OK(clEnqueueWriteImage(queue_, img, CL_FALSE, origin.data(), region.data(), write_pitch, 0, patch.data(),
                                   0, nullptr, nullptr));
  model_copy(patch.data(), layout{element, write_pitch, 0}, {0, 0, 0}, expected.data(), packed, origin, region);
  EXPECT_EQ(read(img, {0, 0, 0}, {w, h, 1}, element), expected);
  const size_t read_pitch = region[0] * element + 20;
  auto part = read(img, origin, region, element, read_pitch);
  for (size_t y = 0; y < region[1]; ++y)
    EXPECT_EQ(0, std::memcmp(part.data() + y * read_pitch, patch.data() + y * write_pitch, region[0] * element))
        << "row " << y;
}

TEST_F(images, layered_and_3d_images_round_trip) {
  const cl_image_format r32{CL_R, CL_FLOAT};
  struct shape {
    cl_mem_object_type type;
    size_t w, h, d, array;
    std::array<size_t, 3> extent;  // in origin/region coordinates
  };
  for (const shape& s : {shape{CL_MEM_OBJECT_IMAGE1D, 300, 0, 0, 0, {300, 1, 1}},
                         shape{CL_MEM_OBJECT_IMAGE1D_ARRAY, 64, 0, 0, 5, {64, 5, 1}},
                         shape{CL_MEM_OBJECT_IMAGE2D_ARRAY, 16, 9, 0, 4, {16, 9, 4}},
                         shape{CL_MEM_OBJECT_IMAGE3D, 13, 8, 6, 0, {13, 8, 6}}}) {
    SCOPED_TRACE("image type " + std::to_string(s.type));
    const size_t element = 4;
    // Host data with a padded slice pitch (for a 1D array: the pitch between its images).
    const size_t row = s.w * element;
    const size_t rows = s.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : std::max<size_t>(s.h, 1);
    const size_t slice = s.type == CL_MEM_OBJECT_IMAGE1D ? 0 : row * rows + 16;
    const size_t layers = s.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? s.extent[1] : s.extent[2];
    auto host = pixels(std::max(slice, row) * layers, 3);
    auto img = image(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, r32, desc(s.type, s.w, s.h, s.d, s.array, 0, slice),
                     host.data());
    ASSERT_TRUE(img);
    // y steps between 1D-array images by the slice pitch; otherwise by the row pitch.
    const layout host_layout = s.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? layout{element, slice, 0}
                                                                     : layout{element, row, slice};
    const layout packed{element, s.extent[0] * element, s.extent[0] * element * s.extent[1]};
    std::vector<unsigned char> expected(s.extent[0] * s.extent[1] * s.extent[2] * element);
    model_copy(host.data(), host_layout, {0, 0, 0}, expected.data(), packed, {0, 0, 0}, s.extent);
    EXPECT_EQ(read(img, {0, 0, 0}, s.extent, element), expected);
    if (s.type != CL_MEM_OBJECT_IMAGE1D) {
      EXPECT_EQ(image_value<size_t>(img, CL_IMAGE_ARRAY_SIZE), s.array);
      EXPECT_EQ(image_value<size_t>(img, CL_IMAGE_DEPTH), s.d);
    }
  }
}

TEST_F(images, copies_between_images_and_buffers_and_fill) {
  const cl_image_format rgba32{CL_RGBA, CL_UNSIGNED_INT32};
  const size_t w = 20, h = 12, element = 16;
  auto host = pixels(w * h * element, 4);
  auto a = image(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, rgba32, desc(CL_MEM_OBJECT_IMAGE2D, w, h), host.data());
  auto b = image(CL_MEM_READ_WRITE, rgba32, desc(CL_MEM_OBJECT_IMAGE2D, w, h));
  ASSERT_TRUE(a && b);
  const layout packed{element, w * element, w * h * element};

  // Fill b, then copy a rectangle of a into it.
  const cl_uint color[4] = {1, 2, 3, 0xdeadbeef};
  const std::array<size_t, 3> zero{0, 0, 0}, all{w, h, 1};
  ASSERT_CL_OK(clEnqueueFillImage(queue_, b, color, zero.data(), all.data(), 0, nullptr, nullptr));
  std::vector<unsigned char> expected(w * h * element);
  for (size_t i = 0; i < w * h; ++i) std::memcpy(expected.data() + i * element, color, element);
  const std::array<size_t, 3> src{2, 1, 0}, dst{9, 4, 0}, region{8, 6, 1};
  ASSERT_CL_OK(clEnqueueCopyImage(queue_, a, b, src.data(), dst.data(), region.data(), 0, nullptr, nullptr));
  model_copy(host.data(), packed, src, expected.data(), packed, dst, region);
  EXPECT_EQ(read(b, zero, all, element), expected);

  // Image -> buffer at an offset, buffer -> image elsewhere.
  const size_t offset = 3 * element;
  auto buf = buffer(CL_MEM_READ_WRITE, offset + region[0] * region[1] * element);
  ASSERT_TRUE(buf);
  ASSERT_CL_OK(clEnqueueCopyImageToBuffer(queue_, a, buf, src.data(), region.data(), offset, 0, nullptr, nullptr));
  std::vector<unsigned char> in_buffer(region[0] * region[1] * element);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, buf, CL_TRUE, offset, in_buffer.size(), in_buffer.data(), 0, nullptr,
                                   nullptr));
  std::vector<unsigned char> model(in_buffer.size());
  model_copy(host.data(), packed, src, model.data(), layout{element, region[0] * element, 0}, zero, region);
  EXPECT_EQ(in_buffer, model);
  const std::array<size_t, 3> back{0, 0, 0};
  ASSERT_CL_OK(clEnqueueCopyBufferToImage(queue_, buf, b, offset, back.data(), region.data(), 0, nullptr, nullptr));
  model_copy(model.data(), layout{element, region[0] * element, 0}, zero, expected.data(), packed, back, region);
  EXPECT_EQ(read(b, zero, all, element), expected);
}

TEST_F(images, map_reads_and_unmap_writes_back) {
  const cl_image_format rgba8{CL_RGBA, CL_UNORM_INT8};
  const size_t w = 31, h = 17, d = 5, element = 4;
  auto host = pixels(w * h * d * element, 5);
  auto img = image(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, rgba8, desc(CL_MEM_OBJECT_IMAGE3D, w, h, d),
                   host.data());
  ASSERT_TRUE(img);
  const layout packed{element, w * element, w * h * element};
  const std::array<size_t, 3> origin{3, 2, 1}, region{10, 9, 3};
  size_t row_pitch = 0, slice_pitch = 0;
  cl_int error = -9999;
  auto* mapped = static_cast<unsigned char*>(clEnqueueMapImage(queue_, img, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                                                               origin.data(), region.data(), &row_pitch,
                                                               &slice_pitch, 0, nullptr, nullptr, &error));
  ASSERT_CL_OK(error);
  ASSERT_NE(mapped, nullptr);
  ASSERT_GE(row_pitch, region[0] * element);
  ASSERT_GE(slice_pitch, row_pitch * region[1]);
  EXPECT_EQ(info_value<cl_uint>(FERRY_IT_INFO_QUERY(clGetMemObjectInfo, img, CL_MEM_MAP_COUNT)), 1u);
  std::vector<unsigned char> expected = host;
  for (size_t z = 0; z < region[2]; ++z)
    for (size_t y = 0; y < region[1]; ++y) {
      unsigned char* line = mapped + z * slice_pitch + y * row_pitch;
      EXPECT_EQ(0, std::memcmp(line, host.data() + packed.at(origin[0], origin[1] + y, origin[2] + z),
                               region[0] * element));
      for (size_t x = 0; x < region[0] * element; ++x) line[x] = static_cast<unsigned char>(line[x] ^ 0x5a);
      for (size_t x = 0; x < region[0] * element; ++x) {
        size_t at = packed.at(origin[0], origin[1] + y, origin[2] + z) + x;
        expected[at] = static_cast<unsigned char>(expected[at] ^ 0x5a);
      }
    }
  ASSERT_CL_OK(clEnqueueUnmapMemObject(queue_, img, mapped, 0, nullptr, nullptr));
  EXPECT_EQ(read(img, {0, 0, 0}, {w, h, d}, element), expected);
  EXPECT_EQ(info_value<cl_uint>(FERRY_IT_INFO_QUERY(clGetMemObjectInfo, img, CL_MEM_MAP_COUNT)), 0u);
}

// test_mem_host_flags mem_host_write_only_image: the host may map a CL_MEM_HOST_WRITE_ONLY
// image for writing. The map still fetches the region (the rows the application leaves
// alone go back unchanged on unmap), which the daemon's native image must allow.
TEST_F(images, host_write_only_image_maps_for_writing) {
  const cl_image_format rgba8{CL_RGBA, CL_UNSIGNED_INT8};
  const size_t w = 16, h = 8, element = 4;
  auto host = pixels(w * h * element, 9);
  auto img = image(CL_MEM_READ_WRITE | CL_MEM_HOST_WRITE_ONLY | CL_MEM_COPY_HOST_PTR, rgba8,
                   desc(CL_MEM_OBJECT_IMAGE2D, w, h), host.data());
  auto buf = buffer(CL_MEM_READ_WRITE, w * h * element);
  ASSERT_TRUE(img && buf);
  const layout packed{element, w * element, w * h * element};
  const std::array<size_t, 3> origin{2, 1, 0}, region{5, 4, 1};
  size_t row_pitch = 0;
  cl_int error = -9999;
  auto* mapped = static_cast<unsigned char*>(clEnqueueMapImage(queue_, img, CL_TRUE, CL_MAP_WRITE, origin.data(),
                                                               region.data(), &row_pitch, nullptr, 0, nullptr,
                                                               nullptr, &error));
  ASSERT_CL_OK(error);
  ASSERT_NE(mapped, nullptr);
  ASSERT_GE(row_pitch, region[0] * element);
  // Even rows of the region are written; odd ones are left as the map found them.
  std::vector<unsigned char> expected = host;
  for (size_t y = 0; y < region[1]; y += 2)
    for (size_t x = 0; x < region[0] * element; ++x) {
      const auto value = static_cast<unsigned char>(0xc0 + y * 16 + x);
      mapped[y * row_pitch + x] = value;
      expected[packed.at(origin[0], origin[1] + y, 0) + x] = value;
    }
  ASSERT_CL_OK(clEnqueueUnmapMemObject(queue_, img, mapped, 0, nullptr, nullptr));
  // The image itself may not be read by the host: its contents come back through a buffer.
  const std::array<size_t, 3> zero{0, 0, 0}, all{w, h, 1};
  ASSERT_CL_OK(clEnqueueCopyImageToBuffer(queue_, img, buf, zero.data(), all.data(), 0, 0, nullptr, nullptr));
  std::vector<unsigned char> back(w * h * element);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, buf, CL_TRUE, 0, back.size(), back.data(), 0, nullptr, nullptr));
  EXPECT_EQ(back, expected);
}

TEST_F(images, use_host_ptr_maps_inside_the_host_memory) {
  const cl_image_format r8{CL_R, CL_UNSIGNED_INT8};
  const size_t w = 40, h = 10, pitch = 48;
  auto host = pixels(pitch * h, 6);
  auto img = image(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, r8, desc(CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0, pitch),
                   host.data());
  ASSERT_TRUE(img);
  EXPECT_EQ(image_value<size_t>(img, CL_IMAGE_ROW_PITCH), pitch);
  // A kernel-side change is visible in the host memory after a map.
  const cl_uint color[4] = {77, 0, 0, 0};
  const std::array<size_t, 3> origin{4, 2, 0}, region{6, 3, 1};
  ASSERT_CL_OK(clEnqueueFillImage(queue_, img, color, origin.data(), region.data(), 0, nullptr, nullptr));
  size_t row_pitch = 0;
  cl_int error = -9999;
  auto* mapped = static_cast<unsigned char*>(clEnqueueMapImage(queue_, img, CL_TRUE, CL_MAP_READ, origin.data(),
                                                               region.data(), &row_pitch, nullptr, 0, nullptr,
                                                               nullptr, &error));
  ASSERT_CL_OK(error);
  EXPECT_EQ(mapped, host.data() + origin[1] * pitch + origin[0]);
  EXPECT_EQ(row_pitch, pitch);
  for (size_t y = 0; y < region[1]; ++y)
    for (size_t x = 0; x < region[0]; ++x) EXPECT_EQ(mapped[y * row_pitch + x], 77) << x << "," << y;
  ASSERT_CL_OK(clEnqueueUnmapMemObject(queue_, img, mapped, 0, nullptr, nullptr));
  ASSERT_CL_OK(clFinish(queue_));
}

TEST_F(images, kernels_sample_and_write_images) {
  auto program = build(image_kernels);
  ASSERT_TRUE(program);
  const size_t w = 9, h = 7;
  // write_2d fills an image; sample_2d reads it back through a sampler argument.
  auto img = image(CL_MEM_READ_WRITE, cl_image_format{CL_RGBA, CL_FLOAT}, desc(CL_MEM_OBJECT_IMAGE2D, w, h));
  ASSERT_TRUE(img);
  auto writer = create_kernel(program, "write_2d");
  cl_mem img_handle = img;
  const float scale = 0.5f;
  ASSERT_CL_OK(clSetKernelArg(writer, 0, sizeof img_handle, &img_handle));
  ASSERT_CL_OK(clSetKernelArg(writer, 1, sizeof scale, &scale));
  const size_t global[2] = {w, h};
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, writer, 2, nullptr, global, nullptr, 0, nullptr, nullptr));

  cl_int error = -9999;
  sampler_handle smp(clCreateSampler(context_, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &error),
                     &clReleaseSampler);
  ASSERT_CL_OK(error);
  EXPECT_EQ(info_value<cl_addressing_mode>(FERRY_IT_INFO_QUERY(clGetSamplerInfo, smp.get(), CL_SAMPLER_ADDRESSING_MODE)),
            cl_addressing_mode{CL_ADDRESS_CLAMP_TO_EDGE});
  EXPECT_EQ(info_value<cl_bool>(FERRY_IT_INFO_QUERY(clGetSamplerInfo, smp.get(), CL_SAMPLER_NORMALIZED_COORDS)),
            cl_bool{CL_FALSE});
  EXPECT_EQ(info_value<cl_context>(FERRY_IT_INFO_QUERY(clGetSamplerInfo, smp.get(), CL_SAMPLER_CONTEXT)), context_);
  auto out = buffer(CL_MEM_WRITE_ONLY, w * h * 4 * sizeof(float));
  ASSERT_TRUE(out);
  auto sampler_kernel = create_kernel(program, "sample_2d");
  cl_sampler smp_handle = smp.get();
  cl_mem out_handle = out;
  const cl_int width = static_cast<cl_int>(w);
  ASSERT_CL_OK(clSetKernelArg(sampler_kernel, 0, sizeof img_handle, &img_handle));
  // A buffer where a sampler belongs is refused, as natively.
  EXPECT_CL(CL_INVALID_SAMPLER, clSetKernelArg(sampler_kernel, 1, sizeof out_handle, &out_handle));
  ASSERT_CL_OK(clSetKernelArg(sampler_kernel, 1, sizeof smp_handle, &smp_handle));
  ASSERT_CL_OK(clSetKernelArg(sampler_kernel, 2, sizeof out_handle, &out_handle));
  ASSERT_CL_OK(clSetKernelArg(sampler_kernel, 3, sizeof width, &width));
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, sampler_kernel, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
  std::vector<float> result(w * h * 4, -1.0f);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, out, CL_TRUE, 0, result.size() * sizeof(float), result.data(), 0, nullptr,
                                   nullptr));
  for (size_t y = 0; y < h; ++y)
    for (size_t x = 0; x < w; ++x) {
      const float* p = &result[(y * w + x) * 4];
      EXPECT_EQ(p[0], x * scale);
      EXPECT_EQ(p[1], y * scale);
      EXPECT_EQ(p[2], static_cast<float>(x + y));
      EXPECT_EQ(p[3], 1.0f);
    }

  // A 3D unsigned image sampled with an in-kernel sampler.
  const size_t d = 3;
  std::vector<cl_uint> voxels(w * h * d * 4);
  std::iota(voxels.begin(), voxels.end(), 1u);
  auto volume = image(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, cl_image_format{CL_RGBA, CL_UNSIGNED_INT32},
                      desc(CL_MEM_OBJECT_IMAGE3D, w, h, d), voxels.data());
  ASSERT_TRUE(volume);
  auto out3 = buffer(CL_MEM_WRITE_ONLY, voxels.size() * sizeof(cl_uint));
  auto sample3 = create_kernel(program, "sample_3d");
  cl_mem volume_handle = volume, out3_handle = out3;
  const cl_int height = static_cast<cl_int>(h);
  ASSERT_CL_OK(clSetKernelArg(sample3, 0, sizeof volume_handle, &volume_handle));
  ASSERT_CL_OK(clSetKernelArg(sample3, 1, sizeof out3_handle, &out3_handle));
  ASSERT_CL_OK(clSetKernelArg(sample3, 2, sizeof width, &width));
  ASSERT_CL_OK(clSetKernelArg(sample3, 3, sizeof height, &height));
  const size_t global3[3] = {w, h, d};
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, sample3, 3, nullptr, global3, nullptr, 0, nullptr, nullptr));
  std::vector<cl_uint> back(voxels.size(), 0);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, out3, CL_TRUE, 0, back.size() * sizeof(cl_uint), back.data(), 0, nullptr,
                                   nullptr));
  EXPECT_EQ(back, voxels);
}

TEST_F(images, bad_calls_get_the_native_error_codes) {
  const cl_image_format rgba8{CL_RGBA, CL_UNORM_INT8};
  const cl_image_desc good = desc(CL_MEM_OBJECT_IMAGE2D, 8, 8);
  unsigned char host[8 * 8 * 4] = {};
  // Each creation is made on both platforms; the codes must agree.
  auto both = [&](cl_mem_flags flags, const cl_image_format* format, const cl_image_desc* d, void* h) {
    cl_int ferry_error = -9999, native_error = -9999;
    mem_handle a(clCreateImage(context_, flags, format, d, h, &ferry_error));
    mem_handle b(clCreateImage(native_.context, flags, format, d, h, &native_error));
    EXPECT_CL(native_error, ferry_error);
    return ferry_error;
  };
  EXPECT_CL(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, both(CL_MEM_READ_WRITE, nullptr, &good, nullptr));
  EXPECT_CL(CL_INVALID_IMAGE_DESCRIPTOR, both(CL_MEM_READ_WRITE, &rgba8, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_HOST_PTR, both(CL_MEM_COPY_HOST_PTR, &rgba8, &good, nullptr));
  EXPECT_CL(CL_INVALID_HOST_PTR, both(CL_MEM_READ_WRITE, &rgba8, &good, host));
  EXPECT_CL(CL_INVALID_VALUE, both(CL_MEM_READ_WRITE | CL_MEM_READ_ONLY, &rgba8, &good, nullptr));
  const cl_image_format nonsense{0x1234, CL_FLOAT};
  both(CL_MEM_READ_WRITE, &nonsense, &good, nullptr);
  cl_image_desc zero_width = good;
  zero_width.image_width = 0;
  both(CL_MEM_READ_WRITE, &rgba8, &zero_width, nullptr);
  cl_image_desc huge = good;
  huge.image_width = device_value<size_t>(device_, CL_DEVICE_IMAGE2D_MAX_WIDTH) + 1;
  EXPECT_NE(CL_SUCCESS, both(CL_MEM_READ_WRITE, &rgba8, &huge, nullptr));  // PoCL 3.1: CL_INVALID_OPERATION

  auto img = image(CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, rgba8, good);
  auto other = image(CL_MEM_READ_WRITE, cl_image_format{CL_RGBA, CL_FLOAT}, good);
  auto buf = buffer(CL_MEM_READ_WRITE, 64);
  ASSERT_TRUE(img && other && buf);
  const size_t origin[3] = {0, 0, 0}, region[3] = {8, 8, 1}, too_far[3] = {9, 8, 1}, flat[3] = {8, 8, 0};
  EXPECT_CL(CL_INVALID_OPERATION, clEnqueueReadImage(queue_, img, CL_TRUE, origin, region, 0, 0, host, 0, nullptr,
                                                     nullptr));
  EXPECT_CL(CL_INVALID_OPERATION, clEnqueueWriteImage(queue_, img, CL_TRUE, origin, region, 0, 0, host, 0, nullptr,
                                                      nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadImage(queue_, other, CL_TRUE, origin, too_far, 0, 0, host, 0, nullptr,
                                                 nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadImage(queue_, other, CL_TRUE, origin, flat, 0, 0, host, 0, nullptr,
                                                 nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadImage(queue_, other, CL_TRUE, origin, region, 0, 0, nullptr, 0, nullptr,
                                                 nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT, clEnqueueReadImage(queue_, buf, CL_TRUE, origin, region, 0, 0, host, 0, nullptr,
                                                      nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT, clEnqueueReadBuffer(queue_, other, CL_TRUE, 0, 4, host, 0, nullptr, nullptr));
  EXPECT_CL(CL_IMAGE_FORMAT_MISMATCH, clEnqueueCopyImage(queue_, img, other, origin, origin, region, 0, nullptr,
                                                         nullptr));
  EXPECT_CL(CL_MEM_COPY_OVERLAP, clEnqueueCopyImage(queue_, other, other, origin, origin, region, 0, nullptr,
                                                    nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueFillImage(queue_, other, nullptr, origin, region, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyImageToBuffer(queue_, other, buf, origin, region, 0, 0, nullptr,
                                                         nullptr));
  cl_int error = -9999;
  EXPECT_EQ(clEnqueueMapImage(queue_, other, CL_TRUE, CL_MAP_READ, origin, region, nullptr, nullptr, 0, nullptr,
                              nullptr, &error),
            nullptr);
  EXPECT_CL(CL_INVALID_VALUE, error);
  size_t pitch = 0;
  EXPECT_EQ(clEnqueueMapImage(queue_, img, CL_TRUE, CL_MAP_READ, origin, region, &pitch, nullptr, 0, nullptr,
                              nullptr, &error),
            nullptr);
  EXPECT_CL(CL_INVALID_OPERATION, error);
  EXPECT_CL(CL_INVALID_MEM_OBJECT, clGetImageInfo(buf, CL_IMAGE_WIDTH, sizeof pitch, &pitch, nullptr));

  // Samplers: invalid modes are refused before the server is asked.
  EXPECT_EQ(clCreateSampler(context_, CL_FALSE, 0x9999, CL_FILTER_NEAREST, &error), nullptr);
  EXPECT_CL(CL_INVALID_VALUE, error);
  EXPECT_EQ(clCreateSampler(nullptr, CL_FALSE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &error), nullptr);
  EXPECT_CL(CL_INVALID_CONTEXT, error);
  const cl_sampler_properties twice[] = {CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR, CL_SAMPLER_FILTER_MODE,
                                         CL_FILTER_NEAREST, 0};
  EXPECT_EQ(clCreateSamplerWithProperties(context_, twice, &error), nullptr);
  EXPECT_CL(CL_INVALID_VALUE, error);
  const cl_sampler_properties linear[] = {CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR, 0};
  sampler_handle smp(clCreateSamplerWithProperties(context_, linear, &error), &clReleaseSampler);
  ASSERT_CL_OK(error);
  auto props = info_array<cl_sampler_properties>(FERRY_IT_INFO_QUERY(clGetSamplerInfo, smp.get(), CL_SAMPLER_PROPERTIES));
  EXPECT_EQ(props, (std::vector<cl_sampler_properties>{CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR, 0}));
  EXPECT_EQ(info_value<cl_filter_mode>(FERRY_IT_INFO_QUERY(clGetSamplerInfo, smp.get(), CL_SAMPLER_FILTER_MODE)),
            cl_filter_mode{CL_FILTER_LINEAR});
  EXPECT_CL(CL_INVALID_SAMPLER, clRetainSampler(nullptr));
  EXPECT_CL(CL_INVALID_SAMPLER, clGetSamplerInfo(reinterpret_cast<cl_sampler>(static_cast<cl_mem>(buf)),
                                                 CL_SAMPLER_FILTER_MODE, 0, nullptr, &pitch));
}

}  // namespace ferry::test
