#!/usr/bin/env bash
# Intra-host point to point, side by side (docs/benchmarks.md, issue 16):
# netaware's shared-memory path, netaware over loopback TCP (NETAWARE_SHM=0)
# and Open MPI's shared memory (btl self,vader, yielding when idle), two
# processes on this machine, in alternating order round after round; then
# the medians of each and of the per-round ratios netaware/vader.
#
#   scripts/shm-bench.sh            # about 1 minute on an idle machine
#
# PIN=1 gives each rank a core of its own on both sides, as
# mpirun does by default for two ranks (--bind-to core); netaware's ranks
# are started under 'taskset -c RANK'. PIN=0 pins neither (mpirun
# --bind-to none), the default: pinned, each Go rank runs with GOMAXPROCS 1.
#
# GOMAXPROCS=1 starts netaware's ranks with one P each, single-threaded as
# MPI ranks are (the variable reaches the ranks through 'netaware launch').
#
# Environment: ROUNDS (default 9), PIN (0), SIZES (1,1024,65536,1048576),
# STREAM (messages of 1 MiB in the streaming test, default 200),
# WORK (build directory, default a new temporary one).
# Needs Go, mpicc and Open MPI's mpirun (run as root: --allow-run-as-root).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-9}
PIN=${PIN:-0}
SIZES=${SIZES:-1,1024,65536,1048576}
STREAM=${STREAM:-200}
WORK=${WORK:-$(mktemp -d /tmp/shm-bench.XXXXXX)}
go build -o "$WORK/netaware" ./cmd/netaware
mpicc -O2 -o "$WORK/pingpong" tools/mpibench/pingpong.c
ROOT=()
[ "$(id -u)" = 0 ] && ROOT=(--allow-run-as-root)

BIND=(--bind-to none)
PINCMD=""
if [ "$PIN" = 1 ]; then
	BIND=(--bind-to core)
	PINCMD='taskset -c $NETAWARE_RANK'
fi
na() { # $1: NETAWARE_SHM value
	NETAWARE_SHM=$1 timeout 300 "$WORK/netaware" launch -n 2 -- sh -c "exec $PINCMD \"\$0\" \"\$@\"" \
		"$WORK/netaware" bench pingpong --no-raw --json --sizes "$SIZES" --rounds 3 --stream-count "$STREAM" |
		python3 -c 'import json,sys; d=json.load(sys.stdin)
print(" ".join("%.9g" % l["netaware_half_rtt_s"] for l in d["pingpong"]), "%.6g" % d["streaming"][0]["netaware_Bps"])'
}
vader() {
	timeout 300 mpirun "${ROOT[@]}" -n 2 "${BIND[@]}" --mca btl self,vader --mca mpi_yield_when_idle 1 "$WORK/pingpong" "$SIZES" 1000 1048576 "$STREAM" |
		awk '/^size/ {printf "%s ", $6} /^stream/ {print $6}'
}

echo "GOMAXPROCS=${GOMAXPROCS:-(unset)} PIN=$PIN"
echo "load before: $(uptime)"
: >"$WORK/results"
for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then order="shm tcp vader"; else order="vader tcp shm"; fi
	for w in $order; do
		case $w in
		shm) v=$(na 1) ;;
		tcp) v=$(na 0) ;;
		vader) v=$(vader) ;;
		esac
		[ -n "$v" ] || { echo "round $r: $w produced no figures" >&2; exit 1; }
		echo "$r $w $v" >>"$WORK/results"
	done
done
echo "load after: $(uptime)"
PIN=$PIN SIZES=$SIZES python3 - "$WORK/results" <<'PY'
import os, statistics, sys
sizes = [int(s) for s in os.environ["SIZES"].split(",")]
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    runs.setdefault(f[1], {})[int(f[0])] = [float(x) for x in f[2:]]
rounds = sorted(runs["vader"])
def med(w, i): return statistics.median(runs[w][r][i] for r in rounds)
def ratio(w, i, bw=False):
    # per-round ratio netaware/vader of times (of bandwidths for the stream: vader/netaware)
    return statistics.median((runs["vader"][r][i] / runs[w][r][i]) if bw else (runs[w][r][i] / runs["vader"][r][i]) for r in rounds)
print(f"PIN={os.environ.get('PIN')}: {len(rounds)} rounds, medians; ratio = per-round netaware/vader time, median (1.0 = parity)")
print("| size | shm µs | tcp µs | vader µs | shm/vader | tcp/vader |")
print("|---:|---:|---:|---:|---:|---:|")
for i, s in enumerate(sizes):
    print(f"| {s} B | {med('shm', i)*1e6:.2f} | {med('tcp', i)*1e6:.2f} | {med('vader', i)*1e6:.2f} | {ratio('shm', i):.2f} | {ratio('tcp', i):.2f} |")
i = len(sizes)
print(f"| stream 1 MiB | {med('shm', i)/1e9:.2f} GB/s | {med('tcp', i)/1e9:.2f} GB/s | {med('vader', i)/1e9:.2f} GB/s | {ratio('shm', i, True):.2f} | {ratio('tcp', i, True):.2f} |")
PY
