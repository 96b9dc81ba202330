package netsim

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// checkAllocation verifies the max-min conditions on the current rates:
// no resource is overloaded, and every active flow is either at its window
// bound or loads a resource that is full (its bottleneck).
func checkAllocation(t testing.TB, n *Network) {
	t.Helper()
	n.Flush()
	load := make([]float64, len(n.res))
	var active []*Flow
	for _, e := range n.heap.h {
		f := n.s.flow[e.slot]
		if f.state != stateActive {
			continue
		}
		active = append(active, f)
		for _, e := range n.s.elems(f.slot) {
			load[e.r] += e.w * f.Rate()
		}
	}
	for r := range n.res {
		if load[r] > n.res[r].bps*(1+1e-9) {
			t.Fatalf("resource %d overloaded: %v > %v", r, load[r], n.res[r].bps)
		}
	}
	for _, f := range active {
		el := n.s.elems(f.slot)
		if len(el) == 0 {
			continue
		}
		if f.bound > 0 && f.Rate() >= f.bound*(1-1e-9) {
			continue
		}
		bottleneck := false
		for _, e := range el {
			if e.w > 0 && load[e.r] >= n.res[e.r].bps*(1-1e-9) {
				bottleneck = true
			}
		}
		if !bottleneck {
			t.Fatalf("flow %d (rate %v) has no full resource and is below its bound %v", f.id, f.Rate(), f.bound)
		}
	}
}

func TestAllocationIsFeasibleAndMaxMin(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for trial := 0; trial < 200; trial++ {
		nres := 1 + rng.IntN(10)
		res := make([]Resource, nres)
		for i := range res {
			res[i] = Resource{"r", float64(1 + rng.IntN(1000))}
		}
		cfg := Config{Resources: res, Weighting: Weighting(rng.IntN(2)), CrossTraffic: []float64{0, 0.05, 0.5}[rng.IntN(3)],
			BandwidthJitter: []float64{0, 0.1}[rng.IntN(2)], Seed: int64(trial)}
		if rng.IntN(2) == 0 {
			cfg.WindowBytes = int64(1 + rng.IntN(100))
		}
		n := mustNet(t, cfg)
		for i := rng.IntN(30); i >= 0; i-- {
			var fwd, rev []int
			for j := rng.IntN(4); j >= 0; j-- {
				fwd = append(fwd, rng.IntN(nres))
			}
			for j := rng.IntN(3); j > 0; j-- {
				rev = append(rev, rng.IntN(nres))
			}
			mustStart(t, n, FlowSpec{Bytes: int64(rng.IntN(10000)), LatencyS: float64(rng.IntN(3)) * 0.01, Forward: fwd, Reverse: rev})
		}
		for n.Pending() > 0 {
			checkAllocation(t, n)
			n.Step()
		}
	}
}

// FuzzNetwork drives the network with arbitrary capacities, paths, sizes,
// latencies and start times: it must never panic, never move time
// backwards, and keep every allocation feasible and max-min.
func FuzzNetwork(f *testing.F) {
	f.Add([]byte{3, 10, 20, 30, 1, 0, 5, 0, 1, 2, 9, 9})
	f.Add([]byte{1, 255, 0, 0, 0, 0, 0})
	f.Add([]byte{8, 1, 2, 3, 4, 5, 6, 7, 8, 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		nres := 1 + int(data[0])%16
		data = data[1:]
		res := make([]Resource, nres)
		for i := range res {
			c := 1.0
			if len(data) > 0 {
				c = float64(data[0]) + 0.5
				data = data[1:]
			}
			res[i] = Resource{"r", c}
		}
		cfg := Config{Resources: res, CrossTraffic: 0.05}
		if len(data) > 0 {
			cfg.Weighting = Weighting(data[0] % 2)
			cfg.WindowBytes = int64(data[0] / 2 % 4)
			data = data[1:]
		}
		n, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		last := 0.0
		for len(data) >= 6 && n.stats.Flows < 64 {
			spec := FlowSpec{
				Bytes:    int64(binary.LittleEndian.Uint16(data[0:2])),
				LatencyS: float64(data[2]%8) * 0.001,
				Forward:  []int{int(data[3]) % nres},
			}
			if data[4]%3 != 0 {
				spec.Forward = append(spec.Forward, int(data[4])%nres)
			}
			if data[5]%2 == 0 {
				spec.Reverse = []int{int(data[5]/2) % nres}
			}
			if data[5]%5 == 0 {
				// Let time pass before this start.
				if tn, ok := n.NextTime(); ok {
					n.Step()
					if tn < last {
						t.Fatalf("time went back: %v < %v", tn, last)
					}
					last = tn
				}
			}
			if _, err := n.Start(spec); err != nil {
				t.Fatal(err)
			}
			data = data[6:]
			checkAllocation(t, n)
		}
		for steps := 0; n.Pending() > 0; steps++ {
			if steps > 10000 {
				t.Fatal("no termination")
			}
			evs := n.Step()
			if len(evs) == 0 {
				t.Fatalf("stuck with %d pending", n.Pending())
			}
			if tn := n.Now(); tn < last || math.IsNaN(tn) {
				t.Fatalf("bad time %v after %v", tn, last)
			}
			last = n.Now()
			checkAllocation(t, n)
		}
	})
}
