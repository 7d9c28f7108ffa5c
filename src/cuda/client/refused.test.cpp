#include "cuda/client/refused.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "common/log.hpp"
#include "cuda/abi/driver_abi.hpp"
#include "cuda/abi/per_thread_stream.hpp"
#include "cuda/client/proc_table.hpp"

namespace ferry::cuda {
namespace {

size_t refused_index_of(const char* exported) {
  for (size_t i = 0; i < refused_entry_count; ++i)
    if (std::strcmp(refused_entries[i].exported, exported) == 0) return i;
  ADD_FAILURE() << exported << " is not in the refused table";
  return refused_entry_count;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(refused, stubs_return_not_supported_and_log_their_name_once) {
  if (const char* file = std::getenv("FERRY_LOG_FILE"); file && *file) GTEST_SKIP() << "the log goes to FERRY_LOG_FILE";
  const log_level saved = current_log_level();
  set_log_level(log_level::warn);
  for (const char* name : {"cuGraphCreate", "cuTexObjectCreate", "cuIpcGetMemHandle", "cuMemcpy2D_v2"}) {
    size_t index = refused_index_of(name);
    ASSERT_LT(index, refused_entry_count);
    // Another test may have called it already; then it has logged already.
    const bool logged_before = refused_was_called(index);
    testing::internal::CaptureStderr();
    for (int call = 0; call < 3; ++call) EXPECT_EQ(refused_entries[index].function(), CUDA_ERROR_NOT_SUPPORTED) << name;
    const std::string output = testing::internal::GetCapturedStderr();
    const std::string line =
        std::string(name) + " is not supported by Ferry's CUDA driver; it returns CUDA_ERROR_NOT_SUPPORTED";
    EXPECT_EQ(occurrences(output, line), logged_before ? 0u : 1u) << output;
    if (!logged_before) {
      EXPECT_NE(output.find(" warn cuda: " + line), std::string::npos) << output;
    }
    EXPECT_TRUE(refused_was_called(index));
  }
  set_log_level(saved);
}

TEST(refused, proc_address_of_a_refused_base_returns_not_supported) {
  void* function = nullptr;
  int status = -1;
  ASSERT_EQ(get_proc_address("cuTexObjectDestroy", &function, driver_version, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_SUCCESS);
  ASSERT_NE(function, nullptr);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
  EXPECT_EQ(reinterpret_cast<refused_function>(function)(), CUDA_ERROR_NOT_SUPPORTED);
}

TEST(refused, proc_address_of_an_unknown_name_is_null_and_not_found) {
  void* function = reinterpret_cast<void*>(1);
  int status = -1;
  EXPECT_EQ(get_proc_address("cuNoSuchThing", &function, driver_version, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_SUCCESS);
  EXPECT_EQ(function, nullptr);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
}

TEST(refused, every_row_is_a_distinct_cu_symbol_named_after_its_base) {
  std::set<std::string_view> seen;
  for (size_t i = 0; i < refused_entry_count; ++i) {
    const refused_entry& r = refused_entries[i];
    const std::string_view exported = r.exported;
    const std::string_view base = r.base;
    EXPECT_TRUE(exported.starts_with("cu")) << exported;
    EXPECT_TRUE(seen.insert(exported).second) << exported << " is listed twice";
    // A variant is its base plus a _vN suffix; neither per-thread stream names nor
    // other suffixes belong here.
    EXPECT_TRUE(exported == base || (exported.starts_with(base) && exported.substr(base.size()).starts_with("_v")))
        << exported << " under " << base;
    EXPECT_FALSE(exported.ends_with("_ptds") || exported.ends_with("_ptsz")) << exported;
    EXPECT_NE(r.function, nullptr) << exported;
    EXPECT_GE(r.since, 0) << exported;
  }
}

TEST(refused, every_variant_of_a_per_thread_base_has_its_suffixed_name_and_no_other_does) {
  std::map<std::string, refused_function> aliases;
  for (size_t i = 0; i < refused_per_thread_name_count; ++i) {
    const refused_alias& a = refused_per_thread_names[i];
    EXPECT_TRUE(aliases.emplace(a.exported, a.function).second) << a.exported << " is listed twice";
  }
  size_t expected = 0;
  for (size_t i = 0; i < refused_entry_count; ++i) {
    const refused_entry& r = refused_entries[i];
    const std::string_view suffix = per_thread_suffix(r.base);
    if (suffix.empty()) {
      EXPECT_FALSE(aliases.contains(std::string(r.exported) + "_ptds")) << r.exported;
      EXPECT_FALSE(aliases.contains(std::string(r.exported) + "_ptsz")) << r.exported;
      continue;
    }
    ++expected;
    auto it = aliases.find(std::string(r.exported) + std::string(suffix));
    ASSERT_NE(it, aliases.end()) << r.exported << " has no " << suffix << " name";
    // An alias: the very stub, so a call refuses and logs under the variant's name.
    EXPECT_EQ(it->second, r.function) << it->first;
    EXPECT_EQ(it->second(), CUDA_ERROR_NOT_SUPPORTED) << it->first;
  }
  EXPECT_EQ(aliases.size(), expected) << "a per-thread name without its variant";
}

}  // namespace
}  // namespace ferry::cuda
