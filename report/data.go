package report

import (
	"fmt"
	"math"

	"netaware/cluster"
	"netaware/dataset"
	"netaware/topo"
)

// MaxMatrixRanks bounds the worlds for which the report builds dense n x n
// matrices (8192 ranks: 512 MiB per matrix); a corrupt dataset claiming a
// million ranks must not exhaust memory.
const MaxMatrixRanks = 8192

// Distance is a pairwise distance matrix with what it measures.
type Distance struct {
	M    *cluster.Matrix
	Name string               // e.g. "minimum RTT"
	Unit func(float64) string // formats one entry
	// Missing counts pairs that were not measured; Filled of them were
	// filled in from the topology's tree (path latency, both ways).
	Missing, Filled int
}

// DistanceFromDataset builds the distance that discovery clusters: the
// minimum RTT of each pair (cluster.RTTDistance) when the dataset has RTTs,
// else the inverse bulk bandwidth (cluster.BandwidthDistance). Pairs a
// partial campaign did not measure are filled with the round-trip path
// latency of t's tree when t has one (that is the tree's prediction for
// them, and what the seed 002 tree was built to answer), and left NaN
// otherwise.
func DistanceFromDataset(ds *dataset.Dataset, t *topo.Topology) (*Distance, error) {
	if ds == nil {
		return nil, fmt.Errorf("distance: no dataset")
	}
	n := ds.World.Size
	if n > MaxMatrixRanks {
		return nil, fmt.Errorf("distance: %d ranks is above the %d a dense matrix is built for", n, MaxMatrixRanks)
	}
	var d Distance
	switch {
	case ds.RTT != nil && len(ds.RTT.Pairs) > 0:
		best := ds.RTTMin()
		buf := make([]float64, 1)
		m, missing, err := cluster.RTTDistance(n, func(i, j int) []float64 {
			if v := best[i][j]; !math.IsNaN(v) {
				buf[0] = v
				return buf
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("distance from dataset rtt: %w", err)
		}
		d = Distance{M: m, Name: "minimum RTT", Unit: formatSeconds, Missing: missing}
	case ds.Bandwidth != nil && len(ds.Bandwidth.Pairs) > 0:
		bw := ds.BandwidthMatrix()
		sim, missing, err := cluster.BandwidthSimilarity(n, func(i, j int) (float64, bool) {
			v := bw[i][j]
			return v, !math.IsNaN(v)
		})
		if err != nil {
			return nil, fmt.Errorf("distance from dataset bandwidth: %w", err)
		}
		m, err := cluster.BandwidthDistance(sim)
		if err != nil {
			return nil, fmt.Errorf("distance from dataset bandwidth: %w", err)
		}
		d = Distance{M: m, Name: "inverse bandwidth", Unit: func(v float64) string { return siFormat(v, "s/B") }, Missing: missing}
	default:
		return nil, fmt.Errorf("distance: the dataset has neither RTT nor bandwidth measurements")
	}
	if d.Missing > 0 && t != nil && t.Tree != nil && d.Name == "minimum RTT" {
		paths, err := t.Paths()
		if err != nil {
			return nil, fmt.Errorf("distance: filling %d unmeasured pairs from the tree: %w", d.Missing, err)
		}
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if !math.IsNaN(d.M.At(i, j)) {
					continue
				}
				l, err := paths.PathLatency(i, j)
				if err != nil {
					return nil, fmt.Errorf("distance: tree latency %d-%d: %w", i, j, err)
				}
				d.M.Set(i, j, 2*l)
				d.Filled++
			}
		}
	}
	return &d, nil
}

// complete reports whether every off-diagonal entry is known.
func (d *Distance) complete() bool { return d.Missing == d.Filled }

// linkageOf reads the linkage recorded in the topology's method
// parameters, defaulting to average (the one cluster recommends for level
// cuts).
func linkageOf(t *topo.Topology) cluster.Linkage {
	if t != nil && t.Method != nil {
		if s, ok := t.Method.Params["linkage"].(string); ok {
			if l, err := cluster.ParseLinkage(s); err == nil {
				return l
			}
		}
	}
	return cluster.AverageLinkage
}

// Hierarchy is the dendrogram of a distance matrix and its level cuts.
type Hierarchy struct {
	Dendrogram *cluster.Dendrogram
	Cuts       []float64
	Linkage    cluster.Linkage
}

// HierarchyOf clusters a complete distance matrix agglomeratively and cuts
// the dendrogram at its height gaps: the functions discovery uses
// (cluster.Agglomerative, cluster.LevelCuts with default options).
func HierarchyOf(d *cluster.Matrix, link cluster.Linkage) (*Hierarchy, error) {
	den, err := cluster.Agglomerative(d, link)
	if err != nil {
		return nil, err
	}
	cuts, err := cluster.LevelCuts(den, cluster.DefaultGapOptions())
	if err != nil {
		return nil, err
	}
	return &Hierarchy{Dendrogram: den, Cuts: cuts, Linkage: link}, nil
}
