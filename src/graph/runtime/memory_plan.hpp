// Where the images a graph writes live (the paper's memory planning): an image
// the application can see keeps memory of its own; virtual images share
// buffers by live range, first fit, among those of one format and size, so a
// chain of unfused nodes uses two buffers for its intermediates however long
// it is. Images fusion keeps in local memory get none (fusion.hpp).
#pragma once

#include <VX/vx.h>

#include <vector>

namespace ferry::graph {

/// Gives memory to every image output of `order` (the schedule) but those in
/// `internal`; returns the first failure (VX_ERROR_INVALID_FORMAT for an
/// image whose format or size nothing settled).
vx_status place_images(const std::vector<vx_node>& order, const std::vector<vx_image>& internal);

}  // namespace ferry::graph
