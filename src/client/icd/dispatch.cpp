// The loader's dispatch table: every slot Ferry implements points at its
// entry point; the rest stay NULL (interop families Ferry does not offer).
#include <cstddef>

#include "client/api/api.hpp"
#include "client/core/objects.hpp"

namespace ferry::client {

// The handle types derive from object_base, so they are not standard layout
// and offsetof is only "conditionally supported"; GCC and Clang support it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
static_assert(offsetof(_cl_platform_id, dispatch) == 0, "the loader reads the dispatch pointer first");
static_assert(offsetof(_cl_mem, dispatch) == 0, "the loader reads the dispatch pointer first");
static_assert(offsetof(_cl_event, dispatch) == 0, "the loader reads the dispatch pointer first");
#pragma GCC diagnostic pop

namespace {

cl_icd_dispatch make_table() {
  cl_icd_dispatch table{};
#define FERRY_FILL(name) table.name = &api::name;
  FERRY_ENTRY_POINTS(FERRY_FILL)
#undef FERRY_FILL
  return table;
}

}  // namespace

const cl_icd_dispatch dispatch_table = make_table();

}  // namespace ferry::client
