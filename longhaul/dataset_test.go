package longhaul

import (
	"testing"

	"netaware/comm"
	"netaware/dataset"
	"netaware/topo"
)

// The groups paired are the coarsest level's with two or more groups, named
// by their first rank's host where known.
func TestDatasetPaths(t *testing.T) {
	rtt := func(a, b int, s float64) dataset.PairResult[dataset.RTTResult] {
		return dataset.PairResult[dataset.RTTResult]{A: a, B: b, Result: dataset.RTTResult{MinS: s, MaxS: s}}
	}
	bw := func(a, b int, v float64) dataset.PairResult[dataset.BandwidthResult] {
		return dataset.PairResult[dataset.BandwidthResult]{A: a, B: b, Result: dataset.BandwidthResult{BandwidthBps: v}}
	}
	ds := &dataset.Dataset{World: dataset.World{Kind: "local", Size: 4},
		Ranks:     []comm.Identity{{Rank: 0, Host: "a1"}, {Rank: 1, Host: "a2"}, {Rank: 2}, {Rank: 3}},
		RTT:       &dataset.RTTSection{Pairs: []dataset.PairResult[dataset.RTTResult]{rtt(0, 2, 0.01), rtt(1, 3, 0.03), rtt(0, 1, 1e-4)}},
		Bandwidth: &dataset.BandwidthSection{Pairs: []dataset.PairResult[dataset.BandwidthResult]{bw(0, 2, 1e8), bw(1, 3, 3e8), bw(0, 1, 1e9)}},
	}
	tp := &topo.Topology{Size: 4, Levels: []topo.Level{
		{Name: "host", Groups: [][]int{{0}, {1}, {2}, {3}}},
		{Name: "site", Groups: [][]int{{0, 1}, {2, 3}}},
		{Name: "all", Groups: [][]int{{0, 1, 2, 3}}},
	}}
	got, err := DatasetPaths(ds, tp)
	if err != nil {
		t.Fatal(err)
	}
	want := []Path{{Name: "a1.. (inside)", Bandwidth: 1e9, RTT: 1e-4}, {Name: "a1.. - group 1 (rank 2..)", Bandwidth: 1e8, RTT: 0.01}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("paths %+v, want %+v", got, want)
	}
	tp.Levels = tp.Levels[2:]
	if _, err := DatasetPaths(ds, tp); err == nil {
		t.Error("a topology of one group gave paths")
	}
	ds.Bandwidth = nil
	if _, err := DatasetPaths(ds, tp); err == nil {
		t.Error("no bandwidth section gave paths")
	}
}
