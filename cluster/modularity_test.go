package cluster

import (
	"math"
	"reflect"
	"testing"
)

// twoTriangles: triangles {0,1,2} and {3,4,5} with weight 1 edges, joined by
// edge 2-3 of weight 1. m = 7; each triangle has internal weight 3 and total
// degree 7, so Q = 2*(3/7 - (7/14)^2) = 6/7 - 1/2 = 5/14.
func twoTriangles() *Matrix {
	m := NewMatrix(6)
	for _, e := range [][2]int{{0, 1}, {0, 2}, {1, 2}, {3, 4}, {3, 5}, {4, 5}, {2, 3}} {
		m.Set(e[0], e[1], 1)
	}
	return m
}

func TestModularityHand(t *testing.T) {
	q, err := Modularity(twoTriangles(), Labels{0, 0, 0, 1, 1, 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !near(q, 5.0/14) {
		t.Fatalf("Q = %v, want 5/14", q)
	}
	q, _ = Modularity(twoTriangles(), Labels{0, 0, 0, 0, 0, 0}, 1)
	if !near(q, 0) {
		t.Fatalf("Q(one community) = %v, want 0", q)
	}
	l, q, err := Louvain(twoTriangles(), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l, Labels{0, 0, 0, 1, 1, 1}) || !near(q, 5.0/14) {
		t.Fatalf("louvain %v Q=%v", l, q)
	}
}

func TestLouvainRejectsBadInput(t *testing.T) {
	m := twoTriangles()
	m.Set(0, 1, -1)
	if _, _, err := Louvain(m, 1, 0); err == nil {
		t.Error("accepted negative weight")
	}
	m.Set(0, 1, math.NaN())
	if _, _, err := Louvain(m, 1, 0); err == nil {
		t.Error("accepted NaN weight")
	}
	if _, _, err := Louvain(twoTriangles(), 0, 0); err == nil {
		t.Error("accepted resolution 0")
	}
	if _, _, err := Louvain(&Matrix{N: 2, Data: []float64{0}}, 1, 0); err == nil {
		t.Error("accepted malformed matrix")
	}
	l, q, err := Louvain(NewMatrix(3), 1, 0)
	if err != nil || !reflect.DeepEqual(l, Labels{0, 1, 2}) || q != 0 {
		t.Errorf("empty graph: %v %v %v", l, q, err)
	}
}

func TestDichevEq52Eq53(t *testing.T) {
	// 8 peers vs 56: 8/56 * 64/2 = 4.571..., so a 1 Gb/s link gives each
	// connection 218.75 Mb/s.
	if c := ConnEstimate(8, 56); !near(c, 8.0/56*32) {
		t.Fatalf("conn = %v", c)
	}
	if c := ConnEstimate(32, 32); c != 32 {
		t.Fatalf("conn balanced = %v", c)
	}
	if bw := BandwidthPerConnection(1e9, 56, 8); !near(bw, 1e9/(8.0/56*32)) {
		t.Fatalf("bw = %v", bw)
	}
}

func TestDichevEq54Eq55Collapse(t *testing.T) {
	// Partitions {0}, {1,2}, {3,4,5}: weights all 1 except w(0,1)=4.
	m := NewMatrix(6)
	for i := 0; i < 6; i++ {
		for j := i + 1; j < 6; j++ {
			m.Set(i, j, 1)
		}
	}
	m.Set(0, 1, 4)
	g, err := CollapseAveraged(m, Labels{7, 3, 3, 9, 9, 9})
	if err != nil {
		t.Fatal(err)
	}
	// {0}-{1,2}: sum 5, conn_h = 1/2 -> 10. {0}-{3,4,5}: 3 / (1/3) = 9.
	// {1,2}-{3,4,5}: 6 / (2/3) = 9.
	want := []float64{0, 10, 9, 10, 0, 9, 9, 9, 0}
	if !reflect.DeepEqual(g.Data, want) {
		t.Fatalf("collapsed %v, want %v", g.Data, want)
	}
}

// n1Like is a bandwidth matrix after seed 000's N1 (Fig. 5.15), scaled down:
// 8 Ethernet clusters of 8 hosts (1 Gb/s inside), clusters paired under
// routers by 1 Gb/s links, pairs joined by 100 Mb/s bottlenecks into two
// halves, halves joined by a 100 Mb/s bottleneck. Pair bandwidth is the
// minimum over the path of Eq. 5.3, jittered by +-2%.
func n1Like(seed uint64) (*Matrix, []Labels) {
	const clusters, per = 8, 8
	n := clusters * per
	perConn := func(capacity float64, side int) float64 { return BandwidthPerConnection(capacity, side, n-side) }
	leaf := perConn(1e9, per)    // cluster uplink
	mid := perConn(100e6, 2*per) // pair uplink (bottleneck)
	top := perConn(100e6, 4*per) // between halves (bottleneck)
	rng := newRand(seed)
	m := NewMatrix(n)
	lv := []Labels{make(Labels, n), make(Labels, n), make(Labels, n)}
	for i := 0; i < n; i++ {
		lv[0][i], lv[1][i], lv[2][i] = i/per, i/(2*per), i/(4*per)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			bw := 1e9
			switch {
			case lv[2][i] != lv[2][j]:
				bw = math.Min(leaf, math.Min(mid, top))
			case lv[1][i] != lv[1][j]:
				bw = math.Min(leaf, mid)
			case lv[0][i] != lv[0][j]:
				bw = leaf
			}
			m.Set(i, j, bw*(1+0.02*(2*rng.Float64()-1)))
		}
	}
	return m, lv
}

func TestDichevHierarchicalModularityN1(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		m0, truth0 := n1Like(seed)
		m, truth := shuffled(m0, seed, truth0...)
		h, err := HierarchicalModularity(m, 1, seed)
		if err != nil {
			t.Fatal(err)
		}
		// As in the seed (Sect. 5.11.2, Fig. 5.19), the first Louvain pass
		// already merges the clusters under one router, {R1,R2}, ...,
		// {R7,R8}; the next round groups them by bottleneck.
		if len(h) != 2 {
			t.Fatalf("seed %d: %d levels, want router pairs and halves", seed, len(h))
		}
		for i := range h {
			if !reflect.DeepEqual(h[i].Labels, Canonical(truth[i+1])) {
				t.Errorf("seed %d level %d: %v, want %v", seed, i, Groups(h[i].Labels), Groups(truth[i+1]))
			}
		}
		if !(h[0].Q > 0 && h[1].Q > 0) {
			t.Errorf("modularity of rounds %v %v", h[0].Q, h[1].Q)
		}
		parts := []Labels{h[0].Labels, h[1].Labels}
		lv, err := ModularityLevels(m.N, h)
		if err != nil {
			t.Fatal(err)
		}
		checkLevels(t, m.N, lv)
		if len(lv) != 3 || lv[2].Name != "all" {
			t.Fatalf("levels %+v", lv)
		}
		hd, err := Hasse(m, parts)
		if err != nil {
			t.Fatal(err)
		}
		if len(hd.Nodes) != 4+2 || len(hd.Edges) != 4 {
			t.Fatalf("hasse %d nodes %d edges", len(hd.Nodes), len(hd.Edges))
		}
		// Seed 000 Sect. 5.9: a child's achievable bandwidth is higher than
		// its parent's.
		for _, e := range hd.Edges {
			if !(hd.Nodes[e[0]].MeanWithin > hd.Nodes[e[1]].MeanWithin) {
				t.Errorf("hasse edge %v: child %v <= parent %v", e, hd.Nodes[e[0]].MeanWithin, hd.Nodes[e[1]].MeanWithin)
			}
		}
	}
}

func TestDichevPartitionTreeN1(t *testing.T) {
	m, truth := n1Like(4)
	l, tree, err := PartitionTree(m, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l, Canonical(truth[1])) {
		t.Fatalf("partitions %v", Groups(l))
	}
	// Router pairs {0,1} and {2,3} share a 100 Mb/s bottleneck, the halves
	// a more loaded one: the tree is 0-1, 2-3 and one edge across.
	if len(tree) != 3 {
		t.Fatalf("tree has %d edges, want 3", len(tree))
	}
	if tree[0] != (PairEdge{0, 1, tree[0].W}) && tree[0] != (PairEdge{2, 3, tree[0].W}) ||
		tree[1] != (PairEdge{0, 1, tree[1].W}) && tree[1] != (PairEdge{2, 3, tree[1].W}) || tree[0] == tree[1] {
		t.Errorf("heaviest edges %v, want 0-1 and 2-3", tree[:2])
	}
	if e := tree[2]; e.I/2 == e.J/2 {
		t.Errorf("third edge %v does not cross halves", e)
	}
}

func TestMaximumSpanningTreeHand(t *testing.T) {
	m := NewMatrix(4)
	m.Set(0, 1, 5)
	m.Set(0, 2, 1)
	m.Set(1, 2, 3)
	m.Set(2, 3, 2)
	m.Set(1, 3, math.NaN()) // missing edge
	m.Set(0, 3, 0.5)
	tree, err := MaximumSpanningTree(m)
	if err != nil {
		t.Fatal(err)
	}
	want := []PairEdge{{0, 1, 5}, {1, 2, 3}, {2, 3, 2}}
	if !reflect.DeepEqual(tree, want) {
		t.Fatalf("got %v want %v", tree, want)
	}
	min, _ := MinimumSpanningTree(m)
	if !reflect.DeepEqual(min, []PairEdge{{0, 3, 0.5}, {0, 2, 1}, {1, 2, 3}}) {
		t.Fatalf("min tree %v", min)
	}
}

// Property: on random graphs Louvain returns a partition whose reported Q
// matches Modularity and is at least the Q of every point alone.
func TestLouvainPropertiesRandom(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		rng := newRand(seed)
		n := 2 + rng.IntN(25)
		m := NewMatrix(n)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if rng.Float64() < 0.5 {
					m.Set(i, j, rng.Float64())
				}
			}
		}
		l, q, err := Louvain(m, 1, seed)
		if err != nil {
			t.Fatal(err)
		}
		q2, err := Modularity(m, l, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !near(q, q2) {
			t.Fatalf("reported Q %v, recomputed %v", q, q2)
		}
		single := make(Labels, n)
		for i := range single {
			single[i] = i
		}
		qs, _ := Modularity(m, single, 1)
		if q < qs-1e-12 {
			t.Fatalf("Q %v below singletons %v", q, qs)
		}
		h, err := HierarchicalModularity(m, 1, seed)
		if err != nil {
			t.Fatal(err)
		}
		var parts []Labels
		for _, lv := range h {
			parts = append(parts, lv.Labels)
		}
		lv, err := LevelsFromPartitions(n, parts)
		if err != nil {
			t.Fatalf("seed %d: hierarchy not nested: %v", seed, err)
		}
		checkLevels(t, n, lv)
	}
}
