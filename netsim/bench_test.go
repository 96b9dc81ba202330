package netsim

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkFlowEventsSparse keeps 512 flows in flight between random hosts
// of a 2048-host star (sparse contention: most components are a few flows)
// and reports the events (latency ends and completions) processed per second.
func BenchmarkFlowEventsSparse(b *testing.B) {
	benchEvents(b, 2048, 512)
}

// BenchmarkFlowEventsDense: 512 flows among 16 hosts, so that components are
// large and every event re-solves many flows.
func BenchmarkFlowEventsDense(b *testing.B) {
	benchEvents(b, 16, 512)
}

func benchEvents(b *testing.B, hosts, inflight int) {
	res, nics := star(hosts, 125e6)
	n := mustNet(b, Config{Resources: res, CrossTraffic: 0.05, Weighting: RTTWeighted})
	rng := rand.New(rand.NewPCG(1, 2))
	start := func() {
		s := rng.IntN(hosts)
		d := rng.IntN(hosts - 1)
		if d >= s {
			d++
		}
		mustStart(b, n, hostFlow(nics, s, d, int64(1000+rng.IntN(1_000_000)), 1e-5*float64(1+rng.IntN(5))))
	}
	for i := 0; i < inflight; i++ {
		start()
	}
	b.ReportAllocs()
	b.ResetTimer()
	events := 0
	for events < b.N {
		for _, e := range n.Step() {
			events++
			if e.Kind == Done {
				start()
			}
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
