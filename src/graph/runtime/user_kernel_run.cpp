#include "graph/runtime/user_kernel_run.hpp"

#include "graph/core/context.hpp"
#include "graph/core/image.hpp"
#include "graph/core/kernel.hpp"
#include "graph/core/node.hpp"

#include <cstdlib>

namespace ferry::graph {
namespace {

image_memory* memory_of(vx_reference ref) {
  if (ref == nullptr || ref->type != VX_TYPE_IMAGE) return nullptr;
  vx_uint32 x, y;
  vx_image root = memory_root(reinterpret_cast<vx_image>(ref), x, y);
  return root->memory.get();
}

}  // namespace

vx_status initialize_user_node(vx_node node) {
  vx_kernel kernel = node->kernel;
  if (kernel->initialize != nullptr) {
    vx_status status = kernel->initialize(node, node->parameters.data(), static_cast<vx_uint32>(node->parameters.size()));
    if (status != VX_SUCCESS) {
      add_log(node, status, "node %s: the user kernel's initializer failed (%d)", kernel->name.c_str(), status);
      return status;
    }
  }
  // Local data the kernel or the node asked for and nobody gave.
  if (node->local_data_size > 0 && node->local_data == nullptr) {
    node->local_data = std::calloc(1, node->local_data_size);
    if (node->local_data == nullptr) return VX_ERROR_NO_MEMORY;
    node->local_data_owned = true;
  }
  return VX_SUCCESS;
}

void deinitialize_user_node(vx_node node) {
  vx_kernel kernel = node->kernel;
  if (kernel->deinitialize != nullptr)
    kernel->deinitialize(node, node->parameters.data(), static_cast<vx_uint32>(node->parameters.size()));
  if (node->local_data_owned) {
    std::free(node->local_data);
    node->local_data = nullptr;
    node->local_data_owned = false;
  }
}

vx_status run_user_kernel(vx_node node) {
  vx_kernel kernel = node->kernel;
  for (vx_reference ref : node->parameters) {
    image_memory* memory = memory_of(ref);
    if (memory == nullptr) continue;
    cl_int status = memory->to_host(memory->last_queue);
    if (status != CL_SUCCESS) {
      add_log(node, VX_FAILURE, "node %s: an image could not be read back from the device (%d)",
              kernel->name.c_str(), status);
      return VX_FAILURE;
    }
  }
  vx_status status = kernel->function(node, node->parameters.data(), static_cast<vx_uint32>(node->parameters.size()));
  for (vx_uint32 i = 0; i < node->parameters.size(); ++i) {
    if (kernel->parameters[i].direction != VX_OUTPUT) continue;
    image_memory* memory = memory_of(node->parameters[i]);
    if (memory != nullptr) memory->host_written();
  }
  if (status != VX_SUCCESS)
    add_log(node, status, "node %s: the user kernel failed (%d)", kernel->name.c_str(), status);
  return status;
}

}  // namespace ferry::graph
