// Names of OpenCL error codes, for logs and messages: the one table shared by
// libferry, ferryd and the `ferry` command.
#pragma once

#include <CL/cl.h>

#include <string>

namespace ferry {

/// The code's name ("CL_INVALID_VALUE"), or nullptr for a code no table
/// here knows. Covers every code of OpenCL 3.0 (CL_SUCCESS included) and the
/// Khronos extension codes in <CL/cl_ext.h>, <CL/cl_gl.h> and <CL/cl_egl.h>
/// (include/CL/cl_ext_ferry.h defines none of its own).
const char* known_cl_error_name(cl_int code) noexcept;

/// The code's name, or "OpenCL error <n>" for a code no table knows.
std::string cl_error_name(cl_int code);

}  // namespace ferry
