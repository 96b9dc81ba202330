package live

import (
	"context"
	"errors"
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

// inferAt runs the inference over the first n ranks of zhu-2racks with
// perHost ranks per host, under the given eager limit, and returns every
// rank's result.
func inferAt(t *testing.T, n, perHost, eager int, noise bool) []Result {
	t.Helper()
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithRanks(perHost, "block")
	ranks := make([]int, n)
	for i := range ranks {
		ranks[i] = i
	}
	res := make([]Result, n)
	_, err = sim.Run(context.Background(), p, sim.Options{NoNoise: !noise, EagerLimit: eager}, func(ctx context.Context, c comm.Comm) error {
		sub, err := c.Sub(ranks)
		if errors.Is(err, comm.ErrNotMember) {
			return nil
		}
		if err != nil {
			return err
		}
		r, err := Infer(ctx, sub, DefaultParams())
		res[sub.Rank()] = r
		return err
	})
	if err != nil {
		t.Fatalf("%d ranks, eager limit %d: %v", n, eager, err)
	}
	return res
}

// TestFinalTreeLargerThanEagerLimit is the deadlock of issue 18: the final
// tree of 30 ranks (15 hosts of 2: 46 nodes, 736 bytes) is relayed by
// rendezvous under a 512-byte eager limit. Every rank must end with the
// whole tree.
func TestFinalTreeLargerThanEagerLimit(t *testing.T) {
	res := inferAt(t, 30, 2, 512, true)
	want, _ := res[0].Tree.MarshalBinary()
	if len(want) <= 512 {
		t.Fatalf("the tree encodes in %d bytes: not past the eager limit", len(want))
	}
	for r, x := range res {
		if got := len(x.Tree.Ranks()); got != 30 {
			t.Fatalf("rank %d: tree of %d ranks", r, got)
		}
		if enc, _ := x.Tree.MarshalBinary(); string(enc) != string(want) {
			t.Fatalf("rank %d got another tree than rank 0", r)
		}
	}
}

// TestInferAnyEagerLimit: for every eager limit (everything by rendezvous,
// 1 byte, 512 bytes, the default 64 KiB) and world size, the protocol
// completes: every rank holds the same tree of every rank, the counts
// agree on all ranks, and rank 0 gathers every pair measured.
func TestInferAnyEagerLimit(t *testing.T) {
	for _, eager := range []int{-1, 1, 512, 64 << 10} {
		for _, n := range []int{2, 3, 11, 12, 21, 30} {
			res := inferAt(t, n, 1+n%2, eager, false)
			want, _ := res[0].Tree.MarshalBinary()
			for r, x := range res {
				if got := len(x.Tree.Ranks()); got != n {
					t.Fatalf("eager %d, %d ranks: rank %d holds a tree of %d ranks", eager, n, r, got)
				}
				if enc, _ := x.Tree.MarshalBinary(); string(enc) != string(want) {
					t.Fatalf("eager %d, %d ranks: rank %d got another tree than rank 0", eager, n, r)
				}
				if x.Pairs != res[0].Pairs || x.Exchanges != res[0].Exchanges || x.AddMeasurements != res[0].AddMeasurements {
					t.Fatalf("eager %d, %d ranks: rank %d counts %+v, rank 0 %+v", eager, n, r, x, res[0])
				}
			}
			if len(res[0].Measured) != res[0].Pairs {
				t.Fatalf("eager %d, %d ranks: %d measurements gathered, %d pairs counted", eager, n, len(res[0].Measured), res[0].Pairs)
			}
		}
	}
}
