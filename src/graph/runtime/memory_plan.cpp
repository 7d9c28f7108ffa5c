#include "graph/runtime/memory_plan.hpp"

#include "common/log.hpp"
#include "graph/core/image.hpp"
#include "graph/core/node.hpp"

#include <algorithm>
#include <map>
#include <memory>

namespace ferry::graph {
namespace {

struct live_range {
  vx_image image;
  size_t first, last;  // positions in the schedule: its writer, its last reader
};

struct pooled_buffer {
  std::shared_ptr<image_memory> memory;
  vx_df_image format;
  vx_uint32 width, height;
  size_t busy_until;  // the last position an image using it is live
};

}  // namespace

vx_status place_images(const std::vector<vx_node>& order, const std::vector<vx_image>& internal) {
  auto is_internal = [&](vx_image image) { return std::find(internal.begin(), internal.end(), image) != internal.end(); };
  std::map<vx_image, live_range> ranges;
  for (size_t n = 0; n < order.size(); ++n) {
    vx_node node = order[n];
    for (vx_uint32 i = 0; i < node->parameters.size(); ++i) {
      vx_reference ref = node->parameters[i];
      if (ref == nullptr || ref->type != VX_TYPE_IMAGE) continue;
      auto* image = reinterpret_cast<vx_image>(ref);
      if (is_output(node, i)) {
        if (is_internal(image)) {
          image->memory.reset();  // placed by a verification before, when it was not fused away
          continue;
        }
        if (!image->is_virtual || image->parent != nullptr) {
          vx_status status = realize_image(image);
          if (status != VX_SUCCESS) return status;
          continue;
        }
        ranges.emplace(image, live_range{image, n, n});
      } else if (auto found = ranges.find(image); found != ranges.end()) {
        found->second.last = n;
      }
    }
  }
  // First fit in the order the images come to life; a virtual image's
  // contents never outlive its graph's run, so a buffer passes on as soon as
  // its last reader has run.
  std::vector<live_range> by_start;
  for (auto& [image, range] : ranges) by_start.push_back(range);
  std::sort(by_start.begin(), by_start.end(), [](const live_range& a, const live_range& b) { return a.first < b.first; });
  std::vector<pooled_buffer> pool;
  for (const live_range& range : by_start) {
    vx_image image = range.image;
    image->memory.reset();  // a verification before may have placed it elsewhere
    auto fits = [&](const pooled_buffer& b) {
      return b.format == image->format && b.width == image->width && b.height == image->height &&
             b.busy_until < range.first;
    };
    auto free = std::find_if(pool.begin(), pool.end(), fits);
    if (free != pool.end()) {
      image->memory = free->memory;
      image->valid = {0, 0, image->width, image->height};
      free->busy_until = range.last;
      continue;
    }
    vx_status status = realize_image(image);
    if (status != VX_SUCCESS) return status;
    pool.push_back({image->memory, image->format, image->width, image->height, range.last});
  }
  if (!by_start.empty())
    FERRY_DEBUG("vx", "%zu virtual images in %zu buffers", by_start.size(), pool.size());
  return VX_SUCCESS;
}

}  // namespace ferry::graph
