// The unit tests make client objects (placement.test.cpp) without libferry's
// ICD layer, whose icd/dispatch.cpp defines the loader's table from every
// entry point. The objects made here never reach a loader, so an empty
// table stands in for it.
#include "client/core/objects.hpp"

namespace ferry::client {

const cl_icd_dispatch dispatch_table{};

}  // namespace ferry::client
