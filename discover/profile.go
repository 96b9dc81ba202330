package discover

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"netaware/cluster"
	"netaware/topo"
)

// Profile levels: where round trips carry CPU noise (infer.Additive), two
// ranks on one switch are told apart from two ranks on different switches
// by how their distances to every other rank differ, not by their distance
// to each other. With d(i,k) = f(i) + f(k) + D(s(i), s(k)), the
// differences d(i,k) - d(j,k) over the other ranks k are the constant
// f(i) - f(j) when i and j share a switch, and take two values or more
// (a hop apart) when they do not. Their interquartile range is a distance
// between i and j that ignores what the measured minima cannot be trusted
// with: each rank's own access latency (NICs of two generations, 5 and
// 40 us; a host whose round trips run a few microseconds slower while it
// joined the tree), and a few pairs measured in a slow spell (the
// quartiles skip them). Not the median absolute deviation: between two
// switches of equal size half the differences are a hop above the other
// half, and that median lands on either side. On netaware emu's
// two-nic-generations, where the switches are one bridge hop (about
// 1.3 us one way) apart under 10-20% spread, this finds the switches
// where clustering the distances or the tree's attachment points does not.

// profileMinRanks is the fewest ranks for which profile levels are
// computed: the median over the other ranks needs a few of each side.
const profileMinRanks = 8

// profileFloor keeps the profile distances positive for the gap cut's
// logarithms (a perfect, noise-free pair has distance 0).
const profileFloor = 1e-9

// profileDistances is the profile distance between every two ranks of m
// (one-way distances over the same ranks, every pair measured: a distance
// read off the tree carries the tree's errors, which are what the profile
// is to avoid).
func profileDistances(m *cluster.Matrix) *cluster.Matrix {
	n := m.N
	out := cluster.NewMatrix(n)
	diff := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			diff = diff[:0]
			for k := 0; k < n; k++ {
				if k != i && k != j {
					diff = append(diff, m.At(i, k)-m.At(j, k))
				}
			}
			slices.Sort(diff)
			iqr := stat.Quantile(0.75, stat.Empirical, diff, nil) - stat.Quantile(0.25, stat.Empirical, diff, nil)
			out.Set(i, j, math.Max(profileFloor, iqr))
		}
	}
	return out
}

// profileLevels are the levels of m's profile distances, over m's ranks,
// finest first: those with two groups or more and no rank alone (a rank
// alone is a rank whose own round trips were slow throughout, not a
// switch). nil below profileMinRanks.
func profileLevels(m *cluster.Matrix, gap cluster.GapOptions) []topo.Level {
	if m.N < profileMinRanks {
		return nil
	}
	levels, err := cluster.LevelsFromDistances(profileDistances(m), cluster.AverageLinkage, gap)
	if err != nil {
		return nil
	}
	var out []topo.Level
	for _, l := range levels {
		if len(l.Groups) > 1 && !hasSingle(l.Groups) {
			out = append(out, topo.Level{Name: "profile", Groups: l.Groups})
		}
	}
	return out
}
