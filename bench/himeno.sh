#!/bin/sh
# Himeno step time (issue 23): examples/himeno_mpi on 2 ranks, halo exchanges as transfer
# commands (events only, the clDataTransfer paper's Listing 4) against host-blocking
# exchanges (Listing 2), natively (PoCL) and through Ferry (`ferry run`: one local ferryd
# on 127.0.0.1 that both ranks share). Prints each median step time, native beside Ferry
# from the same run.
set -eu
usage() {
  cat <<USAGE
Usage: bench/himeno.sh [--bin-dir DIR] [--grid NX NY NZ] [--steps S] [--repeat R]

  --bin-dir DIR     build tree with bin/himeno_mpi and bin/ferry (default build/release)
  --grid NX NY NZ   grid (default 96 96 96: a few ms per step on a 2-core VM)
  --steps S         steps per timed run (default 20)
  --repeat R        timed runs; the median step is printed (default 7)
  --help            this text

MPIEXEC (default mpiexec) starts the ranks; as root Open MPI needs
--allow-run-as-root, which is added, with --oversubscribe, for Open MPI.
USAGE
}
bin_dir=build/release grid="96 96 96" steps=20 repeat=7
while [ $# -gt 0 ]; do
  case $1 in
    --help) usage; exit 0 ;;
    --bin-dir) [ $# -ge 2 ] || { echo "himeno.sh: --bin-dir needs a value" >&2; exit 2; }; bin_dir=$2; shift 2 ;;
    --grid) [ $# -ge 4 ] || { echo "himeno.sh: --grid needs three sizes" >&2; exit 2; }; grid="$2 $3 $4"; shift 4 ;;
    --steps) [ $# -ge 2 ] || { echo "himeno.sh: --steps needs a value" >&2; exit 2; }; steps=$2; shift 2 ;;
    --repeat) [ $# -ge 2 ] || { echo "himeno.sh: --repeat needs a value" >&2; exit 2; }; repeat=$2; shift 2 ;;
    *) echo "himeno.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
himeno=$bin_dir/bin/himeno_mpi ferry=$bin_dir/bin/ferry
for f in "$himeno" "$ferry"; do
  [ -x "$f" ] || { echo "himeno.sh: $f not found (build with MPI, see docs/transfer.md)" >&2; exit 1; }
done
mpiexec=${MPIEXEC:-mpiexec}
# mpiexec's hwloc would list OpenCL devices, through Ferry a session of its own.
export HWLOC_COMPONENTS=-opencl
flags=""
if "$mpiexec" --version 2>/dev/null | grep -q -e "Open MPI" -e OpenRTE; then flags="--oversubscribe --allow-run-as-root"; fi

step_ms() {  # platform [--host-blocking]
  platform=$1
  shift
  # shellcheck disable=SC2086
  if [ "$platform" = ferry ]; then
    out=$("$ferry" run -- "$mpiexec" $flags -n 2 "$himeno" --grid $grid --steps "$steps" --repeat "$repeat" "$@")
  else
    out=$("$mpiexec" $flags -n 2 "$himeno" --grid $grid --steps "$steps" --repeat "$repeat" "$@")
  fi
  printf '%s\n' "$out" | sed -n 's/^step_ms \([0-9.]*\).*/\1/p'
}
echo "himeno_mpi, 2 ranks, grid $grid, median of $repeat runs of $steps steps (ms per step)"
printf '%-20s %10s %10s\n' "exchange" "native" "ferry"
for mode in transfer-commands host-blocking; do
  arg=""
  [ $mode = host-blocking ] && arg=--host-blocking
  native=$(step_ms native $arg)
  through=$(step_ms ferry $arg)
  printf '%-20s %10s %10s\n' "$mode" "$native" "$through"
done
