#include "server/session/object_table.hpp"

#include <algorithm>
#include <vector>

#include "common/log.hpp"

namespace ferry::server {

std::atomic<int64_t> object_table::total_{0};

const char* kind_name(object_kind kind) {
  switch (kind) {
    case object_kind::context: return "context";
    case object_kind::queue: return "queue";
    case object_kind::mem: return "buffer";
    case object_kind::program: return "program";
    case object_kind::kernel: return "kernel";
    case object_kind::event: return "event";
    case object_kind::sampler: return "sampler";
    case object_kind::svm: return "svm allocation";
  }
  return "?";
}

void free_svm_block(const native::api& api, svm_block* block) {
  if (block->buffers.load() != 0) {
    FERRY_WARN("objects", "SVM allocation of %llu bytes still backs %u native buffer(s); left allocated",
               static_cast<unsigned long long>(block->size), block->buffers.load());
    return;
  }
  for (cl_event fence : block->fences) api.clReleaseEvent(fence);
  api.clSVMFree(block->context, block->pointer);
  api.clReleaseContext(block->context);
  delete block;
}

bool object_table::insert(object_id id, const object_entry& entry) {
  auto [it, inserted] = entries_.try_emplace(id, entry);
  if (inserted) {
    total_.fetch_add(1, std::memory_order_relaxed);
    memory_ += entry.device_bytes;
  }
  return inserted;
}

object_table::found object_table::find(object_id id, object_kind kind, cl_int missing) const {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.kind != kind) return found(missing);
  if (it->second.error != CL_SUCCESS) return found(it->second.error);
  return found(it->second);
}

object_entry* object_table::find_mutable(object_id id) {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second;
}

void object_table::release_native(const object_entry& entry) {
  if (entry.handle == nullptr) return;
  switch (entry.kind) {
    case object_kind::context: api_.clReleaseContext(entry.as_context()); break;
    case object_kind::queue: api_.clReleaseCommandQueue(entry.as_queue()); break;
    case object_kind::mem: api_.clReleaseMemObject(entry.as_mem()); break;
    case object_kind::program: api_.clReleaseProgram(entry.as_program()); break;
    case object_kind::kernel: api_.clReleaseKernel(entry.as_kernel()); break;
    case object_kind::event: api_.clReleaseEvent(entry.as_event()); break;
    case object_kind::sampler: api_.clReleaseSampler(entry.as_sampler()); break;
    case object_kind::svm: free_svm_block(api_, entry.as_svm()); break;
  }
}

bool object_table::erase(object_id id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  object_entry entry = it->second;
  entries_.erase(it);
  total_.fetch_sub(1, std::memory_order_relaxed);
  memory_ -= entry.device_bytes;
  FERRY_TRACE("objects", "releasing %s %llu", kind_name(entry.kind), static_cast<unsigned long long>(id));
  release_native(entry);
  return true;
}

bool object_table::take(object_id id, object_entry& out) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  out = it->second;
  entries_.erase(it);
  total_.fetch_sub(1, std::memory_order_relaxed);
  memory_ -= out.device_bytes;
  return true;
}

void object_table::release_all() {
  if (entries_.empty()) return;
  // Dependents first, so that each release is the last reference where it can be.
  static constexpr object_kind order[] = {object_kind::event,   object_kind::kernel, object_kind::sampler,
                                          object_kind::program, object_kind::mem,    object_kind::svm,
                                          object_kind::queue,   object_kind::context};
  std::vector<std::pair<int, object_entry>> all;
  all.reserve(entries_.size());
  for (auto& [id, entry] : entries_) {
    int rank = static_cast<int>(std::find(std::begin(order), std::end(order), entry.kind) - std::begin(order));
    all.emplace_back(rank, entry);
  }
  total_.fetch_sub(static_cast<int64_t>(entries_.size()), std::memory_order_relaxed);
  entries_.clear();
  memory_ = 0;
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [rank, entry] : all) release_native(entry);
}

}  // namespace ferry::server
