#!/usr/bin/env bash
# What the shared-memory path changes in discover's intra-host figures
# (docs/benchmarks.md): 'netaware discover' with 4 ranks on this machine,
# alternately with the shared-memory path (default) and over loopback TCP
# (NETAWARE_SHM=0), RUNS times each; medians of the intra-host PLogP
# parameters of model.json: L, g(0), g(1 KiB), g(64 KiB), g(1 MiB), o_s(1 MiB), o_r(1 MiB).
#
#   scripts/shm-discover.sh          # about a minute
#
# Environment: RUNS (default 5), RANKS (4), WORK (default a new temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
RANKS=${RANKS:-4}
WORK=${WORK:-$(mktemp -d /tmp/shm-discover.XXXXXX)}
go build -o "$WORK/netaware" ./cmd/netaware
echo "load before: $(uptime)"
for r in $(seq 1 "$RUNS"); do
	for m in 1 0; do
		NETAWARE_SHM=$m timeout 300 "$WORK/netaware" launch -n "$RANKS" -- "$WORK/netaware" discover -q \
			--out "$WORK/shm$m-$r" >/dev/null 2>&1
	done
done
echo "load after: $(uptime)"
python3 - "$WORK" "$RUNS" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
def figs(path):
    gp = json.load(open(path))["plogp"]["group_pairs"][0]
    pts = {p["bytes"]: p for p in gp["points"]}
    return {"L": gp["L_s"], "g(0)": pts[0]["g_s"], "g(1KiB)": pts[1024]["g_s"], "g(64KiB)": pts[65536]["g_s"],
            "g(1MiB)": pts[1 << 20]["g_s"], "o_s(1MiB)": pts[1 << 20]["os_s"], "o_r(1MiB)": pts[1 << 20]["or_s"]}
res = {m: [figs(f"{work}/shm{m}-{r}/model.json") for r in range(1, runs + 1)] for m in (1, 0)}
print(f"{runs} runs each, medians (µs)")
print("| figure | shared memory | loopback TCP | TCP / shm |")
print("|---|---:|---:|---:|")
for k in res[1][0]:
    a = statistics.median(x[k] for x in res[1]); b = statistics.median(x[k] for x in res[0])
    print(f"| {k} | {a*1e6:.2f} | {b*1e6:.2f} | {b/a:.2f} |")
PY
