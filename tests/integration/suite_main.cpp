// main() of every integration executable: either a child entry point (spawn_self) or the
// gtest run, with the suite's daemon and loader environment set up before any test.
#include <gtest/gtest.h>

#include "daemon.hpp"

int main(int argc, char** argv) {
  if (auto rc = ferry::test::run_child_if_requested(argc, argv)) return *rc;
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new ferry::test::suite_environment);
  return RUN_ALL_TESTS();
}
