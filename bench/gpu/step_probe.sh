#!/usr/bin/env bash
# Where a long kernel's step loses time through Ferry (issue 22, docs/performance.md "A long
# kernel's step"), on a machine with an NVIDIA GPU: ferry_bench_kernel_step (a kernel of
# 0.7, 2 and 5 ms, then clFinish, 200 steps, median of 3) natively and through one ferryd
# on GPU 0, with the client's waits as built (on a host with 8 or more hardware threads a
# GPU's waits poll for up to a second, as NVIDIA's clFinish does) and polling 2 ms
# (FERRY_SPIN_US=2000, the default before), and with the daemon's completion poller as
# built and never pausing (FERRY_POLL_MAX_PAUSE_US=0). Alternated twice. Builds into
# build/gpu; output in $OUT (default build/gpu/step-probe).
#
#   bench/gpu/step_probe.sh [--sizes "700 2000 5000"] [--help]
set -u
sizes="700 2000 5000"
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) sed -n '2,11s/^# \{0,1\}//p' "$0"; exit 0 ;;
    --sizes) [ $# -ge 2 ] || { echo "step_probe.sh: --sizes needs a list of µs" >&2; exit 2; }; sizes=$2; shift ;;
    *) echo "step_probe.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=$root/build/gpu
OUT=${OUT:-$build/step-probe}
mkdir -p "$OUT"
gen=(); command -v ninja >/dev/null && [ ! -e "$build/CMakeCache.txt" ] && gen=(-G Ninja)
cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_FUZZ=OFF \
  >"$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target ferryd ferry_icd ferry_bench_kernel_step >"$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; exit 1; }
# The benchmark loads the drivers of the build's vendors-all directory; NVIDIA's is added.
grep -qs libnvidia-opencl "$build"/etc/OpenCL/vendors-all/*.icd ||
  echo libnvidia-opencl.so.1 >"$build/etc/OpenCL/vendors-all/ferry-gpu-run.icd"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null' EXIT
start() {  # NAME [ENV...]: one ferryd on GPU 0; sets addr
  local name=$1 port=""
  shift
  env OCL_ICD_FILENAMES=libnvidia-opencl.so.1 "$@" "$build/bin/ferryd" --port 0 --platform NVIDIA --device-type gpu \
    --device 0 >"$OUT/$name.out" 2>"$OUT/$name.log" &
  pid=$!
  for _ in $(seq 300); do port=$(sed -n 's/^READY \([0-9]*\)$/\1/p' "$OUT/$name.out"); [ -n "$port" ] && break; sleep 0.1; done
  [ -n "$port" ] || { echo "step_probe.sh: ferryd $name did not start" >&2; exit 1; }
  addr=127.0.0.1:$port
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null; pid=""; }
step() {  # LABEL ONLY SIZE [ENV...]
  local label=$1 only=$2 size=$3
  shift 3
  env "$@" "$build/bin/ferry_bench_kernel_step" --bin-dir "$build" --native-platform NVIDIA --only "$only" \
    --repeats 3 --commands 200 --size "$size" 2>&1 | grep '^kernel_step' | sed "s/^/$label /"
}
{
  echo "# source: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (modified)')"
  for round in 1 2; do
    for daemon in plain eager; do
      envs=(); [ $daemon = eager ] && envs=(FERRY_POLL_MAX_PAUSE_US=0)
      start "$daemon$round" "${envs[@]}"
      for size in $sizes; do
        [ $daemon = plain ] && step native native "$size"
        step "daemon=$daemon client=built" ferry "$size" FERRY_SERVERS=$addr
        step "daemon=$daemon client=spin2ms" ferry "$size" FERRY_SERVERS=$addr FERRY_SPIN_US=2000
      done
      stop
    done
  done
} 2>&1 | tee "$OUT/results.txt"
