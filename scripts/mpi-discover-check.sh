#!/usr/bin/env bash
# Acceptance check of the MPI world (issue 11.1): 'mpirun -n N netaware
# discover' with a netaware built with -tags mpi writes the same files as
# the default build (TCP world) started by the same mpirun.
#
#   scripts/mpi-discover-check.sh            # about a minute on 2 cores
#
# Builds three binaries (default; -tags mpi for Open MPI; -tags mpi,mpich),
# runs discover on N ranks of this machine with each (the TCP one and the
# Open MPI one under mpirun.openmpi, the MPICH one under mpiexec.mpich),
# once with host names (deterministic: one host) and once --blind (every
# level from measurement, so the levels found depend on noise), and checks:
#   - the same list of files;
#   - with host names: topology.json and dataset.json have the same
#     structure (every key path, array indices and the optional warnings
#     about implausible values ignored), the same levels
#     and groups, and the same pairs measured (PLogP and RTT, by rank);
#   - --blind: the same top-level keys (the levels found, which noise
#     decides, shape the rest);
#   - both: the same pairs_total; the dataset's world kind is tcp / mpi.
# It prints the figures (levels, pairs measured, latency within the host)
# of every run. Exit status 1 on a difference.
#
# Environment: N (ranks, default 8), WORK (directory, default a new one).
# Needs Go, jq, Open MPI and MPICH with their pkg-config files.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-8}
WORK=${WORK:-$(mktemp -d /tmp/mpi-discover.XXXXXX)}
mkdir -p "$WORK"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for t in jq mpirun.openmpi mpiexec.mpich pkg-config; do
	command -v "$t" >/dev/null || { echo "mpi-discover-check: $t missing" >&2; exit 2; }
done

echo "building into $WORK"
go build -o "$WORK/netaware-tcp" ./cmd/netaware
go build -tags mpi -o "$WORK/netaware-ompi" ./cmd/netaware
go build -tags mpi,mpich -o "$WORK/netaware-mpich" ./cmd/netaware

run() { # name mode(args...)
	local name=$1; shift
	local out="$WORK/$name"
	rm -rf "$out"
	case $name in
	tcp*) timeout 300 mpirun.openmpi --oversubscribe -n "$N" -x NETAWARE_COORDINATOR=127.0.0.1:$((20000 + RANDOM % 20000)) \
		-x NETAWARE_TOKEN=check "$WORK/netaware-tcp" discover --out "$out" "$@" >"$out.log" 2>&1 ;;
	ompi*) timeout 300 mpirun.openmpi --oversubscribe -n "$N" "$WORK/netaware-ompi" discover --out "$out" "$@" >"$out.log" 2>&1 ;;
	mpich*) timeout 300 mpiexec.mpich -n "$N" "$WORK/netaware-mpich" discover --out "$out" "$@" >"$out.log" 2>&1 ;;
	esac || { echo "$name failed:"; tail -20 "$out.log"; exit 1; }
}

# Warnings (implausible measurements, which noise decides) are left out.
shape() { jq -S '[paths | map(if type == "number" then "#" else . end) | join(".") | select(test("warnings") | not)] | unique' "$1"; }
pairs() { jq -c '[(.plogp.pairs // [])[] | [.a, .b]], [(.rtt.pairs // [])[] | [.a, .b]]' "$1"; }

fail=0
differ() { echo "DIFFERENT: $*"; fail=1; }

for mode in hosts blind; do
	args=()
	[ "$mode" = blind ] && args=(--blind)
	for w in tcp ompi mpich; do run "$w-$mode" "${args[@]}"; done
	echo
	echo "== discover ${args[*]:-(host names)} on $N ranks"
	printf '%-6s %-6s %-28s %-14s %s\n' world kind levels "pairs measured" "latency within the host level"
	for w in tcp ompi mpich; do
		d="$WORK/$w-$mode"
		printf '%-6s %-6s %-28s %-14s %s\n' "$w" "$(jq -r .world.kind "$d/dataset.json")" \
			"$(jq -c '[.levels[] | .groups | length]' "$d/topology.json")" \
			"$(jq -r '"\(.measurements.pairs_measured)/\(.measurements.pairs_total)"' "$d/topology.json")" \
			"$(grep -m1 -E '^(level-1|host|all) ' "$d.log" | awk '{print $4}')"
	done
	for w in ompi mpich; do
		a="$WORK/tcp-$mode" b="$WORK/$w-$mode"
		[ "$(cd "$a" && ls | sort)" = "$(cd "$b" && ls | sort)" ] || differ "$w $mode: files $(cd "$a" && ls | tr '\n' ' ') vs $(cd "$b" && ls | tr '\n' ' ')"
		for f in topology.json dataset.json; do
			if [ "$mode" = hosts ]; then
				[ "$(shape "$a/$f")" = "$(shape "$b/$f")" ] || differ "$w $mode: structure of $f: $(diff <(shape "$a/$f") <(shape "$b/$f") | tr '\n' ' ')"
			else # the levels found shape the schedule's sections
				[ "$(jq -c keys "$a/$f")" = "$(jq -c keys "$b/$f")" ] || differ "$w $mode: keys of $f"
			fi
		done
		[ "$(jq .measurements.pairs_total "$a/topology.json")" = "$(jq .measurements.pairs_total "$b/topology.json")" ] || differ "$w $mode: pairs_total"
		[ "$(jq -r .world.kind "$b/dataset.json")" = mpi ] || differ "$w $mode: world kind $(jq -r .world.kind "$b/dataset.json")"
		if [ "$mode" = hosts ]; then
			[ "$(jq -c .levels "$a/topology.json")" = "$(jq -c .levels "$b/topology.json")" ] || differ "$w: levels"
			[ "$(pairs "$a/dataset.json")" = "$(pairs "$b/dataset.json")" ] || differ "$w: pairs measured $(pairs "$a/dataset.json") vs $(pairs "$b/dataset.json")"
		fi
	done
done
echo
[ $fail = 0 ] && echo "same files, structure and pairs over TCP, Open MPI and MPICH (files in $WORK)"
exit $fail
