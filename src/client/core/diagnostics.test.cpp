#include "client/core/diagnostics.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "common/log.hpp"

namespace ferry::client {
namespace {

const failure_origin origin{"127.0.0.1:4000", "1a2b3c4d"};

// Keeps the warnings these tests provoke out of the test's output.
class quiet_log {
 public:
  quiet_log() : saved_(current_log_level()) { set_log_level(log_level::error); }
  ~quiet_log() { set_log_level(saved_); }

 private:
  log_level saved_;
};

TEST(diagnostics, a_reason_is_shown_only_for_the_code_it_explains) {
  clear_explanations();
  EXPECT_EQ(explanation_for(CL_INVALID_VALUE), nullptr);
  EXPECT_EQ(explain(CL_INVALID_KERNEL_NAME, "no kernel \"%s\" in program %d", "k", 12), CL_INVALID_KERNEL_NAME);
  ASSERT_NE(explanation_for(CL_INVALID_KERNEL_NAME), nullptr);
  EXPECT_STREQ(explanation_for(CL_INVALID_KERNEL_NAME), "no kernel \"k\" in program 12");
  EXPECT_EQ(explanation_for(CL_INVALID_VALUE), nullptr);
  clear_explanations();
  EXPECT_EQ(explanation_for(CL_INVALID_KERNEL_NAME), nullptr);
}

TEST(diagnostics, the_two_latest_reasons_are_kept_and_the_newest_wins) {
  clear_explanations();
  explain(CL_DEVICE_NOT_AVAILABLE, "first");
  explain(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "second");
  EXPECT_STREQ(explanation_for(CL_DEVICE_NOT_AVAILABLE), "first");
  EXPECT_STREQ(explanation_for(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST), "second");
  explain(CL_DEVICE_NOT_AVAILABLE, "third");
  EXPECT_STREQ(explanation_for(CL_DEVICE_NOT_AVAILABLE), "third");
  EXPECT_STREQ(explanation_for(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST), "second");
  explain(CL_INVALID_VALUE, "fourth");
  EXPECT_EQ(explanation_for(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST), nullptr);
  clear_explanations();
}

TEST(diagnostics, reasons_belong_to_their_thread) {
  clear_explanations();
  explain(CL_INVALID_VALUE, "here");
  std::thread([] { EXPECT_EQ(explanation_for(CL_INVALID_VALUE), nullptr); }).join();
  EXPECT_STREQ(explanation_for(CL_INVALID_VALUE), "here");
  clear_explanations();
}

TEST(diagnostics, a_long_reason_is_cut_not_overrun) {
  clear_explanations();
  const std::string long_name(1000, 'x');
  explain(CL_INVALID_KERNEL_NAME, "no kernel \"%s\"", long_name.c_str());
  const std::string kept = explanation_for(CL_INVALID_KERNEL_NAME);
  EXPECT_LT(kept.size(), 300u);
  EXPECT_TRUE(kept.starts_with("no kernel \"xxx"));
  clear_explanations();
}

TEST(diagnostics, server_failures_warn_once_per_code_kind_and_object) {
  quiet_log quiet;
  forget_reported_failures();
  EXPECT_TRUE(report_failed_reply(origin, CL_BUILD_PROGRAM_FAILURE, "build_program", "program", 7));
  EXPECT_FALSE(report_failed_reply(origin, CL_BUILD_PROGRAM_FAILURE, "build_program", "program", 7));
  EXPECT_TRUE(report_failed_reply(origin, CL_BUILD_PROGRAM_FAILURE, "build_program", "program", 8));
  EXPECT_TRUE(report_failed_reply(origin, CL_INVALID_BUILD_OPTIONS, "build_program", "program", 7));
  EXPECT_TRUE(report_failed_reply(origin, CL_BUILD_PROGRAM_FAILURE, "compile_program", "program", 7));
  EXPECT_TRUE(report_failed_command(origin, CL_OUT_OF_RESOURCES, CL_COMMAND_NDRANGE_KERNEL, 100, 3));
  EXPECT_FALSE(report_failed_command(origin, CL_OUT_OF_RESOURCES, CL_COMMAND_NDRANGE_KERNEL, 101, 3));
  EXPECT_TRUE(report_failed_command(origin, CL_OUT_OF_RESOURCES, CL_COMMAND_READ_BUFFER, 102, 3));
  EXPECT_TRUE(report_failed_command(origin, CL_OUT_OF_RESOURCES, 0, 103, 0));
  EXPECT_FALSE(report_failed_command(origin, CL_OUT_OF_RESOURCES, 0, 104, 0));
  forget_reported_failures();
}

TEST(diagnostics, the_warn_once_set_stops_growing_at_its_bound) {
  quiet_log quiet;
  forget_reported_failures();
  for (protocol::object_id id = 1; id <= max_reported_failures; ++id)
    ASSERT_TRUE(report_failed_reply(origin, CL_INVALID_VALUE, "query", "object", id)) << id;
  // Full: a new key is no longer remembered, so it never warns; known ones stay quiet.
  EXPECT_FALSE(report_failed_reply(origin, CL_INVALID_VALUE, "query", "object", max_reported_failures + 1));
  EXPECT_FALSE(report_failed_reply(origin, CL_INVALID_VALUE, "query", "object", max_reported_failures + 1));
  EXPECT_FALSE(report_failed_reply(origin, CL_INVALID_VALUE, "query", "object", 1));
  forget_reported_failures();
  EXPECT_TRUE(report_failed_reply(origin, CL_INVALID_VALUE, "query", "object", max_reported_failures + 1));
  forget_reported_failures();
}

TEST(diagnostics, command_types_are_named) {
  EXPECT_STREQ(command_type_name(CL_COMMAND_NDRANGE_KERNEL), "CL_COMMAND_NDRANGE_KERNEL");
  EXPECT_STREQ(command_type_name(CL_COMMAND_MAP_IMAGE), "CL_COMMAND_MAP_IMAGE");
  EXPECT_STREQ(command_type_name(CL_COMMAND_SVM_MIGRATE_MEM), "CL_COMMAND_SVM_MIGRATE_MEM");
  EXPECT_STREQ(command_type_name(0x7fff), "command");
}

}  // namespace
}  // namespace ferry::client
