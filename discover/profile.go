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
// finest first: those with two groups or more, no rank alone (a rank
// alone is a rank whose own round trips were slow throughout, not a
// switch) and a contrast of profileContrast. nil below profileMinRanks.
func profileLevels(m *cluster.Matrix, gap cluster.GapOptions) []topo.Level {
	if m.N < profileMinRanks {
		return nil
	}
	prof := profileDistances(m)
	levels, err := cluster.LevelsFromDistances(prof, cluster.AverageLinkage, gap)
	if err != nil {
		return nil
	}
	// Coarsest first: a level's contrast counts the pairs inside one
	// group of the coarser level kept, or a switch split in two would
	// borrow the contrast of the hop between switches.
	var out []topo.Level
	var parent [][]int
	for k := len(levels) - 1; k >= 0; k-- {
		l := levels[k]
		if len(l.Groups) > 1 && !hasSingle(l.Groups) && contrast(l.Groups, parent, prof) >= profileContrast {
			out = append([]topo.Level{{Name: "profile", Groups: l.Groups}}, out...)
			parent = l.Groups
		}
	}
	return out
}

// profileContrast is how many times farther apart, by mean profile
// distance, the ranks of different groups of a profile level must be than
// those of one group. Switches one hop apart: 10-30 times on netaware
// emu's two-nic-generations after the sweeps (0.1-0.3 us within, 2.5-3 us
// across); the gap cut also splits a switch at 1.5-2 times (0.08 us
// against 0.25 us), which is noise.
const profileContrast = 3

// contrast is the mean of d over the pairs that groups separate divided by
// its mean over the pairs they keep together (+Inf for none kept), over
// the pairs inside one group of parent (every pair when nil).
func contrast(groups, parent [][]int, d *cluster.Matrix) float64 {
	of := make([]int, d.N)
	for g, rs := range groups {
		for _, r := range rs {
			of[r] = g
		}
	}
	top := make([]int, d.N)
	for g, rs := range parent {
		for _, r := range rs {
			top[r] = g
		}
	}
	var within, between float64
	var nw, nb int
	for i := 0; i < d.N; i++ {
		for j := i + 1; j < d.N; j++ {
			if top[i] != top[j] {
				continue
			}
			if of[i] == of[j] {
				within, nw = within+d.At(i, j), nw+1
			} else {
				between, nb = between+d.At(i, j), nb+1
			}
		}
	}
	if nb == 0 {
		return 0
	}
	if nw == 0 || within == 0 {
		return math.Inf(1)
	}
	return (between / float64(nb)) / (within / float64(nw))
}

// dropFlatSplits removes from levels (over m's ranks) those that split
// the groups of ref, a profile level, without a latency contrast: among
// the pairs inside one group of ref, those the level keeps together must
// be at most half as far apart (m) as those it separates, as the ranks of
// one host are against a network. The tree's cut splits a switch's ranks
// a tenth of a microsecond apart under CPU noise (dropNoiseSplits does the
// same under a bandwidth level).
func dropFlatSplits(levels []topo.Level, ref [][]int, m *cluster.Matrix) []topo.Level {
	var out []topo.Level
	for _, l := range levels {
		if !refines(l.Groups, ref) || topo.EqualGroups(l.Groups, ref) {
			out = append(out, l)
			continue
		}
		of := make([]int, m.N)
		for g, rs := range l.Groups {
			for _, r := range rs {
				of[r] = g
			}
		}
		var within, between float64
		var nw, nb int
		for _, rs := range ref {
			for x, i := range rs {
				for _, j := range rs[x+1:] {
					if of[i] == of[j] {
						within, nw = within+m.At(i, j), nw+1
					} else {
						between, nb = between+m.At(i, j), nb+1
					}
				}
			}
		}
		if nw > 0 && nb > 0 && within/float64(nw) <= between/float64(nb)/2 {
			out = append(out, l)
		}
	}
	return out
}
