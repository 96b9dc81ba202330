#!/usr/bin/env bash
# Proof with the real MPI libraries that the rules files 'netaware tune bcast'
# (or 'tune allreduce', COLL=allreduce) writes from a live run pick Open
# MPI's and MPICH's best broadcast (allreduce) (docs/tuning.md, issue 11.4).
#
#   sudo scripts/tune-proof.sh [CLUSTER...]
#   sudo COLL=allreduce scripts/tune-proof.sh star-2x4-cyclic
#
# CLUSTER names a platform in scripts/tune-proof/ (default: all four,
# star-2x4-block star-2x4-cyclic star-3x4-block star-3x4-cyclic: 2 switches
# x 4 hosts with 1 Gbit host links and a 100 Mbit trunk, 3 x 4 with 500 / 50
# Mbit; one rank per host, hosts in block or round-robin order). For each:
#
#  1. 'netaware emu up' builds it in network namespaces (prefix $PREFIX);
#  2. 'netaware emu run -- netaware tune bcast' measures every topology-blind
#     algorithm with every segment size live over netaware's TCP transport and
#     writes ompi-rules.conf and mpich-coll.json;
#  3. tools/mpibench/collbench.c times MPI_Bcast (warm-up, repetitions, each
#     the slowest rank's time) in real Open MPI (started through 'netaware emu
#     rsh-agent') with the default selection, with netaware's ompi-rules.conf,
#     and with every fixed algorithm (coll_tuned_bcast_algorithm 1-9) at every
#     segment size it takes (0, 8, 32, 128 KiB; none for 1, 8, 9); and in
#     MPICH (hydra through the same agent) with its default, with
#     mpich-coll.json, and with each of its bcast algorithms forced.
#
# Prints one Markdown table per cluster and library (medians of the
# repetitions) and writes them, with every raw line, into $WORK. The cluster
# is removed on exit, also on failure or Ctrl-C.
#
# Environment: PREFIX (namespace prefix, default "tp"), SIZES (bytes,
# comma-separated, default 65536,1048576,16777216), WARMUP (1), REPS (3),
# TUNE_REPS (netaware's repetitions, 3), LIBS ("ompi mpich"), WORK (directory
# for the files, default a new temporary one), OMPI_TIMEOUT (10m) and
# MPICH_TIMEOUT (6m) bound each mpirun (MPICH over UCX's TCP transport
# often hangs in MPI_Finalize here, after its results: those are kept). To redo part of a run in the
# same WORK: KEEP=1 keeps WORK/CLUSTER/results.tsv (configurations run
# again replace their lines), FIXED=0 skips the fixed algorithms, REDECIDE=1
# writes the rules files from the earlier WORK/CLUSTER/tuned/bench.json
# instead of measuring again ('netaware tune bcast --from'). After the
# sweep, CONFIRM (3) alternating rounds run Open MPI's default, the rules
# and the best fixed configuration of each size side by side; the second
# table is the acceptance from their medians (CONFIRM=0: none).
# FIXED_LIST ("7-32768 6-8192 ...", id-segment) limits the sweep's fixed
# configurations (default: all 27). SWEEP=0
# skips the default/rules/fixed sweep (with KEEP=1: confirm an old one). A run of all four clusters
# with the defaults takes about an hour on a loaded 2-core machine.
# COLL=allreduce (default bcast) does the same for MPI_Allreduce: netaware's
# blind allreduce algorithms live, Open MPI's coll_tuned_allreduce_algorithm
# 1-6 (segmented ring 5 at 64 and 1024 KiB segments), MPICH's
# MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM; likewise COLL=reduce, scatter,
# gather, allgather, reduce_scatter (sizes multiples of 4 x ranks for the
# last four: collbench rounds the blocks down).
# Needs root, Go, mpicc.openmpi / mpirun.openmpi, mpicc.mpich / mpiexec.hydra.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

PREFIX=${PREFIX:-tp}
COLL=${COLL:-bcast}
case $COLL in
bcast)
	TUNE_ALGS=linear,chain,k-chain,pipeline,split-binary,binary,binomial,knomial,scatter-allgather,scatter-allgather-ring
	OMPI_FIXED_ALL=""
	for alg in 1 2 3 4 5 6 7 8 9; do
		segs="0 8192 32768 131072"
		case $alg in 1 | 8 | 9) segs=0 ;; esac
		for seg in $segs; do OMPI_FIXED_ALL="$OMPI_FIXED_ALL $alg-$seg"; done
	done
	MPICH_FIXED="binomial scatter_recursive_doubling_allgather scatter_ring_allgather"
	;;
allreduce)
	TUNE_ALGS=linear,binomial,knomial,pipeline,recursive-doubling,ring,rabenseifner
	OMPI_FIXED_ALL="1-0 2-0 3-0 4-0 5-65536 5-1048576 6-0"
	MPICH_FIXED="recursive_doubling reduce_scatter_allgather"
	;;
reduce)
	TUNE_ALGS=linear,chain,k-chain,pipeline,binary,binomial,knomial
	OMPI_FIXED_ALL="1-0 2-0 2-32768 3-32768 3-131072 4-0 4-32768 5-0 5-32768 6-0 7-0"
	MPICH_FIXED="binomial reduce_scatter_gather"
	;;
scatter | gather)
	TUNE_ALGS=linear,binomial,knomial,binary
	OMPI_FIXED_ALL="1-0 2-0 3-0"
	MPICH_FIXED="binomial"
	;;
allgather)
	TUNE_ALGS=linear,binomial,scatter-allgather,scatter-allgather-ring
	OMPI_FIXED_ALL="1-0 2-0 3-0 4-0 5-0 6-0"
	MPICH_FIXED="brucks recursive_doubling ring"
	;;
reduce_scatter)
	TUNE_ALGS=binomial,recursive-doubling,rabenseifner,ring
	OMPI_FIXED_ALL="1-0 2-0 3-0 4-0"
	MPICH_FIXED="recursive_halving pairwise recursive_doubling"
	;;
*) echo "tune-proof: COLL=$COLL: want bcast, allreduce, reduce, scatter, gather, allgather or reduce_scatter" >&2; exit 2 ;;
esac
MPICH_CVAR=MPIR_CVAR_${COLL^^}_INTRA_ALGORITHM
SIZES=${SIZES:-65536,1048576,16777216}
WARMUP=${WARMUP:-1}
REPS=${REPS:-3}
TUNE_REPS=${TUNE_REPS:-3}
LIBS=${LIBS:-ompi mpich}
WORK=${WORK:-$(mktemp -d /tmp/tune-proof.XXXXXX)}
CLUSTERS=${*:-star-2x4-block star-2x4-cyclic star-3x4-block star-3x4-cyclic}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

fail() { echo "tune-proof: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (network namespaces)"
for c in mpicc.openmpi mpirun.openmpi mpicc.mpich mpiexec.hydra; do
	command -v $c >/dev/null || fail "$c not found (apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev)"
done

na=$WORK/netaware
nice -n 15 go build -o "$na" ./cmd/netaware
mpicc.openmpi -O2 -o "$WORK/collbench-ompi" tools/mpibench/collbench.c
mpicc.mpich -O2 -o "$WORK/collbench-mpich" tools/mpibench/collbench.c
# Hydra takes one executable as its remote shell, not a command line.
printf '#!/bin/sh\nexec %s emu rsh-agent "$@"\n' "$na" >"$WORK/rsh"
chmod +x "$WORK/rsh"

trap '"$na" emu down "$PREFIX" >/dev/null 2>&1 || true' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# ompi LABEL MCA...: one mpirun over the cluster, every size; appends
# "ompi LABEL BYTES MEDIAN MEAN" to results.tsv. Ranks yield when idle:
# the machine has fewer cores than ranks.
ompi() {
	local label=$1
	shift
	"$na" emu run "$PREFIX" --host "$first" --timeout "${OMPI_TIMEOUT:-10m}" -- \
		mpirun.openmpi --leave-session-attached -n "$n" --host "$hosts" --bind-to none \
		--mca plm_rsh_agent "$na emu rsh-agent" --mca plm_rsh_no_tree_spawn 1 \
		--mca btl tcp,self --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 --mca pml ob1 \
		--mca mpi_yield_when_idle 1 "$@" \
		"$WORK/collbench-ompi" "$COLL" "$SIZES" "$WARMUP" "$REPS" >"$dir/ompi-$label.out" 2>&1 ||
		echo "tune-proof: Open MPI $label failed (see $dir/ompi-$label.out); keeping the sizes it finished" >&2
	result ompi "$label" <"$dir/ompi-$label.out"
}

# mpich LABEL ENV=VALUE...: the same with MPICH (hydra, -genv per setting).
# UCX, MPICH's transport here, would use shared memory between the ranks
# (they share this machine): TCP on eth0 only, as for Open MPI. MPICH's
# busy-wait yields the core after every poll, as Open MPI's ranks do
# (mpi_yield_when_idle): 64 KiB took 113 instead of 171 ms.
mpich() {
	local label=$1
	shift
	local genv=(-genv UCX_TLS tcp,self -genv UCX_NET_DEVICES eth0 -genv MPIR_CVAR_POLLS_BEFORE_YIELD 1)
	for kv in "$@"; do genv+=(-genv "${kv%%=*}" "${kv#*=}"); done
	"$na" emu run "$PREFIX" --host "$first" --timeout "${MPICH_TIMEOUT:-6m}" -- \
		mpiexec.hydra -launcher rsh -launcher-exec "$WORK/rsh" -hosts "${hosts//:1/}" -n "$n" -iface eth0 \
		"${genv[@]}" "$WORK/collbench-mpich" "$COLL" "$SIZES" "$WARMUP" "$REPS" >"$dir/mpich-$label.out" 2>&1 ||
		echo "tune-proof: MPICH $label failed (see $dir/mpich-$label.out); keeping the sizes it finished" >&2
	result mpich "$label" <"$dir/mpich-$label.out"
}

result() {
	# A configuration run again replaces its earlier lines (KEEP=1).
	awk -v lib="$1" -v label="$2" '!($1 == lib && $2 == label)' "$dir/results.tsv" >"$dir/results.tmp"
	mv "$dir/results.tmp" "$dir/results.tsv"
	awk -v lib="$1" -v label="$2" '/^result / {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		print lib, label, f["bytes"], f["median_s"], f["mean_s"]
	}' >>"$dir/results.tsv"
}

# table LIB: Markdown rows per size: default, netaware's rules, the best
# fixed algorithm, and the acceptance ratios.
table() {
	awk -v lib="$1" -v sizes="$SIZES" '
	$1 != lib { next }
	{ t[$2, $3] = $4 }
	$2 ~ /^fixed/ && (!($3 in best) || $4 < best[$3]) { best[$3] = $4; bestl[$3] = $2 }
	END {
		printf "| size | default | netaware rules | best fixed | rules / best | default / rules | default / best | acceptance |\n"
		printf "|---|---|---|---|---|---|---|---|\n"
		n = split(sizes, s, ",")
		for (i = 1; i <= n; i++) {
			b = s[i]; d = t["default", b]; r = t["rules", b]; f = best[b]
			if (d == "" || r == "" || f == "") { printf "| %d | %s | %s | %s | | | | incomplete |\n", b, d, r, f; continue }
			ok = (r <= 1.10 * f) && (r <= 1.05 * d) && (d / f < 1.5 || d / r >= 1.5)
			printf "| %s | %.4f s | %.4f s | %.4f s (%s) | %.2f | %.2fx | %.2fx | %s |\n",
				(b >= 1048576 ? b / 1048576 " MiB" : b / 1024 " KiB"), d, r, f, substr(bestl[b], 7), r / f, d / r, d / f, ok ? "met" : "**not met**"
		}
	}' "$dir/results.tsv"
}

# sidebyside: the acceptance from the alternating rounds: per size the
# median over rounds of default, rules, and the best fixed configuration
# of the sweep (the one that was run in the rounds).
sidebyside() {
	awk -v sizes="$SIZES" '
	$1 != "ompi" { next }
	$2 ~ /^fixed/ && (!($3 in b) || $4 < b[$3]) { b[$3] = $4; bl[$3] = $2 }
	$2 ~ /^r[0-9]+-/ { split($2, p, "-"); cfg = substr($2, length(p[1]) + 2); v[cfg, $3, ++n[cfg, $3]] = $4 }
	function med(cfg, sz,   k, m, i, j, t, a) {
		m = n[cfg, sz]
		if (m == 0) return ""
		for (i = 1; i <= m; i++) a[i] = v[cfg, sz, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	END {
		printf "| size | default | netaware rules | best fixed of the sweep | rules / best | default / rules | default / best | acceptance |\n"
		printf "|---|---|---|---|---|---|---|---|\n"
		k = split(sizes, s, ",")
		for (i = 1; i <= k; i++) {
			z = s[i]; d = med("default", z); r = med("rules", z); f = med(bl[z], z)
			if (d == "" || r == "" || f == "") { printf "| %d | %s | %s | %s | | | | incomplete |\n", z, d, r, f; continue }
			ok = (r <= 1.10 * f) && (r <= 1.05 * d) && (d / f < 1.5 || d / r >= 1.5)
			printf "| %s | %.4f s | %.4f s | %.4f s (%s) | %.2f | %.2fx | %.2fx | %s |\n",
				(z >= 1048576 ? z / 1048576 " MiB" : z / 1024 " KiB"), d, r, f, substr(bl[z], 7), r / f, d / r, d / f, ok ? "met" : "**not met**"
		}
	}' "$dir/results.tsv"
}

for cl in $CLUSTERS; do
	plat=scripts/tune-proof/$cl.yaml
	[ -f "$plat" ] || fail "no platform $plat"
	dir=$WORK/$cl
	[ "$COLL" = bcast ] || dir=$WORK/$cl-$COLL
	mkdir -p "$dir"
	[ "${KEEP:-0}" = 1 ] || : >"$dir/results.tsv"
	touch "$dir/results.tsv"
	"$na" emu down "$PREFIX" >/dev/null 2>&1 || true
	"$na" emu up "$plat" --prefix "$PREFIX" >"$dir/emu-up.txt"
	hosts=$("$na" emu status "$PREFIX" --mpi-hosts)
	first=${hosts%%:*}
	n=$(echo "$hosts" | tr ',' '\n' | wc -l)
	echo "== $cl: $n ranks, load: $(uptime | sed 's/.*load/load/')" >&2

	if [ "${REDECIDE:-0}" = 1 ]; then
		echo "   netaware tune $COLL --from the earlier run" >&2
		"$na" tune "$COLL" --from "$dir/tuned/bench.json" --out "$dir/tuned" >"$dir/tune-redecide.txt" 2>&1 ||
			fail "netaware tune $COLL --from failed: $dir/tune-redecide.txt"
	else
		echo "   netaware tune $COLL (live)" >&2
		"$na" emu run "$PREFIX" --timeout 60m -- netaware tune "$COLL" --quiet --out "$dir/tuned" --sizes "$SIZES" \
			--reps "$TUNE_REPS" --warmup 1 --segs 8KiB,32KiB,128KiB --algorithms "$TUNE_ALGS" \
			>"$dir/tune.txt" 2>&1 || fail "netaware tune $COLL failed: $dir/tune.txt"
	fi

	if [[ " $LIBS " == *" ompi "* ]] && [ "${SWEEP:-1}" = 1 ]; then
		echo "   Open MPI: default, rules, fixed" >&2
		ompi default
		ompi rules --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "$dir/tuned/ompi-rules.conf"
		[ "${FIXED:-1}" = 0 ] || for f in ${FIXED_LIST:-$OMPI_FIXED_ALL}; do
			IFS=- read -r alg seg <<<"$f"
			ompi "fixed-$alg-$seg" --mca coll_tuned_use_dynamic_rules 1 --mca "coll_tuned_${COLL}_algorithm" "$alg" \
				--mca "coll_tuned_${COLL}_algorithm_segmentsize" "$seg"
		done
	fi
	if [[ " $LIBS " == *" mpich "* ]] && [ "${SWEEP:-1}" = 1 ]; then
		echo "   MPICH: default, rules, fixed" >&2
		mpich default
		mpich rules MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$dir/tuned/mpich-coll.json"
		[ "${FIXED:-1}" = 0 ] || for alg in $MPICH_FIXED; do
			mpich "fixed-$alg" "$MPICH_CVAR=$alg"
		done
	fi
	if [[ " $LIBS " == *" ompi "* ]] && [ "${CONFIRM:-3}" -gt 0 ]; then
		# Side by side: the default, the rules and the best fixed
		# configuration of each size, in CONFIRM alternating rounds (the
		# sweep ran each once, minutes apart, on a machine whose load
		# moves; and the best of 27 noisy runs is biased low).
		best=$(awk '$1 == "ompi" && $2 ~ /^fixed/ && (!($3 in b) || $4 < b[$3]) { b[$3] = $4; l[$3] = $2 }
			END { for (k in l) print l[k] }' "$dir/results.tsv" | sort -u)
		echo "   Open MPI side by side, ${CONFIRM:-3} rounds: default rules $(echo $best)" >&2
		for ((round = 1; round <= ${CONFIRM:-3}; round++)); do
			ompi "r$round-default"
			ompi "r$round-rules" --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "$dir/tuned/ompi-rules.conf"
			for f in $best; do
				IFS=- read -r _ alg seg <<<"$f"
				ompi "r$round-$f" --mca coll_tuned_use_dynamic_rules 1 --mca "coll_tuned_${COLL}_algorithm" "$alg" \
					--mca "coll_tuned_${COLL}_algorithm_segmentsize" "$seg"
			done
		done
	fi
	"$na" emu down "$PREFIX" >/dev/null

	{
		echo "### $cl, $COLL ($n ranks; load when it started: $(uptime | sed 's/.*average: //'))"
		echo
		for lib in $LIBS; do
			echo "$lib:"
			echo
			table "$lib"
			echo
		done
		if [[ " $LIBS " == *" ompi "* ]] && [ "${CONFIRM:-3}" -gt 0 ]; then
			echo "ompi, side by side (median over the rounds of each run's median):"
			echo
			sidebyside
			echo
		fi
	} | tee "$dir/table.md"
done
echo "files in $WORK" >&2
