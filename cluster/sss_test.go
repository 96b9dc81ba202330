package cluster

import (
	"reflect"
	"testing"

	"netaware/topo"
)

func TestReinfjellSect253SSSHand(t *testing.T) {
	d := bLine(0, 1, 2, 10, 11) // M = 11
	for _, c := range []struct {
		alpha float64
		want  Labels
	}{
		{0.2, Labels{0, 0, 0, 1, 1}}, // threshold 2.2
		{0.1, Labels{0, 0, 1, 2, 2}}, // threshold 1.1: 2 is 2 from 0, 8 from... new center
		{0, Labels{0, 1, 2, 3, 4}},   // every positive distance exceeds 0
		{1, Labels{0, 0, 0, 0, 0}},   // nothing exceeds M
	} {
		l, err := SSS(d, c.alpha)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(l, c.want) {
			t.Errorf("alpha %v: %v, want %v", c.alpha, l, c.want)
		}
	}
	if _, err := SSS(d, -1); err == nil {
		t.Error("accepted negative alpha")
	}
}

func TestReinfjellFig25SSSTreeHand(t *testing.T) {
	// Root: center 0, radius 11, threshold 0.3*22 = 6.6 -> {0,1,2}, {3,4}.
	// {0,1,2}: radius 2, threshold 1.2 -> {0,1}, {2}; {0,1}: radius 1,
	// threshold 0.6 -> {0}, {1}; {3,4} likewise -> {3}, {4}.
	tr, err := SSSTree(bLine(0, 1, 2, 10, 11), 0.3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Depth() != 3 || tr.Radius != 11 || tr.Center() != 0 {
		t.Fatalf("depth %d radius %v center %d", tr.Depth(), tr.Radius, tr.Center())
	}
	for depth, want := range map[int]Labels{
		0: {0, 0, 0, 0, 0},
		1: {0, 0, 0, 1, 1},
		2: {0, 0, 1, 2, 3},
		3: {0, 1, 2, 3, 4},
	} {
		l, err := tr.Flat(5, depth)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(l, want) {
			t.Errorf("depth %d: %v, want %v", depth, l, want)
		}
	}
	lv, err := tr.Levels(5)
	if err != nil {
		t.Fatal(err)
	}
	want := []topo.Level{
		{Name: "level-1", Groups: [][]int{{0, 1}, {2}, {3}, {4}}},
		{Name: "level-2", Groups: [][]int{{0, 1, 2}, {3, 4}}},
		{Name: "all", Groups: [][]int{{0, 1, 2, 3, 4}}},
	}
	if !reflect.DeepEqual(lv, want) {
		t.Fatalf("levels %+v", lv)
	}
	// alpha so large that nothing splits: the root stays a leaf.
	tr, _ = SSSTree(bLine(0, 1, 2, 10, 11), 5, 2)
	if tr.Depth() != 0 || tr.Children != nil {
		t.Fatalf("alpha 5 split the root: depth %d", tr.Depth())
	}
	// MinChildren larger than the data: no split at all.
	tr, _ = SSSTree(bLine(0, 1, 2, 10, 11), 0.3, 6)
	if tr.Depth() != 0 {
		t.Fatalf("min children 6 split: depth %d", tr.Depth())
	}
}

func TestReinfjellSSSTreeFramLevels(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		m0, s0, n0 := framLike(4, 16, 0.02, seed)
		m, tr := shuffled(m0, seed, s0, n0)
		tree, err := SSSTree(m, 0.3, 0)
		if err != nil {
			t.Fatal(err)
		}
		lv, err := tree.Levels(m.N)
		if err != nil {
			t.Fatal(err)
		}
		checkLevels(t, m.N, lv)
		if len(lv) != 3 {
			t.Fatalf("seed %d: %d levels %+v", seed, len(lv), lv)
		}
		sameGroups(t, "socket", lv[0].Groups, tr[0])
		sameGroups(t, "node", lv[1].Groups, tr[1])
	}
}

// Property: on random metric inputs the tree's partitions nest and cover
// every point at every depth, for any alpha.
func TestSSSTreePropertiesRandom(t *testing.T) {
	for seed := uint64(0); seed < 30; seed++ {
		rng := newRand(seed)
		n := 1 + rng.IntN(25)
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 100 * rng.Float64()
		}
		alpha := 2 * rng.Float64()
		tree, err := SSSTree(bLine(xs...), alpha, 1+rng.IntN(4))
		if err != nil {
			t.Fatal(err)
		}
		lv, err := tree.Levels(n)
		if err != nil {
			t.Fatalf("seed %d alpha %v: %v", seed, alpha, err)
		}
		checkLevels(t, n, lv)
		l, err := SSS(bLine(xs...), alpha/4)
		if err != nil || len(l) != n {
			t.Fatalf("sss: %v %v", l, err)
		}
	}
}
