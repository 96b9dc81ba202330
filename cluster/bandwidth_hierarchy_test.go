package cluster

import (
	"math/rand/v2"
	"testing"
)

// blockMatrix: n points in groups given by label; weight within a group
// win, between groups of one parent mid, else lo; multiplicative noise
// of +-noise.
func blockMatrix(leaf, parent []int, win, mid, lo, noise float64, seed uint64) *Matrix {
	n := len(leaf)
	m := NewMatrix(n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			w := lo
			switch {
			case leaf[i] == leaf[j]:
				w = win
			case parent[i] == parent[j]:
				w = mid
			}
			m.Set(i, j, w*(1+noise*(2*r.Float64()-1)))
		}
	}
	return m
}

// Seed 000 Fig. 5.19: four leaves of 8 points, two by two behind slower
// links, give two levels, the leaves and the pairs.
func TestBandwidthHierarchyTwoLevels(t *testing.T) {
	var leaf, parent []int
	for i := 0; i < 32; i++ {
		leaf, parent = append(leaf, i/8), append(parent, i/16)
	}
	h, err := BandwidthHierarchy(blockMatrix(leaf, parent, 100, 30, 5, 0.2, 1), 1, DefaultSplitRatio)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 {
		t.Fatalf("%d levels, want 2: %v", len(h), h)
	}
	for i, want := range [][]int{leaf, parent} {
		if v, _ := HierarchyNMI([]Labels{h[i]}, []Labels{Labels(want)}); v < 1-1e-12 {
			t.Errorf("level %d = %v, want %v", i, h[i], want)
		}
	}
}

// A flat cluster with noisy weights gives no level: modularity's split
// along the noise is merged back (between/within above the ratio).
func TestBandwidthHierarchyFlatNoise(t *testing.T) {
	leaf := make([]int, 24)
	for seed := uint64(1); seed <= 5; seed++ {
		h, err := BandwidthHierarchy(blockMatrix(leaf, leaf, 100, 100, 100, 0.5, seed), seed, DefaultSplitRatio)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 0 {
			t.Errorf("seed %d: %d levels on a flat cluster: %v", seed, len(h), h)
		}
	}
}

func TestHierarchyNMIByHand(t *testing.T) {
	a := []Labels{{0, 0, 1, 1}}
	if v, _ := HierarchyNMI(a, []Labels{{1, 1, 0, 0}}); v < 1-1e-12 {
		t.Errorf("relabelled: %v, want 1", v)
	}
	if v, _ := HierarchyNMI(a, []Labels{{0, 1, 0, 1}}); v != 0 {
		t.Errorf("independent: %v, want 0", v)
	}
	if v, _ := HierarchyNMI(a, nil); v != 0 {
		t.Errorf("a level against none: %v, want 0", v)
	}
	if v, _ := HierarchyNMI(nil, nil); v != 1 {
		t.Errorf("no levels twice: %v, want 1", v)
	}
	if _, err := HierarchyNMI(a, []Labels{{0, 1}}); err == nil {
		t.Error("different sizes: no error")
	}
}

// Seed 000 Fig. 5.22: a chain of groups A - B - C, where B-C is the faster
// link, gives the tree A-B, B-C (and not A-C).
func TestBandwidthTreeChain(t *testing.T) {
	l := Labels{0, 0, 1, 1, 2, 2}
	w := NewMatrix(6)
	set := func(a, b int, v float64) {
		for i := range l {
			for j := range l {
				if i < j && ((l[i] == a && l[j] == b) || (l[i] == b && l[j] == a)) {
					w.Set(i, j, v)
				}
			}
		}
	}
	set(0, 0, 100)
	set(1, 1, 100)
	set(2, 2, 100)
	set(0, 1, 20)
	set(1, 2, 50)
	set(0, 2, 15)
	tree, err := BandwidthTree(w, l)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree) != 2 || tree[0].I != 1 || tree[0].J != 2 || tree[1].I != 0 || tree[1].J != 1 {
		t.Errorf("tree %v, want 1-2 then 0-1", tree)
	}
}

// Parts of one cluster that Louvain split (as fast between them as within)
// are merged; a slower part stays apart.
func TestMergeSimilarParts(t *testing.T) {
	leaf := []int{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}
	cluster := []int{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1}
	w := blockMatrix(cluster, cluster, 100, 100, 10, 0.1, 3)
	got := mergeSimilar(w, Labels(leaf), DefaultSplitRatio)
	if v, _ := HierarchyNMI([]Labels{got}, []Labels{Labels(cluster)}); v < 1-1e-12 {
		t.Errorf("merged %v, want %v", got, cluster)
	}
}

// Seed 000 Fig. 5.19 at N1's proportions: eight leaves of 16 points, two
// by two behind shared uplinks (within a leaf 4000, to the sibling leaf
// 1000, across 3, +-30% noise, 60% of the pairs measured). In the whole
// graph modularity gains more from the pairs of leaves than from the
// leaves (its resolution limit) and Louvain's best partition is the four
// pairs; partitioning each pair alone finds its two leaves.
func TestBandwidthHierarchyLeavesInsidePairs(t *testing.T) {
	var leaf, pair []int
	for i := 0; i < 128; i++ {
		leaf, pair = append(leaf, i/16), append(pair, i/32)
	}
	for seed := uint64(1); seed <= 3; seed++ {
		w := blockMatrix(leaf, pair, 4000, 1000, 3, 0.3, seed)
		r := rand.New(rand.NewPCG(seed, 2))
		for i := 0; i < w.N; i++ {
			for j := i + 1; j < w.N; j++ {
				if r.Float64() > 0.6 {
					w.Set(i, j, 0)
				}
			}
		}
		top, _, err := Louvain(w, 1, seed)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := HierarchyNMI([]Labels{top}, []Labels{Labels(pair)}); v < 1-1e-12 {
			t.Fatalf("seed %d: Louvain's best partition is not the pairs (%d groups): the case is not the resolution limit's", seed, numClusters(top))
		}
		h, err := BandwidthHierarchy(w, seed, DefaultSplitRatio)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 2 {
			t.Errorf("seed %d: %d levels, want 2", seed, len(h))
			continue
		}
		for i, want := range [][]int{leaf, pair} {
			if v, _ := HierarchyNMI([]Labels{h[i]}, []Labels{Labels(want)}); v < 1-1e-12 {
				t.Errorf("seed %d: level %d has %d groups, NMI %.3f", seed, i, numClusters(h[i]), v)
			}
		}
	}
}
