package model

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"netaware/dataset"
	"netaware/topo"
)

// Algorithm 2 is Schedule without dependencies and latencies: the same
// times on random patterns, for both models.
func TestZhuAlgorithm2IsScheduleWithoutDependencies(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 50 {
		n := 4 + rng.IntN(10)
		node, rack := make([]int, n), make([]int, n)
		for r := range n {
			node[r] = r / 2
			rack[r] = node[r] % 2
		}
		c := &Contention{NodeOf: node, RackOf: rack, BetaNIC: mbps940, BetaBackbone: mbps940 / 10, FairnessOnly: trial%2 == 1}
		var flows []Flow
		var ts []Transfer
		for range 1 + rng.IntN(12) {
			a, b := rng.IntN(n), rng.IntN(n)
			if a == b {
				continue
			}
			m := float64(1 + rng.IntN(20e6))
			flows = append(flows, Flow{a, b, m})
			ts = append(ts, Transfer{Src: a, Dst: b, Bytes: m})
		}
		want, steps, err := c.Times(flows)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Schedule(ts, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(got.EndS[i]-want[i]) > 1e-9*want[i] || got.StartS[i] != 0 {
				t.Fatalf("trial %d flow %d: Schedule %g (start %g), Times %g", trial, i, got.EndS[i], got.StartS[i], want[i])
			}
		}
		if got.Steps != steps {
			t.Errorf("trial %d: %d steps, Times %d", trial, got.Steps, steps)
		}
	}
}

// Worked by hand: ranks 0, 1, 2 on nodes of one rack, NIC 1e-8 s/B. A
// scatterv along the chain 0 -> 1 -> 2 with counts 0, 100, 200: the edge
// into 1 carries 300 bytes (3 us, plus a latency of 1 us), the edge into 2
// 200 bytes from then (2 us + 1 us): 4 us and 7 us. The gatherv back up
// moves the same bytes the other way: 2 -> 1 first (3 us), then 1 -> 0
// (4 us): 7 us.
func TestScattervGathervTransfersByHand(t *testing.T) {
	chain := Tree{Root: 0, Parent: []int{-1, 0, 1}, Children: [][]int{{1}, {2}, nil}}
	c := &Contention{NodeOf: []int{0, 1, 2}, RackOf: []int{0, 0, 0}, BetaNIC: 1e-8, BetaBackbone: 1e-9}
	lat := func(i, j int) float64 { return 1e-6 }
	counts := []float64{0, 100, 200}
	down, err := DownTransfers(chain, 0, counts)
	if err != nil {
		t.Fatal(err)
	}
	if len(down) != 2 || down[0].Bytes != 300 || down[1].Bytes != 200 || len(down[1].After) != 1 || down[1].After[0] != 0 {
		t.Fatalf("down transfers %+v", down)
	}
	tm, err := c.Schedule(down, lat)
	if err != nil {
		t.Fatal(err)
	}
	if !near(tm.EndS[0], 4e-6) || !near(tm.EndS[1], 7e-6) || !near(tm.TimeS, 7e-6) {
		t.Errorf("scatterv ends %v, want 4us, 7us", tm.EndS)
	}
	up, err := UpTransfers(chain, 0, counts)
	if err != nil {
		t.Fatal(err)
	}
	// Transfer 0 leaves rank 1 (300 bytes) after transfer 1 (2 -> 1, 200).
	if len(up) != 2 || up[0].Src != 1 || up[0].Bytes != 300 || up[1].Src != 2 || up[1].Bytes != 200 || up[0].After[0] != 1 {
		t.Fatalf("up transfers %+v", up)
	}
	tm, err = c.Schedule(up, lat)
	if err != nil {
		t.Fatal(err)
	}
	if !near(tm.TimeS, 7e-6) {
		t.Errorf("gatherv %g, want 7us", tm.TimeS)
	}
	// A cycle and a self-reference are refused, not looped on.
	if _, err := c.Schedule([]Transfer{{Src: 0, Dst: 1, Bytes: 1, After: []int{1}}, {Src: 1, Dst: 2, Bytes: 1, After: []int{0}}}, nil); err == nil {
		t.Error("cyclic transfers accepted")
	}
	if _, err := c.Schedule([]Transfer{{Src: 0, Dst: 1, Bytes: 1, After: []int{0}}}, nil); err == nil {
		t.Error("a transfer waiting for itself accepted")
	}
	if _, err := DownTransfers(chain, 0, []float64{1, -1, 0}); err == nil {
		t.Error("negative count accepted")
	}
}

// The textbook linear gather under blocking Hockney is (p-1)(alpha + beta
// m), the mirror of the flat broadcast; a reduce along a binomial tree of
// 8 ranks takes ceil(log 8) = 3 rounds, as Eq. 2.2 for the broadcast.
func TestDichevEq22MirroredForGatherAndReduce(t *testing.T) {
	h := Hockney{AlphaS: 1e-5, BetaSPerByte: 1e-9}
	pm := HockneyModel{Hockney: h}
	const p, m = 6, 1000
	flat := Tree{Root: 0, Parent: []int{-1, 0, 0, 0, 0, 0}, Children: [][]int{{1, 2, 3, 4, 5}, nil, nil, nil, nil, nil}}
	g, err := PredictUp(flat, 0, Uniform(p, m), pm)
	if err != nil {
		t.Fatal(err)
	}
	if !near(g.TimeS, FlatHockney(p, m, h)) {
		t.Errorf("linear gather %g, want %g", g.TimeS, FlatHockney(p, m, h))
	}
	s, err := PredictDown(flat, 0, Uniform(p, m), pm)
	if err != nil {
		t.Fatal(err)
	}
	if !near(s.TimeS, FlatHockney(p, m, h)) {
		t.Errorf("linear scatter %g, want %g", s.TimeS, FlatHockney(p, m, h))
	}
	// Binomial over 8 ranks rooted at 0, children nearest first.
	bin := Tree{Root: 0, Parent: []int{-1, 0, 0, 2, 0, 4, 4, 6}, Children: [][]int{{4, 2, 1}, nil, {3}, nil, {6, 5}, nil, {7}, nil}}
	r, err := PredictUp(bin, m, nil, pm)
	if err != nil {
		t.Fatal(err)
	}
	if !near(r.TimeS, BinomialHockney(8, m, h)) {
		t.Errorf("binomial reduce %g, want %g", r.TimeS, BinomialHockney(8, m, h))
	}
}

// Seed 001 Fig. 8's point: when a node sends while three others send to
// it, the asymmetric property slows its outgoing transfer to the incoming
// ones' share, and the fairness model misses it. By hand (one rack, NIC
// B): node 0 receives 10 MB from each of 1, 2, 3 and sends 30 MB to 1,
// which also sends 10 MB to 2. Asymmetric: node 0 has 3 in and 1 out, so
// all four of its flows run at B/3 until the incoming ones end at 30 MB/B
// (0 -> 1 has sent 10 MB); the last 20 MB then take 20 MB/B: 50 MB/B in
// all. Fairness: 0 -> 1 alone on 0's outgoing NIC runs at B: 30 MB/B.
func TestZhuFig8AsymmetricOutgoingFlowSlowed(t *testing.T) {
	c := &Contention{NodeOf: []int{0, 1, 2, 3}, RackOf: []int{0, 0, 0, 0}, BetaNIC: mbps940, BetaBackbone: mbps940}
	ts, err := AlltoallvTransfers([][]float64{{0, 30e6, 0, 0}, {10e6, 0, 10e6, 0}, {10e6, 0, 0, 0}, {10e6, 0, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := c.Schedule(ts, nil)
	fc := *c
	fc.FairnessOnly = true
	f, _ := fc.Schedule(ts, nil)
	if want := 50e6 * mbps940; !near(a.TimeS, want) {
		t.Errorf("asymmetric %g s, want %g", a.TimeS, want)
	}
	if want := 30e6 * mbps940; !near(f.TimeS, want) {
		t.Errorf("fairness %g s, want %g", f.TimeS, want)
	}
	if _, err := AlltoallvTransfers([][]float64{{0, 1}, {1}}); err == nil {
		t.Error("ragged matrix accepted")
	}
}

// Predict puts every model in the report: pair models on a tree, the two
// contention models with their steps, per-flow ends for each.
func TestPredictReportsEveryModel(t *testing.T) {
	f := &File{Version: Version, Size: 3,
		Hockney: &HockneySection{Default: &Hockney{AlphaS: 1e-6, BetaSPerByte: 1e-8}},
		PLogP:   &PLogPSection{Default: &PLogP{LS: 1e-6, Points: []PLogPPoint{{Bytes: 0, OsS: 1e-7, OrS: 1e-7, GS: 1e-7}, {Bytes: 1000, OsS: 1e-6, OrS: 1e-6, GS: 1e-5}}}}}
	pairs, err := PairModels(f)
	if err != nil {
		t.Fatal(err)
	}
	c := &Contention{NodeOf: []int{0, 1, 2}, RackOf: []int{0, 0, 0}, BetaNIC: 1e-8, BetaBackbone: 1e-9}
	fair := *c
	fair.FairnessOnly = true
	star := Tree{Root: 0, Parent: []int{-1, 0, 0}, Children: [][]int{{1, 2}, nil, nil}}
	p, err := Predict(Operation{Op: "bcast", Tree: &star, Bytes: 1000}, Predictors{Pair: pairs, Asymmetric: c, Fairness: &fair})
	if err != nil {
		t.Fatal(err)
	}
	names := p.ModelNames()
	want := []string{"hockney", "hetero-hockney", "loggp", "plogp", Asymmetric, Fairness}
	if len(names) != len(want) {
		t.Fatalf("models %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("models %v, want %v", names, want)
		}
	}
	// Hockney, blocking: the second child 2(alpha + beta m) = 22 us;
	// contention: both 1000-byte copies share the root's NIC, 20 us.
	if !near(p.Totals[0].TimeS, 22e-6) || !near(p.Totals[4].TimeS, 20e-6) {
		t.Errorf("totals %+v", p.Totals)
	}
	if len(p.Flows) != 2 || !near(p.Flows[0].EndS[Asymmetric], 20e-6) {
		t.Errorf("flows %+v", p.Flows)
	}
	if _, err := Predict(Operation{Op: "allreduce", Tree: &star}, Predictors{}); err == nil {
		t.Error("unknown operation accepted")
	}
}

// Discover's model: Hockney fitted to PLogP's L + g(m) beside PLogP, per
// group pair. With L + g(m) exactly 50 us + m / 100 MB/s the fit is exact
// and its standard errors vanish; the NIC comes from the tree's host
// edges, never the backbone.
func TestFromDiscoveryFitsHockneyToPLogP(t *testing.T) {
	sizes := []int{0, 1024, 65536, 1 << 20}
	res := dataset.PLogPResult{LS: 20e-6}
	for _, m := range sizes {
		res.Sizes = append(res.Sizes, dataset.PLogPSize{Bytes: m, GS: 30e-6 + float64(m)*1e-8})
	}
	d := &dataset.Dataset{World: dataset.World{Kind: "sim", Size: 4}, PLogP: &dataset.PLogPSection{
		Schedule: dataset.ScheduleSpec{Mode: "representative", Groups: [][]int{{0, 1}, {2, 3}}},
		Pairs:    []dataset.PairResult[dataset.PLogPResult]{{A: 0, B: 1, Result: res}, {A: 0, B: 2, Result: res}, {A: 2, B: 3, Result: res}}}}
	bw := func(x float64) *float64 { return &x }
	rank := func(r int) *int { return &r }
	tp := &topo.Topology{Version: topo.Version, Size: 4,
		Levels: []topo.Level{{Name: "host", Groups: [][]int{{0}, {1}, {2}, {3}}}, {Name: "switch", Groups: [][]int{{0, 1}, {2, 3}}}},
		Tree: &topo.Tree{Nodes: []topo.Node{{ID: "r0", Rank: rank(0)}, {ID: "r1", Rank: rank(1)}, {ID: "r2", Rank: rank(2)}, {ID: "r3", Rank: rank(3)}, {ID: "s0"}, {ID: "s1"}},
			Edges: []topo.Edge{{A: "r0", B: "s0", Bandwidth: bw(1e8)}, {A: "r1", B: "s0", Bandwidth: bw(1e8)}, {A: "r2", B: "s1", Bandwidth: bw(1e8)}, {A: "r3", B: "s1", Bandwidth: bw(1e8)}, {A: "s0", B: "s1", Bandwidth: bw(1e8)}}}}
	f, err := FromDiscovery(d, tp)
	if err != nil {
		t.Fatal(err)
	}
	if f.Hockney == nil || len(f.Hockney.GroupPairs) != 3 {
		t.Fatalf("hockney %+v", f.Hockney)
	}
	for _, e := range f.Hockney.GroupPairs {
		if !near(e.AlphaS, 50e-6) || !near(e.BetaSPerByte, 1e-8) || e.AlphaSES > 1e-12 || e.BetaSES > 1e-18 {
			t.Errorf("group pair %d->%d: %+v, want alpha 50us, beta 1e-8, no error", e.A, e.B, e)
		}
	}
	c := f.Contention
	if c == nil || !near(c.BetaNICSPerByte, 1e-8) || c.BetaBackboneSPerByte != 0 {
		t.Fatalf("contention %+v: want the NIC at 1e-8 s/B and no backbone (a pair cannot measure it)", c)
	}
	if c.RackOf[1] != 0 || c.RackOf[2] != 1 || c.NodeOf[3] != 3 {
		t.Errorf("bindings %v %v", c.NodeOf, c.RackOf)
	}
	// A backbone edge at a quarter of the NICs may be a per-flow limit
	// (a TCP window): still not the shared capacity.
	*tp.Tree.Edges[4].Bandwidth = 2.5e7
	if f, err = FromDiscovery(d, tp); err != nil || f.Contention.BetaBackboneSPerByte != 0 {
		t.Fatalf("slow backbone edge: %v, %+v", err, f.Contention)
	}
	f.Contention.BetaBackboneSPerByte = 4e-8
	// The file round-trips and the contention model builds from it.
	b, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if cm, err := g.ContentionModel(nil, nil, 0); err != nil || cm.BetaBackbone != 4e-8 {
		t.Errorf("contention model %+v, %v", cm, err)
	}
	g.Contention.BetaBackboneSPerByte = 0
	if _, err := g.ContentionModel(nil, nil, 0); err == nil {
		t.Error("a model without a backbone built")
	}
	for _, bad := range []string{
		`{"version":1,"size":2,"contention":{"beta_nic_s_per_byte":0}}`,
		`{"version":1,"size":2,"contention":{"beta_nic_s_per_byte":1e-8,"node_of":[0,1]}}`,
		`{"version":1,"size":2,"contention":{"beta_nic_s_per_byte":1e-8,"node_of":[0,5],"rack_of":[0,0]}}`,
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// The model.json example of docs/model.md is a valid file.
func TestDocsModelJSONExampleParses(t *testing.T) {
	b, err := os.ReadFile("../docs/model.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "```json\n")
	if i < 0 {
		t.Fatal("docs/model.md has no json example")
	}
	body := text[i+len("```json\n"):]
	body = body[:strings.Index(body, "```")]
	f, err := Parse([]byte(body))
	if err != nil {
		t.Fatalf("docs/model.md example: %v", err)
	}
	if f.Contention == nil || f.Hockney.GroupPairs[0].BetaSES == 0 {
		t.Errorf("example lacks the contention section or the standard errors: %+v", f)
	}
}
