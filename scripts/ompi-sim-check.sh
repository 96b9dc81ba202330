#!/usr/bin/env bash
# Simulated against real Open MPI broadcasts, algorithm by algorithm
# (docs/validation.md, issue 11.3).
#
#   scripts/ompi-sim-check.sh WORK [CLUSTER...]
#
# WORK is the directory of a scripts/tune-proof.sh run: WORK/CLUSTER/results.tsv
# holds the median real time of Open MPI's MPI_Bcast with every fixed
# algorithm (coll_tuned_bcast_algorithm 1-9) at every segment size (0, 8,
# 32, 128 KiB) on the emulated cluster scripts/tune-proof/CLUSTER.yaml. This
# script runs the same algorithms in netaware's simulator on the same
# platform file ('netaware bench bcast --platform', same sizes, as many
# repetitions) and prints, per cluster, a Markdown table of simulated / real
# per algorithm and size, and the share within 15 %, then each miss with
# the packets its real run lost (WORK/CLUSTER/losses.tsv, from sweeps that
# counted them). A second table does
# the same for netaware's own live run of those algorithms (the 'netaware
# tune bcast' of tune-proof.sh, over netaware's TCP transport on the same
# cluster: WORK/CLUSTER/tuned/bench.json, medians). No root needed.
#
# The mapping is coll.OMPIAlgorithm's, with what a forced algorithm runs:
# 1 linear, 2 chain with coll_tuned_bcast_algorithm_chain_fanout (default
# 4: k-chain k=4), 3 pipeline (segment 0: one segment, the chain), 4
# split-binary, 5 binary, 6 binomial, 7 knomial (radix 4), 8
# scatter-allgather, 9 scatter-allgather-ring.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
[ $# -ge 1 ] || { echo "usage: $0 WORK [CLUSTER...]" >&2; exit 2; }
WORK=$1
shift
CLUSTERS=${*:-$(cd "$WORK" && ls -d star-* 2>/dev/null | tr '\n' ' ')}
[ -n "$CLUSTERS" ] || { echo "ompi-sim-check: no cluster results in $WORK" >&2; exit 1; }
na=$(mktemp -d /tmp/ompi-sim-check.XXXXXX)/netaware
go build -o "$na" ./cmd/netaware

label() { # ID SEG -> netaware's label
	local id=$1 seg=$2 s=""
	[ "$seg" != 0 ] && s="seg=$seg"
	case $id in
	1) echo linear ;;
	2) echo "k-chain(${s:+$s,}k=4)" ;;
	3) if [ "$seg" = 0 ]; then echo chain; else echo "pipeline($s)"; fi ;;
	4) echo "split-binary${s:+($s)}" ;;
	5) echo "binary${s:+($s)}" ;;
	6) echo "binomial${s:+($s)}" ;;
	7) echo "knomial(${s:+$s,}k=4)" ;;
	8) echo scatter-allgather ;;
	9) echo scatter-allgather-ring ;;
	esac
}

for cl in $CLUSTERS; do
	res=$WORK/$cl/results.tsv
	[ -s "$res" ] || { echo "ompi-sim-check: no $res" >&2; exit 1; }
	sizes=$(awk '$1 == "ompi" && $2 ~ /^fixed/ { print $3 }' "$res" | sort -nu | paste -sd,)
	reps=$(awk '/^result / { for (i = 2; i <= NF; i++) if ($i ~ /^reps=/) { sub("reps=", "", $i); print $i } }' "$WORK/$cl"/ompi-fixed-*.out | sort -n | head -n 1)
	"$na" bench bcast --quiet --json --platform "scripts/tune-proof/$cl.yaml" --sizes "$sizes" --reps "${reps:-3}" \
		--algorithms linear,chain,k-chain,pipeline,split-binary,binary,binomial,knomial,scatter-allgather,scatter-allgather-ring \
		--segs 8192,32768,131072 2>/dev/null >"$WORK/$cl/sim.json"
	# One line per series and size: label bytes mean.
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["series"]:
    for b, t in zip(d["sizes_bytes"], s["mean_s"]):
        print(s["label"], b, t)
' "$WORK/$cl/sim.json" >"$WORK/$cl/sim.tsv"
	echo "### $cl"
	echo
	echo "| Open MPI algorithm | netaware | $(echo "$sizes" | tr ',' '\n' | awk '{ printf "%s%s", (NR > 1 ? " | " : ""), ($1 >= 1048576 ? $1 / 1048576 " MiB" : $1 / 1024 " KiB") }') |"
	echo "|---|---|$(echo "$sizes" | tr ',' '\n' | awk '{ printf "---|" }')"
	for id in 1 2 3 4 5 6 7 8 9; do
		segs="0 8192 32768 131072"
		case $id in 1 | 8 | 9) segs=0 ;; esac
		for seg in $segs; do
			l=$(label $id $seg)
			awk -v key="fixed-$id-$seg" -v l="$l" -v sizes="$sizes" -v id="$id" -v seg="$seg" '
			FILENAME == ARGV[1] { if ($1 == "ompi" && $2 == key) real[$3] = $4; next }
			$1 == l { sim[$2] = $3 }
			END {
				printf "| %d seg %d | %s |", id, seg, l
				n = split(sizes, s, ",")
				for (i = 1; i <= n; i++) {
					b = s[i]
					if (real[b] == "" || sim[b] == "" || real[b] == 0) { printf " - |"; continue }
					r = sim[b] / real[b]
					printf " %.3g / %.3g s = %s%.2f%s |", sim[b], real[b], (r < 0.85 || r > 1.15 ? "**" : ""), r, (r < 0.85 || r > 1.15 ? "**" : "")
				}
				printf "\n"
			}' "$res" "$WORK/$cl/sim.tsv"
		done
	done | tee "$WORK/$cl/sim-vs-real.md"
	# The cells marked above (from the unrounded ratio) are the misses.
	awk '{ for (i = 1; i <= NF; i++) if ($i == "=") { n++; if ($(i + 1) !~ /\*/) ok++ } }
		END { printf "\nsimulated within 15 %% of real: %d of %d\n\n", ok, n }' "$WORK/$cl/sim-vs-real.md"
	# Each miss with the losses of its real run (tune-proof.sh's losses.tsv:
	# the simulator has none; a run of several sizes counts them together).
	if [ -s "$WORK/$cl/losses.tsv" ]; then
		echo "misses, with the packets their real run lost:"
		echo
		awk -F'|' -v sizes="$sizes" '
		FILENAME == ARGV[1] { split($0, f, " "); if (f[1] == "ompi") { lost[f[2], f[3]] = f[4] " drops, " f[5] " of " f[6] " segments retransmitted"; runs[f[2]] = runs[f[2]] " " f[3] } next }
		/\*\*/ {
			split($2, a, " ")
			key = "fixed-" a[1] "-" a[3]
			n = split(sizes, s, ",")
			for (i = 1; i <= n; i++) {
				if ($(i + 3) !~ /\*\*/) continue
				c = $(i + 3); sub(/.*= /, "", c); gsub(/[* ]/, "", c)
				what = "not counted"
				m = split(runs[key], r, " ")
				for (j = 1; j <= m; j++) if (index("," r[j] ",", "," s[i] ",")) what = lost[key, r[j]] (r[j] == s[i] ? "" : " (run of " r[j] " bytes)")
				printf "- %s (%s) at %s bytes: %s; %s\n", key, $3 ~ / $/ ? substr($3, 2, length($3) - 2) : $3, s[i], c, what
			}
		}' "$WORK/$cl/losses.tsv" "$WORK/$cl/sim-vs-real.md"
		echo
	fi
	# A sweep without the tune step (tune-proof.sh TUNE=0) has no live run.
	[ -s "$WORK/$cl/tuned/bench.json" ] || continue
	echo "netaware's own algorithms live (tuned/bench.json, medians) against the simulator:"
	echo
	python3 -c '
import json, sys
live = json.load(open(sys.argv[1]))
sim = {}
for line in open(sys.argv[2]):
    l, b, t = line.split()
    sim[(l, int(b))] = float(t)
sizes = live["sizes_bytes"]
fmt = lambda b: "%d MiB" % (b >> 20) if b >= 1 << 20 else "%d KiB" % (b >> 10)
print("| algorithm | " + " | ".join(fmt(b) for b in sizes) + " |")
print("|---|" + "---|" * len(sizes))
rows, ok, n = {}, 0, 0
for m in live["measurements"]:
    rows.setdefault(m["label"], {})[m["size_bytes"]] = m["stats"]["median_s"]
for l, r in rows.items():
    cells = []
    for b in sizes:
        s, t = sim.get((l, b)), r.get(b)
        if not s or not t:
            cells.append("-")
            continue
        q = s / t
        n += 1
        ok += 0.85 <= q <= 1.15
        mark = "" if 0.85 <= q <= 1.15 else "**"
        cells.append("%.3g / %.3g s = %s%.2f%s" % (s, t, mark, q, mark))
    print("| %s | %s |" % (l, " | ".join(cells)))
print("\nsimulated within 15 %% of netaware live: %d of %d\n" % (ok, n))
' "$WORK/$cl/tuned/bench.json" "$WORK/$cl/sim.tsv" | tee "$WORK/$cl/sim-vs-live.md"
done
