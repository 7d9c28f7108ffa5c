#!/usr/bin/env bash
# CUDA remoting's two open figures, A/B on one machine with an NVIDIA GPU (docs/cuda.md):
#   - launch + synchronize natively, through Ferry over TCP, and through Ferry with the
#     client's polling off (FERRY_SPIN_US=0: the waiting thread sleeps at once), 3,000
#     launches each, alternated twice;
#   - the SGEMM of bench/cuda/sgemm.cu (PTX from nvcc) natively and through Ferry, 21 runs
#     each, alternated twice; through Ferry also with the measuring aids
#     FERRY_CUDA_PRIMARY_CONTEXTS=1 (the session gets the device's primary context) and
#     FERRY_CUDA_JIT_PLAIN=1 (the JIT gets no option of the daemon's), each on its own daemon.
# Builds ferryd, Ferry's libcuda.so.1 and ferry_bench_cuda_driver into build/gpu and starts
# three ferryd on GPU 0 (plain, and one per measuring aid); their output goes to $OUT
# (default build/gpu/cuda-probe).
#
#   bench/gpu/cuda_probe.sh [--help]
set -u
case "${1:-}" in
  "") ;;
  -h | --help) sed -n '2,15s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "cuda_probe.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
b=build/gpu
OUT=${OUT:-$root/$b/cuda-probe}
mkdir -p "$OUT"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B $b "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_FUZZ=OFF >"$OUT/configure.log" 2>&1 ||
  { tail "$OUT/configure.log"; exit 1; }
cmake --build $b -j "$(nproc)" --target ferryd ferry_cuda_client ferry_bench_cuda_driver >"$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$nvcc" -ptx -arch=sm_80 -o "$OUT/sgemm.ptx" bench/cuda/sgemm.cu || { echo "cuda_probe.sh: nvcc failed" >&2; exit 1; }
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait' EXIT
start() {  # NAME [ENV...]: a ferryd on GPU 0; sets port_NAME
  local name=$1 port=""
  shift
  env OCL_ICD_FILENAMES=libnvidia-opencl.so.1 "$@" $b/bin/ferryd --port 0 --platform NVIDIA --device-type gpu \
    --device 0 >"$OUT/ferryd-$name.out" 2>"$OUT/ferryd-$name.log" &
  pids+=($!)
  for _ in $(seq 300); do port=$(sed -n 's/^READY \([0-9]*\)$/\1/p' "$OUT/ferryd-$name.out"); [ -n "$port" ] && break; sleep 0.1; done
  [ -n "$port" ] || { echo "cuda_probe.sh: ferryd $name did not start: $(tail -5 "$OUT/ferryd-$name.log")" >&2; exit 1; }
  eval "port_$name=$port"
}
start plain
start primary FERRY_CUDA_PRIMARY_CONTEXTS=1
start jit FERRY_CUDA_JIT_PLAIN=1
port=$port_plain
ferry=(LD_LIBRARY_PATH="$root/$b/lib/ferry-cuda" FERRY_SERVERS="127.0.0.1:$port")
launches() { env "$@" $b/bin/ferry_bench_cuda_driver --max-size 4096 --repeats 1 --launches 3000 2>&1 | grep launch; }
sgemm() { env "$@" $b/bin/ferry_bench_cuda_driver --max-size 4096 --repeats 21 --launches 10 --sgemm-ptx "$OUT/sgemm.ptx" 2>&1 | grep sgemm; }
for round in 1 2; do
  launches CUDA_VISIBLE_DEVICES=0 | sed 's/^cuda/native/'
  launches "${ferry[@]}" | sed 's/^cuda/ferry/'
  launches "${ferry[@]}" FERRY_SPIN_US=0 | sed 's/^cuda/ferry-no-polling/'
done
for round in 1 2; do
  sgemm CUDA_VISIBLE_DEVICES=0 | sed 's/^cuda/native/'
  sgemm "${ferry[@]}" | sed 's/^cuda/ferry/'
  sgemm LD_LIBRARY_PATH="$root/$b/lib/ferry-cuda" FERRY_SERVERS="127.0.0.1:$port_primary" | sed 's/^cuda/ferry-primary-context/'
  sgemm LD_LIBRARY_PATH="$root/$b/lib/ferry-cuda" FERRY_SERVERS="127.0.0.1:$port_jit" | sed 's/^cuda/ferry-plain-jit/'
done
