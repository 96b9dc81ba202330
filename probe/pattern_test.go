package probe

import (
	"context"
	"runtime"
	"testing"

	"netaware/comm"
	"netaware/comm/local"
	"netaware/comm/sim"
	"netaware/dataset"
	"netaware/platform"
)

func runPatternSim(t *testing.T, p *platform.Platform, opts sim.Options, links []dataset.Link, params dataset.PatternParams) *dataset.PatternResult {
	t.Helper()
	var res *dataset.PatternResult
	_, err := sim.Run(context.Background(), p, opts, func(ctx context.Context, c comm.Comm) error {
		r, err := RunPattern(ctx, c, links, params)
		if c.Rank() == 0 {
			res = r
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Seed 001 Sect. 7.1: for every node, d draws of another node, each link
// kept with probability p; seeded, so the same seed gives the same pattern.
func TestZhuRandomPatternGenerator(t *testing.T) {
	nodes := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	all, err := RandomPattern(dataset.PatternGenerator{Nodes: nodes, D: 3, P: 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 30 {
		t.Errorf("p=1: %d links, want |N|*d = 30", len(all))
	}
	out := map[int]int{}
	for _, l := range all {
		if l.Src == l.Dst {
			t.Errorf("self link %v", l)
		}
		out[l.Src]++
	}
	for _, n := range nodes {
		if out[n] != 3 {
			t.Errorf("node %d sends %d links, want d = 3", n, out[n])
		}
	}
	none, _ := RandomPattern(dataset.PatternGenerator{Nodes: nodes, D: 3, P: 0, Seed: 5})
	if len(none) != 0 {
		t.Errorf("p=0: %d links", len(none))
	}
	a, _ := RandomPattern(dataset.PatternGenerator{Nodes: nodes, D: 3, P: 0.5, Seed: 9})
	b, _ := RandomPattern(dataset.PatternGenerator{Nodes: nodes, D: 3, P: 0.5, Seed: 9})
	if len(a) != len(b) {
		t.Fatal("same seed, different patterns")
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed, different patterns")
		}
	}
	// p = 0.5 keeps about half of the draws over many seeds
	kept := 0
	for s := uint64(0); s < 100; s++ {
		l, _ := RandomPattern(dataset.PatternGenerator{Nodes: nodes, D: 3, P: 0.5, Seed: s})
		kept += len(l)
	}
	if kept < 1350 || kept > 1650 {
		t.Errorf("p=0.5 kept %d of 3000 draws", kept)
	}
	if _, err := RandomPattern(dataset.PatternGenerator{Nodes: []int{1}, D: 1, P: 0.5}); err == nil {
		t.Error("one node accepted")
	}
}

// Seed 001 Sect. 3.1: repeat until the 95% CI is within 2% of the mean.
// Without noise every iteration takes the same time, so the interval
// collapses and the benchmark stops after its minimum of iterations; with
// noise it runs longer and stops with the interval narrow enough.
func TestZhuPatternStopsAtNarrowCI(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	links := []dataset.Link{{Src: 0, Dst: 1}, {Src: 2, Dst: 1}, {Src: 3, Dst: 20}}
	params := dataset.PatternParams{Bytes: 1 << 20, MinIter: 5}
	quiet := runPatternSim(t, p, sim.Options{NoNoise: true}, links, params)
	// Rank 1 times its two links in turn: 5 times each.
	if quiet.Iterations != 10 || !quiet.Converged {
		t.Errorf("noise-free: %d iterations, converged %v; want 10, true", quiet.Iterations, quiet.Converged)
	}
	noisy := runPatternSim(t, p, sim.Options{}, links, params)
	if noisy.Iterations <= 10 || noisy.Iterations > 2000 {
		t.Errorf("noisy: %d iterations", noisy.Iterations)
	}
	if noisy.Converged {
		for i, s := range noisy.Times {
			if 2*noisy.CI95HalfS[i] > 0.02*s.Mean {
				t.Errorf("link %v: CI width %g > 2%% of mean %g", links[i], 2*noisy.CI95HalfS[i], s.Mean)
			}
		}
	} else if noisy.Iterations != 2000 {
		t.Errorf("stopped after %d iterations without converging", noisy.Iterations)
	}
	// fairness (seed 001 Sect. 5): two flows into one 1 Gbps NIC take about
	// twice as long as the flow alone
	alone := runPatternSim(t, p, sim.Options{NoNoise: true}, []dataset.Link{{Src: 3, Dst: 20}}, params)
	for i := 0; i < 2; i++ {
		if r := quiet.Times[i].Mean / alone.Times[0].Mean; r < 1.8 || r > 2.2 {
			t.Errorf("link %v: %.3gx the time of a lone flow, want about 2", links[i], r)
		}
	}
	if r := quiet.Times[2].Mean / alone.Times[0].Mean; r < 0.95 || r > 1.1 {
		t.Errorf("independent link: %.3gx the lone time", r)
	}
}

// A receive waited for after another completes no earlier than that one:
// the small message posted second must still be timed as small (8 times
// faster than the large one posted first, the pair sharing rank 1's NIC
// until the small one ends).
func TestPatternTimesEachLinkAlone(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	links := []dataset.Link{{Src: 0, Dst: 1, Bytes: 8 << 20}, {Src: 2, Dst: 1, Bytes: 1 << 20}}
	r := runPatternSim(t, p, sim.Options{NoNoise: true}, links, dataset.PatternParams{Bytes: 1, MinIter: 3})
	big, small := r.Times[0].Mean, r.Times[1].Mean
	// Shared fairly while both run: the small one ends after 2 MiB of
	// NIC time, the large one after 9 MiB.
	if ratio := big / small; ratio < 4 || ratio > 5 {
		t.Errorf("large %g s, small %g s: ratio %.2f, want about 4.5", big, small, ratio)
	}
	if r.Times[0].N < 3 || r.Times[1].N < 3 {
		t.Errorf("times per link %d, %d: want >= 3 each", r.Times[0].N, r.Times[1].N)
	}
}

// patternAllocated is the number of bytes the process allocated while a
// simulated world measured links.
func patternAllocated(t *testing.T, p *platform.Platform, links []dataset.Link, params dataset.PatternParams) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := runPatternSim(t, p, sim.Options{NoNoise: true}, links, params)
	runtime.ReadMemStats(&after)
	if len(r.Times) != len(links) {
		t.Fatalf("%d links: %d results", len(links), len(r.Times))
	}
	for i, s := range r.Times {
		if s.N == 0 || s.Mean <= 0 {
			t.Errorf("%d links: link %v not timed: %+v", len(links), links[i], s)
		}
	}
	return after.TotalAlloc - before.TotalAlloc
}

// In the simulator the memory of a pattern does not grow with its links:
// every rank sends from and receives into the process's one scratch
// buffer. Ten senders and 30 links of 8 MiB each allocated a buffer per
// sender and per link (320 MiB) before; now, once the scratch buffer has
// its size, they allocate less than one message, as 3 links do (the
// simulator's bookkeeping of each message and rank 0's results buffer).
func TestPatternMemoryIndependentOfLinks(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	const size = 8 << 20
	params := dataset.PatternParams{Bytes: size, MinIter: 3, MaxIter: 20}
	many, err := RandomPattern(dataset.PatternGenerator{Nodes: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, D: 3, P: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	few := []dataset.Link{{Src: 0, Dst: 1}, {Src: 2, Dst: 1}, {Src: 3, Dst: 20}}
	runPatternSim(t, p, sim.Options{NoNoise: true}, many, params) // sizes the scratch buffer
	a3 := patternAllocated(t, p, few, params)
	a30 := patternAllocated(t, p, many, params)
	t.Logf("allocated: %d bytes for 3 links, %d for 30 links of %d bytes", a3, a30, size)
	if a30 >= size || a3 >= size {
		t.Errorf("allocated %d bytes for 3 links and %d for 30 links of %d bytes: want less than one message each", a3, a30, size)
	}
}

// Off the simulator every rank keeps buffers of its own (goroutines
// receive at the same time): one send buffer of its largest outgoing
// message and one per incoming link. Links of different sizes into one
// rank, and a rank that only receives, are all timed.
func TestPatternOwnBuffersLocal(t *testing.T) {
	links := []dataset.Link{{Src: 0, Dst: 1, Bytes: 64 << 10}, {Src: 2, Dst: 1, Bytes: 1 << 10}, {Src: 1, Dst: 2}, {Src: 0, Dst: 3, Bytes: 1}}
	var res *dataset.PatternResult
	err := local.Run(withTimeout(t), 4, func(ctx context.Context, c comm.Comm) error {
		r, err := RunPattern(ctx, c, links, dataset.PatternParams{Bytes: 4 << 10, MinIter: 3, MaxIter: 6, CIWidth: 100})
		if c.Rank() == 0 {
			res = r
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range res.Times {
		if s.N < 3 || s.Mean <= 0 {
			t.Errorf("link %v: %+v, want >= 3 positive times", links[i], s)
		}
	}
}
