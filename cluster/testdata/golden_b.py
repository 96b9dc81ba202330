#!/usr/bin/python3
"""Golden fixtures for cluster/b_* tests (Louvain, modularity, maximum
spanning trees, silhouette), produced with NetworkX and scikit-learn.

Run from the repository root:  /usr/bin/python3 cluster/testdata/golden_b.py
It rewrites cluster/testdata/golden_b.json; CI only reads the JSON.
"""
import json
import os

import networkx as nx
import numpy as np
from sklearn.metrics import silhouette_score

rng = np.random.default_rng(20261121)


def matrix_of(g, n):
    m = [[0.0] * n for _ in range(n)]
    for u, v, d in g.edges(data=True):
        m[u][v] = m[v][u] = float(d.get("weight", 1.0))
    return m


def planted(sizes, win, wout, pout):
    """Dense weighted graph with clear communities: intra-group weights in
    win, inter-group edges with probability pout and weights in wout."""
    n = sum(sizes)
    group = [g for g, s in enumerate(sizes) for _ in range(s)]
    order = rng.permutation(n)  # scatter members so ids do not reveal groups
    gr = nx.Graph()
    gr.add_nodes_from(range(n))
    for a in range(n):
        for b in range(a + 1, n):
            ga, gb = group[a], group[b]
            if ga == gb:
                w = rng.uniform(*win)
            elif rng.uniform() < pout:
                w = rng.uniform(*wout)
            else:
                continue
            gr.add_edge(int(order[a]), int(order[b]), weight=float(w))
    return gr


def sorted_parts(parts):
    return sorted(sorted(int(x) for x in p) for p in parts)


louvain = []
cases = [
    ("planted-3x8", planted([8, 8, 8], (5, 10), (0, 1), 0.5), 1.0),
    ("planted-4-uneven", planted([5, 12, 7, 9], (8, 12), (0.1, 1), 0.3), 1.0),
    ("planted-6x6-res1.5", planted([6] * 6, (3, 6), (0, 0.5), 0.4), 1.5),
    ("ring-of-cliques", nx.ring_of_cliques(6, 5), 1.0),
]
for name, g, res in cases:
    n = g.number_of_nodes()
    # Louvain is randomised; with communities this clear every seed must
    # agree, which the script checks before writing the fixture.
    runs = [sorted_parts(nx.community.louvain_communities(g, weight="weight", resolution=res, seed=s)) for s in range(5)]
    assert all(r == runs[0] for r in runs), name
    parts = runs[0]
    q = nx.community.modularity(g, parts, weight="weight", resolution=res)
    louvain.append({"name": name, "n": n, "w": matrix_of(g, n), "resolution": res,
                    "communities": parts, "modularity": q})

# Modularity of fixed partitions (including poor ones), any resolution.
modularity = []
kc = nx.karate_club_graph()
club = [[v for v in kc if kc.nodes[v]["club"] == c] for c in ("Mr. Hi", "Officer")]
for res in (0.5, 1.0, 2.0):
    modularity.append({"name": "karate-club-split-res%g" % res, "n": kc.number_of_nodes(),
                       "w": matrix_of(kc, kc.number_of_nodes()), "resolution": res,
                       "communities": sorted_parts(club),
                       "modularity": nx.community.modularity(kc, club, weight="weight", resolution=res)})
g = planted([5, 5, 5], (1, 3), (0, 2), 0.8)
bad = [list(range(0, 15, 2)), list(range(1, 15, 2))]
modularity.append({"name": "planted-arbitrary-split", "n": 15, "w": matrix_of(g, 15), "resolution": 1.0,
                   "communities": sorted_parts(bad),
                   "modularity": nx.community.modularity(g, bad, weight="weight", resolution=1.0)})

# Maximum spanning trees on graphs with distinct weights (unique tree).
mst = []
for name, n, p in (("complete-10", 10, 1.0), ("complete-25", 25, 1.0), ("sparse-30", 30, 0.15)):
    g = nx.gnp_random_graph(n, p, seed=int(rng.integers(1 << 30)))
    ws = rng.permutation(g.number_of_edges()) + rng.uniform(0, 0.5)
    for (u, v), w in zip(g.edges(), ws):
        g[u][v]["weight"] = float(w) + 1.0
    t = nx.maximum_spanning_tree(g, weight="weight", algorithm="kruskal")
    w = [[None] * n for _ in range(n)]  # None = no edge (missing)
    for i in range(n):
        w[i][i] = 0.0
    for u, v, d in g.edges(data=True):
        w[u][v] = w[v][u] = d["weight"]
    mst.append({"name": name, "n": n, "w": w,
                "edges": sorted(sorted([int(u), int(v)]) for u, v in t.edges()),
                "total": float(sum(d["weight"] for _, _, d in t.edges(data=True)))})

# Silhouette on precomputed distances (the parameter-search criterion).
silhouette = []
for name, k, n in (("blobs-3", 3, 20), ("blobs-5", 5, 40)):
    centers = rng.uniform(0, 10, size=(k, 2))
    lab = rng.integers(0, k, size=n)
    lab[:k] = np.arange(k)
    x = centers[lab] + rng.normal(0, 1.0, size=(n, 2))
    d = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    for variant, labels in (("true", lab), ("shuffled", rng.permutation(lab))):
        silhouette.append({"name": name + "-" + variant, "n": n, "d": d.tolist(),
                           "labels": [int(v) for v in labels],
                           "silhouette": float(silhouette_score(d, labels, metric="precomputed"))})

out = {"generator": "cluster/testdata/golden_b.py", "networkx": nx.__version__,
       "louvain": louvain, "modularity": modularity, "mst": mst, "silhouette": silhouette}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden_b.json")
with open(path, "w") as f:
    json.dump(out, f, indent=None, separators=(",", ":"))
    f.write("\n")
print("wrote", path)
