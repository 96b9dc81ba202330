package cluster

import (
	"math/rand/v2"
	"reflect"
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

// leavesInPairs labels 128 points: 8 leaves of 16, two by two in pairs.
func leavesInPairs() (leaf, pair []int) {
	for i := 0; i < 128; i++ {
		leaf, pair = append(leaf, i/16), append(pair, i/32)
	}
	return leaf, pair
}

// sparsify keeps each pair's weight with probability keep, as a swarm
// measures only the pairs that happened to exchange fragments.
func sparsify(w *Matrix, keep float64, r *rand.Rand) {
	for i := 0; i < w.N; i++ {
		for j := i + 1; j < w.N; j++ {
			if r.Float64() > keep {
				w.Set(i, j, 0)
			}
		}
	}
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
	leaf, pair := leavesInPairs()
	for seed := uint64(1); seed <= 3; seed++ {
		w := blockMatrix(leaf, pair, 4000, 1000, 3, 0.3, seed)
		sparsify(w, 0.6, rand.New(rand.NewPCG(seed, 2)))
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

// A host that measured few pairs in its own leaf and many in the sibling
// (the peer sets' chance, docs/swarm.md, dichev-n1 at full size) belongs
// with its leaf: its mean rate there is three times the sibling's, though
// the sum is not. Modularity alone puts it with the sibling.
func TestBandwidthHierarchySparselyMeasuredHostStaysInItsLeaf(t *testing.T) {
	leaf, pair := leavesInPairs()
	for seed := uint64(1); seed <= 3; seed++ {
		w := blockMatrix(leaf, pair, 2000, 550, 1, 0.2, seed)
		sparsify(w, 0.6, rand.New(rand.NewPCG(seed, 3)))
		// Point 0 (leaf 0) measured 3 pairs of its leaf and all 16 of
		// the sibling's, nothing else.
		for j := 1; j < w.N; j++ {
			w.Set(0, j, 0)
		}
		for j := 1; j <= 3; j++ {
			w.Set(0, j, 2000)
		}
		for j := 16; j < 32; j++ {
			w.Set(0, j, 600)
		}
		h, err := BandwidthHierarchy(w, seed, DefaultSplitRatio)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) == 0 {
			t.Fatalf("seed %d: no level", seed)
		}
		if v, _ := HierarchyNMI([]Labels{h[0]}, []Labels{Labels(leaf)}); v < 1-1e-12 {
			t.Errorf("seed %d: finest level has %d groups, NMI %.3f with the leaves (point 0 with %v)", seed, numClusters(h[0]), v, h[0][0])
		}
	}
}

// routerMatrix is a graph of per points on each of len(mean) routers whose
// pairs weigh mean[a][b] (a and b their routers), with a relative noise.
func routerMatrix(mean [][]float64, per int, noise float64, seed uint64) *Matrix {
	n := len(mean) * per
	m := NewMatrix(n)
	r := rand.New(rand.NewPCG(seed, 2))
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			m.Set(i, j, mean[i/per][j/per]*(1+noise*(2*r.Float64()-1)))
		}
	}
	return m
}

// The reduced dichev-n2 of docs/swarm.md (8 hosts per router, router links
// scaled with the hosts), as the swarm measured it with adaptive pipelines
// (fragments per second, mean over the pairs of two routers, 5
// iterations, routers R1 to R9).
var n2Measured = [][]float64{
	{4691, 1164, 1241, 932, 127, 91, 16, 10, 10},
	{1164, 4800, 1011, 1026, 156, 77, 18, 10, 10},
	{1241, 1011, 4336, 2587, 198, 78, 19, 12, 11},
	{932, 1026, 2587, 4612, 185, 86, 25, 12, 11},
	{127, 156, 198, 185, 4290, 98, 25, 12, 10},
	{91, 77, 78, 86, 98, 5414, 19, 12, 11},
	{16, 18, 19, 25, 25, 19, 5032, 16, 11},
	{10, 10, 12, 12, 12, 12, 16, 5269, 10},
	{10, 10, 11, 11, 10, 11, 11, 10, 5103},
}

// Seed 000 Sect. 5.11.5, Fig. 5.20: on N2 the level above the routers
// merges R1 to R4 and leaves R5 to R9 as the other partition. Averaging
// the weights between partitions (Eq. 5.4 as Fig. 5.11 works it) finds it
// on the graph the swarm measured; the printed Eq. 5.4, a sum over conn_h
// = min/max, weighed the group of R1 to R4 sixteen times a single router
// and gave no community structure (modularity 0.01 to 0.02).
func TestBandwidthHierarchyN2SecondLevel(t *testing.T) {
	const per = 8
	want := make(Labels, 9*per)
	for i := range want {
		if i/per >= 4 {
			want[i] = 1
		}
	}
	for seed := uint64(1); seed <= 3; seed++ {
		h, err := BandwidthHierarchy(routerMatrix(n2Measured, per, 0.1, seed), seed, DefaultSplitRatio)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, l := range h {
			if v, _ := HierarchyNMI([]Labels{l}, []Labels{want}); v > 1-1e-9 {
				found = true
			}
		}
		if !found {
			t.Errorf("seed %d: no level {R1..R4}, {R5..R9} in %v", seed, h)
		}
	}
}

// Seed 000 Sect. 5.12.2, Fig. 5.23b: the maximum spanning tree over N2's
// partitions "perfectly match[es] the topology of N2". The partitions the
// swarm found on the reduced N2 with the defaults are R1, R2, {R3, R4},
// R5, ..., R9 (docs/swarm.md, w(e) by router); averaged, their weights give
// R1-R2-{R3,R4}-R5, R5-R6, R5-R7, R7-R8, R7-R9. With the printed Eq. 5.4
// the group of two routers weighed four times the others and the tree was
// a star on it.
func TestBandwidthTreeN2(t *testing.T) {
	byDefault := [][]float64{
		{3184, 47, 27, 26, 24, 22, 13, 8, 7},
		{47, 3410, 56, 54, 46, 36, 15, 9, 8},
		{27, 56, 2994, 1753, 191, 97, 18, 11, 10},
		{26, 54, 1753, 2921, 182, 97, 19, 11, 10},
		{24, 46, 191, 182, 3318, 112, 22, 11, 10},
		{22, 36, 97, 97, 112, 3344, 18, 10, 10},
		{13, 15, 18, 19, 22, 18, 3580, 13, 12},
		{8, 9, 11, 11, 11, 10, 13, 3211, 9},
		{7, 8, 10, 10, 10, 10, 12, 9, 3076},
	}
	const per = 8
	group := []int{0, 1, 2, 2, 3, 4, 5, 6, 7} // router -> partition
	l := make(Labels, 9*per)
	for i := range l {
		l[i] = group[i/per]
	}
	tree, err := BandwidthTree(routerMatrix(byDefault, per, 0.1, 1), l)
	if err != nil {
		t.Fatal(err)
	}
	// Partitions: 0 R1, 1 R2, 2 {R3,R4}, 3 R5, 4 R6, 5 R7, 6 R8, 7 R9.
	want := map[[2]int]bool{{0, 1}: true, {1, 2}: true, {2, 3}: true, {3, 4}: true, {3, 5}: true, {5, 6}: true, {5, 7}: true}
	got := map[[2]int]bool{}
	for _, e := range tree {
		got[[2]int{min(e.I, e.J), max(e.I, e.J)}] = true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tree %v, want the edges %v", tree, want)
	}
}

// dichev-n1 as the swarm measured it at full size (seed 1, 5 iterations of
// 4 MiB in 16 KiB; mean fragments per second between the pairs of two
// leaf routers, R1 to R8; docs/swarm.md): each leaf router's sibling
// behind one 1 Gbps uplink at 0.09 to 0.25 of the rate within, the other
// groups behind 100 Mbit links at 1 to 2.
var n1Measured = [][]float64{
	{2104, 197, 1, 1, 1, 1, 1, 1},
	{197, 2191, 1, 1, 1, 1, 1, 1},
	{1, 1, 2366, 267, 1, 1, 1, 1},
	{1, 1, 267, 2257, 1, 1, 1, 1},
	{1, 1, 1, 1, 2615, 435, 1, 1},
	{1, 1, 1, 1, 435, 2621, 1, 2},
	{1, 1, 1, 1, 1, 1, 1961, 476},
	{1, 1, 1, 1, 1, 2, 476, 1917},
}

// routerLabels gives per points on each router the group of its router.
func routerLabels(per int, group ...int) Labels {
	l := make(Labels, per*len(group))
	for i := range l {
		l[i] = group[i/per]
	}
	return l
}

// The hierarchy the clustering built from that dataset: Louvain over the
// whole graph joined R7 and R8 alone, the collapse above joined R1-R2 and
// R5-R6 together with {R3, R4, R7, R8}, whose groups are 500 times
// slower between them than within. No level held the four pairs (NMI
// 0.857 with them). Separated, the joins at 0.09 to 0.25 form a level of
// their own, and the partial level below it goes.
func TestSeparateBandsSplitsALevelOfTwoBands(t *testing.T) {
	const per = 4
	w := routerMatrix(n1Measured, per, 0.1, 1)
	leaves := routerLabels(per, 0, 1, 2, 3, 4, 5, 6, 7)
	pairs := routerLabels(per, 0, 0, 1, 1, 2, 2, 3, 3)
	mixed := routerLabels(per, 0, 0, 1, 1, 2, 2, 1, 1)
	h := []Labels{leaves, routerLabels(per, 0, 1, 2, 3, 4, 5, 6, 6), mixed}
	got := separateBands(w, h, DefaultBandGap)
	want := []Labels{leaves, pairs, mixed}
	if len(got) != len(want) {
		t.Fatalf("%d levels (%v), want %d", len(got), got, len(want))
	}
	for i := range want {
		if v, _ := HierarchyNMI([]Labels{got[i]}, []Labels{want[i]}); v < 1-1e-12 {
			t.Errorf("level %d: %v, want %v", i, got[i], want[i])
		}
	}
	// A hierarchy whose levels each join one band is left alone.
	if got := separateBands(w, []Labels{leaves, pairs, mixed}, DefaultBandGap); !reflect.DeepEqual(got, []Labels{leaves, pairs, mixed}) {
		t.Errorf("banded hierarchy changed: %v", got)
	}
}

// The whole clustering on graphs drawn around those means (16 points a
// router, 30 % noise, 30 % of the pairs measured): without separateBands
// no level holds the four pairs of leaf routers.
func TestBandwidthHierarchyFindsThePairsOfLeaves(t *testing.T) {
	const per = 16
	pairs := routerLabels(per, 0, 0, 1, 1, 2, 2, 3, 3)
	for seed := uint64(1); seed <= 4; seed++ {
		w := routerMatrix(n1Measured, per, 0.3, seed)
		sparsify(w, 0.3, rand.New(rand.NewPCG(seed, 2)))
		h, err := BandwidthHierarchy(w, seed, DefaultSplitRatio)
		if err != nil {
			t.Fatal(err)
		}
		best := 0.0
		for _, l := range h {
			v, _ := HierarchyNMI([]Labels{l}, []Labels{pairs})
			best = max(best, v)
		}
		if best < 1-1e-12 {
			t.Errorf("seed %d: no level is the pairs (best NMI %.3f, %d levels)", seed, best, len(h))
		}
	}
}
