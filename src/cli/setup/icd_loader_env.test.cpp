#include "cli/setup/icd_loader_env.hpp"

#include <gtest/gtest.h>

namespace ferry::cli {
namespace {

TEST(install_layout, paths_are_relative_to_the_bin_directory) {
  install_layout layout("/opt/ferry/build/release/bin");
  EXPECT_EQ(layout.vendors_file(), "/opt/ferry/build/release/etc/OpenCL/vendors/ferry.icd");
  EXPECT_EQ(layout.client_library(), "/opt/ferry/build/release/lib/libferry.so");
  EXPECT_EQ(layout.daemon(), "/opt/ferry/build/release/bin/ferryd");
}

TEST(install_layout, running_executable_is_found) {
  auto layout = install_layout::of_running_executable();
  ASSERT_TRUE(layout) << layout.error();
  EXPECT_TRUE(layout.value().bin_dir().is_absolute());
}

TEST(icd_loader_env, sets_both_loader_variables) {
  install_layout layout("/x/bin");
  auto vars = icd_loader_variables(environment(), layout);
  EXPECT_EQ(vars, (variable_list{{"OCL_ICD_VENDORS", "/x/etc/OpenCL/vendors/ferry.icd"},
                                 {"OCL_ICD_FILENAMES", "/x/lib/libferry.so"}}));
}

TEST(icd_loader_env, keep_variable_leaves_the_loader_alone) {
  install_layout layout("/x/bin");
  EXPECT_TRUE(icd_loader_variables(environment({"FERRY_KEEP_ICD_ENV=1"}), layout).empty());
  EXPECT_EQ(icd_loader_variables(environment({"FERRY_KEEP_ICD_ENV=0"}), layout).size(), 2u);
}

TEST(icd_loader_env, cuda_variables_put_ferrys_driver_first) {
  install_layout layout("/x/bin");
  EXPECT_EQ(layout.cuda_library_dir(), "/x/lib/ferry-cuda");
  EXPECT_EQ(cuda_driver_variables(environment(), layout),
            (variable_list{{"LD_LIBRARY_PATH", "/x/lib/ferry-cuda"},
                           {"NUMBA_CUDA_DRIVER", "/x/lib/ferry-cuda/libcuda.so.1"}}));
  // A path the program had stays, behind Ferry's.
  EXPECT_EQ(cuda_driver_variables(environment({"LD_LIBRARY_PATH=/opt/lib"}), layout)[0].second,
            "/x/lib/ferry-cuda:/opt/lib");
}

}  // namespace
}  // namespace ferry::cli
