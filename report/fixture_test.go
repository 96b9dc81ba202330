package report

import (
	"fmt"
	"math"
	"math/rand/v2"

	"netaware/comm"
	"netaware/dataset"
	"netaware/topo"
)

// fixture is a synthetic world of sites x switches x ranksPer ranks: a
// core switch joins one switch per site, each site switch joins its leaf
// switches, each leaf switch its ranks. Latencies: rank link 10 µs, leaf
// uplink 50 µs, site uplink 1 ms; bandwidth 1.25 GB/s on rank links and
// 125 MB/s across sites.
type fixture struct {
	sites, switches, ranksPer int
	noise                     float64 // relative jitter of RTTs
	seed                      uint64
}

const (
	fxRankLat = 10e-6
	fxLeafLat = 50e-6
	fxSiteLat = 1e-3
	fxRankBW  = 1.25e9
	fxSiteBW  = 1.25e8
)

func (f fixture) size() int { return f.sites * f.switches * f.ranksPer }

// site and leaf of rank r.
func (f fixture) site(r int) int { return r / (f.switches * f.ranksPer) }
func (f fixture) leaf(r int) int { return r / f.ranksPer }

// oneWay is the true one-way latency between two ranks.
func (f fixture) oneWay(a, b int) float64 {
	switch {
	case a == b:
		return 0
	case f.leaf(a) == f.leaf(b):
		return 2 * fxRankLat
	case f.site(a) == f.site(b):
		return 2*fxRankLat + 2*fxLeafLat
	}
	return 2*fxRankLat + 2*fxLeafLat + 2*fxSiteLat
}

func (f fixture) bandwidth(a, b int) float64 {
	if f.site(a) == f.site(b) {
		return fxRankBW
	}
	return fxSiteBW
}

func (f fixture) topology() *topo.Topology {
	n := f.size()
	t := &topo.Topology{Version: topo.Version, Size: n}
	for r := 0; r < n; r++ {
		t.Ranks = append(t.Ranks, topo.Rank{Rank: r, Host: fmt.Sprintf("h%02d", r)})
	}
	var leafG, siteG [][]int
	for l := 0; l < f.sites*f.switches; l++ {
		var g []int
		for r := l * f.ranksPer; r < (l+1)*f.ranksPer; r++ {
			g = append(g, r)
		}
		leafG = append(leafG, g)
	}
	for s := 0; s < f.sites; s++ {
		var g []int
		for r := s * f.switches * f.ranksPer; r < (s+1)*f.switches*f.ranksPer; r++ {
			g = append(g, r)
		}
		siteG = append(siteG, g)
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	t.Levels = []topo.Level{{Name: "switch", Groups: leafG}, {Name: "site", Groups: siteG}, {Name: "all", Groups: [][]int{all}}}
	tr := &topo.Tree{}
	for r := 0; r < n; r++ {
		rr := r
		tr.Nodes = append(tr.Nodes, topo.Node{ID: fmt.Sprintf("r%d", r), Rank: &rr})
	}
	tr.Nodes = append(tr.Nodes, topo.Node{ID: "core"})
	rbw, sbw := fxRankBW, fxSiteBW
	for s := 0; s < f.sites; s++ {
		sid := fmt.Sprintf("site%d", s)
		tr.Nodes = append(tr.Nodes, topo.Node{ID: sid})
		tr.Edges = append(tr.Edges, topo.Edge{A: sid, B: "core", LatencyS: fxSiteLat, Bandwidth: &sbw})
		for w := 0; w < f.switches; w++ {
			l := s*f.switches + w
			lid := fmt.Sprintf("sw%d", l)
			tr.Nodes = append(tr.Nodes, topo.Node{ID: lid})
			tr.Edges = append(tr.Edges, topo.Edge{A: lid, B: sid, LatencyS: fxLeafLat})
			for r := l * f.ranksPer; r < (l+1)*f.ranksPer; r++ {
				tr.Edges = append(tr.Edges, topo.Edge{A: fmt.Sprintf("r%d", r), B: lid, LatencyS: fxRankLat, Bandwidth: &rbw})
			}
		}
	}
	t.Tree = tr
	t.Method = &topo.Method{Name: "rtt-tree+agglomerative", Params: map[string]any{"linkage": "average"}}
	t.Measurements = &topo.Measurements{PairsMeasured: n * (n - 1) / 2, PairsTotal: n * (n - 1) / 2, VirtualTimeS: 0.25, WallTimeS: 1.5}
	return t
}

// dataset measures every pair once: RTT = 2 x one-way latency with
// multiplicative jitter, bulk bandwidth exact.
func (f fixture) dataset() *dataset.Dataset {
	n := f.size()
	rng := rand.New(rand.NewPCG(f.seed, 7))
	ds := &dataset.Dataset{Version: dataset.Version, World: dataset.World{Kind: "sim", Platform: "fixture", Size: n}}
	for r := 0; r < n; r++ {
		ds.Ranks = append(ds.Ranks, comm.Identity{Rank: r, Host: fmt.Sprintf("h%02d", r)})
	}
	ds.RTT = &dataset.RTTSection{PairsTotal: n * (n - 1) / 2, Complete: true, ClockS: 0.2, Runs: 1}
	ds.Bandwidth = &dataset.BandwidthSection{PairsTotal: n * (n - 1) / 2, Complete: true, ClockS: 0.05, Runs: 1}
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			rtt := 2 * f.oneWay(a, b) * (1 + f.noise*rng.Float64())
			ds.RTT.Pairs = append(ds.RTT.Pairs, dataset.PairResult[dataset.RTTResult]{A: a, B: b, Result: dataset.RTTResult{MinS: rtt, MaxS: rtt * 1.1}})
			ds.Bandwidth.Pairs = append(ds.Bandwidth.Pairs, dataset.PairResult[dataset.BandwidthResult]{A: a, B: b, Result: dataset.BandwidthResult{BandwidthBps: f.bandwidth(a, b)}})
		}
	}
	return ds
}

// input is a complete report input with the truth equal to the found
// levels.
func (f fixture) input() Input {
	t := f.topology()
	return Input{Title: "fixture", Date: "2026-01-02", Topology: t, Dataset: f.dataset(), Truth: t.Levels, TruthName: "fixture", Seed: 1}
}

var _ = math.NaN
