// The transfer layer's unit tests run on the host's first OpenCL device
// (PoCL here): a context and an in-order queue on it.
#pragma once

#include <CL/cl.h>
#include <gtest/gtest.h>

#include <vector>

namespace ferry::transfer {

class first_device_test : public ::testing::Test {
 protected:
  void SetUp() override {
    cl_uint platforms = 0;
    ASSERT_EQ(clGetPlatformIDs(0, nullptr, &platforms), CL_SUCCESS);
    std::vector<cl_platform_id> ids(platforms);
    ASSERT_EQ(clGetPlatformIDs(platforms, ids.data(), nullptr), CL_SUCCESS);
    for (cl_platform_id id : ids)
      if (clGetDeviceIDs(id, CL_DEVICE_TYPE_ALL, 1, &device_, nullptr) == CL_SUCCESS) break;
    ASSERT_NE(device_, nullptr) << "no OpenCL device";
    cl_int rc = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &rc);
    ASSERT_EQ(rc, CL_SUCCESS);
    queue_ = clCreateCommandQueueWithProperties(context_, device_, nullptr, &rc);
    ASSERT_EQ(rc, CL_SUCCESS);
  }
  void TearDown() override {
    if (queue_) clReleaseCommandQueue(queue_);
    if (context_) clReleaseContext(context_);
  }

  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
};

}  // namespace ferry::transfer
