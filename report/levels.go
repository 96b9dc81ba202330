package report

import (
	"math"
	"slices"

	"netaware/dataset"
	"netaware/topo"
)

// pairValue is one measured quantity of a rank pair.
type pairValue struct {
	a, b int
	v    float64
}

// LevelStats summarises one found level with the measurements: how many
// groups of which sizes, and the typical value of a quantity (median RTT,
// median bandwidth) for pairs inside one group versus pairs in different
// groups of this level that share a group of the next coarser level (or
// any pairs in different groups, for the coarsest level). A level that
// captures real structure has a clear gap between the two.
type LevelStats struct {
	Name                         string
	Groups                       int
	SizeMin, SizeMedian, SizeMax float64
	// Medians over measured pairs; NaN when no pair of that kind was
	// measured (a single-group level has no "between" pairs).
	RTTWithin, RTTBetween float64
	BWWithin, BWBetween   float64
	PairsWithin           int // measured RTT pairs inside groups
	PairsBetween          int
}

// levelStats computes LevelStats for every level from the pair lists.
func levelStats(levels []topo.Level, n int, rtt, bw []pairValue) []LevelStats {
	out := make([]LevelStats, 0, len(levels))
	parentOf := func(li int) []int {
		p := make([]int, n) // all zero: the whole world when li is the top
		if li+1 < len(levels) {
			for gi, g := range levels[li+1].Groups {
				for _, r := range g {
					if r >= 0 && r < n {
						p[r] = gi
					}
				}
			}
		}
		return p
	}
	for li, l := range levels {
		parent := parentOf(li)
		s := LevelStats{Name: l.Name, Groups: len(l.Groups)}
		sizes := make([]float64, len(l.Groups))
		group := make([]int, n)
		for i := range group {
			group[i] = -1
		}
		for gi, g := range l.Groups {
			sizes[gi] = float64(len(g))
			for _, r := range g {
				if r >= 0 && r < n {
					group[r] = gi
				}
			}
		}
		if len(sizes) > 0 {
			slices.Sort(sizes)
			s.SizeMin, s.SizeMax, s.SizeMedian = sizes[0], sizes[len(sizes)-1], median(sizes)
		}
		split := func(ps []pairValue) (in, out []float64) {
			for _, p := range ps {
				if p.a < 0 || p.b < 0 || p.a >= n || p.b >= n || math.IsNaN(p.v) {
					continue
				}
				switch {
				case group[p.a] == group[p.b]:
					in = append(in, p.v)
				case parent[p.a] == parent[p.b]:
					out = append(out, p.v)
				}
			}
			return in, out
		}
		in, btw := split(rtt)
		s.PairsWithin, s.PairsBetween = len(in), len(btw)
		s.RTTWithin, s.RTTBetween = median(in), median(btw)
		in, btw = split(bw)
		s.BWWithin, s.BWBetween = median(in), median(btw)
		out = append(out, s)
	}
	return out
}

// median of v (NaN if empty); v is reordered.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	k := len(v)
	if k%2 == 1 {
		return v[k/2]
	}
	return (v[k/2-1] + v[k/2]) / 2
}

// rttPairs lists the minimum RTT of every measured pair.
func rttPairs(ds *dataset.Dataset) []pairValue {
	if ds == nil || ds.RTT == nil {
		return nil
	}
	out := make([]pairValue, 0, len(ds.RTT.Pairs))
	for _, p := range ds.RTT.Pairs {
		out = append(out, pairValue{p.A, p.B, p.Result.MinS})
	}
	return out
}

// bandwidthPairs lists the bulk bandwidth of every measured pair, or, when
// no bulk bandwidth was measured, the Hockney fit's bandwidth.
func bandwidthPairs(ds *dataset.Dataset) []pairValue {
	if ds == nil {
		return nil
	}
	var out []pairValue
	if ds.Bandwidth != nil {
		for _, p := range ds.Bandwidth.Pairs {
			out = append(out, pairValue{p.A, p.B, p.Result.BandwidthBps})
		}
	}
	if len(out) == 0 && ds.Hockney != nil {
		for _, p := range ds.Hockney.Pairs {
			if p.Result.BandwidthBps > 0 {
				out = append(out, pairValue{p.A, p.B, p.Result.BandwidthBps})
			}
		}
	}
	return out
}
