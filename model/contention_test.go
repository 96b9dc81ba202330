package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

const mbps940 = 1 / (940e6 / 8) // inverse bandwidth of 940 Mbps in s/byte

func mbps(beta float64) float64 { return 8 / beta / 1e6 }

// zhuFig1 binds the processes of seed 001 Fig. 1's example: a1, a2 on node
// X1; a3 on X2; a4 on X3; b2 on X4 (rack X); a5 on Y1; b1 on Y2; b3, b5 on
// Y3; b4 on Y4 (rack Y), reconstructed from S_{a1,b1} (Sect. 4.4.1) and
// Table I. Processes: a1..a5 = 0..4, b1..b5 = 5..9.
func zhuFig1() (*Contention, []Flow) {
	node := []int{0, 0, 1, 2, 4, 5, 3, 6, 7, 6}
	rack := []int{0, 0, 0, 0, 1, 1, 0, 1, 1, 1}
	c := &Contention{NodeOf: node, RackOf: rack, BetaNIC: mbps940, BetaBackbone: mbps940}
	flows := []Flow{{0, 5, 10e6}, {1, 6, 20e6}, {2, 7, 20e6}, {3, 8, 20e6}, {4, 9, 20e6}}
	return c, flows
}

func TestZhuEq1CongestionSets(t *testing.T) {
	c, flows := zhuFig1()
	s, _ := c.sets(flows, []int{0, 1, 2, 3, 4})
	// S_{a1,b1} = <{e1, e3, e4}, {e1, e2}, {e1}> (Sect. 4.4.1).
	want := [nres][]int{{0, 2, 3}, {0, 1}, {0}}
	for i := range nres {
		if len(s[0][i]) != len(want[i]) {
			t.Fatalf("S_a1b1[%d] = %v, want %v", i, s[0][i], want[i])
		}
		for j := range want[i] {
			if s[0][i][j] != want[i][j] {
				t.Fatalf("S_a1b1[%d] = %v, want %v", i, s[0][i], want[i])
			}
		}
	}
	// k_{a1,b1} = max{3 beta_O, 2 beta_N, beta_N} (Eq. 2).
	if k := factor(c.betas(), s[0]); !sameF(k, 3*mbps940) {
		t.Fatalf("k = %g", k)
	}
}

func TestZhuTableICaseStudy(t *testing.T) {
	c, flows := zhuFig1()
	beta, err := c.InverseBandwidths(flows)
	if err != nil {
		t.Fatal(err)
	}
	wantMbps := []float64{313.3, 626.6, 313.3, 313.3, 626.6} // Table I, step 1
	for i, w := range wantMbps {
		if math.Abs(mbps(beta[i])-w) > 0.1 {
			t.Errorf("e%d: %.1f Mbps, want %.1f", i+1, mbps(beta[i]), w)
		}
	}
	times, steps, err := c.Times(flows)
	if err != nil {
		t.Fatal(err)
	}
	wantT := []float64{0.255, 0.255, 0.425, 0.425, 0.255} // Table I, T_pred
	for i, w := range wantT {
		if math.Abs(times[i]-w) > 0.001 {
			t.Errorf("e%d: T_pred %.4f s, want %.3f", i+1, times[i], w)
		}
	}
	if steps != 2 {
		t.Errorf("%d steps, want 2", steps)
	}
}

func TestZhuAsymmetricTwoInOneOut(t *testing.T) {
	// Node 0 receives from nodes 1 and 2 and sends to node 3, one rack:
	// every flow gets B / max(in, out) = 470 Mbps (Sect. 5.2, Eq. 6).
	c := &Contention{NodeOf: []int{0, 1, 2, 3}, RackOf: []int{0, 0, 0, 0}, BetaNIC: mbps940, BetaBackbone: mbps940}
	flows := []Flow{{1, 0, 1e6}, {2, 0, 1e6}, {0, 3, 1e6}}
	beta, _ := c.InverseBandwidths(flows)
	for i := range flows {
		if math.Abs(mbps(beta[i])-470) > 0.1 {
			t.Errorf("flow %d: %.1f Mbps, want 470", i, mbps(beta[i]))
		}
	}
	// The fairness-only model gives the outgoing flow the full 940.
	c.FairnessOnly = true
	beta, _ = c.InverseBandwidths(flows)
	if math.Abs(mbps(beta[2])-940) > 0.1 {
		t.Errorf("fairness-only outgoing flow: %.1f Mbps, want 940", mbps(beta[2]))
	}
}

func TestZhuEq5OpticalBackboneNotSaturatedUpToTen(t *testing.T) {
	// Rack 0 nodes 0..11 send to rack 1 nodes 12..23 over a 9.4 Gbps
	// backbone: up to ten flows each get the NIC's 940 Mbps, beyond
	// that they share 9.4 Gbps fairly.
	node := make([]int, 24)
	rack := make([]int, 24)
	for i := range node {
		node[i] = i
		rack[i] = i / 12
	}
	c := &Contention{NodeOf: node, RackOf: rack, BetaNIC: mbps940, BetaBackbone: mbps940 / 10}
	for _, n := range []int{1, 5, 10, 12} {
		var flows []Flow
		for i := range n {
			flows = append(flows, Flow{i, 12 + i, 1e6})
		}
		beta, _ := c.InverseBandwidths(flows)
		want := 940.0
		if n > 10 {
			want = 9400 / float64(n)
		}
		for i := range flows {
			if math.Abs(mbps(beta[i])-want) > 0.1 {
				t.Errorf("%d flows: flow %d %.1f Mbps, want %.1f", n, i, mbps(beta[i]), want)
			}
		}
	}
}

func TestContentionPropertyNoResourceOverbooked(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n := 4 + rng.IntN(20)
		node := make([]int, n)
		rack := make([]int, n)
		for i := range n {
			node[i] = rng.IntN(max(n/2, 2))
			rack[i] = node[i] % 2
		}
		c := &Contention{NodeOf: node, RackOf: rack, BetaNIC: mbps940, BetaBackbone: mbps940 / 10, FairnessOnly: trial%2 == 0}
		var flows []Flow
		for range 1 + rng.IntN(12) {
			a, b := rng.IntN(n), rng.IntN(n)
			if a != b {
				flows = append(flows, Flow{a, b, 1e6})
			}
		}
		beta, err := c.InverseBandwidths(flows)
		if err != nil {
			t.Fatal(err)
		}
		// Fairness-only never overbooks a NIC direction; with the
		// asymmetric property the analysed rates can only be lower.
		load := map[[2]int]float64{}
		for i, f := range flows {
			if beta[i] <= 0 || math.IsInf(beta[i], 0) || math.IsNaN(beta[i]) {
				t.Fatalf("trial %d flow %d: inverse bandwidth %g", trial, i, beta[i])
			}
			if node[f.Src] != node[f.Dst] {
				load[[2]int{node[f.Src], 0}] += 1 / beta[i]
				load[[2]int{node[f.Dst], 1}] += 1 / beta[i]
			}
		}
		for k, v := range load {
			if v > (1/mbps940)*(1+1e-6) {
				t.Fatalf("trial %d: node %d direction %d carries %.1f Mbps > 940", trial, k[0], k[1], v*8/1e6)
			}
		}
		times, _, err := c.Times(flows)
		if err != nil {
			t.Fatal(err)
		}
		for i := range flows {
			if !(times[i] > 0) || math.IsInf(times[i], 0) {
				t.Fatalf("trial %d: time %g", trial, times[i])
			}
		}
	}
}

func TestContentionRejects(t *testing.T) {
	c := &Contention{NodeOf: []int{0, 1}, RackOf: []int{0, 0}, BetaNIC: 1, BetaBackbone: 1}
	for i, fl := range [][]Flow{{{0, 0, 1}}, {{0, 2, 1}}, {{0, 1, -1}}, {{0, 1, math.NaN()}}} {
		if _, err := c.InverseBandwidths(fl); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	bad := &Contention{NodeOf: []int{0}, RackOf: []int{0}, BetaNIC: 0, BetaBackbone: 1}
	if _, _, err := bad.Times(nil); err == nil {
		t.Errorf("zero NIC bandwidth accepted")
	}
}

func TestPredictBcastContentionByHand(t *testing.T) {
	// Three ranks on three nodes of one rack, 1 MB, NIC beta, latency L.
	c := &Contention{NodeOf: []int{0, 1, 2}, RackOf: []int{0, 0, 0}, BetaNIC: 1e-8, BetaBackbone: 1e-9}
	lat := func(i, j int) float64 { return 1e-4 }
	m := 1000000
	star := Tree{Root: 0, Parent: []int{-1, 0, 0}, Children: [][]int{{1, 2}, nil, nil}}
	// Both transfers leave node 0 together: half the NIC each.
	p, err := PredictBcastContention(star, m, c, lat)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1e-4 + 2*float64(m)*1e-8; math.Abs(p.TimeS-want) > 1e-12 || math.Abs(p.ReadyS[1]-want) > 1e-12 {
		t.Fatalf("star: %g (%v), want %g", p.TimeS, p.ReadyS, want)
	}
	chain := Tree{Root: 0, Parent: []int{-1, 0, 1}, Children: [][]int{{1}, {2}, nil}}
	p, _ = PredictBcastContention(chain, m, c, lat)
	if want := 2 * (1e-4 + float64(m)*1e-8); math.Abs(p.TimeS-want) > 1e-12 {
		t.Fatalf("chain: %g, want %g", p.TimeS, want)
	}
	// The per-pair model (blocking Hockney) says the same for the chain
	// and, for the star, sequential sends: 2(L + m beta).
	seg := chain
	seg.SegBytes = 1000
	if _, err := PredictBcastContention(seg, m, c, lat); err == nil {
		t.Errorf("segmented tree accepted")
	}
	if _, err := PredictBcastContention(chain, m, &Contention{NodeOf: []int{0}, RackOf: []int{0}, BetaNIC: 1, BetaBackbone: 1}, nil); err == nil {
		t.Errorf("bindings of the wrong size accepted")
	}
}
