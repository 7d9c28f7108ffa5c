#!/usr/bin/env python3
"""The three pipelines of ferry_bench_vx_pipelines (bench/vx_pipelines.cpp) with OpenCV,
the baseline issue 25 compares Ferry's fused OpenVX graphs with: same sizes, a seeded
random U8 input, replicated borders, OpenCV's default thread count (all cores:
cv2.setNumThreads(-1); 0 would mean one thread).

  edge_detect  medianBlur 3 -> Scharr dx, dy (CV_16S) -> magnitude (S16)
  filtering    Sobel 3x3 dx, dy (CV_16S) -> magnitude -> convertScaleAbs (saturate to U8)
               -> erode 3x3 -> dilate 3x3
  box_closing  filter2D 3x3 ones / 8 (CV_8U, saturating) -> erode 3x3 -> threshold (> 100: 255)

The magnitude is OpenVX's sqrt(gx^2 + gy^2) rounded and saturated to S16, computed the
OpenCV way, not in integers: cv2.magnitude on float32 copies of the gradients, then
OpenCV's rounding, saturating conversion to CV_16S (cv2.add with dtype=CV_16S). float32
loses the low bits of Scharr's largest sums of squares (above 2^24), so a few pixels can
differ by 1 from the exact integer result; --check counts them against an exact numpy
computation. filter2D rounds the sum / 8 to nearest where OpenVX's Convolve truncates;
the work is the same.

Prints one line per pipeline and size, like the C++ benchmarks:
  vx_opencv opencv pipeline=edge_detect size=640x480 median_ms=... min_ms=... mpix_s=... runs=20 threads=2
With --compare FILE (the output of ferry_bench_vx_pipelines) it adds
  vx_opencv ratio pipeline=... size=... opencv/fused=... (target >= 1)

Run with the project's venv: .venv/bin/python bench/vx_opencv.py [--sizes ...] [--runs N]
"""

import argparse
import re
import statistics
import sys
import time

try:
    import numpy as np
except ImportError:
    print("vx_opencv.py: numpy is missing; install it with: .venv/bin/pip install numpy", file=sys.stderr)
    sys.exit(2)
try:
    import cv2
except ImportError:
    print("vx_opencv.py: OpenCV (cv2) is missing; install it with: .venv/bin/pip install opencv-python-headless",
          file=sys.stderr)
    sys.exit(2)

DEFAULT_SIZES = "640x480,1920x1080,3840x2160"
KERNEL_3x3 = np.ones((3, 3), np.uint8)
BOX_3x3_OVER_8 = np.full((3, 3), 1.0 / 8.0, np.float32)
REPLICATE = cv2.BORDER_REPLICATE


def magnitude_s16(gx, gy):
    """sqrt(gx^2 + gy^2), rounded and saturated to int16, through cv2 in float32."""
    # cv2.add with a dtype converts with OpenCV's saturate_cast: to float32 exactly, back
    # to int16 rounded to nearest and saturated (and on every core, unlike numpy).
    fx = cv2.add(gx, 0.0, dtype=cv2.CV_32F)
    fy = cv2.add(gy, 0.0, dtype=cv2.CV_32F)
    return cv2.add(cv2.magnitude(fx, fy), 0.0, dtype=cv2.CV_16S)


def exact_magnitude_s16(gx, gy):
    """The same in exact integer arithmetic (numpy), for --check."""
    squares = gx.astype(np.int64) ** 2 + gy.astype(np.int64) ** 2
    return np.minimum(np.floor(np.sqrt(squares.astype(np.float64)) + 0.5), 32767).astype(np.int16)


def edge_detect(image):
    smooth = cv2.medianBlur(image, 3)  # medianBlur replicates the border itself
    gx = cv2.Scharr(smooth, cv2.CV_16S, 1, 0, borderType=REPLICATE)
    gy = cv2.Scharr(smooth, cv2.CV_16S, 0, 1, borderType=REPLICATE)
    return magnitude_s16(gx, gy), (gx, gy)


def filtering(image):
    gx = cv2.Sobel(image, cv2.CV_16S, 1, 0, ksize=3, borderType=REPLICATE)
    gy = cv2.Sobel(image, cv2.CV_16S, 0, 1, ksize=3, borderType=REPLICATE)
    magnitude = magnitude_s16(gx, gy)
    # The magnitude is never negative: the absolute value changes nothing, the saturation
    # to 0..255 is OpenVX's ConvertDepth with VX_CONVERT_POLICY_SATURATE and shift 0.
    magnitude_u8 = cv2.convertScaleAbs(magnitude)
    eroded = cv2.erode(magnitude_u8, KERNEL_3x3, borderType=REPLICATE)
    return cv2.dilate(eroded, KERNEL_3x3, borderType=REPLICATE), (gx, gy)


def box_closing(image):
    boxed = cv2.filter2D(image, cv2.CV_8U, BOX_3x3_OVER_8, borderType=REPLICATE)
    eroded = cv2.erode(boxed, KERNEL_3x3, borderType=REPLICATE)
    return cv2.threshold(eroded, 100, 255, cv2.THRESH_BINARY)[1], None


PIPELINES = {"edge_detect": edge_detect, "filtering": filtering, "box_closing": box_closing}


def parse_sizes(text):
    sizes = []
    for item in text.split(","):
        match = re.fullmatch(r"(\d{1,5})x(\d{1,5})", item)
        if not match or not all(1 <= int(v) <= 32768 for v in match.groups()):
            raise argparse.ArgumentTypeError(f"bad size '{item}': expected WIDTHxHEIGHT, each 1-32768")
        sizes.append((int(match.group(1)), int(match.group(2))))
    return sizes


def parse_pipelines(text):
    names = text.split(",")
    for name in names:
        if name not in PIPELINES:
            raise argparse.ArgumentTypeError(f"unknown pipeline '{name}': expected {', '.join(PIPELINES)}")
    return names


def bounded(low, high):
    def parse(text):
        if not re.fullmatch(r"\d{1,9}", text) or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"bad value '{text}': expected {low}-{high}")
        return int(text)
    return parse


def fused_medians(path):
    """(pipeline, size) -> fused median_ms from ferry_bench_vx_pipelines' output."""
    medians = {}
    with open(path) as lines:
        for line in lines:
            match = re.match(r"vx_pipelines fused pipeline=(\S+) size=(\S+) median_ms=([\d.]+)", line)
            if match:
                medians[(match.group(1), match.group(2))] = float(match.group(3))
    return medians


def main():
    parser = argparse.ArgumentParser(
        prog="vx_opencv.py",
        description="The paper's three OpenVX pipelines with OpenCV on this machine's CPU: median ms per "
                    "pipeline and size, beside ferry_bench_vx_pipelines.")
    parser.add_argument("--sizes", type=parse_sizes, default=parse_sizes(DEFAULT_SIZES),
                        help=f"WxH,... (default {DEFAULT_SIZES})")
    parser.add_argument("--pipelines", type=parse_pipelines, default=list(PIPELINES),
                        help="which pipelines (default all: " + ",".join(PIPELINES) + ")")
    parser.add_argument("--runs", type=bounded(1, 100000), default=20, help="timed runs per pipeline (default 20)")
    parser.add_argument("--warmup", type=bounded(0, 100000), default=3, help="untimed runs first (default 3)")
    parser.add_argument("--seed", type=bounded(0, 2**31), default=25, help="numpy seed of the input (default 25)")
    parser.add_argument("--check", action="store_true",
                        help="count pixels where the float32 magnitude differs from the exact integer one")
    parser.add_argument("--compare", metavar="FILE",
                        help="output of ferry_bench_vx_pipelines: add opencv/fused ratio lines")
    args = parser.parse_args()

    try:
        fused = fused_medians(args.compare) if args.compare else {}
    except OSError as error:
        print(f"vx_opencv.py: cannot read --compare {args.compare}: {error.strerror}", file=sys.stderr)
        return 2
    # Negative restores OpenCV's default, every core (0 would make it run sequentially).
    cv2.setNumThreads(-1)
    threads = cv2.getNumThreads()
    print(f"vx_opencv setup opencv={cv2.__version__} numpy={np.__version__} threads={threads} "
          f"magnitude=cv2.magnitude(float32)+round warmup={args.warmup}", flush=True)
    rng = np.random.default_rng(args.seed)
    ratios = []
    for name in args.pipelines:
        run = PIPELINES[name]
        for width, height in args.sizes:
            size = f"{width}x{height}"
            image = rng.integers(0, 256, (height, width), dtype=np.uint8)
            for _ in range(args.warmup):
                run(image)
            ms = []
            for _ in range(args.runs):
                start = time.perf_counter()
                output, gradients = run(image)
                ms.append((time.perf_counter() - start) * 1e3)
            median_ms = statistics.median(ms)
            line = (f"vx_opencv opencv pipeline={name} size={size} median_ms={median_ms:.3f} min_ms={min(ms):.3f} "
                    f"mpix_s={width * height / 1e6 / (median_ms / 1e3):.1f} runs={args.runs} threads={threads}")
            if args.check and gradients is not None:
                exact = exact_magnitude_s16(*gradients)
                differing = int(np.count_nonzero(magnitude_s16(*gradients) != exact))
                line += f" magnitude_off_by_rounding={differing}"
            print(line, flush=True)
            if (name, size) in fused:
                ratio = median_ms / fused[(name, size)]
                ratios.append((name, size, fused[(name, size)], median_ms, ratio))
                print(f"vx_opencv ratio pipeline={name} size={size} opencv/fused={ratio:.2f} (target >= 1)",
                      flush=True)
    if ratios:
        print(f"# {'pipeline':<12} {'size':<10} {'fused_ms':>10} {'opencv_ms':>10} {'opencv/fused':>13}")
        for name, size, fused_ms, opencv_ms, ratio in ratios:
            print(f"# {name:<12} {size:<10} {fused_ms:>10.3f} {opencv_ms:>10.3f} {ratio:>13.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
