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
#     mpich-coll.json, and with each of its bcast algorithms forced, in
#     MPICH_ROUNDS (3) rounds (each round every configuration once, in a
#     rotated order; the table has the medians over the rounds).
#
# MPICH is Debian's release built with the ch3:nemesis device (TCP):
# scripts/mpich-ch3.sh builds it once into MPICH_CH3 (default
# /var/tmp/netaware-mpich-ch3; 20-40 minutes on a busy 2-core machine).
# Debian's own build has only ch4:ucx, whose TCP transport hangs in
# MPI_Finalize in about half of the runs across the namespaces
# (docs/tuning.md); MPICH_DEVICE=ucx runs it all the same.
#
# Prints one Markdown table per cluster and library (medians of the
# repetitions) and writes them, with every raw line, into $WORK; for each
# Open MPI run, WORK/CLUSTER/losses.tsv has the packets the cluster's
# queues dropped and the TCP segments retransmitted and sent. The cluster
# is removed on exit, also on failure or Ctrl-C.
#
# Environment: PREFIX (namespace prefix, default "tp"), SIZES (bytes,
# comma-separated, default 65536,1048576,16777216), WARMUP (1), REPS (3),
# TUNE_REPS (netaware's repetitions, 3), LIBS ("ompi mpich"), WORK (directory
# for the files, default a new temporary one), OMPI_TIMEOUT and
# MPICH_TIMEOUT (10m, 4m with LOCK) bound each mpirun (a run that fails or
# hangs keeps the sizes it printed). To redo part of a run in the
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
# TABLE=1 only prints the tables from WORK's results (of a run interrupted
# after its sweep, say), running nothing.
# RESUME=1 (with LOCK) goes on with an interrupted run in the same WORK:
# the tune steps, sweep configurations and rounds already done are kept.
# LOCK (e.g. /tmp/netaware-live.lock; default none) is a file every live unit holds
# with flock(1), so that no other live run on a shared machine times at
# the same moment: one 'tune' step (one size, and for sizes above 1 MiB
# TUNE_CHUNK (3) algorithm names at a time; the steps' bench.json files are
# merged with jq before deciding), the sweep at one size (above 1 MiB
# SWEEP_CHUNK (6) configurations at a time; the smaller sizes get the
# repetitions they would have had in one run with every size), one
# side-by-side round (every size; CONFIRM_HOLD rounds per hold). Each unit holds the
# lock for at most a few minutes; building and 'emu up' do not take it.
# LOCK_HELD=1: the caller holds LOCK around the whole run (e.g. 'flock
# /tmp/netaware-live.lock env LOCK_HELD=1 LOCK=... scripts/tune-proof.sh CLUSTER'
# with LIBS=none for the tune step, then RESUME=1 LIBS=mpich for MPICH's
# rounds: two holds per cluster when the lock is contended; the steps
# are still run as with LOCK).
# TUNE=0 skips step 2 and the rules (the sweep of the fixed algorithms
# alone, as scripts/ompi-sim-check.sh reads it; with CONFIRM=0).
# TUNE_WORLD=ompi runs step 2 in the MPI world instead: netaware built with
# -tags mpi, started by Open MPI's mpirun over the cluster as the benchmark
# is, 'tune bcast --library' times Open MPI's own MPI_Bcast with each
# algorithm and segment size forced (bcast only, not with LOCK).
# TUNE_WORLD=mpich does the same with MPICH (the ch3 build, -tags
# mpi,mpich, started by hydra as MPICH's benchmark is): MPICH's own
# MPI_Bcast with each of its algorithms forced; the rules it writes are
# mpich-coll.json only (LIBS=mpich to compare them).
# COLL=allreduce (default bcast) does the same for MPI_Allreduce: netaware's
# blind allreduce algorithms live, Open MPI's coll_tuned_allreduce_algorithm
# 1-6 (segmented ring 5 at 64 and 1024 KiB segments), MPICH's
# MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM; likewise COLL=reduce, scatter,
# gather, allgather, reduce_scatter (sizes multiples of 4 x ranks for the
# last four: collbench rounds the blocks down).
# Needs root, Go, mpicc.openmpi / mpirun.openmpi, mpiexec.hydra (and
# mpicc.mpich with MPICH_DEVICE=ucx).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

PREFIX=${PREFIX:-tp}
COLL=${COLL:-bcast}
case $COLL in
bcast)
	TUNE_ALGS=linear,chain,k-chain,pipeline,split-binary,binary,binomial,binomial-inorder,knomial,scatter-allgather,scatter-allgather-ring
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
# ALGS narrows netaware's candidates (e.g. to MPICH's bcast algorithms,
# binomial-inorder,scatter-allgather,scatter-allgather-ring, for LIBS=mpich).
TUNE_ALGS=${ALGS:-$TUNE_ALGS}
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

# locked CMD...: CMD (a command or a function of this script) holding
# $LOCK, if set. The load is logged with each unit: the figures are read
# against it (docs/tuning.md).
locked() {
	if [ -z "${LOCK:-}" ] || [ "${LOCK_HELD:-0}" = 1 ]; then
		"$@"
		return
	fi
	{
		flock 9
		echo "   [$(date -u +%H:%M:%S) $(uptime | sed 's/.*average: //')] $*" >>"$dir/lock.log"
		"$@"
	} 9>>"$LOCK"
	# Let the other waiters in: flock is not first come, first served.
	sleep "${LOCK_GAP:-2}"
}
MPICH_DEVICE=${MPICH_DEVICE:-ch3}
MPICH_ROUNDS=${MPICH_ROUNDS:-3}
case $MPICH_DEVICE in
ch3 | ucx) ;;
*) fail "MPICH_DEVICE=$MPICH_DEVICE: want ch3 or ucx" ;;
esac
if [ "${TABLE:-0}" != 1 ]; then
	[ "$(id -u)" = 0 ] || fail "needs root (network namespaces)"
	[ -z "${LOCK:-}" ] || command -v flock >/dev/null || fail "LOCK=$LOCK needs flock (util-linux)"
	[ -z "${LOCK:-}" ] || command -v jq >/dev/null || fail "LOCK=$LOCK needs jq (the tune steps are merged with it)"
	for c in mpicc.openmpi mpirun.openmpi mpicc.mpich mpiexec.hydra; do
		command -v $c >/dev/null || fail "$c not found (apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev)"
	done

	# Under LOCK a hung run must not hold the machine for long.
	deftimeout=10m
	[ -z "${LOCK:-}" ] || deftimeout=4m
	na=$WORK/netaware
	nice -n 15 go build -o "$na" ./cmd/netaware
	mpicc.openmpi -O2 -o "$WORK/collbench-ompi" tools/mpibench/collbench.c
	case ${TUNE_WORLD:-tcp} in
	tcp) ;;
	ompi)
		[ "$COLL" = bcast ] || fail "TUNE_WORLD=ompi times Open MPI's own broadcast: COLL=bcast only"
		[ -z "${LOCK:-}" ] || fail "TUNE_WORLD=ompi runs the tune step in one piece: not with LOCK"
		nice -n 15 go build -tags mpi -o "$WORK/netaware-mpi" ./cmd/netaware
		;;
	mpich)
		[ "$COLL" = bcast ] || fail "TUNE_WORLD=mpich times MPICH's own broadcast: COLL=bcast only"
		[ -z "${LOCK:-}" ] || fail "TUNE_WORLD=mpich runs the tune step in one piece: not with LOCK"
		[ "$MPICH_DEVICE" = ch3 ] || fail "TUNE_WORLD=mpich: with MPICH_DEVICE=ch3 only (UCX hangs across the namespaces)"
		mpichdir=$(scripts/mpich-ch3.sh "${MPICH_CH3:-/var/tmp/netaware-mpich-ch3}")
		# (An rpath to its own libmpich, as its mpicc gives collbench.)
		PKG_CONFIG_PATH=$mpichdir/lib/pkgconfig CGO_LDFLAGS="-Wl,-rpath,$mpichdir/lib" nice -n 15 go build -tags mpi,mpich -o "$WORK/netaware-mpi" ./cmd/netaware
		;;
	*) fail "TUNE_WORLD=$TUNE_WORLD: want tcp, ompi or mpich" ;;
	esac
	if [[ " $LIBS " == *" mpich "* ]] && [ "$MPICH_DEVICE" = ch3 ]; then
		mpichdir=$(scripts/mpich-ch3.sh "${MPICH_CH3:-/var/tmp/netaware-mpich-ch3}")
		# Its mpicc links with an rpath to its own libmpich.
		"$mpichdir/bin/mpicc" -O2 -o "$WORK/collbench-mpich" tools/mpibench/collbench.c
	else
		mpicc.mpich -O2 -o "$WORK/collbench-mpich" tools/mpibench/collbench.c
	fi
	# Hydra takes one executable as its remote shell, not a command line.
	printf '#!/bin/sh\nexec %s emu rsh-agent "$@"\n' "$na" >"$WORK/rsh"
	chmod +x "$WORK/rsh"

	trap '"$na" emu down "$PREFIX" >/dev/null 2>&1 || true' EXIT
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# ompirun TIMEOUT [MCA...] PROGRAM...: Open MPI's mpirun over the cluster,
# one rank per host, TCP on eth0.
ompirun() {
	local timeout=$1
	shift
	"$na" emu run "$PREFIX" --host "$first" --timeout "$timeout" -- \
		mpirun.openmpi --leave-session-attached -n "$n" --host "$hosts" --bind-to none \
		--mca plm_rsh_agent "$na emu rsh-agent" --mca plm_rsh_no_tree_spawn 1 \
		--mca btl tcp,self --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 --mca pml ob1 \
		--mca mpi_yield_when_idle 1 "$@"
}

# ompi LABEL MCA...: one mpirun over the cluster, every size; appends
# "ompi LABEL BYTES MEDIAN MEAN" to results.tsv. Ranks yield when idle:
# the machine has fewer cores than ranks.
ompi() {
	local label=$1 before
	shift
	before=$(losses)
	ompirun "${OMPI_TIMEOUT:-$deftimeout}" "$@" \
		"$WORK/collbench-ompi" "$COLL" "${OSIZES:-$SIZES}" "$WARMUP" "${OREPS:-$REPS}" >"$dir/ompi-$label${OSIZES:+@$OSIZES}.out" 2>&1 ||
		echo "tune-proof: Open MPI $label failed (see $dir/ompi-$label${OSIZES:+@$OSIZES}.out); keeping the sizes it finished" >&2
	result ompi "$label" <"$dir/ompi-$label${OSIZES:+@$OSIZES}.out"
	echo "ompi $label ${OSIZES:-$SIZES} $(losses) $before" | awk '{ print $1, $2, $3, $4 - $7, $5 - $8, $6 - $9 }' >>"$dir/losses.tsv"
}

# losses: packets the cluster's queues dropped, TCP segments its hosts
# retransmitted, and segments they sent, so far (summed over the
# namespaces). The sweep writes, per run, "LIB LABEL SIZES DROPS
# RETRANSMITTED SENT" to losses.tsv: where the kernel loses packets the
# flow-level simulator, which has no losses, cannot follow.
losses() {
	local ns d=0 r=0 o=0 x
	for ns in $(ip netns list | awk -v p="$PREFIX-" 'index($1, p) == 1 { print $1 }'); do
		x=$(ip netns exec "$ns" tc -s qdisc show 2>/dev/null | awk '/dropped/ { v = $7; sub(",", "", v); s += v } END { print s + 0 }')
		d=$((d + x))
		x=$(ip netns exec "$ns" nstat -az TcpRetransSegs TcpOutSegs 2>/dev/null | awk '$1 == "TcpRetransSegs" { r = $2 } $1 == "TcpOutSegs" { o = $2 } END { print r + 0, o + 0 }')
		r=$((r + ${x% *}))
		o=$((o + ${x#* }))
	done
	echo "$d $r $o"
}

# mpichrun TIMEOUT ENV=VALUE... -- PROGRAM...: MPICH's hydra over the
# cluster (-genv per setting). Both devices would use shared memory between
# the ranks (they share this machine): TCP on eth0 only, as for Open MPI.
# MPICH's busy-wait yields the core after every poll, as Open MPI's ranks
# do (mpi_yield_when_idle): 64 KiB took 113 instead of 171 ms over UCX.
mpichrun() {
	local timeout=$1
	shift
	local genv=(-genv MPIR_CVAR_POLLS_BEFORE_YIELD 1)
	if [ "$MPICH_DEVICE" = ch3 ]; then
		# (-iface eth0 sets MPIR_CVAR_NEMESIS_TCP_NETWORK_IFACE.)
		genv+=(-genv MPIR_CVAR_NOLOCAL 1)
	else
		genv+=(-genv UCX_TLS tcp,self -genv UCX_NET_DEVICES eth0)
	fi
	while [ "$1" != -- ]; do
		genv+=(-genv "${1%%=*}" "${1#*=}")
		shift
	done
	shift
	"$na" emu run "$PREFIX" --host "$first" --timeout "$timeout" -- \
		mpiexec.hydra -launcher rsh -launcher-exec "$WORK/rsh" -hosts "${hosts//:1/}" -n "$n" -iface eth0 \
		"${genv[@]}" "$@"
}

# mpich LABEL ENV=VALUE...: collbench under MPICH, every size; appends
# "mpich LABEL BYTES MEDIAN MEAN" to results.tsv.
mpich() {
	local label=$1
	shift
	mpichrun "${MPICH_TIMEOUT:-$deftimeout}" "$@" -- "$WORK/collbench-mpich" "$COLL" "$SIZES" "$WARMUP" "$REPS" >"$dir/mpich-$label.out" 2>&1 ||
		echo "tune-proof: MPICH $label failed (see $dir/mpich-$label.out); keeping the sizes it finished" >&2
	result mpich "$label" <"$dir/mpich-$label.out"
}

# mpichround ROUND CONFIG...: MPICH with each configuration once (default,
# rules or fixed-ALG), labelled rROUND-CONFIG, starting with the
# (ROUND-1)th: no configuration always runs first, or last, in a round.
mpichround() {
	local round=$1 c k
	shift
	local cs=("$@")
	for ((k = 0; k < ${#cs[@]}; k++)); do
		c=${cs[(k + round - 1) % ${#cs[@]}]}
		case $c in
		default) mpich "r$round-default" ;;
		rules) mpich "r$round-rules" MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$dir/tuned/mpich-coll.json" ;;
		fixed-*) mpich "r$round-$c" "$MPICH_CVAR=${c#fixed-}" ;;
		esac
	done
}

# mpichmedians: per configuration and size, the median over the rounds of
# each run's median, as the lines "mpich CONFIG BYTES MEDIAN MEAN" that
# table reads (MEAN: the mean of the rounds' medians).
mpichmedians() {
	awk '$1 == "mpich" && $2 ~ /^r[0-9]+-/ {
		c = substr($2, index($2, "-") + 1); k = c SUBSEP $3
		if (!(k in n)) order[++m] = k
		v[k, ++n[k]] = $4
	}
	END {
		for (o = 1; o <= m; o++) {
			k = order[o]; split(k, p, SUBSEP); c = n[k]; s = 0
			for (i = 1; i <= c; i++) { a[i] = v[k, i]; s += a[i] }
			for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			printf "mpich %s %s %s %s\n", p[1], p[2], c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2, s / c
		}
	}' "$dir/results.tsv" >"$dir/mpich-medians.tmp"
	awk '!($1 == "mpich" && $2 !~ /^r[0-9]+-/)' "$dir/results.tsv" >"$dir/results.tmp"
	cat "$dir/mpich-medians.tmp" >>"$dir/results.tmp"
	mv "$dir/results.tmp" "$dir/results.tsv"
	rm -f "$dir/mpich-medians.tmp"
}

result() {
	# A configuration run again replaces its earlier lines of the sizes it
	# measured (KEEP=1; the sweep under LOCK runs one size at a time).
	local new
	new=$(awk -v lib="$1" -v label="$2" '/^result / {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		print lib, label, f["bytes"], f["median_s"], f["mean_s"]
	}')
	awk -v lib="$1" -v label="$2" -v sizes="${OSIZES:-$SIZES}" 'BEGIN { n = split(sizes, s, ","); for (i = 1; i <= n; i++) z[s[i]] = 1 }
		!($1 == lib && $2 == label && $3 in z)' "$dir/results.tsv" >"$dir/results.tmp"
	mv "$dir/results.tmp" "$dir/results.tsv"
	[ -z "$new" ] || echo "$new" >>"$dir/results.tsv"
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

# tunesteps: 'netaware tune' in steps short enough to hold $LOCK (one size;
# above 1 MiB TUNE_CHUNK algorithm names at a time), then one decision from
# the steps' measurements merged (each step measures Open MPI's default
# schedule too: the first of each size is kept).
tunesteps() {
	local parts=$dir/tune-steps k=0 algs chunk done a
	[ "${RESUME:-0}" = 1 ] || rm -rf "$parts"
	mkdir -p "$parts"
	for b in ${SIZES//,/ }; do
		# RESUME=1: the algorithms an earlier (interrupted) run measured
		# at this size are not measured again.
		done=" "
		# (No earlier step is no error: cat's failure must not end the
		# script under pipefail.)
		[ "${RESUME:-0}" != 1 ] || done=" $({ cat "$parts"/*/bench.json 2>/dev/null || true; } |
			jq -r --argjson b "$b" '.measurements[] | select(.size_bytes == $b) | .algorithm.name' | sort -u | tr '\n' ' ')"
		algs=()
		for a in ${TUNE_ALGS//,/ }; do
			[[ "$done" == *" $a "* ]] || algs+=("$a")
		done
		chunk=${#algs[@]}
		[ "$b" -le 1048576 ] || chunk=${TUNE_CHUNK:-3}
		for ((i = 0; i < ${#algs[@]}; i += chunk)); do
			k=$((k + 1))
			a=$(IFS=,; echo "${algs[*]:i:chunk}")
			local out=$parts/$b-$k-$$
			locked "$na" emu run "$PREFIX" --timeout 10m -- netaware tune "$COLL" --quiet --out "$out" --sizes "$b" \
				--reps "$TUNE_REPS" --warmup 1 --segs 8KiB,32KiB,128KiB --algorithms "$a" \
				>"$out.txt" 2>&1 || fail "netaware tune $COLL --sizes $b --algorithms $a failed: $out.txt"
		done
	done
	mkdir -p "$dir/tuned"
	jq -s '.[0] + {sizes_bytes: ([.[].sizes_bytes[]] | unique),
		measurements: ([.[].measurements[]] | unique_by([.collective, .size_bytes, .label])), choices: []}' \
		"$parts"/*/bench.json >"$dir/tune-steps.json" || fail "merging $parts/*/bench.json"
	"$na" tune "$COLL" --from "$dir/tune-steps.json" --out "$dir/tuned" >"$dir/tune.txt" 2>&1 ||
		fail "netaware tune $COLL --from $dir/tune-steps.json failed: $dir/tune.txt"
}

# sweepunit CONFIG...: Open MPI with each configuration: default, rules
# (netaware's ompi-rules.conf) or fixed-ID-SEGMENT.
sweepunit() {
	local c alg seg
	for c in "$@"; do
		case $c in
		default) ompi default ;;
		rules) ompi rules --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "$dir/tuned/ompi-rules.conf" ;;
		fixed-*)
			IFS=- read -r _ alg seg <<<"$c"
			ompi "$c" --mca coll_tuned_use_dynamic_rules 1 --mca "coll_tuned_${COLL}_algorithm" "$alg" \
				--mca "coll_tuned_${COLL}_algorithm_segmentsize" "$seg"
			;;
		esac
	done
}

# confirmrounds BEST ROUND...: side-by-side rounds (default, rules, each
# best fixed configuration); one unit of $LOCK, so the three are timed
# under the same conditions.
confirmrounds() {
	local best=$1 round
	shift
	for round in "$@"; do confirmround "$round" "$best"; done
}

confirmround() {
	local round=$1 f alg seg
	ompi "r$round-default"
	ompi "r$round-rules" --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "$dir/tuned/ompi-rules.conf"
	for f in $2; do
		IFS=- read -r _ alg seg <<<"$f"
		ompi "r$round-$f" --mca coll_tuned_use_dynamic_rules 1 --mca "coll_tuned_${COLL}_algorithm" "$alg" \
			--mca "coll_tuned_${COLL}_algorithm_segmentsize" "$seg"
	done
}

for cl in $CLUSTERS; do
	plat=scripts/tune-proof/$cl.yaml
	[ -f "$plat" ] || fail "no platform $plat"
	dir=$WORK/$cl
	[ "$COLL" = bcast ] || dir=$WORK/$cl-$COLL
	mkdir -p "$dir"
	if [ "${TABLE:-0}" = 1 ]; then
		n=$(jq -r .ranks "$dir/tuned/bench.json")
	else
		[ "${KEEP:-0}" = 1 ] || [ "${RESUME:-0}" = 1 ] || : >"$dir/results.tsv" >"$dir/losses.tsv"
		touch "$dir/results.tsv"
		"$na" emu down "$PREFIX" >/dev/null 2>&1 || true
		"$na" emu up "$plat" --prefix "$PREFIX" >"$dir/emu-up.txt"
		hosts=$("$na" emu status "$PREFIX" --mpi-hosts)
		first=${hosts%%:*}
		n=$(echo "$hosts" | tr ',' '\n' | wc -l)
		echo "== $cl: $n ranks, load: $(uptime | sed 's/.*load/load/')" >&2

		if [ "${TUNE:-1}" = 0 ]; then
			echo "   no tune step (TUNE=0): no rules file" >&2
		elif [ "${REDECIDE:-0}" = 1 ]; then
			echo "   netaware tune $COLL --from the earlier run" >&2
			"$na" tune "$COLL" --from "$dir/tuned/bench.json" --out "$dir/tuned" >"$dir/tune-redecide.txt" 2>&1 ||
				fail "netaware tune $COLL --from failed: $dir/tune-redecide.txt"
		else
			echo "   netaware tune $COLL (live, ${TUNE_WORLD:-tcp} world)" >&2
			if [ "${TUNE_WORLD:-tcp}" = ompi ]; then
				# Open MPI's own MPI_Bcast, each algorithm forced, timed by
				# netaware in the MPI world.
				ompirun 60m "$WORK/netaware-mpi" tune "$COLL" --library --quiet --out "$dir/tuned" --sizes "$SIZES" \
					--reps "$TUNE_REPS" --warmup 1 --segs 8KiB,32KiB,128KiB --algorithms "$TUNE_ALGS" \
					>"$dir/tune.txt" 2>&1 || fail "netaware tune $COLL --library failed: $dir/tune.txt"
			elif [ "${TUNE_WORLD:-tcp}" = mpich ]; then
				# MPICH's own MPI_Bcast, each of its algorithms forced.
				mpichrun 60m -- "$WORK/netaware-mpi" tune "$COLL" --library --quiet --out "$dir/tuned" --sizes "$SIZES" \
					--reps "$TUNE_REPS" --warmup 1 --algorithms "$TUNE_ALGS" \
					>"$dir/tune.txt" 2>&1 || fail "netaware tune $COLL --library failed: $dir/tune.txt"
			elif [ -z "${LOCK:-}" ]; then
				"$na" emu run "$PREFIX" --timeout 60m -- netaware tune "$COLL" --quiet --out "$dir/tuned" --sizes "$SIZES" \
					--reps "$TUNE_REPS" --warmup 1 --segs 8KiB,32KiB,128KiB --algorithms "$TUNE_ALGS" \
					>"$dir/tune.txt" 2>&1 || fail "netaware tune $COLL failed: $dir/tune.txt"
			else
				tunesteps
			fi
		fi

		if [[ " $LIBS " == *" ompi "* ]] && [ "${SWEEP:-1}" = 1 ]; then
			echo "   Open MPI: default, rules, fixed" >&2
			cfgs="default rules"
			[ "${TUNE:-1}" = 1 ] || cfgs=default
			[ "${FIXED:-1}" = 0 ] || for f in ${FIXED_LIST:-$OMPI_FIXED_ALL}; do cfgs="$cfgs fixed-$f"; done
			if [ -z "${LOCK:-}" ]; then
				sweepunit $cfgs
			else
				# One size at a time; above 1 MiB SWEEP_CHUNK configurations
				# per hold of the lock.
				maxb=$(echo "${SIZES//,/ }" | tr ' ' '\n' | sort -n | tail -n 1)
				for b in ${SIZES//,/ }; do
					reps=$((REPS * maxb / b))
					[ "$reps" -le $((5 * REPS)) ] || reps=$((5 * REPS))
					all=()
					for c in $cfgs; do
						[ "${RESUME:-0}" = 1 ] && awk -v c="$c" -v b="$b" '$1 == "ompi" && $2 == c && $3 == b { f = 1 } END { exit !f }' "$dir/results.tsv" ||
							all+=("$c")
					done
					chunk=${#all[@]}
					[ "$b" -le 1048576 ] || chunk=${SWEEP_CHUNK:-6}
					for ((i = 0; i < ${#all[@]}; i += chunk)); do
						OSIZES=$b OREPS=$reps locked sweepunit "${all[@]:i:chunk}"
					done
				done
			fi
		fi
		if [[ " $LIBS " == *" mpich "* ]] && [ "${SWEEP:-1}" = 1 ]; then
			echo "   MPICH ($MPICH_DEVICE): default, rules, fixed; $MPICH_ROUNDS rounds" >&2
			cfgs="default rules"
			[ "${FIXED:-1}" = 0 ] || for alg in $MPICH_FIXED; do cfgs="$cfgs fixed-$alg"; done
			for ((round = 1; round <= MPICH_ROUNDS; round++)); do
				[ "${RESUME:-0}" = 1 ] && grep -q "^mpich r$round-rules " "$dir/results.tsv" && continue
				locked mpichround "$round" $cfgs
			done
			mpichmedians
		fi
		if [[ " $LIBS " == *" ompi "* ]] && [ "${CONFIRM:-3}" -gt 0 ]; then
			# Side by side: the default, the rules and the best fixed
			# configuration of each size, in CONFIRM alternating rounds (the
			# sweep ran each once, minutes apart, on a machine whose load
			# moves; and the best of 27 noisy runs is biased low).
			best=$(awk '$1 == "ompi" && $2 ~ /^fixed/ && (!($3 in b) || $4 < b[$3]) { b[$3] = $4; l[$3] = $2 }
				END { for (k in l) print l[k] }' "$dir/results.tsv" | sort -u)
			echo "   Open MPI side by side, ${CONFIRM:-3} rounds: default rules $(echo $best)" >&2
			# CONFIRM_HOLD (1) rounds per hold of LOCK; RESUME=1 skips the
			# rounds an earlier run finished.
			for ((round = 1; round <= ${CONFIRM:-3}; round += ${CONFIRM_HOLD:-1})); do
				rounds=()
				for ((r = round; r < round + ${CONFIRM_HOLD:-1} && r <= ${CONFIRM:-3}; r++)); do
					[ "${RESUME:-0}" = 1 ] && grep -q "^ompi r$r-rules " "$dir/results.tsv" || rounds+=("$r")
				done
				[ ${#rounds[@]} = 0 ] || locked confirmrounds "$best" "${rounds[@]}"
			done
		fi
		"$na" emu down "$PREFIX" >/dev/null
	fi

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
