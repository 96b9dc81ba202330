package live

import (
	"context"
	"math"
	"testing"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/infer"
	"netaware/platform"
)

// rttModel is what a noise-free ping-pong between two ranks of p takes:
// both one-way path latencies plus each side's send and receive overheads.
func rttModel(p *platform.Platform, a, b int) float64 {
	oa, ob := p.Overhead(a), p.Overhead(b)
	return 2*p.Route(a, b).LatencyS + oa.SendS + ob.RecvS + ob.SendS + oa.RecvS
}

// TestLiveMatchesSequentialOnSimWithoutNoise: on a noise-free simulated
// platform the distributed protocol measures the RTTs the model predicts
// (up to the small ping message's transfer time) and reproduces every
// rank-to-rank latency within 1%.
func TestLiveMatchesSequentialOnSimWithoutNoise(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithRanks(1, "block")
	var res Result
	_, err = sim.Run(context.Background(), p, sim.Options{NoNoise: true}, func(ctx context.Context, c comm.Comm) error {
		r, err := Infer(ctx, c, DefaultParams())
		if c.Rank() == 0 {
			res = r
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	n := p.NumRanks()
	if got := len(res.Tree.Ranks()); got != n {
		t.Fatalf("tree holds %d ranks, want %d", got, n)
	}
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			want := rttModel(p, a, b) / 2
			if got := res.Tree.Distance(a, b); math.Abs(got/want-1) > 0.01 {
				t.Fatalf("latency %d-%d from the tree %g, platform %g", a, b, got, want)
			}
		}
	}
	if bound := n * (n - 1) / 2; res.Pairs > bound || res.Pairs < n-1 {
		t.Fatalf("%d pairs measured of %d", res.Pairs, bound)
	}
	if len(res.Measured) != res.Pairs {
		t.Fatalf("rank 0 gathered %d measurements, the chain counted %d", len(res.Measured), res.Pairs)
	}
	for _, m := range res.Measured {
		if want := rttModel(p, m.A, m.B); math.Abs(m.RTT.Min/want-1) > 0.01 {
			t.Fatalf("pair %d-%d measured %g, model %g", m.A, m.B, m.RTT.Min, want)
		}
	}
	_ = infer.Ahead
}
