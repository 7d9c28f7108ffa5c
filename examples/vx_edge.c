/* Edge detection with OpenVX's standard API only: a graph of Median3x3 ->
 * Sobel3x3 -> Magnitude -> ConvertDepth -> Threshold, with virtual images
 * between the nodes (which Ferry's implementation fuses into one kernel).
 * It knows nothing about Ferry: built against any OpenVX 1.3 implementation it
 * runs there. With Ferry's, FERRY_VX_DEVICES picks the OpenCL devices (e.g.
 * "ferry" for the servers of FERRY_SERVERS, `ferry run -- vx_edge ...`).
 *
 *   vx_edge [--size WxH] [--runs N] [--input FILE.pgm] [OUTPUT.pgm]
 *
 * Without --input it makes a synthetic scene (rectangles and a disc with
 * noise). It prints the edge pixel count, a checksum of the output and the
 * median time of a graph run; with OUTPUT it writes the edges as a PGM. */
#include <VX/vx.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE* to) {
  fprintf(to,
          "usage: vx_edge [--size WxH] [--runs N] [--input FILE.pgm] [OUTPUT.pgm]\n"
          "  --size WxH      synthetic input size (default 640x480)\n"
          "  --runs N        graph runs to time (default 10)\n"
          "  --input FILE    an 8-bit binary PGM (P5) instead of the synthetic scene\n"
          "  OUTPUT.pgm      where to write the edge image (default: not written)\n");
}

static int check(vx_status status, const char* what) {
  if (status != VX_SUCCESS) fprintf(stderr, "vx_edge: %s failed: status %d\n", what, status);
  return status == VX_SUCCESS;
}

static int check_ref(vx_reference ref, const char* what) { return check(vxGetStatus(ref), what); }

static void VX_CALLBACK log_line(vx_context context, vx_reference ref, vx_status status, const vx_char string[]) {
  (void)context, (void)ref;
  fprintf(stderr, "vx_edge: OpenVX says (%d): %s\n", status, string);
}

/* Reads an 8-bit binary PGM; NULL with a message on any problem. */
static uint8_t* read_pgm(const char* path, uint32_t* width, uint32_t* height) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return NULL;
  }
  unsigned w = 0, h = 0, max = 0;
  if (fscanf(f, "P5 %u %u %u", &w, &h, &max) != 3 || max != 255 || w == 0 || h == 0 || w > 65536 || h > 65536 ||
      fgetc(f) == EOF) {
    fprintf(stderr, "vx_edge: %s is not an 8-bit binary PGM (P5, maxval 255, at most 65536x65536)\n", path);
    fclose(f);
    return NULL;
  }
  uint8_t* pixels = malloc((size_t)w * h);
  if (pixels == NULL || fread(pixels, 1, (size_t)w * h, f) != (size_t)w * h) {
    fprintf(stderr, "vx_edge: %s is shorter than %ux%u pixels\n", path, w, h);
    free(pixels);
    fclose(f);
    return NULL;
  }
  fclose(f);
  *width = w, *height = h;
  return pixels;
}

/* Rectangles and a disc on a gradient, with some noise for the median. */
static uint8_t* synthetic_scene(uint32_t w, uint32_t h) {
  uint8_t* pixels = malloc((size_t)w * h);
  if (pixels == NULL) return NULL;
  uint32_t seed = 12345;
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) {
      int v = (int)(40 + (x * 60) / (w > 1 ? w - 1 : 1));
      if (x > w / 8 && x < w / 3 && y > h / 6 && y < h / 2) v = 200;
      long dx = (long)x - (long)(2 * w / 3), dy = (long)y - (long)(h / 2);
      long r = (long)(w < h ? w : h) / 4;
      if (dx * dx + dy * dy < r * r) v = 160;
      seed = seed * 1103515245u + 12345u;
      if ((seed >> 16) % 50 == 0) v = (seed >> 8) % 256; /* salt and pepper */
      pixels[(size_t)y * w + x] = (uint8_t)v;
    }
  return pixels;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  uint32_t width = 640, height = 480;
  int runs = 10;
  const char* input_path = NULL;
  const char* output_path = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
      char tail = 0;
      if (sscanf(argv[++i], "%ux%u%c", &width, &height, &tail) != 2 || width == 0 || height == 0 || width > 65536 ||
          height > 65536) {
        fprintf(stderr, "vx_edge: --size takes WxH, each 1 to 65536 (got '%s')\n", argv[i]);
        return 2;
      }
    } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      char* end = NULL;
      long n = strtol(argv[++i], &end, 10);
      if (*end != '\0' || n < 1 || n > 100000) {
        fprintf(stderr, "vx_edge: --runs takes 1 to 100000 (got '%s')\n", argv[i]);
        return 2;
      }
      runs = (int)n;
    } else if (strcmp(argv[i], "--input") == 0 && i + 1 < argc) {
      input_path = argv[++i];
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "vx_edge: unknown option '%s' (try --help)\n", argv[i]);
      return 2;
    } else if (output_path == NULL) {
      output_path = argv[i];
    } else {
      fprintf(stderr, "vx_edge: one output file only (try --help)\n");
      return 2;
    }
  }
  uint8_t* pixels = input_path != NULL ? read_pgm(input_path, &width, &height) : synthetic_scene(width, height);
  if (pixels == NULL) return 1;

  int ok = 1;
  vx_context context = vxCreateContext();
  if (!check_ref((vx_reference)context, "vxCreateContext")) return 1;
  vxRegisterLogCallback(context, log_line, vx_false_e);
  vx_image input = vxCreateImage(context, width, height, VX_DF_IMAGE_U8);
  vx_image edges = vxCreateImage(context, width, height, VX_DF_IMAGE_U8);
  vx_rectangle_t whole = {0, 0, width, height};
  vx_imagepatch_addressing_t address = {0};
  address.dim_x = width, address.dim_y = height, address.stride_x = 1, address.stride_y = (vx_int32)width;
  ok = ok && check_ref((vx_reference)input, "vxCreateImage") && check_ref((vx_reference)edges, "vxCreateImage") &&
       check(vxCopyImagePatch(input, &whole, 0, &address, pixels, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST),
             "vxCopyImagePatch");

  vx_graph graph = vxCreateGraph(context);
  vx_image smooth = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
  vx_image gx = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
  vx_image gy = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
  vx_image magnitude = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
  vx_image magnitude_u8 = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_U8);
  vx_int32 shift = 2;
  vx_scalar shift_scalar = vxCreateScalar(context, VX_TYPE_INT32, &shift);
  vx_threshold threshold = vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_U8, VX_DF_IMAGE_U8);
  vx_pixel_value_t level = {0}, on = {0}, off = {0};
  level.U8 = 40, on.U8 = 255, off.U8 = 0;
  ok = ok && check(vxCopyThresholdValue(threshold, &level, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), "threshold value") &&
       check(vxCopyThresholdOutput(threshold, &on, &off, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), "threshold output");
  vx_node nodes[5] = {
      vxMedian3x3Node(graph, input, smooth),
      vxSobel3x3Node(graph, smooth, gx, gy),
      vxMagnitudeNode(graph, gx, gy, magnitude),
      vxConvertDepthNode(graph, magnitude, magnitude_u8, VX_CONVERT_POLICY_SATURATE, shift_scalar),
      vxThresholdNode(graph, magnitude_u8, threshold, edges),
  };
  vx_border_t border = {VX_BORDER_REPLICATE, {{0}}};
  for (int n = 0; n < 5; ++n)
    ok = ok && check_ref((vx_reference)nodes[n], "node creation") &&
         check(vxSetNodeAttribute(nodes[n], VX_NODE_BORDER, &border, sizeof border), "VX_NODE_BORDER");
  ok = ok && check(vxVerifyGraph(graph), "vxVerifyGraph");

  double* times = malloc(sizeof(double) * (size_t)runs);
  for (int r = 0; ok && times != NULL && r < runs; ++r) {
    double begin = now_ms();
    ok = check(vxProcessGraph(graph), "vxProcessGraph");
    times[r] = now_ms() - begin;
  }

  uint8_t* result = malloc((size_t)width * height);
  ok = ok && result != NULL &&
       check(vxCopyImagePatch(edges, &whole, 0, &address, result, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
             "vxCopyImagePatch (read)");
  if (ok) {
    uint64_t count = 0, checksum = 1469598103934665603ull; /* FNV-1a over the pixels */
    for (size_t i = 0; i < (size_t)width * height; ++i) {
      count += result[i] != 0;
      checksum = (checksum ^ result[i]) * 1099511628211ull;
    }
    qsort(times, (size_t)runs, sizeof(double), compare_doubles);
    printf("vx_edge: %ux%u, %llu edge pixels, checksum %016llx, median graph run %.3f ms over %d runs\n", width,
           height, (unsigned long long)count, (unsigned long long)checksum, times[runs / 2], runs);
    if (output_path != NULL) {
      FILE* f = fopen(output_path, "wb");
      if (f == NULL || fprintf(f, "P5\n%u %u\n255\n", width, height) < 0 ||
          fwrite(result, 1, (size_t)width * height, f) != (size_t)width * height) {
        perror(output_path);
        ok = 0;
      }
      if (f != NULL && fclose(f) != 0) ok = 0;
    }
  }
  for (int n = 0; n < 5; ++n) vxReleaseNode(&nodes[n]);
  vxReleaseImage(&smooth), vxReleaseImage(&gx), vxReleaseImage(&gy), vxReleaseImage(&magnitude);
  vxReleaseImage(&magnitude_u8), vxReleaseImage(&input), vxReleaseImage(&edges);
  vxReleaseScalar(&shift_scalar);
  vxReleaseThreshold(&threshold);
  vxReleaseGraph(&graph);
  vxReleaseContext(&context);
  free(pixels), free(result), free(times);
  return ok ? 0 : 1;
}
