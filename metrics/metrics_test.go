package metrics

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"netaware/topo"
)

type goldenCase struct {
	Name string  `json:"name"`
	A    []int   `json:"a"`
	B    []int   `json:"b"`
	NMI  float64 `json:"nmi"`
	ARI  float64 `json:"ari"`
}

// TestGoldenSklearn compares NMI and ARI with scikit-learn's
// normalized_mutual_info_score and adjusted_rand_score on the fixtures made
// by testdata/golden.py.
func TestGoldenSklearn(t *testing.T) {
	data, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Version string       `json:"sklearn_version"`
		Cases   []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 40 {
		t.Fatalf("only %d golden cases", len(g.Cases))
	}
	for _, c := range g.Cases {
		nmi, err := NMI(c.A, c.B)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if math.Abs(nmi-c.NMI) > 1e-12 {
			t.Errorf("%s: NMI = %.15g, sklearn %s says %.15g", c.Name, nmi, g.Version, c.NMI)
		}
		ari, err := ARI(c.A, c.B)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if math.Abs(ari-c.ARI) > 1e-12 {
			t.Errorf("%s: ARI = %.15g, sklearn %s says %.15g", c.Name, ari, g.Version, c.ARI)
		}
	}
}

// TestNMIByHand: a = {0,1},{2,3}; b = {0},{1,2,3}.
// H(a) = ln 2. H(b) = -(1/4 ln 1/4 + 3/4 ln 3/4).
// MI = sum n_ij/n ln(n n_ij / (a_i b_j)):
// cells (a0,b0)=1, (a0,b1)=1, (a1,b1)=2:
// 1/4 ln(4/(2*1)) + 1/4 ln(4/(2*3)) + 2/4 ln(8/(2*3)).
func TestNMIByHand(t *testing.T) {
	a := []int{0, 0, 1, 1}
	b := []int{0, 1, 1, 1}
	ha := math.Log(2)
	hb := -(0.25*math.Log(0.25) + 0.75*math.Log(0.75))
	mi := 0.25*math.Log(2) + 0.25*math.Log(4.0/6) + 0.5*math.Log(8.0/6)
	want := mi / ((ha + hb) / 2)
	got, _ := NMI(a, b)
	if math.Abs(got-want) > 1e-15 {
		t.Errorf("NMI = %v, want %v", got, want)
	}
	// Symmetric.
	if g2, _ := NMI(b, a); math.Abs(g2-got) > 1e-15 {
		t.Errorf("NMI not symmetric: %v vs %v", g2, got)
	}
}

// TestARIByHand: a = {0,1},{2,3}; b = {0,1,2},{3}.
// Unordered pairs (6): together in a: 01, 23. Together in b: 01, 02, 12.
// Index = sum C(n_ij,2) = C(2,2) = 1 (pair 01). sum C(a_i,2) = 2,
// sum C(b_j,2) = 3. Expected = 2*3/6 = 1. Max = (2+3)/2 = 2.5.
// ARI = (1 - 1) / (2.5 - 1) = 0.
func TestARIByHand(t *testing.T) {
	got, _ := ARI([]int{0, 0, 1, 1}, []int{0, 0, 0, 1})
	if math.Abs(got) > 1e-15 {
		t.Errorf("ARI = %v, want 0", got)
	}
	// a = {0,1},{2,3},{4,5}; b = {0,1},{2,3,4,5}: index = 1+1+1 = 3,
	// sum_a = 3, sum_b = 1 + 6 = 7, expected = 21/15 = 1.4, max = 5.
	// ARI = (3 - 1.4) / (5 - 1.4) = 1.6/3.6 = 4/9.
	got, _ = ARI([]int{0, 0, 1, 1, 2, 2}, []int{0, 0, 1, 1, 1, 1})
	if math.Abs(got-4.0/9) > 1e-15 {
		t.Errorf("ARI = %v, want 4/9", got)
	}
}

func TestMismatchedLengths(t *testing.T) {
	if _, err := NMI([]int{0}, []int{0, 1}); err == nil {
		t.Error("NMI accepted different lengths")
	}
	if _, err := ARI([]int{0}, []int{0, 1}); err == nil {
		t.Error("ARI accepted different lengths")
	}
	if _, err := Accuracy([]int{0}, []int{0, 1}); err == nil {
		t.Error("Accuracy accepted different lengths")
	}
	if _, err := NMIGroups([][]int{{0, 1}}, [][]int{{0}}, 2); err == nil || !strings.Contains(err.Error(), "rank 1 is in no group") {
		t.Errorf("NMIGroups err = %v", err)
	}
}

func TestGroupsAndLabelsAgree(t *testing.T) {
	a := [][]int{{0, 3}, {1, 2}, {4}}
	b := [][]int{{0, 1, 2, 3}, {4}}
	la, err := LabelsFromGroups(a, 5)
	if err != nil {
		t.Fatal(err)
	}
	lb, _ := LabelsFromGroups(b, 5)
	n1, _ := NMI(la, lb)
	n2, _ := NMIGroups(a, b, 5)
	r1, _ := ARI(la, lb)
	r2, _ := ARIGroups(a, b, 5)
	if n1 != n2 || r1 != r2 {
		t.Errorf("labels and groups disagree: %v %v / %v %v", n1, n2, r1, r2)
	}
	if _, err := LabelsFromGroups([][]int{{0, 1}, {1}}, 2); err == nil {
		t.Error("overlapping groups accepted")
	}
}

// TestReinfjellEq37AccuracyByHand works Eq. 3.7 on small cases with the
// one-to-one mapping of found clusters to true groups.
func TestReinfjellEq37AccuracyByHand(t *testing.T) {
	truth := []int{0, 0, 0, 0, 1, 1, 1, 1} // two machines of 4 ranks
	cases := []struct {
		name  string
		found []int
		want  float64
	}{
		{"exact", []int{5, 5, 5, 5, 2, 2, 2, 2}, 1},
		{"one rank misplaced", []int{0, 0, 0, 1, 1, 1, 1, 1}, 7.0 / 8},
		{"all in one", []int{0, 0, 0, 0, 0, 0, 0, 0}, 4.0 / 8},
		// Singletons: only one rank per machine can be mapped correctly.
		{"singletons", []int{0, 1, 2, 3, 4, 5, 6, 7}, 2.0 / 8},
		// Split machines: {0,1},{2,3},{4,5,6,7}: best maps {0,1}->m0 and
		// {4,5,6,7}->m1: 6 of 8.
		{"split machine", []int{0, 0, 1, 1, 2, 2, 2, 2}, 6.0 / 8},
	}
	for _, c := range cases {
		got, err := Accuracy(c.found, truth)
		if err != nil || math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: accuracy = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

// TestReinfjellEq310ScoreIsMax: the score of a method is the best accuracy
// over its parameter runs.
func TestReinfjellEq310ScoreIsMax(t *testing.T) {
	if s := Score([]float64{0.25, 0.875, 0.5}); s != 0.875 {
		t.Errorf("Score = %v", s)
	}
	if s := Score(nil); s != 0 {
		t.Errorf("Score(nil) = %v", s)
	}
}

// TestAccuracyMatchesBruteForce checks the matching against trying every
// injective mapping on small random cases.
func TestAccuracyMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(12)
		ka, kb := 1+rng.IntN(5), 1+rng.IntN(5)
		a := make([]int, n)
		b := make([]int, n)
		for i := range a {
			a[i], b[i] = rng.IntN(ka), rng.IntN(kb)
		}
		got, err := Accuracy(a, b)
		if err != nil {
			t.Fatal(err)
		}
		want := float64(bruteMatch(a, b)) / float64(n)
		if math.Abs(got-want) > 1e-15 {
			t.Fatalf("a=%v b=%v: accuracy %v, brute force %v", a, b, got, want)
		}
	}
}

func bruteMatch(a, b []int) int {
	ka, kb := 0, 0
	for i := range a {
		ka = max(ka, a[i]+1)
		kb = max(kb, b[i]+1)
	}
	w := make([][]int, ka)
	for i := range w {
		w[i] = make([]int, kb)
	}
	for i := range a {
		w[a[i]][b[i]]++
	}
	used := make([]bool, kb)
	var rec func(i int) int
	rec = func(i int) int {
		if i == ka {
			return 0
		}
		best := rec(i + 1) // cluster i mapped to nothing
		for j := 0; j < kb; j++ {
			if !used[j] {
				used[j] = true
				best = max(best, w[i][j]+rec(i+1))
				used[j] = false
			}
		}
		return best
	}
	return rec(0)
}

func TestNMIARIProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 200; trial++ {
		n := 2 + rng.IntN(60)
		a := make([]int, n)
		b := make([]int, n)
		perm := rng.Perm(n + 5)
		for i := range a {
			a[i], b[i] = rng.IntN(1+rng.IntN(6)), rng.IntN(4)
		}
		relabel := make([]int, n)
		for i := range a {
			relabel[i] = perm[a[i]]
		}
		nmi, _ := NMI(a, b)
		if nmi < -1e-12 || nmi > 1+1e-12 {
			t.Fatalf("NMI %v outside [0,1]", nmi)
		}
		if n2, _ := NMI(relabel, b); math.Abs(n2-nmi) > 1e-12 {
			t.Fatalf("NMI changed under relabelling: %v vs %v", nmi, n2)
		}
		ari, _ := ARI(a, b)
		if r2, _ := ARI(b, a); math.Abs(ari-r2) > 1e-12 {
			t.Fatalf("ARI not symmetric")
		}
		if self, _ := ARI(a, relabel); self != 1 {
			t.Fatalf("ARI with a relabelled copy = %v", self)
		}
	}
}

// TestCompareMatchesLevels: found levels host/switch/all are scored against
// true levels; each true level finds its counterpart.
func TestCompareMatchesLevels(t *testing.T) {
	found := []topo.Level{
		{Name: "level-0", Groups: [][]int{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}},
		{Name: "level-1", Groups: [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
		{Name: "level-2", Groups: [][]int{{0, 1, 2}, {3}, {4, 5, 6, 7}}}, // one rank wrong
	}
	truth := []topo.Level{
		{Name: "host", Groups: [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
		{Name: "switch", Groups: [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}},
	}
	got, err := Compare(found, truth)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d scores", len(got))
	}
	if got[0].Found != "level-1" || math.Abs(got[0].NMI-1) > 1e-12 || got[0].ARI != 1 || got[0].Accuracy != 1 {
		t.Errorf("host: %+v", got[0])
	}
	if got[1].Found != "level-2" || got[1].FoundIndex != 2 || got[1].Accuracy != 7.0/8 || got[1].TruthGroups != 2 || got[1].FoundGroups != 3 {
		t.Errorf("switch: %+v", got[1])
	}
	wantNMI, _ := NMIGroups(found[2].Groups, truth[1].Groups, 8)
	if got[1].NMI != wantNMI {
		t.Errorf("switch NMI %v, want %v", got[1].NMI, wantNMI)
	}
	if _, err := Compare(found, []topo.Level{{Name: "bad", Groups: [][]int{{0, 1}}}}); err == nil {
		t.Error("Compare accepted levels over different rank counts")
	}
}

// TestShiraiSharedLinkQueryCounts plugs known oracles: a perfect predictor
// has no errors; "always share" has FPR 1 and FNR 0; counts add up.
func TestShiraiSharedLinkQueryCounts(t *testing.T) {
	eps := []int{0, 1, 2, 3, 4, 5, 6, 7}
	// Truth: hosts 0-3 on switch A, 4-7 on switch B; a flow uses the uplink
	// of its source's and destination's switch when it crosses; two flows
	// share a link when they cross in a common uplink or share an endpoint.
	sw := func(h int) int { return h / 4 }
	truth := func(a, b, c, d int) (bool, error) {
		if a == c || a == d || b == c || b == d {
			return true, nil
		}
		if sw(a) != sw(b) && sw(c) != sw(d) {
			return true, nil
		}
		return false, nil
	}
	always := func(a, b, c, d int) (bool, error) { return true, nil }
	r, err := SharedLinkQueries(eps, 1000, 7, truth, truth)
	if err != nil {
		t.Fatal(err)
	}
	if r.FalsePositive != 0 || r.FalseNegative != 0 || r.Queries != 1000 || r.TruePositive+r.TrueNegative != 1000 {
		t.Errorf("perfect oracle: %+v", r)
	}
	if r.TruePositive == 0 || r.TrueNegative == 0 {
		t.Errorf("queries did not cover both answers: %+v", r)
	}
	r2, _ := SharedLinkQueries(eps, 1000, 7, always, truth)
	if r2.FalsePositiveRate != 1 || r2.FalseNegativeRate != 0 || r2.FalsePositive != r.TrueNegative {
		t.Errorf("always-share oracle: %+v (truth negatives %d)", r2, r.TrueNegative)
	}
	r3, _ := SharedLinkQueries(eps, 1000, 7, always, truth)
	if r2 != r3 {
		t.Error("same seed gave different queries")
	}
	// Four distinct endpoints per query.
	distinct := func(a, b, c, d int) (bool, error) {
		if a == b || a == c || a == d || b == c || b == d || c == d {
			t.Fatalf("query with repeated endpoint %d %d %d %d", a, b, c, d)
		}
		return false, nil
	}
	if _, err := SharedLinkQueries(eps, 500, 1, distinct, distinct); err != nil {
		t.Fatal(err)
	}
	if _, err := SharedLinkQueries(eps[:3], 5, 1, truth, truth); err == nil {
		t.Error("3 endpoints accepted")
	}
}

// TestShiraiLatencyRatioSummary: ratios 1.0, 1.04, 0.9, 1.2 (and one pair
// with no measurement): within 5% = 2 of 4, within 10% = 3 of 4.
func TestShiraiLatencyRatioSummary(t *testing.T) {
	meas := map[[2]int]float64{{0, 1}: 10, {0, 2}: 25, {1, 2}: 10, {2, 3}: 5, {1, 3}: 0}
	pred := map[[2]int]float64{{0, 1}: 10, {0, 2}: 26, {1, 2}: 9, {2, 3}: 6, {1, 3}: 3}
	pairs := [][2]int{{0, 1}, {0, 2}, {1, 2}, {2, 3}, {1, 3}}
	ratios, s, err := LatencyRatios(pairs,
		func(a, b int) (float64, error) { return pred[[2]int{a, b}], nil },
		func(a, b int) (float64, error) { return meas[[2]int{a, b}], nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(ratios) != 4 || s.Pairs != 4 || s.Skipped != 1 {
		t.Fatalf("ratios %v summary %+v", ratios, s)
	}
	if s.Within5 != 0.5 || s.Within10 != 0.75 {
		t.Errorf("within5 %v within10 %v", s.Within5, s.Within10)
	}
	if s.Min != 0.9 || s.Max != 1.2 || math.Abs(s.Median-1.02) > 1e-12 || math.Abs(s.Mean-(1+1.04+0.9+1.2)/4) > 1e-12 {
		t.Errorf("summary %+v", s)
	}
	total := s.Under + s.Over
	for _, b := range s.Bins {
		total += b.Count
	}
	if total != 4 || len(s.Bins) != DefaultBinCount {
		t.Errorf("histogram holds %d of 4 ratios in %d bins", total, len(s.Bins))
	}
	// 1.0 and 1.04 fall in [1.00,1.05); 0.9 in [0.90,0.95); 1.2 in [1.20,1.25).
	if s.Bins[20].Count != 2 || s.Bins[18].Count != 1 || s.Bins[24].Count != 1 {
		t.Errorf("bins: %+v", s.Bins[17:26])
	}
}

func TestHistogramEdges(t *testing.T) {
	bins, under, over := Histogram([]float64{-1, 0, 0.5, 0.999, 1, 7, math.NaN()}, 0, 1, 2)
	if under != 2 || over != 2 || bins[0].Count != 1 || bins[1].Count != 2 {
		t.Errorf("bins %+v under %d over %d", bins, under, over)
	}
	if got := AllPairs([]int{3, 5, 9}); len(got) != 3 || got[2] != [2]int{5, 9} {
		t.Errorf("AllPairs = %v", got)
	}
}
