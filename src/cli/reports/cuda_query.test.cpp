#include "cli/reports/cuda_query.hpp"

#include <gtest/gtest.h>

namespace ferry::cli {
namespace {

TEST(cuda_report, lists_each_device_with_its_capability_and_memory) {
  cuda_listing listing;
  listing.devices.push_back({0, "NVIDIA H100 80GB HBM3", 9, 0, 132, std::uint64_t{80} << 30});
  listing.devices.push_back({1, "Ferry fake CUDA device 0", 8, 0, 4, std::uint64_t{1} << 30});
  const std::string text = render_cuda_report(listing);
  EXPECT_NE(text.find("[cuda 0] NVIDIA H100 80GB HBM3, compute capability 9.0, 132 multiprocessors"), std::string::npos)
      << text;
  EXPECT_NE(text.find("[cuda 1] Ferry fake CUDA device 0, compute capability 8.0"), std::string::npos) << text;
}

TEST(cuda_report, says_why_there_is_none) {
  EXPECT_EQ(render_cuda_report({{}, "no server has a CUDA device"}), "CUDA: none (no server has a CUDA device)\n");
}

TEST(cuda_query, a_missing_library_is_named) {
  cuda_listing listing = query_cuda_devices("/nonexistent/ferry-cuda/libcuda.so.1");
  EXPECT_TRUE(listing.devices.empty());
  EXPECT_NE(listing.problem.find("cannot load /nonexistent/ferry-cuda/libcuda.so.1"), std::string::npos)
      << listing.problem;
}

}  // namespace
}  // namespace ferry::cli
