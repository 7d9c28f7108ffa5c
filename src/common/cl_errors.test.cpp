#include "common/cl_errors.hpp"

#include <CL/cl_ext.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

namespace ferry {
namespace {

TEST(cl_errors, every_opencl_3_0_code_has_its_own_name) {
  // OpenCL 3.0 uses 0 to -19 and -30 to -72; nothing in between.
  std::set<std::string> seen;
  auto check = [&](cl_int code) {
    const char* name = known_cl_error_name(code);
    ASSERT_NE(name, nullptr) << code;
    EXPECT_TRUE(std::string(name).starts_with("CL_")) << name;
    EXPECT_TRUE(seen.insert(name).second) << name << " names two codes";
  };
  for (cl_int code = 0; code >= -19; --code) check(code);
  for (cl_int code = -30; code >= -72; --code) check(code);
  for (cl_int code = -20; code >= -29; --code) EXPECT_EQ(known_cl_error_name(code), nullptr) << code;
  EXPECT_EQ(known_cl_error_name(-73), nullptr);
}

TEST(cl_errors, names_are_the_spec_names) {
  EXPECT_EQ(cl_error_name(CL_SUCCESS), "CL_SUCCESS");
  EXPECT_EQ(cl_error_name(CL_DEVICE_NOT_AVAILABLE), "CL_DEVICE_NOT_AVAILABLE");
  EXPECT_EQ(cl_error_name(CL_KERNEL_ARG_INFO_NOT_AVAILABLE), "CL_KERNEL_ARG_INFO_NOT_AVAILABLE");
  EXPECT_EQ(cl_error_name(CL_INVALID_KERNEL_NAME), "CL_INVALID_KERNEL_NAME");
  EXPECT_EQ(cl_error_name(CL_MAX_SIZE_RESTRICTION_EXCEEDED), "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
}

TEST(cl_errors, extension_codes_are_named) {
  EXPECT_EQ(cl_error_name(CL_PLATFORM_NOT_FOUND_KHR), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_EQ(cl_error_name(-1000), "CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR");
#ifdef CL_INVALID_COMMAND_BUFFER_KHR
  EXPECT_EQ(cl_error_name(CL_INVALID_COMMAND_BUFFER_KHR), "CL_INVALID_COMMAND_BUFFER_KHR");
#endif
#ifdef CL_CONTEXT_TERMINATED_KHR
  EXPECT_EQ(cl_error_name(CL_CONTEXT_TERMINATED_KHR), "CL_CONTEXT_TERMINATED_KHR");
#endif
}

TEST(cl_errors, unknown_codes_fall_back_to_the_number) {
  EXPECT_EQ(known_cl_error_name(-9999), nullptr);
  EXPECT_EQ(cl_error_name(-9999), "OpenCL error -9999");
  EXPECT_EQ(cl_error_name(5), "OpenCL error 5");
}

}  // namespace
}  // namespace ferry
