package coll

import (
	"fmt"
	"testing"
	"time"

	"netaware/topo"
)

// simBcastTime is the virtual time of one broadcast of n bytes with s on
// the four-racks platform (no noise), from the first rank's start to the
// last rank's return.
func simBcastTime(b testing.TB, s *Schedule, n int) time.Duration {
	b.Helper()
	p, err := fourRacks()
	if err != nil {
		b.Fatal(err)
	}
	end, _ := simPlatformBcast(b, p, s, n)
	return end
}

// BenchmarkBcastFourRacks reports, per algorithm and message size, the
// simulated broadcast time on 16 ranks spread over 4 racks (rank r on rack
// r mod 4) and its ratio to Open MPI's fixed decision ("x_ompi" > 1 means
// faster than Open MPI). Run: go test -run XXX -bench BcastFourRacks ./coll
func BenchmarkBcastFourRacks(b *testing.B) {
	tp := &topo.Topology{Version: 1, Size: 16}
	racks := make([][]int, 4)
	for r := range 16 {
		tp.Ranks = append(tp.Ranks, topo.Rank{Rank: r})
		racks[r%4] = append(racks[r%4], r)
	}
	tp.Levels = []topo.Level{{Name: "switch", Groups: racks}}
	algs := []Algorithm{
		{Name: "binomial"}, {Name: "pipeline", SegSize: 64 << 10}, {Name: "scatter-allgather"},
		{Name: "magpie"}, {Name: "magpie2", Base: "scatter-allgather"}, {Name: "interpipe", SegSize: 64 << 10},
		{Name: "hierarchical", Base: "pipeline", SegSize: 64 << 10}, {Name: "dfs-pipeline", SegSize: 64 << 10},
	}
	for _, n := range []int{1 << 10, 1 << 20, 8 << 20} {
		base, err := OMPIFixedBcast(16, n).Build(16, 0, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, a := range algs {
			s, err := a.Build(16, 0, tp)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%dB", a, n), func(b *testing.B) {
				var t, tb time.Duration
				for range b.N {
					t, tb = simBcastTime(b, s, n), simBcastTime(b, base, n)
				}
				b.ReportMetric(t.Seconds(), "vsec")
				b.ReportMetric(float64(tb)/float64(t), "x_ompi")
			})
		}
	}
}
