#!/usr/bin/env bash
# Ferry's OpenVX layer (issue 25) on NVIDIA GPUs: the paper's three pipelines
# (ferry_bench_vx_pipelines, fused and unfused) natively on NVIDIA's OpenCL and through
# ferryd, on one GPU and, where the machine has two, on both (one daemon per GPU).
#
# Builds what it needs from this source tree, then writes one results file: the machine
# (lines starting with "#"), then the benchmark's own lines, each prefixed with the
# configuration: native-1gpu, ferry-1gpu, native-2gpu, ferry-2gpu and, for comparison on
# the same host's CPU, pocl-cpu. Exits non-zero when a run failed.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/gpu/vx.sh [options]
Builds Ferry's OpenVX libraries and ferryd, and runs ferry_bench_vx_pipelines natively on
NVIDIA's OpenCL and through one ferryd per GPU.

options:
  --build-dir DIR   where to build (default: build/gpu in the source tree)
  --results FILE    the results file (default: DIR/vx-results.txt)
  --skip-build      use the binaries already in DIR
  --sizes LIST      image sizes (default: 640x480,1920x1080,3840x2160)
  --runs N          timed runs per figure (default: 20)
  --no-cpu          skip the PoCL CPU comparison
  --help            this text

environment:
  FERRY_GPU_LIBRARY  NVIDIA's OpenCL library (default: libnvidia-opencl.so.1)
EOF
}

root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build/gpu"
results=""
skip_build=0
sizes=640x480,1920x1080,3840x2160
runs=20
cpu=1
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --build-dir) [ $# -ge 2 ] || { echo "vx.sh: --build-dir needs a directory" >&2; exit 2; }; build=$2; shift ;;
    --results) [ $# -ge 2 ] || { echo "vx.sh: --results needs a file" >&2; exit 2; }; results=$2; shift ;;
    --sizes) [ $# -ge 2 ] || { echo "vx.sh: --sizes needs a list such as 1920x1080" >&2; exit 2; }; sizes=$2; shift ;;
    --runs) [ $# -ge 2 ] || { echo "vx.sh: --runs needs a count" >&2; exit 2; }; runs=$2; shift ;;
    --skip-build) skip_build=1 ;;
    --no-cpu) cpu=0 ;;
    *) echo "vx.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
build=$(mkdir -p "$build" && cd "$build" && pwd)
results=${results:-$build/vx-results.txt}
library=${FERRY_GPU_LIBRARY:-libnvidia-opencl.so.1}

fail() { echo "vx.sh: $*" >&2; exit 1; }

if [ "$skip_build" != 1 ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  [ -e "$build/CMakeCache.txt" ] && generator=()
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DFERRY_BUILD_TESTS=OFF \
    -DFERRY_BUILD_FUZZ=OFF >"$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; fail "cmake failed"; }
  cmake --build "$build" -j "$(nproc)" --target ferryd ferry_icd openvx vxu ferry_bench_vx_pipelines \
    >"$build/vx-build.log" 2>&1 || { tail -n 40 "$build/vx-build.log" >&2; fail "the build failed ($build/vx-build.log)"; }
fi
bench="$build/bin/ferry_bench_vx_pipelines"
for f in "$build/bin/ferryd" "$build/lib/libferry.so" "$bench"; do [ -e "$f" ] || fail "$f is missing: build first"; done

gpus=$(OCL_ICD_FILENAMES="$library" "$build/bin/ferryd" --platform NVIDIA --device-type gpu --list-devices \
       --log-level error 2>/dev/null | grep -c '^[0-9]' || true)
[ "$gpus" -ge 1 ] || fail "no NVIDIA GPU through $library"

daemon_pids=()
stop_daemons() {
  local pid
  for pid in "${daemon_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${daemon_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  daemon_pids=()
}
trap stop_daemons EXIT
# start_daemon GPU: one ferryd serving that GPU on loopback; its address into $address.
address=""
start_daemon() {
  local gpu=$1 out="$build/vx-ferryd-$1.out" log="$build/vx-ferryd-$1.log" port=""
  : >"$out"
  OCL_ICD_FILENAMES="$library" "$build/bin/ferryd" --port 0 --platform NVIDIA --device-type gpu --device "$gpu" \
    --log-level info >"$out" 2>"$log" &
  daemon_pids+=($!)
  for _ in $(seq 600); do
    port=$(sed -n 's/^READY \([0-9]*\)$/\1/p' "$out")
    [ -n "$port" ] && break
    kill -0 "${daemon_pids[-1]}" 2>/dev/null || fail "ferryd for GPU $gpu exited: $(cat "$log")"
    sleep 0.1
  done
  [ -n "$port" ] || fail "ferryd for GPU $gpu did not get ready in 60 s"
  address="127.0.0.1:$port"
}

{
  echo "# Ferry OpenVX pipelines on GPUs, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# source: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "# host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  command -v nvidia-smi >/dev/null &&
    nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/# gpu: /'
} >"$results"

status=0
# run LABEL ENV...: the benchmark under those variables, its lines into the results file.
run() {
  local label=$1
  shift
  echo "== $label" >&2
  if ! env "$@" "$bench" --sizes "$sizes" --runs "$runs" 2> >(sed "s/^/  [$label] /" >&2) |
       sed "s/^/$label /" | tee -a "$results"; then
    echo "$label FAILED" | tee -a "$results" >&2
    status=1
  fi
}

run native-1gpu OCL_ICD_FILENAMES="$library" FERRY_VX_DEVICES=nvidia:0
start_daemon 0
first=$address
run ferry-1gpu OCL_ICD_FILENAMES="$build/lib/libferry.so" FERRY_SERVERS="$first" FERRY_VX_DEVICES=ferry
if [ "$gpus" -ge 2 ]; then
  run native-2gpu OCL_ICD_FILENAMES="$library" FERRY_VX_DEVICES=nvidia:all
  start_daemon 1
  run ferry-2gpu OCL_ICD_FILENAMES="$build/lib/libferry.so" FERRY_SERVERS="$first,$address" FERRY_VX_DEVICES=ferry
else
  echo "# one GPU: the two-GPU figures are not measured" >>"$results"
fi
stop_daemons
[ "$cpu" = 1 ] && run pocl-cpu OCL_ICD_FILENAMES=libpocl.so.2 FERRY_VX_DEVICES=portable
echo "vx.sh: results in $results" >&2
exit $status
