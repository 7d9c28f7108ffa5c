#!/usr/bin/env bash
# Where the time of issue 22's open targets goes, on a machine with two NVIDIA GPUs:
#   - native_overlap: what NVIDIA's OpenCL runs beside a kernel (a transfer on a second queue);
#   - kernel_step at 0.7 and 2 ms with the device's own view (kernel duration and gaps from
#     profiling events), then with ferryd's poller and the client's waiter spinning;
#   - the 1024^3 stencil through two daemons: plain, with the poller spinning, and with the
#     daemons at --log-level trace, whose "timeline" lines give each migration's phases
#     (map at the source, bytes sent, 'before' ended at the destination, map ready, every
#     byte in, unmap, gate set).
# Builds into build/gpu and writes everything under $OUT (default: build/gpu/probe).
# One run takes about 6 minutes (a fresh machine's build included).
# As bench/gpu/run.sh, FERRY_GPU_PLATFORM, FERRY_GPU_LIBRARY and FERRY_GPU_DEVICE_TYPE
# choose another platform (PoCL's CPU checks the script), FERRY_PROBE_STENCIL_SIZE the
# stencil's side (default 1024), FERRY_PROBE_SECOND_DEVICE the second daemon's device
# (default 1; 0 shares one) and FERRY_PROBE_BUILD a build tree to use as it is.
#
#   bench/gpu/probe.sh [--help]
set -uo pipefail
case "${1:-}" in
  "") ;;
  -h | --help) sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "probe.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
OUT=${OUT:-$root/build/gpu/probe}
mkdir -p "$OUT"
platform=${FERRY_GPU_PLATFORM:-NVIDIA}
library=${FERRY_GPU_LIBRARY:-libnvidia-opencl.so.1}
device_type=${FERRY_GPU_DEVICE_TYPE:-gpu}
stencil_size=${FERRY_PROBE_STENCIL_SIZE:-1024}
second=${FERRY_PROBE_SECOND_DEVICE:-1}
t0=$SECONDS
if [ -n "${FERRY_PROBE_BUILD:-}" ]; then
  build=$FERRY_PROBE_BUILD
else
  build=$root/build/gpu
  mkdir -p "$build"
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_FUZZ=OFF \
    >"$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
  cmake --build "$build" -j "$(nproc)" --target ferryd ferry_icd ferry_bench_native_overlap ferry_bench_kernel_step \
    ferry_bench_stencil ferry_bench_noop ferry_bench_bandwidth >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
  echo "built in $((SECONDS - t0)) s"
fi
# The benchmarks load the drivers of the build's vendors-all directory; the GPU's is added.
grep -qs "$(basename "$library")" "$build"/etc/OpenCL/vendors-all/*.icd ||
  echo "$library" >"$build/etc/OpenCL/vendors-all/ferry-gpu-run.icd"
which nsys ncu nvidia-smi 2>&1 | head
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm --format=csv
"$build/bin/ferry_bench_native_overlap" --platform "$platform" --repeats 10 --size 4194304 --kernel-us 2000 | tee "$OUT/overlap.txt"
"$build/bin/ferry_bench_native_overlap" --platform "$platform" --repeats 10 --size 4194304 --kernel-us 2000 | tee -a "$OUT/overlap.txt"

# Session workers run as nobody under a root ferryd and dial the other daemon's socket.
sockdir=$(mktemp -d /tmp/fp.XXXX); chmod 755 "$sockdir"
trap 'rm -rf "$sockdir"' EXIT
pids=()
start() {  # gpu level name [env...]
  local gpu=$1 level=$2 name=$3; shift 3
  env OCL_ICD_FILENAMES="$library" "$@" "$build/bin/ferryd" --port 0 --unix "$sockdir/$name.sock" --platform "$platform" \
    --device-type "$device_type" --device "$gpu" --log-level "$level" >"$OUT/$name.out" 2>"$OUT/$name.log" &
  pids+=($!)
  for _ in $(seq 300); do port=$(sed -n 's/^READY \([0-9]*\)$/\1/p' "$OUT/$name.out"); [ -n "$port" ] && break; sleep 0.1; done
  eval "addr_$name=127.0.0.1:$port"
}
stop() { for p in "${pids[@]}"; do kill "$p"; done; wait; pids=(); }
b() { local name=$1; shift; echo "== $name $*"; timeout 200 "$build/bin/ferry_bench_$name" --bin-dir "$build" --native-platform "$platform" "$@" 2>&1 | grep -v "^ferry_bench" ; }

# kernel steps, default daemon
start 0 info k0
export FERRY_SERVERS=$addr_k0
b kernel_step --repeats 3 --commands 200 --size 700 | tee "$OUT/kstep.txt"
b kernel_step --only ferry --repeats 3 --commands 200 --size 2000 | tee -a "$OUT/kstep.txt"
# 1 GiB reads against writes, over TCP and over the Unix socket (window), beside the TCP
# stream and one thread's memcpy of the same run
b bandwidth --repeats 3 --size 1073741824 | tee "$OUT/bandwidth.txt"
FERRY_SERVERS=unix:$sockdir/k0.sock b bandwidth --only ferry --repeats 3 --size 1073741824 | tee -a "$OUT/bandwidth.txt"
FERRY_SERVERS=unix:$sockdir/k0.sock b bandwidth --only ferry --repeats 3 --size 67108864 | tee -a "$OUT/bandwidth.txt"
stop
start 0 trace k2
FERRY_SERVERS=unix:$sockdir/k2.sock b bandwidth --only ferry --repeats 2 --size 1073741824 >/dev/null
stop
# kernel steps, poller and client spinning
start 0 info k1 FERRY_POLL_MAX_PAUSE_US=5
export FERRY_SERVERS=$addr_k1
FERRY_SPIN_US=20000 b kernel_step --only ferry --repeats 3 --commands 200 --size 700 | tee -a "$OUT/kstep.txt"
stop

# the stencil at 1024^3: plain, then with the daemons' timeline
start 0 info s0; start "$second" info s1
export FERRY_SERVERS=$addr_s0,$addr_s1
b stencil --only ferry --repeats 1 --commands 30 --size "$stencil_size" | tee "$OUT/stencil.txt"
stop
start 0 info p0 FERRY_POLL_MAX_PAUSE_US=5; start "$second" info p1 FERRY_POLL_MAX_PAUSE_US=5
export FERRY_SERVERS=$addr_p0,$addr_p1
b stencil --only ferry --repeats 1 --commands 30 --size "$stencil_size" | tee -a "$OUT/stencil.txt"
stop
start 0 trace t0; start "$second" trace t1
export FERRY_SERVERS=$addr_t0,$addr_t1
b stencil --only ferry --repeats 1 --commands 30 --size "$stencil_size" | tee -a "$OUT/stencil.txt"
stop
for f in "$OUT"/t0.log "$OUT"/t1.log; do grep -c timeline "$f"; done
echo "total $((SECONDS - t0)) s"
