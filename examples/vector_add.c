/* vector_add: adds two vectors of 1M floats on the first OpenCL device it finds and checks
 * the result on the host.
 *
 * A plain OpenCL 1.2 program with nothing Ferry-specific in it: run it as it is for the
 * native platform, or as `ferry run -- vector_add` to run it on a Ferry server. */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1024 * 1024)

static const char *kernel_source =
    "__kernel void vector_add(__global const float *a, __global const float *b,\n"
    "                         __global float *c, const unsigned int n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

#define CHECK(call)                                                                         \
  do {                                                                                      \
    cl_int check_rc_ = (call);                                                              \
    if (check_rc_ != CL_SUCCESS) {                                                          \
      fprintf(stderr, "vector_add: %s failed: %d (line %d)\n", #call, check_rc_, __LINE__); \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

/* The first device of the first platform that has one. */
static int pick_device(cl_platform_id *platform_out, cl_device_id *device_out) {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, NULL, &count) != CL_SUCCESS || count == 0) return 0;
  cl_platform_id *platforms = malloc(count * sizeof *platforms);
  if (platforms == NULL) return 0;
  CHECK(clGetPlatformIDs(count, platforms, NULL));
  int found = 0;
  for (cl_uint i = 0; i < count && !found; ++i) {
    if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, device_out, NULL) == CL_SUCCESS) {
      *platform_out = platforms[i];
      found = 1;
    }
  }
  free(platforms);
  return found;
}

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  if (!pick_device(&platform, &device)) {
    fprintf(stderr, "vector_add: no OpenCL device found\n");
    return 1;
  }
  char platform_name[256] = "", device_name[256] = "";
  CHECK(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof platform_name, platform_name, NULL));
  CHECK(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof device_name, device_name, NULL));

  float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
  if (a == NULL || b == NULL || c == NULL) {
    fprintf(stderr, "vector_add: out of host memory\n");
    return 1;
  }
  for (unsigned i = 0; i < N; ++i) {
    a[i] = (float)i * 0.5f;
    b[i] = (float)(N - i) * 0.25f;
    c[i] = -1.0f;
  }

  cl_int rc;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
  CHECK(rc);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &rc);
  CHECK(rc);
  cl_program program = clCreateProgramWithSource(context, 1, &kernel_source, NULL, &rc);
  CHECK(rc);
  rc = clBuildProgram(program, 1, &device, "", NULL, NULL);
  if (rc != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    fprintf(stderr, "vector_add: clBuildProgram failed: %d\n%s\n", rc, log);
    return 1;
  }
  cl_kernel kernel = clCreateKernel(program, "vector_add", &rc);
  CHECK(rc);

  const size_t bytes = N * sizeof(float);
  cl_mem buf_a = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a, &rc);
  CHECK(rc);
  cl_mem buf_b = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b, &rc);
  CHECK(rc);
  cl_mem buf_c = clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, NULL, &rc);
  CHECK(rc);

  cl_uint n = N;
  CHECK(clSetKernelArg(kernel, 0, sizeof buf_a, &buf_a));
  CHECK(clSetKernelArg(kernel, 1, sizeof buf_b, &buf_b));
  CHECK(clSetKernelArg(kernel, 2, sizeof buf_c, &buf_c));
  CHECK(clSetKernelArg(kernel, 3, sizeof n, &n));
  size_t global = N;
  CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(queue, buf_c, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
  CHECK(clFinish(queue));

  /* Single-precision addition is correctly rounded on every OpenCL device, so the host's
   * sum must match exactly. */
  unsigned mismatches = 0;
  for (unsigned i = 0; i < N; ++i) {
    if (c[i] != a[i] + b[i]) {
      if (mismatches == 0) {
        fprintf(stderr, "vector_add: mismatch at %u: %g + %g gave %g\n", i, a[i], b[i], c[i]);
      }
      ++mismatches;
    }
  }

  clReleaseMemObject(buf_c);
  clReleaseMemObject(buf_b);
  clReleaseMemObject(buf_a);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  free(c);
  free(b);
  free(a);

  if (mismatches != 0) {
    fprintf(stderr, "vector_add: FAILED: %u of %u elements wrong\n", mismatches, N);
    return 1;
  }
  printf("vector_add: OK on %s / %s\n", platform_name, device_name);
  return 0;
}
