#!/usr/bin/env bash
# Proof on real MPI that netaware's rank order speeds up rank-order
# collectives (docs/rank-order.md, issue 19).
#
#   sudo scripts/order-proof.sh            # about 3 minutes
#
# Builds scripts/order-proof-2x4.yaml with 'netaware emu' (two switches of four
# hosts, 1 Gbit host links, a 100 Mbit trunk, hosts listed cyclically a1 b1 a2
# b2 ...), lets netaware find the switches (the bandwidth of every pair, then
# 'netaware cluster'), writes 'netaware order's hostfile, and times Open MPI's
# ring allreduce (coll_tuned_allreduce_algorithm 4) and pipelined broadcast
# (coll_tuned_bcast_algorithm 3) of SIZE bytes in the cyclic order and in
# netaware's order, with tools/mpibench/collbench.c (warm-up, repetitions,
# the slowest rank's time). Prints a Markdown table. The cluster is removed
# on exit, also on failure or Ctrl-C.
#
# Environment: PREFIX (namespace prefix, default "no"), SIZE (bytes, default
# 16777216), WARMUP (1), REPS (3), SEGMENT (the broadcast's segment size,
# 1048576), WORK (directory for the files, default a new temporary one).
# Needs root, Go, mpicc and Open MPI's mpirun.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

PREFIX=${PREFIX:-no}
SIZE=${SIZE:-16777216}
WARMUP=${WARMUP:-1}
REPS=${REPS:-3}
SEGMENT=${SEGMENT:-1048576}
WORK=${WORK:-$(mktemp -d /tmp/order-proof.XXXXXX)}
mkdir -p "$WORK"

fail() { echo "order-proof: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (network namespaces)"
command -v mpicc >/dev/null || fail "mpicc not found (apt-get install libopenmpi-dev)"
mpirun --version 2>/dev/null | grep -q "Open MPI" || fail "mpirun is not Open MPI's (apt-get install openmpi-bin)"

na=$WORK/netaware
go build -o "$na" ./cmd/netaware
mpicc -O2 -o "$WORK/collbench" tools/mpibench/collbench.c

trap '"$na" emu down "$PREFIX" >/dev/null 2>&1 || true' EXIT
"$na" emu down "$PREFIX" >/dev/null 2>&1 || true
"$na" emu up scripts/order-proof-2x4.yaml --prefix "$PREFIX" >"$WORK/emu-up.txt"
"$na" emu status "$PREFIX" | awk 'NR > 2 { print $1, $3 }' >"$WORK/addresses"
n=$(wc -l <"$WORK/addresses")

# What netaware finds: the bandwidth of every pair (one pair at a time), the
# ranks clustered by it, and the order of that topology. (Latency cannot
# tell the switches apart here: without netem, emu's links have no delay,
# and one bridge more adds ~2.4 us that the load of a shared machine hides.)
"$na" emu run "$PREFIX" --timeout 10m -- netaware probe bandwidth --size 2MiB --out "$WORK/bandwidth.json" >"$WORK/bandwidth.txt" 2>&1
"$na" cluster "$WORK/bandwidth.json" --distance bandwidth --out "$WORK/topology.json" >"$WORK/cluster.txt"
"$na" order "$WORK/topology.json" --out-dir "$WORK/order" >/dev/null

# mpirun runs in the first host of each hostfile and reaches the others
# through emu's remote shell (the options of docs/emu.md); host names can clash with other emulated
# clusters, so the hostfiles name addresses. The eight ranks share this
# machine's cores, so they yield when idle instead of spinning: otherwise
# every hop of a pipeline waits for its receiver to be scheduled.
awk '{ print $2 " slots=1" }' "$WORK/addresses" >"$WORK/cyclic.hostfile"
awk 'NR == FNR { addr[$1] = $2; next } { $1 = addr[$1]; print }' "$WORK/addresses" "$WORK/order/order.ompi-hostfile" >"$WORK/netaware.hostfile"
grep -q '^ *slots' "$WORK/netaware.hostfile" && fail "a host of netaware's order is not in the cluster: $WORK/order/order.ompi-hostfile"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# run HOSTFILE OP MCA... : prints collbench's output
run() {
	local hostfile=$1 op=$2
	shift 2
	local first
	first=$(awk 'NR == 1 { print $1 }' "$hostfile")
	"$na" emu run "$PREFIX" --host "$first" --timeout 15m -- \
		mpirun --leave-session-attached --hostfile "$hostfile" -n "$n" --bind-to none \
		--mca plm_rsh_agent "$na emu rsh-agent" --mca plm_rsh_no_tree_spawn 1 \
		--mca btl tcp,self --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 --mca pml ob1 \
		--mca mpi_yield_when_idle 1 --mca coll_tuned_use_dynamic_rules 1 "$@" \
		"$WORK/collbench" "$op" "$SIZE" "$WARMUP" "$REPS" 2>&1 | grep -v 'setpgid'
}

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

echo "| collective | order | ranks' hosts | median (s) | min (s) | max (s) | speed-up |"
echo "|---|---|---|---|---|---|---|"
for op in allreduce bcast; do
	case $op in
	allreduce) mca=(--mca coll_tuned_allreduce_algorithm 4) name="ring allreduce (tuned 4)" ;;
	bcast) mca=(--mca coll_tuned_bcast_algorithm 3 --mca coll_tuned_bcast_algorithm_segmentsize "$SEGMENT") name="pipelined bcast (tuned 3, $SEGMENT B segments)" ;;
	esac
	base=""
	for order in cyclic netaware; do
		out=$(run "$WORK/$order.hostfile" "$op" "${mca[@]}") || fail "$op in $order order: mpirun failed: $out"
		echo "$out" >"$WORK/$op-$order.txt"
		result=$(echo "$out" | grep '^result ') || fail "$op in $order order failed: $out"
		hosts=$(echo "$out" | sed -n 's/^hosts //p')
		median=$(echo "$result" | field median_s)
		min=$(echo "$result" | field min_s)
		max=$(echo "$result" | field max_s)
		if [ -z "$base" ]; then
			base=$median
			speedup="1.00"
		else
			speedup=$(awk -v a="$base" -v b="$median" 'BEGIN { printf "%.2f", a / b }')
		fi
		echo "| $name, $SIZE B | $order | $hosts | $median | $min | $max | $speedup |"
	done
done
echo
echo "files in $WORK (netaware's order: $WORK/order, timings: $WORK/*-cyclic.txt, $WORK/*-netaware.txt)"
