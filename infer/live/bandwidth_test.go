package live

import (
	"context"
	"fmt"
	"math"
	"testing"

	"netaware/comm"
	"netaware/comm/local"
	"netaware/comm/sim"
	"netaware/platform"
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
