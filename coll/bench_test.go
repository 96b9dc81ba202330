package coll

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/platform"
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

// simAllreduceTime is the virtual time of one allreduce of n bytes with s
// on platform p (no noise), from the common start to the last rank's
// return. Every rank sends the same read-only buffer (the bytes do not
// change virtual time) and receives into its own.
func simAllreduceTime(tb testing.TB, p *platform.Platform, s *Schedule, n int) time.Duration {
	tb.Helper()
	var end time.Duration
	var mu sync.Mutex
	send := make([]byte, n)
	_, err := sim.Run(context.Background(), p, sim.Options{NoNoise: true}, func(ctx context.Context, c comm.Comm) error {
		recv := make([]byte, n)
		if err := s.Allreduce(ctx, c, send, recv, SumFloat64); err != nil {
			return err
		}
		mu.Lock()
		end = max(end, c.Now())
		mu.Unlock()
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return end
}

// allreduceBenchAlgs are the algorithms BenchmarkAllreduceZhuCyclic
// compares: blind first, then topology-aware.
var allreduceBenchAlgs = []Algorithm{
	{Name: "recursive-doubling"}, {Name: "rabenseifner"}, {Name: "ring"},
	{Name: "binomial"}, {Name: "pipeline", SegSize: 64 << 10},
	{Name: "dfs-ring"}, {Name: "hierarchical"}, {Name: "hierarchical", Base: "pipeline", SegSize: 64 << 10},
	{Name: "dfs-pipeline", SegSize: 64 << 10},
	{Name: "levels-allreduce"}, {Name: "levels-allreduce", Variant: "rabenseifner"},
}

// BenchmarkAllreduceZhuCyclic reports the simulated allreduce time
// ("vsec") of every algorithm on zhu-2racks with two ranks per host placed
// cyclically (rank r on host r mod 30: ranks 0-14 on rack A, 15-29 on rack
// B, 30-44 on A, 45-59 on B, so neighbours in rank order never share a
// host), at 1 MiB and 16 MiB, and its ratio to the best blind exchange
// algorithm ("x_blind" > 1: faster). Topology-aware algorithms use the
// platform's ground truth as their topology. Trees run Reduce then Bcast.
// It takes about 45 s and 6 GB of memory (tree Reduce holds a vector per
// child). Run:
//
//	go test -run XXX -bench AllreduceZhuCyclic -benchtime 1x ./coll
func BenchmarkAllreduceZhuCyclic(b *testing.B) {
	zhu, err := platform.Load("zhu-2racks")
	if err != nil {
		b.Fatal(err)
	}
	p, err := zhu.Place(2, platform.OrderCyclic)
	if err != nil {
		b.Fatal(err)
	}
	tp := truthTopology(p)
	for _, n := range []int{1 << 20, 16 << 20} {
		times := make([]time.Duration, len(allreduceBenchAlgs))
		for i, a := range allreduceBenchAlgs {
			s, err := a.Build(p.NumRanks(), 0, tp)
			if err != nil {
				b.Fatal(err)
			}
			times[i] = simAllreduceTime(b, p, s, n)
		}
		blind := slices.Min(times[:3])
		for i, a := range allreduceBenchAlgs {
			b.Run(fmt.Sprintf("%s/%dB", a, n), func(b *testing.B) {
				b.ReportMetric(times[i].Seconds(), "vsec")
				b.ReportMetric(float64(blind)/float64(times[i]), "x_blind")
			})
		}
	}
}
