#!/usr/bin/env bash
# Runs pyopencl's own test suite twice, on the native platform (PoCL) and through
# Ferry, and compares the outcome of every test.
#
#   tests/conformance/pyopencl/run.sh [OPTIONS]
#
#   --build DIR       Ferry build tree with bin/ferryd (default: build/release)
#   --python PATH     Python with pyopencl and pytest (default: .venv/bin/python)
#   --full            run every test file of the suite (the default)
#   --files "A B"     run these test files (names inside pyopencl's test/ directory)
#   -k EXPR           passed to pytest, to select tests while debugging
#   --keep            keep the work directory (PoCL caches, ferryd output)
#   --concurrent      run the native and the Ferry run at the same time (on 2
#                     cores, where compiling is single-threaded, it saves little: each
#                     run mostly compiles; the two times then do not compare)
#   --quick           for CI: the suite through Ferry, then natively only the test
#                     functions with a test that did not pass through Ferry, which
#                     is what decides the result (every test that passes natively
#                     passes through Ferry, or its difference is expected) at about
#                     half the cost; the native outcome of what passed is not seen
#   --jobs N          run each run's tests in N processes (pytest-xdist; default 1);
#                     through Ferry each is a session of its own, and the sessions
#                     share ferryd's kernel cache: on 2 cores --jobs 2 nearly halves
#                     a run, which mostly compiles kernels, one at a time
#   -h, --help        print this help
#
# The suite comes from pyopencl's source distribution, of the version in
# tests/conformance/pyopencl/VERSION (the one scripts/setup installs), downloaded
# once into build/conformance/. Differences listed in expected-differences.txt do not
# fail the run. Logs, JUnit XML and summary.txt (key=value) go to build/conformance/.
#
# Exit status: 0 no unexpected difference, 1 unexpected differences (or ferryd
# died), 2 bad usage, 3 the runner itself failed (download, timeout, no JUnit XML).
# Environment: FERRY_CONFORMANCE_TIMEOUT=S limits each pytest run (default 900).
set -uo pipefail

# The whole suite runs by default: through Ferry with --jobs 2 it takes about 6 minutes
# on the 2-core CI machine (docs/conformance.md), and scripts/test adds --quick, which
# runs natively only what did not pass through Ferry. Set default_files to a subset
# here if that ever changes.
default_files=()

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
native_vendors=/etc/OpenCL/vendors
native_platform="Portable Computing Language"
ready_timeout=20
stop_timeout=20

say() { printf 'conformance: %s\n' "$*"; }
show_tail() {  # file [lines]: the end of a log, on stderr
  echo "--- the last lines of ${1#"$root"/}:" >&2
  tail -n "${2:-20}" "$1" >&2
  echo >&2
}
usage() { sed -n '2,34s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
absolute() { if [[ "$1" == /* ]]; then printf '%s\n' "$1"; else printf '%s\n' "$PWD/$1"; fi; }

build="$root/build/release"
python="$root/.venv/bin/python"
full=0 keep=0 concurrent=0 quick=0 jobs=1 files_option="" kexpr="" have_files=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --build | --python | --files | -k | --jobs)
      if [[ $# -lt 2 ]]; then
        echo "run.sh: $1 needs a value (try --help)" >&2; exit 2
      fi
      case "$1" in
        --build) build="$(absolute "$2")" ;;
        --python) python="$(absolute "$2")" ;;
        --files) files_option="$2" have_files=1 ;;
        -k) kexpr="$2" ;;
        --jobs)
          if ! [[ "$2" =~ ^[1-9][0-9]*$ ]]; then
            echo "run.sh: --jobs takes a number of processes (1 or more), not '$2'" >&2; exit 2
          fi
          jobs="$2" ;;
      esac
      shift 2 ;;
    --full) full=1; shift ;;
    --keep) keep=1; shift ;;
    --concurrent) concurrent=1; shift ;;
    --quick) quick=1; shift ;;
    *) echo "run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
if [[ $full -eq 1 && $have_files -eq 1 ]]; then
  echo "run.sh: --full and --files exclude each other" >&2; exit 2
fi
if [[ $concurrent -eq 1 && $quick -eq 1 ]]; then
  echo "run.sh: --concurrent and --quick exclude each other" >&2; exit 2
fi
timeout_s="${FERRY_CONFORMANCE_TIMEOUT:-900}"
if ! [[ "$timeout_s" =~ ^[1-9][0-9]*$ ]]; then
  echo "run.sh: FERRY_CONFORMANCE_TIMEOUT must be a number of seconds, not '$timeout_s'" >&2; exit 2
fi

version="$(tr -d '[:space:]' <"$here/VERSION")"
cache="$root/build/conformance"
summary="$cache/summary.txt"
mkdir -p "$cache"
rm -f "$summary" "$cache"/{native,ferry}.{log,xml} "$cache/ferryd.log"

work="" daemon_pid=""
cleanup() {
  if [[ -n "$daemon_pid" ]] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill -KILL "$daemon_pid" 2>/dev/null
    wait "$daemon_pid" 2>/dev/null
  fi
  if [[ -n "$work" && -d "$work" ]]; then
    [[ -f "$work/ferryd.log" ]] && cp -f "$work/ferryd.log" "$cache/ferryd.log"
    if [[ $keep -eq 1 ]]; then say "work directory kept: $work"; else rm -rf "$work"; fi
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The runner cannot produce a result: say why, record it in the summary, exit 3.
fail() {
  echo "conformance: ERROR: $*" >&2
  { echo "result=error"; echo "error=$*"; } >>"$summary"
  exit 3
}

# --- The pinned pyopencl, installed and as a source distribution.

[[ -x "$python" ]] || fail "no Python at $python (run scripts/setup)"
[[ -x "$build/bin/ferryd" ]] || fail "no $build/bin/ferryd (build it: scripts/setup release)"
[[ -f "$build/etc/OpenCL/vendors/ferry.icd" ]] || fail "no $build/etc/OpenCL/vendors/ferry.icd"

installed="$("$python" -c 'import importlib.metadata as m; print(m.version("pyopencl"))' 2>/dev/null)"
if [[ "$installed" != "$version" ]]; then
  fail "$python has pyopencl '${installed:-not installed}', the suite is pinned to $version (run scripts/setup)"
fi
"$python" -c 'import pytest' 2>/dev/null || fail "$python has no pytest (run scripts/setup)"
if [[ $jobs -gt 1 ]]; then
  "$python" -c 'import xdist' 2>/dev/null || fail "$python has no pytest-xdist, which --jobs needs (run scripts/setup)"
fi

sdist="$cache/pyopencl-$version.tar.gz"
if [[ ! -f "$sdist" ]]; then
  say "downloading the pyopencl $version source distribution"
  rm -rf "$cache/download"
  mkdir -p "$cache/download"
  if ! "$python" -m pip download --quiet --disable-pip-version-check --no-deps \
      --no-binary pyopencl --only-binary numpy,nanobind,scikit-build-core \
      "pyopencl==$version" -d "$cache/download" >"$cache/download.log" 2>&1; then
    cat "$cache/download.log" >&2
    fail "pip download pyopencl==$version failed (output above)"
  fi
  [[ -f "$cache/download/pyopencl-$version.tar.gz" ]] \
    || fail "pip download left no pyopencl-$version.tar.gz in $cache/download"
  mv "$cache/download/pyopencl-$version.tar.gz" "$sdist"
  rm -rf "$cache/download" "$cache/download.log"
fi

source_dir="$cache/pyopencl-$version"
testdir="$source_dir/test"
if [[ ! -f "$source_dir/.extracted" ]]; then
  rm -rf "$source_dir"
  # Only the tests and the project's pytest settings: the sdist's pyopencl/ package
  # must never shadow the installed one.
  tar -xzf "$sdist" -C "$cache" "pyopencl-$version/test" "pyopencl-$version/pyproject.toml" \
    || fail "cannot extract $sdist"
  touch "$source_dir/.extracted"
fi

if [[ $full -eq 1 || ($have_files -eq 0 && ${#default_files[@]} -eq 0) ]]; then
  files=()
  for f in "$testdir"/test_*.py; do files+=("$(basename "$f")"); done
elif [[ $have_files -eq 1 ]]; then
  read -r -a files <<<"$files_option"
else
  files=("${default_files[@]}")
fi
[[ ${#files[@]} -gt 0 ]] || { echo "run.sh: no test files selected" >&2; exit 2; }
for f in "${files[@]}"; do
  if [[ ! -f "$testdir/$f" ]]; then
    echo "run.sh: no test file '$f' in pyopencl's suite; it has: $(cd "$testdir" && echo test_*.py)" >&2
    exit 2
  fi
done

work="$(mktemp -d "$cache/work.XXXXXX")"

# --- One pytest run.

# Checks that `import pyopencl` from the test directory (cwd is on sys.path) is the
# installed one, and prints where it is and the platforms the loader shows.
preflight() {  # label platform-name-substring
  local out
  out="$(cd "$testdir" && env "${run_env[@]}" "$python" - "$2" 2>&1 <<'EOF'
import os, site, sys
want = sys.argv[1]
import pyopencl as cl
where = os.path.realpath(os.path.dirname(cl.__file__))
installed = [os.path.realpath(d) for d in site.getsitepackages() + [site.getusersitepackages()]]
if not any(where.startswith(d + os.sep) for d in installed):
    sys.exit(f"pyopencl imports from {where}, not from an installed site-packages")
names = [f"{p.name} ({len(p.get_devices())} devices)" for p in cl.get_platforms()]
print(f"pyopencl {cl.VERSION_TEXT} from {os.path.dirname(where)}; platforms: " + ", ".join(names))
if not any(want.lower() in (p.name + " " + p.vendor).lower() for p in cl.get_platforms()):
    sys.exit(f"no platform matches '{want}'")
EOF
)" || fail "$1: $out"
  say "$1: $out"
}

# Sets run_seconds. The environment of the run (loader, PYOPENCL_TEST, cache) is run_env;
# what it runs is targets (test files, or test functions: file::name), with --jobs N
# in N pytest-xdist workers that take the next test as they finish one.
run_pytest() {  # label
  local label="$1" xml="$work/$1.xml" log="$work/$1.log" start end rc
  local args=(-m pytest -p no:cacheprovider -q -rA --continue-on-collection-errors
              -c "$source_dir/pyproject.toml" --rootdir "$testdir" --junitxml "$xml")
  [[ -n "$kexpr" ]] && args+=(-k "$kexpr")
  [[ $jobs -gt 1 ]] && args+=(-n "$jobs" --dist worksteal)
  say "$label: pytest ${targets[*]} ($jobs processes, timeout ${timeout_s} s, log build/conformance/$label.log)"
  start=$EPOCHREALTIME
  (cd "$testdir" && env "${run_env[@]}" timeout --kill-after=30 "$timeout_s" "$python" "${args[@]}" "${targets[@]}") >"$log" 2>&1
  rc=$?
  end=$EPOCHREALTIME
  run_seconds="$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')"
  echo "$run_seconds" >"$work/$label.seconds"
  cp -f "$log" "$cache/$label.log"
  rm -f "$cache/$label.xml"
  [[ -f "$xml" ]] && cp -f "$xml" "$cache/$label.xml"
  case $rc in
    0 | 1) ;;
    124 | 137) show_tail "$log"; fail "$label: pytest timed out after $timeout_s s (FERRY_CONFORMANCE_TIMEOUT)" ;;
    2) say "$label: pytest was interrupted (exit 2)"; show_tail "$log" ;;
    5) show_tail "$log"; fail "$label: pytest collected no tests (exit 5)" ;;
    *)
      show_tail "$log"
      if [[ $rc -gt 128 ]]; then
        fail "$label: pytest was killed by signal $((rc - 128)) after $run_seconds s"
      fi
      fail "$label: pytest failed with exit $rc after $run_seconds s" ;;
  esac
  local tally
  tally="$("$python" "$here/compare.py" counts "$xml" "$log" 2>&1)" \
    || { show_tail "$log"; fail "$label: $tally"; }
  say "$label: $tally in $run_seconds s"
}

# Both runs see only their own platform and compile every kernel cold, so that their
# times compare: each gets a fresh PoCL cache (ferryd inherits the Ferry run's) and a
# fresh XDG_CACHE_HOME. The latter holds pyopencl's own binary cache, which pyopencl
# skips on PoCL (it relies on PoCL's) but uses on any other platform, Ferry included,
# and pytools' caches of generated code. run_env holds the variables of the current
# run; nothing else that steers the loader or pyopencl is inherited.
#
# PYOPENCL_NO_CACHE=1 in both runs: pyopencl picks its build path by platform name.
# On "Portable Computing Language" it builds from source; on any other platform it
# builds, then reads the program binaries back for its own cache, and PoCL compiles
# every kernel once more to produce them. That doubles the compile time of the
# Ferry run for a reason that is pyopencl's policy, not Ferry's (docs/conformance.md
# gives both figures). With the variable set, both runs take the same path.
unset OCL_ICD_FILENAMES OCL_ICD_VENDORS FERRY_SERVERS PYOPENCL_CTX PYOPENCL_TEST POCL_CACHE_DIR
mkdir -p "$work"/{native,ferry}/{pocl,xdg-cache}
# ferryd run by root runs its session workers as nobody, who must be able to write
# the Ferry run's kernel cache (else each session compiles into a cache of its own,
# and the sessions of --jobs would not share it).
if [[ $EUID -eq 0 ]] && id nobody >/dev/null 2>&1; then
  chmod a+x "$work" "$work/ferry" && chown nobody "$work/ferry/pocl" ||
    say "cannot give the Ferry run's kernel cache to nobody: each session compiles on its own"
fi

native_env=(OCL_ICD_VENDORS="$native_vendors" PYOPENCL_TEST=portable PYOPENCL_NO_CACHE=1
            POCL_CACHE_DIR="$work/native/pocl" XDG_CACHE_HOME="$work/native/xdg-cache")

# A ferryd of this build serving the native devices; sets port and daemon_pid.
start_daemon() {
  daemon_log="$work/ferryd.log"
  : >"$work/ferryd.out"
  OCL_ICD_VENDORS="$native_vendors" POCL_CACHE_DIR="$work/ferry/pocl" \
    XDG_CACHE_HOME="$work/ferry/xdg-cache" "$build/bin/ferryd" --port 0 --listen 127.0.0.1 --log-level warn \
    >"$work/ferryd.out" 2>"$daemon_log" &
  daemon_pid=$!
  port=""
  local deadline=$((SECONDS + ready_timeout)) line rc
  while [[ -z "$port" ]]; do
    line=""
    if IFS= read -r line <"$work/ferryd.out" && [[ "$line" =~ ^READY\ ([0-9]+)$ ]]; then
      port="${BASH_REMATCH[1]}"
    elif ! kill -0 "$daemon_pid" 2>/dev/null; then
      wait "$daemon_pid"
      rc=$?
      daemon_pid=""
      show_tail "$daemon_log"
      fail "ferryd exited with $rc before printing READY"
    elif [[ $SECONDS -ge $deadline ]]; then
      show_tail "$daemon_log"
      fail "ferryd printed no READY line within $ready_timeout s"
    else
      sleep 0.1
    fi
  done
  say "ferryd $build/bin/ferryd listening on 127.0.0.1:$port (pid $daemon_pid)"
  ferry_env=(OCL_ICD_VENDORS="$build/etc/OpenCL/vendors" PYOPENCL_TEST=ferry PYOPENCL_NO_CACHE=1
             FERRY_SERVERS="127.0.0.1:$port" POCL_CACHE_DIR="$work/ferry/pocl"
             XDG_CACHE_HOME="$work/ferry/xdg-cache")
}

targets=("${files[@]}")
subset_option=()
if [[ $quick -eq 1 ]]; then
  # --- b. through Ferry, then a. natively what did not pass.
  start_daemon
  run_env=("${ferry_env[@]}")
  preflight ferry Ferry
  run_pytest ferry
  not_passed="$("$python" "$here/compare.py" not-passed "$work/ferry.xml" "$work/ferry.log" 2>&1)" \
    || fail "ferry: $not_passed"
  mapfile -t targets < <(printf '%s' "$not_passed" | sed '/^$/d')
  subset_option=(--native-subset)
  if [[ ${#targets[@]} -eq 0 ]]; then
    say "native: nothing to run, every test passed through Ferry"
    echo 0 >"$work/native.seconds"
  else
    run_env=("${native_env[@]}")
    preflight native "$native_platform"
    run_pytest native
  fi
elif [[ $concurrent -eq 0 ]]; then
  # --- a. Native, then b. through Ferry (the daemon starts after the native run,
  # so it takes nothing from it).
  run_env=("${native_env[@]}")
  preflight native "$native_platform"
  run_pytest native
  start_daemon
  run_env=("${ferry_env[@]}")
  preflight ferry Ferry
  run_pytest ferry
else
  # --- a. and b. at the same time, each in a subshell of its own.
  start_daemon
  run_env=("${native_env[@]}")
  preflight native "$native_platform"
  run_env=("${ferry_env[@]}")
  preflight ferry Ferry
  (run_env=("${native_env[@]}"); run_pytest native) &
  native_job=$!
  (run_env=("${ferry_env[@]}"); run_pytest ferry) &
  ferry_job=$!
  wait "$native_job" || { wait "$ferry_job"; exit 3; }
  wait "$ferry_job" || exit 3
  say "the two runs were concurrent: their times do not compare"
fi
native_seconds="$(cat "$work/native.seconds")"
ferry_seconds="$(cat "$work/ferry.seconds")"

# Stop the daemon: it must still be running, and exit 0 on SIGTERM.
daemon_problem=""
if ! kill -0 "$daemon_pid" 2>/dev/null; then
  wait "$daemon_pid"
  daemon_problem="ferryd died during the Ferry run (exit $?)"
else
  kill -TERM "$daemon_pid"
  for ((i = 0; i < stop_timeout * 10; i++)); do
    kill -0 "$daemon_pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$daemon_pid" 2>/dev/null; then
    kill -KILL "$daemon_pid"
    wait "$daemon_pid" 2>/dev/null
    daemon_problem="ferryd ignored SIGTERM for $stop_timeout s"
  else
    wait "$daemon_pid"
    rc=$?
    [[ $rc -eq 0 ]] || daemon_problem="ferryd exited with $rc after SIGTERM"
  fi
fi
daemon_pid=""

# --- c. Compare.
echo
"$python" "$here/compare.py" compare \
  --native "$work/native.xml" --native-log "$work/native.log" --native-seconds "$native_seconds" \
  --ferry "$work/ferry.xml" --ferry-log "$work/ferry.log" --ferry-seconds "$ferry_seconds" \
  --expected "$here/expected-differences.txt" --summary "$summary" "${subset_option[@]}"
rc=$?
[[ $rc -eq 0 || $rc -eq 1 ]] || fail "comparing the runs failed (compare.py exit $rc)"

if [[ -n "$daemon_problem" ]]; then
  echo
  echo "conformance: $daemon_problem" >&2
  show_tail "$daemon_log" 30
  echo "ferryd=failed" >>"$summary"
  rc=1
else
  echo "ferryd=ok" >>"$summary"
fi

if [[ $rc -eq 0 ]]; then echo "result=pass" >>"$summary"; else echo "result=fail" >>"$summary"; fi
echo
if [[ $rc -eq 0 ]]; then
  say "PASS (every difference is expected)"
else
  say "FAIL (unexpected differences, or ferryd failed; see above)"
fi
exit "$rc"
