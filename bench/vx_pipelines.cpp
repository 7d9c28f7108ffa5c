// The three OpenVX pipelines of the paper behind Ferry's graph layer (issue 25), on U8
// images, each built twice: once verified with fusion on and once with it off
// (FERRY_VX_FUSION=0 at vxVerifyGraph), so the figure is what fusing the nodes into fewer
// OpenCL kernels gains on the same devices:
//
//   edge_detect  Median3x3 -> Scharr3x3 (Ferry's vendor node, both gradients) -> Magnitude (S16)
//   filtering    Sobel3x3 (both gradients) -> Magnitude -> ConvertDepth (S16 -> U8, saturate,
//                shift 0) -> Erode3x3 -> Dilate3x3 (U8)
//   box_closing  Convolve (3x3 of ones, scale 8) -> Erode3x3 -> Threshold (binary, > 100:
//                255, else 0) (U8)
//
// The paper's filtering goes straight from Magnitude to Erode3x3, but Magnitude writes S16
// and Erode3x3 reads U8 only, so an OpenVX graph needs the ConvertDepth between them.
// Intermediates are virtual images, every node replicates the border. Only the public
// OpenVX API is used: the devices are the ones FERRY_VX_DEVICES picks, as for any
// application. bench/vx_opencv.py runs the same pipelines with OpenCV.
//
//   ferry_bench_vx_pipelines [--sizes WxH,...] [--pipelines NAME,...] [--runs N] [--warmup N]
#include <VX/vx.h>
#include <VX/vx_ext_ferry.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr const char* program_name = "ferry_bench_vx_pipelines";

using clock_type = std::chrono::steady_clock;

// A call of the OpenVX API failed; the log callback has said why on stderr.
struct vx_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void require(vx_status status, const std::string& what) {
  if (status != VX_SUCCESS) throw vx_failure(what + " failed (status " + std::to_string(status) + ")");
}

template <typename Handle>
Handle require_object(Handle handle, const std::string& what) {
  vx_status status = vxGetStatus(reinterpret_cast<vx_reference>(handle));
  if (status != VX_SUCCESS) throw vx_failure(what + " failed (status " + std::to_string(status) + ")");
  return handle;
}

void VX_CALLBACK print_log(vx_context, vx_reference, vx_status status, const vx_char message[]) {
  std::fprintf(stderr, "%s: openvx log (status %d): %s\n", program_name, status, message);
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  if (values.empty()) return 0;
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

struct image_size {
  vx_uint32 width = 0;
  vx_uint32 height = 0;
  std::string label() const { return std::to_string(width) + "x" + std::to_string(height); }
  double megapixels() const { return static_cast<double>(width) * height / 1e6; }
};

// ---------------------------------------------------------------------------------------
// The graphs

// Everything one graph owns besides the graph itself, released with it.
struct graph_parts {
  std::vector<vx_node> nodes;
  std::vector<vx_image> images;  // virtual intermediates
  vx_convolution convolution = nullptr;
  vx_threshold threshold = nullptr;
  vx_scalar shift = nullptr;
};

vx_image virtual_image(vx_graph graph, graph_parts& parts, vx_df_image format, const char* name) {
  vx_image image = require_object(vxCreateVirtualImage(graph, 0, 0, format), std::string("virtual image ") + name);
  parts.images.push_back(image);
  vxSetReferenceName(reinterpret_cast<vx_reference>(image), name);
  return image;
}

void add_node(graph_parts& parts, vx_node node, const char* name) {
  require_object(node, std::string("node ") + name);
  parts.nodes.push_back(node);
  vxSetReferenceName(reinterpret_cast<vx_reference>(node), name);
  // Replicate on every node, point nodes included: one border for the whole graph, as
  // OpenCV's BORDER_REPLICATE in vx_opencv.py.
  vx_border_t border{};
  border.mode = VX_BORDER_REPLICATE;
  require(vxSetNodeAttribute(node, VX_NODE_BORDER, &border, sizeof border), std::string("VX_NODE_BORDER of ") + name);
}

// Intermediates whose format follows from the node that writes them are VX_DF_IMAGE_VIRT
// (the implementation settles it at verification); those where the format is a choice
// (what ConvertDepth and Convolve write) are virtual U8.
void build_edge_detect(vx_context, vx_graph graph, vx_image input, vx_image output, graph_parts& parts) {
  vx_image smooth = virtual_image(graph, parts, VX_DF_IMAGE_VIRT, "smooth");
  vx_image gx = virtual_image(graph, parts, VX_DF_IMAGE_VIRT, "scharr_x");
  vx_image gy = virtual_image(graph, parts, VX_DF_IMAGE_VIRT, "scharr_y");
  add_node(parts, vxMedian3x3Node(graph, input, smooth), "median3x3");
  add_node(parts, vxFerryScharr3x3Node(graph, smooth, gx, gy), "scharr3x3");
  add_node(parts, vxMagnitudeNode(graph, gx, gy, output), "magnitude");
}

void build_filtering(vx_context context, vx_graph graph, vx_image input, vx_image output, graph_parts& parts) {
  vx_image gx = virtual_image(graph, parts, VX_DF_IMAGE_VIRT, "sobel_x");
  vx_image gy = virtual_image(graph, parts, VX_DF_IMAGE_VIRT, "sobel_y");
  vx_image magnitude = virtual_image(graph, parts, VX_DF_IMAGE_VIRT, "magnitude");
  vx_image magnitude_u8 = virtual_image(graph, parts, VX_DF_IMAGE_U8, "magnitude_u8");
  vx_image eroded = virtual_image(graph, parts, VX_DF_IMAGE_VIRT, "eroded");
  const vx_int32 no_shift = 0;
  parts.shift = require_object(vxCreateScalar(context, VX_TYPE_INT32, &no_shift), "shift scalar");
  add_node(parts, vxSobel3x3Node(graph, input, gx, gy), "sobel3x3");
  add_node(parts, vxMagnitudeNode(graph, gx, gy, magnitude), "magnitude");
  add_node(parts, vxConvertDepthNode(graph, magnitude, magnitude_u8, VX_CONVERT_POLICY_SATURATE, parts.shift),
           "convert_depth");
  add_node(parts, vxErode3x3Node(graph, magnitude_u8, eroded), "erode3x3");
  add_node(parts, vxDilate3x3Node(graph, eroded, output), "dilate3x3");
}

// The box's sum of 9 pixels over 8 (a power of two, as the spec requires of a
// convolution's scale; 9 is not), saturated to U8.
constexpr vx_uint32 box_scale = 8;
constexpr vx_uint8 threshold_value = 100;

void build_box_closing(vx_context context, vx_graph graph, vx_image input, vx_image output, graph_parts& parts) {
  parts.convolution = require_object(vxCreateConvolution(context, 3, 3), "vxCreateConvolution");
  vx_int16 ones[9];
  std::fill(std::begin(ones), std::end(ones), vx_int16{1});
  require(vxCopyConvolutionCoefficients(parts.convolution, ones, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST),
          "vxCopyConvolutionCoefficients");
  vx_uint32 scale = box_scale;
  require(vxSetConvolutionAttribute(parts.convolution, VX_CONVOLUTION_SCALE, &scale, sizeof scale),
          "VX_CONVOLUTION_SCALE");
  parts.threshold = require_object(
      vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_U8, VX_DF_IMAGE_U8),
      "vxCreateThresholdForImage");
  vx_pixel_value_t value{}, true_value{}, false_value{};
  value.U8 = threshold_value;
  true_value.U8 = 255;
  false_value.U8 = 0;
  require(vxCopyThresholdValue(parts.threshold, &value, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), "vxCopyThresholdValue");
  require(vxCopyThresholdOutput(parts.threshold, &true_value, &false_value, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST),
          "vxCopyThresholdOutput");
  vx_image boxed = virtual_image(graph, parts, VX_DF_IMAGE_U8, "boxed");
  vx_image eroded = virtual_image(graph, parts, VX_DF_IMAGE_VIRT, "eroded");
  add_node(parts, vxConvolveNode(graph, input, parts.convolution, boxed), "convolve3x3");
  add_node(parts, vxErode3x3Node(graph, boxed, eroded), "erode3x3");
  add_node(parts, vxThresholdNode(graph, eroded, parts.threshold, output), "threshold");
}

struct pipeline {
  const char* name;
  const char* nodes;  // for --help
  vx_df_image output_format;
  void (*build)(vx_context, vx_graph, vx_image, vx_image, graph_parts&);
};

const pipeline pipelines[] = {
    {"edge_detect", "Median3x3 -> Scharr3x3 (vxFerryScharr3x3Node) -> Magnitude, S16 out", VX_DF_IMAGE_S16,
     build_edge_detect},
    {"filtering", "Sobel3x3 -> Magnitude -> ConvertDepth(S16->U8, saturate) -> Erode3x3 -> Dilate3x3",
     VX_DF_IMAGE_U8, build_filtering},
    {"box_closing", "Convolve(3x3 ones, scale 8) -> Erode3x3 -> Threshold(binary, >100: 255)", VX_DF_IMAGE_U8,
     build_box_closing},
};

size_t bytes_per_pixel(vx_df_image format) { return format == VX_DF_IMAGE_S16 ? 2 : 1; }

// Copies `pixels` (packed rows) into or out of `image`.
void copy_image(vx_image image, image_size size, vx_df_image format, void* pixels, vx_enum usage) {
  vx_rectangle_t whole{0, 0, size.width, size.height};
  vx_imagepatch_addressing_t layout = VX_IMAGEPATCH_ADDR_INIT;
  layout.dim_x = size.width;
  layout.dim_y = size.height;
  layout.stride_x = static_cast<vx_int32>(bytes_per_pixel(format));
  layout.stride_y = static_cast<vx_int32>(size.width * bytes_per_pixel(format));
  require(vxCopyImagePatch(image, &whole, 0, &layout, pixels, usage, VX_MEMORY_TYPE_HOST), "vxCopyImagePatch");
}

// A fixed pseudo-random U8 pattern (xorshift32 from a constant seed): the same bytes on
// every run and for both modes, so their outputs can be compared byte for byte.
std::vector<vx_uint8> input_pattern(image_size size) {
  std::vector<vx_uint8> pixels(static_cast<size_t>(size.width) * size.height);
  uint32_t state = 0x2545f491u;
  for (vx_uint8& p : pixels) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    p = static_cast<vx_uint8>(state >> 24);
  }
  return pixels;
}

enum class fusion { on, off };
const char* label_of(fusion mode) { return mode == fusion::on ? "fused" : "unfused"; }

// One pipeline as a verified graph with its own input and output.
class pipeline_graph {
 public:
  pipeline_graph(vx_context context, const pipeline& p, image_size size, const std::vector<vx_uint8>& pixels,
                 fusion mode)
      : size_(size), output_format_(p.output_format) {
    graph_ = require_object(vxCreateGraph(context), "vxCreateGraph");
    const std::string name = std::string(p.name) + "." + label_of(mode);
    vxSetReferenceName(reinterpret_cast<vx_reference>(graph_), name.c_str());
    input_ = require_object(vxCreateImage(context, size.width, size.height, VX_DF_IMAGE_U8), "input vxCreateImage");
    output_ = require_object(vxCreateImage(context, size.width, size.height, p.output_format), "output vxCreateImage");
    copy_image(input_, size, VX_DF_IMAGE_U8, const_cast<vx_uint8*>(pixels.data()), VX_WRITE_ONLY);
    p.build(context, graph_, input_, output_, parts_);
    // Fusion is decided when the graph is verified; the variable is set either way (a
    // FERRY_VX_FUSION=0 in the caller's environment would otherwise make both unfused)
    // and put back afterwards.
    const char* before = std::getenv("FERRY_VX_FUSION");
    const std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
    setenv("FERRY_VX_FUSION", mode == fusion::on ? "1" : "0", 1);
    const auto start = clock_type::now();
    vx_status verified = vxVerifyGraph(graph_);
    verify_ms_ = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
    if (saved)
      setenv("FERRY_VX_FUSION", saved->c_str(), 1);
    else
      unsetenv("FERRY_VX_FUSION");
    require(verified, "vxVerifyGraph of " + name);
  }
  pipeline_graph(const pipeline_graph&) = delete;
  pipeline_graph& operator=(const pipeline_graph&) = delete;
  ~pipeline_graph() {
    for (vx_node& node : parts_.nodes) vxReleaseNode(&node);
    for (vx_image& image : parts_.images) vxReleaseImage(&image);
    if (parts_.convolution) vxReleaseConvolution(&parts_.convolution);
    if (parts_.threshold) vxReleaseThreshold(&parts_.threshold);
    if (parts_.shift) vxReleaseScalar(&parts_.shift);
    if (input_) vxReleaseImage(&input_);
    if (output_) vxReleaseImage(&output_);
    if (graph_) vxReleaseGraph(&graph_);
  }

  // Milliseconds of one vxProcessGraph (which returns once the devices have finished).
  double process_ms() {
    const auto start = clock_type::now();
    require(vxProcessGraph(graph_), "vxProcessGraph");
    return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
  }

  std::vector<uint8_t> output_bytes() {
    std::vector<uint8_t> bytes(static_cast<size_t>(size_.width) * size_.height * bytes_per_pixel(output_format_));
    copy_image(output_, size_, output_format_, bytes.data(), VX_READ_ONLY);
    return bytes;
  }

  double verify_ms() const { return verify_ms_; }

 private:
  image_size size_;
  vx_df_image output_format_;
  vx_graph graph_ = nullptr;
  vx_image input_ = nullptr;
  vx_image output_ = nullptr;
  graph_parts parts_;
  double verify_ms_ = 0;
};

// ---------------------------------------------------------------------------------------
// Measuring

struct settings {
  std::vector<image_size> sizes{{640, 480}, {1920, 1080}, {3840, 2160}};
  std::vector<const pipeline*> chosen;
  int runs = 20;
  int warmup = 3;
};

struct measurement {
  std::string pipeline;
  std::string size;
  double fused_ms = 0;
  double unfused_ms = 0;
};

void print_mode(const char* pipeline_name, image_size size, fusion mode, const std::vector<double>& ms,
                double verify_ms) {
  const double median_ms = median_of(ms);
  std::printf("vx_pipelines %s pipeline=%s size=%s median_ms=%s min_ms=%s mpix_s=%s verify_ms=%s runs=%zu\n",
              label_of(mode), pipeline_name, size.label().c_str(), fixed(median_ms, 3).c_str(),
              fixed(*std::min_element(ms.begin(), ms.end()), 3).c_str(),
              fixed(size.megapixels() / (median_ms / 1e3), 1).c_str(), fixed(verify_ms, 1).c_str(), ms.size());
  std::fflush(stdout);
}

// Both graphs of one pipeline and size, their runs interleaved (fused, unfused, fused,
// ...) so that whatever else the machine does falls on both alike.
measurement measure(vx_context context, const pipeline& p, image_size size, const settings& s) {
  std::fprintf(stderr, "%s: %s %s: verifying\n", program_name, p.name, size.label().c_str());
  const std::vector<vx_uint8> pixels = input_pattern(size);
  pipeline_graph fused(context, p, size, pixels, fusion::on);
  pipeline_graph unfused(context, p, size, pixels, fusion::off);
  for (int i = 0; i < s.warmup; ++i) {
    fused.process_ms();
    unfused.process_ms();
  }
  std::vector<double> fused_ms, unfused_ms;
  for (int i = 0; i < s.runs; ++i) {
    fused_ms.push_back(fused.process_ms());
    unfused_ms.push_back(unfused.process_ms());
  }
  // Fusion must not change a byte: replicate borders define every pixel.
  const std::vector<uint8_t> fused_out = fused.output_bytes(), unfused_out = unfused.output_bytes();
  auto mismatch = std::mismatch(fused_out.begin(), fused_out.end(), unfused_out.begin());
  if (mismatch.first != fused_out.end()) {
    const size_t pixel = static_cast<size_t>(mismatch.first - fused_out.begin()) / bytes_per_pixel(p.output_format);
    const size_t differing = static_cast<size_t>(std::count_if(
        fused_out.begin(), fused_out.end(),
        [&, i = size_t{0}](uint8_t byte) mutable { return byte != unfused_out[i++]; }));
    throw std::runtime_error("wrong result: " + std::string(p.name) + " " + size.label() +
                             ": fused and unfused outputs differ first at pixel (" +
                             std::to_string(pixel % size.width) + ", " + std::to_string(pixel / size.width) + "), " +
                             std::to_string(differing) + " bytes differ");
  }
  print_mode(p.name, size, fusion::on, fused_ms, fused.verify_ms());
  print_mode(p.name, size, fusion::off, unfused_ms, unfused.verify_ms());
  measurement m{p.name, size.label(), median_of(fused_ms), median_of(unfused_ms)};
  std::printf("vx_pipelines ratio pipeline=%s size=%s unfused/fused=%s (target >= 1.25) checked=identical\n", p.name,
              m.size.c_str(), fixed(m.unfused_ms / m.fused_ms, 2).c_str());
  std::fflush(stdout);
  return m;
}

void print_table(const std::vector<measurement>& results) {
  std::printf("# %-12s %-10s %10s %11s %14s\n", "pipeline", "size", "fused_ms", "unfused_ms", "unfused/fused");
  for (const measurement& m : results)
    std::printf("# %-12s %-10s %10s %11s %14s\n", m.pipeline.c_str(), m.size.c_str(), fixed(m.fused_ms, 3).c_str(),
                fixed(m.unfused_ms, 3).c_str(), fixed(m.unfused_ms / m.fused_ms, 2).c_str());
}

// ---------------------------------------------------------------------------------------
// Options

void print_usage() {
  std::printf(
      "usage: %s [--sizes WxH,...] [--pipelines NAME,...] [--runs N] [--warmup N]\n"
      "The paper's three OpenVX pipelines on U8 images with virtual intermediates and\n"
      "replicated borders, each verified once with fusion (FERRY_VX_FUSION=1) and once\n"
      "without (FERRY_VX_FUSION=0): median ms of vxProcessGraph, megapixels/s, and\n"
      "unfused/fused. The fused and unfused outputs must be identical.\n",
      program_name);
  for (const pipeline& p : pipelines) std::printf("  %-12s %s\n", p.name, p.nodes);
  std::printf(
      "  --sizes WxH,...       image sizes (default 640x480,1920x1080,3840x2160)\n"
      "  --pipelines NAME,...  which pipelines (default all three)\n"
      "  --runs N              timed vxProcessGraph calls per mode (default 20)\n"
      "  --warmup N            untimed calls per mode first (default 3)\n"
      "Devices: FERRY_VX_DEVICES (PLATFORM[:INDEX|:all],...; unset: every device of the\n"
      "first OpenCL platform). FERRY_LOG=info names the devices the graphs run on,\n"
      "FERRY_LOG=debug also the nodes each fused kernel holds (on stderr).\n");
}

[[noreturn]] void bad_argument(const std::string& message) {
  std::fprintf(stderr, "%s: %s (see --help)\n", program_name, message.c_str());
  std::exit(2);
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  size_t begin = 0;
  for (;;) {
    size_t comma = text.find(',', begin);
    items.push_back(text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) return items;
    begin = comma + 1;
  }
}

// A whole decimal number in [low, high], or nothing.
std::optional<long> whole_number(const std::string& text, long low, long high) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9)
    return std::nullopt;
  long n = std::strtol(text.c_str(), nullptr, 10);
  if (n < low || n > high) return std::nullopt;
  return n;
}

// Large enough for any camera, small enough that width x height x 2 bytes fits easily.
constexpr long largest_side = 32768;

settings parse_arguments(int argc, char** argv) {
  settings s;
  for (const pipeline& p : pipelines) s.chosen.push_back(&p);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      print_usage();
      std::exit(0);
    }
    if (arg != "--sizes" && arg != "--pipelines" && arg != "--runs" && arg != "--warmup")
      bad_argument("unknown option '" + arg + "'");
    if (i + 1 >= argc) bad_argument(arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--sizes") {
      s.sizes.clear();
      for (const std::string& item : split_commas(value)) {
        size_t x = item.find('x');
        std::optional<long> w = x == std::string::npos ? std::nullopt : whole_number(item.substr(0, x), 1, largest_side);
        std::optional<long> h = x == std::string::npos ? std::nullopt : whole_number(item.substr(x + 1), 1, largest_side);
        if (!w || !h)
          bad_argument("bad size '" + item + "' in --sizes: expected WIDTHxHEIGHT, each 1-" +
                       std::to_string(largest_side));
        s.sizes.push_back({static_cast<vx_uint32>(*w), static_cast<vx_uint32>(*h)});
      }
    } else if (arg == "--pipelines") {
      s.chosen.clear();
      for (const std::string& item : split_commas(value)) {
        auto found = std::find_if(std::begin(pipelines), std::end(pipelines),
                                  [&](const pipeline& p) { return item == p.name; });
        if (found == std::end(pipelines))
          bad_argument("unknown pipeline '" + item + "' in --pipelines: expected edge_detect, filtering or box_closing");
        s.chosen.push_back(&*found);
      }
    } else {
      std::optional<long> n = whole_number(value, arg == "--runs" ? 1 : 0, 100000);
      if (!n) bad_argument("bad value '" + value + "' for " + arg + ": expected " + (arg == "--runs" ? "1" : "0") + "-100000");
      (arg == "--runs" ? s.runs : s.warmup) = static_cast<int>(*n);
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const settings s = parse_arguments(argc, argv);
  vx_context context = vxCreateContext();
  if (vxGetStatus(reinterpret_cast<vx_reference>(context)) != VX_SUCCESS) {
    std::fprintf(stderr, "%s: vxCreateContext failed\n", program_name);
    return 1;
  }
  vxRegisterLogCallback(context, print_log, vx_false_e);
  char implementation[VX_MAX_IMPLEMENTATION_NAME] = "?";
  vxQueryContext(context, VX_CONTEXT_IMPLEMENTATION, implementation, sizeof implementation);
  // The devices are not a context attribute: the variable that chooses them is printed.
  const char* devices = std::getenv("FERRY_VX_DEVICES");
  std::printf("vx_pipelines setup implementation=%s FERRY_VX_DEVICES=%s warmup=%d\n", implementation,
              devices && *devices ? devices : "(unset: every device of the first platform)", s.warmup);
  std::fflush(stdout);
  std::vector<measurement> results;
  int status = 0;
  for (const pipeline* p : s.chosen)
    for (image_size size : s.sizes) {
      try {
        results.push_back(measure(context, *p, size, s));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s %s: %s\n", program_name, p->name, size.label().c_str(), e.what());
        std::printf("vx_pipelines %s size=%s FAILED\n", p->name, size.label().c_str());
        status = 1;
      }
    }
  print_table(results);
  vxReleaseContext(&context);
  return status;
}
