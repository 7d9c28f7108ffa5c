#!/usr/bin/env bash
# Ferry's CUDA remoting (issue 24) on an NVIDIA GPU: each CUDA test program run natively on
# NVIDIA's libcuda.so.1 and through Ferry's, in the same run.
#
# Builds Ferry from this source tree (ferryd, the ferry CLI and the client library
# lib/ferry-cuda/libcuda.so.1), starts one ferryd serving GPU 0 on loopback, then runs every
# program of the programs directory (built on Debian 12 by tests/cuda/programs/build.sh, with
# the GCC runtime they need in its lib/) twice: natively, then with Ferry's libcuda.so.1 first
# on LD_LIBRARY_PATH and FERRY_SERVERS pointing at the daemon. Each run must pass its own
# checks; the two runs must print the same results (timings aside); and each run must have
# loaded the libcuda.so.1 it was meant to (the dynamic loader's own report, LD_DEBUG=libs),
# or a run "through Ferry" could silently have used NVIDIA's driver. With FERRY_NUMBA_PYTHON
# set, the numba-cuda scripts in tests/cuda/numba run the same way (numba loads the driver
# as libcuda.so first, so Ferry's directory must hold a libcuda.so too).
#
# Writes a results file: the machine, the driver and where each libcuda.so.1 is (lines
# starting with "#"), then one line per program:
#   cuda NAME native=ok|FAIL ferry=ok|FAIL same=yes|no native_ms=... ferry_ms=... ratio=...
# (times from the program's time_ms= when it prints one, else wall time; ratio = ferry/native),
# and for a program that prints region_ms= (the Jacobi ones: the data region, copies included)
# native_region_ms=... ferry_region_ms=... region_ratio=... at the end.
# Exits non-zero when any program failed or the two runs differed.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/gpu/cuda.sh [options]
Builds Ferry, starts one ferryd serving GPU 0 on loopback and runs each CUDA test program
natively and through Ferry's libcuda.so.1, one line per program.

options:
  --programs DIR    the built programs (default: build/cuda-programs in the source tree;
                    tests/cuda/programs/build.sh makes them on a Debian 12 machine)
  --build-dir DIR   where to build Ferry (default: build/gpu in the source tree)
  --results FILE    the results file (default: DIR/cuda-results.txt, DIR the build directory)
  --skip-build      use the binaries already in the build directory
  --help            this text

environment:
  FERRY_GPU_PLATFORM     the daemon's native platform (default: NVIDIA)
  FERRY_GPU_LIBRARY      NVIDIA's OpenCL library for the daemon (default: libnvidia-opencl.so.1)
  FERRY_CUDA_TIMEOUT     seconds one run of one program may take (default: 600)
  FERRY_CUDA_JACOBI_ARGS the Jacobi programs' grid side and iterations (default: 4096 100)
  FERRY_NUMBA_PYTHON     a python with numba-cuda: also run tests/cuda/numba/*.py (default:
                         unset, the numba scripts are skipped)
EOF
}

root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build/gpu"
programs=""
results=""
skip_build=0
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --programs) [ $# -ge 2 ] || { echo "cuda.sh: --programs needs a directory" >&2; exit 2; }; programs=$2; shift ;;
    --build-dir) [ $# -ge 2 ] || { echo "cuda.sh: --build-dir needs a directory" >&2; exit 2; }; build=$2; shift ;;
    --results) [ $# -ge 2 ] || { echo "cuda.sh: --results needs a file" >&2; exit 2; }; results=$2; shift ;;
    --skip-build) skip_build=1 ;;
    *) echo "cuda.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
build=$(mkdir -p "$build" && cd "$build" && pwd)
results=${results:-$build/cuda-results.txt}
programs=${programs:-$root/build/cuda-programs}
platform=${FERRY_GPU_PLATFORM:-NVIDIA}
library=${FERRY_GPU_LIBRARY:-libnvidia-opencl.so.1}
run_timeout=${FERRY_CUDA_TIMEOUT:-600}
read -r -a jacobi_args <<<"${FERRY_CUDA_JACOBI_ARGS:-4096 100}"
numba_python=${FERRY_NUMBA_PYTHON:-}

fail() { echo "cuda.sh: $*" >&2; exit 1; }

# --- the programs -----------------------------------------------------------------------
[ -d "$programs" ] || fail "no programs directory $programs: build the programs on a Debian 12 machine with \
tests/cuda/programs/build.sh (it needs gcc-12-offload-nvptx) and copy its output here, or name it with --programs"
programs=$(cd "$programs" && pwd)
for f in libgomp.so.1 libgomp-plugin-nvptx.so.1; do
  [ -e "$programs/lib/$f" ] || fail "$programs/lib/$f is missing: tests/cuda/programs/build.sh copies it there"
done
program_list=()
for p in "$programs"/*; do
  [ -f "$p" ] && [ -x "$p" ] && program_list+=("$(basename "$p")")
done
[ ${#program_list[@]} -gt 0 ] || fail "no programs in $programs"

# --- NVIDIA's libcuda.so.1 and OpenCL ---------------------------------------------------
# Where the loader finds LIB: the ldconfig cache, then the usual directories. Every match,
# one a line (NVIDIA's libcuda is not always in /usr/lib/x86_64-linux-gnu).
find_library() {
  local lib=$1 dir
  ldconfig -p 2>/dev/null | awk -v lib="$lib" '$1 == lib { print $NF }' || true
  local ld_path=${LD_LIBRARY_PATH:-}
  for dir in ${ld_path//:/ } /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64; do
    [ -e "$dir/$lib" ] && echo "$dir/$lib"
  done
  return 0
}
nvidia_cuda=$(find_library libcuda.so.1 | grep -v '/ferry-cuda/' | awk '!seen[$0]++' || true)
[ -n "$nvidia_cuda" ] || fail "NVIDIA's libcuda.so.1 was not found (ldconfig -p lists no libcuda.so.1): is \
the NVIDIA driver installed?"
# (awk, not head: head would stop reading and end find_library with SIGPIPE under pipefail)
found_opencl=$(find_library "$library" | awk 'NR == 1')
[ -n "$found_opencl" ] || [ "${library#/}" != "$library" ] ||
  fail "NVIDIA's OpenCL library $library was not found (ferryd serves the GPU through it; set FERRY_GPU_LIBRARY)"
command -v nvidia-smi >/dev/null || echo "cuda.sh: nvidia-smi not found; the results will not name the driver" >&2

# --- build ------------------------------------------------------------------------------
if [ "$skip_build" != 1 ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  [ -e "$build/CMakeCache.txt" ] && generator=()
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DFERRY_BUILD_TESTS=OFF \
    -DFERRY_BUILD_FUZZ=OFF >"$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; fail "cmake failed"; }
  cmake --build "$build" -j "$(nproc)" --target ferryd ferry ferry_cuda_client ferry_bench_cuda_driver >"$build/build.log" 2>&1 ||
    { tail -n 40 "$build/build.log" >&2; fail "the build failed (all of it in $build/build.log)"; }
fi
ferry_cuda_dir="$build/lib/ferry-cuda"
for f in "$build/bin/ferryd" "$ferry_cuda_dir/libcuda.so.1"; do
  [ -e "$f" ] || fail "$f is missing: build first (targets ferryd ferry ferry_cuda_client)"
done

# --- the daemon -------------------------------------------------------------------------
daemon_pid=""
stop_daemon() {
  [ -n "$daemon_pid" ] || return 0
  kill "$daemon_pid" 2>/dev/null || true
  # A daemon that outlives SIGTERM by 20 s is reported and killed.
  for _ in $(seq 200); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$daemon_pid" 2>/dev/null; then
    echo "cuda.sh: ferryd (pid $daemon_pid) did not stop within 20 s of SIGTERM; killing it" >&2
    kill -KILL "$daemon_pid" 2>/dev/null || true
  fi
  wait "$daemon_pid" 2>/dev/null || true
  daemon_pid=""
  [ -z "${sockdir:-}" ] || rm -rf "$sockdir"
}
trap stop_daemon EXIT

# The daemon's own environment: NVIDIA's OpenCL for the GPU, and never Ferry's libcuda.so.1
# (it runs the calls on NVIDIA's).
daemon_out="$build/ferryd-cuda.out"
daemon_log="$build/ferryd-cuda.log"
: >"$daemon_out"
# It also listens on a Unix socket, in a directory a session worker (nobody, under a root
# daemon) may enter.
sockdir=$(mktemp -d /tmp/ferry-cuda.XXXX)
chmod 755 "$sockdir"
env OCL_ICD_FILENAMES="$library" "$build/bin/ferryd" --port 0 --unix "$sockdir/ferryd.sock" --platform "$platform" \
  --device-type gpu --device 0 --log-level info >"$daemon_out" 2>"$daemon_log" &
daemon_pid=$!
port=""
for _ in $(seq 600); do
  port=$(sed -n 's/^READY \([0-9]*\)$/\1/p' "$daemon_out")
  [ -n "$port" ] && break
  kill -0 "$daemon_pid" 2>/dev/null || { daemon_pid=""; fail "ferryd exited: $(cat "$daemon_log")"; }
  sleep 0.1
done
[ -n "$port" ] || fail "ferryd did not get ready in 60 s: $(cat "$daemon_log")"
address="127.0.0.1:$port"

# --- results ----------------------------------------------------------------------------
mkdir -p "$(dirname "$results")"
{
  echo "# Ferry CUDA programs, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# source: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (modified)')"
  echo "# host: $(uname -sr), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/# gpu: /'
  fi
  while IFS= read -r path; do
    echo "# libcuda.so.1 (NVIDIA): $path -> $(readlink -f "$path")"
  done <<<"$nvidia_cuda"
  echo "# libcuda.so.1 (Ferry): $ferry_cuda_dir/libcuda.so.1"
  echo "# ferryd: $address serving GPU 0 of platform $platform through $library${found_opencl:+ ($found_opencl)}"
  echo "# programs: $programs"
  [ -e "$programs/BUILD-INFO" ] && sed 's/^/# programs: /' "$programs/BUILD-INFO"
  echo "# native runs: CUDA_VISIBLE_DEVICES=0 (the GPU the daemon serves)"
} | tee "$results"

logs="$build/cuda-logs"
rm -rf "$logs"
mkdir -p "$logs"
status=0

# loaded_libcuda LD_FILE: the libcuda.so.1 files the dynamic loader initialised in that run
# (LD_DEBUG=libs writes "calling init: PATH"), one a line.
loaded_libcuda() {
  cat "$1".* 2>/dev/null | sed -n 's/.*calling init: \(.*libcuda\.so[.0-9]*\)$/\1/p' | sort -u
}

# The environment of each kind of run: natively NVIDIA's libcuda.so.1 (found through the
# ldconfig cache or the inherited LD_LIBRARY_PATH) on the GPU the daemon serves; through
# Ferry, Ferry's directory first on LD_LIBRARY_PATH (numba also gets its library by name).
native_env=(CUDA_VISIBLE_DEVICES=0 LD_LIBRARY_PATH="$programs/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
ferry_env=(LD_LIBRARY_PATH="$ferry_cuda_dir:$programs/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
           FERRY_SERVERS="$address" NUMBA_CUDA_DRIVER="$ferry_cuda_dir/libcuda.so.1")
clean_env=(-u FERRY_ALLOW_HOST_FALLBACK -u NUMBA_CUDA_DRIVER -u NUMBA_ENABLE_CUDASIM)

# run_once MODE NAME COMMAND...: one run, its output in $logs/NAME.MODE.{out,err}; sets
# run_ok (ok or FAIL), run_ms and run_why.
run_once() {
  local mode=$1 name=$2
  shift 2
  local out="$logs/$name.$mode.out" err="$logs/$name.$mode.err" ld="$logs/$name.$mode.ld"
  local env_mode=("${native_env[@]}")
  [ "$mode" = native ] || env_mode=("${ferry_env[@]}")
  local start end rc=0
  start=$(date +%s%N)
  env "${clean_env[@]}" "${env_mode[@]}" LD_DEBUG=libs LD_DEBUG_OUTPUT="$ld" timeout "$run_timeout" "$@" >"$out" 2>"$err" || rc=$?
  end=$(date +%s%N)
  run_ms=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.1f", ns / 1e6 }')
  local timed
  timed=$(grep -o 'time_ms=[0-9.]*' "$out" | tail -n 1 | cut -d= -f2 || true)
  [ -n "$timed" ] && run_ms=$timed
  # The Jacobi programs also time their whole data region (copies in and out included).
  run_region_ms=$(grep -o 'region_ms=[0-9.]*' "$out" | tail -n 1 | cut -d= -f2 || true)
  run_ok=ok
  run_why=""
  if [ "$rc" = 124 ]; then
    run_ok=FAIL run_why="timed out after $run_timeout s"
  elif [ "$rc" != 0 ]; then
    run_ok=FAIL run_why="exit status $rc"
  fi
  # Which driver it ran on, by the loader's word.
  local loaded
  loaded=$(loaded_libcuda "$ld" | paste -sd' ')
  if [ "$mode" = native ]; then
    case " $loaded " in
      *"$ferry_cuda_dir/"*) run_ok=FAIL run_why="${run_why:+$run_why; }it loaded Ferry's libcuda.so.1 ($loaded)" ;;
      "  ") run_ok=FAIL run_why="${run_why:+$run_why; }it loaded no libcuda.so.1" ;;
    esac
  else
    local path
    for path in $loaded; do
      case "$path" in
        "$ferry_cuda_dir"/*) ;;
        */libcuda.so)
          # numba-cuda's own loader tries libcuda.so before libcuda.so.1 (and, in 0.30, ignores
          # NUMBA_CUDA_DRIVER): only a libcuda.so beside Ferry's libcuda.so.1 keeps it on Ferry.
          run_ok=FAIL
          run_why="${run_why:+$run_why; }it loaded $path, not Ferry's libcuda.so.1 alone (numba tries libcuda.so \
first: $ferry_cuda_dir needs a libcuda.so link to libcuda.so.1)" ;;
        *) run_ok=FAIL run_why="${run_why:+$run_why; }it loaded $path, not Ferry's libcuda.so.1 alone" ;;
      esac
    done
    [ -n "$loaded" ] || run_ok=FAIL run_why="${run_why:+$run_why; }it loaded no libcuda.so.1"
  fi
  rm -f "$ld".*
  echo "$loaded" >"$logs/$name.$mode.libcuda"
  if [ "$run_ok" != ok ]; then
    {
      echo "cuda.sh: $name ($mode) FAILED: $run_why; the last of its output ($out, $err):"
      tail -n 8 "$out" | sed 's/^/  out: /'
      tail -n 12 "$err" | sed 's/^/  err: /'
    } >&2
  fi
}

# compare_program KIND NAME COMMAND...: both runs, then the program's line. First, untimed,
# a native and a Ferry run of $warmup (the same program; the Jacobi ones on a small grid): a program's
# first run pays the compilation of its PTX, which NVIDIA's JIT cache saves the runs after
# it, and the page cache holds its files; the timed native run would pay for that alone.
compare_program() {
  local kind=$1 name=$2
  shift 2
  echo "== $kind $name" >&2
  env "${clean_env[@]}" "${native_env[@]}" timeout "$run_timeout" "${warmup[@]}" >/dev/null 2>&1 || true
  # The same for the daemon's JIT cache (a session worker's CUDA_CACHE_PATH).
  env "${clean_env[@]}" "${ferry_env[@]}" timeout "$run_timeout" "${warmup[@]}" >/dev/null 2>&1 || true
  run_once native "$name" "$@"
  local native_ok=$run_ok native_ms=$run_ms native_region_ms=$run_region_ms
  run_once ferry "$name" "$@"
  local ferry_ok=$run_ok ferry_ms=$run_ms ferry_region_ms=$run_region_ms
  # The results, timings aside: fields ending in "_ms=".
  local same=no
  if cmp -s <(sed -E 's/ [A-Za-z_]*_ms=[^ ]*//g' "$logs/$name.native.out") \
            <(sed -E 's/ [A-Za-z_]*_ms=[^ ]*//g' "$logs/$name.ferry.out"); then
    same=yes
  elif [ "$native_ok" = ok ] && [ "$ferry_ok" = ok ]; then
    echo "cuda.sh: $name: the native and Ferry runs printed different results:" >&2
    diff <(sed -E 's/ [A-Za-z_]*_ms=[^ ]*//g' "$logs/$name.native.out") \
         <(sed -E 's/ [A-Za-z_]*_ms=[^ ]*//g' "$logs/$name.ferry.out") | head -n 20 | sed 's/^/  /' >&2 || true
  fi
  local ratio region=""
  ratio=$(awk -v n="$native_ms" -v f="$ferry_ms" 'BEGIN { if (n > 0) printf "%.2f", f / n; else print "-" }')
  if [ -n "$native_region_ms" ] && [ -n "$ferry_region_ms" ]; then
    region=" native_region_ms=$native_region_ms ferry_region_ms=$ferry_region_ms region_ratio=$(awk -v n="$native_region_ms" \
      -v f="$ferry_region_ms" 'BEGIN { if (n > 0) printf "%.2f", f / n; else print "-" }')"
  fi
  echo "$kind $name native=$native_ok ferry=$ferry_ok same=$same native_ms=$native_ms ferry_ms=$ferry_ms ratio=$ratio$region" |
    tee -a "$results"
  [ "$native_ok" = ok ] && [ "$ferry_ok" = ok ] && [ "$same" = yes ] || status=1
}

for name in "${program_list[@]}"; do
  args=()
  warmup=("$programs/$name")
  case "$name" in *_jacobi) args=("${jacobi_args[@]}") warmup+=(64 2) ;; esac
  compare_program cuda "$name" "$programs/$name" "${args[@]}"
done

# --- the driver API's figures (bench/cuda_driver.cpp) --------------------------------------
# Natively, through Ferry over TCP and over the Unix socket; the compute-bound kernel is
# bench/cuda/sgemm.cu as PTX where nvcc is found.
sgemm_args=()
nvcc_bin=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
if [ -n "$nvcc_bin" ] && "$nvcc_bin" -ptx -arch=sm_80 -o "$logs/sgemm.ptx" "$root/bench/cuda/sgemm.cu" 2>"$logs/nvcc.err"; then
  sgemm_args=(--sgemm-ptx "$logs/sgemm.ptx")
else
  echo "cuda.sh: no nvcc (or it failed: $(tail -n 2 "$logs/nvcc.err" 2>/dev/null)); the sgemm figure is left out" >&2
fi
bench_once() {  # LABEL ENV...
  local label=$1
  shift
  env "${clean_env[@]}" "$@" timeout "$run_timeout" "$build/bin/ferry_bench_cuda_driver" --label "$label" \
    "${sgemm_args[@]}" >"$logs/bench.$label.out" 2>"$logs/bench.$label.err" ||
    { echo "cuda.sh: ferry_bench_cuda_driver ($label) failed: $(tail -n 3 "$logs/bench.$label.err")" >&2; status=1; }
  grep -v '^#' "$logs/bench.$label.out" | tee -a "$results"
  grep '^#' "$logs/bench.$label.out" >&2 || true
}
echo "== driver API figures" >&2
bench_once native "${native_env[@]}"
bench_once ferry-tcp "${ferry_env[@]}"
# One TCP connection for the bulk bytes, as before bulk lanes (protocol version 11).
bench_once ferry-tcp-1lane "${ferry_env[@]}" FERRY_BULK_LANES=1
bench_once ferry-unix LD_LIBRARY_PATH="$ferry_cuda_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FERRY_SERVERS="unix:$sockdir/ferryd.sock"

# --- numba ------------------------------------------------------------------------------
numba_scripts=()
for script in "$root"/tests/cuda/numba/*.py; do
  # _*.py are the scripts' shared module, not scripts.
  [ -e "$script" ] && [ "$(basename "$script" | cut -c1)" != _ ] && numba_scripts+=("$script")
done
if [ ${#numba_scripts[@]} -eq 0 ]; then
  echo "# numba: no scripts in tests/cuda/numba" | tee -a "$results"
elif [ -z "$numba_python" ]; then
  echo "cuda.sh: FERRY_NUMBA_PYTHON is not set: the numba scripts (tests/cuda/numba) are skipped" >&2
  echo "# numba: skipped (FERRY_NUMBA_PYTHON is not set)" | tee -a "$results"
elif ! "$numba_python" -c 'import numba.cuda' >"$logs/numba-import.err" 2>&1; then
  echo "cuda.sh: $numba_python cannot import numba.cuda: $(tail -n 3 "$logs/numba-import.err")" >&2
  echo "numba import FAIL ($numba_python)" | tee -a "$results"
  status=1
else
  echo "# numba: $("$numba_python" -c 'import numba, numba.cuda, sys; print(sys.executable, "numba", numba.__version__)' 2>/dev/null)" |
    tee -a "$results"
  for script in "${numba_scripts[@]}"; do
    warmup=(env PYTHONDONTWRITEBYTECODE=1 "$numba_python" "$script")
    compare_program numba "$(basename "$script" .py)" env PYTHONDONTWRITEBYTECODE=1 "$numba_python" "$script"
  done
fi

stop_daemon
echo "cuda.sh: results in $results (each run's output in $logs)" >&2
exit $status
