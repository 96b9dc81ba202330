package live

import (
	"context"
	"fmt"
	"math"
	"testing"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/platform"
)

// TestLiveBandwidthMapOnSim: on zhu-2racks (one rank per node, 1 Gbps NICs,
// 10 Gbps backbone, noise on) every rank builds the same map, every edge
// is labelled, and every query answers the 1 Gbps NIC bottleneck within
// 10% (the host links are each pair's bottleneck).
func TestLiveBandwidthMapOnSim(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithRanks(1, "block")
	n := p.NumRanks()
	maps := make([]string, n)
	var queries [][]float64
	_, err = sim.Run(context.Background(), p, sim.Options{}, func(ctx context.Context, c comm.Comm) error {
		r, err := Infer(ctx, c, DefaultParams())
		if err != nil {
			return err
		}
		m, err := BandwidthMap(ctx, c, r.Tree, DefaultBandwidthParams())
		if err != nil {
			return err
		}
		maps[c.Rank()] = fmt.Sprint(m.Edge, m.Rounds)
		if c.Rank() == 0 {
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
	for r := 1; r < n; r++ {
		if maps[r] != maps[0] {
			t.Fatalf("rank %d built a different map", r)
		}
	}
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			if a != b && math.Abs(queries[a][b]/125e6-1) > 0.1 {
				t.Fatalf("query %d-%d answers %.4g B/s, want 1 Gbps = 125e6", a, b, queries[a][b])
			}
		}
	}
}
