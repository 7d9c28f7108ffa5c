#!/bin/sh
# Builds the release tree and runs every Ferry benchmark; extra arguments go to each
# benchmark (e.g. --repeats 10, --only native). Set FERRY_SKIP_BUILD=1 to use the tree
# as it is. migrate, migrate_bandwidth, matmul_split and stencil start two or three ferryd.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/release"
benches="noop throughput bandwidth write_burst host_ptr migrate migrate_bandwidth matmul_split sgemm stencil reconnect"

if [ "${FERRY_SKIP_BUILD:-0}" != 1 ]; then
  cmake --preset release -S "$root" >/dev/null
  targets=""
  for bench in $benches; do targets="$targets ferry_bench_$bench"; done
  # shellcheck disable=SC2086 # one target per word
  cmake --build "$build" --target ferryd ferry_icd $targets
fi

export FERRY_BINARY_DIR="$build"
status=0
for bench in $benches; do
  echo "== $bench"
  "$build/bin/ferry_bench_$bench" "$@" || status=1
done
exit $status
