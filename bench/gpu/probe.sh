#!/usr/bin/env bash
# A/B runs for issue 22's open targets, on a machine with two NVIDIA GPUs:
#   - 1 GiB reads and writes over TCP and the Unix socket with bulk copies on one thread
#     (FERRY_COPY_THREADS=1) and split (the default), and with 4 or 8 window slots
#     (FERRY_WINDOW_SLOTS), beside the TCP stream and a memcpy of the same run;
#   - kernel_step at 0.7 ms with the daemon's poller paced at most 20 us or never pausing
#     (FERRY_POLL_MAX_PAUSE_US), alternated twice, and native once;
#   - migrate and migrate_bandwidth between the two daemons, copies on one thread and split.
# Builds into build/gpu and writes everything under $OUT (default: build/gpu/probe); the
# logs go into $OUT/logs.tar.gz (a device call brings back only a few files).
# One run takes about 4 minutes (a fresh machine's build included).
# As bench/gpu/run.sh, FERRY_GPU_PLATFORM, FERRY_GPU_LIBRARY and FERRY_GPU_DEVICE_TYPE
# choose another platform (PoCL's CPU checks the script), FERRY_PROBE_SIZE the bytes of
# the large transfers (default 1 GiB), FERRY_PROBE_SECOND_DEVICE the second daemon's device
# (default 1; 0 shares one) and FERRY_PROBE_BUILD a build tree to use as it is.
#
#   bench/gpu/probe.sh [--help]
set -uo pipefail
case "${1:-}" in
  "") ;;
  -h | --help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
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
size=${FERRY_PROBE_SIZE:-1073741824}
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
    ferry_bench_noop ferry_bench_bandwidth ferry_bench_migrate ferry_bench_migrate_bandwidth >"$logs/build.log" 2>&1 || { tail -40 "$logs/build.log"; exit 1; }
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

# Bulk copies: one thread against the default split (parallel_copy), and 4 against 8 window slots
start 0 info c1 FERRY_COPY_THREADS=1
FERRY_SERVERS=$addr_c1 b bandwidth --repeats 3 --size "$size" | tee -a "$results"
echo "# Unix socket, FERRY_COPY_THREADS=1 (daemon and client)" | tee -a "$results"
FERRY_COPY_THREADS=1 FERRY_SERVERS=unix:$sockdir/c1.sock b bandwidth --only ferry --repeats 3 --size "$size" | tee -a "$results"
stop
start 0 info k0
export FERRY_SERVERS=$addr_k0
echo "# TCP, default copy threads" | tee -a "$results"
b bandwidth --only ferry --repeats 3 --size "$size" | tee -a "$results"
for slots in 4 8 4 8; do
  echo "# Unix socket, default copy threads, FERRY_WINDOW_SLOTS=$slots" | tee -a "$results"
  FERRY_WINDOW_SLOTS=$slots FERRY_SERVERS=unix:$sockdir/k0.sock b bandwidth --only ferry --repeats 3 --size "$size" | tee -a "$results"
done
b noop --repeats 2000 | tee -a "$results"
stop
# kernel steps: the poller paced at most 20 us (default here) against never pausing, twice each
for round in 1 2; do
  for pause in 20 0; do
    start 0 info kp$pause$round FERRY_POLL_MAX_PAUSE_US=$pause
    echo "# FERRY_POLL_MAX_PAUSE_US=$pause, round $round" | tee -a "$results"
    FERRY_SERVERS=$(eval echo \$addr_kp$pause$round) b kernel_step --only ferry --repeats 3 --commands 200 --size 700 | tee -a "$results"
    stop
  done
done
start 0 info kn
FERRY_SERVERS=$addr_kn b kernel_step --only native --repeats 3 --commands 200 --size 700 | tee -a "$results"
stop

# two daemons: migrations with one copy thread and the default
for copy in 1 default; do
  envs=(); [ "$copy" = 1 ] && envs=(FERRY_COPY_THREADS=1)
  start 0 info m0$copy "${envs[@]}"; start "$second" info m1$copy "${envs[@]}"
  export FERRY_SERVERS=$(eval echo \$addr_m0$copy),$(eval echo \$addr_m1$copy)
  echo "# two daemons, copy threads: $copy" | tee -a "$results"
  b migrate --only ferry --repeats 300 | tee -a "$results"
  b migrate_bandwidth --only ferry --repeats 3 --size 268435456 | tee -a "$results"
  b migrate_bandwidth --only ferry --repeats 3 --size "$size" | tee -a "$results"
  stop
done
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$logs"
echo "total $((SECONDS - t0)) s"
