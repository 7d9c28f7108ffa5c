// cuGetProcAddress's lookup: from CUDA's base name of an entry point ("cuMemAlloc")
// and the CUDA version a caller was built for, to the exported variant that caller
// expects (cuMemAlloc_v2 for 3.2 and later). docs/cuda.md 2.1-2.2 says who asks and
// how; NVIDIA's cuGetProcAddress documentation says what the answers mean.
//
// Two tables answer: the variants Ferry implements (entry_points.cpp registers them)
// and the refused entry points (refused.hpp), whose stubs return
// CUDA_ERROR_NOT_SUPPORTED.
#pragma once

#include <cstddef>
#include <span>

namespace ferry::cuda {

/// One exported variant of an entry point: CUDA's base name ("cuMemAlloc"), the
/// CUDA version that introduced this variant (cuMemAlloc_v2: 3020), and the function.
struct proc_variant {
  const char* base;
  int since;
  void* function;
};

/// Registers the implemented variants (entry_points.cpp calls it once with its table).
///
/// The caller supplies each variant's `since`: the CUDA version (1000 * major + 10 *
/// minor) whose ABI that variant is, the number NVIDIA's cudaTypedefs.h writes in
/// `PFN_<base>_v<since>` (cuMemAlloc 2000 and cuMemAlloc_v2 3020, cuCtxDestroy 2000
/// and cuCtxDestroy_v2 4000, cuLaunchKernel 4000, cuInit 2000). A base may have several
/// variants; no two of one base may share a `since`. The table must outlive every
/// lookup (a static array does); a later call replaces the earlier table.
void set_implemented(const proc_variant* table, size_t count);

/// The table set_implemented registered last; empty before the first call. (Tests
/// that register a fake table put this one back afterwards.)
std::span<const proc_variant> implemented_variants();

/// cuGetProcAddress_v2's answer: looks `symbol` (a base name) up among the implemented
/// variants: the newest variant with since <= version. No such variant but the name is
/// known (implemented with a newer since only) -> *pfn = NULL, status
/// VERSION_NOT_SUFFICIENT, CUDA_SUCCESS. Unknown to the implemented table but in the
/// refused table -> the refused stub (calling it gives CUDA_ERROR_NOT_SUPPORTED), status
/// SUCCESS, whatever the version. Unknown everywhere -> NULL, SYMBOL_NOT_FOUND,
/// CUDA_SUCCESS.
///
/// Where a base has both implemented and refused variants (cuCtxCreate: _v2 is
/// implemented, _v3 and _v4 are refused), the refused ones take part in the version
/// choice with their own `since`: a caller built for CUDA 12.5 or later gets the
/// cuCtxCreate_v4 stub (it would call with v4's arguments), not cuCtxCreate_v2.
///
/// Errors, each CUDA_ERROR_INVALID_VALUE, with *pfn set to NULL where pfn is not NULL
/// and status left alone: symbol or pfn NULL; version greater than the driver version
/// Ferry reports (13000), as NVIDIA's documentation says; flags other than
/// CU_GET_PROC_ADDRESS_DEFAULT (0), _LEGACY_STREAM (1) or _PER_THREAD_DEFAULT_STREAM (2).
/// All three flags give the same functions. status may be NULL.
int get_proc_address(const char* symbol, void** pfn, int version, unsigned long long flags, int* status);

}  // namespace ferry::cuda
