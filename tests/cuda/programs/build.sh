#!/usr/bin/env bash
# Builds the CUDA test programs (issue 24) on a machine with Debian 12's GCC 12 offloading,
# for a GPU machine that has no such compiler: every program, plus the GCC runtime they load
# there (libgomp.so.1 and its NVPTX plugin, libgomp-plugin-nvptx.so.1) copied into OUT/lib.
#
# The OpenACC and OpenMP programs are built with GCC 12's NVPTX offloading (the device code
# is PTX for sm_80, which the driver compiles for newer GPUs); libgomp's NVPTX plugin runs it
# through libcuda.so.1: NVIDIA's natively, Ferry's through `ferry run --cuda`.
# cuda_driver_basic calls the driver API itself (dlopen), built against CUDA's cuda.h.
#
# On the GPU machine: LD_LIBRARY_PATH=OUT/lib OUT/acc_saxpy (bench/gpu/cuda.sh does this for
# every program, natively and through Ferry).
set -euo pipefail

usage() {
  cat <<'EOF'
usage: tests/cuda/programs/build.sh [options] [OUT]
Builds the CUDA test programs into OUT (default: build/cuda-programs in the source tree)
and copies the GCC runtime they need on the GPU machine into OUT/lib.

options:
  --host-check   then run each OpenACC/OpenMP program here on small sizes with
                 FERRY_ALLOW_HOST_FALLBACK=1 (no GPU needed): proves their checks, not a GPU
  --help         this text

environment:
  FERRY_OFFLOAD_CC     the offloading compiler (default: gcc-12)
  CC                   the compiler for cuda_driver_basic (default: gcc, else the above)
  FERRY_CUDA_INCLUDE   the directory with CUDA's cuda.h (default: $CUDA_HOME/include,
                       /usr/local/cuda/include or /usr/include, the first that has it)
  FERRY_TARGET_GLIBC   the GPU machine's glibc; the build fails when the programs or the
                       copied libraries need a newer one (default: 2.39, Ubuntu 24.04)
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=""
host_check=0
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --host-check) host_check=1 ;;
    -*) echo "build.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "build.sh: one output directory only ('$out', then '$1')" >&2; exit 2; }; out=$1 ;;
  esac
  shift
done
out=${out:-$root/build/cuda-programs}
offload_cc=${FERRY_OFFLOAD_CC:-gcc-12}
target_glibc=${FERRY_TARGET_GLIBC:-2.39}

fail() { echo "build.sh: $*" >&2; exit 1; }

# --- the compilers ----------------------------------------------------------------------
command -v "$offload_cc" >/dev/null ||
  fail "$offload_cc is not installed (Debian 12: apt-get install gcc-12 gcc-12-offload-nvptx)"
# GCC finds its offload compiler through mkoffload under its own library directory; without
# it, -foffload=nvptx-none stops with "could not find accel/nvptx-none/mkoffload".
mkoffload=$("$offload_cc" -print-file-name=accel/nvptx-none/mkoffload)
[ -x "$mkoffload" ] ||
  fail "$offload_cc has no NVPTX offload compiler (accel/nvptx-none/mkoffload): install Debian's \
gcc-12-offload-nvptx (apt-get install gcc-12-offload-nvptx; it brings nvptx-tools and libgomp-plugin-nvptx1)"
# The runtime copied for the GPU machine: the files themselves, not the links to them.
libgomp=$(readlink -f "$("$offload_cc" -print-file-name=libgomp.so.1)")
plugin=$(readlink -f "$("$offload_cc" -print-file-name=libgomp-plugin-nvptx.so.1)")
[ -f "$libgomp" ] || fail "$offload_cc's libgomp.so.1 was not found (Debian: apt-get install libgomp1)"
[ -f "$plugin" ] ||
  fail "libgomp's NVPTX plugin libgomp-plugin-nvptx.so.1 was not found (Debian: apt-get install libgomp-plugin-nvptx1)"

plain_cc=${CC:-}
if [ -z "$plain_cc" ]; then
  if command -v gcc >/dev/null; then plain_cc=gcc; else plain_cc=$offload_cc; fi
fi
cuda_include=${FERRY_CUDA_INCLUDE:-}
if [ -z "$cuda_include" ]; then
  for dir in ${CUDA_HOME:+"$CUDA_HOME/include"} /usr/local/cuda/include /usr/include; do
    [ -e "$dir/cuda.h" ] && { cuda_include=$dir; break; }
  done
fi
if [ -z "$cuda_include" ] || [ ! -e "$cuda_include/cuda.h" ]; then
  fail "CUDA's cuda.h was not found (set FERRY_CUDA_INCLUDE to its directory; Debian's nvidia-cuda-dev \
or NVIDIA's CUDA toolkit install it)"
fi

# --- build ------------------------------------------------------------------------------
# -misa=sm_80: PTX for Ampere and newer. The device side links libm (fmaxf, sqrtf) and
# libatomic: GCC 12 combines two or more OpenMP reductions on one construct with a 16-byte
# compare-and-swap that NVPTX has only through libatomic. -no-pie: GCC 12's offload table
# (crtoffloadtable.o) is not position-independent and would make a PIE with text
# relocations.
common=(-O2 -Wall -Wextra -foffload=nvptx-none "-foffload-options=nvptx-none=-misa=sm_80 -lm -latomic"
        -fcf-protection=none -fno-stack-protector -no-pie)
openacc=(-fopenacc "${common[@]}")
openmp=(-fopenmp "${common[@]}")

mkdir -p "$out/lib"
out=$(cd "$out" && pwd)
programs=()
build() {
  local name=$1
  shift
  echo "build.sh: $name" >&2
  "$@" -o "$out/$name" || fail "building $name failed (command: $*)"
  programs+=("$name")
}
for src in "$here"/acc_*.c; do
  build "$(basename "$src" .c)" "$offload_cc" "${openacc[@]}" "$src" -lm
done
for src in "$here"/omp_*.c; do
  build "$(basename "$src" .c)" "$offload_cc" "${openmp[@]}" "$src" -lm
done
build cuda_driver_basic "$plain_cc" -O2 -Wall -Wextra -I"$cuda_include" "$here/cuda_driver_basic.c" -ldl

cp -f "$libgomp" "$out/lib/libgomp.so.1"
cp -f "$plugin" "$out/lib/libgomp-plugin-nvptx.so.1"

# --- what the GPU machine must have -----------------------------------------------------
# Libraries named by the programs and the copied runtime, less those copied; and the newest
# glibc symbol version any of them needs.
files=()
for p in "${programs[@]}"; do files+=("$out/$p"); done
files+=("$out/lib/libgomp.so.1" "$out/lib/libgomp-plugin-nvptx.so.1")
needed=$(for f in "${files[@]}"; do readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; done |
         grep -v -x -e libgomp.so.1 -e libgomp-plugin-nvptx.so.1 | sort -u | paste -sd' ')
glibc=$(for f in "${files[@]}"; do objdump -T "$f"; done | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' |
        sort -uV | tail -n 1)
if [ -n "$glibc" ] && [ "$(printf '%s\n%s\n' "$glibc" "$target_glibc" | sort -V | tail -n 1)" != "$target_glibc" ]; then
  fail "the programs need glibc $glibc, newer than the GPU machine's $target_glibc (FERRY_TARGET_GLIBC)"
fi
# Anything beyond glibc's own libraries would have to be on the GPU machine too.
others=$(tr ' ' '\n' <<<"$needed" | grep -v -E '^(libc|libm|libdl|libpthread|librt)\.so\.[0-9]+$|^ld-linux' |
         paste -sd' ' || true)
[ -z "$others" ] || echo "build.sh: note: the programs also need $others from the GPU machine" >&2

{
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -sr)"
  echo "source: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet -- tests/cuda/programs 2>/dev/null || echo ' (modified)')"
  echo "offload compiler: $("$offload_cc" --version | sed -n 1p)"
  echo "openacc flags: ${openacc[*]}"
  echo "openmp flags: ${openmp[*]}"
  echo "cuda_driver_basic: $("$plain_cc" --version | sed -n 1p), cuda.h from $cuda_include"
  echo "lib/libgomp.so.1: $libgomp"
  echo "lib/libgomp-plugin-nvptx.so.1: $plugin"
  echo "needs from the system: $needed (glibc $glibc or newer)"
  echo "programs: ${programs[*]}"
} >"$out/BUILD-INFO"
echo "build.sh: ${#programs[@]} programs in $out (runtime in $out/lib; needs $needed, glibc >= $glibc)" >&2

# --- optional: the checks themselves, on the host ---------------------------------------
if [ "$host_check" = 1 ]; then
  status=0
  for p in "${programs[@]}"; do
    args=()
    case "$p" in
      cuda_driver_basic) echo "build.sh: host check: $p skipped (it needs a libcuda.so.1)" >&2; continue ;;
      *_jacobi) args=(256 30) ;;
      *_saxpy|*_reduction) args=(1000003) ;;
      *_data|*_async) args=(100003) ;;
      omp_teams) args=(128) ;;
    esac
    if line=$(env -u GOMP_DEBUG FERRY_ALLOW_HOST_FALLBACK=1 LD_LIBRARY_PATH="$out/lib" "$out/$p" "${args[@]}" \
              2>"$out/$p.host-check.err" | tail -n 1); then
      echo "build.sh: host check: $line" >&2
    else
      echo "build.sh: host check: $p FAILED: $(cat "$out/$p.host-check.err")" >&2
      status=1
    fi
    rm -f "$out/$p.host-check.err"
  done
  [ "$status" = 0 ] || fail "a host check failed"
fi
