#include "client/core/memory/content_size.hpp"

#include <mutex>

#include "client/core/memory/placement.hpp"

namespace ferry::client {

void pair_content_size(memory* buffer, memory* content_size_buffer) {
  memory* root = root_of(buffer);
  retain_internal(content_size_buffer);
  cl_mem previous;
  {
    std::lock_guard lock(root->placement_mutex);
    previous = root->content_size;
    root->content_size = content_size_buffer;
  }
  if (previous) release_internal(previous);
  // Every server of the context learns the pairing: reads to the host there
  // send only the meaningful prefix.
  post_each(buffer->context->servers, protocol::set_content_size{root->id, content_size_buffer->id});
}

}  // namespace ferry::client
