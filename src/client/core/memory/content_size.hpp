// cl_pocl_content_size: a buffer paired with a buffer that holds how many of
// its bytes are meaningful, so that reads to the host send only those.
#pragma once

#include "client/core/objects.hpp"

namespace ferry::client {

/// Pairs `buffer` (its root) with `content_size_buffer`, here and on every
/// server of the context.
void pair_content_size(memory* buffer, memory* content_size_buffer);

}  // namespace ferry::client
