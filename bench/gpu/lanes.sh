#!/usr/bin/env bash
# Bulk lanes (protocol version 11) on a GPU host, A/B in one run: 1 GiB writes and reads
# through OpenCL (ferry_bench_bandwidth) and 1 GiB CUDA copies (ferry_bench_cuda_driver),
# each natively and through Ferry over TCP with 1, 2 and 4 bulk connections
# (FERRY_BULK_LANES), beside the loopback TCP stream of the same run. One ferryd serves
# GPU 0 (OpenCL through NVIDIA's library, CUDA through its libcuda.so.1).
#
#   bench/gpu/lanes.sh [--skip-build] [--help]
#
# Builds into build/gpu (the targets it needs); writes build/gpu/lanes-results.txt and
# the daemon's log beside it.
set -uo pipefail
skip_build=0
case "${1:-}" in
  "") ;;
  --skip-build) skip_build=1 ;;
  -h | --help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "lanes.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/gpu
library=${FERRY_GPU_LIBRARY:-libnvidia-opencl.so.1}
platform=${FERRY_GPU_PLATFORM:-NVIDIA}
results=$build/lanes-results.txt
fail() { echo "lanes.sh: $*" >&2; exit 1; }
mkdir -p "$build"
if [ "$skip_build" != 1 ]; then
  generator=()
  command -v ninja >/dev/null && [ ! -e "$build/CMakeCache.txt" ] && generator=(-G Ninja)
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DFERRY_BUILD_TESTS=OFF \
    -DFERRY_BUILD_FUZZ=OFF >"$build/lanes-configure.log" 2>&1 || fail "cmake failed: $(tail -5 "$build/lanes-configure.log")"
  cmake --build "$build" -j "$(nproc)" --target ferryd ferry_icd ferry_cuda_client ferry_bench_bandwidth \
    ferry_bench_cuda_driver >"$build/lanes-build.log" 2>&1 || fail "build failed: $(tail -20 "$build/lanes-build.log")"
fi
vendors="$build/etc/OpenCL/vendors-all"
grep -qs "$(basename "$library")" "$vendors"/*.icd || echo "$library" >"$vendors/ferry-gpu-run.icd"

out=$build/lanes-ferryd.out
log=$build/lanes-ferryd.log
: >"$out"
env OCL_ICD_FILENAMES="$library" "$build/bin/ferryd" --port 0 --platform "$platform" --device-type gpu --device 0 \
  >"$out" 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
port=""
for _ in $(seq 600); do
  port=$(sed -n 's/^READY \([0-9]*\)$/\1/p' "$out")
  [ -n "$port" ] && break
  kill -0 $pid 2>/dev/null || fail "ferryd exited: $(cat "$log")"
  sleep 0.1
done
[ -n "$port" ] || fail "ferryd did not get ready"
{
  echo "# bulk lanes, $(date -u +%Y-%m-%dT%H:%M:%SZ), source $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "# host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/# gpu: /'
} >"$results"

# OpenCL: native once, then Ferry with each lane count (its ferryd is the one above).
size=$((1 << 30))
for lanes in 1 2 4; do
  echo "== OpenCL bandwidth, $lanes bulk connection(s)" >&2
  only=(--only ferry)
  [ "$lanes" = 1 ] && only=()
  FERRY_SERVERS=127.0.0.1:$port FERRY_BULK_LANES=$lanes timeout 300 "$build/bin/ferry_bench_bandwidth" \
    --bin-dir "$build" --native-platform "$platform" --size $size --repeats 5 "${only[@]}" 2>>"$build/lanes-bench.err" |
    grep -v '^#' | sed "s/^/lanes=$lanes /" | tee -a "$results"
done

# CUDA: the driver API's copies and launches, natively and through Ferry's libcuda.so.1.
cuda_dir=$build/lib/ferry-cuda
echo "== CUDA native" >&2
timeout 300 "$build/bin/ferry_bench_cuda_driver" --label native 2>>"$build/lanes-bench.err" | grep -v '^#' |
  tee -a "$results"
for lanes in 1 2 4; do
  echo "== CUDA through Ferry, $lanes bulk connection(s)" >&2
  LD_LIBRARY_PATH="$cuda_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FERRY_SERVERS=127.0.0.1:$port FERRY_BULK_LANES=$lanes \
    timeout 300 "$build/bin/ferry_bench_cuda_driver" --label "ferry-tcp-lanes$lanes" 2>>"$build/lanes-bench.err" |
    grep -v '^#' | tee -a "$results"
done
echo "lanes.sh: results in $results" >&2
