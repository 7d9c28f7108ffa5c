#!/usr/bin/env bash
# A client whose address changes mid-run. ferryd runs in one network namespace, the probe
# (roaming_probe) in another, joined by a veth pair. When the probe reaches a third of
# its rounds the script gives the client's interface a new address and takes the old one
# away, which leaves its TCP connections half-open: libferry must notice through its link
# timeout (FERRY_LINK_TIMEOUT_MS), reconnect from the new address and resume its session.
# The test passes when the probe's result is right with every message run exactly once,
# and the daemon log shows the session opened from the old address resumed from the new
# one (no second session opened).
#
#   tests/netns/roaming.sh BUILD_DIR
#
# Exits 77 (CTest: skipped) with the reason when namespaces cannot be made here (not
# root, no iproute2, no permission).
#
#     ns C: probe 10.203.0.2 -> 10.203.0.3  ---- 10.203.0.0/24 ----  ns S: ferryd 10.203.0.1
set -uo pipefail

build="${1:-}"
if [[ "$build" == "-h" || "$build" == "--help" ]]; then
  sed -n '2,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
  exit 0
fi
[[ -n "$build" && -x "$build/bin/ferryd" ]] || { echo "usage: roaming.sh BUILD_DIR (with bin/ferryd)" >&2; exit 2; }
probe="$build/bin/ferry_netns_roaming_probe"
[[ -x "$probe" ]] || { echo "roaming.sh: no $probe" >&2; exit 2; }

skip() { echo "SKIP: $*"; exit 77; }
[[ "$(id -u)" -eq 0 ]] || skip "creating network namespaces needs root"
command -v ip >/dev/null || skip "no 'ip' command (Debian package iproute2)"

tag=$$
ns_s="ferry-rs-$tag" ns_c="ferry-rc-$tag"
veth_s="frs$tag" veth_c="frc$tag"
work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  # Deleting either namespace takes the veth pair with it; the explicit delete covers a
  # run stopped between creating the pair and moving it.
  ip -n "$ns_s" link del "$veth_s" 2>/dev/null
  ip netns del "$ns_s" 2>/dev/null
  ip netns del "$ns_c" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

if ! err="$(ip netns add "$ns_s" 2>&1)"; then skip "cannot create a network namespace: $err"; fi
ip netns add "$ns_c" || skip "cannot create a second network namespace"

fail() { echo "FAIL: $*" >&2; exit 1; }
run() { "$@" || fail "command failed: $*"; }

run ip -n "$ns_s" link add "$veth_s" type veth peer name "$veth_c" netns "$ns_c"
run ip -n "$ns_s" addr add 10.203.0.1/24 dev "$veth_s"
run ip -n "$ns_c" addr add 10.203.0.2/24 dev "$veth_c"
# The new address is added before the old one goes, as a secondary of the same subnet;
# without promotion the kernel would delete it together with the primary.
run ip netns exec "$ns_c" sysctl -qw "net.ipv4.conf.$veth_c.promote_secondaries=1"
for ns in "$ns_s" "$ns_c"; do
  run ip -n "$ns" link set lo up
done
run ip -n "$ns_s" link set "$veth_s" up
run ip -n "$ns_c" link set "$veth_c" up

# The daemon keeps a lost session for 60 s, far longer than the link timeout, so the
# client's reconnection is within the grace period. (Started from this shell, not a
# subshell, so that cleanup knows its pid.)
port="" deadline=$((SECONDS + 30))
: >"$work/ferryd.out"
ip netns exec "$ns_s" env -u OCL_ICD_VENDORS -u OCL_ICD_FILENAMES "$build/bin/ferryd" --port 0 \
  --insecure-listen 10.203.0.1 --device-type cpu --session-grace 60 --log-level info \
  >"$work/ferryd.out" 2>"$work/ferryd.log" &
pids+=($!)
while [[ -z "$port" ]]; do
  if IFS= read -r line <"$work/ferryd.out" && [[ "$line" =~ ^READY\ ([0-9]+)$ ]]; then
    port="${BASH_REMATCH[1]}"
  elif [[ $SECONDS -ge $deadline ]]; then
    cat "$work/ferryd.log" >&2
    fail "ferryd printed no READY line"
  else
    sleep 0.1
  fi
done
echo "ferryd at 10.203.0.1:$port (namespace $ns_s); client at 10.203.0.2 (namespace $ns_c)"

# 400 rounds of ~10 ms: a few seconds, the address change after a third of them. The
# timeout is a hang guard only.
marker="$work/marker"
ip netns exec "$ns_c" env FERRY_SERVERS="10.203.0.1:$port" FERRY_LINK_TIMEOUT_MS=2000 FERRY_LOG=info \
  OCL_ICD_VENDORS="$build/etc/OpenCL/vendors/ferry.icd" OCL_ICD_FILENAMES="$build/lib/libferry.so" \
  timeout 90 "$probe" 400 "$marker" >"$work/probe.out" 2>"$work/probe.err" &
probe_pid=$!
pids+=($probe_pid)

show_logs() {
  echo "--- probe stdout" >&2; cat "$work/probe.out" >&2
  echo "--- probe stderr" >&2; cat "$work/probe.err" >&2
  echo "--- ferryd log" >&2; cat "$work/ferryd.log" >&2
}

deadline=$((SECONDS + 60))
until [[ -e "$marker" ]]; do
  if ! kill -0 "$probe_pid" 2>/dev/null; then
    show_logs
    fail "the probe ended before the address change"
  fi
  [[ $SECONDS -lt $deadline ]] || { show_logs; fail "the probe did not reach the address change in 60 s"; }
  sleep 0.05
done

# The roam: the new address first, then the old one goes. Connections from 10.203.0.2
# stay open on both ends but can carry nothing any more.
run ip -n "$ns_c" addr add 10.203.0.3/24 dev "$veth_c"
run ip -n "$ns_c" addr del 10.203.0.2/24 dev "$veth_c"
switched="$(date +%H:%M:%S.%N)"
addrs="$(ip -n "$ns_c" -4 -o addr show dev "$veth_c")"
[[ "$addrs" == *" 10.203.0.3/24 "* && "$addrs" != *" 10.203.0.2/"* ]] ||
  fail "the client's addresses after the change are not just 10.203.0.3: $addrs"
echo "at $switched (after $(grep -c '^ROUND' "$work/probe.out") progress lines): client address 10.203.0.2 -> 10.203.0.3"

wait "$probe_pid"
rc=$?
echo "--- probe"
cat "$work/probe.out"
grep -E 'net: (connection to|session with)' "$work/probe.err"
echo "--- ferryd"
grep -E 'session [^ ]+( opened by | resumed by |: )' "$work/ferryd.log"
[[ $rc -eq 0 ]] || { show_logs; fail "the probe exited with $rc"; }

# The daemon must have kept the one session the client opened from its first address and
# let it resume from the new one.
opened="$(grep -E 'session [^ ]+ opened by 10\.203\.0\.' "$work/ferryd.log")"
[[ "$(grep -c . <<<"$opened")" -eq 1 && "$opened" =~ session\ ([^ ]+)\ opened\ by\ 10\.203\.0\.2: ]] ||
  { show_logs; fail "expected one session opened, from 10.203.0.2; the daemon logged: ${opened:-none}"; }
session="${BASH_REMATCH[1]}"
resumed="$(grep -F "session $session resumed by 10.203.0.3:" "$work/ferryd.log")" ||
  { show_logs; fail "session $session was not resumed from 10.203.0.3"; }

# When the daemon noticed and when it resumed, from its log's timestamps (reported, not
# checked: the time depends on the link timeout and the reconnection backoff).
seconds() { awk -F: '{ printf "%.3f", $1 * 3600 + $2 * 60 + $3 }' <<<"$1"; }
resumed_at="$(head -n 1 <<<"$resumed" | cut -d' ' -f1)"
echo "PASS: session $session resumed by 10.203.0.3 at $resumed_at," \
  "$(awk -v a="$(seconds "$switched")" -v b="$(seconds "$resumed_at")" 'BEGIN { printf "%.1f", b - a }') s after the change"
