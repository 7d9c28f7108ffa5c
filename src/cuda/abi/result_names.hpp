// The names and descriptions of CUresult values, for cuGetErrorName/cuGetErrorString
// on the client and for log lines on both sides.
#pragma once

#include "cuda/abi/driver_abi.hpp"

namespace ferry::cuda {

/// NVIDIA's name of a result ("CUDA_ERROR_INVALID_VALUE"); nullptr for a value this
/// build does not know (cuGetErrorName then answers CUDA_ERROR_INVALID_VALUE).
const char* result_name(CUresult result);

/// A short description of a result in our own words ("invalid argument"); nullptr for
/// a value this build does not know.
const char* result_string(CUresult result);

/// For log lines: the name, or "CUresult <n>" for an unknown value (a static buffer per
/// thread, valid until the thread's next call).
const char* describe_result(CUresult result);

}  // namespace ferry::cuda
