#include "cuda/client/image_size.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace ferry::cuda {
namespace {

template <class T>
void put(std::vector<uint8_t>& b, size_t at, T value) {
  std::memcpy(b.data() + at, &value, sizeof value);
}

TEST(module_image_size, ptx_text_counts_its_nul) {
  const char* ptx = ".version 7.0\n.target sm_80\n";
  EXPECT_EQ(module_image_size(ptx), std::strlen(ptx) + 1);
  EXPECT_EQ(module_image_size(nullptr), 0u);
}

TEST(module_image_size, elf_ends_after_its_last_section_or_table) {
  std::vector<uint8_t> elf(4096, 0);
  std::memcpy(elf.data(), "\x7f" "ELF", 4);
  elf[4] = 2;
  elf[5] = 1;
  put<uint16_t>(elf, 0x34, 64);      // e_ehsize
  put<uint64_t>(elf, 0x28, 1024);    // e_shoff
  put<uint16_t>(elf, 0x3a, 64);      // e_shentsize
  put<uint16_t>(elf, 0x3c, 2);       // e_shnum: tables end at 1152
  // Section 1: PROGBITS at 2000, 500 bytes: the image ends at 2500.
  put<uint32_t>(elf, 1024 + 64 + 4, 1);
  put<uint64_t>(elf, 1024 + 64 + 0x18, 2000);
  put<uint64_t>(elf, 1024 + 64 + 0x20, 500);
  EXPECT_EQ(module_image_size(elf.data()), 2500u);
  // A NOBITS section takes no file bytes.
  put<uint32_t>(elf, 1024 + 64 + 4, 8);
  EXPECT_EQ(module_image_size(elf.data()), 1152u);
  // A 32-bit or big-endian ELF is no cubin.
  elf[4] = 1;
  EXPECT_EQ(module_image_size(elf.data()), 0u);
}

TEST(module_image_size, fatbin_header_says_its_size) {
  std::vector<uint8_t> fat(64, 0);
  put<uint32_t>(fat, 0, 0xBA55ED50u);
  put<uint16_t>(fat, 4, 1);
  put<uint16_t>(fat, 6, 16);
  put<uint64_t>(fat, 8, 48);
  EXPECT_EQ(module_image_size(fat.data()), 64u);
  put<uint16_t>(fat, 6, 4);  // a header shorter than itself
  EXPECT_EQ(module_image_size(fat.data()), 0u);
}

}  // namespace
}  // namespace ferry::cuda
