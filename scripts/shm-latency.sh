#!/usr/bin/env bash
# 1-byte latency between two ranks of this machine, side by side
# (docs/benchmarks.md, issue 16): netaware over shared memory and Open
# MPI's vader (yielding when idle), with the ranks placed as asked, in
# alternating order round after round; then the medians of each and of the
# per-round ratios netaware/vader. With binaries as arguments (an older
# build first, say), each of them runs in every round.
#
#   scripts/shm-latency.sh                         # the current tree, PLACE=none
#   PLACE=sep scripts/shm-latency.sh               # each rank on its own core
#   PLACE=same scripts/shm-latency.sh old/netaware new/netaware
#
# PLACE: none (neither side pinned: mpirun --bind-to none), sep (rank r on
# core r: taskset for netaware, --bind-to core for mpirun), same (both
# ranks on core 1). Environment: ROUNDS (default 9), ITERS (ping-pongs per
# measurement, default 10000 as OSU's osu_latency for small messages: the
# first milliseconds after start-up, while unpinned ranks may still share
# a core, weigh on 1000; netaware takes the median of 3 such rounds, as
# scripts/shm-bench.sh does), WORK (build directory, default a new
# temporary one). Needs Go, mpicc and Open MPI's mpirun.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-9}
PLACE=${PLACE:-none}
ITERS=${ITERS:-10000}
WORK=${WORK:-$(mktemp -d /tmp/shm-latency.XXXXXX)}
mpicc -O2 -o "$WORK/pingpong" tools/mpibench/pingpong.c
BINS=("$@")
if [ ${#BINS[@]} = 0 ]; then
	go build -o "$WORK/netaware" ./cmd/netaware
	BINS=("$WORK/netaware")
fi
ROOT=()
[ "$(id -u)" = 0 ] && ROOT=(--allow-run-as-root)
case $PLACE in
none) PIN='' MPI=(--bind-to none) ;;
sep) PIN='taskset -c $NETAWARE_RANK' MPI=(--bind-to core) ;;
same) PIN='taskset -c 1' MPI=(--bind-to none taskset -c 1) ;;
*) echo "PLACE=$PLACE: want none, sep or same" >&2; exit 2 ;;
esac
na() { # $1: binary; prints the half round trip in µs
	NETAWARE_SHM=1 timeout 120 "$1" launch -n 2 -- sh -c "exec $PIN \"\$0\" \"\$@\"" \
		"$1" bench pingpong --no-raw --json --sizes 1 --iters "$ITERS" --rounds 3 --stream-count 1 |
		python3 -c 'import json,sys; print("%.4f" % (json.load(sys.stdin)["pingpong"][0]["netaware_half_rtt_s"]*1e6))'
}
vader() {
	timeout 120 mpirun "${ROOT[@]}" -n 2 --mca btl self,vader --mca mpi_yield_when_idle 1 "${MPI[@]}" \
		"$WORK/pingpong" 1 "$ITERS" 1048576 1 | awk '/^size/ {printf "%.4f\n", $6*1e6}'
}
echo "PLACE=$PLACE GOMAXPROCS=${GOMAXPROCS:-(unset)} load before: $(uptime)"
: >"$WORK/latency"
for r in $(seq 1 "$ROUNDS"); do
	order=(vader "${!BINS[@]}")
	[ $((r % 2)) = 1 ] && order=("${!BINS[@]}" vader)
	for w in "${order[@]}"; do
		if [ "$w" = vader ]; then v=$(vader); else v=$(na "${BINS[$w]}"); w=${BINS[$w]}; fi
		[ -n "$v" ] || { echo "round $r: $w produced no figure" >&2; exit 1; }
		echo "$r $w $v" >>"$WORK/latency"
	done
done
echo "load after: $(uptime)"
python3 - "$WORK/latency" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    r, w, v = line.split()
    runs.setdefault(w, {})[r] = float(v)
vader = runs.pop("vader")
print(f"{len(vader)} rounds; ratio = median of the per-round netaware/vader")
print("| contender | 1 B half round trip µs (median) | rounds | ratio |")
print("|---|---:|---|---:|")
print(f"| vader | {statistics.median(vader.values()):.2f} | {' '.join('%.2f' % v for v in vader.values())} | |")
for w, v in runs.items():
    ratio = statistics.median(v[r] / vader[r] for r in v)
    print(f"| {w} | {statistics.median(v.values()):.2f} | {' '.join('%.2f' % x for x in v.values())} | {ratio:.2f} |")
PY
