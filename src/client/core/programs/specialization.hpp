// Specialization constants of IL programs, set on every server of the
// program before it is built.
#pragma once

#include <cstddef>

#include "client/core/objects.hpp"

namespace ferry::client {

/// clSetProgramSpecializationConstant on the servers' program: their native
/// answer (CL_INVALID_SPEC_ID, CL_INVALID_VALUE for a wrong size or NULL).
cl_int set_specialization_constant(program* p, cl_uint spec_id, size_t spec_size, const void* spec_value);

}  // namespace ferry::client
