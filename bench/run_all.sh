#!/bin/sh
# Builds the release tree and runs every Ferry benchmark; extra arguments go to each
# benchmark (e.g. --repeats 10). Set FERRY_SKIP_BUILD=1 to use the tree as it is.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/release"

if [ "${FERRY_SKIP_BUILD:-0}" != 1 ]; then
  cmake --preset release -S "$root" >/dev/null
  cmake --build "$build" --target ferryd ferry_icd ferry_bench_noop ferry_bench_throughput ferry_bench_bandwidth
fi

export FERRY_BINARY_DIR="$build"
status=0
for bench in noop throughput bandwidth; do
  echo "== $bench"
  "$build/bin/ferry_bench_$bench" "$@" || status=1
done
exit $status
