#include "client/core/memory/host_mirror.hpp"

#include <algorithm>
#include <cstring>

namespace ferry::client {

host_mirror::host_mirror(void* host, size_t size)
    : host_(static_cast<uint8_t*>(host)), size_(size), shadow_(host_, host_ + size) {}

std::vector<host_mirror::range> host_mirror::take_host_changes() {
  std::vector<range> changed;
  for (size_t offset = 0; offset < size_; offset += page_size) {
    const size_t n = std::min(page_size, size_ - offset);
    if (std::memcmp(host_ + offset, shadow_.data() + offset, n) == 0) continue;
    std::memcpy(shadow_.data() + offset, host_ + offset, n);
    if (!changed.empty() && changed.back().offset + changed.back().size == offset) changed.back().size += n;
    else changed.push_back({offset, n});
  }
  return coalesce_ranges(std::move(changed), merge_gap, max_ranges);
}

size_t host_mirror::merge_server_bytes(std::vector<uint8_t>& server) {
  if (server.size() != size_) return 0;  // not this buffer's bytes: nothing to apply
  size_t written = 0;
  for (size_t offset = 0; offset < size_; offset += page_size) {
    const size_t n = std::min(page_size, size_ - offset);
    if (std::memcmp(server.data() + offset, shadow_.data() + offset, n) == 0) continue;
    std::memcpy(host_ + offset, server.data() + offset, n);
    written += n;
  }
  // Every page of the server's bytes is what the server holds now, changed or
  // not: they are the new shadow.
  shadow_.swap(server);
  return written;
}

std::vector<host_mirror::range> coalesce_ranges(std::vector<host_mirror::range> ranges, size_t gap,
                                                size_t max_count) {
  std::vector<host_mirror::range> out;
  for (const auto& r : ranges) {
    if (!out.empty() && r.offset - (out.back().offset + out.back().size) < gap)
      out.back().size = r.offset + r.size - out.back().offset;
    else
      out.push_back(r);
  }
  while (out.size() > max_count && max_count > 0) {
    size_t best = 0;
    size_t best_gap = SIZE_MAX;
    for (size_t i = 0; i + 1 < out.size(); ++i) {
      const size_t g = out[i + 1].offset - (out[i].offset + out[i].size);
      if (g < best_gap) {
        best_gap = g;
        best = i;
      }
    }
    out[best].size = out[best + 1].offset + out[best + 1].size - out[best].offset;
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  return out;
}

}  // namespace ferry::client
