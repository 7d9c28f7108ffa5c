/* himeno_mpi: a Himeno-style Jacobi stencil over MPI ranks with the transfer commands of
 * libferry_transfer (include/ferry/cl_data_transfer.h), after the clDataTransfer paper's
 * Listing 4 (Takizawa et al., Scientific Programming 2015).
 *
 * The stencil is a 7-point Jacobi relaxation (not Himeno's 19-point one with its
 * coefficient arrays): each interior cell becomes the mean of its six neighbours. The grid
 * (NX x NY x NZ floats; the outer cells stay fixed) is cut into slabs of z planes, one per
 * rank, each with one halo plane below and above. Each rank's slab is halved, as in the
 * paper's Figure 1: the lower half is computed on queue 1, the upper on queue 2. After the
 * lower half, queue 1 exchanges planes with the rank below (its first plane down, the upper
 * halo up from the rank above) with clEnqueueSendrecvBuffer while queue 2 computes the
 * upper half; after the upper half, queue 2 exchanges with the rank above. Events alone
 * order the halves and exchanges of consecutive steps; the host thread enqueues every step
 * without waiting and calls clFinish once after the loop.
 *
 * --host-blocking runs the paper's Listing 2 instead: the same halves and queues, but each
 * exchange is clEnqueueReadBuffer, clFinish, MPI_Sendrecv and clEnqueueWriteBuffer on the
 * host thread.
 *
 * Every cell is computed by the same expression from the same values whatever the number
 * of ranks (a sum of six loads, then one multiplication: nothing a compiler could fuse
 * differently), so the checksum of a 2-rank run equals that of a 1-rank run bit for bit.
 * Prints "checksum <sum> hash <FNV-1a of the grid's bytes>" and, with --repeat R, the
 * median time of a step over R timed runs of --steps steps. */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <mpi.h>

#include <CL/cl.h>
#include <ferry/cl_data_transfer.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kernel_source =
    "__kernel void jacobi(__global const float *p, __global float *q, int nx, int ny, int first_plane) {\n"
    "  const int x = (int)get_global_id(0) + 1, y = (int)get_global_id(1) + 1;\n"
    "  const int z = (int)get_global_id(2) + first_plane;\n"
    "  const size_t plane = (size_t)nx * (size_t)ny;\n"
    "  const size_t i = (size_t)z * plane + (size_t)y * (size_t)nx + (size_t)x;\n"
    "  q[i] = (p[i - 1] + p[i + 1] + p[i - nx] + p[i + nx] + p[i - plane] + p[i + plane]) * (1.0f / 6.0f);\n"
    "}\n";

static int rank_ = 0;

static void stop(const char *what, int code, int line) {
  fprintf(stderr, "himeno_mpi: rank %d: %s failed: %d (line %d)\n", rank_, what, code, line);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

#define CHECK(call)                                   \
  do {                                                \
    cl_int check_rc_ = (call);                        \
    if (check_rc_ != CL_SUCCESS) stop(#call, check_rc_, __LINE__); \
  } while (0)

struct options {
  int nx, ny, nz, steps, repeat, host_blocking;
};

static void usage(FILE *to) {
  fprintf(to,
          "Usage: mpirun -n RANKS himeno_mpi [--grid NX NY NZ] [--steps S] [--repeat R] [--host-blocking]\n"
          "\n"
          "A 7-point Jacobi stencil on an NX x NY x NZ grid of floats cut into slabs of z\n"
          "planes, one per rank, halo planes exchanged with clEnqueueSendrecvBuffer and\n"
          "ordered by events only (the clDataTransfer paper's Listing 4).\n"
          "\n"
          "Options:\n"
          "  --grid NX NY NZ   grid size (default 64 64 64); NZ - 2 >= 2 x RANKS\n"
          "  --steps S         Jacobi steps per run (default 20)\n"
          "  --repeat R        timed runs of S steps; prints the median step time (default 1)\n"
          "  --host-blocking   exchange through the host instead (Listing 2: read, clFinish,\n"
          "                    MPI_Sendrecv, write)\n"
          "  --help            this text\n"
          "\n"
          "Prints \"checksum SUM hash HASH\" of the grid after all steps (rank 0), equal\n"
          "for any number of ranks, and \"step_ms MEDIAN\" with --repeat.\n");
}

/* A positive int from argv[i], or -1. */
static int positive(const char *text) {
  char *end = NULL;
  long v = strtol(text, &end, 10);
  return (end == text || *end != '\0' || v <= 0 || v > 1 << 20) ? -1 : (int)v;
}

/* 0 when the options are fine, 1 after --help, 2 on a usage error (message printed). */
static int parse(int argc, char **argv, struct options *o) {
  *o = (struct options){64, 64, 64, 20, 1, 0};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return 1;
    } else if (strcmp(argv[i], "--host-blocking") == 0) {
      o->host_blocking = 1;
    } else if (strcmp(argv[i], "--grid") == 0 && i + 3 < argc) {
      o->nx = positive(argv[++i]);
      o->ny = positive(argv[++i]);
      o->nz = positive(argv[++i]);
      if (o->nx < 3 || o->ny < 3 || o->nz < 3) {
        fprintf(stderr, "himeno_mpi: --grid needs three sizes of at least 3\n");
        return 2;
      }
    } else if ((strcmp(argv[i], "--steps") == 0 || strcmp(argv[i], "--repeat") == 0) && i + 1 < argc) {
      int v = positive(argv[i + 1]);
      if (v < 0) {
        fprintf(stderr, "himeno_mpi: %s needs a positive number, not '%s'\n", argv[i], argv[i + 1]);
        return 2;
      }
      *(strcmp(argv[i], "--steps") == 0 ? &o->steps : &o->repeat) = v;
      ++i;
    } else {
      fprintf(stderr, "himeno_mpi: unknown or incomplete argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  return 0;
}

/* The device rank % (devices) of the first platform that has one. */
static cl_device_id pick_device(int rank) {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, NULL, &count) != CL_SUCCESS || count == 0) return NULL;
  cl_platform_id *platforms = malloc(count * sizeof *platforms);
  cl_device_id chosen = NULL;
  if (platforms == NULL) return NULL;
  CHECK(clGetPlatformIDs(count, platforms, NULL));
  for (cl_uint i = 0; i < count && chosen == NULL; ++i) {
    cl_uint devices = 0;
    if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 0, NULL, &devices) != CL_SUCCESS || devices == 0) continue;
    cl_device_id *list = malloc(devices * sizeof *list);
    if (list == NULL) break;
    CHECK(clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, devices, list, NULL));
    chosen = list[(cl_uint)rank % devices];
    free(list);
  }
  free(platforms);
  return chosen;
}

/* One rank's slab: global planes [z0, z0 + n) plus a halo plane below and above; local
 * plane k is global plane z0 - 1 + k. The lower half is local planes [1, 1 + half), the
 * upper [1 + half, n + 1). */
struct slab {
  int z0, n, half;
  int below, above; /* neighbour ranks, or MPI_PROC_NULL */
  size_t plane_floats, plane_bytes;
  cl_command_queue lower_queue, upper_queue;
  cl_kernel kernel;
  cl_mem grid[2];
};

static size_t plane_offset(const struct slab *s, int local_plane) { return (size_t)local_plane * s->plane_bytes; }

static void enqueue_half(struct slab *s, const struct options *o, cl_command_queue q, cl_mem from, cl_mem to,
                         int first, int count, cl_uint waits, const cl_event *wait_list) {
  CHECK(clSetKernelArg(s->kernel, 0, sizeof from, &from));
  CHECK(clSetKernelArg(s->kernel, 1, sizeof to, &to));
  CHECK(clSetKernelArg(s->kernel, 2, sizeof o->nx, &o->nx));
  CHECK(clSetKernelArg(s->kernel, 3, sizeof o->ny, &o->ny));
  CHECK(clSetKernelArg(s->kernel, 4, sizeof first, &first));
  size_t global[3] = {(size_t)o->nx - 2, (size_t)o->ny - 2, (size_t)count};
  CHECK(clEnqueueNDRangeKernel(q, s->kernel, 3, NULL, global, NULL, waits, wait_list, NULL));
}

/* Listing 4: every step enqueued at once, ordered by the exchanges' events. Step t reads
 * grid[t % 2] and writes grid[(t + 1) % 2]. The lower half of step t + 1 reads the lower
 * halo the upper exchange of step t receives, and the upper half's top plane; the upper
 * exchange ends after the upper half (same queue), so waiting for it covers both (and the
 * reads of step t that the lower half's writes must follow). Likewise the other way. */
static void run_with_transfer_commands(struct slab *s, const struct options *o, int *step) {
  cl_event down = NULL, up = NULL; /* the previous step's exchanges */
  const int n = s->n, h = s->half;
  for (int i = 0; i < o->steps; ++i, ++*step) {
    cl_mem from = s->grid[*step % 2], to = s->grid[(*step + 1) % 2];
    cl_event new_down = NULL, new_up = NULL;
    enqueue_half(s, o, s->lower_queue, from, to, 1, h, up ? 1 : 0, up ? &up : NULL);
    /* first plane down, upper halo from above */
    CHECK(clEnqueueSendrecvBuffer(s->lower_queue, to, CL_FALSE, plane_offset(s, 1), plane_offset(s, n + 1),
                                  s->plane_bytes, s->below, 0, s->above, 0, MPI_COMM_WORLD, 0, NULL, &new_down));
    enqueue_half(s, o, s->upper_queue, from, to, 1 + h, n - h, down ? 1 : 0, down ? &down : NULL);
    /* last plane up, lower halo from below */
    CHECK(clEnqueueSendrecvBuffer(s->upper_queue, to, CL_FALSE, plane_offset(s, n), plane_offset(s, 0),
                                  s->plane_bytes, s->above, 1, s->below, 1, MPI_COMM_WORLD, 0, NULL, &new_up));
    if (down) clReleaseEvent(down);
    if (up) clReleaseEvent(up);
    down = new_down;
    up = new_up;
    clFlush(s->lower_queue);
    clFlush(s->upper_queue);
  }
  CHECK(clFinish(s->lower_queue));
  CHECK(clFinish(s->upper_queue));
  if (down) clReleaseEvent(down);
  if (up) clReleaseEvent(up);
}

/* Listing 2: the same halves, each exchange through the host, which blocks for it. The
 * lower exchange overlaps the upper half's computation, as in the paper. */
static void run_host_blocking(struct slab *s, const struct options *o, int *step, float *out_planes,
                              float *in_planes) {
  const int n = s->n, h = s->half;
  float *send_down = out_planes, *send_up = out_planes + s->plane_floats;
  float *from_above = in_planes, *from_below = in_planes + s->plane_floats;
  for (int i = 0; i < o->steps; ++i, ++*step) {
    cl_mem from = s->grid[*step % 2], to = s->grid[(*step + 1) % 2];
    enqueue_half(s, o, s->lower_queue, from, to, 1, h, 0, NULL);
    CHECK(clEnqueueReadBuffer(s->lower_queue, to, CL_FALSE, plane_offset(s, 1), s->plane_bytes, send_down, 0, NULL,
                              NULL));
    enqueue_half(s, o, s->upper_queue, from, to, 1 + h, n - h, 0, NULL);
    CHECK(clEnqueueReadBuffer(s->upper_queue, to, CL_FALSE, plane_offset(s, n), s->plane_bytes, send_up, 0, NULL,
                              NULL));
    CHECK(clFinish(s->lower_queue));
    MPI_Sendrecv(send_down, (int)s->plane_floats, MPI_FLOAT, s->below, 0, from_above, (int)s->plane_floats,
                 MPI_FLOAT, s->above, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (s->above != MPI_PROC_NULL)
      CHECK(clEnqueueWriteBuffer(s->upper_queue, to, CL_FALSE, plane_offset(s, n + 1), s->plane_bytes, from_above,
                                 0, NULL, NULL));
    CHECK(clFinish(s->upper_queue));
    MPI_Sendrecv(send_up, (int)s->plane_floats, MPI_FLOAT, s->above, 1, from_below, (int)s->plane_floats,
                 MPI_FLOAT, s->below, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (s->below != MPI_PROC_NULL)
      CHECK(clEnqueueWriteBuffer(s->lower_queue, to, CL_FALSE, plane_offset(s, 0), s->plane_bytes, from_below, 0,
                                 NULL, NULL));
    /* The next step's halves read what both writes bring and what the other queue wrote. */
    CHECK(clFinish(s->lower_queue));
    CHECK(clFinish(s->upper_queue));
  }
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  struct options o;
  int parsed = parse(argc, argv, &o);
  if (parsed != 0) return parsed == 1 ? 0 : 2;

  int provided = MPI_THREAD_SINGLE, ranks = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank_ == 0) fprintf(stderr, "himeno_mpi: MPI does not provide MPI_THREAD_MULTIPLE\n");
    MPI_Finalize();
    return 1;
  }
  const int interior = o.nz - 2;
  if (interior < 2 * ranks) {
    if (rank_ == 0) fprintf(stderr, "himeno_mpi: NZ - 2 = %d planes cannot give %d ranks two each\n", interior, ranks);
    MPI_Finalize();
    return 2;
  }

  struct slab s;
  memset(&s, 0, sizeof s);
  s.z0 = 1 + (int)((long)interior * rank_ / ranks);
  s.n = 1 + (int)((long)interior * (rank_ + 1) / ranks) - s.z0;
  s.half = s.n / 2;
  s.below = rank_ > 0 ? rank_ - 1 : MPI_PROC_NULL;
  s.above = rank_ + 1 < ranks ? rank_ + 1 : MPI_PROC_NULL;
  s.plane_floats = (size_t)o.nx * (size_t)o.ny;
  s.plane_bytes = s.plane_floats * sizeof(float);
  const size_t local_floats = (size_t)(s.n + 2) * s.plane_floats;

  cl_device_id device = pick_device(rank_);
  if (device == NULL) {
    fprintf(stderr, "himeno_mpi: rank %d: no OpenCL device found\n", rank_);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  cl_int rc;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
  CHECK(rc);
  s.lower_queue = clCreateCommandQueue(context, device, 0, &rc);
  CHECK(rc);
  s.upper_queue = clCreateCommandQueue(context, device, 0, &rc);
  CHECK(rc);
  cl_program program = clCreateProgramWithSource(context, 1, &kernel_source, NULL, &rc);
  CHECK(rc);
  CHECK(clBuildProgram(program, 1, &device, "", NULL, NULL));
  s.kernel = clCreateKernel(program, "jacobi", &rc);
  CHECK(rc);

  /* The initial grid is a function of the global position, so every rank's halos start
   * equal to its neighbours' planes and the outer cells hold their fixed values. */
  float *host = malloc(local_floats * sizeof *host);
  float *exchange = malloc(4 * s.plane_floats * sizeof *exchange);
  if (host == NULL || exchange == NULL) {
    fprintf(stderr, "himeno_mpi: rank %d: out of host memory\n", rank_);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int k = 0; k < s.n + 2; ++k)
    for (int y = 0; y < o.ny; ++y)
      for (int x = 0; x < o.nx; ++x) {
        const int z = s.z0 - 1 + k;
        host[(size_t)k * s.plane_floats + (size_t)y * o.nx + x] = (float)((x * 7 + y * 13 + z * 29) % 97) / 97.0f;
      }
  for (int g = 0; g < 2; ++g) {
    s.grid[g] = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, local_floats * sizeof *host, host,
                               &rc);
    CHECK(rc);
  }

  int step = 0;
  double *step_ms = malloc((size_t)o.repeat * sizeof *step_ms);
  if (step_ms == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  for (int r = 0; r < o.repeat; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    if (o.host_blocking)
      run_host_blocking(&s, &o, &step, exchange, exchange + 2 * s.plane_floats);
    else
      run_with_transfer_commands(&s, &o, &step);
    double elapsed = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    step_ms[r] = slowest * 1000.0 / o.steps;
  }

  /* Rank 0 gathers the owned planes in z order and sums and hashes them in that order. */
  CHECK(clEnqueueReadBuffer(s.lower_queue, s.grid[step % 2], CL_TRUE, plane_offset(&s, 1),
                            (size_t)s.n * s.plane_bytes, host, 0, NULL, NULL));
  int *counts = malloc((size_t)ranks * sizeof *counts), *offsets = malloc((size_t)ranks * sizeof *offsets);
  float *all = rank_ == 0 ? malloc((size_t)interior * s.plane_floats * sizeof *all) : NULL;
  if (counts == NULL || offsets == NULL || (rank_ == 0 && all == NULL)) MPI_Abort(MPI_COMM_WORLD, 1);
  const int mine = s.n * (int)s.plane_floats;
  MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank_ == 0)
    for (int r = 0, at = 0; r < ranks; at += counts[r], ++r) offsets[r] = at;
  MPI_Gatherv(host, mine, MPI_FLOAT, all, counts, offsets, MPI_FLOAT, 0, MPI_COMM_WORLD);
  if (rank_ == 0) {
    double sum = 0;
    uint64_t hash = 1469598103934665603ull;
    const size_t total = (size_t)interior * s.plane_floats;
    for (size_t i = 0; i < total; ++i) {
      sum += all[i];
      const unsigned char *b = (const unsigned char *)&all[i];
      for (size_t k = 0; k < sizeof(float); ++k) hash = (hash ^ b[k]) * 1099511628211ull;
    }
    printf("grid %d %d %d steps %d ranks %d mode %s\n", o.nx, o.ny, o.nz, step, ranks,
           o.host_blocking ? "host-blocking" : "transfer-commands");
    printf("checksum %.17g hash %016llx\n", sum, (unsigned long long)hash);
    if (o.repeat > 1) {
      qsort(step_ms, (size_t)o.repeat, sizeof *step_ms, compare_doubles);
      printf("step_ms %.3f (median of %d runs of %d steps)\n", step_ms[o.repeat / 2], o.repeat, o.steps);
    }
  }

  free(all);
  free(counts);
  free(offsets);
  free(step_ms);
  free(exchange);
  free(host);
  clReleaseMemObject(s.grid[0]);
  clReleaseMemObject(s.grid[1]);
  clReleaseKernel(s.kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(s.upper_queue);
  clReleaseCommandQueue(s.lower_queue);
  clReleaseContext(context);
  MPI_Finalize();
  return 0;
}
