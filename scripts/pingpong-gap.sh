#!/usr/bin/env bash
# The 1 MiB two-process ping-pong against raw Go TCP (docs/benchmarks.md,
# issue 16): 'netaware bench pingpong' over loopback TCP (NETAWARE_SHM=0,
# so that both sides are TCP), whose ratio netaware/raw is already the
# median of alternating rounds within one run; RUNS runs, and the median
# over runs. With two binaries, they alternate run by run (A B A B ...).
#
#   scripts/pingpong-gap.sh                  # the current tree, 9 runs
#   RUNS=15 scripts/pingpong-gap.sh old/netaware new/netaware
#
# Environment: RUNS (default 9), SIZE (1MiB), ITERS (60000: 58 ping-pongs
# of 1 MiB per round), ROUNDS (7).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-9}
SIZE=${SIZE:-1MiB}
ITERS=${ITERS:-60000}
ROUNDS=${ROUNDS:-7}
bins=("$@")
if [ ${#bins[@]} = 0 ]; then
	WORK=$(mktemp -d /tmp/pingpong-gap.XXXXXX)
	go build -o "$WORK/netaware" ./cmd/netaware
	bins=("$WORK/netaware")
fi
echo "load before: $(uptime)"
out=$(mktemp)
for r in $(seq 1 "$RUNS"); do
	for b in "${bins[@]}"; do
		NETAWARE_SHM=0 timeout 300 "$b" launch -n 2 -- "$b" bench pingpong --sizes "$SIZE" --iters "$ITERS" \
			--rounds "$ROUNDS" --stream-count 20 --json |
			python3 -c 'import json,sys; l=json.load(sys.stdin)["pingpong"][0]
print(sys.argv[1], l["latency_ratio"], l["netaware_half_rtt_s"], l["raw_tcp_half_rtt_s"])' "$b" >>"$out"
	done
done
echo "load after: $(uptime)"
python3 - "$out" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    b, ratio, na, raw = line.split()
    runs.setdefault(b, []).append((float(ratio), float(na), float(raw)))
for b, v in runs.items():
    rs = sorted(x[0] for x in v)
    print(f"{b}: {len(v)} runs, ratio netaware/raw median {statistics.median(rs):.3f} "
          f"(runs {rs[0]:.2f}-{rs[-1]:.2f}), netaware {statistics.median(x[1] for x in v)*1e6:.1f} µs, "
          f"raw {statistics.median(x[2] for x in v)*1e6:.1f} µs")
PY
rm -f "$out"
