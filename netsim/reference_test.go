package netsim

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// refFlow is a flow of the reference simulator: everything recomputed from
// scratch at every event, no heaps, no components, no lazy updates.
type refFlow struct {
	start, lat, bytes float64
	res               []int
	w                 []float64
	pen, bound        float64
	rem, rate         float64
	active, done      bool
	end               float64
}

func refRates(caps []float64, flows []*refFlow) {
	remaining := append([]float64(nil), caps...)
	fixed := map[*refFlow]bool{}
	var act []*refFlow
	for _, f := range flows {
		if f.active && !f.done {
			act = append(act, f)
			f.rate = 0
		}
	}
	for {
		best, bestShare := -1, 0.0
		for r := range caps {
			u := 0.0
			for _, f := range act {
				if fixed[f] {
					continue
				}
				for k, x := range f.res {
					if x == r && f.w[k] > 0 {
						u += f.w[k] / f.pen
					}
				}
			}
			if u == 0 {
				continue
			}
			s := math.Max(0, remaining[r]) / u
			if best < 0 || s < bestShare {
				best, bestShare = r, s
			}
		}
		if best < 0 {
			break
		}
		var on []*refFlow
		minBound := -1.0
		for _, f := range act {
			if fixed[f] {
				continue
			}
			for k, x := range f.res {
				if x == best && f.w[k] > 0 {
					on = append(on, f)
					if f.bound > 0 && f.bound*f.pen < bestShare && (minBound < 0 || f.bound*f.pen < minBound) {
						minBound = f.bound * f.pen
					}
				}
			}
		}
		for _, f := range on {
			v := bestShare / f.pen
			if minBound >= 0 {
				if f.bound <= 0 || f.bound*f.pen > minBound*(1+1e-9) {
					continue
				}
				v = f.bound
			}
			fixed[f] = true
			f.rate = v
			for k, x := range f.res {
				remaining[x] -= f.w[k] * v
			}
		}
	}
	for _, f := range act {
		if len(f.res) == 0 {
			f.rate = math.Inf(1)
			if f.bound > 0 {
				f.rate = f.bound
			}
		}
	}
}

func refSimulate(caps []float64, flows []*refFlow) {
	t := 0.0
	for {
		next := math.Inf(1)
		for _, f := range flows {
			switch {
			case f.done:
			case !f.active && f.start+f.lat > t:
				next = math.Min(next, f.start+f.lat)
			case f.active && f.rate > 0:
				next = math.Min(next, t+f.rem/f.rate)
			}
		}
		for _, f := range flows {
			if !f.active && !f.done && f.start+f.lat <= t {
				next = t
			}
		}
		if math.IsInf(next, 1) {
			return
		}
		for _, f := range flows {
			if f.active && !f.done {
				f.rem -= f.rate * (next - t)
			}
		}
		t = next
		for _, f := range flows {
			if f.active && !f.done && f.rem <= f.bytes*1e-9 {
				f.done, f.end = true, t
			}
			if !f.active && !f.done && f.start+f.lat <= t {
				f.active = true
				if f.rem == 0 || (len(f.res) == 0 && f.bound == 0) {
					f.done, f.end = true, t
				}
			}
		}
		refRates(caps, flows)
	}
}

// The incremental engine (components, heaps, lazy remaining bytes) finishes
// every flow when a from-scratch simulation does, on random patterns.
func TestIncrementalMatchesFullRecompute(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 60; trial++ {
		nres := 3 + rng.IntN(12)
		var res []Resource
		var caps []float64
		for i := 0; i < nres; i++ {
			c := 1e6 * (1 + float64(rng.IntN(20)))
			res = append(res, Resource{"r", c})
			caps = append(caps, c)
		}
		cfg := Config{Resources: res, Weighting: Weighting(rng.IntN(2))}
		if rng.IntN(2) == 0 {
			cfg.CrossTraffic = 0.05
		}
		if rng.IntN(3) == 0 {
			cfg.WindowBytes = 1 << (10 + rng.IntN(8))
		}
		n := mustNet(t, cfg)
		nflows := 1 + rng.IntN(40)
		var specs []FlowSpec
		var starts []float64
		var ref []*refFlow
		for i := 0; i < nflows; i++ {
			var fwd, rev []int
			for j := rng.IntN(4); j >= 0; j-- {
				fwd = append(fwd, rng.IntN(nres))
			}
			for j := rng.IntN(3); j > 0; j-- {
				rev = append(rev, rng.IntN(nres))
			}
			s := FlowSpec{Bytes: int64(1 + rng.IntN(5_000_000)), LatencyS: float64(rng.IntN(1000)) * 1e-6, Forward: fwd, Reverse: rev}
			specs = append(specs, s)
			starts = append(starts, float64(rng.IntN(4))*0.1)
		}
		order := make([]int, nflows)
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return starts[order[a]] < starts[order[b]] })
		got := map[int]float64{}
		idOf := map[int64]int{}
		for _, i := range order {
			for {
				nt, ok := n.NextTime()
				if !ok || nt >= starts[i] {
					break
				}
				for _, e := range n.Step() {
					if e.Kind == Done {
						got[idOf[e.Flow.ID()]] = e.Time
					}
				}
			}
			if err := n.SetNow(starts[i]); err != nil {
				t.Fatal(err)
			}
			f := mustStart(t, n, specs[i])
			idOf[f.ID()] = i
			rf := &refFlow{start: starts[i], lat: specs[i].LatencyS, bytes: float64(specs[i].Bytes), rem: float64(specs[i].Bytes),
				res: f.resources(), w: f.weights(), pen: f.penalty, bound: f.bound}
			ref = append(ref, rf)
		}
		for n.Pending() > 0 {
			for _, e := range n.Step() {
				if e.Kind == Done {
					got[idOf[e.Flow.ID()]] = e.Time
				}
			}
		}
		// ref is in start order; map back to spec index.
		refEnd := map[int]float64{}
		refSimulate(caps, ref)
		for k, i := range order {
			refEnd[i] = ref[k].end
		}
		for i := 0; i < nflows; i++ {
			if !near(got[i], refEnd[i], 1e-7) && math.Abs(got[i]-refEnd[i]) > 1e-12 {
				t.Fatalf("trial %d (%+v): flow %d done at %.12g, reference %.12g", trial, cfg, i, got[i], refEnd[i])
			}
		}
	}
}
