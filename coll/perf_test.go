package coll

import (
	"context"
	"math/rand/v2"
	"testing"

	"netaware/comm"
	"netaware/comm/local"
)

// twoSites is a Hockney cost of two sites (ranks < half on site A, the rest
// on B; if mix, runs of three ranks alternate between the sites): 10 us +
// m/1 GB/s inside a site, 10 ms + m/10 MB/s across.
func twoSites(p int, mix bool) (CostFunc, func(int) int) {
	site := func(r int) int {
		if mix {
			return (r / 3) % 2
		}
		if r < p/2 {
			return 0
		}
		return 1
	}
	return func(i, j, m int) float64 {
		if site(i) == site(j) {
			return 10e-6 + float64(m)/1e9
		}
		return 10e-3 + float64(m)/1e7
	}, site
}

func crossEdges(s *Schedule, site func(int) int) int {
	n := 0
	for r, ch := range s.Children {
		for _, c := range ch {
			if site(r) != site(c) {
				n++
			}
		}
	}
	return n
}

// Seed 000 Fig. 6.6: a minimum-first, depth-first binomial tree over 30
// processes on two sites keeps the slow inter-site link to a single edge,
// where a plain binomial tree over interleaved ranks crosses it many times.
func TestDichevModelBinomialMinFirstSeparatesSites(t *testing.T) {
	cost, site := twoSites(30, true)
	sizes := make([]int, 30)
	for i := range sizes {
		sizes[i] = 1000 + 100*i
	}
	for _, trav := range []Traversal{DepthFirst, BreadthFirst} {
		s, err := ModelBinomial(30, 0, cost, sizes, trav, MinFirst)
		if err != nil {
			t.Fatal(err)
		}
		if d, want := s.Depth(), 4; d != want {
			t.Errorf("traversal %d: depth %d, want the binomial %d", trav, d, want)
		}
		// 15 + 15 ranks: the root's subtrees of 1, 2, 4 and 8 ranks hold
		// its 14 site mates and one remote rank, the subtree of 14 the
		// other site, so the slow link is crossed twice.
		if n := crossEdges(s, site); trav == DepthFirst && n != 2 {
			t.Errorf("depth-first min-first tree crosses sites %d times, want 2", n)
		}
	}
	plain, _ := Binomial(30, 0)
	if n := crossEdges(plain, site); n < 10 {
		t.Errorf("plain binomial crosses only %d times on interleaved sites", n)
	}
	maxFirst, err := ModelBinomial(30, 0, cost, sizes, DepthFirst, MaxFirst)
	if err != nil {
		t.Fatal(err)
	}
	if n := crossEdges(maxFirst, site); n <= 1 {
		t.Errorf("max-first crosses %d times; it should prefer slow links", n)
	}
}

// Seed 000 Sect. 6.2.6: the modified Träff tree is not deeper than a
// binomial tree (homogeneous links and sizes), and on two sites it keeps
// the sites apart.
func TestDichevTraffNotDeeperThanBinomial(t *testing.T) {
	flat := func(i, j, m int) float64 { return 1e-5 + float64(m)*1e-9 }
	for p := 1; p <= 70; p++ {
		sizes := make([]int, p)
		for i := range sizes {
			sizes[i] = 4096
		}
		s, err := Traff(p, p/3, flat, sizes)
		if err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
		b, _ := Binomial(p, p/3)
		if s.Depth() > b.Depth() {
			t.Errorf("P=%d: Träff depth %d > binomial %d", p, s.Depth(), b.Depth())
		}
	}
	// On two interleaved sites with irregular sizes, the model-based tree
	// scatters faster (under the model) than the plain binomial tree.
	cost, _ := twoSites(40, true)
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := make([]int, 40)
	for i := range sizes {
		sizes[i] = 1000 + rng.IntN(100000)
	}
	s, err := Traff(40, 0, cost, sizes)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Binomial(40, 0)
	ts, tb := predictScatter(s, cost, sizes), predictScatter(b, cost, sizes)
	t.Logf("predicted scatterv: Träff %.4fs, binomial %.4fs", ts, tb)
	if ts >= tb {
		t.Errorf("Träff tree predicted %.4fs, not faster than the binomial's %.4fs", ts, tb)
	}
}

// predictScatter is the completion time of a scatter(v) over s under cost:
// a rank forwards to its children one after the other, in send order, each
// child's message holding its whole subtree's blocks.
func predictScatter(s *Schedule, cost CostFunc, sizes []int) float64 {
	sub := make([]int, s.Size)
	pre := s.Preorder()
	for i := len(pre) - 1; i >= 0; i-- {
		r := pre[i]
		sub[r] += sizes[r]
		if p := s.Parent[r]; p >= 0 {
			sub[p] += sub[r]
		}
	}
	return predictTree(s, func(i, j int) float64 { return cost(i, j, sub[j]) })
}

// predictTree is the completion time of a tree where sending from i to j
// takes t(i, j), a rank starts sending once it has received, and sends to
// its children one after the other.
func predictTree(s *Schedule, t func(i, j int) float64) float64 {
	arrive := make([]float64, s.Size)
	end := 0.0
	for _, r := range s.Preorder() {
		at := arrive[r]
		for _, c := range s.Children[r] {
			at += t(r, c)
			arrive[c] = at
			end = max(end, at)
		}
	}
	return end
}

// Seed 000 Sect. 2.2.1: Prim with the plain Hockney edge cost is a minimum
// spanning tree (one inter-site edge); with ready times on homogeneous
// links it becomes the binomial tree (every rank that has the message
// sends at once), with look-ahead likewise.
func TestBhatPrimVariants(t *testing.T) {
	cost, site := twoSites(24, true)
	const m = 1 << 16
	bcast := func(s *Schedule) float64 { return predictTree(s, func(i, j int) float64 { return cost(i, j, m) }) }
	mst, err := Prim(24, 3, cost, m, PrimPlain)
	if err != nil {
		t.Fatal(err)
	}
	if n := crossEdges(mst, site); n != 1 {
		t.Errorf("minimum spanning tree crosses sites %d times, want 1", n)
	}
	binom, _ := Binomial(24, 3)
	for _, v := range []PrimVariant{PrimReady, PrimLookahead} {
		s, err := Prim(24, 3, cost, m, v)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("variant %d: predicted %.4fs (MST %.4fs, binomial %.4fs)", v, bcast(s), bcast(mst), bcast(binom))
		if bcast(s) > bcast(mst) || bcast(s) > bcast(binom) {
			t.Errorf("variant %d predicted %.4fs, slower than the MST (%.4fs) or the binomial (%.4fs)", v, bcast(s), bcast(mst), bcast(binom))
		}
	}
	flat := func(i, j, m int) float64 { return 1 }
	plain, _ := Prim(8, 0, flat, 0, PrimPlain)
	if len(plain.Children[0]) != 7 {
		t.Errorf("plain Prim on equal costs: root has %d children, want the flat tree's 7", len(plain.Children[0]))
	}
	for _, v := range []PrimVariant{PrimReady, PrimLookahead} {
		s, _ := Prim(8, 0, flat, 0, v)
		if s.Depth() != 3 || len(s.Children[0]) != 3 {
			t.Errorf("variant %d on equal costs: depth %d, root fan-out %d, want the binomial 3 and 3", v, s.Depth(), len(s.Children[0]))
		}
	}
}

// Performance-aware schedules are ordinary schedules: every operation runs
// them.
func TestPerformanceAwareSchedulesRun(t *testing.T) {
	cost, _ := twoSites(11, false)
	var scheds []*Schedule
	for root := range 11 {
		for _, mk := range []func() (*Schedule, error){
			func() (*Schedule, error) { return ModelBinomial(11, root, cost, nil, DepthFirst, MinFirst) },
			func() (*Schedule, error) { return Traff(11, root, cost, nil) },
			func() (*Schedule, error) { return Prim(11, root, cost, 1000, PrimLookahead) },
		} {
			s, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			s.SegSize = 300
			scheds = append(scheds, s)
		}
	}
	err := local.Run(context.Background(), 11, func(ctx context.Context, c comm.Comm) error {
		for _, s := range scheds {
			if err := checkAll(ctx, c, s, newFixture(s, 1000)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPerformanceBuildersRejectBadInput(t *testing.T) {
	if _, err := Prim(4, 0, nil, 0, PrimPlain); err == nil {
		t.Error("nil cost accepted")
	}
	if _, err := Traff(4, 0, func(i, j, m int) float64 { return 1 }, []int{1, 2}); err == nil {
		t.Error("wrong number of sizes accepted")
	}
	if _, err := ModelBinomial(0, 0, func(i, j, m int) float64 { return 1 }, nil, DepthFirst, MinFirst); err == nil {
		t.Error("size 0 accepted")
	}
}
