// Buffers and sub-buffers on every server of their context (posted: the id
// is ours, so nothing waits). Initial contents go to the first server, which
// then holds the only current copy.
#pragma once

#include <cstddef>

#include "client/core/memory/svm_registry.hpp"
#include "client/core/objects.hpp"

namespace ferry::client {

/// Whether the application gave a property list (only an empty one is
/// accepted), which CL_MEM_PROPERTIES reports.
enum class property_list { absent, empty };

/// A buffer of `c` with the checked `flags` (an access flag included);
/// `host_ptr` as the flags say. With `svm` (a CL_MEM_USE_HOST_PTR pointer
/// into that allocation) the server's buffer stands on the native
/// allocation.
cl_mem create_buffer_on_servers(cl_context c, cl_mem_flags flags, size_t size, void* host_ptr, svm_ref svm,
                                property_list properties);

/// A sub-buffer of `parent` over `region`, with the checked `flags` (those
/// not given inherited from the parent).
cl_mem create_sub_buffer_on_servers(cl_mem parent, cl_mem_flags flags, const cl_buffer_region& region);

}  // namespace ferry::client
