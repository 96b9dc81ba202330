package cluster

import (
	"math"
	"reflect"
	"testing"
)

func bLine(xs ...float64) *Matrix {
	m := NewMatrix(len(xs))
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			m.Set(i, j, math.Abs(xs[i]-xs[j]))
		}
	}
	return m
}

func TestReinfjellSect33LinearSearchPoints(t *testing.T) {
	xs, err := SSSTreeAlphaSpace.Points(DefaultSearchSteps)
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) != 50 || xs[0] != 0 || !near(xs[1], 0.1) || !near(xs[49], 4.9) {
		t.Fatalf("points %v", xs)
	}
	// [1, P) with k = 50 and P = 32 is exhaustive over 1..31.
	ks, err := ClusterCountSpace(32).Points(DefaultSearchSteps)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 31)
	for i := range want {
		want[i] = float64(i + 1)
	}
	if !reflect.DeepEqual(ks, want) {
		t.Fatalf("integer points %v", ks)
	}
	if _, err := (Space{Low: 2, High: 1}).Points(5); err == nil {
		t.Error("accepted reversed space")
	}
	if _, err := SSSTreeAlphaSpace.Points(0); err == nil {
		t.Error("accepted k = 0")
	}
}

func TestSilhouetteHand(t *testing.T) {
	s, err := Silhouette(bLine(0, 1, 10, 11), Labels{0, 0, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := (9.5/10.5 + 8.5/9.5) / 2; !near(s, want) {
		t.Fatalf("silhouette %v, want %v", s, want)
	}
	// A singleton scores 0: points 0,1 | 10 | 11.
	s, _ = Silhouette(bLine(0, 1, 10, 11), Labels{0, 0, 1, 2})
	// p0: a=1, b=min(10,11)=10 -> 0.9; p1: a=1, b=9 -> 8/9.
	if want := (0.9 + 8.0/9) / 4; !near(s, want) {
		t.Fatalf("silhouette with singletons %v, want %v", s, want)
	}
	if _, err := Silhouette(bLine(0, 1, 2), Labels{0, 0, 0}); err == nil {
		t.Error("defined for one cluster")
	}
	if _, err := Silhouette(bLine(0, 1, 2), Labels{0, 1, 2}); err == nil {
		t.Error("defined for n clusters")
	}
}

func TestGoldenSilhouetteSklearn(t *testing.T) {
	g := loadGoldenB(t)
	if len(g.Silhouette) == 0 {
		t.Fatal("no silhouette fixtures")
	}
	for _, c := range g.Silhouette {
		d := matrixFrom(t, c.D)
		// sklearn's matrix is symmetric up to rounding; make it exact.
		for i := 0; i < d.N; i++ {
			for j := i + 1; j < d.N; j++ {
				d.Set(i, j, d.At(i, j))
			}
		}
		s, err := Silhouette(d, c.Labels)
		if err != nil {
			t.Fatal(err)
		}
		if !closeRel(s, c.Silhouette, 1e-9) {
			t.Errorf("%s: silhouette %v, sklearn %v", c.Name, s, c.Silhouette)
		}
	}
}

func TestReinfjellEq37AccuracyHand(t *testing.T) {
	truth := Labels{0, 0, 0, 1, 1, 1}
	for _, c := range []struct {
		found Labels
		want  float64
	}{
		{Labels{5, 5, 5, 2, 2, 2}, 1},
		{Labels{0, 0, 1, 1, 1, 1}, 5.0 / 6},
		{Labels{0, 1, 2, 3, 4, 5}, 2.0 / 6},
		{Labels{0, 0, 0, 0, 0, 0}, 3.0 / 6},
		{Labels{0, 0, Noise, 1, 1, 1}, 5.0 / 6},
		{Labels{0, 1, 0, 1, 0, 1}, 4.0 / 6}, // {0,2}->group 0, {3,5}->group 1
	} {
		a, err := Accuracy(c.found, truth)
		if err != nil {
			t.Fatal(err)
		}
		if !near(a, c.want) {
			t.Errorf("accuracy(%v) = %v, want %v", c.found, a, c.want)
		}
	}
	if _, err := Accuracy(Labels{0}, Labels{0, 1}); err == nil {
		t.Error("accepted different lengths")
	}
}

func TestReinfjellEq310MaxOverParameters(t *testing.T) {
	m0, s0, n0 := framLike(4, 8, 0.02, 3)
	m, tr := shuffled(m0, 3, s0, n0)
	res, err := SearchConnectedComponents(m, DefaultSearchSteps)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != DefaultSearchSteps {
		t.Fatalf("%d trials", len(res.Trials))
	}
	// Some threshold separates sockets and some separates nodes, so the
	// best accuracy over the parameters is 1 at both levels.
	for lvl, truth := range tr {
		sc, err := ScoreMaxOverParameters(res, truth)
		if err != nil {
			t.Fatal(err)
		}
		if sc != 1 {
			t.Errorf("level %d: score %v, want 1", lvl, sc)
		}
	}
	// Without ground truth the silhouette prefers the nodes (the tighter
	// grouping relative to its separation).
	best, err := res.BestTrial()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(Canonical(best.Labels), Canonical(tr[1])) {
		t.Errorf("silhouette picked %d clusters at threshold %v", numClusters(best.Labels), best.X)
	}
}

func TestSearchersFindNodes(t *testing.T) {
	m0, s0, n0 := framLike(4, 8, 0.02, 5)
	m, tr := shuffled(m0, 5, s0, n0)
	for name, search := range map[string]func() (*SearchResult, error){
		"sss":      func() (*SearchResult, error) { return SearchSSS(m, DefaultSearchSteps) },
		"ssstree":  func() (*SearchResult, error) { return SearchSSSTree(m, 1, DefaultSearchSteps) },
		"dbscan":   func() (*SearchResult, error) { return SearchDBSCAN(m, 3, DefaultSearchSteps) },
		"kmedoids": func() (*SearchResult, error) { return SearchKMedoids(m, DefaultSearchSteps) },
	} {
		res, err := search()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		best, err := res.BestTrial()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if acc, _ := Accuracy(best.Labels, tr[1]); acc != 1 {
			t.Errorf("%s: chose x=%v with node accuracy %v (%d clusters)", name, best.X, acc, numClusters(best.Labels))
		}
	}
	// ECO's bound stays below 100% while sockets are 2x apart: its
	// homogeneous subnets are the sockets.
	res, err := SearchECO(m, DefaultSearchSteps)
	if err != nil {
		t.Fatal(err)
	}
	best, err := res.BestTrial()
	if err != nil {
		t.Fatal(err)
	}
	if acc, _ := Accuracy(best.Labels, tr[0]); acc != 1 {
		t.Errorf("eco: chose bound %v with socket accuracy %v", best.X, acc)
	}
	// Louvain on bandwidth-like similarity (inverse distance).
	sim := NewMatrix(m.N)
	for i := 0; i < m.N; i++ {
		for j := i + 1; j < m.N; j++ {
			sim.Set(i, j, 1/m.At(i, j))
		}
	}
	res, err = SearchLouvain(sim, m, 1, DefaultSearchSteps)
	if err != nil {
		t.Fatal(err)
	}
	best, err = res.BestTrial()
	if err != nil {
		t.Fatal(err)
	}
	if acc, _ := Accuracy(best.Labels, tr[1]); acc != 1 {
		t.Errorf("louvain: chose resolution %v with node accuracy %v", best.X, acc)
	}
}
