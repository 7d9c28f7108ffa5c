#!/bin/sh
# Himeno step time (issue 23): examples/himeno_mpi on 2 ranks, halo exchanges as transfer
# commands (events only, the clDataTransfer paper's Listing 4) against host-blocking
# exchanges (Listing 2), natively (PoCL) and through Ferry: one local ferryd on 127.0.0.1
# that both ranks share (`ferry run`), and two, one per rank. Transfer commands run twice
# through Ferry: as the library chooses (halos below FERRY_TRANSFER_PEER_MIN, 64K, go
# through the hosts), with every halo offered server to server (FERRY_TRANSFER_PEER_MIN=0),
# and with none (FERRY_TRANSFER_PEER_MIN=off). Prints each median step time, native beside Ferry from the
# same run.
set -eu
usage() {
  cat <<USAGE
Usage: bench/himeno.sh [--bin-dir DIR] [--grid NX NY NZ] [--steps S] [--repeat R] [--gpus]

  --bin-dir DIR     build tree with bin/himeno_mpi, bin/ferry and bin/ferryd
                    (default build/release)
  --grid NX NY NZ   grid (default 96 96 96: a few ms per step on a 2-core VM)
  --steps S         steps per timed run (default 20)
  --repeat R        timed runs; the median step is printed (default 7)
  --gpus            the daemons serve NVIDIA GPUs (--platform NVIDIA --device-type gpu;
                    with two daemons --device 0 and --device 1) instead of the CPU; set
                    OCL_ICD_FILENAMES to the native driver for the native runs and the
                    daemons
  --help            this text

MPIEXEC (default mpiexec) starts the ranks; as root Open MPI needs
--allow-run-as-root, which is added, with --oversubscribe, for Open MPI.
USAGE
}
bin_dir=build/release grid="96 96 96" steps=20 repeat=7 gpus=no
while [ $# -gt 0 ]; do
  case $1 in
    --help) usage; exit 0 ;;
    --bin-dir) [ $# -ge 2 ] || { echo "himeno.sh: --bin-dir needs a value" >&2; exit 2; }; bin_dir=$2; shift 2 ;;
    --grid) [ $# -ge 4 ] || { echo "himeno.sh: --grid needs three sizes" >&2; exit 2; }; grid="$2 $3 $4"; shift 4 ;;
    --steps) [ $# -ge 2 ] || { echo "himeno.sh: --steps needs a value" >&2; exit 2; }; steps=$2; shift 2 ;;
    --repeat) [ $# -ge 2 ] || { echo "himeno.sh: --repeat needs a value" >&2; exit 2; }; repeat=$2; shift 2 ;;
    --gpus) gpus=yes; shift ;;
    *) echo "himeno.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
himeno=$bin_dir/bin/himeno_mpi ferry=$bin_dir/bin/ferry ferryd=$bin_dir/bin/ferryd
for f in "$himeno" "$ferry" "$ferryd"; do
  [ -x "$f" ] || { echo "himeno.sh: $f not found (build with MPI, see docs/transfer.md)" >&2; exit 1; }
done
mpiexec=${MPIEXEC:-mpiexec}
# mpiexec's hwloc would list OpenCL devices, through Ferry a session of its own.
export HWLOC_COMPONENTS=-opencl
flags=""
# Open MPI binds each of two ranks to one core: the threads of Ferry's client and of the
# transfer library then wait for each other's time slices (on two H200s a step took 19 ms
# through Ferry at any grid). The ranks here may use every core.
if "$mpiexec" --version 2>/dev/null | grep -q -e "Open MPI" -e OpenRTE; then
  flags="--oversubscribe --allow-run-as-root --bind-to none"
fi

# Each column runs alone, the two daemons (one per rank) only for their own: a native
# run beside daemons that hold the GPUs found no device.
work=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
device_args="--device-type cpu"
[ $gpus = yes ] && device_args="--platform NVIDIA --device-type gpu"
servers=""
start_daemons() {
  for i in 1 2; do
    one_device=""
    [ $gpus = yes ] && one_device="--device $((i - 1))"
    # shellcheck disable=SC2086
    "$ferryd" --port 0 --listen 127.0.0.1 $device_args $one_device --log-level warn >"$work/ferryd$i.out" 2>&1 &
    pids="$pids $!"
    tries=0
    until grep -q '^READY ' "$work/ferryd$i.out"; do
      tries=$((tries + 1))
      [ $tries -lt 300 ] || { echo "himeno.sh: ferryd did not start:" >&2; cat "$work/ferryd$i.out" >&2; exit 1; }
      sleep 0.1
    done
    port=$(sed -n 's/^READY \([0-9]*\).*/\1/p' "$work/ferryd$i.out" | head -n 1)
    servers="$servers${servers:+,}127.0.0.1:$port"
  done
}
stop_daemons() {
  for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  pids=""
}
# The loader settings `ferry run` gives (ocl-icd reads the first, Khronos's the second).
ferry_icd=$(cd "$bin_dir" && pwd)/etc/OpenCL/vendors/ferry.icd
libferry=$(cd "$bin_dir" && pwd)/lib/libferry.so
run_args=""
[ $gpus = yes ] && run_args="--daemon-arg --platform --daemon-arg NVIDIA --daemon-arg --device-type --daemon-arg gpu"

step_ms() {  # platform [--host-blocking]
  platform=$1
  shift
  # shellcheck disable=SC2086
  case $platform in
    ferry) out=$("$ferry" run $run_args -- "$mpiexec" $flags -n 2 "$himeno" --grid $grid --steps "$steps" \
                  --repeat "$repeat" "$@") ;;
    ferry2) out=$(OCL_ICD_VENDORS="$ferry_icd" OCL_ICD_FILENAMES="$libferry" FERRY_SERVERS=$servers \
                  "$mpiexec" $flags -n 2 "$himeno" --grid $grid --steps "$steps" --repeat "$repeat" "$@") ;;
    *) out=$("$mpiexec" $flags -n 2 "$himeno" --grid $grid --steps "$steps" --repeat "$repeat" "$@") ;;
  esac
  printf '%s\n' "$out" | sed -n 's/^step_ms \([0-9.]*\).*/\1/p'
}

# One column: the step times of the four rows on `platform`, in $work/<platform>.
column() {
  platform=$1
  : >"$work/$platform"
  for mode in transfer-commands offered not-offered host-blocking; do
    case $mode in
      transfer-commands) value=$(step_ms "$platform") ;;
      host-blocking) value=$(step_ms "$platform" --host-blocking) ;;
      *)
        if [ "$platform" = native ]; then
          value=-
        else
          least=0
          [ $mode = not-offered ] && least=off
          value=$(FERRY_TRANSFER_PEER_MIN=$least && export FERRY_TRANSFER_PEER_MIN && step_ms "$platform")
        fi ;;
    esac
    echo "$value" >>"$work/$platform"
  done
}
column native
column ferry
start_daemons
column ferry2
stop_daemons

echo "himeno_mpi, 2 ranks, grid $grid, median of $repeat runs of $steps steps (ms per step)"
printf '%-30s %10s %10s %12s\n' "exchange" "native" "ferry" "ferry 2 srv"
row=1
for mode in transfer-commands "transfer-commands, offered" "transfer-commands, not offered" host-blocking; do
  printf '%-30s %10s %10s %12s\n' "$mode" "$(sed -n "${row}p" "$work/native")" "$(sed -n "${row}p" "$work/ferry")" \
    "$(sed -n "${row}p" "$work/ferry2")"
  row=$((row + 1))
done
