// The data objects' entry points through the public OpenVX API only: scalar,
// threshold, convolution, matrix, LUT, distribution, array and remap. Each
// object is created, queried, copied (and mapped where it can be) both ways,
// released; every bad input the entry points check is tried and must give
// the spec's exact status, a log line, and leave the object usable.
#include <VX/vx.h>

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

struct log_entry {
  vx_status status;
  std::string message;
};

// What vxRegisterLogCallback delivered during the current test.
std::vector<log_entry>& data_object_log() {
  static std::vector<log_entry> lines;
  return lines;
}

void VX_CALLBACK record_log(vx_context, vx_reference, vx_status status, const vx_char string[]) {
  data_object_log().push_back({status, string});
}

class DataObjects : public ::testing::Test {
 protected:
  void SetUp() override {
    data_object_log().clear();
    context = vxCreateContext();
    ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(context)), VX_SUCCESS);
    vxRegisterLogCallback(context, record_log, vx_false_e);
    graph = vxCreateGraph(context);
    ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(graph)), VX_SUCCESS);
  }
  void TearDown() override {
    if (graph != nullptr) vxReleaseGraph(&graph);
    vxReleaseContext(&context);
  }

  /// The status vxGetStatus reports for what a creator returned.
  static vx_status status_of(void* object) { return vxGetStatus(static_cast<vx_reference>(object)); }

  /// True when a log line with `status` mentioning `text` arrived.
  static bool logged(vx_status status, const char* text) {
    for (const log_entry& line : data_object_log())
      if (line.status == status && line.message.find(text) != std::string::npos) return true;
    return false;
  }

  static vx_uint32 reference_count(void* object) {
    vx_uint32 count = 0;
    EXPECT_EQ(vxQueryReference(static_cast<vx_reference>(object), VX_REFERENCE_COUNT, &count, sizeof count),
              VX_SUCCESS);
    return count;
  }

  vx_context context = nullptr;
  vx_graph graph = nullptr;
};

// ---- Scalar ---------------------------------------------------------------

TEST_F(DataObjects, scalar_round_trips_its_value_both_ways) {
  vx_int32 initial = -42;
  vx_scalar scalar = vxCreateScalar(context, VX_TYPE_INT32, &initial);
  ASSERT_EQ(status_of(scalar), VX_SUCCESS);
  vx_enum type = VX_TYPE_INVALID;
  EXPECT_EQ(vxQueryScalar(scalar, VX_SCALAR_TYPE, &type, sizeof type), VX_SUCCESS);
  EXPECT_EQ(type, VX_TYPE_INT32);
  vx_int32 read = 0;
  EXPECT_EQ(vxCopyScalar(scalar, &read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(read, -42);
  vx_int32 written = 1234567;
  EXPECT_EQ(vxCopyScalar(scalar, &written, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(vxCopyScalarWithSize(scalar, sizeof read, &read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(read, 1234567);
  EXPECT_EQ(reference_count(scalar), 1u);
  EXPECT_EQ(vxReleaseScalar(&scalar), VX_SUCCESS);
  EXPECT_EQ(scalar, nullptr);
}

TEST_F(DataObjects, scalar_of_every_basic_and_struct_type_holds_its_size) {
  struct typed {
    vx_enum type;
    vx_size size;
  };
  const typed types[] = {
      {VX_TYPE_CHAR, sizeof(vx_char)},         {VX_TYPE_INT8, 1},
      {VX_TYPE_UINT8, 1},                      {VX_TYPE_INT16, 2},
      {VX_TYPE_UINT16, 2},                     {VX_TYPE_INT32, 4},
      {VX_TYPE_UINT32, 4},                     {VX_TYPE_INT64, 8},
      {VX_TYPE_UINT64, 8},                     {VX_TYPE_FLOAT32, 4},
      {VX_TYPE_FLOAT64, 8},                    {VX_TYPE_ENUM, sizeof(vx_enum)},
      {VX_TYPE_SIZE, sizeof(vx_size)},         {VX_TYPE_DF_IMAGE, sizeof(vx_df_image)},
      {VX_TYPE_BOOL, sizeof(vx_bool)},         {VX_TYPE_RECTANGLE, sizeof(vx_rectangle_t)},
      {VX_TYPE_KEYPOINT, sizeof(vx_keypoint_t)}, {VX_TYPE_COORDINATES2D, sizeof(vx_coordinates2d_t)},
      {VX_TYPE_COORDINATES3D, sizeof(vx_coordinates3d_t)}, {VX_TYPE_COORDINATES2DF, sizeof(vx_coordinates2df_t)},
  };
  for (const typed& t : types) {
    SCOPED_TRACE(t.type);
    std::vector<unsigned char> value(t.size);
    for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<unsigned char>(0x11 * (i + 1));
    vx_scalar scalar = vxCreateScalar(context, t.type, value.data());
    ASSERT_EQ(status_of(scalar), VX_SUCCESS);
    std::vector<unsigned char> read(t.size, 0);
    EXPECT_EQ(vxCopyScalarWithSize(scalar, t.size, read.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
    EXPECT_EQ(read, value);
    // One byte more is not the scalar's size.
    EXPECT_EQ(vxCopyScalarWithSize(scalar, t.size + 1, read.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
              VX_ERROR_INVALID_PARAMETERS);
    EXPECT_EQ(vxReleaseScalar(&scalar), VX_SUCCESS);
  }
}

TEST_F(DataObjects, scalar_without_initial_value_is_zero) {
  vx_scalar scalar = vxCreateScalar(context, VX_TYPE_UINT64, nullptr);
  ASSERT_EQ(status_of(scalar), VX_SUCCESS);
  vx_uint64 read = 99;
  EXPECT_EQ(vxCopyScalar(scalar, &read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(read, 0u);
  vxReleaseScalar(&scalar);
}

TEST_F(DataObjects, scalar_of_user_struct_takes_the_registered_size) {
  struct pair {
    vx_uint32 a;
    vx_float64 b;
  };
  vx_enum type = vxRegisterUserStruct(context, sizeof(pair));
  ASSERT_GE(type, VX_TYPE_USER_STRUCT_START);
  pair value{7, 2.5};
  vx_scalar scalar = vxCreateScalar(context, type, &value);
  ASSERT_EQ(status_of(scalar), VX_SUCCESS);
  pair read{};
  EXPECT_EQ(vxCopyScalarWithSize(scalar, sizeof read, &read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(read.a, 7u);
  EXPECT_EQ(read.b, 2.5);
  vxReleaseScalar(&scalar);
}

TEST_F(DataObjects, scalar_creation_refuses_types_it_cannot_hold) {
  vx_int32 value = 1;
  EXPECT_EQ(status_of(vxCreateScalar(context, VX_TYPE_INVALID, &value)), VX_ERROR_INVALID_TYPE);
  EXPECT_EQ(status_of(vxCreateScalar(context, VX_TYPE_IMAGE, &value)), VX_ERROR_INVALID_TYPE);
  // A user struct number nobody registered.
  EXPECT_EQ(status_of(vxCreateScalar(context, VX_TYPE_USER_STRUCT_START + 77, &value)), VX_ERROR_INVALID_TYPE);
  EXPECT_TRUE(logged(VX_ERROR_INVALID_TYPE, "vxCreateScalar"));
  EXPECT_EQ(status_of(vxCreateScalarWithSize(context, VX_TYPE_INT32, &value, 2)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(status_of(vxCreateScalarWithSize(context, VX_TYPE_INT32, &value, 0)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(status_of(vxCreateScalarWithSize(context, VX_TYPE_GRAPH, &value, 4)), VX_ERROR_INVALID_TYPE);
  vx_scalar sized = vxCreateScalarWithSize(context, VX_TYPE_INT32, &value, sizeof value);
  EXPECT_EQ(status_of(sized), VX_SUCCESS);
  vxReleaseScalar(&sized);
  // No context: nothing to hand an error object from.
  EXPECT_NE(status_of(vxCreateScalar(nullptr, VX_TYPE_INT32, &value)), VX_SUCCESS);
  EXPECT_NE(status_of(vxCreateScalar(reinterpret_cast<vx_context>(graph), VX_TYPE_INT32, &value)), VX_SUCCESS);
}

TEST_F(DataObjects, scalar_copy_and_query_refuse_bad_arguments) {
  vx_uint8 value = 5;
  vx_scalar scalar = vxCreateScalar(context, VX_TYPE_UINT8, &value);
  ASSERT_EQ(status_of(scalar), VX_SUCCESS);
  EXPECT_EQ(vxCopyScalar(scalar, nullptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyScalar(scalar, &value, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyScalar(scalar, &value, VX_READ_ONLY, VX_MEMORY_TYPE_NONE), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyScalar(nullptr, &value, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_REFERENCE);
  EXPECT_EQ(vxCopyScalar(reinterpret_cast<vx_scalar>(graph), &value, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_REFERENCE);
  vx_enum type = 0;
  EXPECT_EQ(vxQueryScalar(scalar, VX_SCALAR_TYPE, &type, 2), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxQueryScalar(scalar, VX_SCALAR_TYPE, nullptr, sizeof type), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxQueryScalar(scalar, VX_LUT_TYPE, &type, sizeof type), VX_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(logged(VX_ERROR_INVALID_PARAMETERS, "vxCopyScalar"));
  // Still whole.
  vx_uint8 read = 0;
  EXPECT_EQ(vxCopyScalar(scalar, &read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(read, 5);
  vxReleaseScalar(&scalar);
}

TEST_F(DataObjects, virtual_scalar_belongs_to_its_graph) {
  vx_scalar scalar = vxCreateVirtualScalar(graph, VX_TYPE_FLOAT32);
  ASSERT_EQ(status_of(scalar), VX_SUCCESS);
  vx_enum type = 0;
  EXPECT_EQ(vxQueryScalar(scalar, VX_SCALAR_TYPE, &type, sizeof type), VX_SUCCESS);
  EXPECT_EQ(type, VX_TYPE_FLOAT32);
  vx_float32 value = 1.0f;
  EXPECT_EQ(vxCopyScalar(scalar, &value, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_OPTIMIZED_AWAY);
  EXPECT_EQ(vxReleaseScalar(&scalar), VX_SUCCESS);
  // Type left to the graph.
  vx_scalar open = vxCreateVirtualScalar(graph, VX_TYPE_INVALID);
  EXPECT_EQ(status_of(open), VX_SUCCESS);
  vxReleaseScalar(&open);
  // Not a graph.
  EXPECT_EQ(status_of(vxCreateVirtualScalar(reinterpret_cast<vx_graph>(context), VX_TYPE_INT32)),
            VX_ERROR_INVALID_REFERENCE);
  EXPECT_EQ(status_of(vxCreateVirtualScalar(graph, VX_TYPE_KERNEL)), VX_ERROR_INVALID_TYPE);
}

// ---- Threshold ------------------------------------------------------------

TEST_F(DataObjects, threshold_reports_its_kind_and_formats) {
  vx_threshold threshold = vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_RANGE, VX_DF_IMAGE_S16, VX_DF_IMAGE_U8);
  ASSERT_EQ(status_of(threshold), VX_SUCCESS);
  vx_enum type = 0;
  vx_df_image input = 0, output = 0;
  EXPECT_EQ(vxQueryThreshold(threshold, VX_THRESHOLD_TYPE, &type, sizeof type), VX_SUCCESS);
  EXPECT_EQ(vxQueryThreshold(threshold, VX_THRESHOLD_INPUT_FORMAT, &input, sizeof input), VX_SUCCESS);
  EXPECT_EQ(vxQueryThreshold(threshold, VX_THRESHOLD_OUTPUT_FORMAT, &output, sizeof output), VX_SUCCESS);
  EXPECT_EQ(type, VX_THRESHOLD_TYPE_RANGE);
  EXPECT_EQ(input, static_cast<vx_df_image>(VX_DF_IMAGE_S16));
  EXPECT_EQ(output, static_cast<vx_df_image>(VX_DF_IMAGE_U8));
  EXPECT_EQ(vxQueryThreshold(threshold, VX_MATRIX_ROWS, &type, sizeof type), VX_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(vxReleaseThreshold(&threshold), VX_SUCCESS);
  EXPECT_EQ(threshold, nullptr);
}

TEST_F(DataObjects, threshold_outputs_default_to_the_spec_values_of_the_output_format) {
  struct expected {
    vx_df_image output;
    vx_pixel_value_t true_value;
  };
  vx_pixel_value_t u8{}, s16{}, u1{}, u16{}, rgb{};
  u8.U8 = 0xFF;
  s16.S16 = -1;
  u1.U1 = vx_true_e;
  u16.U16 = 0xFFFF;
  rgb.RGB[0] = rgb.RGB[1] = rgb.RGB[2] = 255;
  const expected cases[] = {{VX_DF_IMAGE_U8, u8},
                            {VX_DF_IMAGE_S16, s16},
                            {VX_DF_IMAGE_U1, u1},
                            {VX_DF_IMAGE_U16, u16},
                            {VX_DF_IMAGE_RGB, rgb}};
  for (const expected& e : cases) {
    SCOPED_TRACE(e.output);
    vx_threshold threshold = vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_U8, e.output);
    ASSERT_EQ(status_of(threshold), VX_SUCCESS);
    vx_pixel_value_t true_value, false_value;
    std::memset(&true_value, 0x5A, sizeof true_value);
    std::memset(&false_value, 0x5A, sizeof false_value);
    EXPECT_EQ(vxCopyThresholdOutput(threshold, &true_value, &false_value, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
              VX_SUCCESS);
    EXPECT_EQ(std::memcmp(&true_value, &e.true_value, sizeof true_value), 0);
    vx_pixel_value_t zero{};
    EXPECT_EQ(std::memcmp(&false_value, &zero, sizeof zero), 0);
    vxReleaseThreshold(&threshold);
  }
}

TEST_F(DataObjects, binary_threshold_round_trips_its_value_and_outputs) {
  vx_threshold threshold = vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_U8, VX_DF_IMAGE_U8);
  ASSERT_EQ(status_of(threshold), VX_SUCCESS);
  // Only the input format's member is taken: the rest of the union is not kept.
  vx_pixel_value_t value;
  std::memset(&value, 0xAB, sizeof value);
  value.U8 = 77;
  EXPECT_EQ(vxCopyThresholdValue(threshold, &value, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  vx_pixel_value_t read;
  std::memset(&read, 0x33, sizeof read);
  EXPECT_EQ(vxCopyThresholdValue(threshold, &read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(read.U8, 77);
  for (size_t i = 1; i < sizeof read.reserved; ++i) EXPECT_EQ(read.reserved[i], 0) << i;

  vx_pixel_value_t true_value{}, false_value{};
  true_value.U8 = 200;
  false_value.U8 = 10;
  EXPECT_EQ(vxCopyThresholdOutput(threshold, &true_value, &false_value, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST),
            VX_SUCCESS);
  vx_pixel_value_t t{}, f{};
  EXPECT_EQ(vxCopyThresholdOutput(threshold, &t, &f, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(t.U8, 200);
  EXPECT_EQ(f.U8, 10);

  // A binary threshold has no range.
  EXPECT_EQ(vxCopyThresholdRange(threshold, &t, &f, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_NOT_COMPATIBLE);
  EXPECT_TRUE(logged(VX_ERROR_NOT_COMPATIBLE, "vxCopyThresholdRange"));
  vxReleaseThreshold(&threshold);
}

TEST_F(DataObjects, range_threshold_round_trips_its_bounds) {
  vx_threshold threshold = vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_RANGE, VX_DF_IMAGE_S16, VX_DF_IMAGE_U8);
  ASSERT_EQ(status_of(threshold), VX_SUCCESS);
  vx_pixel_value_t lower{}, upper{};
  lower.S16 = -300;
  upper.S16 = 1200;
  EXPECT_EQ(vxCopyThresholdRange(threshold, &lower, &upper, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  vx_pixel_value_t l{}, u{};
  EXPECT_EQ(vxCopyThresholdRange(threshold, &l, &u, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(l.S16, -300);
  EXPECT_EQ(u.S16, 1200);
  // A range threshold has no single value.
  EXPECT_EQ(vxCopyThresholdValue(threshold, &l, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_NOT_COMPATIBLE);
  vxReleaseThreshold(&threshold);
}

TEST_F(DataObjects, threshold_refuses_bad_arguments) {
  EXPECT_EQ(status_of(vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_BINARY + 7, VX_DF_IMAGE_U8, VX_DF_IMAGE_U8)),
            VX_ERROR_INVALID_TYPE);
  EXPECT_EQ(status_of(vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_RGB, VX_DF_IMAGE_U8)),
            VX_ERROR_INVALID_FORMAT);
  EXPECT_EQ(status_of(vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_U8, VX_DF_IMAGE_VIRT)),
            VX_ERROR_INVALID_FORMAT);
  EXPECT_TRUE(logged(VX_ERROR_INVALID_FORMAT, "vxCreateThresholdForImage"));

  vx_threshold threshold = vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_RANGE, VX_DF_IMAGE_U8, VX_DF_IMAGE_U8);
  ASSERT_EQ(status_of(threshold), VX_SUCCESS);
  vx_pixel_value_t a{}, b{};
  EXPECT_EQ(vxCopyThresholdRange(threshold, nullptr, &b, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyThresholdRange(threshold, &a, nullptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyThresholdRange(threshold, &a, &b, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyThresholdOutput(threshold, &a, &b, VX_READ_ONLY, VX_MEMORY_TYPE_NONE), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyThresholdOutput(threshold, nullptr, &b, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyThresholdValue(nullptr, &a, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_REFERENCE);
  // Every 1.3 threshold attribute is read-only.
  vx_enum type = VX_THRESHOLD_TYPE_BINARY;
  EXPECT_EQ(vxSetThresholdAttribute(threshold, VX_THRESHOLD_TYPE, &type, sizeof type), VX_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(vxSetThresholdAttribute(threshold, VX_LUT_TYPE, &type, sizeof type), VX_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(vxSetThresholdAttribute(nullptr, VX_THRESHOLD_TYPE, &type, sizeof type), VX_ERROR_INVALID_REFERENCE);
  EXPECT_EQ(vxQueryThreshold(threshold, VX_THRESHOLD_TYPE, &type, sizeof type), VX_SUCCESS);
  EXPECT_EQ(type, VX_THRESHOLD_TYPE_RANGE);
  vxReleaseThreshold(&threshold);
}

TEST_F(DataObjects, virtual_threshold_hides_its_values) {
  vx_threshold threshold =
      vxCreateVirtualThresholdForImage(graph, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_U8, VX_DF_IMAGE_U1);
  ASSERT_EQ(status_of(threshold), VX_SUCCESS);
  vx_df_image output = 0;
  EXPECT_EQ(vxQueryThreshold(threshold, VX_THRESHOLD_OUTPUT_FORMAT, &output, sizeof output), VX_SUCCESS);
  EXPECT_EQ(output, static_cast<vx_df_image>(VX_DF_IMAGE_U1));
  vx_pixel_value_t value{};
  EXPECT_EQ(vxCopyThresholdValue(threshold, &value, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_OPTIMIZED_AWAY);
  vxReleaseThreshold(&threshold);
  EXPECT_NE(status_of(vxCreateVirtualThresholdForImage(nullptr, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_U8,
                                                       VX_DF_IMAGE_U8)),
            VX_SUCCESS);
}

// ---- Convolution ----------------------------------------------------------

TEST_F(DataObjects, convolution_round_trips_coefficients_and_scale) {
  vx_convolution conv = vxCreateConvolution(context, 3, 5);
  ASSERT_EQ(status_of(conv), VX_SUCCESS);
  vx_size columns = 0, rows = 0, size = 0;
  vx_uint32 scale = 0;
  EXPECT_EQ(vxQueryConvolution(conv, VX_CONVOLUTION_COLUMNS, &columns, sizeof columns), VX_SUCCESS);
  EXPECT_EQ(vxQueryConvolution(conv, VX_CONVOLUTION_ROWS, &rows, sizeof rows), VX_SUCCESS);
  EXPECT_EQ(vxQueryConvolution(conv, VX_CONVOLUTION_SIZE, &size, sizeof size), VX_SUCCESS);
  EXPECT_EQ(vxQueryConvolution(conv, VX_CONVOLUTION_SCALE, &scale, sizeof scale), VX_SUCCESS);
  EXPECT_EQ(columns, 3u);
  EXPECT_EQ(rows, 5u);
  EXPECT_EQ(size, 15 * sizeof(vx_int16));
  EXPECT_EQ(scale, 1u);

  vx_int16 coefficients[15];
  for (int i = 0; i < 15; ++i) coefficients[i] = static_cast<vx_int16>(i * 100 - 700);
  EXPECT_EQ(vxCopyConvolutionCoefficients(conv, coefficients, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  vx_int16 read[15] = {};
  EXPECT_EQ(vxCopyConvolutionCoefficients(conv, read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(std::memcmp(read, coefficients, sizeof read), 0);

  vx_uint32 new_scale = 16;
  EXPECT_EQ(vxSetConvolutionAttribute(conv, VX_CONVOLUTION_SCALE, &new_scale, sizeof new_scale), VX_SUCCESS);
  new_scale = 1u << 31;
  EXPECT_EQ(vxSetConvolutionAttribute(conv, VX_CONVOLUTION_SCALE, &new_scale, sizeof new_scale), VX_SUCCESS);
  EXPECT_EQ(vxQueryConvolution(conv, VX_CONVOLUTION_SCALE, &scale, sizeof scale), VX_SUCCESS);
  EXPECT_EQ(scale, 1u << 31);
  vxReleaseConvolution(&conv);
  EXPECT_EQ(conv, nullptr);
}

TEST_F(DataObjects, convolution_refuses_bad_sizes_and_scales) {
  for (vx_size bad : {vx_size{0}, vx_size{1}, vx_size{2}, vx_size{4}, vx_size{11}, vx_size{1} << 40}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(status_of(vxCreateConvolution(context, bad, 3)), VX_ERROR_INVALID_DIMENSION);
    EXPECT_EQ(status_of(vxCreateConvolution(context, 3, bad)), VX_ERROR_INVALID_DIMENSION);
  }
  EXPECT_TRUE(logged(VX_ERROR_INVALID_DIMENSION, "vxCreateConvolution"));
  vx_convolution largest = vxCreateConvolution(context, 9, 9);
  EXPECT_EQ(status_of(largest), VX_SUCCESS);
  vxReleaseConvolution(&largest);

  vx_convolution conv = vxCreateConvolution(context, 3, 3);
  ASSERT_EQ(status_of(conv), VX_SUCCESS);
  for (vx_uint32 bad : {0u, 3u, 12u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(vxSetConvolutionAttribute(conv, VX_CONVOLUTION_SCALE, &bad, sizeof bad), VX_ERROR_INVALID_VALUE);
  }
  vx_uint16 short_scale = 2;
  EXPECT_EQ(vxSetConvolutionAttribute(conv, VX_CONVOLUTION_SCALE, &short_scale, sizeof short_scale),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxSetConvolutionAttribute(conv, VX_CONVOLUTION_SCALE, nullptr, 4), VX_ERROR_INVALID_PARAMETERS);
  vx_size rows = 5;
  EXPECT_EQ(vxSetConvolutionAttribute(conv, VX_CONVOLUTION_ROWS, &rows, sizeof rows), VX_ERROR_NOT_SUPPORTED);
  vx_uint32 scale = 0;
  EXPECT_EQ(vxQueryConvolution(conv, VX_CONVOLUTION_SCALE, &scale, sizeof scale), VX_SUCCESS);
  EXPECT_EQ(scale, 1u);
  vx_int16 c[9];
  EXPECT_EQ(vxCopyConvolutionCoefficients(conv, nullptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyConvolutionCoefficients(conv, c, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyConvolutionCoefficients(conv, c, VX_READ_ONLY, VX_MEMORY_TYPE_NONE), VX_ERROR_INVALID_PARAMETERS);
  vxReleaseConvolution(&conv);

  vx_convolution virt = vxCreateVirtualConvolution(graph, 5, 5);
  ASSERT_EQ(status_of(virt), VX_SUCCESS);
  EXPECT_EQ(vxCopyConvolutionCoefficients(virt, c, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_OPTIMIZED_AWAY);
  vxReleaseConvolution(&virt);
  EXPECT_EQ(status_of(vxCreateVirtualConvolution(graph, 4, 3)), VX_ERROR_INVALID_DIMENSION);
}

// ---- Matrix ---------------------------------------------------------------

TEST_F(DataObjects, matrix_round_trips_values_and_reports_its_shape) {
  vx_matrix matrix = vxCreateMatrix(context, VX_TYPE_FLOAT32, 3, 2);
  ASSERT_EQ(status_of(matrix), VX_SUCCESS);
  vx_enum type = 0, pattern = 0;
  vx_size rows = 0, columns = 0, size = 0;
  vx_coordinates2d_t origin{};
  EXPECT_EQ(vxQueryMatrix(matrix, VX_MATRIX_TYPE, &type, sizeof type), VX_SUCCESS);
  EXPECT_EQ(vxQueryMatrix(matrix, VX_MATRIX_ROWS, &rows, sizeof rows), VX_SUCCESS);
  EXPECT_EQ(vxQueryMatrix(matrix, VX_MATRIX_COLUMNS, &columns, sizeof columns), VX_SUCCESS);
  EXPECT_EQ(vxQueryMatrix(matrix, VX_MATRIX_SIZE, &size, sizeof size), VX_SUCCESS);
  EXPECT_EQ(vxQueryMatrix(matrix, VX_MATRIX_ORIGIN, &origin, sizeof origin), VX_SUCCESS);
  EXPECT_EQ(vxQueryMatrix(matrix, VX_MATRIX_PATTERN, &pattern, sizeof pattern), VX_SUCCESS);
  EXPECT_EQ(type, VX_TYPE_FLOAT32);
  EXPECT_EQ(rows, 2u);
  EXPECT_EQ(columns, 3u);
  EXPECT_EQ(size, 6 * sizeof(vx_float32));
  EXPECT_EQ(origin.x, 1u);  // floor(columns / 2)
  EXPECT_EQ(origin.y, 1u);  // floor(rows / 2)
  EXPECT_EQ(pattern, VX_PATTERN_OTHER);

  vx_float32 values[6] = {1.5f, -2.0f, 3.25f, 0.0f, 1e6f, -7.5f};
  EXPECT_EQ(vxCopyMatrix(matrix, values, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  vx_float32 read[6] = {};
  EXPECT_EQ(vxCopyMatrix(matrix, read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(std::memcmp(read, values, sizeof read), 0);
  EXPECT_EQ(vxCopyMatrix(matrix, nullptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyMatrix(matrix, read, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyMatrix(matrix, read, VX_READ_ONLY, VX_MEMORY_TYPE_NONE), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxQueryMatrix(matrix, VX_MATRIX_ORIGIN, &origin, sizeof origin - 1), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxQueryMatrix(matrix, VX_LUT_COUNT, &size, sizeof size), VX_ERROR_NOT_SUPPORTED);
  vxReleaseMatrix(&matrix);
  EXPECT_EQ(matrix, nullptr);
}

TEST_F(DataObjects, matrix_creation_refuses_bad_types_and_sizes) {
  EXPECT_EQ(status_of(vxCreateMatrix(context, VX_TYPE_INT16, 3, 3)), VX_ERROR_INVALID_TYPE);
  EXPECT_EQ(status_of(vxCreateMatrix(context, VX_TYPE_INT32, 0, 3)), VX_ERROR_INVALID_DIMENSION);
  EXPECT_EQ(status_of(vxCreateMatrix(context, VX_TYPE_INT32, 3, 0)), VX_ERROR_INVALID_DIMENSION);
  // Sizes whose product overflows.
  EXPECT_EQ(status_of(vxCreateMatrix(context, VX_TYPE_INT32, vx_size{1} << 33, vx_size{1} << 33)),
            VX_ERROR_INVALID_DIMENSION);
  EXPECT_TRUE(logged(VX_ERROR_INVALID_TYPE, "vxCreateMatrix"));
  vx_matrix virt = vxCreateVirtualMatrix(graph, VX_TYPE_UINT8, 5, 5);
  ASSERT_EQ(status_of(virt), VX_SUCCESS);
  vx_uint8 values[25];
  EXPECT_EQ(vxCopyMatrix(virt, values, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_OPTIMIZED_AWAY);
  vxReleaseMatrix(&virt);
  EXPECT_EQ(status_of(vxCreateVirtualMatrix(graph, VX_TYPE_FLOAT64, 5, 5)), VX_ERROR_INVALID_TYPE);
}

TEST_F(DataObjects, matrix_patterns_follow_the_spec) {
  auto cells = [](vx_matrix matrix, size_t n) {
    std::vector<vx_uint8> values(n);
    EXPECT_EQ(vxCopyMatrix(matrix, values.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
    return values;
  };
  const vx_uint8 X = 255;

  vx_matrix box = vxCreateMatrixFromPattern(context, VX_PATTERN_BOX, 3, 3);
  ASSERT_EQ(status_of(box), VX_SUCCESS);
  EXPECT_EQ(cells(box, 9), std::vector<vx_uint8>(9, X));
  vx_enum type = 0, pattern = 0;
  EXPECT_EQ(vxQueryMatrix(box, VX_MATRIX_TYPE, &type, sizeof type), VX_SUCCESS);
  EXPECT_EQ(vxQueryMatrix(box, VX_MATRIX_PATTERN, &pattern, sizeof pattern), VX_SUCCESS);
  EXPECT_EQ(type, VX_TYPE_UINT8);
  EXPECT_EQ(pattern, VX_PATTERN_BOX);
  // "A matrix created from pattern is read-only."
  std::vector<vx_uint8> zeros(9, 0);
  EXPECT_EQ(vxCopyMatrix(box, zeros.data(), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(cells(box, 9), std::vector<vx_uint8>(9, X));
  vxReleaseMatrix(&box);

  vx_matrix cross = vxCreateMatrixFromPattern(context, VX_PATTERN_CROSS, 5, 5);
  ASSERT_EQ(status_of(cross), VX_SUCCESS);
  const std::vector<vx_uint8> cross_cells = {
      0, 0, X, 0, 0,  //
      0, 0, X, 0, 0,  //
      X, X, X, X, X,  //
      0, 0, X, 0, 0,  //
      0, 0, X, 0, 0,
  };
  EXPECT_EQ(cells(cross, 25), cross_cells);
  vxReleaseMatrix(&cross);

  // (r - 2.5 + 0.5)^2 / 2.5^2 + (c - 2.5 + 0.5)^2 / 2.5^2 <= 1: all but the corners.
  vx_matrix disk = vxCreateMatrixFromPattern(context, VX_PATTERN_DISK, 5, 5);
  ASSERT_EQ(status_of(disk), VX_SUCCESS);
  const std::vector<vx_uint8> disk_cells = {
      0, X, X, X, 0,  //
      X, X, X, X, X,  //
      X, X, X, X, X,  //
      X, X, X, X, X,  //
      0, X, X, X, 0,
  };
  EXPECT_EQ(cells(disk, 25), disk_cells);
  vxReleaseMatrix(&disk);

  vx_matrix placed = vxCreateMatrixFromPatternAndOrigin(context, VX_PATTERN_BOX, 3, 5, 0, 4);
  ASSERT_EQ(status_of(placed), VX_SUCCESS);
  vx_coordinates2d_t origin{};
  EXPECT_EQ(vxQueryMatrix(placed, VX_MATRIX_ORIGIN, &origin, sizeof origin), VX_SUCCESS);
  EXPECT_EQ(origin.x, 0u);
  EXPECT_EQ(origin.y, 4u);
  vxReleaseMatrix(&placed);
}

TEST_F(DataObjects, matrix_patterns_refuse_what_the_spec_does_not_define) {
  EXPECT_EQ(status_of(vxCreateMatrixFromPattern(context, VX_PATTERN_OTHER, 3, 3)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(status_of(vxCreateMatrixFromPattern(context, VX_PATTERN_BOX + 9, 3, 3)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(status_of(vxCreateMatrixFromPattern(context, VX_PATTERN_CROSS, 4, 3)), VX_ERROR_INVALID_DIMENSION);
  EXPECT_EQ(status_of(vxCreateMatrixFromPattern(context, VX_PATTERN_DISK, 3, 4)), VX_ERROR_INVALID_DIMENSION);
  EXPECT_EQ(status_of(vxCreateMatrixFromPattern(context, VX_PATTERN_BOX, 0, 3)), VX_ERROR_INVALID_DIMENSION);
  EXPECT_EQ(status_of(vxCreateMatrixFromPatternAndOrigin(context, VX_PATTERN_BOX, 3, 3, 3, 0)),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(status_of(vxCreateMatrixFromPatternAndOrigin(context, VX_PATTERN_BOX, 3, 3, 0, 3)),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_TRUE(logged(VX_ERROR_INVALID_PARAMETERS, "vxCreateMatrixFromPatternAndOrigin"));
  // A box of even sizes is defined.
  vx_matrix even = vxCreateMatrixFromPattern(context, VX_PATTERN_BOX, 4, 2);
  EXPECT_EQ(status_of(even), VX_SUCCESS);
  vxReleaseMatrix(&even);
}

// ---- LUT ------------------------------------------------------------------

TEST_F(DataObjects, lut_reports_type_count_size_and_offset) {
  vx_lut u8 = vxCreateLUT(context, VX_TYPE_UINT8, 256);
  ASSERT_EQ(status_of(u8), VX_SUCCESS);
  vx_enum type = 0;
  vx_size count = 0, size = 0;
  vx_uint32 offset = 99;
  EXPECT_EQ(vxQueryLUT(u8, VX_LUT_TYPE, &type, sizeof type), VX_SUCCESS);
  EXPECT_EQ(vxQueryLUT(u8, VX_LUT_COUNT, &count, sizeof count), VX_SUCCESS);
  EXPECT_EQ(vxQueryLUT(u8, VX_LUT_SIZE, &size, sizeof size), VX_SUCCESS);
  EXPECT_EQ(vxQueryLUT(u8, VX_LUT_OFFSET, &offset, sizeof offset), VX_SUCCESS);
  EXPECT_EQ(type, VX_TYPE_UINT8);
  EXPECT_EQ(count, 256u);
  EXPECT_EQ(size, 256u);
  EXPECT_EQ(offset, 0u);
  vxReleaseLUT(&u8);

  vx_lut s16 = vxCreateLUT(context, VX_TYPE_INT16, 101);
  ASSERT_EQ(status_of(s16), VX_SUCCESS);
  EXPECT_EQ(vxQueryLUT(s16, VX_LUT_SIZE, &size, sizeof size), VX_SUCCESS);
  EXPECT_EQ(vxQueryLUT(s16, VX_LUT_OFFSET, &offset, sizeof offset), VX_SUCCESS);
  EXPECT_EQ(size, 101 * sizeof(vx_int16));
  EXPECT_EQ(offset, 50u);  // (vx_uint32)(count / 2)
  EXPECT_EQ(vxQueryLUT(s16, VX_LUT_OFFSET, &offset, sizeof(vx_size)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxQueryLUT(s16, VX_ARRAY_CAPACITY, &size, sizeof size), VX_ERROR_NOT_SUPPORTED);
  vxReleaseLUT(&s16);
  EXPECT_EQ(s16, nullptr);
}

TEST_F(DataObjects, lut_round_trips_by_copy_and_by_map) {
  vx_lut lut = vxCreateLUT(context, VX_TYPE_INT16, 65536);
  ASSERT_EQ(status_of(lut), VX_SUCCESS);
  std::vector<vx_int16> table(65536);
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<vx_int16>(i * 7);
  EXPECT_EQ(vxCopyLUT(lut, table.data(), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);

  vx_map_id map_id = 0;
  void* ptr = nullptr;
  ASSERT_EQ(vxMapLUT(lut, &map_id, &ptr, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST, 0), VX_SUCCESS);
  ASSERT_NE(ptr, nullptr);
  auto* mapped = static_cast<vx_int16*>(ptr);
  EXPECT_EQ(mapped[1000], static_cast<vx_int16>(7000));
  mapped[1000] = -5;
  // One map at a time.
  vx_map_id second = 0;
  void* second_ptr = nullptr;
  EXPECT_EQ(vxMapLUT(lut, &second, &second_ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0), VX_ERROR_NO_RESOURCES);
  EXPECT_EQ(vxUnmapLUT(lut, map_id + 1), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxUnmapLUT(lut, map_id), VX_SUCCESS);
  EXPECT_EQ(vxUnmapLUT(lut, map_id), VX_ERROR_INVALID_PARAMETERS);

  std::vector<vx_int16> read(65536);
  EXPECT_EQ(vxCopyLUT(lut, read.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  table[1000] = -5;
  EXPECT_EQ(read, table);
  vxReleaseLUT(&lut);
}

TEST_F(DataObjects, lut_refuses_bad_arguments) {
  EXPECT_EQ(status_of(vxCreateLUT(context, VX_TYPE_INT32, 16)), VX_ERROR_INVALID_TYPE);
  EXPECT_EQ(status_of(vxCreateLUT(context, VX_TYPE_UINT8, 257)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(status_of(vxCreateLUT(context, VX_TYPE_INT16, 65537)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(status_of(vxCreateLUT(context, VX_TYPE_UINT8, 0)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_TRUE(logged(VX_ERROR_INVALID_PARAMETERS, "vxCreateLUT"));

  vx_lut lut = vxCreateLUT(context, VX_TYPE_UINT8, 256);
  ASSERT_EQ(status_of(lut), VX_SUCCESS);
  vx_uint8 table[256] = {};
  EXPECT_EQ(vxCopyLUT(lut, nullptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyLUT(lut, table, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyLUT(lut, table, VX_WRITE_ONLY, VX_MEMORY_TYPE_NONE), VX_ERROR_INVALID_PARAMETERS);
  vx_map_id map_id = 0;
  void* ptr = nullptr;
  EXPECT_EQ(vxMapLUT(lut, nullptr, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxMapLUT(lut, &map_id, nullptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxMapLUT(lut, &map_id, &ptr, VX_READ_ONLY + 7, VX_MEMORY_TYPE_HOST, 0), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxMapLUT(lut, &map_id, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_NONE, 0), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxMapLUT(lut, &map_id, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0x80), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxUnmapLUT(lut, 12345), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxMapLUT(nullptr, &map_id, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0), VX_ERROR_INVALID_REFERENCE);
  // After all that, a map still works.
  EXPECT_EQ(vxMapLUT(lut, &map_id, &ptr, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST, 0), VX_SUCCESS);
  EXPECT_EQ(vxUnmapLUT(lut, map_id), VX_SUCCESS);
  vxReleaseLUT(&lut);

  vx_lut virt = vxCreateVirtualLUT(graph, VX_TYPE_UINT8, 256);
  ASSERT_EQ(status_of(virt), VX_SUCCESS);
  EXPECT_EQ(vxMapLUT(virt, &map_id, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0), VX_ERROR_OPTIMIZED_AWAY);
  EXPECT_EQ(vxCopyLUT(virt, table, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_OPTIMIZED_AWAY);
  vxReleaseLUT(&virt);
  EXPECT_EQ(status_of(vxCreateVirtualLUT(graph, VX_TYPE_UINT8, 300)), VX_ERROR_INVALID_PARAMETERS);
}

// ---- Distribution ---------------------------------------------------------

TEST_F(DataObjects, distribution_reports_its_shape_and_window) {
  vx_distribution dist = vxCreateDistribution(context, 16, -8, 256);
  ASSERT_EQ(status_of(dist), VX_SUCCESS);
  vx_size dims = 0, bins = 0, size = 0;
  vx_int32 offset = 0;
  vx_uint32 range = 0, window = 0;
  EXPECT_EQ(vxQueryDistribution(dist, VX_DISTRIBUTION_DIMENSIONS, &dims, sizeof dims), VX_SUCCESS);
  EXPECT_EQ(vxQueryDistribution(dist, VX_DISTRIBUTION_OFFSET, &offset, sizeof offset), VX_SUCCESS);
  EXPECT_EQ(vxQueryDistribution(dist, VX_DISTRIBUTION_RANGE, &range, sizeof range), VX_SUCCESS);
  EXPECT_EQ(vxQueryDistribution(dist, VX_DISTRIBUTION_BINS, &bins, sizeof bins), VX_SUCCESS);
  EXPECT_EQ(vxQueryDistribution(dist, VX_DISTRIBUTION_WINDOW, &window, sizeof window), VX_SUCCESS);
  EXPECT_EQ(vxQueryDistribution(dist, VX_DISTRIBUTION_SIZE, &size, sizeof size), VX_SUCCESS);
  EXPECT_EQ(dims, 1u);
  EXPECT_EQ(offset, -8);
  EXPECT_EQ(range, 256u);
  EXPECT_EQ(bins, 16u);
  EXPECT_EQ(window, 16u);
  EXPECT_EQ(size, 16 * sizeof(vx_uint32));
  EXPECT_EQ(vxQueryDistribution(dist, VX_DISTRIBUTION_WINDOW, &window, sizeof(vx_size)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxQueryDistribution(dist, VX_LUT_SIZE, &size, sizeof size), VX_ERROR_NOT_SUPPORTED);
  vxReleaseDistribution(&dist);
  EXPECT_EQ(dist, nullptr);

  // A range that is no multiple of the bins has no valid window.
  vx_distribution uneven = vxCreateDistribution(context, 3, 0, 100);
  ASSERT_EQ(status_of(uneven), VX_SUCCESS);
  EXPECT_EQ(vxQueryDistribution(uneven, VX_DISTRIBUTION_WINDOW, &window, sizeof window), VX_SUCCESS);
  EXPECT_EQ(window, 0u);
  vxReleaseDistribution(&uneven);
}

TEST_F(DataObjects, distribution_round_trips_by_copy_and_by_map) {
  vx_distribution dist = vxCreateDistribution(context, 8, 0, 64);
  ASSERT_EQ(status_of(dist), VX_SUCCESS);
  vx_uint32 counts[8] = {1, 2, 3, 4, 5, 6, 7, 0xFFFFFFFFu};
  EXPECT_EQ(vxCopyDistribution(dist, counts, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  vx_map_id map_id = 0;
  void* ptr = nullptr;
  ASSERT_EQ(vxMapDistribution(dist, &map_id, &ptr, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST, 0), VX_SUCCESS);
  auto* mapped = static_cast<vx_uint32*>(ptr);
  EXPECT_EQ(mapped[3], 4u);
  mapped[3] = 40;
  EXPECT_EQ(vxMapDistribution(dist, &map_id, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0), VX_ERROR_NO_RESOURCES);
  EXPECT_EQ(vxUnmapDistribution(dist, 0), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxUnmapDistribution(dist, map_id), VX_SUCCESS);
  vx_uint32 read[8] = {};
  EXPECT_EQ(vxCopyDistribution(dist, read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  counts[3] = 40;
  EXPECT_EQ(std::memcmp(read, counts, sizeof read), 0);
  vxReleaseDistribution(&dist);
}

TEST_F(DataObjects, distribution_refuses_bad_arguments) {
  EXPECT_EQ(status_of(vxCreateDistribution(context, 0, 0, 256)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(status_of(vxCreateDistribution(context, 16, 0, 0)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(status_of(vxCreateDistribution(context, 300, 0, 256)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_TRUE(logged(VX_ERROR_INVALID_PARAMETERS, "vxCreateDistribution"));
  vx_distribution dist = vxCreateDistribution(context, 4, 0, 4);
  ASSERT_EQ(status_of(dist), VX_SUCCESS);
  vx_uint32 counts[4];
  EXPECT_EQ(vxCopyDistribution(dist, nullptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyDistribution(dist, counts, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyDistribution(dist, counts, VX_READ_ONLY, VX_MEMORY_TYPE_NONE), VX_ERROR_INVALID_PARAMETERS);
  vx_map_id map_id = 0;
  void* ptr = nullptr;
  EXPECT_EQ(vxMapDistribution(dist, &map_id, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_NONE, 0),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxMapDistribution(dist, &map_id, nullptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxUnmapDistribution(nullptr, map_id), VX_ERROR_INVALID_REFERENCE);
  vxReleaseDistribution(&dist);

  vx_distribution virt = vxCreateVirtualDistribution(graph, 4, 10, 8);
  ASSERT_EQ(status_of(virt), VX_SUCCESS);
  vx_int32 offset = 0;
  EXPECT_EQ(vxQueryDistribution(virt, VX_DISTRIBUTION_OFFSET, &offset, sizeof offset), VX_SUCCESS);
  EXPECT_EQ(offset, 10);
  EXPECT_EQ(vxCopyDistribution(virt, counts, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_OPTIMIZED_AWAY);
  vxReleaseDistribution(&virt);
}

// ---- Array ----------------------------------------------------------------

TEST_F(DataObjects, array_adds_copies_maps_and_truncates_items) {
  vx_array array = vxCreateArray(context, VX_TYPE_KEYPOINT, 10);
  ASSERT_EQ(status_of(array), VX_SUCCESS);
  vx_enum type = 0;
  vx_size capacity = 0, count = 99, item_size = 0;
  EXPECT_EQ(vxQueryArray(array, VX_ARRAY_ITEMTYPE, &type, sizeof type), VX_SUCCESS);
  EXPECT_EQ(vxQueryArray(array, VX_ARRAY_CAPACITY, &capacity, sizeof capacity), VX_SUCCESS);
  EXPECT_EQ(vxQueryArray(array, VX_ARRAY_NUMITEMS, &count, sizeof count), VX_SUCCESS);
  EXPECT_EQ(vxQueryArray(array, VX_ARRAY_ITEMSIZE, &item_size, sizeof item_size), VX_SUCCESS);
  EXPECT_EQ(type, VX_TYPE_KEYPOINT);
  EXPECT_EQ(capacity, 10u);
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(item_size, sizeof(vx_keypoint_t));

  // Items spaced out in user memory: the stride skips the gaps.
  struct spaced {
    vx_keypoint_t point;
    vx_uint32 gap[3];
  };
  spaced source[6] = {};
  for (int i = 0; i < 6; ++i) source[i].point = {i, -i, 0.5f * i, 1.0f, 0.0f, 1, 0.0f};
  EXPECT_EQ(vxAddArrayItems(array, 6, source, sizeof(spaced)), VX_SUCCESS);
  EXPECT_EQ(vxAddArrayItems(array, 0, nullptr, sizeof(spaced)), VX_SUCCESS);
  EXPECT_EQ(vxQueryArray(array, VX_ARRAY_NUMITEMS, &count, sizeof count), VX_SUCCESS);
  EXPECT_EQ(count, 6u);

  // Read items 2..5 into spaced user memory: the gaps stay as they were.
  spaced read[4];
  std::memset(read, 0x7F, sizeof read);
  EXPECT_EQ(vxCopyArrayRange(array, 2, 6, sizeof(spaced), read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(read[i].point.x, i + 2);
    EXPECT_EQ(read[i].point.y, -(i + 2));
    EXPECT_EQ(read[i].gap[0], 0x7F7F7F7Fu);
  }

  // Write item 0 by copy, item 1 through a map.
  vx_keypoint_t first = {100, 200, 1.0f, 1.0f, 0.0f, 1, 0.0f};
  EXPECT_EQ(vxCopyArrayRange(array, 0, 1, sizeof first, &first, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  vx_map_id map_id = 0;
  vx_size stride = 0;
  void* ptr = nullptr;
  ASSERT_EQ(vxMapArrayRange(array, 1, 3, &map_id, &stride, &ptr, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST, VX_NOGAP_X),
            VX_SUCCESS);
  EXPECT_EQ(stride, sizeof(vx_keypoint_t));
  vxArrayItem(vx_keypoint_t, ptr, 0, stride).x = 111;
  EXPECT_EQ(vxArrayItem(vx_keypoint_t, ptr, 1, stride).x, 2);
  EXPECT_EQ(vxMapArrayRange(array, 0, 1, &map_id, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0),
            VX_ERROR_NO_RESOURCES);
  EXPECT_EQ(vxUnmapArrayRange(array, map_id ^ 1), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxUnmapArrayRange(array, map_id), VX_SUCCESS);
  EXPECT_EQ(vxUnmapArrayRange(array, map_id), VX_ERROR_INVALID_PARAMETERS);
  vx_keypoint_t two[2];
  EXPECT_EQ(vxCopyArrayRange(array, 0, 2, sizeof(vx_keypoint_t), two, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(two[0].x, 100);
  EXPECT_EQ(two[1].x, 111);

  EXPECT_EQ(vxTruncateArray(array, 2), VX_SUCCESS);
  EXPECT_EQ(vxQueryArray(array, VX_ARRAY_NUMITEMS, &count, sizeof count), VX_SUCCESS);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(vxTruncateArray(array, 3), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxTruncateArray(array, 0), VX_SUCCESS);
  vxReleaseArray(&array);
  EXPECT_EQ(array, nullptr);
}

TEST_F(DataObjects, array_refuses_items_beyond_capacity_and_bad_ranges) {
  vx_array array = vxCreateArray(context, VX_TYPE_UINT16, 4);
  ASSERT_EQ(status_of(array), VX_SUCCESS);
  vx_uint16 values[5] = {1, 2, 3, 4, 5};
  // "If the Array is full": VX_FAILURE, and nothing is added.
  EXPECT_EQ(vxAddArrayItems(array, 5, values, sizeof(vx_uint16)), VX_FAILURE);
  EXPECT_TRUE(logged(VX_FAILURE, "vxAddArrayItems"));
  EXPECT_EQ(vxAddArrayItems(array, 3, values, sizeof(vx_uint16)), VX_SUCCESS);
  EXPECT_EQ(vxAddArrayItems(array, 2, values, sizeof(vx_uint16)), VX_FAILURE);
  EXPECT_EQ(vxAddArrayItems(array, ~vx_size{0}, values, sizeof(vx_uint16)), VX_FAILURE);
  EXPECT_EQ(vxAddArrayItems(array, 1, values, 1), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxAddArrayItems(array, 1, nullptr, sizeof(vx_uint16)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxAddArrayItems(nullptr, 1, values, sizeof(vx_uint16)), VX_ERROR_INVALID_REFERENCE);
  vx_size count = 0;
  EXPECT_EQ(vxQueryArray(array, VX_ARRAY_NUMITEMS, &count, sizeof count), VX_SUCCESS);
  EXPECT_EQ(count, 3u);

  vx_uint16 read[4];
  EXPECT_EQ(vxCopyArrayRange(array, 1, 1, 2, read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyArrayRange(array, 2, 1, 2, read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyArrayRange(array, 0, 4, 2, read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyArrayRange(array, 0, 3, 1, read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyArrayRange(array, 0, 3, 2, nullptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyArrayRange(array, 0, 3, 2, read, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyArrayRange(array, 0, 3, 2, read, VX_READ_ONLY, VX_MEMORY_TYPE_NONE), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyArrayRange(array, 0, 3, 2, read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(read[2], 3);

  vx_map_id map_id = 0;
  vx_size stride = 0;
  void* ptr = nullptr;
  EXPECT_EQ(vxMapArrayRange(array, 0, 4, &map_id, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxMapArrayRange(array, 0, 3, &map_id, nullptr, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxMapArrayRange(array, 0, 3, &map_id, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_NONE, 0),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxMapArrayRange(array, 0, 3, &map_id, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 2),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxUnmapArrayRange(array, 1), VX_ERROR_INVALID_PARAMETERS);
  vxReleaseArray(&array);
}

TEST_F(DataObjects, array_item_types_follow_the_spec_and_user_structs) {
  struct own {
    vx_uint32 a;
    vx_float64 b;
  };
  vx_enum own_type = vxRegisterUserStructWithName(context, sizeof(own), "own_struct");
  ASSERT_GE(own_type, VX_TYPE_USER_STRUCT_START);
  vx_array array = vxCreateArray(context, own_type, 3);
  ASSERT_EQ(status_of(array), VX_SUCCESS);
  vx_size item_size = 0;
  EXPECT_EQ(vxQueryArray(array, VX_ARRAY_ITEMSIZE, &item_size, sizeof item_size), VX_SUCCESS);
  EXPECT_EQ(item_size, sizeof(own));
  own items[2] = {{1, 0.5}, {2, 0.25}};
  EXPECT_EQ(vxAddArrayItems(array, 2, items, sizeof(own)), VX_SUCCESS);
  own read[2] = {};
  EXPECT_EQ(vxCopyArrayRange(array, 0, 2, sizeof(own), read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(read[1].a, 2u);
  EXPECT_EQ(read[1].b, 0.25);
  vxReleaseArray(&array);

  const struct {
    vx_enum type;
    vx_size size;
  } sizes[] = {{VX_TYPE_RECTANGLE, sizeof(vx_rectangle_t)},
               {VX_TYPE_COORDINATES2D, sizeof(vx_coordinates2d_t)},
               {VX_TYPE_COORDINATES3D, sizeof(vx_coordinates3d_t)},
               {VX_TYPE_BOOL, sizeof(vx_bool)},
               {VX_TYPE_SIZE, sizeof(vx_size)},
               {VX_TYPE_CHAR, sizeof(vx_char)}};
  for (const auto& s : sizes) {
    SCOPED_TRACE(s.type);
    vx_array a = vxCreateArray(context, s.type, 2);
    ASSERT_EQ(status_of(a), VX_SUCCESS);
    EXPECT_EQ(vxQueryArray(a, VX_ARRAY_ITEMSIZE, &item_size, sizeof item_size), VX_SUCCESS);
    EXPECT_EQ(item_size, s.size);
    vxReleaseArray(&a);
  }

  EXPECT_EQ(status_of(vxCreateArray(context, VX_TYPE_INVALID, 4)), VX_ERROR_INVALID_TYPE);
  EXPECT_EQ(status_of(vxCreateArray(context, VX_TYPE_IMAGE, 4)), VX_ERROR_INVALID_TYPE);
  EXPECT_EQ(status_of(vxCreateArray(context, own_type + 1, 4)), VX_ERROR_INVALID_TYPE);
  EXPECT_EQ(status_of(vxCreateArray(context, VX_TYPE_UINT8, 0)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(status_of(vxCreateArray(context, VX_TYPE_KEYPOINT, ~vx_size{0} / 4)), VX_ERROR_NO_MEMORY);
  EXPECT_TRUE(logged(VX_ERROR_INVALID_TYPE, "vxCreateArray"));
}

TEST_F(DataObjects, virtual_array_may_leave_type_and_capacity_to_its_graph) {
  // The spec's own examples.
  vx_array open = vxCreateVirtualArray(graph, 0, 0);
  vx_array typed = vxCreateVirtualArray(graph, VX_TYPE_KEYPOINT, 0);
  vx_array sized = vxCreateVirtualArray(graph, VX_TYPE_KEYPOINT, 1000);
  ASSERT_EQ(status_of(open), VX_SUCCESS);
  ASSERT_EQ(status_of(typed), VX_SUCCESS);
  ASSERT_EQ(status_of(sized), VX_SUCCESS);
  vx_enum type = -1;
  EXPECT_EQ(vxQueryArray(open, VX_ARRAY_ITEMTYPE, &type, sizeof type), VX_SUCCESS);
  EXPECT_EQ(type, VX_TYPE_INVALID);
  vx_keypoint_t point{};
  // "VX_ERROR_OPTIMIZED_AWAY - This is a reference to a virtual array that
  // cannot be accessed by the application."
  EXPECT_EQ(vxAddArrayItems(sized, 1, &point, sizeof point), VX_ERROR_OPTIMIZED_AWAY);
  EXPECT_EQ(vxCopyArrayRange(sized, 0, 1, sizeof point, &point, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
            VX_ERROR_OPTIMIZED_AWAY);
  vx_map_id map_id = 0;
  vx_size stride = 0;
  void* ptr = nullptr;
  EXPECT_EQ(vxMapArrayRange(sized, 0, 1, &map_id, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0),
            VX_ERROR_OPTIMIZED_AWAY);
  EXPECT_EQ(vxTruncateArray(sized, 0), VX_ERROR_OPTIMIZED_AWAY);
  vxReleaseArray(&open);
  vxReleaseArray(&typed);
  vxReleaseArray(&sized);
  EXPECT_EQ(status_of(vxCreateVirtualArray(graph, VX_TYPE_GRAPH, 4)), VX_ERROR_INVALID_TYPE);
  EXPECT_EQ(status_of(vxCreateVirtualArray(reinterpret_cast<vx_graph>(context), VX_TYPE_UINT8, 4)),
            VX_ERROR_INVALID_REFERENCE);
}

// ---- Remap ----------------------------------------------------------------

TEST_F(DataObjects, remap_round_trips_patches_by_copy_and_by_map) {
  vx_remap remap = vxCreateRemap(context, 16, 8, 4, 3);
  ASSERT_EQ(status_of(remap), VX_SUCCESS);
  vx_uint32 sw = 0, sh = 0, dw = 0, dh = 0;
  EXPECT_EQ(vxQueryRemap(remap, VX_REMAP_SOURCE_WIDTH, &sw, sizeof sw), VX_SUCCESS);
  EXPECT_EQ(vxQueryRemap(remap, VX_REMAP_SOURCE_HEIGHT, &sh, sizeof sh), VX_SUCCESS);
  EXPECT_EQ(vxQueryRemap(remap, VX_REMAP_DESTINATION_WIDTH, &dw, sizeof dw), VX_SUCCESS);
  EXPECT_EQ(vxQueryRemap(remap, VX_REMAP_DESTINATION_HEIGHT, &dh, sizeof dh), VX_SUCCESS);
  EXPECT_EQ(sw, 16u);
  EXPECT_EQ(sh, 8u);
  EXPECT_EQ(dw, 4u);
  EXPECT_EQ(dh, 3u);

  // The whole table, one padded row of user memory per destination row.
  const vx_size row_stride = 6 * sizeof(vx_coordinates2df_t);
  vx_coordinates2df_t table[3][6];
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 6; ++x) table[y][x] = {x * 4.0f + 0.5f, y * 2.0f + 0.25f};
  vx_rectangle_t all = {0, 0, 4, 3};
  EXPECT_EQ(vxCopyRemapPatch(remap, &all, row_stride, table, VX_TYPE_COORDINATES2DF, VX_WRITE_ONLY,
                             VX_MEMORY_TYPE_HOST),
            VX_SUCCESS);

  // A map of the lower right 2x2: rows are the destination width apart.
  vx_rectangle_t corner = {2, 1, 4, 3};
  vx_map_id map_id = 0;
  vx_size stride_y = 0;
  void* ptr = nullptr;
  ASSERT_EQ(vxMapRemapPatch(remap, &corner, &map_id, &stride_y, &ptr, VX_TYPE_COORDINATES2DF, VX_READ_AND_WRITE,
                            VX_MEMORY_TYPE_HOST),
            VX_SUCCESS);
  EXPECT_GE(stride_y, 2 * sizeof(vx_coordinates2df_t));
  auto* first = static_cast<vx_coordinates2df_t*>(ptr);
  EXPECT_EQ(first->x, 2 * 4.0f + 0.5f);
  EXPECT_EQ(first->y, 1 * 2.0f + 0.25f);
  auto* second_row = reinterpret_cast<vx_coordinates2df_t*>(static_cast<char*>(ptr) + stride_y);
  EXPECT_EQ(second_row[1].x, 3 * 4.0f + 0.5f);
  second_row[1] = {-1.0f, -2.0f};
  EXPECT_EQ(vxUnmapRemapPatch(remap, map_id), VX_SUCCESS);
  EXPECT_EQ(vxUnmapRemapPatch(remap, map_id), VX_ERROR_INVALID_PARAMETERS);

  vx_coordinates2df_t read[3][4];
  EXPECT_EQ(vxCopyRemapPatch(remap, &all, sizeof read[0], read, VX_TYPE_COORDINATES2DF, VX_READ_ONLY,
                             VX_MEMORY_TYPE_HOST),
            VX_SUCCESS);
  EXPECT_EQ(read[0][0].x, 0.5f);
  EXPECT_EQ(read[1][2].y, 2.25f);
  EXPECT_EQ(read[2][3].x, -1.0f);
  EXPECT_EQ(read[2][3].y, -2.0f);
  vxReleaseRemap(&remap);
  EXPECT_EQ(remap, nullptr);
}

TEST_F(DataObjects, remap_refuses_bad_patches_and_sizes) {
  EXPECT_EQ(status_of(vxCreateRemap(context, 0, 8, 4, 4)), VX_ERROR_INVALID_DIMENSION);
  EXPECT_EQ(status_of(vxCreateRemap(context, 8, 8, 4, 0)), VX_ERROR_INVALID_DIMENSION);
  EXPECT_TRUE(logged(VX_ERROR_INVALID_DIMENSION, "vxCreateRemap"));
  vx_remap remap = vxCreateRemap(context, 8, 8, 4, 4);
  ASSERT_EQ(status_of(remap), VX_SUCCESS);
  vx_coordinates2df_t points[16];
  const vx_size stride = 4 * sizeof(vx_coordinates2df_t);
  vx_rectangle_t all = {0, 0, 4, 4};
  const vx_rectangle_t bad[] = {{0, 0, 5, 4}, {0, 0, 4, 5}, {2, 0, 2, 4}, {0, 3, 4, 1}};
  for (const vx_rectangle_t& rect : bad) {
    EXPECT_EQ(vxCopyRemapPatch(remap, &rect, stride, points, VX_TYPE_COORDINATES2DF, VX_READ_ONLY,
                               VX_MEMORY_TYPE_HOST),
              VX_ERROR_INVALID_PARAMETERS);
  }
  EXPECT_EQ(vxCopyRemapPatch(remap, nullptr, stride, points, VX_TYPE_COORDINATES2DF, VX_READ_ONLY,
                             VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyRemapPatch(remap, &all, stride - 1, points, VX_TYPE_COORDINATES2DF, VX_READ_ONLY,
                             VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyRemapPatch(remap, &all, stride, points, VX_TYPE_COORDINATES2D, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyRemapPatch(remap, &all, stride, nullptr, VX_TYPE_COORDINATES2DF, VX_READ_ONLY,
                             VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyRemapPatch(remap, &all, stride, points, VX_TYPE_COORDINATES2DF, VX_READ_AND_WRITE,
                             VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxCopyRemapPatch(remap, &all, stride, points, VX_TYPE_COORDINATES2DF, VX_READ_ONLY,
                             VX_MEMORY_TYPE_NONE),
            VX_ERROR_INVALID_PARAMETERS);

  vx_map_id map_id = 0;
  vx_size stride_y = 0;
  void* ptr = nullptr;
  EXPECT_EQ(vxMapRemapPatch(remap, &bad[0], &map_id, &stride_y, &ptr, VX_TYPE_COORDINATES2DF, VX_READ_ONLY,
                            VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxMapRemapPatch(remap, &all, nullptr, &stride_y, &ptr, VX_TYPE_COORDINATES2DF, VX_READ_ONLY,
                            VX_MEMORY_TYPE_HOST),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxMapRemapPatch(remap, &all, &map_id, &stride_y, &ptr, VX_TYPE_COORDINATES2DF, VX_READ_ONLY,
                            VX_MEMORY_TYPE_NONE),
            VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxUnmapRemapPatch(remap, 424242), VX_ERROR_INVALID_PARAMETERS);
  // Two patches may be mapped at once; each id unmaps only its own remap's map.
  vx_remap other = vxCreateRemap(context, 8, 8, 4, 4);
  ASSERT_EQ(status_of(other), VX_SUCCESS);
  vx_map_id first = 0, second = 0;
  ASSERT_EQ(vxMapRemapPatch(remap, &all, &first, &stride_y, &ptr, VX_TYPE_COORDINATES2DF, VX_READ_ONLY,
                            VX_MEMORY_TYPE_HOST),
            VX_SUCCESS);
  ASSERT_EQ(vxMapRemapPatch(remap, &all, &second, &stride_y, &ptr, VX_TYPE_COORDINATES2DF, VX_READ_ONLY,
                            VX_MEMORY_TYPE_HOST),
            VX_SUCCESS);
  EXPECT_NE(first, second);
  EXPECT_EQ(vxUnmapRemapPatch(other, first), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxUnmapRemapPatch(remap, second), VX_SUCCESS);
  EXPECT_EQ(vxUnmapRemapPatch(remap, first), VX_SUCCESS);
  vxReleaseRemap(&other);
  vxReleaseRemap(&remap);

  vx_remap virt = vxCreateVirtualRemap(graph, 8, 8, 4, 4);
  ASSERT_EQ(status_of(virt), VX_SUCCESS);
  EXPECT_EQ(vxCopyRemapPatch(virt, &all, stride, points, VX_TYPE_COORDINATES2DF, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
            VX_ERROR_OPTIMIZED_AWAY);
  vxReleaseRemap(&virt);
}

// ---- Every object: references and release -------------------------------

struct maker {
  const char* name;
  std::function<vx_reference(vx_context, vx_graph)> make;
  std::function<vx_status(vx_reference*)> release;
};

// The typed vxRelease* of each object, taking the handle as a vx_reference.
template <class T>
std::function<vx_status(vx_reference*)> typed_release(vx_status (*release)(T*)) {
  return [release](vx_reference* ref) {
    if (ref == nullptr) return release(nullptr);
    T handle = reinterpret_cast<T>(*ref);
    vx_status status = release(&handle);
    *ref = reinterpret_cast<vx_reference>(handle);
    return status;
  };
}

std::vector<maker> makers() {
  auto ref = [](void* object) { return static_cast<vx_reference>(object); };
  return {
      {"scalar", [ref](vx_context c, vx_graph) { vx_int8 v = 1; return ref(vxCreateScalar(c, VX_TYPE_INT8, &v)); },
       typed_release(vxReleaseScalar)},
      {"virtual scalar", [ref](vx_context, vx_graph g) { return ref(vxCreateVirtualScalar(g, VX_TYPE_INT8)); },
       typed_release(vxReleaseScalar)},
      {"threshold",
       [ref](vx_context c, vx_graph) {
         return ref(vxCreateThresholdForImage(c, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_U8, VX_DF_IMAGE_U8));
       },
       typed_release(vxReleaseThreshold)},
      {"convolution", [ref](vx_context c, vx_graph) { return ref(vxCreateConvolution(c, 3, 3)); },
       typed_release(vxReleaseConvolution)},
      {"matrix", [ref](vx_context c, vx_graph) { return ref(vxCreateMatrix(c, VX_TYPE_INT32, 3, 3)); },
       typed_release(vxReleaseMatrix)},
      {"pattern matrix",
       [ref](vx_context c, vx_graph) { return ref(vxCreateMatrixFromPattern(c, VX_PATTERN_BOX, 3, 3)); },
       typed_release(vxReleaseMatrix)},
      {"lut", [ref](vx_context c, vx_graph) { return ref(vxCreateLUT(c, VX_TYPE_UINT8, 256)); },
       typed_release(vxReleaseLUT)},
      {"virtual lut", [ref](vx_context, vx_graph g) { return ref(vxCreateVirtualLUT(g, VX_TYPE_INT16, 16)); },
       typed_release(vxReleaseLUT)},
      {"distribution", [ref](vx_context c, vx_graph) { return ref(vxCreateDistribution(c, 4, 0, 16)); },
       typed_release(vxReleaseDistribution)},
      {"array", [ref](vx_context c, vx_graph) { return ref(vxCreateArray(c, VX_TYPE_RECTANGLE, 4)); },
       typed_release(vxReleaseArray)},
      {"remap", [ref](vx_context c, vx_graph) { return ref(vxCreateRemap(c, 4, 4, 4, 4)); },
       typed_release(vxReleaseRemap)},
  };
}

TEST_F(DataObjects, every_object_counts_references_and_release_zeroes_the_handle) {
  for (const maker& m : makers()) {
    SCOPED_TRACE(m.name);
    vx_reference object = m.make(context, graph);
    ASSERT_EQ(vxGetStatus(object), VX_SUCCESS);
    EXPECT_EQ(reference_count(object), 1u);
    EXPECT_EQ(vxRetainReference(object), VX_SUCCESS);
    EXPECT_EQ(reference_count(object), 2u);
    vx_reference copy = object;
    EXPECT_EQ(m.release(&copy), VX_SUCCESS);
    EXPECT_EQ(copy, nullptr);
    EXPECT_EQ(reference_count(object), 1u);
    EXPECT_EQ(m.release(&object), VX_SUCCESS);
    EXPECT_EQ(object, nullptr);
    // A second release of the zeroed handle.
    EXPECT_EQ(m.release(&object), VX_ERROR_INVALID_REFERENCE);
    EXPECT_EQ(m.release(nullptr), VX_ERROR_INVALID_REFERENCE);
  }
}

TEST_F(DataObjects, typed_release_refuses_another_type_and_leaves_it_alive) {
  vx_int32 value = 3;
  vx_scalar scalar = vxCreateScalar(context, VX_TYPE_INT32, &value);
  ASSERT_EQ(status_of(scalar), VX_SUCCESS);
  auto* as_lut = reinterpret_cast<vx_lut>(scalar);
  EXPECT_EQ(vxReleaseLUT(&as_lut), VX_ERROR_INVALID_REFERENCE);
  EXPECT_NE(as_lut, nullptr);
  auto* as_array = reinterpret_cast<vx_array>(scalar);
  EXPECT_EQ(vxReleaseArray(&as_array), VX_ERROR_INVALID_REFERENCE);
  EXPECT_EQ(reference_count(scalar), 1u);
  vx_int32 read = 0;
  EXPECT_EQ(vxCopyScalar(scalar, &read, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(read, 3);
  EXPECT_EQ(vxReleaseScalar(&scalar), VX_SUCCESS);
}

TEST_F(DataObjects, failed_creations_give_error_objects_that_no_release_accepts) {
  vx_lut lut = vxCreateLUT(context, VX_TYPE_FLOAT32, 4);
  EXPECT_EQ(status_of(lut), VX_ERROR_INVALID_TYPE);
  EXPECT_NE(lut, nullptr);  // the context's error object, not NULL
  EXPECT_EQ(vxQueryLUT(lut, VX_LUT_COUNT, nullptr, 0), VX_ERROR_INVALID_REFERENCE);
  EXPECT_EQ(vxReleaseLUT(&lut), VX_ERROR_INVALID_REFERENCE);
  // Two failures with one status are the same error object.
  EXPECT_EQ(static_cast<void*>(vxCreateMatrix(context, VX_TYPE_INT16, 1, 1)),
            static_cast<void*>(vxCreateArray(context, VX_TYPE_INVALID, 1)));
}

}  // namespace
