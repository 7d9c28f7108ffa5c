#!/usr/bin/env bash
# Two ferryd in network namespaces of their own, each reachable by the client on a network
# of its own and by the other daemon only on a third, private one (the "fast private
# network" of a cluster). The daemons advertise their private addresses with
# --peer-address; the probe (peer_network_probe) makes one migrate a buffer to the other
# and reads the link counters. The test passes when the kernel's result is right, the
# peer link was dialled at the private address and carried the buffer, and the client's
# link to the destination carried none of it.
#
#   tests/netns/peer_network.sh BUILD_DIR
#
# Exits 77 (CTest: skipped) with the reason when namespaces cannot be made here (not
# root, no iproute2, no permission).
#
#     client (root namespace)
#       | 10.201.1.0/24          | 10.201.2.0/24
#     ns A: ferryd A  ---- 10.202.0.0/24 ----  ns B: ferryd B
set -uo pipefail

build="${1:-}"
if [[ "$build" == "-h" || "$build" == "--help" ]]; then
  sed -n '2,17s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
  exit 0
fi
[[ -n "$build" && -x "$build/bin/ferryd" ]] || { echo "usage: peer_network.sh BUILD_DIR (with bin/ferryd)" >&2; exit 2; }
probe="$build/bin/ferry_netns_probe"
[[ -x "$probe" ]] || { echo "peer_network.sh: no $probe" >&2; exit 2; }

skip() { echo "SKIP: $*"; exit 77; }
[[ "$(id -u)" -eq 0 ]] || skip "creating network namespaces needs root"
command -v ip >/dev/null || skip "no 'ip' command (Debian package iproute2)"

tag=$$
ns_a="ferry-a-$tag" ns_b="ferry-b-$tag"
work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  ip link del "fca$tag" 2>/dev/null
  ip link del "fcb$tag" 2>/dev/null
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

if ! err="$(ip netns add "$ns_a" 2>&1)"; then skip "cannot create a network namespace: $err"; fi
ip netns add "$ns_b" || skip "cannot create a second network namespace"

fail() { echo "FAIL: $*" >&2; exit 1; }
run() { "$@" || fail "command failed: $*"; }

# Client networks: a veth pair from the root namespace into each daemon's namespace,
# the root side .1 and the daemon side .2 of 10.201.N.0/24.
client_network() {  # veth-name namespace N
  local veth="$1" ns="$2" n="$3"
  run ip link add "$veth" type veth peer name "$veth-n"
  run ip link set "$veth-n" netns "$ns"
  run ip addr add "10.201.$n.1/24" dev "$veth"
  run ip link set "$veth" up
  run ip -n "$ns" addr add "10.201.$n.2/24" dev "$veth-n"
  run ip -n "$ns" link set "$veth-n" up
}
client_network "fca$tag" "$ns_a" 1
client_network "fcb$tag" "$ns_b" 2
# The private peer network joins the two namespaces only.
run ip -n "$ns_a" link add "fpa$tag" type veth peer name "fpb$tag" netns "$ns_b"
run ip -n "$ns_a" addr add 10.202.0.1/24 dev "fpa$tag"
run ip -n "$ns_b" addr add 10.202.0.2/24 dev "fpb$tag"
for ns in "$ns_a" "$ns_b"; do
  run ip -n "$ns" link set lo up
done
run ip -n "$ns_a" link set "fpa$tag" up
run ip -n "$ns_b" link set "fpb$tag" up

# One daemon per namespace, listening on all of its addresses, advertising the private one.
# (Started from this shell, not a subshell, so that cleanup knows their pids.)
start_daemon() {  # namespace peer-address label; sets port
  local ns="$1" peer="$2" label="$3" out="$work/$3.out" line deadline=$((SECONDS + 30))
  port=""
  : >"$out"
  ip netns exec "$ns" env -u OCL_ICD_VENDORS -u OCL_ICD_FILENAMES "$build/bin/ferryd" --port 0 \
    --insecure-listen 0.0.0.0 --peer-address "$peer" --device-type cpu --log-level warn >"$out" 2>"$work/$label.log" &
  pids+=($!)
  while [[ -z "$port" ]]; do
    if IFS= read -r line <"$out" && [[ "$line" =~ ^READY\ ([0-9]+)$ ]]; then
      port="${BASH_REMATCH[1]}"
    elif [[ $SECONDS -ge $deadline ]]; then
      cat "$work/$label.log" >&2
      fail "ferryd $label printed no READY line"
    else
      sleep 0.1
    fi
  done
}
start_daemon "$ns_a" 10.202.0.1 a
port_a="$port"
start_daemon "$ns_b" 10.202.0.2 b
port_b="$port"
echo "ferryd A at 10.201.1.2:$port_a (peers: 10.202.0.1), ferryd B at 10.201.2.2:$port_b (peers: 10.202.0.2)"

# The root namespace has no route to the peer network: only the daemons can use it.
if ip route get 10.202.0.2 2>/dev/null | grep -q "fc[ab]$tag"; then fail "the client can reach the peer network"; fi

out="$(FERRY_SERVERS="10.201.1.2:$port_a,10.201.2.2:$port_b" OCL_ICD_VENDORS="$build/etc/OpenCL/vendors/ferry.icd" \
       OCL_ICD_FILENAMES="$build/lib/libferry.so" timeout 120 "$probe")"
rc=$?
echo "$out"
if [[ $rc -ne 0 ]]; then
  cat "$work/a.log" "$work/b.log" >&2
  fail "the probe exited with $rc"
fi
[[ "$out" =~ peer_out_remote=([^ ]*)\ peer_out_bytes=([0-9]+)\ client_bulk_in_second=([0-9]+) ]] ||
  fail "unexpected probe output"
remote="${BASH_REMATCH[1]}" peer_bytes="${BASH_REMATCH[2]}" client_bulk="${BASH_REMATCH[3]}"
[[ "$remote" == "10.202.0.2:$port_b" ]] || fail "daemon A dialled $remote, not B's private address 10.202.0.2:$port_b"
[[ "$peer_bytes" -ge $((4 << 20)) ]] || fail "the peer link carried $peer_bytes bytes, less than the 4 MiB buffer"
[[ "$client_bulk" -lt $((64 << 10)) ]] || fail "the client's link to B carried $client_bulk bulk bytes"
echo "PASS: the buffer crossed the private network ($peer_bytes bytes to $remote); the client link carried $client_bulk bulk bytes"
