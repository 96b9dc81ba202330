package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"

	"netaware/cluster"
	"netaware/dataset"
	"netaware/internal/atomicfile"
	"netaware/topo"
)

// HierarchyFileName is the file beside topology.json that keeps the
// dendrogram and cuts discovery derived its levels from, so that `netaware
// report DIR` draws the very dendrogram `discover` drew: the levels come
// from distances (tree paths, measured pairs, the noise model's leaf-edge
// correction) that topology.json alone does not pin down.
const HierarchyFileName = "hierarchy.json"

// hierarchyFile is HierarchyFileName's format: O(N), with merges as
// [a, b, height, size] rows in merge order.
type hierarchyFile struct {
	Version  int          `json:"version"`
	Distance string       `json:"distance"`
	Linkage  string       `json:"linkage"`
	N        int          `json:"n"`
	Merges   [][4]float64 `json:"merges"`
	Cuts     []float64    `json:"cuts_s"`
}

// TreeDistanceName names the distance TreeDistance builds.
const TreeDistanceName = "one-way latency on the inferred tree"

// TreeDistance is the matrix discovery clusters: the one-way latency of
// each pair, half its best measured RTT where the dataset measured it (a
// measured pair is known better than its path in a tree that fits every
// pair at once), else its path latency in the topology's tree.
func TreeDistance(ds *dataset.Dataset, t *topo.Topology) (*Distance, error) {
	if t == nil || t.Tree == nil {
		return nil, fmt.Errorf("distance: the topology has no tree")
	}
	n := t.Size
	if n > MaxMatrixRanks {
		return nil, fmt.Errorf("distance: %d ranks is above the %d a dense matrix is built for", n, MaxMatrixRanks)
	}
	paths, err := t.Paths()
	if err != nil {
		return nil, fmt.Errorf("distance: %w", err)
	}
	var best [][]float64
	if ds != nil && ds.RTT != nil && ds.World.Size == n {
		best = ds.RTTMin()
	}
	m := cluster.NewMatrix(n)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if best != nil && !math.IsNaN(best[i][j]) {
				m.Set(i, j, best[i][j]/2)
				continue
			}
			l, err := paths.PathLatency(i, j)
			if err != nil {
				return nil, fmt.Errorf("distance: tree latency %d-%d: %w", i, j, err)
			}
			m.Set(i, j, l)
		}
	}
	return &Distance{M: m, Name: TreeDistanceName, Unit: formatSeconds}, nil
}

// writeHierarchy stores h beside the report (distance: the name of the
// matrix it clusters).
func writeHierarchy(path string, h *Hierarchy, distance string) error {
	f := hierarchyFile{Version: 1, Distance: distance, Linkage: h.Linkage.String(), N: h.Dendrogram.N, Cuts: h.Cuts}
	f.Merges = make([][4]float64, len(h.Dendrogram.Merges))
	for i, m := range h.Dendrogram.Merges {
		f.Merges[i] = [4]float64{float64(m.A), float64(m.B), m.Height, float64(m.Size)}
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'))
}

// readHierarchy loads a hierarchy file of a topology of n ranks; a missing
// file is (nil, "", nil).
func readHierarchy(path string, n int) (*Hierarchy, string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	var f hierarchyFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if f.Version != 1 {
		return nil, "", fmt.Errorf("%s: version %d, want 1", path, f.Version)
	}
	if f.N != n || len(f.Merges) != max(n-1, 0) {
		return nil, "", fmt.Errorf("%s: a dendrogram of %d points with %d merges, the topology has %d ranks", path, f.N, len(f.Merges), n)
	}
	link, err := cluster.ParseLinkage(f.Linkage)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	d := &cluster.Dendrogram{N: n, Merges: make([]cluster.Merge, len(f.Merges))}
	for i, m := range f.Merges {
		a, b, size := int(m[0]), int(m[1]), int(m[3])
		// Clusters are numbered as in SciPy: points 0..n-1, then n+k for
		// the cluster of merge k, which only a later merge may use.
		if float64(a) != m[0] || float64(b) != m[1] || a < 0 || b < 0 || a >= n+i || b >= n+i || a == b || size < 2 || size > n || math.IsNaN(m[2]) {
			return nil, "", fmt.Errorf("%s: merge %d %v is not a merge of a dendrogram of %d points", path, i, m, n)
		}
		d.Merges[i] = cluster.Merge{A: a, B: b, Height: m[2], Size: size}
	}
	return &Hierarchy{Dendrogram: d, Cuts: f.Cuts, Linkage: link}, f.Distance, nil
}

// WorldTitle names the world a dataset was measured in, as discover's
// summary and report title it.
func WorldTitle(w dataset.World) string {
	switch w.Kind {
	case "sim":
		return fmt.Sprintf("%s (simulated, %d ranks)", w.Platform, w.Size)
	case "tcp":
		return fmt.Sprintf("%d ranks over TCP", w.Size)
	case "mpi":
		return fmt.Sprintf("%d ranks over MPI", w.Size)
	}
	return fmt.Sprintf("%d local ranks", w.Size)
}
