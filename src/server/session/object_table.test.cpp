#include "server/session/object_table.hpp"

#include <gtest/gtest.h>

namespace ferry::server {
namespace {

object_entry fake(object_kind kind, const native::api& api) {
  object_entry e;
  e.kind = kind;
  cl_int error;
  switch (kind) {
    case object_kind::context: e.handle = api.clCreateContext(nullptr, 0, nullptr, nullptr, nullptr, &error); break;
    case object_kind::queue: e.handle = api.clCreateCommandQueueWithProperties(nullptr, nullptr, nullptr, &error); break;
    case object_kind::mem: e.handle = api.clCreateBuffer(nullptr, 0, 16, nullptr, &error); break;
    case object_kind::program: e.handle = api.clCreateProgramWithSource(nullptr, 0, nullptr, nullptr, &error); break;
    case object_kind::kernel: e.handle = api.clCreateKernel(nullptr, "k", &error); break;
    case object_kind::event: e.handle = api.clCreateUserEvent(nullptr, &error); break;
    case object_kind::sampler: e.handle = api.clCreateSamplerWithProperties(nullptr, nullptr, &error); break;
    case object_kind::svm: {
      // A block holds its memory and a reference to its context.
      auto* block = new svm_block;
      block->context = api.clCreateContext(nullptr, 0, nullptr, nullptr, nullptr, &error);
      block->pointer = api.clSVMAlloc(block->context, CL_MEM_READ_WRITE, 16, 0);
      block->size = 16;
      e.handle = block;
      break;
    }
  }
  return e;
}

TEST(object_table, ids_resolve_to_their_kind_only) {
  const native::api& api = native::dry_api();
  object_table table(api);
  object_entry queue = fake(object_kind::queue, api);
  ASSERT_TRUE(table.insert(1, queue));
  object_table::found found = table.find<object_kind::queue>(1);
  ASSERT_TRUE(found);
  EXPECT_EQ(found.error(), CL_SUCCESS);
  EXPECT_EQ(found->handle, queue.handle);
  EXPECT_EQ((*found).kind, object_kind::queue);
  object_table::found other = table.find<object_kind::mem>(1);
  EXPECT_FALSE(other);
  EXPECT_EQ(other.error(), CL_INVALID_MEM_OBJECT);
  object_table::found unknown = table.find<object_kind::queue>(2);
  EXPECT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), CL_INVALID_COMMAND_QUEUE);
}

TEST(object_table, typed_lookups_fail_with_the_spec_error_of_their_kind) {
  const native::api& api = native::dry_api();
  object_table table(api);
  // Id 1 is a context: every other kind's lookup of it fails as for an unknown id.
  ASSERT_TRUE(table.insert(1, fake(object_kind::context, api)));
  EXPECT_EQ(table.find<object_kind::context>(9).error(), CL_INVALID_CONTEXT);
  EXPECT_EQ(table.find<object_kind::queue>(1).error(), CL_INVALID_COMMAND_QUEUE);
  EXPECT_EQ(table.find<object_kind::mem>(1).error(), CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(table.find<object_kind::program>(1).error(), CL_INVALID_PROGRAM);
  EXPECT_EQ(table.find<object_kind::kernel>(1).error(), CL_INVALID_KERNEL);
  EXPECT_EQ(table.find<object_kind::event>(1).error(), CL_INVALID_EVENT);
  EXPECT_EQ(table.find<object_kind::sampler>(1).error(), CL_INVALID_SAMPLER);
  EXPECT_EQ(table.find<object_kind::svm>(1).error(), CL_INVALID_VALUE) << "an SVM pointer outside every allocation";
  EXPECT_TRUE(table.find<object_kind::context>(1));
}

TEST(object_table, a_lookup_may_name_its_own_error_for_a_missing_object) {
  const native::api& api = native::dry_api();
  object_table table(api);
  ASSERT_TRUE(table.insert(1, fake(object_kind::mem, api)));
  // A wait list names events: a wrong id there is CL_INVALID_EVENT_WAIT_LIST.
  EXPECT_EQ(table.find<object_kind::event>(1, CL_INVALID_EVENT_WAIT_LIST).error(), CL_INVALID_EVENT_WAIT_LIST);
  EXPECT_EQ(table.find<object_kind::event>(2, CL_INVALID_EVENT_WAIT_LIST).error(), CL_INVALID_EVENT_WAIT_LIST);
  EXPECT_TRUE(table.find<object_kind::mem>(1, CL_INVALID_IMAGE_DESCRIPTOR));
}

TEST(object_table, a_failed_creation_answers_with_its_error) {
  object_table table(native::dry_api());
  object_entry failed;
  failed.kind = object_kind::context;
  failed.error = CL_INVALID_DEVICE;
  ASSERT_TRUE(table.insert(5, failed));
  object_table::found found = table.find<object_kind::context>(5);
  EXPECT_FALSE(found);
  EXPECT_EQ(found.error(), CL_INVALID_DEVICE);
  // The recorded error wins over the one the lookup names for a missing object...
  EXPECT_EQ(table.find<object_kind::context>(5, CL_INVALID_VALUE).error(), CL_INVALID_DEVICE);
  // ...but only for the kind that failed.
  EXPECT_EQ(table.find<object_kind::queue>(5).error(), CL_INVALID_COMMAND_QUEUE);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_TRUE(table.erase(5));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find<object_kind::context>(5).error(), CL_INVALID_CONTEXT);
}

TEST(object_table, duplicates_are_refused) {
  const native::api& api = native::dry_api();
  object_table table(api);
  ASSERT_TRUE(table.insert(1, fake(object_kind::mem, api)));
  object_entry second = fake(object_kind::mem, api);
  EXPECT_TRUE(table.contains(1));
  EXPECT_FALSE(table.insert(1, second));
  api.clReleaseMemObject(second.as_mem());
}

TEST(object_table, erase_and_destruction_release_every_native_handle) {
  const native::api& api = native::dry_api();
  int64_t live = native::dry_live_handles();
  int64_t total = object_table::daemon_total();
  {
    object_table table(api);
    object_id id = 1;
    for (object_kind kind : {object_kind::context, object_kind::queue, object_kind::mem, object_kind::program,
                             object_kind::kernel, object_kind::event})
      ASSERT_TRUE(table.insert(id++, fake(kind, api)));
    EXPECT_EQ(native::dry_live_handles(), live + 6);
    EXPECT_EQ(object_table::daemon_total(), total + 6);
    EXPECT_TRUE(table.erase(3));
    EXPECT_FALSE(table.erase(3));
    EXPECT_EQ(native::dry_live_handles(), live + 5);
  }
  EXPECT_EQ(native::dry_live_handles(), live);
  EXPECT_EQ(object_table::daemon_total(), total);
}

TEST(object_table, svm_allocations_free_memory_and_context_on_erase_and_destruction) {
  const native::api& api = native::dry_api();
  int64_t live = native::dry_live_handles();
  {
    object_table table(api);
    ASSERT_TRUE(table.insert(1, fake(object_kind::svm, api)));
    ASSERT_TRUE(table.insert(2, fake(object_kind::svm, api)));
    EXPECT_EQ(native::dry_live_handles(), live + 4);
    EXPECT_TRUE(table.erase(1));
    EXPECT_EQ(native::dry_live_handles(), live + 2);
  }
  EXPECT_EQ(native::dry_live_handles(), live);
}

TEST(object_table, take_forgets_an_id_and_hands_over_its_native_object) {
  const native::api& api = native::dry_api();
  int64_t live = native::dry_live_handles();
  object_table table(api);
  ASSERT_TRUE(table.insert(7, fake(object_kind::svm, api)));
  object_entry taken;
  ASSERT_TRUE(table.take(7, taken));
  EXPECT_FALSE(table.contains(7));
  EXPECT_FALSE(table.take(7, taken));
  EXPECT_EQ(taken.kind, object_kind::svm);
  EXPECT_EQ(native::dry_live_handles(), live + 2) << "take releases nothing";
  free_svm_block(api, taken.as_svm());
  EXPECT_EQ(native::dry_live_handles(), live);
}

}  // namespace
}  // namespace ferry::server
