#include "cuda/client/image_size.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace ferry::cuda {
namespace {

/// Largest image believed: a header that claims more is taken for garbage.
constexpr uint64_t max_image = uint64_t{1} << 32;

template <class T>
T read_at(const uint8_t* base, size_t offset) {
  T value;
  std::memcpy(&value, base + offset, sizeof value);
  return value;
}

/// An ELF64 little-endian file (cubins are): the end of its last table or
/// section.
size_t elf_size(const uint8_t* e) {
  if (e[4] != 2 || e[5] != 1) return 0;  // ELFCLASS64, ELFDATA2LSB
  const uint64_t phoff = read_at<uint64_t>(e, 0x20);
  const uint64_t shoff = read_at<uint64_t>(e, 0x28);
  const uint16_t ehsize = read_at<uint16_t>(e, 0x34);
  const uint16_t phentsize = read_at<uint16_t>(e, 0x36);
  const uint16_t phnum = read_at<uint16_t>(e, 0x38);
  const uint16_t shentsize = read_at<uint16_t>(e, 0x3a);
  const uint16_t shnum = read_at<uint16_t>(e, 0x3c);
  if (phoff > max_image || shoff > max_image || (shnum != 0 && shentsize < 64) || (phnum != 0 && phentsize < 56))
    return 0;
  uint64_t end = ehsize;
  end = std::max<uint64_t>(end, phoff + uint64_t{phnum} * phentsize);
  end = std::max<uint64_t>(end, shoff + uint64_t{shnum} * shentsize);
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint8_t* sh = e + shoff + uint64_t{i} * shentsize;
    const uint32_t type = read_at<uint32_t>(sh, 4);
    const uint64_t offset = read_at<uint64_t>(sh, 0x18);
    const uint64_t size = read_at<uint64_t>(sh, 0x20);
    if (type == 8 /* SHT_NOBITS */ || offset > max_image || size > max_image) continue;
    end = std::max(end, offset + size);
  }
  for (uint16_t i = 0; i < phnum; ++i) {
    const uint8_t* ph = e + phoff + uint64_t{i} * phentsize;
    const uint64_t offset = read_at<uint64_t>(ph, 0x08);
    const uint64_t size = read_at<uint64_t>(ph, 0x20);  // p_filesz
    if (offset > max_image || size > max_image) continue;
    end = std::max(end, offset + size);
  }
  return end > max_image ? 0 : static_cast<size_t>(end);
}

}  // namespace

size_t module_image_size(const void* image) {
  if (image == nullptr) return 0;
  const auto* bytes = static_cast<const uint8_t*>(image);
  if (std::memcmp(bytes, "\x7f" "ELF", 4) == 0) return elf_size(bytes);
  // A fatbin: magic, version (u16), header size (u16), then the size of
  // what follows the header (u64).
  if (read_at<uint32_t>(bytes, 0) == 0xBA55ED50u) {
    const uint16_t header = read_at<uint16_t>(bytes, 6);
    const uint64_t rest = read_at<uint64_t>(bytes, 8);
    if (header < 16 || rest > max_image) return 0;
    return static_cast<size_t>(header + rest);
  }
  return std::strlen(reinterpret_cast<const char*>(bytes)) + 1;
}

}  // namespace ferry::cuda
