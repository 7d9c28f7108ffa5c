#include "server/native/event_parking.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace ferry::server::native {
namespace {

// A context and an in-order queue on the host's first OpenCL device (PoCL here).
class event_parking : public ::testing::Test {
 protected:
  void SetUp() override {
    cl_uint platforms = 0;
    ASSERT_EQ(::clGetPlatformIDs(0, nullptr, &platforms), CL_SUCCESS);
    std::vector<cl_platform_id> ids(platforms);
    ASSERT_EQ(::clGetPlatformIDs(platforms, ids.data(), nullptr), CL_SUCCESS);
    cl_device_id device = nullptr;
    for (cl_platform_id id : ids)
      if (::clGetDeviceIDs(id, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS) break;
    ASSERT_NE(device, nullptr) << "no OpenCL device";
    cl_int rc = CL_SUCCESS;
    context_ = ::clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
    ASSERT_EQ(rc, CL_SUCCESS);
    queue_ = ::clCreateCommandQueueWithProperties(context_, device, nullptr, &rc);
    ASSERT_EQ(rc, CL_SUCCESS);
  }
  void TearDown() override {
    if (queue_) ::clReleaseCommandQueue(queue_);
    if (context_) ::clReleaseContext(context_);
  }

  cl_event user_event() {
    cl_int rc = CL_SUCCESS;
    cl_event e = ::clCreateUserEvent(context_, &rc);
    EXPECT_EQ(rc, CL_SUCCESS);
    return e;
  }

  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
};

TEST_F(event_parking, a_completed_event_is_released_at_once) {
  const size_t before = parked_event_count();
  cl_event done = user_event();
  ASSERT_EQ(::clSetUserEventStatus(done, CL_COMPLETE), CL_SUCCESS);
  EXPECT_EQ(release_event_when_safe(done), CL_SUCCESS);
  EXPECT_EQ(parked_event_count(), before);
}

TEST_F(event_parking, a_command_failed_by_one_wait_event_stays_parked_until_the_teardown) {
  const size_t before = parked_event_count();
  cl_event failing = user_event();
  cl_event pending = user_event();
  const cl_event waits[] = {failing, pending};
  cl_event marker = nullptr;
  ASSERT_EQ(::clEnqueueMarkerWithWaitList(queue_, 2, waits, &marker), CL_SUCCESS);
  ASSERT_EQ(::clFlush(queue_), CL_SUCCESS);
  ASSERT_EQ(::clSetUserEventStatus(failing, -5), CL_SUCCESS);
  // The marker's last reference: PoCL 3.1 would free it while `pending`
  // still lists it, and setting `pending` would then abort the process.
  EXPECT_EQ(release_event_when_safe(marker), CL_SUCCESS);
  EXPECT_EQ(release_event_when_safe(failing), CL_SUCCESS);
  EXPECT_EQ(parked_event_count(), before + 2);
  ASSERT_EQ(::clSetUserEventStatus(pending, CL_COMPLETE), CL_SUCCESS);
  EXPECT_EQ(release_event_when_safe(pending), CL_SUCCESS);
  EXPECT_EQ(parked_event_count(), before + 2) << "a completed event never parks";
  ASSERT_EQ(::clFinish(queue_), CL_SUCCESS);
  release_parked_events(context_);
  EXPECT_EQ(parked_event_count(), before);
}

TEST_F(event_parking, an_event_released_before_it_ends_is_released_once_it_completed) {
  const size_t before = parked_event_count();
  cl_event gate = user_event();
  EXPECT_EQ(release_event_when_safe(gate), CL_SUCCESS);
  EXPECT_EQ(parked_event_count(), before + 1);
  // Still valid: the parked reference keeps it.
  ASSERT_EQ(::clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  release_parked_events(context_);
  EXPECT_EQ(parked_event_count(), before);
}

TEST_F(event_parking, an_invalid_event_gets_the_platforms_error) {
  EXPECT_EQ(release_event_when_safe(nullptr), CL_INVALID_EVENT);
}

}  // namespace
}  // namespace ferry::server::native
