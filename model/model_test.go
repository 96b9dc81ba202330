package model

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"netaware/dataset"
	"netaware/probe"
)

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// binomialTree is the binomial tree over p ranks rooted at 0 whose root
// sends to the largest subtree first (children r+2^k, high k first).
func binomialTree(p int) Tree {
	t := Tree{Root: 0, Parent: make([]int, p), Children: make([][]int, p)}
	t.Parent[0] = -1
	for r := range p {
		// r's children are r + 2^k for 2^k below r's lowest set bit.
		low := p
		if r != 0 {
			low = r & -r
		}
		var ch []int
		for k := 1; k < low && r+k < p; k <<= 1 {
			ch = append(ch, r+k)
		}
		for i, j := 0, len(ch)-1; i < j; i, j = i+1, j-1 {
			ch[i], ch[j] = ch[j], ch[i]
		}
		t.Children[r] = ch
		for _, c := range ch {
			t.Parent[c] = r
		}
	}
	return t
}

func flatTree(p int) Tree {
	t := Tree{Root: 0, Parent: make([]int, p), Children: make([][]int, p)}
	t.Parent[0] = -1
	for r := 1; r < p; r++ {
		t.Parent[r] = 0
		t.Children[0] = append(t.Children[0], r)
	}
	return t
}

func chainTree(p int) Tree {
	t := Tree{Root: 0, Parent: make([]int, p), Children: make([][]int, p)}
	t.Parent[0] = -1
	for r := 1; r < p; r++ {
		t.Parent[r] = r - 1
		t.Children[r-1] = []int{r}
	}
	return t
}

func TestDichevEq22BinomialHockney8Ranks(t *testing.T) {
	h := Hockney{AlphaS: 50e-6, BetaSPerByte: 1e-9}
	m := 1 << 20
	want := 3 * (50e-6 + float64(m)*1e-9)
	if got := BinomialHockney(8, m, h); !near(got, want) {
		t.Fatalf("Eq. 2.2 closed form: %g, want %g", got, want)
	}
	pr, err := PredictBcast(binomialTree(8), m, HockneyModel{Hockney: h})
	if err != nil {
		t.Fatal(err)
	}
	if !near(pr.TimeS, want) {
		t.Fatalf("tree prediction of the binomial: %g, want 3(alpha+m beta) = %g", pr.TimeS, want)
	}
	// Hand-worked arrival rounds: 4 in round 1; 2 and 6 in round 2; the rest in 3.
	round := []int{0, 3, 2, 3, 1, 3, 2, 3}
	for r, k := range round {
		if !near(pr.ReadyS[r], float64(k)*h.Time(m)) {
			t.Errorf("rank %d ready at %g, want round %d", r, pr.ReadyS[r], k)
		}
	}
}

func TestDichevEq22AnyP(t *testing.T) {
	h := Hockney{AlphaS: 1e-5, BetaSPerByte: 2e-9}
	for p := 1; p <= 70; p++ {
		pr, err := PredictBcast(binomialTree(p), 1000, HockneyModel{Hockney: h})
		if err != nil {
			t.Fatal(err)
		}
		if want := BinomialHockney(p, 1000, h); !near(pr.TimeS, want) {
			t.Fatalf("p=%d: tree %g, Eq. 2.2 %g", p, pr.TimeS, want)
		}
	}
}

func TestDichevEq23LogPRoundsWhenGapEqualsRound(t *testing.T) {
	// With g = 2o + L the sender is busy for a whole round, so the
	// schedule-level prediction meets the round-based Eq. 2.3.
	l := LogP{LS: 10e-6, OS: 2e-6}
	l.GS = 2*l.OS + l.LS
	pr, err := PredictBcast(binomialTree(16), 8, LogGPModel{LogGP{LogP: l}})
	if err != nil {
		t.Fatal(err)
	}
	if want := 4 * (2*l.OS + l.LS); !near(pr.TimeS, want) || !near(BinomialLogP(16, l), want) {
		t.Fatalf("tree %g, Eq. 2.3 %g, want %g", pr.TimeS, BinomialLogP(16, l), want)
	}
	// With a smaller gap the root's later children start earlier (Fig.
	// 2.1's overlap of g and o): rank 4, the root's second child, has the
	// message at g + 2o + L instead of the end of round 2; the total stays
	// within the round bound (the first-child path is 4 full rounds).
	l.GS = l.OS
	pr, _ = PredictBcast(binomialTree(16), 8, LogGPModel{LogGP{LogP: l}})
	if pr.TimeS > BinomialLogP(16, l) || !near(pr.ReadyS[4], l.GS+2*l.OS+l.LS) {
		t.Fatalf("g < 2o+L: tree %g (Eq. 2.3 %g), rank 4 at %g", pr.TimeS, BinomialLogP(16, l), pr.ReadyS[4])
	}
}

func TestDichevEq24LogGP(t *testing.T) {
	l := LogGP{LogP: LogP{LS: 5e-6, OS: 1e-6, GS: 3e-6}, GPerByteS: 1e-9}
	m := 4097
	want := 3 * (2e-6 + 5e-6 + 1e-9*4096)
	if got := BinomialLogGP(8, m, l); !near(got, want) {
		t.Fatalf("Eq. 2.4: %g, want %g", got, want)
	}
	if got := l.Time(m); !near(got, 2e-6+5e-6+1e-9*4096) {
		t.Fatalf("LogGP point-to-point %g", got)
	}
}

func TestDichevEq27HeterogeneousTree(t *testing.T) {
	// Tree 0 -> {1, 2} (1 first), 1 -> {3}. Per-rank S and R, shared X.
	s := SXR{
		Sc: []float64{1, 2, 0, 0}, Sm: []float64{0.1, 0.2, 0, 0},
		Rc: []float64{0, 3, 4, 5}, Rm: []float64{0, 0.01, 0.02, 0.03},
		Xc: 10, Xm: 0.5,
	}
	tr := Tree{Root: 0, Parent: []int{-1, 0, 0, 1}, Children: [][]int{{1, 2}, {3}, nil, nil}}
	m := 100
	// Eq. 2.7 by hand:
	// T1 = 0 + 1*(1 + 0.1*100) + 0.5*100 + 10 + 0.01*100 + 3 = 11 + 50 + 10 + 1 + 3 = 75
	// T2 = 0 + 2*(11) + 50 + 10 + 0.02*100 + 4 = 22 + 60 + 2 + 4 = 88
	// T3 = 75 + 1*(2 + 0.2*100) + 50 + 10 + 0.03*100 + 5 = 75 + 22 + 60 + 3 + 5 = 165
	want := []float64{0, 75, 88, 165}
	pr, err := PredictBcast(tr, m, s)
	if err != nil {
		t.Fatal(err)
	}
	for r, w := range want {
		if !near(pr.ReadyS[r], w) {
			t.Errorf("T_recv^%d = %g, want %g", r, pr.ReadyS[r], w)
		}
	}
	if pr.TimeS != 165 {
		t.Errorf("Eq. 2.6 max = %g, want 165", pr.TimeS)
	}
}

func TestFlatAndPipelineHockney(t *testing.T) {
	h := Hockney{AlphaS: 1e-4, BetaSPerByte: 1e-8}
	m := 1 << 20
	pr, _ := PredictBcast(flatTree(9), m, HockneyModel{Hockney: h})
	if want := FlatHockney(9, m, h); !near(pr.TimeS, want) || !near(want, 8*h.Time(m)) {
		t.Fatalf("flat: tree %g, closed form %g", pr.TimeS, want)
	}
	for _, k := range []int{1, 2, 16, 64} {
		tr := chainTree(6)
		tr.SegBytes = m / k
		pr, _ := PredictBcast(tr, m, HockneyModel{Hockney: h})
		if want := PipelineHockney(6, m, k, h); !near(pr.TimeS, want) {
			t.Fatalf("pipeline k=%d: tree %g, closed form %g", k, pr.TimeS, want)
		}
	}
}

func TestPredictRejectsBadTrees(t *testing.T) {
	bad := []Tree{
		{},
		{Root: 0, Parent: []int{-1, 0}, Children: [][]int{{}, {}}},        // 1 unreachable
		{Root: 0, Parent: []int{-1, 0}, Children: [][]int{{1, 1}, {}}},    // repeated child
		{Root: 0, Parent: []int{-1, 1}, Children: [][]int{{1}, {}}},       // parent mismatch
		{Root: 2, Parent: []int{-1, 0}, Children: [][]int{{1}, {}}},       // root out of range
		{Root: 0, Parent: []int{-1, 0}, Children: [][]int{{5}, {}}},       // child out of range
		{Root: 0, Parent: []int{-1}, Children: [][]int{{}}, SegBytes: -1}, // negative segment
	}
	for i, tr := range bad {
		if _, err := PredictBcast(tr, 10, HockneyModel{}); err == nil {
			t.Errorf("tree %d accepted", i)
		}
	}
}

func TestPLogPInterpolation(t *testing.T) {
	p := PLogP{LS: 2e-6, Points: []PLogPPoint{
		{Bytes: 0, OsS: 1e-6, OrS: 2e-6, GS: 3e-6},
		{Bytes: 1024, OsS: 2e-6, OrS: 2e-6, GS: 13e-6},
		{Bytes: 4096, OsS: 5e-6, OrS: 8e-6, GS: 43e-6},
	}}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		m           int
		os, or, gap float64
	}{
		{0, 1e-6, 2e-6, 3e-6},
		{512, 1.5e-6, 2e-6, 8e-6},         // midway in the first segment
		{1024, 2e-6, 2e-6, 13e-6},         // exact point
		{2560, 3.5e-6, 5e-6, 28e-6},       // midway in the second
		{8192, 9e-6, 16e-6, 83e-6},        // extrapolated with the last slope
		{4096 + 3072, 8e-6, 14e-6, 73e-6}, // 3/3 of a segment past the end
	}
	for _, c := range cases {
		if !near(p.Os(c.m), c.os) || !near(p.Or(c.m), c.or) || !near(p.G(c.m), c.gap) {
			t.Errorf("m=%d: os %g or %g g %g, want %g %g %g", c.m, p.Os(c.m), p.Or(c.m), p.G(c.m), c.os, c.or, c.gap)
		}
	}
	if got := p.Time(512); !near(got, 10e-6) {
		t.Errorf("one-way L+g(512) = %g, want 1e-5", got)
	}
	if got := p.Distance(512); !near(got, 2e-6+1.75e-6+8e-6) {
		t.Errorf("Eq. 3.3 distance %g", got)
	}
	one := PLogP{LS: 1, Points: []PLogPPoint{{Bytes: 8, GS: 4}}}
	if one.G(1<<30) != 4 {
		t.Errorf("single point is not constant")
	}
}

func TestReinfjellTable21LogGPFromPLogP(t *testing.T) {
	p := PLogP{LS: 10e-6, Points: []PLogPPoint{
		{Bytes: 0, OsS: 1e-6, OrS: 1e-6, GS: 2e-6},
		{Bytes: 2, OsS: 3e-6, OrS: 5e-6, GS: 6e-6},
		{Bytes: 1000, OsS: 3e-6, OrS: 5e-6, GS: 100e-6},
	}}
	l := p.LogGP()
	// At 1 byte: os 2e-6, or 3e-6, g 4e-6.
	if !near(l.LS, 10e-6+4e-6-2e-6-3e-6) || !near(l.OS, 2.5e-6) || !near(l.GS, 4e-6) || !near(l.GPerByteS, 100e-6/1000) {
		t.Fatalf("LogGP from PLogP: %+v", l)
	}
}

func TestPLogPCheckRejects(t *testing.T) {
	for i, p := range []PLogP{
		{},
		{LS: -1, Points: []PLogPPoint{{}}},
		{Points: []PLogPPoint{{Bytes: 4}, {Bytes: 4}}},
		{Points: []PLogPPoint{{Bytes: 0, GS: math.NaN()}}},
		{Points: []PLogPPoint{{Bytes: -1}}},
	} {
		if p.Check() == nil {
			t.Errorf("case %d accepted", i)
		}
	}
}

func sampleFile() *File {
	return &File{
		Version: Version, Size: 4, Source: "test",
		Groups: [][]int{{0, 1}, {2, 3}},
		Hockney: &HockneySection{
			Default:    &Hockney{AlphaS: 1, BetaSPerByte: 1},
			Pairs:      []HockneyEntry{{A: 0, B: 1, Hockney: Hockney{AlphaS: 1e-6, BetaSPerByte: 1e-10}}},
			GroupPairs: []HockneyEntry{{A: 0, B: 1, Hockney: Hockney{AlphaS: 1e-4, BetaSPerByte: 8e-8}}},
		},
		PLogP: &PLogPSection{
			Pairs: []PLogPEntry{{A: 2, B: 3, PLogP: PLogP{LS: 1e-6, Points: []PLogPPoint{{Bytes: 0, OsS: 1e-7, OrS: 1e-7, GS: 2e-7}, {Bytes: 1024, OsS: 2e-7, OrS: 3e-7, GS: 9e-7}}}}},
			GroupPairs: []PLogPEntry{
				{A: 0, B: 0, PLogP: PLogP{LS: 5e-7, Points: []PLogPPoint{{Bytes: 0, GS: 1e-7}}}},
				{A: 0, B: 1, PLogP: PLogP{LS: 5e-5, Points: []PLogPPoint{{Bytes: 0, GS: 1e-6}}}},
				{A: 1, B: 1, PLogP: PLogP{LS: 6e-7, Points: []PLogPPoint{{Bytes: 0, GS: 1e-7}}}},
			},
		},
	}
}

func TestModelFileRoundTrip(t *testing.T) {
	f := sampleFile()
	path := filepath.Join(t.TempDir(), "model.json")
	if err := f.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f, g) {
		t.Fatalf("round trip differs:\n%+v\n%+v", f, g)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("atomic write left %d files", len(entries))
	}
}

func TestModelFilePrecedence(t *testing.T) {
	f := sampleFile()
	h, err := f.HeteroHockney()
	if err != nil {
		t.Fatal(err)
	}
	// 0->1 measured; 1->0 falls back to the reverse measurement.
	if h.At(0, 1).AlphaS != 1e-6 || h.At(1, 0).AlphaS != 1e-6 {
		t.Errorf("pair: %v %v", h.At(0, 1), h.At(1, 0))
	}
	// 0->2 and 3->1 come from group pair 0-1 (either direction).
	if h.At(0, 2).AlphaS != 1e-4 || h.At(3, 1).AlphaS != 1e-4 {
		t.Errorf("group pair: %v %v", h.At(0, 2), h.At(3, 1))
	}
	// 2->3 has only the default.
	if h.At(2, 3).AlphaS != 1 {
		t.Errorf("default: %v", h.At(2, 3))
	}
	p, err := f.HeteroPLogP()
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Cost(3, 2, 512); !near(c.SendS, 5.5e-7) || c.RestS != 1e-6 {
		t.Errorf("plogp 3->2 (reverse of a measured pair): %+v", c)
	}
	if c := p.Cost(1, 2, 0); c.RestS != 5e-5 {
		t.Errorf("plogp group pair: %+v", c)
	}
	f.PLogP.GroupPairs = f.PLogP.GroupPairs[1:]
	if _, err := f.HeteroPLogP(); err == nil {
		t.Errorf("missing pair 0->1 not reported")
	}
}

func TestModelFileRejects(t *testing.T) {
	for i, s := range []string{
		`{"version": 2, "size": 2}`,
		`{"version": 1, "size": 0}`,
		`{"version": 1, "size": 2, "hockney": {"pairs": [{"a": 0, "b": 2, "alpha_s": 1, "beta_s_per_byte": 0}]}}`,
		`{"version": 1, "size": 2, "hockney": {"default": {"alpha_s": -1, "beta_s_per_byte": 0}}}`,
		`{"version": 1, "size": 2, "hockney": {"default": {"alpha": 1}}}`,
		`{"version": 1, "size": 2, "groups": [[0], [0]]}`,
		`{"version": 1, "size": 2, "plogp": {"group_pairs": [{"a": 0, "b": 0, "L_s": 0, "points": [{"bytes": 0, "os_s": 0, "or_s": 0, "g_s": 0}]}]}}`,
		`{"version": 1, "size": 2, "plogp": {"pairs": [{"a": 0, "b": 1, "L_s": 0, "points": []}]}}`,
	} {
		if _, err := Parse([]byte(s)); err == nil {
			t.Errorf("case %d accepted: %s", i, s)
		}
	}
}

func FuzzParse(f *testing.F) {
	b, _ := sampleFile().Marshal()
	f.Add(b)
	f.Add([]byte(`{"version":1,"size":3}`))
	f.Add([]byte(`{"version":1,"size":2,"groups":[[0,1]],"hockney":{"group_pairs":[{"a":0,"b":0,"alpha_s":1,"beta_s_per_byte":1}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil || m.Size > 64 {
			return
		}
		// A valid document builds its models without panicking.
		if h, err := m.HeteroHockney(); err == nil {
			h.Cost(0, m.Size-1, 100)
		}
		if p, err := m.HeteroPLogP(); err == nil {
			p.Cost(m.Size-1, 0, 100)
		}
	})
}

func TestFromDatasetPerPairAndGroups(t *testing.T) {
	d := &dataset.Dataset{Version: dataset.Version, World: dataset.World{Kind: "sim", Platform: "x", Size: 4}}
	d.Hockney = &dataset.HockneySection{}
	add := func(a, b int, alpha, beta float64) {
		d.Hockney.Pairs = append(d.Hockney.Pairs, dataset.PairResult[dataset.HockneyResult]{A: a, B: b, Result: dataset.HockneyResult{AlphaS: alpha, BetaSPerByte: beta}})
	}
	add(0, 1, 1e-6, 1e-10)
	add(2, 3, 3e-6, 3e-10)
	add(0, 2, 1e-4, 1e-8)
	add(1, 3, 3e-4, 3e-8)
	d.PLogP = &dataset.PLogPSection{}
	pl := func(a, b int, l, g0, g1k float64) {
		d.PLogP.Pairs = append(d.PLogP.Pairs, dataset.PairResult[dataset.PLogPResult]{A: a, B: b, Result: dataset.PLogPResult{LS: l, Sizes: []dataset.PLogPSize{
			{Bytes: 0, Os: dataset.Summary{Mean: 1e-7}, Or: dataset.Summary{Mean: 2e-7}, GS: g0},
			{Bytes: 1024, Os: dataset.Summary{Mean: 1e-7}, Or: dataset.Summary{Mean: 2e-7}, GS: g1k},
		}}})
	}
	pl(0, 2, 1e-5, 1e-6, 2e-6)
	pl(1, 3, 3e-5, 3e-6, 4e-6)
	f, err := FromDataset(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Hockney.Pairs) != 4 || len(f.PLogP.Pairs) != 2 || f.PLogP.Pairs[0].Points[1].OrS != 2e-7 {
		t.Fatalf("per-pair model: %+v %+v", f.Hockney, f.PLogP)
	}
	g, err := FromDataset(d, [][]int{{0, 1}, {2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := g.HeteroHockney()
	if err != nil {
		t.Fatal(err)
	}
	// 3->2 from group pair (1,1), 2->1 from the reverse of group pair (0,1).
	if !near(h.At(3, 2).AlphaS, 3e-6) || !near(h.At(2, 1).AlphaS, 2e-4) {
		t.Fatalf("group model: 3->2 %v, 2->1 %v", h.At(3, 2), h.At(2, 1))
	}
	var cross *HockneyEntry
	for i, e := range g.Hockney.GroupPairs {
		if e.A == 0 && e.B == 1 {
			cross = &g.Hockney.GroupPairs[i]
		}
	}
	if cross == nil || !near(cross.AlphaS, 2e-4) || !near(cross.BetaSPerByte, 2e-8) {
		t.Fatalf("group pair 0->1 average: %+v", cross)
	}
	if len(g.PLogP.GroupPairs) != 1 || !near(g.PLogP.GroupPairs[0].LS, 2e-5) || !near(g.PLogP.GroupPairs[0].Points[1].GS, 3e-6) {
		t.Fatalf("plogp group average: %+v", g.PLogP.GroupPairs)
	}
}

func TestPropertyTreePredictionMonotoneInSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		p := 2 + rng.IntN(40)
		// Random tree: each rank attaches to an earlier one.
		tr := Tree{Root: 0, Parent: make([]int, p), Children: make([][]int, p), SegBytes: rng.IntN(3) * 4096}
		tr.Parent[0] = -1
		for r := 1; r < p; r++ {
			par := rng.IntN(r)
			tr.Parent[r] = par
			tr.Children[par] = append(tr.Children[par], r)
		}
		h := NewHeteroHockney(p, Hockney{})
		for i := range p {
			for j := range p {
				_ = h.Set(i, j, Hockney{AlphaS: rng.Float64() * 1e-4, BetaSPerByte: rng.Float64() * 1e-8})
			}
		}
		prev := -1.0
		for _, m := range []int{0, 1, 1000, 4096, 100000, 1 << 20} {
			pr, err := PredictBcast(tr, m, h)
			if err != nil {
				t.Fatal(err)
			}
			if pr.TimeS < prev {
				t.Fatalf("trial %d: time fell from %g to %g at m=%d", trial, prev, pr.TimeS, m)
			}
			// No rank is ready before its parent.
			for r := 1; r < p; r++ {
				if pr.ReadyS[r] < pr.ReadyS[tr.Parent[r]] {
					t.Fatalf("trial %d: rank %d ready before its parent", trial, r)
				}
			}
			prev = pr.TimeS
		}
	}
}

// A representative schedule with a host level above four sockets measures
// 7 pairs (4 inside sockets, one between the sockets of each host, one
// between the hosts); the model still has every socket pair, each from
// the pair that stands for it.
func TestFromDatasetRepresentativeLevels(t *testing.T) {
	sockets := [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}
	hosts := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}
	spec := dataset.ScheduleSpec{Mode: "representative", Groups: sockets, Levels: [][][]int{hosts}, Parallel: true}
	plan, err := probe.PlanOf(spec)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataset.Dataset{Version: dataset.Version, World: dataset.World{Kind: "sim", Size: 8}}
	d.PLogP = &dataset.PLogPSection{Schedule: spec}
	ls := map[probe.Pair]float64{{A: 0, B: 1}: 1e-7, {A: 2, B: 3}: 2e-7, {A: 4, B: 5}: 3e-7, {A: 6, B: 7}: 4e-7,
		{A: 0, B: 2}: 1e-6, {A: 4, B: 6}: 2e-6, {A: 0, B: 4}: 1e-5}
	if len(plan.Pairs()) != len(ls) {
		t.Fatalf("plan measures %v", plan.Pairs())
	}
	for _, p := range plan.Pairs() {
		l, ok := ls[p]
		if !ok {
			t.Fatalf("plan measures %v, not in the hand-made list", p)
		}
		d.PLogP.Pairs = append(d.PLogP.Pairs, dataset.PairResult[dataset.PLogPResult]{A: p.A, B: p.B, Result: dataset.PLogPResult{LS: l, Sizes: []dataset.PLogPSize{
			{Bytes: 0, Os: dataset.Summary{Mean: 1e-7}, Or: dataset.Summary{Mean: 2e-7}, GS: 3e-7}}}})
	}
	f, err := FromDataset(d, sockets)
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.HeteroPLogP()
	if err != nil {
		t.Fatalf("model incomplete: %v", err)
	}
	for _, c := range []struct {
		a, b int
		l    float64
	}{
		{1, 0, 1e-7}, {3, 2, 2e-7}, {1, 3, 1e-6}, {3, 0, 1e-6}, {5, 7, 2e-6},
		{3, 7, 1e-5}, {7, 3, 1e-5}, {1, 6, 1e-5}, {5, 2, 1e-5},
	} {
		if got := h.P[c.a*8+c.b].LS; got != c.l {
			t.Errorf("%d->%d: L %g, want %g", c.a, c.b, got, c.l)
		}
	}
	// Without the levels, the same pairs leave socket pairs unmodelled.
	d.PLogP.Schedule.Levels = nil
	g, err := FromDataset(d, sockets)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.HeteroPLogP(); err == nil {
		t.Error("a model missing socket pairs was complete")
	}
}

// Large models are written compact (indenting copies the document twice
// more), small ones indented; both parse back to the same model.
func TestMarshalCompactWhenLarge(t *testing.T) {
	for _, n := range []int{3, compactEntries + 1} {
		f := &File{Version: Version, Size: n + 1, Hockney: &HockneySection{}}
		for i := 0; i < n; i++ {
			f.Hockney.Pairs = append(f.Hockney.Pairs, HockneyEntry{A: i, B: i + 1, Hockney: Hockney{AlphaS: 1e-6, BetaSPerByte: 1e-9}})
		}
		b, err := f.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if indented := bytes.Contains(b, []byte("\n  ")); indented != (n <= compactEntries) {
			t.Errorf("%d entries: indented %v", n, indented)
		}
		g, err := Parse(b)
		if err != nil || len(g.Hockney.Pairs) != n {
			t.Fatalf("%d entries: parse back: %v", n, err)
		}
	}
}
