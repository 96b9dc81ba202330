#!/usr/bin/env bash
# How much traffic this machine forwards through an emulated cluster at once
# (docs/validation.md, "The emulating machine's forwarding limit").
#
#   sudo scripts/emu-forwarding.sh [PLATFORM] [SET...]
#
# PLATFORM is a platform file (default scripts/tune-proof/star-2x4-cyclic.yaml);
# each SET is a comma-separated list of SRC:DST host pairs that run one
# iperf3 flow each, all at the same time, for DURATION seconds (5). Default sets on
# the 2 x 4 clusters: one flow inside a switch, two in different switches,
# four on four disjoint host links, one across the trunk. Prints, per set
# and round (ROUNDS, 2), each flow's received rate and their sum, in Mbit/s.
# Every kernel-forwarded packet costs the emulating machine CPU, so once
# the sum stops growing with the flows, the emulated network is slower than
# its platform file says. The cluster is removed on exit, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
fail() { echo "emu-forwarding: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (network namespaces)"
for c in iperf3 jq; do command -v $c >/dev/null || fail "$c not found (apt-get install $c)"; done

PLATFORM=${1:-scripts/tune-proof/star-2x4-cyclic.yaml}
[ $# -gt 0 ] && shift
SETS=("$@")
[ ${#SETS[@]} -gt 0 ] || SETS=("a0:a1" "a0:a1,b0:b1" "a0:a1,a2:a3,b0:b1,b2:b3" "a0:b0")
PREFIX=${PREFIX:-fw}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-2}
WORK=$(mktemp -d /tmp/emu-forwarding.XXXXXX)

na=$WORK/netaware
go build -o "$na" ./cmd/netaware
trap '"$na" emu down "$PREFIX" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
"$na" emu down "$PREFIX" >/dev/null 2>&1 || true
"$na" emu up "$PLATFORM" --prefix "$PREFIX" >/dev/null
declare -A addr
while read -r host _ ip _; do addr[$host]=$ip; done < <("$na" emu status "$PREFIX" | awk 'NR > 2')

limit=$((DURATION + 20))s
for round in $(seq "$ROUNDS"); do
	for set in "${SETS[@]}"; do
		IFS=, read -ra pairs <<<"$set"
		for k in "${!pairs[@]}"; do
			dst=${pairs[$k]#*:}
			[ -n "${addr[$dst]:-}" ] || fail "no host $dst in $PLATFORM"
			"$na" emu run "$PREFIX" --host "$dst" --timeout "$limit" -- iperf3 -s -1 -p $((5201 + k)) >/dev/null 2>&1 &
		done
		sleep 1
		clients=()
		for k in "${!pairs[@]}"; do
			src=${pairs[$k]%:*} dst=${pairs[$k]#*:}
			"$na" emu run "$PREFIX" --host "$src" --timeout "$limit" -- \
				iperf3 -c "${addr[$dst]}" -p $((5201 + k)) -t "$DURATION" -J >"$WORK/flow.$k" 2>/dev/null &
			clients+=($!)
		done
		wait "${clients[@]}" || true
		wait
		rates=() sum=0
		for k in "${!pairs[@]}"; do
			r=$(jq '.end.sum_received.bits_per_second / 1e6 | floor' "$WORK/flow.$k" 2>/dev/null || echo 0)
			rates+=("$r")
			sum=$((sum + r))
		done
		printf 'round %d  %-28s flows %-20s sum %d Mbit/s\n' "$round" "$set" "${rates[*]}" "$sum"
	done
done
