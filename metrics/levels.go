package metrics

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"netaware/topo"
)

// Median is the one median of netaware's statistics: gonum's empirical
// quantile at 0.5 (stat.Quantile, stat.Empirical), i.e. the lower of the
// two middle values for an even count, so it is always a measured value.
// NaN for no values; NaNs in v are not allowed. v is not modified.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return stat.Quantile(0.5, stat.Empirical, s, nil)
}

// PairValue is one quantity of a rank pair (an RTT, a bandwidth, a tree
// latency).
type PairValue struct {
	A, B int
	V    float64
}

// Split is a pair quantity at one level: its median over pairs inside one
// group, and over pairs in different groups of this level that share a
// group of the next coarser level (any two groups at the coarsest level).
// A level that captures real structure has a clear gap between the two.
// NaN where no pair of the kind was given.
type Split struct {
	Within, Between           float64
	PairsWithin, PairsBetween int
}

// LevelSplits is the Split of pairs at every level of levels (finest
// first, each coarsening the one before; ranks 0..n-1). Pairs out of range
// and NaN values are left out.
func LevelSplits(levels []topo.Level, n int, pairs []PairValue) []Split {
	out := make([]Split, len(levels))
	for li := range levels {
		group, parent := levels[li].Labels(n), make([]int, n)
		if li+1 < len(levels) {
			parent = levels[li+1].Labels(n)
		}
		var in, btw []float64
		for _, p := range pairs {
			if p.A < 0 || p.B < 0 || p.A >= n || p.B >= n || math.IsNaN(p.V) {
				continue
			}
			switch {
			case group[p.A] == group[p.B]:
				in = append(in, p.V)
			case parent[p.A] == parent[p.B]:
				btw = append(btw, p.V)
			}
		}
		out[li] = Split{Within: Median(in), Between: Median(btw), PairsWithin: len(in), PairsBetween: len(btw)}
	}
	return out
}

// LevelStats summarises one level with the measurements: its groups and
// their sizes, and the Split of the RTT and of the bandwidth.
type LevelStats struct {
	Name                         string
	Groups                       int
	SizeMin, SizeMedian, SizeMax float64
	// Medians over measured pairs (LevelSplits); NaN when no pair of that
	// kind was measured (a single-group level has no "between" pairs).
	RTTWithin, RTTBetween float64
	BWWithin, BWBetween   float64
	PairsWithin           int // measured RTT pairs inside groups
	PairsBetween          int
}

// LevelStatistics computes LevelStats for every level from the RTT and
// bandwidth of measured pairs (either may be nil).
func LevelStatistics(levels []topo.Level, n int, rtt, bw []PairValue) []LevelStats {
	rs, bs := LevelSplits(levels, n, rtt), LevelSplits(levels, n, bw)
	out := make([]LevelStats, len(levels))
	for li, l := range levels {
		s := LevelStats{Name: l.Name, Groups: len(l.Groups)}
		s.SizeMin, s.SizeMedian, s.SizeMax = GroupSizes(l)
		s.RTTWithin, s.RTTBetween = rs[li].Within, rs[li].Between
		s.PairsWithin, s.PairsBetween = rs[li].PairsWithin, rs[li].PairsBetween
		s.BWWithin, s.BWBetween = bs[li].Within, bs[li].Between
		out[li] = s
	}
	return out
}

// GroupSizes is the smallest, the median (Median) and the largest size of
// a level's groups; zeros for a level without groups.
func GroupSizes(l topo.Level) (lo, median, hi float64) {
	if len(l.Groups) == 0 {
		return 0, 0, 0
	}
	sizes := make([]float64, len(l.Groups))
	for i, g := range l.Groups {
		sizes[i] = float64(len(g))
	}
	return slices.Min(sizes), Median(sizes), slices.Max(sizes)
}
