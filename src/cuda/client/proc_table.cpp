#include "cuda/client/proc_table.hpp"

#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/log.hpp"
#include "cuda/abi/driver_abi.hpp"
#include "cuda/client/refused.hpp"

namespace ferry::cuda {
namespace {

// One function a base name may resolve to.
struct candidate {
  int since;  // refused variants: 0 means any version
  void* function;
  bool implemented;
};

using base_index = std::unordered_map<std::string_view, std::vector<candidate>>;

struct registry {
  std::mutex mutex;  // guards table, index and indexed
  std::span<const proc_variant> table;
  base_index index;  // both tables by base name, built at the first lookup after a change
  bool indexed = false;
};

registry& proc_registry() {
  static registry r;
  return r;
}

base_index build_index(std::span<const proc_variant> table) {
  base_index index;
  for (const proc_variant& v : table) index[v.base].push_back({v.since, v.function, true});
  for (size_t i = 0; i < refused_entry_count; ++i) {
    const refused_entry& r = refused_entries[i];
    index[r.base].push_back({r.since, reinterpret_cast<void*>(r.function), false});
  }
  return index;
}

struct choice {
  void* function;
  int status;
};

choice choose(const std::vector<candidate>& candidates, int version) {
  const candidate* best = nullptr;         // the newest variant the caller's version admits
  const candidate* any_version = nullptr;  // the newest refused variant without a version
  bool implemented = false;
  for (const candidate& c : candidates) {
    implemented |= c.implemented;
    if (!c.implemented && c.since == 0) {
      any_version = &c;  // the refused table lists a base's variants oldest first
      continue;
    }
    if (c.since > version) continue;
    if (!best || c.since > best->since || (c.since == best->since && c.implemented && !best->implemented))
      best = &c;
  }
  if (best) return {best->function, CU_GET_PROC_ADDRESS_SUCCESS};
  // A base Ferry refuses whatever the version: its stub answers every caller.
  if (!implemented && any_version) return {any_version->function, CU_GET_PROC_ADDRESS_SUCCESS};
  return {nullptr, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT};
}

}  // namespace

void set_implemented(const proc_variant* table, size_t count) {
  registry& r = proc_registry();
  std::lock_guard lock(r.mutex);
  r.table = std::span<const proc_variant>(table, table ? count : 0);
  r.indexed = false;
}

std::span<const proc_variant> implemented_variants() {
  registry& r = proc_registry();
  std::lock_guard lock(r.mutex);
  return r.table;
}

int get_proc_address(const char* symbol, void** pfn, int version, unsigned long long flags, int* status) {
  // Whatever the outcome, a caller that ignores the result finds no function
  // unless one was found (cuda-bindings ignores it and tests the pointer).
  if (pfn) *pfn = nullptr;
  // CUDA_ERROR_INVALID_VALUE for a NULL symbol or pfn
  if (!symbol || !pfn) {
    FERRY_DEBUG("cuda", "cuGetProcAddress: CUDA_ERROR_INVALID_VALUE: %s is NULL", symbol ? "pfn" : "symbol");
    return CUDA_ERROR_INVALID_VALUE;
  }
  // "If the specified CUDA version is greater than the driver version, the API will
  // return CUDA_ERROR_INVALID_VALUE."
  if (version > driver_version) {
    FERRY_DEBUG("cuda", "cuGetProcAddress(%s): CUDA_ERROR_INVALID_VALUE: version %d is newer than the driver's %d",
                symbol, version, driver_version);
    return CUDA_ERROR_INVALID_VALUE;
  }
  // flags: CU_GET_PROC_ADDRESS_DEFAULT, _LEGACY_STREAM or _PER_THREAD_DEFAULT_STREAM.
  // Ferry treats the per-thread default stream as the legacy one: each stream-ordered
  // entry point has one implementation, whose default stream is the legacy stream,
  // so every flag gets the same functions.
  if (flags != CU_GET_PROC_ADDRESS_DEFAULT && flags != CU_GET_PROC_ADDRESS_LEGACY_STREAM &&
      flags != CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
    FERRY_DEBUG("cuda", "cuGetProcAddress(%s): CUDA_ERROR_INVALID_VALUE: flags %#llx", symbol, flags);
    return CUDA_ERROR_INVALID_VALUE;
  }

  choice found{nullptr, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND};
  {
    registry& r = proc_registry();
    std::lock_guard lock(r.mutex);
    if (!r.indexed) {
      r.index = build_index(r.table);
      r.indexed = true;
    }
    if (auto it = r.index.find(symbol); it != r.index.end()) found = choose(it->second, version);
  }
  // "The API will return CUDA_SUCCESS and set the returned pfn to NULL if the
  // requested driver function is not supported on the platform, no ABI compatible
  // driver function exists for the specified cudaVersion or if the driver symbol is
  // invalid."
  if (found.status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)
    FERRY_DEBUG("cuda", "cuGetProcAddress(%s): no such driver entry point", symbol);
  else if (found.status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)
    FERRY_DEBUG("cuda", "cuGetProcAddress(%s): no variant for CUDA version %d", symbol, version);
  *pfn = found.function;
  if (status) *status = found.status;
  return CUDA_SUCCESS;
}

}  // namespace ferry::cuda
