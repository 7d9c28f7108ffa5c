// Statistics kernels (the spec's "Integral Image", "Histogram", "Mean and
// Standard Deviation" and "Min, Max Location"): whole kernels, since each
// output depends on every input pixel.
//
// The integral image stays on the device. The others reduce the image on
// the device to a little (the count of each of the 256 U8 values; each
// row's extremes and their counts) and finish on the host, where their
// results (a distribution, scalars, arrays) live; those reads block.
#include "graph/core/array.hpp"
#include "graph/core/distribution.hpp"
#include "graph/core/image.hpp"
#include "graph/core/node.hpp"
#include "graph/core/scalar.hpp"
#include "graph/kernels/kernel_families.hpp"
#include "graph/kernels/node_check.hpp"
#include "graph/runtime/whole_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ferry::graph {
namespace {

// An output scalar becomes (or must already be) of `type`: a virtual scalar
// left untyped takes it. An optional one left unset needs nothing.
vx_status settle_scalar(node_check& check, vx_uint32 index, vx_enum type, const char* what) {
  vx_scalar s = check.scalar(index);
  if (s == nullptr) return VX_SUCCESS;
  if (s->data_type == VX_TYPE_INVALID) {
    s->data_type = type;
    s->value.assign(scalar_size(type), 0);
    return VX_SUCCESS;
  }
  if (s->data_type != type)
    return check.fail(VX_ERROR_INVALID_TYPE, "%s (parameter %u) is a scalar of type 0x%x; it must be of type 0x%x",
                      what, index, s->data_type, type);
  return VX_SUCCESS;
}

template <class T>
void write_scalar(vx_scalar s, T value) {
  if (s == nullptr) return;
  if (s->value.size() < sizeof value) s->value.resize(sizeof value);
  std::memcpy(s->value.data(), &value, sizeof value);
}

// --- Integral Image ---------------------------------------------------------
//
// Spec: "sum(x,y) = src(x,y) + sum(x-1,y) + sum(x,y-1) - sum(x-1,y-1)", 0
// outside, "The overflow policy used is VX_CONVERT_POLICY_WRAP": sums along
// each row, then down each column, in 32-bit unsigned arithmetic (modulo
// 2^32 as the policy asks).
const char* integral_source = R"CLC(
__kernel void integral_rows(__global const uchar* src, int so, int sp, __global uchar* dst, int doff, int dp,
                            int width, int height) {
  const int y = get_global_id(0);
  if (y >= height) return;
  __global const uchar* in = src + so + y * sp;
  __global uint* out = (__global uint*)(dst + doff + y * dp);
  uint sum = 0;
  for (int x = 0; x < width; ++x) {
    sum += in[x];
    out[x] = sum;
  }
}

__kernel void integral_columns(__global uchar* dst, int doff, int dp, int width, int height) {
  const int x = get_global_id(0);
  if (x >= width) return;
  uint sum = 0;
  for (int y = 0; y < height; ++y) {
    __global uint* at = (__global uint*)(dst + doff + y * dp) + x;
    sum += *at;
    *at = sum;
  }
}
)CLC";

// Parameters: input (U8), output (U32, the input's size).
vx_status validate_integral_image(node_check& check) {
  vx_status status = check.require_format(0, u8_only);
  return status == VX_SUCCESS ? check.settle_like(1, 0, VX_DF_IMAGE_U32) : status;
}

vx_status run_integral_image(whole_run& run) {
  whole_run::plane_view in, out;
  vx_status status = run.input_plane(0, 0, in);
  if (status == VX_SUCCESS) status = run.output_plane(1, 0, out);
  if (status != VX_SUCCESS) return status;
  cl_kernel rows = run.kernel(integral_source, "integral_rows");
  cl_kernel columns = run.kernel(integral_source, "integral_columns");
  if (rows == nullptr || columns == nullptr) return VX_FAILURE;
  status = run.arguments(rows, in.buffer, in.offset, in.pitch, out.buffer, out.offset, out.pitch, in.width, in.height);
  size_t row_count = size_t(in.height), column_count = size_t(in.width);
  if (status == VX_SUCCESS) status = run.enqueue(rows, 1, &row_count);
  if (status == VX_SUCCESS) status = run.arguments(columns, out.buffer, out.offset, out.pitch, in.width, in.height);
  if (status == VX_SUCCESS) status = run.enqueue(columns, 1, &column_count);
  return status;
}

// --- How many pixels hold each U8 value (Histogram, MeanStdDev) -------------

// Each work-group counts into local memory, then adds its counts to the
// global ones; a work-item walks the image in raster order with the stride
// of the whole range.
const char* value_counts_source = R"CLC(
__kernel void value_counts(__global const uchar* src, int so, int sp, int width, int height,
                           __global uint* counts) {
  __local uint local_counts[256];
  const int lid = get_local_id(0), lsize = get_local_size(0);
  for (int v = lid; v < 256; v += lsize) local_counts[v] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  const long n = (long)width * height, stride = get_global_size(0);
  long i = get_global_id(0);
  int y = (int)(i / width), x = (int)(i - (long)y * width);
  const int step_y = (int)(stride / width), step_x = (int)(stride - (long)step_y * width);
  for (; i < n; i += stride) {
    atomic_inc(&local_counts[src[so + y * sp + x]]);
    x += step_x;
    y += step_y;
    if (x >= width) {
      x -= width;
      ++y;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int v = lid; v < 256; v += lsize)
    if (local_counts[v] != 0) atomic_add(&counts[v], local_counts[v]);
}
)CLC";

/// counts[v]: the pixels of U8 input image 0 whose value is v.
vx_status count_values(whole_run& run, cl_uint (&counts)[256]) {
  whole_run::plane_view in;
  vx_status status = run.input_plane(0, 0, in);
  if (status != VX_SUCCESS) return status;
  cl_kernel kernel = run.kernel(value_counts_source, "value_counts");
  if (kernel == nullptr) return VX_FAILURE;
  std::memset(counts, 0, sizeof counts);
  cl_mem device_counts = run.scratch(sizeof counts, counts);
  if (device_counts == nullptr) return VX_ERROR_NO_MEMORY;
  status = run.arguments(kernel, in.buffer, in.offset, in.pitch, in.width, in.height, device_counts);
  if (status != VX_SUCCESS) return status;
  // Enough work-groups to keep a device busy, each walking at least some
  // dozens of pixels per work-item.
  size_t local = std::min<size_t>(256, run.work_group_limit(kernel));
  size_t pixels = size_t(in.width) * size_t(in.height);
  size_t groups = std::clamp<size_t>(pixels / (local * 64) + 1, 1, 1024);
  size_t global = groups * local;
  status = run.enqueue(kernel, 1, &global, &local);
  return status == VX_SUCCESS ? run.read(device_counts, 0, sizeof counts, counts) : status;
}

// --- Histogram ----------------------------------------------------------------
//
// Spec: "A pixel with intensity I will result in incrementing histogram bin
// i where i = (I - offset) x (numBins / range), I >= offset, I < offset +
// range. Pixels with intensities that don't meet these conditions will have
// no effect": bin floor((I - offset) * numBins / range), exactly in integers
// (a rounded window width range / numBins would move values between bins
// where numBins does not divide range).

// Parameters: input (U8), distribution.
vx_status validate_histogram(node_check& check) {
  vx_status status = check.require_format(0, u8_only);
  if (status != VX_SUCCESS) return status;
  vx_distribution d = check.distribution(1);
  if (d == nullptr) return check.fail(VX_ERROR_INVALID_TYPE, "parameter 1 is not a distribution");
  if (d->bins == 0 || d->range == 0 || d->counts.size() != d->bins)
    return check.fail(VX_ERROR_INVALID_PARAMETERS, "the distribution has no bins");
  return VX_SUCCESS;
}

vx_status run_histogram(whole_run& run) {
  cl_uint counts[256];
  vx_status status = count_values(run, counts);
  if (status != VX_SUCCESS) return status;
  vx_distribution d = run.distribution(1);
  std::fill(d->counts.begin(), d->counts.end(), 0);
  const int64_t offset = d->offset, range = d->range, bins = static_cast<int64_t>(d->bins);
  for (int64_t value = 0; value < 256; ++value) {
    if (value < offset || value >= offset + range) continue;
    d->counts[static_cast<size_t>((value - offset) * bins / range)] += static_cast<vx_int32>(counts[value]);
  }
  return VX_SUCCESS;
}

// --- Mean and Standard Deviation ---------------------------------------------
//
// Spec: "mu = (sum src(x,y)) / (width x height)", "sigma = sqrt((sum (mu -
// src(x,y))^2) / (width x height))": the population deviation. From the
// value counts: the sum is exact (an integer below 2^53), the squares are
// summed in double, and each result is rounded once to VX_TYPE_FLOAT32.

// Parameters: input (U8), mean (FLOAT32 scalar), [stddev (FLOAT32 scalar)].
vx_status validate_mean_std_dev(node_check& check) {
  vx_status status = check.require_format(0, u8_only);
  if (status == VX_SUCCESS) status = settle_scalar(check, 1, VX_TYPE_FLOAT32, "the mean");
  if (status == VX_SUCCESS) status = settle_scalar(check, 2, VX_TYPE_FLOAT32, "the standard deviation");
  return status;
}

vx_status run_mean_std_dev(whole_run& run) {
  cl_uint counts[256];
  vx_status status = count_values(run, counts);
  if (status != VX_SUCCESS) return status;
  vx_image input = run.image(0);
  const double n = double(input->width) * double(input->height);
  double sum = 0;
  for (int v = 0; v < 256; ++v) sum += double(v) * counts[v];
  const double mean = sum / n;
  double squares = 0;
  for (int v = 0; v < 256; ++v) squares += double(counts[v]) * (double(v) - mean) * (double(v) - mean);
  write_scalar(run.scalar(1), static_cast<vx_float32>(mean));
  write_scalar(run.scalar(2), static_cast<vx_float32>(std::sqrt(squares / n)));
  return VX_SUCCESS;
}

// --- Min, Max Location ----------------------------------------------------------
//
// Spec: "minVal = min src(x', y'), maxVal = max src(x', y')"; "If the input
// image has several minimums/maximums, the kernel returns all of them", "up
// to the capacity of the array"; the counts are "the total number of
// detected minimums" (all of them, whatever the capacity). The spec leaves
// the locations' order open; here they are in raster order (row by row, left
// to right), and a full array holds the first ones in that order, so a run
// always gives the same result. Three passes, each one work-item per row:
// the rows' extremes; how many pixels of each row hold the image's; where
// they are, each row writing from where the rows above it end.
const char* min_max_source = R"CLC(
__kernel void row_extremes(__global const uchar* src, int so, int sp, int width, int height,
                           __global int* row_min, __global int* row_max) {
  const int y = get_global_id(0);
  if (y >= height) return;
  __global const PIXEL* row = (__global const PIXEL*)(src + so + y * sp);
  int lo = row[0], hi = row[0];
  for (int x = 1; x < width; ++x) {
    const int v = row[x];
    lo = min(lo, v);
    hi = max(hi, v);
  }
  row_min[y] = lo;
  row_max[y] = hi;
}

__kernel void row_counts(__global const uchar* src, int so, int sp, int width, int height, int lo, int hi,
                         __global int* min_counts, __global int* max_counts) {
  const int y = get_global_id(0);
  if (y >= height) return;
  __global const PIXEL* row = (__global const PIXEL*)(src + so + y * sp);
  int at_min = 0, at_max = 0;
  for (int x = 0; x < width; ++x) {
    const int v = row[x];
    at_min += v == lo;
    at_max += v == hi;
  }
  min_counts[y] = at_min;
  max_counts[y] = at_max;
}

__kernel void row_locations(__global const uchar* src, int so, int sp, int width, int height, int lo, int hi,
                            __global const int* min_first, __global const int* max_first, int min_capacity,
                            int max_capacity, __global uint* min_locations, __global uint* max_locations) {
  const int y = get_global_id(0);
  if (y >= height) return;
  __global const PIXEL* row = (__global const PIXEL*)(src + so + y * sp);
  int next_min = min_first[y], next_max = max_first[y];
  for (int x = 0; x < width; ++x) {
    const int v = row[x];
    if (v == lo) {
      if (next_min < min_capacity) {
        min_locations[2 * next_min] = x;
        min_locations[2 * next_min + 1] = y;
      }
      ++next_min;
    }
    if (v == hi) {
      if (next_max < max_capacity) {
        max_locations[2 * next_max] = x;
        max_locations[2 * next_max + 1] = y;
      }
      ++next_max;
    }
  }
}
)CLC";

// An output array of VX_TYPE_COORDINATES2D: a virtual one left untyped, or
// without capacity, gets room for every pixel of the image.
vx_status settle_locations(node_check& check, vx_uint32 index, const char* what) {
  vx_array a = check.array(index);
  if (a == nullptr) return VX_SUCCESS;
  if (a->is_virtual && (a->item_type == VX_TYPE_INVALID || a->capacity == 0)) {
    if (a->item_type == VX_TYPE_INVALID) {
      a->item_type = VX_TYPE_COORDINATES2D;
      a->item_size = sizeof(vx_coordinates2d_t);
    }
    if (a->capacity == 0) a->capacity = size_t{check.image(0)->width} * check.image(0)->height;
  }
  if (a->item_type != VX_TYPE_COORDINATES2D)
    return check.fail(VX_ERROR_INVALID_TYPE, "%s (parameter %u) is an array of type 0x%x; it must hold "
                      "VX_TYPE_COORDINATES2D", what, index, a->item_type);
  if (a->items.size() < a->capacity * a->item_size) a->items.assign(a->capacity * a->item_size, 0);
  return VX_SUCCESS;
}

// Parameters: input (U8 or S16), minVal, maxVal (scalars of the input's
// type), [minLoc], [maxLoc] (arrays of VX_TYPE_COORDINATES2D), [minCount],
// [maxCount] (VX_TYPE_SIZE scalars).
vx_status validate_min_max_loc(node_check& check) {
  vx_status status = check.require_format(0, u8_or_s16);
  if (status != VX_SUCCESS) return status;
  // "The minimum value in the image, which corresponds to the type of the input."
  vx_enum type = check.image(0)->format == VX_DF_IMAGE_U8 ? VX_TYPE_UINT8 : VX_TYPE_INT16;
  status = settle_scalar(check, 1, type, "the minimum");
  if (status == VX_SUCCESS) status = settle_scalar(check, 2, type, "the maximum");
  if (status == VX_SUCCESS) status = settle_locations(check, 3, "the minimum locations");
  if (status == VX_SUCCESS) status = settle_locations(check, 4, "the maximum locations");
  // "Use a VX_TYPE_SIZE scalar."
  if (status == VX_SUCCESS) status = settle_scalar(check, 5, VX_TYPE_SIZE, "the minimum count");
  if (status == VX_SUCCESS) status = settle_scalar(check, 6, VX_TYPE_SIZE, "the maximum count");
  return status;
}

vx_size array_room(vx_array a) { return a == nullptr ? 0 : std::min(a->capacity, a->items.size() / a->item_size); }

vx_status run_min_max_loc(whole_run& run) {
  whole_run::plane_view in;
  vx_status status = run.input_plane(0, 0, in);
  if (status != VX_SUCCESS) return status;
  const bool u8 = run.image(0)->format == VX_DF_IMAGE_U8;
  std::string source = std::string("#define PIXEL ") + (u8 ? "uchar" : "short") + "\n" + min_max_source;
  cl_kernel extremes = run.kernel(source, "row_extremes");
  if (extremes == nullptr) return VX_FAILURE;
  const size_t rows = size_t(in.height);
  cl_mem row_min = run.scratch(rows * sizeof(cl_int)), row_max = run.scratch(rows * sizeof(cl_int));
  if (row_min == nullptr || row_max == nullptr) return VX_ERROR_NO_MEMORY;
  status = run.arguments(extremes, in.buffer, in.offset, in.pitch, in.width, in.height, row_min, row_max);
  if (status == VX_SUCCESS) status = run.enqueue(extremes, 1, &rows);
  std::vector<cl_int> lows(rows), highs(rows);
  if (status == VX_SUCCESS) status = run.read(row_min, 0, rows * sizeof(cl_int), lows.data());
  if (status == VX_SUCCESS) status = run.read(row_max, 0, rows * sizeof(cl_int), highs.data());
  if (status != VX_SUCCESS) return status;
  const cl_int lo = *std::min_element(lows.begin(), lows.end());
  const cl_int hi = *std::max_element(highs.begin(), highs.end());
  if (u8) {
    write_scalar(run.scalar(1), static_cast<vx_uint8>(lo));
    write_scalar(run.scalar(2), static_cast<vx_uint8>(hi));
  } else {
    write_scalar(run.scalar(1), static_cast<vx_int16>(lo));
    write_scalar(run.scalar(2), static_cast<vx_int16>(hi));
  }
  vx_array min_locations = run.array(3), max_locations = run.array(4);
  if (min_locations == nullptr && max_locations == nullptr && run.scalar(5) == nullptr && run.scalar(6) == nullptr)
    return VX_SUCCESS;

  // How many of each row's pixels hold the extremes; where each row's
  // locations start among all of them.
  cl_kernel counting = run.kernel(source, "row_counts");
  if (counting == nullptr) return VX_FAILURE;
  status = run.arguments(counting, in.buffer, in.offset, in.pitch, in.width, in.height, lo, hi, row_min, row_max);
  if (status == VX_SUCCESS) status = run.enqueue(counting, 1, &rows);
  std::vector<cl_int> min_first(rows), max_first(rows);
  if (status == VX_SUCCESS) status = run.read(row_min, 0, rows * sizeof(cl_int), min_first.data());
  if (status == VX_SUCCESS) status = run.read(row_max, 0, rows * sizeof(cl_int), max_first.data());
  if (status != VX_SUCCESS) return status;
  vx_size min_count = 0, max_count = 0;
  for (size_t y = 0; y < rows; ++y) {
    vx_size row_min_count = static_cast<vx_size>(min_first[y]), row_max_count = static_cast<vx_size>(max_first[y]);
    min_first[y] = static_cast<cl_int>(min_count);
    max_first[y] = static_cast<cl_int>(max_count);
    min_count += row_min_count;
    max_count += row_max_count;
  }
  write_scalar(run.scalar(5), min_count);
  write_scalar(run.scalar(6), max_count);
  if (min_locations == nullptr && max_locations == nullptr) return VX_SUCCESS;

  const vx_size min_room = std::min(array_room(min_locations), min_count);
  const vx_size max_room = std::min(array_room(max_locations), max_count);
  cl_kernel locating = run.kernel(source, "row_locations");
  if (locating == nullptr) return VX_FAILURE;
  cl_mem min_starts = run.scratch(rows * sizeof(cl_int), min_first.data());
  cl_mem max_starts = run.scratch(rows * sizeof(cl_int), max_first.data());
  cl_mem min_found = run.scratch(min_room * sizeof(vx_coordinates2d_t));
  cl_mem max_found = run.scratch(max_room * sizeof(vx_coordinates2d_t));
  if (min_starts == nullptr || max_starts == nullptr || min_found == nullptr || max_found == nullptr)
    return VX_ERROR_NO_MEMORY;
  status = run.arguments(locating, in.buffer, in.offset, in.pitch, in.width, in.height, lo, hi, min_starts, max_starts,
                         static_cast<cl_int>(min_room), static_cast<cl_int>(max_room), min_found, max_found);
  if (status == VX_SUCCESS) status = run.enqueue(locating, 1, &rows);
  // vx_coordinates2d_t is two vx_uint32, x then y: what the kernel wrote.
  static_assert(sizeof(vx_coordinates2d_t) == 2 * sizeof(cl_uint));
  if (status == VX_SUCCESS && min_locations != nullptr) {
    status = run.read(min_found, 0, min_room * sizeof(vx_coordinates2d_t), min_locations->items.data());
    min_locations->count = min_room;
  }
  if (status == VX_SUCCESS && max_locations != nullptr) {
    status = run.read(max_found, 0, max_room * sizeof(vx_coordinates2d_t), max_locations->items.data());
    max_locations->count = max_room;
  }
  return status;
}

}  // namespace

void add_statistics_kernels(std::vector<kernel_definition>& t) {
  const auto image = VX_TYPE_IMAGE, scalar = VX_TYPE_SCALAR;
  auto whole = [&](vx_enum e, const char* name, std::vector<_vx_kernel::parameter_info> p, vx_status (*v)(node_check&),
                   vx_status (*run)(whole_run&)) {
    t.push_back({e, name, std::move(p), kernel_shape::whole, 0, v, nullptr, run});
  };
  whole(VX_KERNEL_INTEGRAL_IMAGE, "org.khronos.openvx.integral_image", {input(image), output(image)},
        validate_integral_image, run_integral_image);
  whole(VX_KERNEL_HISTOGRAM, "org.khronos.openvx.histogram", {input(image), output(VX_TYPE_DISTRIBUTION)},
        validate_histogram, run_histogram);
  whole(VX_KERNEL_MEAN_STDDEV, "org.khronos.openvx.mean_stddev",
        {input(image), output(scalar), optional_output(scalar)}, validate_mean_std_dev, run_mean_std_dev);
  whole(VX_KERNEL_MINMAXLOC, "org.khronos.openvx.minmaxloc",
        {input(image), output(scalar), output(scalar), optional_output(VX_TYPE_ARRAY), optional_output(VX_TYPE_ARRAY),
         optional_output(scalar), optional_output(scalar)},
        validate_min_max_loc, run_min_max_loc);
}

}  // namespace ferry::graph
