#!/bin/sh
# Runs examples/himeno_mpi on 1 and 2 ranks, with transfer commands and host-blocking,
# and checks that all four print the same checksum and hash: every cell is computed by the
# same expression whatever the decomposition, so they must agree bit for bit. A run with
# fewer steps must differ (the steps did something). Run under ferry_mpi_launch, which
# chooses the platform; usage: himeno_compare.sh HIMENO MPIEXEC [MPIEXEC_ARGS...] NUMPROC_FLAG
set -eu
if [ "${1:-}" = "--help" ] || [ $# -lt 3 ]; then
  echo "usage: himeno_compare.sh HIMENO MPIEXEC [MPIEXEC_ARGS...] NUMPROC_FLAG" >&2
  [ "${1:-}" = "--help" ] && exit 0 || exit 2
fi
himeno=$1
shift
grid="--grid 24 20 30"
checksum() {  # ranks steps [--host-blocking]
  ranks=$1 steps=$2
  shift 2
  out=$("$@" "$ranks" "$himeno" $grid --steps "$steps" $extra) || { echo "FAIL: himeno_mpi on $ranks rank(s) $extra" >&2; exit 1; }
  printf '%s\n' "$out" >&2
  printf '%s\n' "$out" | sed -n 's/^checksum //p'
}
extra=""
reference=$(checksum 1 12 "$@")
[ -n "$reference" ] || { echo "FAIL: no checksum line" >&2; exit 1; }
for extra in "" "--host-blocking"; do
  for ranks in 1 2; do
    got=$(checksum $ranks 12 "$@")
    if [ "$got" != "$reference" ]; then
      echo "FAIL: $ranks rank(s) ${extra:-with transfer commands}: '$got', 1 rank: '$reference'" >&2
      exit 1
    fi
  done
done
extra=""
fewer=$(checksum 1 6 "$@")
if [ "$fewer" = "$reference" ]; then
  echo "FAIL: 6 steps give the checksum of 12: the steps change nothing" >&2
  exit 1
fi
echo "ok himeno: 1 and 2 ranks, both variants: $reference"
