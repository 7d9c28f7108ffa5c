#!/usr/bin/env bash
# What a directive program's data region costs through Ferry (docs/cuda.md, issue 24), on a
# machine with an NVIDIA GPU, natively beside Ferry in one run:
#   - ferry_bench_cuda_driver's region figure (two 64 MiB copies in and one back in a fresh
#     context, each timed, then again): natively, through Ferry over TCP (four bulk lanes,
#     the default, and one: FERRY_BULK_LANES=1; and against a daemon that pins no staging
#     ahead, FERRY_CUDA_PREWARM=0) and over the Unix socket, ROUNDS times, alternated;
#   - the OpenACC and OpenMP Jacobi programs (tests/cuda/programs, built on Debian 12 by
#     tests/cuda/programs/build.sh into build/cuda-programs) natively and through Ferry,
#     ROUNDS times, alternated: time_ms (the loop) and region_ms (with the copies);
#   - one more region run against a daemon at --log-level trace: its "timeline" lines say
#     what each copy's staging cost (cuMemAllocHost, cuMemHostRegister) and when each copy
#     to the device was enqueued.
# Builds ferryd, Ferry's libcuda.so.1 and ferry_bench_cuda_driver into build/gpu; everything
# it prints and the daemons' logs go to $OUT (default build/gpu/cuda-copies).
#
#   bench/gpu/cuda_copies.sh [--rounds N] [--help]
set -u
rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
    --rounds)
      [ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || { echo "cuda_copies.sh: --rounds needs a positive count" >&2; exit 2; }
      rounds=$2; shift ;;
    *) echo "cuda_copies.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
b=build/gpu
programs=$root/build/cuda-programs
OUT=${OUT:-$root/$b/cuda-copies}
mkdir -p "$OUT"
[ -x "$programs/acc_jacobi" ] || { echo "cuda_copies.sh: no $programs/acc_jacobi: run tests/cuda/programs/build.sh on Debian 12 and carry build/cuda-programs" >&2; exit 1; }
gen=(); command -v ninja >/dev/null && [ ! -e $b/CMakeCache.txt ] && gen=(-G Ninja)
cmake -S . -B $b "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_FUZZ=OFF >"$OUT/configure.log" 2>&1 ||
  { tail "$OUT/configure.log"; exit 1; }
cmake --build $b -j "$(nproc)" --target ferryd ferry_cuda_client ferry_bench_cuda_driver >"$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
pids=()
sockdir=$(mktemp -d /tmp/ferry-copies.XXXX)
chmod 755 "$sockdir"
trap 'kill "${pids[@]}" 2>/dev/null; for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done; rm -rf "$sockdir"' EXIT
start() {  # NAME LEVEL [ENV...]: a ferryd on GPU 0 (TCP and a Unix socket); sets port_NAME
  local name=$1 level=$2 port=""
  shift 2
  env OCL_ICD_FILENAMES=libnvidia-opencl.so.1 "$@" $b/bin/ferryd --port 0 --unix "$sockdir/$name.sock" --platform NVIDIA \
    --device-type gpu --device 0 --log-level "$level" >"$OUT/ferryd-$name.out" 2>"$OUT/ferryd-$name.log" &
  pids+=($!)
  for _ in $(seq 300); do port=$(sed -n 's/^READY \([0-9]*\)$/\1/p' "$OUT/ferryd-$name.out"); [ -n "$port" ] && break; sleep 0.1; done
  [ -n "$port" ] || { echo "cuda_copies.sh: ferryd $name did not start: $(tail -5 "$OUT/ferryd-$name.log")" >&2; exit 1; }
  eval "port_$name=$port"
}
start plain info
start cold info FERRY_CUDA_PREWARM=0
start traced trace
ferry_lib=$root/$b/lib/ferry-cuda
region() {  # LABEL ENV...: the region figure alone
  local label=$1
  shift
  env "$@" $b/bin/ferry_bench_cuda_driver --label "$label" --launches 10 --max-size 4096 --repeats 1 2>&1 | grep ' region '
}
jacobi() {  # LABEL PROGRAM ENV...
  local label=$1 program=$2
  shift 2
  echo "$label $program $(env "$@" "$programs/$program" 4096 100 2>&1 | grep -o '\(time_ms\|region_ms\)=[0-9.]*' | paste -sd' ')"
}
tcp=(LD_LIBRARY_PATH="$ferry_lib:$programs/lib" FERRY_SERVERS="127.0.0.1:$port_plain")
unix=(LD_LIBRARY_PATH="$ferry_lib:$programs/lib" FERRY_SERVERS="unix:$sockdir/plain.sock")
native=(CUDA_VISIBLE_DEVICES=0 LD_LIBRARY_PATH="$programs/lib")
{
  echo "# source: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (modified)')"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/# gpu: /'
  for round in $(seq "$rounds"); do
    region native "${native[@]}"
    region ferry-tcp "${tcp[@]}"
    region ferry-tcp-1-lane "${tcp[@]}" FERRY_BULK_LANES=1
    region ferry-tcp-no-prewarm LD_LIBRARY_PATH="$ferry_lib" FERRY_SERVERS="127.0.0.1:$port_cold"
    region ferry-unix "${unix[@]}"
  done
  for round in $(seq "$rounds"); do
    for program in acc_jacobi omp_jacobi; do
      jacobi native "$program" "${native[@]}"
      jacobi ferry-tcp "$program" "${tcp[@]}"
    done
  done
  region ferry-tcp-traced LD_LIBRARY_PATH="$ferry_lib" FERRY_SERVERS="127.0.0.1:$port_traced"
} 2>&1 | tee "$OUT/results.txt"
grep -h 'timeline' "$OUT/ferryd-traced.log" | grep -v 'frames written' >"$OUT/timeline.txt"
echo "# the traced run's staging and copy lines: $OUT/timeline.txt ($(wc -l <"$OUT/timeline.txt") lines)"
head -60 "$OUT/timeline.txt"
