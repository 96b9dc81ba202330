package dataset

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"netaware/cluster"
)

// Distances lists the kinds Distance builds, in the order help texts give
// them.
var Distances = []string{"rtt", "plogp", "features", "bandwidth"}

// MissingSectionError is Distance's error when the dataset lacks the
// section the kind is built from: the caller asked for what the file cannot
// give (a usage error on a command line).
type MissingSectionError struct{ Section string }

func (e *MissingSectionError) Error() string { return "the dataset has no " + e.Section + " section" }

// Distance builds the rank-to-rank distance matrix of kind (one of
// Distances) and a similarity for the modularity methods; pairs not
// measured are NaN.
//
//	rtt        the minimum RTT of each pair, either direction
//	plogp      seed 003 Eq. 3.3-3.4 at size bytes, symmetrized
//	features   seed 003 Eq. 3.5-3.6: Euclidean distance between the ranks'
//	           PLogP feature vectors, over the ranks the campaign measured
//	bandwidth  1 / achievable bandwidth; the similarity is the bandwidth
func (d *Dataset) Distance(kind string, size int) (dist, sim *cluster.Matrix, err error) {
	n := d.World.Size
	switch kind {
	case "rtt":
		if d.RTT == nil {
			return nil, nil, &MissingSectionError{"rtt"}
		}
		m := d.RTTMin()
		dist, _, err = cluster.RTTDistance(n, func(i, j int) []float64 {
			if v := m[i][j]; !math.IsNaN(v) {
				return []float64{v}
			}
			return nil
		})
	case "plogp", "features":
		if d.PLogP == nil {
			return nil, nil, &MissingSectionError{"plogp"}
		}
		at := d.plogpAt(size)
		if kind == "plogp" {
			dist, _, err = cluster.PLogPDistance(n, at)
		} else {
			dist, err = d.featureDistance(at)
		}
	case "bandwidth":
		if d.Bandwidth == nil {
			return nil, nil, &MissingSectionError{"bandwidth"}
		}
		m := d.BandwidthMatrix()
		sim, _, err = cluster.BandwidthSimilarity(n, func(i, j int) (float64, bool) {
			v := m[i][j]
			return v, !math.IsNaN(v)
		})
		if err == nil {
			dist, err = cluster.BandwidthDistance(sim)
		}
	default:
		return nil, nil, fmt.Errorf("distance %q: want rtt, plogp, features or bandwidth", kind)
	}
	if err != nil {
		return nil, nil, err
	}
	if sim == nil {
		sim = cluster.InverseSimilarity(dist)
	}
	return dist, sim, nil
}

// featureDistance embeds Eq. 3.5's vectors, which have an entry per rank,
// over the ranks the campaign measured, in the world's matrix.
func (d *Dataset) featureDistance(at func(i, j int) (cluster.PLogPParams, bool)) (*cluster.Matrix, error) {
	n := d.World.Size
	pts := d.plogpRanks()
	v, err := cluster.PLogPFeatures(len(pts), func(i, j int) (cluster.PLogPParams, bool) { return at(pts[i], pts[j]) })
	if err != nil {
		return nil, fmt.Errorf("needs every pair of the measured ranks (%w); the plogp distance takes holes", err)
	}
	sub, err := cluster.EuclideanDistance(v)
	if err != nil {
		return nil, err
	}
	dist := cluster.NewMatrix(n)
	for i := range dist.Data {
		dist.Data[i] = math.NaN()
	}
	for a, i := range pts {
		for b, j := range pts {
			dist.Data[i*n+j] = sub.At(a, b)
		}
	}
	return dist, nil
}

// plogpRanks lists the ranks of the PLogP pairs, in order.
func (d *Dataset) plogpRanks() []int {
	seen := map[int]bool{}
	for _, p := range d.PLogP.Pairs {
		seen[p.A], seen[p.B] = true, true
	}
	return slices.Sorted(maps.Keys(seen))
}

// plogpAt reads the PLogP parameters of the ordered pair i->j at m bytes
// (of j->i when only that direction was measured).
func (d *Dataset) plogpAt(m int) func(i, j int) (cluster.PLogPParams, bool) {
	type key struct{ a, b int }
	idx := map[key]*PLogPResult{}
	for k := range d.PLogP.Pairs {
		p := &d.PLogP.Pairs[k]
		idx[key{p.A, p.B}] = &p.Result
	}
	return func(i, j int) (cluster.PLogPParams, bool) {
		r, ok := idx[key{i, j}]
		if !ok {
			// Campaigns measure each pair in one direction; the other
			// direction stands in (the feature vectors of Eq. 3.5 need
			// both).
			if r, ok = idx[key{j, i}]; !ok {
				return cluster.PLogPParams{}, false
			}
		}
		s, ok := r.At(m)
		if !ok {
			return cluster.PLogPParams{}, false
		}
		return cluster.PLogPParams{L: r.LS, Os: s.Os.Mean, Or: s.Or.Mean, G: s.GS}, true
	}
}
