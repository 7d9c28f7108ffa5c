// The CUDA driver entry points that Ferry's libcuda.so.1 exports but does not
// implement. Each one is a stub that logs its name once (warn, category "cuda") and
// returns CUDA_ERROR_NOT_SUPPORTED (801). A program that only looks one up still
// loads and runs; one that calls it gets CUDA's own code for "not on this
// platform" instead of a missing symbol at load time.
//
// refused.cpp says where the list came from.
#pragma once

#include <cstddef>

namespace ferry::cuda {

/// A refused entry point's stub. It declares no parameters and ignores whatever the
/// caller passed (refused.cpp says why that is sound); it returns
/// CUDA_ERROR_NOT_SUPPORTED.
using refused_function = int (*)();

/// One refused entry point.
struct refused_entry {
  /// The symbol NVIDIA's libcuda.so.1 exports ("cuMemcpy2D_v2").
  const char* exported;
  /// CUDA's base name, as cuGetProcAddress takes it ("cuMemcpy2D").
  const char* base;
  /// The CUDA version of this variant, set only where a base has implemented variants
  /// as well (cuCtxCreate_v4: 12050), so that cuGetProcAddress chooses between them;
  /// 0 means "any version".
  int since;
  refused_function function;
};

/// Every refused entry point, one row per exported symbol, the variants of one base
/// oldest first.
extern const refused_entry refused_entries[];
extern const size_t refused_entry_count;

/// A per-thread default stream name of a refused entry point ("cuMemcpy2D_v2_ptds"):
/// the same stub under a second name (cuda/abi/per_thread_stream.hpp says which).
struct refused_alias {
  const char* exported;
  refused_function function;
};
extern const refused_alias refused_per_thread_names[];
extern const size_t refused_per_thread_name_count;

/// Whether the stub of refused_entries[index] has been called in this process (it logs
/// at its first call only).
bool refused_was_called(size_t index);

}  // namespace ferry::cuda
