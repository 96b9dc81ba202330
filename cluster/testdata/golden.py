#!/usr/bin/python3
"""Golden fixtures for the "Algorithms A" half of package cluster.

Run with Debian's Python (bookworm: SciPy 1.10.1, scikit-learn 1.2.1,
networkx 2.8.8):

    apt-get update && apt-get install -y python3-sklearn python3-scipy python3-networkx
    apt-get install -y --no-install-recommends r-cran-dbscan   # HDBSCAN reference
    /usr/bin/python3 cluster/testdata/golden.py

It writes cluster/testdata/a_golden.json, which the Go tests read (CI has no
Python). Every distance matrix is stored in full so Go works on exactly the
same float64 values. Reference outputs:

  * scipy.cluster.hierarchy.linkage for single/complete/average/weighted/ward
    (ward only on Euclidean sets), fcluster maxclust for k = 2..8 and
    fcluster distance at several heights (including exact merge heights,
    to pin the "<=" convention);
  * sklearn.cluster.DBSCAN(metric="precomputed") for several eps/min_samples;
  * sklearn.cluster.SpectralClustering(affinity="precomputed") on a Gaussian
    affinity exp(-d^2 / (2 sigma^2)) of well-separated sets;
  * sklearn.cluster.KMeans on the point coordinates of the blob sets;
  * HDBSCAN: Debian's scikit-learn 1.2 has no HDBSCAN and the hdbscan
    package is not in Debian. Two references instead: (a) the first stages
    with numpy/SciPy: core distances (k-th smallest distance, self included,
    as scikit-learn) and the single-linkage merge heights of the
    mutual-reachability matrix; (b) the labels of R's dbscan::hdbscan
    (Hahsler et al., Debian r-cran-dbscan 1.1-11), whose minPts is both
    scikit-learn's min_cluster_size and min_samples, with EOM selection.
    Labels are compared up to renaming (R numbers noise 0; stored as -1).
"""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist, squareform
from sklearn.cluster import DBSCAN, KMeans, SpectralClustering
from sklearn.datasets import make_blobs


def topo_points(seed):
    """32 ranks: 2 hosts x 2 sockets x 8 cores as points in 3-D, so that the
    distances are Euclidean with a clear 3-level structure."""
    rng = np.random.RandomState(seed)
    pts = []
    for h in range(2):
        for s in range(2):
            for c in range(8):
                base = np.array([40.0 * h, 8.0 * s, 0.0])
                pts.append(base + rng.normal(scale=1.0, size=3))
    return np.array(pts)


R_HDBSCAN = '''
suppressMessages(library(dbscan))
args <- commandArgs(trailingOnly = TRUE)
d <- as.matrix(read.csv(args[1], header = FALSE))
h <- hdbscan(as.dist(d), minPts = as.integer(args[2]))
cat(h$cluster, sep = " ")
'''


def r_hdbscan(d, min_pts):
    """Labels of R dbscan::hdbscan on the precomputed matrix, noise = -1."""
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "d.csv")
        np.savetxt(csv, d, delimiter=",", fmt="%.17g")
        script = os.path.join(tmp, "h.R")
        with open(script, "w") as f:
            f.write(R_HDBSCAN)
        out = subprocess.run(["Rscript", script, csv, str(min_pts)], check=True,
                             capture_output=True, text=True).stdout
    return [int(v) - 1 for v in out.split()]


def datasets():
    out = []
    x, y = make_blobs(n_samples=40, centers=4, n_features=2, cluster_std=0.6, random_state=1)
    out.append(dict(name="blobs4", points=x, euclid=True, k=4, well_separated=True))
    x, y = make_blobs(n_samples=60, centers=3, n_features=3, cluster_std=1.0, random_state=7)
    out.append(dict(name="blobs3d", points=x, euclid=True, k=3, well_separated=True))
    out.append(dict(name="topo32", points=topo_points(5), euclid=True, k=4, well_separated=True))
    x, y = make_blobs(n_samples=80, centers=3, n_features=2, cluster_std=[0.5, 1.0, 2.0], random_state=3)
    rng = np.random.RandomState(3)
    lo, hi = x.min(axis=0), x.max(axis=0)
    x = np.vstack([x, lo + rng.uniform(size=(15, 2)) * (hi - lo)])
    out.append(dict(name="noisy", points=x, euclid=True, k=3, well_separated=False, hdbscan=True))
    rng = np.random.RandomState(11)
    x = rng.randint(0, 4, size=(30, 2)).astype(float)
    out.append(dict(name="grid_ties", points=x, euclid=True, k=3, well_separated=False))
    rng = np.random.RandomState(13)
    n = 14
    m = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            m[i, j] = m[j, i] = float(rng.randint(1, 5))
    out.append(dict(name="int_ties", dist=m, euclid=False, k=3, well_separated=False))
    return out


def main():
    if shutil.which("Rscript") is None:
        raise SystemExit("golden.py: Rscript not found; apt-get install -y --no-install-recommends r-cran-dbscan")
    fixtures = []
    for ds in datasets():
        if "points" in ds:
            d = squareform(pdist(ds["points"]))
        else:
            d = ds["dist"]
        n = d.shape[0]
        cond = squareform(d, checks=False)
        fx = dict(name=ds["name"], n=n, dist=d.tolist())
        if "points" in ds:
            fx["points"] = ds["points"].tolist()
        methods = ["single", "complete", "average", "weighted"]
        if ds["euclid"]:
            methods.append("ward")
        fx["linkage"] = {}
        for meth in methods:
            z = linkage(cond, method=meth)
            maxclust = {}
            for k in range(2, min(8, n - 1) + 1):
                maxclust[str(k)] = fcluster(z, k, criterion="maxclust").tolist()
            heights = sorted(set(z[:, 2].tolist()))
            ts = [heights[len(heights) // 4], heights[len(heights) // 2], heights[-2] if len(heights) > 1 else heights[0]]
            ts += [float(np.median(heights)) * 0.999, 0.0]
            dist_cuts = [dict(t=t, labels=fcluster(z, t, criterion="distance").tolist()) for t in ts]
            fx["linkage"][meth] = dict(Z=z.tolist(), maxclust=maxclust, distance=dist_cuts)

        pos = np.sort(cond[cond > 0])
        db = []
        eps_list = [float(np.quantile(pos, q)) for q in (0.03, 0.08, 0.15, 0.3)]
        if not ds["well_separated"]:
            eps_list += [1.0, 2.0]  # exact distance values: pins eps inclusivity
        for eps in eps_list:
            for ms in (1, 2, 3, 5):
                lab = DBSCAN(eps=eps, min_samples=ms, metric="precomputed").fit(d).labels_
                db.append(dict(eps=eps, min_samples=ms, labels=lab.tolist()))
        fx["dbscan"] = db

        if ds["well_separated"]:
            sigma = float(np.quantile(pos, 0.1))
            aff = np.exp(-(d ** 2) / (2 * sigma ** 2))
            sc = SpectralClustering(n_clusters=ds["k"], affinity="precomputed", random_state=0).fit(aff)
            fx["spectral"] = dict(sigma=sigma, k=ds["k"], labels=sc.labels_.tolist())
            km = KMeans(n_clusters=ds["k"], n_init=10, random_state=0).fit(ds["points"])
            fx["kmeans"] = dict(k=ds["k"], labels=km.labels_.tolist(), inertia=float(km.inertia_))

        hd = []
        for ms in (2, 4, 5):
            if ms > n:
                continue
            core = np.partition(d, ms - 1, axis=0)[ms - 1]
            mr = np.maximum(d, np.maximum.outer(core, core))
            np.fill_diagonal(mr, 0.0)
            z = linkage(squareform(mr, checks=False), method="single")
            hd.append(dict(min_samples=ms, core=core.tolist(), heights=z[:, 2].tolist()))
        fx["hdbscan_mr"] = hd
        if ds["well_separated"] or ds.get("hdbscan"):
            fx["hdbscan_r"] = [dict(min_pts=mp, labels=r_hdbscan(d, mp)) for mp in (3, 5, 8, 12)]
        fixtures.append(fx)

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "a_golden.json")
    with open(path, "w") as f:
        json.dump(dict(generator="cluster/testdata/golden.py", fixtures=fixtures), f)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
