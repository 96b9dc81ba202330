package cluster

import (
	"math"
	"sort"
	"testing"
)

// Points 0, 1, 2, 5, 6, 20 with eps 1, minPts 3: 1 is core (0, 1, 2 within
// 1); 0 and 2 are border; 5 and 6 have only 2 points each, 20 is alone.
func TestDBSCANLineByHand(t *testing.T) {
	m := lineMatrix(0, 1, 2, 5, 6, 20)
	got, err := DBSCAN(m, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Labels{0, 0, 0, Noise, Noise, Noise}); !equalLabels(got, want) {
		t.Errorf("eps 1 minPts 3: %v, want %v", got, want)
	}
	got, _ = DBSCAN(m, 1, 2)
	if want := (Labels{0, 0, 0, 1, 1, Noise}); !equalLabels(got, want) {
		t.Errorf("eps 1 minPts 2: %v, want %v", got, want)
	}
	got, _ = DBSCAN(m, 0.999, 1) // every point its own core
	if want := (Labels{0, 1, 2, 3, 4, 5}); !equalLabels(got, want) {
		t.Errorf("eps 0.999 minPts 1: %v, want %v", got, want)
	}
}

// A border point within eps of cores of two clusters goes to the first
// cluster (lowest core index), as scikit-learn's expansion order does.
func TestDBSCANBorderGoesToFirstCluster(t *testing.T) {
	// A = {0, .3, .6, 1}, border point at 2 (3 points within 1: not core
	// for minPts 4), B = {3, 3.4, 3.7, 4}.
	m := lineMatrix(0, 0.3, 0.6, 1, 2, 3, 3.4, 3.7, 4)
	got, err := DBSCAN(m, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Labels{0, 0, 0, 0, 0, 1, 1, 1, 1}); !equalLabels(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Same geometry, cluster B listed first: the border point follows B.
	m = lineMatrix(3, 3.4, 3.7, 4, 2, 0, 0.3, 0.6, 1)
	got, _ = DBSCAN(m, 1, 4)
	if want := (Labels{0, 0, 0, 0, 0, 1, 1, 1, 1}); !equalLabels(got, want) {
		t.Errorf("reversed: got %v, want %v", got, want)
	}
}

func TestDBSCANDegenerate(t *testing.T) {
	for n := 0; n <= 2; n++ {
		l, err := DBSCAN(NewMatrix(n), 0, 1)
		if err != nil || len(l) != n {
			t.Errorf("n=%d: %v %v", n, l, err)
		}
	}
	if _, err := DBSCAN(NewMatrix(2), -1, 1); err == nil {
		t.Error("negative eps accepted")
	}
	if _, err := DBSCAN(NewMatrix(2), 1, 0); err == nil {
		t.Error("minPts 0 accepted")
	}
	bad := NewMatrix(2)
	bad.Set(0, 1, math.Inf(1))
	if _, err := DBSCAN(bad, 1, 1); err == nil {
		t.Error("Inf accepted")
	}
}

func TestConnectedComponentsByHand(t *testing.T) {
	m := lineMatrix(0, 1, 2, 5, 6, 20)
	cases := []struct {
		th   float64
		want Labels
	}{
		{1, Labels{0, 1, 2, 3, 4, 5}}, // strict: distance 1 is no edge
		{1.5, Labels{0, 0, 0, 1, 1, 2}},
		{3.5, Labels{0, 0, 0, 0, 0, 1}},
		{100, Labels{0, 0, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		got, err := ConnectedComponents(m, c.th)
		if err != nil {
			t.Fatal(err)
		}
		if !equalLabels(got, c.want) {
			t.Errorf("threshold %g: %v, want %v", c.th, got, c.want)
		}
	}
	if _, err := ConnectedComponents(m, math.NaN()); err == nil {
		t.Error("NaN threshold accepted")
	}
}

// Components of "d < t" are single-linkage clusters cut just below t.
func TestConnectedComponentsEqualSingleLinkageCut(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		_, m := randomPoints(seed, 40, 2, 5)
		d, err := Agglomerative(m, SingleLinkage)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range d.Merges {
			th := g.Height
			cc, _ := ConnectedComponents(m, th)
			sl, _ := CutHeight(d, math.Nextafter(th, math.Inf(-1)))
			if !equalLabels(cc, sl) {
				t.Fatalf("seed %d threshold %g: components %v, single linkage %v", seed, th, cc, sl)
			}
		}
	}
}

// Two groups on a line and an outlier, worked by hand (MinClusterSize 3,
// MinSamples 2): x = 0 1 2 4 | 10 11 12 13 | 30. Core distances 1,1,1,2 |
// 1,1,1,1 | 17; the groups join at mutual reachability 6 (lambda 1/6), the
// outlier at 17. Point 3 (x=4) leaves its group at lambda 1/2, the others
// at lambda 1.
func TestHDBSCANByHand(t *testing.T) {
	m := lineMatrix(0, 1, 2, 4, 10, 11, 12, 13, 30)
	r, err := HDBSCAN(m, HDBSCANOptions{MinClusterSize: 3, MinSamples: 2})
	if err != nil {
		t.Fatal(err)
	}
	wantCore := []float64{1, 1, 1, 2, 1, 1, 1, 1, 17}
	for i, v := range wantCore {
		if r.CoreDistances[i] != v {
			t.Errorf("core[%d] = %g, want %g", i, r.CoreDistances[i], v)
		}
	}
	wantCT := []CondensedEdge{
		{9, 8, 1.0 / 17, 1},
		{9, 10, 1.0 / 6, 4}, {9, 11, 1.0 / 6, 4},
		{10, 7, 1, 1},
		{11, 3, 0.5, 1},
		{10, 6, 1, 1}, {10, 4, 1, 1}, {10, 5, 1, 1},
		{11, 2, 1, 1}, {11, 0, 1, 1}, {11, 1, 1, 1},
	}
	if len(r.Condensed) != len(wantCT) {
		t.Fatalf("condensed tree %v, want %v", r.Condensed, wantCT)
	}
	for i, e := range wantCT {
		g := r.Condensed[i]
		if g.Parent != e.Parent || g.Child != e.Child || g.ChildSize != e.ChildSize || math.Abs(g.Lambda-e.Lambda) > 1e-15 {
			t.Errorf("condensed row %d = %+v, want %+v", i, g, e)
		}
	}
	wantStab := []float64{1.0/17 + 8.0/6, 4 * (1 - 1.0/6), (0.5 - 1.0/6) + 3*(1-1.0/6)}
	for i, v := range wantStab {
		if math.Abs(r.Stability[i]-v) > 1e-12 {
			t.Errorf("stability[%d] = %g, want %g", i, r.Stability[i], v)
		}
	}
	if want := (Labels{1, 1, 1, 1, 0, 0, 0, 0, Noise}); !equalLabels(r.Labels, want) {
		t.Errorf("labels %v, want %v", r.Labels, want)
	}
	wantP := []float64{1, 1, 1, 0.5, 1, 1, 1, 1, 0}
	for i, v := range wantP {
		if math.Abs(r.Probabilities[i]-v) > 1e-12 {
			t.Errorf("probability[%d] = %g, want %g", i, r.Probabilities[i], v)
		}
	}
}

// Excess of mass prefers a long-lived parent over two short-lived children
// (stability 4(1/1.5 - 1/46.5) > 2*2*(1 - 1/1.5)); leaf selection returns
// the children.
func TestHDBSCANExcessOfMassVersusLeaf(t *testing.T) {
	m := lineMatrix(0, 1, 2.5, 3.5, 50, 51, 52.5, 53.5)
	eom, err := HDBSCAN(m, HDBSCANOptions{MinClusterSize: 2, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := samePartition(eom.Labels, []int{0, 0, 0, 0, 1, 1, 1, 1}); err != nil {
		t.Errorf("EOM labels %v: %v", eom.Labels, err)
	}
	leaf, err := HDBSCAN(m, HDBSCANOptions{MinClusterSize: 2, MinSamples: 1, Selection: LeafSelection})
	if err != nil {
		t.Fatal(err)
	}
	if err := samePartition(leaf.Labels, []int{0, 0, 1, 1, 2, 2, 3, 3}); err != nil {
		t.Errorf("leaf labels %v: %v", leaf.Labels, err)
	}
}

// Properties on seeded blobs: labels index Selected, probabilities in [0,1]
// (0 exactly for noise), every point appears once as a condensed child, and
// the labels are a coarsening-compatible grouping of single linkage on
// mutual reachability (each selected cluster is one subtree of Tree).
func TestHDBSCANProperties(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		_, m := randomPoints(seed, 80, 2, 4)
		for _, sel := range []HDBSCANSelection{ExcessOfMass, LeafSelection} {
			r, err := HDBSCAN(m, HDBSCANOptions{MinClusterSize: 5, Selection: sel})
			if err != nil {
				t.Fatal(err)
			}
			seen := make([]int, m.N)
			for _, e := range r.Condensed {
				if e.Child < m.N {
					seen[e.Child]++
				}
			}
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("seed %d: point %d appears %d times in the condensed tree", seed, i, c)
				}
			}
			for i, l := range r.Labels {
				p := r.Probabilities[i]
				if l == Noise && p != 0 || l != Noise && (l < 0 || l >= len(r.Selected) || p <= 0 || p > 1) {
					t.Fatalf("seed %d: point %d label %d probability %g", seed, i, l, p)
				}
			}
			if aNumClusters(r.Labels) != len(r.Selected) {
				t.Errorf("seed %d: %d labels used, %d selected", seed, aNumClusters(r.Labels), len(r.Selected))
			}
		}
	}
}

func TestHDBSCANDegenerate(t *testing.T) {
	for n := 0; n <= 2; n++ {
		r, err := HDBSCAN(NewMatrix(n), HDBSCANOptions{MinClusterSize: 2, MinSamples: 1})
		if err != nil || len(r.Labels) != n {
			t.Fatalf("n=%d: %v", n, err)
		}
	}
	eq := NewMatrix(10)
	for i := 0; i < 10; i++ {
		for j := i + 1; j < 10; j++ {
			eq.Set(i, j, 1)
		}
	}
	r, err := HDBSCAN(eq, HDBSCANOptions{MinClusterSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range r.Probabilities {
		if math.IsNaN(p) {
			t.Fatalf("all-equal: probability %d is NaN", i)
		}
	}
	dup := NewMatrix(6) // duplicates: zero distances give lambda = +Inf
	for i := 0; i < 6; i++ {
		for j := i + 1; j < 6; j++ {
			if i/3 != j/3 {
				dup.Set(i, j, 5)
			}
		}
	}
	r, err = HDBSCAN(dup, HDBSCANOptions{MinClusterSize: 3, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := samePartition(r.Labels, []int{0, 0, 0, 1, 1, 1}); err != nil {
		t.Errorf("duplicates: %v (labels %v)", err, r.Labels)
	}
	for _, opt := range []HDBSCANOptions{{MinClusterSize: 1}, {MinClusterSize: 3, MinSamples: -1}, {MinClusterSize: 3, MinSamples: 20}, {Selection: 9}} {
		if _, err := HDBSCAN(eq, opt); err == nil {
			t.Errorf("options %+v accepted", opt)
		}
	}
	bad := NewMatrix(3)
	bad.Data[1] = math.NaN()
	if _, err := HDBSCAN(bad, HDBSCANOptions{}); err == nil {
		t.Error("NaN accepted")
	}
}

func BenchmarkHDBSCAN(b *testing.B) {
	_, m := randomPoints(3, 1024, 3, 8)
	for b.Loop() {
		if _, err := HDBSCAN(m, HDBSCANOptions{MinClusterSize: 5}); err != nil {
			b.Fatal(err)
		}
	}
}

// Core distances by the small-k buffer and by full sorting agree.
func TestHDBSCANCoreDistancesBothPaths(t *testing.T) {
	_, m := randomPoints(4, 100, 2, 3)
	for _, k := range []int{1, 2, 5, 64, 65, 100} {
		got := coreDistances(m, k)
		for i := 0; i < m.N; i++ {
			row := append([]float64(nil), m.Data[i*m.N:(i+1)*m.N]...)
			sort.Float64s(row)
			if got[i] != row[k-1] {
				t.Fatalf("k=%d row %d: %g, want %g", k, i, got[i], row[k-1])
			}
		}
	}
}
