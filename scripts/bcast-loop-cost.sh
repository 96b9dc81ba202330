#!/usr/bin/env bash
# netaware's broadcast against Open MPI's, two ways (docs/tuning.md, "What
# the figure measures"): the OSU-style figure (each repetition timed from
# leaving a barrier to the end of the broadcast, the slowest rank's time;
# the mean of the repetitions within the 90th percentile) and the cost of a
# whole repetition, barrier and broadcast, as the difference of the wall
# times of a run of R2 and a run of R1 repetitions over R2 - R1.
#
#   sudo scripts/bcast-loop-cost.sh star-2x4-cyclic
#   sudo SIZE=1024 ROUNDS=3 R1=200 R2=2000 scripts/bcast-loop-cost.sh PLATFORM.yaml
#
# The argument names a platform in scripts/tune-proof/ or a platform file.
# netaware runs ALG (knomial: Open MPI's default for 8 ranks at 1 KiB is
# k-nomial radix 4) live over its TCP transport ('netaware bench bcast',
# which also runs 'ompi-fixed', Open MPI's default schedule: the per-
# repetition cost is divided by the number of series); Open MPI 4.1 runs
# tools/mpibench/collbench.c with its default selection. ROUNDS alternating
# rounds; one line per round and series. The cluster (prefix $PREFIX,
# default "bl") is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
[ $# = 1 ] || { echo "usage: $0 CLUSTER|PLATFORM.yaml" >&2; exit 2; }
plat=$1
[ -f "$plat" ] || plat=scripts/tune-proof/$1.yaml
fail() { echo "bcast-loop-cost: $*" >&2; exit 1; }
[ -f "$plat" ] || fail "no platform $1"
[ "$(id -u)" = 0 ] || fail "needs root (network namespaces)"
for c in mpicc.openmpi mpirun.openmpi jq bc; do command -v $c >/dev/null || fail "$c not found"; done
PREFIX=${PREFIX:-bl}
SIZE=${SIZE:-1024}
ALG=${ALG:-knomial}
ROUNDS=${ROUNDS:-3}
R1=${R1:-200}
R2=${R2:-2000}
[ "$R2" -gt "$R1" ] || fail "R2 ($R2) must exceed R1 ($R1)"
WORK=$(mktemp -d /tmp/bcast-loop-cost.XXXXXX)
na=$WORK/netaware
nice -n 15 go build -o "$na" ./cmd/netaware
mpicc.openmpi -O2 -o "$WORK/collbench" tools/mpibench/collbench.c
trap '"$na" emu down "$PREFIX" >/dev/null 2>&1 || true' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$na" emu down "$PREFIX" >/dev/null 2>&1 || true
"$na" emu up "$plat" --prefix "$PREFIX" >"$WORK/emu-up.txt"
hosts=$("$na" emu status "$PREFIX" --mpi-hosts)
first=${hosts%%:*}
n=$(echo "$hosts" | tr ',' '\n' | wc -l)

now() { date +%s.%N; }
netaware() {
	"$na" emu run "$PREFIX" --timeout 5m -- netaware bench bcast --quiet --json --sizes "$SIZE" \
		--reps "$1" --warmup 20 --algorithms "$ALG" >"$WORK/na-$1.json" 2>"$WORK/na.err" ||
		fail "netaware bench bcast failed: $WORK/na.err"
}
ompi() {
	"$na" emu run "$PREFIX" --host "$first" --timeout 5m -- \
		mpirun.openmpi --leave-session-attached -n "$n" --host "$hosts" --bind-to none \
		--mca plm_rsh_agent "$na emu rsh-agent" --mca plm_rsh_no_tree_spawn 1 \
		--mca btl tcp,self --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 --mca pml ob1 \
		--mca mpi_yield_when_idle 1 "$WORK/collbench" bcast "$SIZE" 20 "$1" >"$WORK/om-$1.out" 2>&1 ||
		fail "Open MPI failed: $WORK/om-$1.out"
}
# perrep T0 T1 T2 SERIES: microseconds per repetition of one series.
perrep() { echo "(($3 - $2) - ($2 - $1)) / ($R2 - $R1) / $4 * 1000000" | bc -l | cut -d. -f1; }

echo "### $plat, $SIZE bytes, $n ranks ($ROUNDS rounds of $R1 and $R2 repetitions)"
echo
echo "| round | series | broadcast figure (mean of 90 %) | barrier + broadcast per repetition |"
echo "|---|---|---|---|"
for ((r = 1; r <= ROUNDS; r++)); do
	t0=$(now); netaware "$R1"; t1=$(now); netaware "$R2"; t2=$(now)
	k=$(jq '.series | length' "$WORK/na-$R2.json")
	jq -r --arg r "$r" --arg p "$(perrep "$t0" "$t1" "$t2" "$k")" \
		'.series[] | "| \($r) | netaware \(.label) | \(.mean_s[0] * 1e6 | floor) us | \($p) us |"' "$WORK/na-$R2.json"
	t0=$(now); ompi "$R1"; t1=$(now); ompi "$R2"; t2=$(now)
	m=$(awk '/^rep / { print $3 }' "$WORK/om-$R2.out" | sort -g |
		awk '{ t[++k] = $1 } END { m = int(k * 0.9); if (m < 1) m = 1; for (i = 1; i <= m; i++) s += t[i]; printf "%d", s / m * 1e6 }')
	echo "| $r | Open MPI default | $m us | $(perrep "$t0" "$t1" "$t2" 1) us |"
done
echo
echo "files in $WORK" >&2
