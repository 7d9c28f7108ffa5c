#!/usr/bin/env bash
# Where the time of issue 22's open targets goes, on a machine with two NVIDIA GPUs:
#   - 1 GiB reads against writes, over TCP and the Unix socket, beside the TCP stream and a
#     memcpy of the same run;
#   - kernel_step at 0.7 ms with the device's own view (kernel duration and gaps from
#     profiling events), without the polling of the daemon's reader and the client's
#     waiting threads, with the daemon's poller paced at most 20 us, and once with
#     the daemon and the client at --log-level trace (the "timeline" lines of both: kernel
#     and marker enqueued, marker ended, frames written, completions received);
#   - migrate and migrate_bandwidth between the two daemons;
#   - the 1024^3 stencil through two daemons: plain, and with the daemons at trace level
#     (each migration's phases by command id).
# Builds into build/gpu and writes everything under $OUT (default: build/gpu/probe); the
# logs go into $OUT/logs.tar.gz (a device call brings back only a few files).
# One run takes about 4 minutes (a fresh machine's build included).
# As bench/gpu/run.sh, FERRY_GPU_PLATFORM, FERRY_GPU_LIBRARY and FERRY_GPU_DEVICE_TYPE
# choose another platform (PoCL's CPU checks the script), FERRY_PROBE_STENCIL_SIZE the
# stencil's side (default 1024), FERRY_PROBE_SECOND_DEVICE the second daemon's device
# (default 1; 0 shares one) and FERRY_PROBE_BUILD a build tree to use as it is.
#
#   bench/gpu/probe.sh [--help]
set -uo pipefail
case "${1:-}" in
  "") ;;
  -h | --help) sed -n '2,20s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "probe.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
OUT=${OUT:-$root/build/gpu/probe}
mkdir -p "$OUT/logs"
logs=$OUT/logs
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
    >"$logs/configure.log" 2>&1 || { tail -20 "$logs/configure.log"; exit 1; }
  cmake --build "$build" -j "$(nproc)" --target ferryd ferry_icd ferry_bench_kernel_step \
    ferry_bench_stencil ferry_bench_noop ferry_bench_bandwidth ferry_bench_migrate ferry_bench_migrate_bandwidth >"$logs/build.log" 2>&1 || { tail -40 "$logs/build.log"; exit 1; }
  echo "built in $((SECONDS - t0)) s"
fi
# The benchmarks load the drivers of the build's vendors-all directory; the GPU's is added.
grep -qs "$(basename "$library")" "$build"/etc/OpenCL/vendors-all/*.icd ||
  echo "$library" >"$build/etc/OpenCL/vendors-all/ferry-gpu-run.icd"
which nsys ncu nvidia-smi 2>&1 | head
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm --format=csv

# Session workers run as nobody under a root ferryd and dial the other daemon's socket.
sockdir=$(mktemp -d /tmp/fp.XXXX); chmod 755 "$sockdir"
trap 'rm -rf "$sockdir"' EXIT
pids=()
start() {  # gpu level name [env...]
  local gpu=$1 level=$2 name=$3; shift 3
  env OCL_ICD_FILENAMES="$library" "$@" "$build/bin/ferryd" --port 0 --unix "$sockdir/$name.sock" --platform "$platform" \
    --device-type "$device_type" --device "$gpu" --log-level "$level" >"$logs/$name.out" 2>"$logs/$name.log" &
  pids+=($!)
  for _ in $(seq 300); do port=$(sed -n 's/^READY \([0-9]*\)$/\1/p' "$logs/$name.out"); [ -n "$port" ] && break; sleep 0.1; done
  eval "addr_$name=127.0.0.1:$port"
}
stop() { for p in "${pids[@]}"; do kill "$p"; done; wait; pids=(); }
b() { local name=$1; shift; echo "== $name $*"; timeout 200 "$build/bin/ferry_bench_$name" --bin-dir "$build" --native-platform "$platform" "$@" 2>&1 | grep -v "^ferry_bench" ; }
results=$OUT/results.txt

# 1 GiB reads against writes, over TCP and over the Unix socket (window)
start 0 info k0
export FERRY_SERVERS=$addr_k0
b bandwidth --repeats 3 --size 1073741824 | tee -a "$results"
FERRY_SERVERS=unix:$sockdir/k0.sock b bandwidth --only ferry --repeats 3 --size 1073741824 | tee -a "$results"
# kernel steps, default daemon
b kernel_step --repeats 3 --commands 200 --size 700 | tee -a "$results"
stop
# kernel steps, the daemon's reader and the client not polling (the defaults of hosts with few cores)
start 0 info k1 FERRY_READER_SPIN_US=0
export FERRY_SERVERS=$addr_k1
echo "# FERRY_READER_SPIN_US=0 FERRY_SPIN_US=50" | tee -a "$results"
FERRY_SPIN_US=50 b kernel_step --only ferry --repeats 3 --commands 200 --size 700 | tee -a "$results"
echo "# FERRY_READER_SPIN_US=0" | tee -a "$results"
b kernel_step --only ferry --repeats 3 --commands 200 --size 700 | tee -a "$results"
stop
# and with the poller's pauses capped at 20 us
start 0 info k2 FERRY_POLL_MAX_PAUSE_US=20
export FERRY_SERVERS=$addr_k2
echo "# FERRY_POLL_MAX_PAUSE_US=20" | tee -a "$results"
b kernel_step --only ferry --repeats 3 --commands 200 --size 700 | tee -a "$results"
b noop --repeats 2000 | tee -a "$results"
stop
# one kernel step run with both halves' timelines
start 0 trace kt
export FERRY_SERVERS=$addr_kt
FERRY_LOG=trace FERRY_LOG_FILE=$logs/kt-client.log b kernel_step --only ferry --repeats 1 --commands 50 --size 700 | tee -a "$results"
stop

# two daemons: migrations and the stencil, plain and with the daemons' timelines
start 0 info s0; start "$second" info s1
export FERRY_SERVERS=$addr_s0,$addr_s1
b migrate --only ferry --repeats 300 | tee -a "$results"
b migrate_bandwidth --only ferry --repeats 3 --size 4194304 | tee -a "$results"
b migrate_bandwidth --only ferry --repeats 3 --size 1073741824 | tee -a "$results"
b stencil --only ferry --repeats 1 --commands 30 --size "$stencil_size" | tee -a "$results"
stop
start 0 trace t0; start "$second" trace t1
export FERRY_SERVERS=$addr_t0,$addr_t1
b stencil --only ferry --repeats 1 --commands 30 --size "$stencil_size" | tee -a "$results"
stop
for f in "$logs"/t0.log "$logs"/t1.log; do grep -c timeline "$f"; done
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$logs"
echo "total $((SECONDS - t0)) s"
