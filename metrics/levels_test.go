package metrics

import (
	"math"
	"testing"

	"netaware/topo"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2}, {[]float64{2, 2, 9, 9}, 2}} {
		in := append([]float64(nil), c.v...)
		if got := Median(in); got != c.want {
			t.Errorf("Median(%v) = %g, want %g (the lower middle value)", c.v, got, c.want)
		}
		for i := range in {
			if in[i] != c.v[i] {
				t.Errorf("Median reordered its input: %v", in)
			}
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median of nothing is not NaN")
	}
}

func TestLevelSplitsByHand(t *testing.T) {
	// Ranks 0-3 in hosts {0,1} {2,3}, hosts in racks {0,1,2,3}... and a
	// fifth rank alone: hosts {0,1} {2,3} {4}, racks {0-3} {4}.
	levels := []topo.Level{
		{Name: "host", Groups: [][]int{{0, 1}, {2, 3}, {4}}},
		{Name: "rack", Groups: [][]int{{0, 1, 2, 3}, {4}}},
		{Name: "all", Groups: [][]int{{0, 1, 2, 3, 4}}},
	}
	pairs := []PairValue{
		{A: 0, B: 1, V: 1}, {A: 2, B: 3, V: 2}, // inside hosts
		{A: 0, B: 2, V: 10}, {A: 1, B: 3, V: 12}, // across hosts, same rack
		{A: 0, B: 4, V: 100}, {A: 3, B: 4, V: 104}, // across racks
		{A: 1, B: 9, V: 5}, {A: 2, B: 1, V: math.NaN()}, // out of range, NaN: left out
	}
	got := LevelSplits(levels, 5, pairs)
	want := []Split{
		{Within: 1, Between: 10, PairsWithin: 2, PairsBetween: 2},
		{Within: 2, Between: 100, PairsWithin: 4, PairsBetween: 2},
		{Within: 10, Between: math.NaN(), PairsWithin: 6, PairsBetween: 0},
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Within != w.Within || g.PairsWithin != w.PairsWithin || g.PairsBetween != w.PairsBetween ||
			(g.Between != w.Between && !(math.IsNaN(g.Between) && math.IsNaN(w.Between))) {
			t.Errorf("level %s: %+v, want %+v", levels[i].Name, g, w)
		}
	}
	st := LevelStatistics(levels, 5, pairs, nil)
	if st[0].SizeMin != 1 || st[0].SizeMedian != 2 || st[0].SizeMax != 2 || st[0].RTTBetween != 10 || !math.IsNaN(st[0].BWWithin) {
		t.Errorf("host statistics %+v", st[0])
	}
}

func TestGroupSizes(t *testing.T) {
	for _, tc := range []struct {
		groups         [][]int
		lo, median, hi float64
	}{
		{nil, 0, 0, 0},
		{[][]int{{0, 1, 2}}, 3, 3, 3},
		{[][]int{{0}, {1, 2, 3}, {4, 5}}, 1, 2, 3},
		{[][]int{{0}, {1, 2, 3, 4}, {5, 6}, {7, 8}}, 1, 2, 4}, // 1 2 2 4
		{[][]int{{0, 1, 2, 3}, {4}}, 1, 1, 4},                 // an even count: the lower middle
	} {
		lo, med, hi := GroupSizes(topo.Level{Groups: tc.groups})
		if lo != tc.lo || med != tc.median || hi != tc.hi {
			t.Errorf("%v: %g/%g/%g, want %g/%g/%g", tc.groups, lo, med, hi, tc.lo, tc.median, tc.hi)
		}
	}
}
