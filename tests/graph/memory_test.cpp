// Virtual images share buffers by live range (runtime/memory_plan.cpp): a
// buffer passes to a later image only once every reader of the image before
// has run. A graph whose first intermediate is read again at the end checks
// that no later intermediate takes its buffer early, fused and unfused.
#include "reference.hpp"
#include "vx_test_support.hpp"

#include <VX/vx.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace ref = ferry::graph::reference;
using namespace ferry::graph::testing;

namespace {

class vx_memory : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    setenv("FERRY_VX_FUSION", GetParam(), 1);
    context_ = vxCreateContext();
    ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(context_)), VX_SUCCESS);
  }
  void TearDown() override {
    unsetenv("FERRY_VX_FUSION");
    EXPECT_EQ(vxReleaseContext(&context_), VX_SUCCESS);
  }
  vx_context context_ = nullptr;
};

TEST_P(vx_memory, an_intermediate_read_at_the_end_keeps_its_buffer_until_then) {
  ref::image in = random_image(129, 67, ref::pixel_format::u8, 91);
  vx_image input = make_image(context_, in);
  vx_image output = vxCreateImage(context_, 129, 67, VX_DF_IMAGE_U8);
  vx_graph graph = vxCreateGraph(context_);
  vx_image v[5];
  for (vx_image& image : v) image = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
  // v0 = ~in, v1 = ~v0, v2 = ~v1 (= v0), v3 = ~v2, v4 = ~v3 (= v0); out = v0 + v4 saturated.
  vx_node nodes[] = {vxNotNode(graph, input, v[0]),  vxNotNode(graph, v[0], v[1]), vxNotNode(graph, v[1], v[2]),
                     vxNotNode(graph, v[2], v[3]),   vxNotNode(graph, v[3], v[4]),
                     vxAddNode(graph, v[0], v[4], VX_CONVERT_POLICY_SATURATE, output)};
  for (vx_node node : nodes) ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
  ASSERT_EQ(vxVerifyGraph(graph), VX_SUCCESS);
  ref::image inverted = ref::not_(in);
  ref::image want = ref::add(inverted, inverted, ref::convert_policy::saturate, ref::pixel_format::u8);
  for (int run = 0; run < 2; ++run) {
    ASSERT_EQ(vxProcessGraph(graph), VX_SUCCESS);
    expect_near(read_image(output, ref::pixel_format::u8), want, {0, 0, 129, 67}, 0,
                std::string("fusion ") + GetParam() + ", run " + std::to_string(run));
  }
  for (vx_node& node : nodes) vxReleaseNode(&node);
  for (vx_image& image : v) vxReleaseImage(&image);
  vxReleaseImage(&input);
  vxReleaseImage(&output);
  vxReleaseGraph(&graph);
}

INSTANTIATE_TEST_SUITE_P(fusion, vx_memory, ::testing::Values("0", "1"));

}  // namespace
