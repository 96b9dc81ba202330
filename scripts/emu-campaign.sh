#!/usr/bin/env bash
# emu-campaign.sh: issue 17's acceptance campaign of `netaware discover` on
# emulated clusters (docs/emu.md, "Discovery on emulated clusters").
#
# For each cluster: `netaware emu up`, iperf3 once across every trunk (from
# a host of one switch to a host of the other, 5 s), then RUNS discoveries
# at the standard level, named and --blind alternating, each scored:
#   - switch level (or the truth's bandwidth-cluster level where the
#     platform names no switch level): best NMI of any found level
#     (`netaware topo compare --json`), >= 0.99 counts;
#   - trunks: the tree edge of topology.json that cuts the ranks as the
#     trunk does must carry a bandwidth within 15% of the trunk's iperf3;
#   - pairs measured of all (topology.json), wall time, exit code, load.
# Rows go to OUT/runs.tsv as they come, a summary per cluster and mode to
# OUT/summary.txt at the end (also of a partial campaign: rerun with -s).
# Every cluster is taken down again, also on Ctrl-C.
#
# Root is needed (netaware emu). Run it at normal priority on an idle
# machine: it measures live timing. On a shared machine set LOCK to a lock
# file (LOCK=/tmp/netaware-live.lock): each discover run and each iperf3 measurement
# then holds it (flock), so live timings of others do not overlap them; the
# load and wall time are taken once it is held. With LOCK_UNIT=S as well,
# a hold goes on over further runs until it is S seconds old (under a busy
# lock, taking it per run left one run every 10 minutes). The full campaign (4 clusters, 20
# named + 20 blind each, at most 60 s a run) takes about 2.5 hours.
#
# SIM=1 runs the same campaign in the simulator instead, as issue 17 asks:
# `netaware discover --platform FILE --noise realistic --seed RUN`, with
# the trunks scored against the platform's own bandwidths (no root, no
# emu, no iperf3).
#
#   scripts/emu-campaign.sh -n 40 -o /tmp/campaign              # the full campaign (20 named + 20 blind each)
#   SIM=1 scripts/emu-campaign.sh -n 40 -o /tmp/sim-campaign    # the same in the simulator
#   scripts/emu-campaign.sh -n 4 -o /tmp/c star-3x4 chain-4x3   # 2 named + 2 blind on two clusters
#   scripts/emu-campaign.sh -s -o /tmp/campaign                 # summary of runs.tsv only
#   LOCK=/tmp/netaware-live.lock LOCK_UNIT=240 scripts/emu-campaign.sh -n 40 -o /tmp/c chain-4x3
set -euo pipefail

# hold takes $LOCK (if set) unless it is held; release drops it once the
# hold is LOCK_UNIT seconds old (at once by default; always with -f).
# Children inherit the descriptor, but flock -u ends the lock for all.
lock_fd="" lock_t0=0
hold() {
	[ -n "${LOCK:-}" ] && [ -z "$lock_fd" ] || return 0
	exec {lock_fd}>>"$LOCK"
	flock "$lock_fd"
	lock_t0=$SECONDS
}
release() {
	[ -n "$lock_fd" ] || return 0
	if [ "${1:-}" = -f ] || ((SECONDS - lock_t0 >= ${LOCK_UNIT:-0})); then
		flock -u "$lock_fd"
		exec {lock_fd}>&-
		lock_fd=""
	fi
}

runs=20
out=/tmp/emu-campaign
prefix=ec # cluster C gets PREFIX plus C's last two digits
nw=$(command -v netaware || true)
summary_only=false
usage() {
	sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	echo "usage: $0 [-n RUNS] [-o OUTDIR] [-p PREFIX] [-b NETAWARE] [-s] [CLUSTER...]" >&2
	exit 2
}
while getopts "n:o:p:b:sh" opt; do
	case $opt in
	n) runs=$OPTARG ;;
	o) out=$OPTARG ;;
	p) prefix=$OPTARG ;;
	b) nw=$OPTARG ;;
	s) summary_only=true ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
clusters=("$@")
[ ${#clusters[@]} -gt 0 ] || clusters=(star-2x6 star-3x4 chain-3x4 chain-4x3)
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
tsv=$out/runs.tsv

summarize() {
	python3 - "$tsv" <<'EOF' | tee "$(dirname "$1")/summary.txt"
import sys, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if not l.startswith("cluster")]
by = collections.OrderedDict()
for r in rows:
    by.setdefault((r[0], r[1]), []).append(r)
print("| cluster | mode | runs | switch NMI >= 0.99 | trunks within 15% of iperf3 | aborted | pairs measured of all | wall s | load |")
print("|---|---|---|---|---|---|---|---|---|")
for (c, m), rs in by.items():
    ok = sum(1 for r in rs if r[3] == "0" and float(r[6]) >= 0.99)
    tr = sum(1 for r in rs if r[9] == "yes")
    ab = sum(1 for r in rs if r[3] != "0")
    pairs = [int(r[7]) for r in rs if r[3] == "0"]
    tot = rs[0][8]
    wall = [float(r[4]) for r in rs]
    load = [float(r[5]) for r in rs]
    rng = lambda v, f: (f % min(v) + "-" + f % max(v)) if v else "-"
    print(f"| {c} | {m} | {len(rs)} | {ok}/{len(rs)} | {tr}/{len(rs)} | {ab} | {rng(pairs, '%d')} of {tot} | {rng(wall, '%.0f')} | {rng(load, '%.1f')} |")
EOF
}

if $summary_only; then
	summarize "$tsv"
	exit 0
fi
sim=${SIM:-0}
[ -n "$nw" ] || { echo "$0: no netaware binary (-b PATH)" >&2; exit 1; }
if [ "$sim" != 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "$0: netaware emu needs root" >&2; exit 1; }
	command -v iperf3 >/dev/null || { echo "$0: iperf3 is not installed" >&2; exit 1; }
fi
[ -f "$tsv" ] || printf 'cluster\tmode\trun\texit\twall_s\tload1\tswitch_nmi\tpairs\tpairs_total\ttrunks_ok\ttrunks\n' >"$tsv"

up=""
cleanup() {
	release -f
	[ -z "$up" ] || "$nw" emu down "$up" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for c in "${clusters[@]}"; do
	file=$here/emu/testdata/$c.yaml
	[ -f "$file" ] || { echo "$0: no platform file $file" >&2; exit 1; }
	p=$prefix$(echo "$c" | tr -dc '0-9' | tail -c 2) # prefixes are 1-6 characters
	if [ "$sim" = 1 ]; then
		# What the scoring reads of 'emu status --json' (hosts with their
		# switch and ranks, the switch links), and the platform's trunk
		# rates in place of iperf3 (one rank per host in host order, as
		# the four clusters have).
		"$nw" platform show "$file" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
hosts, r = [], 0
for g in d["hosts_by_switch"]:
    for i in range(g["count"]):
        hosts.append({"name": "%s+%d" % (g["first"], i), "switch": g["switch"], "ranks": [r]})
        r += 1
links = [{"kind": "switch", "a": l["a"], "b": l["b"], "bps": l["link"]["bandwidth_Bps"] * 8} for l in d["switch_links"]]
json.dump({"hosts": hosts, "links": links}, open(sys.argv[1], "w"))
with open(sys.argv[2], "w") as f:
    for l in links:
        f.write("%s\t%s\t-\t-\t%.1f\n" % (l["a"], l["b"], l["bps"]))
' "$out/$c.status.json" "$out/$c.iperf3.tsv"
	else
	"$nw" emu down "$p" >/dev/null 2>&1 || true
	"$nw" emu up "$file" --prefix "$p" >"$out/$c.up.txt"
	up=$p
	"$nw" emu status "$p" --json >"$out/$c.status.json"
	# iperf3 across each trunk, IPERF_REPS times (3): a host of the link's
	# first switch sends to a host of its second, and the highest
	# receiver's rate counts: one 5 s run at load 20 read 83.5 Mbit/s
	# on a trunk that gives 93-95 (the runs' labels were scored against it).
	: >"$out/$c.iperf3.tsv"
	for link in $(jq -r '.links[] | select(.kind != "host") | .a + ":" + .b' "$out/$c.status.json"); do
		sa=${link%%:*} sb=${link##*:}
		ha=$(jq -r --arg s "$sa" '[.hosts[] | select(.switch == $s)][0].name' "$out/$c.status.json")
		hb=$(jq -r --arg s "$sb" '[.hosts[] | select(.switch == $s)][0] | .name + " " + .address' "$out/$c.status.json")
		bps=0
		for ((i = 0; i < ${IPERF_REPS:-3}; i++)); do
			"$nw" emu run "$p" --host "${hb% *}" -- iperf3 -s -1 -D >/dev/null
			sleep 0.5
			hold
			b=$("$nw" emu run "$p" --host "$ha" -- iperf3 -c "${hb#* }" -t 5 -J | jq '.end.sum_received.bits_per_second')
			release
			bps=$(awk -v a="$bps" -v b="$b" 'BEGIN{printf "%.1f", (b + 0 > a + 0 ? b : a)}')
		done
		printf '%s\t%s\t%s\t%s\t%s\n' "$sa" "$sb" "$ha" "${hb% *}" "$bps" >>"$out/$c.iperf3.tsv"
		echo "$c: iperf3 $ha -> ${hb% *} across $sa-$sb: $(awk -v b="$bps" 'BEGIN{printf "%.1f", b/1e6}') Mbit/s"
	done
	fi
	for ((r = 1; r <= runs; r++)); do
		mode=named
		flag=()
		if ((r % 2 == 0)); then mode=blind flag=(--blind); fi
		d=$out/$c-$mode-$r
		rm -rf "$d"
		hold
		load=$(cut -d' ' -f1 /proc/loadavg)
		t0=$(date +%s.%N)
		set +e
		if [ "$sim" = 1 ]; then
			timeout 300 "$nw" discover -q --platform "$file" --noise realistic --seed "$r" "${flag[@]}" --out "$d" >"$d.log" 2>&1
		else
			"$nw" emu run "$p" --timeout 300s -- "$nw" discover -q "${flag[@]}" --out "$d" >"$d.log" 2>&1
		fi
		rc=$?
		set -e
		wall=$(echo "$(date +%s.%N) - $t0" | bc)
		release
		row=$(python3 - "$c" "$mode" "$r" "$rc" "$wall" "$load" "$d" "$file" "$out/$c.status.json" "$out/$c.iperf3.tsv" "$nw" <<'EOF'
import json, subprocess, sys
c, mode, r, rc, wall, load, d, truth, status, iperf, nw = sys.argv[1:]
nmi, pairs, total, tok, detail = 0.0, -1, -1, "no", "-"
if rc == "0":
    cmp = json.loads(subprocess.run([nw, "topo", "compare", d + "/topology.json", "--truth", truth, "--json"], capture_output=True, text=True, check=True).stdout)
    # The switch level; a platform whose truth names the bandwidth groups
    # instead (zero-latency-split: its switches are those groups) is
    # scored on them.
    scored = [l for l in cmp["levels"] if l["truth"] == "switch"] or [l for l in cmp["levels"] if l["truth"] == "bandwidth-cluster"]
    nmi = max((l["nmi"] for l in scored), default=0.0)
    topo = json.load(open(d + "/topology.json"))
    pairs, total = topo["measurements"]["pairs_measured"], topo["measurements"]["pairs_total"]
    st = json.load(open(status))
    ranks_of = {h["switch"]: [] for h in st["hosts"]}
    for h in st["hosts"]:
        ranks_of[h["switch"]] += h["ranks"]
    sw_links = [(l["a"], l["b"]) for l in st["links"] if l["kind"] != "host"]
    # The ranks on a's side of each trunk (switch links form a tree).
    def side(a, b):
        seen, todo = {a}, [a]
        while todo:
            s = todo.pop()
            for x, y in sw_links:
                for u, v in ((x, y), (y, x)):
                    if u == s and v not in seen and {u, v} != {a, b}:
                        seen.add(v); todo.append(v)
        return frozenset(r for s in seen for r in ranks_of[s])
    allr = frozenset(r for v in ranks_of.values() for r in v)
    # Each tree edge of topology.json, as the ranks on one side.
    tree = topo.get("tree") or {"nodes": [], "edges": []}
    adj = {}
    for e in tree["edges"]:
        adj.setdefault(e["a"], []).append(e["b"]); adj.setdefault(e["b"], []).append(e["a"])
    rank_of = {n["id"]: n.get("rank") for n in tree["nodes"]}
    def cut(a, b):
        seen, todo = {a}, [a]
        while todo:
            x = todo.pop()
            for y in adj.get(x, []):
                if y not in seen and not (x == a and y == b):
                    seen.add(y); todo.append(y)
        return frozenset(rank_of[x] for x in seen if rank_of.get(x) is not None)
    edges = {}
    for e in tree["edges"]:
        s = cut(e["a"], e["b"])
        edges[min(s, allr - s, key=sorted)] = e.get("bandwidth_Bps")
    ok, parts = True, []
    for line in open(iperf):
        sa, sb, ha, hb, bps = line.split("\t")
        want = float(bps) / 8
        s = side(sa, sb)
        got = edges.get(min(s, allr - s, key=sorted))
        good = got is not None and abs(got - want) <= 0.15 * want
        ok = ok and good
        parts.append(f"{sa}-{sb}:" + ("none" if got is None else f"{got*8/1e6:.1f}") + f"/{want*8/1e6:.1f}")
    tok, detail = ("yes" if ok else "no"), ",".join(parts)
print("\t".join([c, mode, r, rc, f"{float(wall):.1f}", load, f"{nmi:.4f}", str(pairs), str(total), tok, detail]))
EOF
)
		echo "$row" >>"$tsv"
		echo "$row"
	done
	release -f
	[ "$sim" = 1 ] || "$nw" emu down "$p" >/dev/null
	up=""
done
summarize "$tsv"
