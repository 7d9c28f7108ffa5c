#include "cuda/client/proc_table.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <span>

#include "cuda/abi/driver_abi.hpp"
#include "cuda/client/refused.hpp"

namespace ferry::cuda {
namespace {

// Stand-ins for implemented entry points: only their addresses matter.
int fake_mem_alloc() { return 1; }
int fake_mem_alloc_v2() { return 2; }
int fake_ctx_create() { return 3; }
int fake_ctx_create_v2() { return 4; }
int fake_ctx_create_v3() { return 7; }
int fake_ctx_create_v4() { return 8; }
int fake_launch_kernel() { return 5; }
int fake_stream_query() { return 6; }

void* address(int (*f)()) { return reinterpret_cast<void*>(f); }

const proc_variant fake_table[] = {
    {"cuMemAlloc", 2000, address(&fake_mem_alloc)},
    {"cuMemAlloc", 3020, address(&fake_mem_alloc_v2)},
    {"cuCtxCreate", 2000, address(&fake_ctx_create)},
    {"cuCtxCreate", 3020, address(&fake_ctx_create_v2)},
    {"cuCtxCreate", 11040, address(&fake_ctx_create_v3)},
    {"cuCtxCreate", 12050, address(&fake_ctx_create_v4)},
    {"cuLaunchKernel", 4000, address(&fake_launch_kernel)},
};

void* refused_stub(const char* exported) {
  for (size_t i = 0; i < refused_entry_count; ++i)
    if (std::strcmp(refused_entries[i].exported, exported) == 0) return reinterpret_cast<void*>(refused_entries[i].function);
  ADD_FAILURE() << exported << " is not in the refused table";
  return nullptr;
}

struct lookup {
  int result;
  void* function;
  int status;
};

lookup look_up(const char* symbol, int version, unsigned long long flags = CU_GET_PROC_ADDRESS_DEFAULT) {
  lookup l{-1, reinterpret_cast<void*>(1), -1};
  l.result = get_proc_address(symbol, &l.function, version, flags, &l.status);
  return l;
}

class proc_table : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = implemented_variants();
    set_implemented(fake_table, std::size(fake_table));
  }
  void TearDown() override { set_implemented(saved_.data(), saved_.size()); }

 private:
  std::span<const proc_variant> saved_;
};

TEST_F(proc_table, gives_the_newest_variant_the_version_admits) {
  lookup l = look_up("cuMemAlloc", 3020);
  EXPECT_EQ(l.result, CUDA_SUCCESS);
  EXPECT_EQ(l.function, address(&fake_mem_alloc_v2));
  EXPECT_EQ(l.status, CU_GET_PROC_ADDRESS_SUCCESS);
  EXPECT_EQ(look_up("cuMemAlloc", 13000).function, address(&fake_mem_alloc_v2));
  EXPECT_EQ(look_up("cuMemAlloc", 3010).function, address(&fake_mem_alloc));
  EXPECT_EQ(look_up("cuMemAlloc", 2000).function, address(&fake_mem_alloc));
}

TEST_F(proc_table, a_version_older_than_every_variant_is_not_sufficient) {
  lookup l = look_up("cuLaunchKernel", 3020);
  EXPECT_EQ(l.result, CUDA_SUCCESS);
  EXPECT_EQ(l.function, nullptr);
  EXPECT_EQ(l.status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_EQ(look_up("cuLaunchKernel", 4000).function, address(&fake_launch_kernel));
}

TEST_F(proc_table, an_unknown_name_is_not_found) {
  lookup l = look_up("cuNoSuchThing", 12000);
  EXPECT_EQ(l.result, CUDA_SUCCESS);
  EXPECT_EQ(l.function, nullptr);
  EXPECT_EQ(l.status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  // Base names only: an exported variant's own name is no base.
  EXPECT_EQ(look_up("cuMemAlloc_v2", 12000).status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
}

TEST_F(proc_table, a_refused_name_gives_its_stub_whatever_the_version) {
  for (int version : {0, 2000, 10000, 13000}) {
    lookup l = look_up("cuGraphCreate", version);
    EXPECT_EQ(l.result, CUDA_SUCCESS) << version;
    EXPECT_EQ(l.function, refused_stub("cuGraphCreate")) << version;
    EXPECT_EQ(l.status, CU_GET_PROC_ADDRESS_SUCCESS) << version;
  }
  // A refused base with several variants answers with the newest.
  EXPECT_EQ(look_up("cuMemcpy2D", 12000).function, refused_stub("cuMemcpy2D_v2"));
}

TEST_F(proc_table, each_variant_of_a_base_answers_the_versions_of_its_abi) {
  // cuCtxCreate_v3 (11040) and _v4 (12050) take other arguments than _v2: a
  // caller built for them must get them, never cuCtxCreate_v2.
  EXPECT_EQ(look_up("cuCtxCreate", 2000).function, address(&fake_ctx_create));
  EXPECT_EQ(look_up("cuCtxCreate", 11030).function, address(&fake_ctx_create_v2));
  EXPECT_EQ(look_up("cuCtxCreate", 11040).function, address(&fake_ctx_create_v3));
  EXPECT_EQ(look_up("cuCtxCreate", 12050).function, address(&fake_ctx_create_v4));
  lookup l = look_up("cuCtxCreate", 13000);
  EXPECT_EQ(l.function, address(&fake_ctx_create_v4));
  EXPECT_EQ(l.status, CU_GET_PROC_ADDRESS_SUCCESS);
}

TEST_F(proc_table, a_version_newer_than_the_driver_is_an_invalid_value) {
  lookup l = look_up("cuMemAlloc", driver_version + 10);
  EXPECT_EQ(l.result, CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(l.function, nullptr);
  EXPECT_EQ(l.status, -1);  // left alone
  EXPECT_EQ(look_up("cuMemAlloc", driver_version).result, CUDA_SUCCESS);
}

TEST_F(proc_table, null_symbol_or_pfn_is_an_invalid_value) {
  void* function = reinterpret_cast<void*>(1);
  int status = -1;
  EXPECT_EQ(get_proc_address(nullptr, &function, 12000, 0, &status), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(function, nullptr);
  EXPECT_EQ(status, -1);
  EXPECT_EQ(get_proc_address("cuMemAlloc", nullptr, 12000, 0, &status), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(proc_table, the_three_flags_give_the_same_functions_and_others_are_invalid) {
  for (unsigned long long flags :
       {CU_GET_PROC_ADDRESS_DEFAULT, CU_GET_PROC_ADDRESS_LEGACY_STREAM, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM}) {
    lookup l = look_up("cuMemAlloc", 12000, flags);
    EXPECT_EQ(l.result, CUDA_SUCCESS) << flags;
    EXPECT_EQ(l.function, address(&fake_mem_alloc_v2)) << flags;
  }
  for (unsigned long long flags : {3ull, 4ull, 1ull << 40}) {
    lookup l = look_up("cuMemAlloc", 12000, flags);
    EXPECT_EQ(l.result, CUDA_ERROR_INVALID_VALUE) << flags;
    EXPECT_EQ(l.function, nullptr) << flags;
  }
}

TEST_F(proc_table, status_may_be_null) {
  void* function = nullptr;
  EXPECT_EQ(get_proc_address("cuMemAlloc", &function, 12000, 0, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(function, address(&fake_mem_alloc_v2));
  EXPECT_EQ(get_proc_address("cuNoSuchThing", &function, 12000, 0, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(function, nullptr);
}

TEST_F(proc_table, a_new_table_replaces_the_old_after_lookups) {
  EXPECT_EQ(look_up("cuStreamQuery", 12000).status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  static const proc_variant other[] = {{"cuStreamQuery", 2000, address(&fake_stream_query)}};
  set_implemented(other, std::size(other));
  EXPECT_EQ(implemented_variants().size(), 1u);
  EXPECT_EQ(look_up("cuStreamQuery", 12000).function, address(&fake_stream_query));
  EXPECT_EQ(look_up("cuMemAlloc", 12000).status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
}

}  // namespace
}  // namespace ferry::cuda
