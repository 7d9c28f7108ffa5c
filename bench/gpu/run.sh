#!/usr/bin/env bash
# Ferry on NVIDIA GPUs, measured against NVIDIA's own OpenCL in the same run.
#
# Builds Ferry from this source tree, checks that NVIDIA's OpenCL is there, starts one
# ferryd per GPU on loopback (each serving its GPU through libnvidia-opencl.so.1), runs
# the benchmark set natively and through Ferry, and writes a results file: the machine
# and driver first (lines starting with "#"), then one line per figure.
#
# With one GPU it runs the single-GPU set (noop, kernel_step, throughput, bandwidth, write_burst, sgemm); with two
# or more, also the two-GPU set (migrate, migrate_bandwidth, stencil) over the first two.
# Each daemon also listens on a Unix socket: noop and bandwidth run over it too (lines
# labelled "unix"), where large writes go through a shared-memory window.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/gpu/run.sh [options]
Builds Ferry, starts one ferryd per NVIDIA GPU on loopback and runs the benchmarks
natively on NVIDIA's OpenCL and through Ferry, writing one line per figure.

options:
  --build-dir DIR   where to build (default: build/gpu in the source tree)
  --results FILE    the results file (default: DIR/gpu-results.txt)
  --skip-build      use the binaries already in DIR
  --only SET        single (one-GPU figures) or pair (two-GPU figures); default: both
                    (pair needs two GPUs)
  --share-gpu       with one GPU: start two daemons on it and run the two-GPU set through
                    Ferry alone. It proves the set works on NVIDIA's OpenCL; its figures
                    are not two-GPU figures and are labelled "shared-gpu"
  --help            this text

environment:
  FERRY_GPU_PLATFORM   native platform name to look for (default: NVIDIA)
  FERRY_GPU_LIBRARY    NVIDIA's OpenCL library (default: libnvidia-opencl.so.1)
  FERRY_GPU_QUICK=1    tiny repeat counts and sizes (checks the script, measures nothing)
  FERRY_GPU_STENCIL_SIZES  the stencil's grid sides (default: 512 768 1024)
  FERRY_GPU_DEVICE_TYPE  device type the daemons serve (default: gpu; cpu checks the
                       script on PoCL, with FERRY_GPU_PLATFORM=Portable and
                       FERRY_GPU_LIBRARY=libpocl.so.2)
EOF
}

root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build/gpu"
results=""
skip_build=0
only=both
share_gpu=0
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --build-dir) [ $# -ge 2 ] || { echo "run.sh: --build-dir needs a directory" >&2; exit 2; }; build=$2; shift ;;
    --results) [ $# -ge 2 ] || { echo "run.sh: --results needs a file" >&2; exit 2; }; results=$2; shift ;;
    --skip-build) skip_build=1 ;;
    --only)
      [ $# -ge 2 ] || { echo "run.sh: --only needs single or pair" >&2; exit 2; }
      case "$2" in single|pair) only=$2 ;; *) echo "run.sh: --only needs single or pair, not '$2'" >&2; exit 2 ;; esac
      shift ;;
    --share-gpu) share_gpu=1 ;;
    *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
build=$(mkdir -p "$build" && cd "$build" && pwd)
results=${results:-$build/gpu-results.txt}
platform=${FERRY_GPU_PLATFORM:-NVIDIA}
library=${FERRY_GPU_LIBRARY:-libnvidia-opencl.so.1}
quick=${FERRY_GPU_QUICK:-0}
# Only for checking this script on a machine without a GPU (CI runs it on PoCL's CPU).
device_type=${FERRY_GPU_DEVICE_TYPE:-gpu}

fail() { echo "run.sh: $*" >&2; exit 1; }

# --- NVIDIA's OpenCL: the library must load before anything is built --------------------
# Where the loader would find $library: the ldconfig cache, then the usual directories.
library_path() {
  case "$library" in
    /*) [ -e "$library" ] && echo "$library"; return 0 ;;
  esac
  local cached
  cached=$(ldconfig -p 2>/dev/null | awk -v lib="$library" '$1 == lib { print $NF }' || true)
  [ -n "$cached" ] && { echo "${cached%%$'\n'*}"; return 0; }
  local ld_path=${LD_LIBRARY_PATH:-} dir
  for dir in ${ld_path//:/ } /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu; do
    [ -e "$dir/$library" ] && { echo "$dir/$library"; return 0; }
  done
  return 0
}
found=$(library_path)
[ -n "$found" ] || fail "NVIDIA's OpenCL library $library is not installed on this machine (it comes with the \
NVIDIA driver's OpenCL part; set FERRY_GPU_LIBRARY to its path if it lives elsewhere)"
command -v nvidia-smi >/dev/null || echo "run.sh: nvidia-smi not found; the results will not name the driver" >&2

# --- build ------------------------------------------------------------------------------
benches_single="native_completions native_overlap noop kernel_step session_start throughput bandwidth write_burst sgemm"
benches_pair="migrate migrate_bandwidth stencil"
if [ "$skip_build" != 1 ]; then
  targets="ferryd ferry_icd"
  for b in $benches_single $benches_pair; do
    # A benchmark this tree lacks is reported missing when its turn comes.
    [ -e "$root/bench/$b.cpp" ] && targets="$targets ferry_bench_$b"
  done
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  [ -e "$build/CMakeCache.txt" ] && generator=()
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DFERRY_BUILD_TESTS=OFF \
    -DFERRY_BUILD_FUZZ=OFF >"$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; fail "cmake failed"; }
  # shellcheck disable=SC2086 # one target per word
  cmake --build "$build" -j "$(nproc)" --target $targets >"$build/build.log" 2>&1 ||
    { tail -n 40 "$build/build.log" >&2; fail "the build failed (all of it in $build/build.log)"; }
fi
for f in "$build/bin/ferryd" "$build/lib/libferry.so"; do [ -e "$f" ] || fail "$f is missing: build first"; done

# The benchmarks load Ferry and the native drivers listed in the build's vendors-all
# directory (a copy of /etc/OpenCL/vendors made at build time); NVIDIA's is added here
# when the system does not register it.
vendors="$build/etc/OpenCL/vendors-all"
grep -qs "$(basename "$library")" "$vendors"/*.icd || echo "$library" >"$vendors/ferry-gpu-run.icd"

# --- the GPUs ---------------------------------------------------------------------------
# The daemon loads NVIDIA's OpenCL (the Khronos loader adds what /etc/OpenCL/vendors
# registers; --platform keeps the daemon to NVIDIA's devices).
daemon_env=(env OCL_ICD_FILENAMES="$library")
gpu_list=$("${daemon_env[@]}" "$build/bin/ferryd" --platform "$platform" --device-type "$device_type" --list-devices \
           --log-level error 2>"$build/list-devices.err") ||
  fail "no $device_type of a platform named '$platform' through $library: $(cat "$build/list-devices.err")"
gpus=$(printf '%s\n' "$gpu_list" | grep -c '^[0-9]')
echo "run.sh: $gpus GPU(s):" >&2
printf '%s\n' "$gpu_list" | sed 's/^/  /' >&2

run_single=1
run_pair=1
[ "$only" = pair ] && run_single=0
[ "$only" = single ] && run_pair=0
pair_mode=native
if [ "$run_pair" = 1 ] && [ "$gpus" -lt 2 ]; then
  if [ "$share_gpu" = 1 ]; then
    pair_mode=shared
  elif [ "$only" = pair ]; then
    fail "the two-GPU set needs two GPUs and this machine has $gpus (--share-gpu runs it on one, through Ferry alone)"
  else
    run_pair=0
    echo "run.sh: one GPU: the two-GPU set is skipped (--share-gpu runs it on this one GPU)" >&2
  fi
fi

# --- daemons ----------------------------------------------------------------------------
daemon_pids=()
stop_daemons() {
  local pid waited
  for pid in "${daemon_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${daemon_pids[@]}"; do
    # A daemon that outlives SIGTERM by 20 s is reported and killed: the run goes on.
    for waited in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      # What its threads are doing, for the report: its own stacks into its log
      # (SIGQUIT), and gdb's backtraces or each thread's wait channel beside it.
      kill -QUIT "$pid" 2>/dev/null && sleep 2 || true
      local stuck="$build/ferryd-$pid.stuck.txt"
      if command -v gdb >/dev/null; then
        gdb -p "$pid" -batch -ex "thread apply all bt" >"$stuck" 2>&1
      else
        for task in /proc/"$pid"/task/*; do
          echo "$(basename "$task") $(cat "$task/comm") wchan=$(cat "$task/wchan" 2>/dev/null)" \
            "syscall=$(cut -d' ' -f1 "$task/syscall" 2>/dev/null)"
        done >"$stuck"
      fi
      if command -v addr2line >/dev/null; then
        # ferryd's own frames in the logs' stacks, by name.
        { cat "$build"/ferryd-*.log | grep -o 'ferryd(+0x[0-9a-f]*)' | sed 's/.*(+\(0x[0-9a-f]*\))/\1/' | sort -u |
          while read -r at; do echo "$at $(addr2line -f -C -i -e "$build/bin/ferryd" "$at" | paste -sd' ')"; done >>"$stuck"; } ||
          true
      fi
      echo "run.sh: ferryd (pid $pid) did not stop within 20 s of SIGTERM; killing it (threads: its log, $stuck)" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  done
  daemon_pids=()
}
# Unix sockets in a short directory of their own: a socket's path has at most 107 bytes.
socket_dir=$(mktemp -d "${TMPDIR:-/tmp}/ferry-gpu.XXXXXX")
# Session workers run as nobody when ferryd runs as root, and a worker dials the other
# daemon's socket for the same-host peer link: mktemp's 0700 would keep it out (TCP then).
chmod 755 "$socket_dir"
trap 'stop_daemons; rm -rf "$socket_dir"' EXIT

# start_daemon GPU: starts ferryd serving that GPU; its address goes into $address (not
# printed: a command substitution would run it in a subshell that forgets the pid).
address=""
unix_address=""
daemons_started=0
start_daemon() {
  local gpu=$1 n=$daemons_started
  daemons_started=$((daemons_started + 1))
  # Numbered across sets, so that the pair set's daemons do not overwrite the single set's logs.
  local out="$build/ferryd-$n.out" log="$build/ferryd-$n.log" socket="$socket_dir/ferryd-$n.sock"
  : >"$out"
  "${daemon_env[@]}" "$build/bin/ferryd" --port 0 --unix "$socket" --platform "$platform" --device-type "$device_type" \
    --device "$gpu" --log-level info >"$out" 2>"$log" &
  daemon_pids+=($!)
  local pid=$! port=""
  for _ in $(seq 600); do
    port=$(sed -n 's/^READY \([0-9]*\)$/\1/p' "$out")
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || fail "ferryd for GPU $gpu exited: $(cat "$log")"
    sleep 0.1
  done
  [ -n "$port" ] || fail "ferryd for GPU $gpu did not get ready in 60 s: $(cat "$log")"
  address="127.0.0.1:$port"
  unix_address="unix:$socket"
}

# --- results ----------------------------------------------------------------------------
{
  echo "# Ferry GPU benchmarks, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# source: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (modified)')"
  echo "# host: $(uname -sr), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=index,name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max \
      --format=csv,noheader 2>/dev/null | sed 's/^/# gpu: /'
  fi
  echo "# opencl: $library ($found)"
  printf '%s\n' "$gpu_list" | sed 's/^/# ferryd --list-devices: /'
  [ "$quick" = 1 ] && echo "# FERRY_GPU_QUICK=1: tiny counts, not figures"
} >"$results"

status=0
# bench NAME ARGS...: runs one benchmark, its figure lines into the results file
# (prefixed with $label when set).
label=""
bench() {
  local name=$1
  shift
  echo "== $name $*" >&2
  if ! "$build/bin/ferry_bench_$name" --bin-dir "$build" --native-platform "$platform" "$@" \
       2> >(sed "s/^/  [$name] /" >&2) | sed "s/^/${label:+$label }/" | tee -a "$results"; then
    echo "$name FAILED (exit status above; args: $*)" | tee -a "$results" >&2
    status=1
  fi
}

q() { [ "$quick" = 1 ] && echo "$1" || echo "$2"; }

if [ "$run_single" = 1 ]; then
  start_daemon 0
  export FERRY_SERVERS=$address
  bench noop --repeats "$(q 50 2000)"
  # Kernels of 0.1-5 ms, each waited for: what Ferry adds to a long step (FluidX3D's loop).
  if [ "$quick" = 1 ]; then bench kernel_step --repeats 1 --commands 10 --size 700
  else bench kernel_step --repeats 3 --commands 200; fi
  bench session_start --repeats "$(q 2 10)"
  bench throughput --repeats "$(q 1 5)" --commands "$(q 1000 100000)"
  if [ "$quick" = 1 ]; then bench bandwidth --repeats 1 --size 1048576; else bench bandwidth; fi
  bench write_burst --repeats "$(q 1 10)" --size "$(q 1048576 16777216)"
  bench sgemm --repeats "$(q 1 5)" --commands "$(q 1 10)" --size "$(q 512 4096)"
  # Native only: why ferryd polls completions on NVIDIA (--completions).
  bench native_completions --repeats "$(q 3 50)" --spin "$(q 100 20000)"
  # Native only: what NVIDIA runs beside a kernel (the overlapped exchange and ferryd's own queue).
  bench native_overlap --repeats "$(q 2 10)" --size "$(q 65536 4194304)"
  # The same daemon over its Unix socket: the same-host path (shared-memory window).
  export FERRY_SERVERS=$unix_address
  label=unix
  bench noop --repeats "$(q 50 2000)"
  if [ "$quick" = 1 ]; then bench bandwidth --repeats 1 --size 16777216; else bench bandwidth; fi
  label=""
  stop_daemons
fi

if [ "$run_pair" = 1 ]; then
  if [ "$pair_mode" = shared ]; then
    start_daemon 0 && first=$address && start_daemon 0
    pair_args=(--only ferry)
    label=shared-gpu
    echo "# shared-gpu: two daemons on GPU 0, Ferry alone (no native two-GPU context)" >>"$results"
  else
    start_daemon 0 && first=$address && start_daemon 1
    pair_args=()
  fi
  export FERRY_SERVERS="$first,$address"
  bench migrate "${pair_args[@]}" --repeats "$(q 20 1000)"
  for size in $(q 1048576 "268435456 1073741824"); do
    bench migrate_bandwidth "${pair_args[@]}" --repeats "$(q 1 5)" --size "$size"
  done
  # Two daemons sharing one GPU prove the stencil works; a smaller grid keeps that short.
  # On two GPUs: 512^3 (a step about as short as the exchange), 768^3 and 1024^3.
  stencil_sizes=${FERRY_GPU_STENCIL_SIZES:-$(q 64 "512 768 1024")}
  [ "$pair_mode" = shared ] && [ "$quick" != 1 ] && stencil_sizes=256
  for size in $stencil_sizes; do
    bench stencil "${pair_args[@]}" --repeats "$(q 1 3)" --commands "$(q 4 50)" --size "$size"
  done
  stop_daemons
fi

echo "run.sh: results in $results" >&2
exit $status
