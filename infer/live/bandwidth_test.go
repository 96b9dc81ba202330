package live

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/local"
	"netaware/comm/sim"
	"netaware/platform"
	"netaware/probe"
)

// TestLiveBandwidthMapOnSim: on zhu-2racks (one rank per node, 1 Gbps NICs,
// 10 Gbps backbone, noise on) rank 0 builds the map and the others get
// none (they never read the tree: they pass nil), every edge is labelled,
// and every query answers the 1 Gbps NIC bottleneck within 10% (the host
// links are each pair's bottleneck).
func TestLiveBandwidthMapOnSim(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithRanks(1, "block")
	n := p.NumRanks()
	var queries [][]float64
	_, err = sim.Run(context.Background(), p, sim.Options{}, func(ctx context.Context, c comm.Comm) error {
		r, err := Infer(ctx, c, DefaultParams())
		if err != nil {
			return err
		}
		tree := r.Tree
		if c.Rank() != 0 {
			tree = nil
		}
		m, err := BandwidthMap(ctx, c, tree, DefaultBandwidthParams())
		if err != nil {
			return err
		}
		if (m != nil) != (c.Rank() == 0) {
			return fmt.Errorf("rank %d got map %v", c.Rank(), m != nil)
		}
		if c.Rank() == 0 {
			for k, e := range m.Edge {
				if m.Parent[k] >= 0 && math.IsInf(e, 1) {
					return fmt.Errorf("edge %d-%d not labelled", k, m.Parent[k])
				}
			}
			for a := 0; a < n; a++ {
				row := make([]float64, n)
				for b := 0; b < n; b++ {
					if a != b {
						row[b] = m.Bandwidth(a, b)
					}
				}
				queries = append(queries, row)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			if a != b && math.Abs(queries[a][b]/125e6-1) > 0.1 {
				t.Fatalf("query %d-%d answers %.4g B/s, want 1 Gbps = 125e6", a, b, queries[a][b])
			}
		}
	}
}

// A transfer that takes no longer than the baseline round trip (here: one
// byte, as long as a ping) is rated, not fatal: the map over goroutines of
// this process, on the real clock, completes every time with positive
// bandwidths (issue 17: one bad sample ended the whole run).
func TestBandwidthMapSurvivesTransfersFasterThanTheBaseline(t *testing.T) {
	for run := 0; run < 10; run++ {
		err := local.Run(context.Background(), 4, func(ctx context.Context, c comm.Comm) error {
			r, err := Infer(ctx, c, DefaultParams())
			if err != nil {
				return err
			}
			m, err := BandwidthMap(ctx, c, r.Tree, BandwidthParams{Bytes: 1, Reps: 5})
			if err != nil || c.Rank() != 0 {
				return err
			}
			for k, e := range m.Edge {
				if m.Parent[k] >= 0 && !(e > 0) {
					return fmt.Errorf("edge %d labelled %g", k, e)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
}

// Three repetitions of 1 MiB and 4 MiB, worked by hand: undisturbed, 1 MiB
// takes 100 ms and 4 MiB 350 ms, so 3 MiB in 250 ms: 12,582,912 B/s.
// With two short transfers stalled (160 and 150 ms) the repetitions'
// rates are 16.6, 12.6 and 15.7 MB/s, whose median is 25 % high; with two
// long ones stalled (420 and 400 ms), 9.8, 12.6 and 10.5 MB/s, 17 % low.
// The least times give the undisturbed rate in both.
func TestMinTimesRateIgnoresStalledRepetitions(t *testing.T) {
	const long, short = 4 << 20, 1 << 20
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	want := 3145728 / 0.25
	for _, c := range []struct {
		name          string
		tLong, tShort []time.Duration
		median        float64
	}{
		{"short transfers stalled", ms(350, 350, 350), ms(160, 100, 150), 3145728 / 0.2},
		{"long transfers stalled", ms(420, 350, 400), ms(100, 100, 100), 3145728 / 0.3},
	} {
		var rates []float64
		for i := range c.tLong {
			rates = append(rates, probe.DifferenceRate(long, short, c.tLong[i], c.tShort[i], time.Millisecond))
		}
		slices.Sort(rates)
		if m := rates[1]; math.Abs(m-c.median) > 1e-6*c.median {
			t.Fatalf("%s: median of the rates %v, want %v (the case is not the stall's)", c.name, m, c.median)
		}
		if got := MinTimesRate(long, short, c.tLong, c.tShort, time.Millisecond); math.Abs(got-want) > 1e-6*want {
			t.Errorf("%s: %v B/s, want %v", c.name, got, want)
		}
	}
	if got := MinTimesRate(long, short, nil, ms(100), time.Millisecond); !math.IsNaN(got) {
		t.Errorf("no long transfer: %v, want NaN", got)
	}
}
