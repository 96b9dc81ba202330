package report

import (
	"strings"
	"testing"

	"netaware/dataset"
	"netaware/infer"
	"netaware/platform"
	"netaware/topo"
)

type routeProber struct{ p *platform.Platform }

func (q routeProber) RTT(a, b int) (infer.RTT, error) {
	r := 2 * q.p.Route(a, b).LatencyS
	return infer.RTT{Min: r, Max: r}, nil
}

// exactZhuTree infers the tree of zhu-2racks (one rank per host) from
// noise-free RTTs.
func exactZhuTree(t *testing.T) (*platform.Platform, *topo.Tree) {
	t.Helper()
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	n := p.NumRanks()
	hosts := make([]int, n)
	for i := range hosts {
		hosts[i] = i
	}
	res, err := infer.Infer(hosts, routeProber{p}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p, res.Tree.Topo()
}

// TestShiraiExactRTTTreeAnswersLinkQueries: with noise-free RTTs, the tree
// inferred on zhu-2racks (a tree network, one rank per host) answers every
// shared-link query as the platform's routes do and predicts every
// measured latency exactly (seed 002 Sect. 5's two evaluations), and the
// report shows both.
func TestShiraiExactRTTTreeAnswersLinkQueries(t *testing.T) {
	p, tree := exactZhuTree(t)
	n := p.NumRanks()
	tp := &topo.Topology{Version: topo.Version, Size: n, Tree: tree, Levels: p.TruthLevels()}
	ds := &dataset.Dataset{Version: dataset.Version, World: dataset.World{Kind: "sim", Platform: "zhu-2racks", Size: n}}
	ds.RTT = &dataset.RTTSection{PairsTotal: n * (n - 1) / 2, Complete: true}
	for a := 0; a < n; a++ {
		tp.Ranks = append(tp.Ranks, topo.Rank{Rank: a})
		for b := a + 1; b < n; b++ {
			r := 2 * p.Route(a, b).LatencyS
			ds.RTT.Pairs = append(ds.RTT.Pairs, dataset.PairResult[dataset.RTTResult]{A: a, B: b, Result: dataset.RTTResult{MinS: r, MaxS: r}})
		}
	}
	out, err := Build(Input{Topology: tp, Dataset: ds, Platform: p, Seed: 1, SVGOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	acc := parsePage(t, out.HTML)["accuracy"]
	norm := strings.Join(strings.Fields(acc), " ")
	// 2000 queries, no false positive or negative; every ratio exactly 1.
	for _, s := range []string{"over 30 hosts", "0.0 % 0.0 % 0.0 %", "435 100.0 % 100.0 % 1.000 1.000 1.000 1.000"} {
		if !strings.Contains(norm, s) {
			t.Errorf("accuracy lacks %q:\n%s", s, norm)
		}
	}
	a, err := accuracy(tp, p.TruthLevels(), p, ds, 1)
	if err != nil {
		t.Fatal(err)
	}
	if l := a.Links; l == nil || l.Queries != linkQueries || l.FalsePositive != 0 || l.FalseNegative != 0 || l.TruePositive == 0 || l.TrueNegative == 0 {
		t.Errorf("link queries %+v", a.Links)
	}
}

// TestAccuracyChecksEveryPairAgainstTheTruth: a tree that is right on the
// pairs the inference measured but wrong elsewhere is caught. The tree is
// inferred on zhu-2racks and then one host's leaf edge is stretched 10x;
// the dataset holds only pairs among the other hosts, whose ratios stay
// exactly 1, while the check against the platform's routes finds the
// host's 29 pairs off.
func TestAccuracyChecksEveryPairAgainstTheTruth(t *testing.T) {
	p, tree := exactZhuTree(t)
	n := p.NumRanks()
	const bad = 7
	stretched := false
	for i, e := range tree.Edges {
		for _, nd := range tree.Nodes {
			if nd.Rank != nil && *nd.Rank == bad && (e.A == nd.ID || e.B == nd.ID) {
				tree.Edges[i].LatencyS *= 10
				stretched = true
			}
		}
	}
	if !stretched {
		t.Fatalf("rank %d has no leaf edge in the tree", bad)
	}
	tp := &topo.Topology{Version: topo.Version, Size: n, Tree: tree, Levels: p.TruthLevels()}
	for a := 0; a < n; a++ {
		tp.Ranks = append(tp.Ranks, topo.Rank{Rank: a})
	}
	ds := &dataset.Dataset{Version: dataset.Version, World: dataset.World{Kind: "sim", Platform: "zhu-2racks", Size: n}}
	ds.RTT = &dataset.RTTSection{PairsTotal: n * (n - 1) / 2}
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			if a != bad && b != bad {
				r := 2 * p.Route(a, b).LatencyS
				ds.RTT.Pairs = append(ds.RTT.Pairs, dataset.PairResult[dataset.RTTResult]{A: a, B: b, Result: dataset.RTTResult{MinS: r, MaxS: r}})
			}
		}
	}
	a, err := accuracy(tp, p.TruthLevels(), p, ds, 1)
	if err != nil {
		t.Fatal(err)
	}
	if l := a.Latency; l == nil || l.Pairs != (n-1)*(n-2)/2 || l.Within5 != 1 {
		t.Fatalf("measured pairs: %+v, want %d pairs all within 5%%", a.Latency, (n-1)*(n-2)/2)
	}
	all := n * (n - 1) / 2
	want := float64(all-(n-1)) / float64(all)
	if l := a.TruthLatency; l == nil || l.Pairs != all || l.Within5 != want {
		t.Fatalf("truth: %+v, want %d pairs, %.4f within 5%%", a.TruthLatency, all, want)
	}
	out, err := Build(Input{Topology: tp, Dataset: ds, Platform: p, Seed: 1, SVGOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	norm := strings.Join(strings.Fields(parsePage(t, out.HTML)["accuracy"]), " ")
	if !strings.Contains(norm, "Latency: tree vs truth") || !strings.Contains(norm, "every one of the 435 host pairs") {
		t.Errorf("the report's accuracy section lacks the check against the truth:\n%s", norm)
	}
}
