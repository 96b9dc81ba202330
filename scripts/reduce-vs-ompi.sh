#!/bin/sh
# reduce-vs-ompi.sh: netaware's Reduce (float64 sum, binomial tree, TCP
# loopback) side by side with Open MPI's MPI_Reduce forced to its binomial
# tree (coll_tuned_reduce_algorithm 5), on N ranks of this machine, in
# alternating rounds. Each round runs every contender once (REPS timed
# repetitions after WARMUP, the median of the slowest rank's time) and
# prints one line; the last lines give each contender's median over the
# rounds and the ratios netaware / Open MPI.
#
#   scripts/reduce-vs-ompi.sh [BYTES [ROUNDS [N]]]
#
# Contenders: ompi-vader (Open MPI's default shared-memory transport),
# ompi-tcp (--mca btl self,tcp, the same transport as netaware's), netaware;
# and netaware-old when OLD_BENCH names a reducebench built from an older
# tree. Needs mpicc, mpirun, go; run as root it sets OMPI_ALLOW_RUN_AS_ROOT.
set -eu
bytes=${1:-1048576}
rounds=${2:-5}
n=${3:-8}
warmup=${WARMUP:-2}
reps=${REPS:-9}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
root=$(cd "$(dirname "$0")/.." && pwd)
mpicc -O2 -o "$dir/ompi" "$root/tools/mpibench/reducebench.c"
(cd "$root" && go build -o "$dir/na" ./tools/reducebench && go build -o "$dir/netaware" ./cmd/netaware)
med() { sed -n 's/.*median_s=\([0-9.]*\).*/\1/p'; }
ompi() {
	mpirun -n "$n" --oversubscribe --mca btl "$1" --mca mpi_yield_when_idle 1 \
		--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_reduce_algorithm 5 \
		"$dir/ompi" "$bytes" "$warmup" "$reps" | med
}
na() { "$dir/netaware" launch -n "$n" -- "$1" -bytes "$bytes" -warmup "$warmup" -reps "$reps" 2>/dev/null | med; }
echo "# $n ranks, $bytes bytes, $rounds rounds; $(uptime)"
echo "round ompi-vader ompi-tcp netaware${OLD_BENCH:+ netaware-old}"
for r in $(seq 1 "$rounds"); do
	# Alternate the order so that no contender always runs first.
	if [ $((r % 2)) -eq 1 ]; then
		a=$(ompi self,vader); b=$(ompi self,tcp); c=$(na "$dir/na"); d=${OLD_BENCH:+$(na "$OLD_BENCH")}
	else
		d=${OLD_BENCH:+$(na "$OLD_BENCH")}; c=$(na "$dir/na"); b=$(ompi self,tcp); a=$(ompi self,vader)
	fi
	echo "$r $a $b $c $d" | tee -a "$dir/rounds"
done
awk -v old="${OLD_BENCH:-}" '
function median(x, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
	return k % 2 ? x[(k + 1) / 2] : (x[k / 2] + x[k / 2 + 1]) / 2 }
{ k++; a[k] = $2; b[k] = $3; c[k] = $4; d[k] = $5; ra[k] = $4 / $2; rb[k] = $4 / $3; if (old != "") ro[k] = $4 / $5 }
END {
	printf "median s: ompi-vader %.6f ompi-tcp %.6f netaware %.6f", median(a, k), median(b, k), median(c, k)
	if (old != "") printf " netaware-old %.6f", median(d, k)
	printf "\nratio netaware/ompi-vader %.2f, netaware/ompi-tcp %.2f (medians of per-round ratios)", median(ra, k), median(rb, k)
	if (old != "") printf ", netaware/netaware-old %.2f", median(ro, k)
	printf "\n"
}' "$dir/rounds"
echo "# $(uptime)"
