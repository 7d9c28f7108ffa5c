// The life of an SVM allocation: made on the context's server first (its
// answer names the native address, where the host block goes when this
// process has it free), freed when the client is done with it.
#pragma once

#include <cstddef>

#include "client/core/objects.hpp"

namespace ferry::client {

/// The largest OpenCL data type (long16, double16): the default alignment of
/// an allocation and the largest one an application may ask for. Host blocks
/// and native allocations are always aligned this much, so an offset keeps
/// every alignment the application can rely on.
inline constexpr size_t largest_type_size = 128;

/// A coarse-grained allocation of `size` bytes in `c` (one server) with the
/// checked `flags`; its host block, or NULL when the server or this process
/// has no memory for it.
void* allocate_svm(cl_context c, cl_svm_mem_flags flags, size_t size);

/// Frees the allocation of `c` at `pointer`: the server frees the native
/// memory once no command can use it any more. Anything but the pointer of
/// an allocation of `c` is ignored (`c` is compared, never dereferenced).
void free_svm(cl_context c, void* pointer);

}  // namespace ferry::client
