#include "transfer/transfer_events.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "transfer/first_device.test.hpp"

namespace ferry::transfer {
namespace {

cl_int status_of(cl_event e) {
  cl_int status = CL_QUEUED;
  EXPECT_EQ(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr), CL_SUCCESS);
  return status;
}

class transfer_events_test : public first_device_test {
 protected:
  cl_event user_event() {
    cl_int rc = CL_SUCCESS;
    cl_event e = clCreateUserEvent(context_, &rc);
    EXPECT_EQ(rc, CL_SUCCESS);
    return e;
  }
};

TEST_F(transfer_events_test, later_commands_of_an_in_order_queue_wait_for_the_transfer) {
  transfer_events events;
  ASSERT_EQ(events.create(queue_, context_, device_, true, 0, nullptr, true), CL_SUCCESS);
  ASSERT_EQ(events.wait_for_start(), CL_SUCCESS);
  cl_event later = nullptr;
  ASSERT_EQ(clEnqueueMarkerWithWaitList(queue_, 0, nullptr, &later), CL_SUCCESS);
  clFlush(queue_);
  cl_event returned = events.returned_reference();
  EXPECT_GT(status_of(later), CL_COMPLETE) << "ran before the transfer ended";
  EXPECT_GT(status_of(returned), CL_COMPLETE);
  events.finish(CL_COMPLETE);
  ASSERT_EQ(clWaitForEvents(1, &later), CL_SUCCESS);
  ASSERT_EQ(clWaitForEvents(1, &returned), CL_SUCCESS);
  EXPECT_EQ(status_of(returned), CL_COMPLETE);
  // A real command's event: its context, and profiling from its own queue.
  cl_context context = nullptr;
  ASSERT_EQ(clGetEventInfo(returned, CL_EVENT_CONTEXT, sizeof context, &context, nullptr), CL_SUCCESS);
  EXPECT_EQ(context, context_);
  cl_ulong queued = 0, end = 0;
  ASSERT_EQ(clGetEventProfilingInfo(returned, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(clGetEventProfilingInfo(returned, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr), CL_SUCCESS);
  EXPECT_LE(queued, end);
  clReleaseEvent(returned);
  clReleaseEvent(later);
}

TEST_F(transfer_events_test, a_failed_transfer_fails_its_event_and_nothing_else_in_the_queue) {
  transfer_events events;
  ASSERT_EQ(events.create(queue_, context_, device_, true, 0, nullptr, true), CL_SUCCESS);
  cl_event later = nullptr;
  ASSERT_EQ(clEnqueueMarkerWithWaitList(queue_, 0, nullptr, &later), CL_SUCCESS);
  cl_event returned = events.returned_reference();
  events.finish(CL_INVALID_VALUE);
  clWaitForEvents(1, &returned);
  EXPECT_LT(status_of(returned), 0);
  ASSERT_EQ(clWaitForEvents(1, &later), CL_SUCCESS);
  EXPECT_EQ(status_of(later), CL_COMPLETE);
  clReleaseEvent(returned);
  clReleaseEvent(later);
}

TEST_F(transfer_events_test, the_transfer_starts_after_its_wait_list_and_learns_of_a_failed_one) {
  cl_event first = user_event(), second = user_event();
  {
    transfer_events events;
    ASSERT_EQ(events.create(queue_, context_, device_, true, 1, &first, true), CL_SUCCESS);
    clSetUserEventStatus(first, CL_COMPLETE);
    EXPECT_EQ(events.wait_for_start(), CL_SUCCESS);
    events.finish(CL_COMPLETE);
  }
  {
    transfer_events events;
    ASSERT_EQ(events.create(queue_, context_, device_, true, 1, &second, false), CL_SUCCESS);
    clSetUserEventStatus(second, -123);
    EXPECT_EQ(events.wait_for_start(), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    events.finish(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  }
  clReleaseEvent(first);
  clReleaseEvent(second);
  EXPECT_EQ(clFinish(queue_), CL_SUCCESS);
}

TEST_F(transfer_events_test, an_unfinished_transfer_ends_its_events_when_dropped) {
  cl_event returned = nullptr;
  {
    transfer_events events;
    ASSERT_EQ(events.create(queue_, context_, device_, true, 0, nullptr, true), CL_SUCCESS);
    returned = events.returned_reference();
  }
  ASSERT_NE(returned, nullptr);
  clWaitForEvents(1, &returned);
  EXPECT_LT(status_of(returned), 0);
  EXPECT_EQ(clFinish(queue_), CL_SUCCESS) << "the queue must not wait forever";
  clReleaseEvent(returned);
}

}  // namespace
}  // namespace ferry::transfer
