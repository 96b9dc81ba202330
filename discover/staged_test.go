package discover

import (
	"context"
	"slices"
	"strings"
	"testing"

	"netaware/cluster"
	"netaware/comm/sim"
	"netaware/platform"
	"netaware/topo"
)

// stagedOn runs a staged discovery on an emulated cluster's platform
// file in the simulator with the realistic noise profile (round trips
// spread as on netaware emu: the noise check must see a real network).
func stagedOn(t *testing.T, file string, blind bool, seed int64) (*Outcome, *platform.Platform) {
	t.Helper()
	p, err := platform.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.Blind, opt.Staged = blind, true
	opt.Swarm = DiscoverSwarmParams()
	opt.Swarm.Bytes = 1 << 20
	out, _, err := runOnSim(context.Background(), p, sim.Options{Noise: platform.NoiseRealistic, Seed: seed}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Topology.Validate(); err != nil {
		t.Fatalf("topology invalid: %v", err)
	}
	return out, p
}

// Under real noise the staged discovery groups by the swarm first and
// infers within the groups and between one rank per group: the switches
// are found, far fewer pairs than all are measured (they are counted with
// the noise check's and the bandwidth map's), the composed tree holds
// every rank, and the trunk between the switches carries the slow rate.
func TestStagedFindsSwitchesWithFewPairs(t *testing.T) {
	for _, blind := range []bool{false, true} {
		out, p := stagedOn(t, "../emu/testdata/star-2x6.yaml", blind, 3)
		if nmi := bestNMI(out.Topology.Levels, truthLevel(t, p, "switch"), p.NumRanks()); nmi < 0.99 {
			t.Errorf("blind %v: switch level best NMI %.3f, want >= 0.99; levels %v", blind, nmi, out.Topology.Levels)
		}
		var names []string
		for _, ph := range out.Phases {
			names = append(names, ph.Name)
		}
		if len(names) < 3 || names[1] != "rtt-noise-check" || names[2] != "swarm" {
			t.Fatalf("blind %v: phases %v, want the noise check then the swarm", blind, names)
		}
		m := out.Topology.Measurements
		t.Logf("blind %v: %d of %d pairs, phases %v", blind, m.PairsMeasured, m.PairsTotal, names)
		// Two groups of 6: 15 + 15 inside, 1 between; the noise check's
		// 6 pairs lie inside the first group.
		if m.PairsMeasured > 40 || m.PairsMeasured < 31 {
			t.Errorf("blind %v: %d of %d pairs measured, want 31-40", blind, m.PairsMeasured, m.PairsTotal)
		}
		tr := out.Topology.Tree
		ranks := 0
		slow := 0
		for _, n := range tr.Nodes {
			if n.Rank != nil {
				ranks++
			}
		}
		for _, e := range tr.Edges {
			if e.Bandwidth != nil && *e.Bandwidth < 20e6 { // 100 Mbit = 12.5 MB/s
				slow++
			}
		}
		if ranks != 12 || slow == 0 {
			t.Errorf("blind %v: composed tree has %d ranks and %d slow edges, want 12 and the trunk", blind, ranks, slow)
		}
	}
}

// Without real noise the check says so and the discovery is the usual
// one: no swarm first.
func TestStagedWithoutRealNoiseIsTheUsualInference(t *testing.T) {
	p, err := platform.Load("../emu/testdata/star-2x6.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.Staged = true
	var out *Outcome
	if out, _, err = runOnSim(context.Background(), p, sim.Options{NoNoise: true}, opt); err != nil {
		t.Fatal(err)
	}
	if out.Phases[1].Name != "rtt-noise-check" || out.Phases[2].Name != "rtt-tree" {
		t.Errorf("phases %v, want the noise check, then the usual tree", out.Phases)
	}
}

// dropNoiseSplits on four ranks in two bandwidth groups {0,1}, {2,3}
// and on six ranks in {0,1,2}, {3,4,5}, worked by hand: a latency level
// whose pairs are 10.0 us apart against 10.2 us for those it separates
// goes; one that does so with 1 us against 10.2 us (the ranks of a
// machine) stays; a latency level with the bandwidth level's groups goes;
// levels that do not refine the bandwidth level stay.
func TestDropNoiseSplits(t *testing.T) {
	m := cluster.NewMatrix(4)
	set := func(d01, d23, across float64) {
		m.Set(0, 1, d01)
		m.Set(2, 3, d23)
		for _, a := range []int{0, 1} {
			for _, b := range []int{2, 3} {
				m.Set(a, b, across)
			}
		}
	}
	bw := topo.Level{Name: "bandwidth", Groups: [][]int{{0, 1}, {2, 3}}}
	single := topo.Level{Name: "switch", Groups: [][]int{{0}, {1}, {2}, {3}}}
	pairs := topo.Level{Name: "level-2", Groups: [][]int{{0, 1}, {2, 3}}}
	all := topo.Level{Name: "all", Groups: [][]int{{0, 1, 2, 3}}}
	reps := []int{0, 1, 2, 3}
	names := func(ls []topo.Level) []string {
		var s []string
		for _, l := range ls {
			s = append(s, l.Name)
		}
		return s
	}
	// Singletons: no pair is kept together, so no contrast shows: they
	// go, and the latency copy of the bandwidth level too.
	set(10.2e-6, 10.2e-6, 12e-6)
	got := names(dropNoiseSplits([]topo.Level{single, pairs, bw, all}, m, reps))
	if want := []string{"bandwidth", "all"}; !slices.Equal(got, want) {
		t.Errorf("levels %v, want %v", got, want)
	}
	// Six ranks: a latency level {0,1},{2},{3,4},{5} inside bandwidth
	// groups {0,1,2}, {3,4,5}.
	m = cluster.NewMatrix(6)
	for i := 0; i < 6; i++ {
		for j := i + 1; j < 6; j++ {
			m.Set(i, j, 20e-6)
		}
	}
	bw6 := topo.Level{Name: "bandwidth", Groups: [][]int{{0, 1, 2}, {3, 4, 5}}}
	split := topo.Level{Name: "switch", Groups: [][]int{{0, 1}, {2}, {3, 4}, {5}}}
	reps6 := []int{0, 1, 2, 3, 4, 5}
	within := func(d float64) {
		for _, g := range [][2]int{{0, 1}, {3, 4}} {
			m.Set(g[0], g[1], d)
		}
		for _, g := range [][2]int{{0, 2}, {1, 2}, {3, 5}, {4, 5}} {
			m.Set(g[0], g[1], 10.2e-6)
		}
	}
	within(10.0e-6)
	if got := names(dropNoiseSplits([]topo.Level{split, bw6}, m, reps6)); !slices.Equal(got, []string{"bandwidth"}) {
		t.Errorf("10.0 against 10.2 us: levels %v, want the split dropped", got)
	}
	within(1e-6)
	if got := names(dropNoiseSplits([]topo.Level{split, bw6}, m, reps6)); !slices.Equal(got, []string{"switch", "bandwidth"}) {
		t.Errorf("1 against 10.2 us: levels %v, want the split kept", got)
	}
}

// At thorough, discovery states the PLogP campaign's pairs and a bound on
// its duration before it starts, and the bound holds: the phase's clock
// stays under it.
func TestThoroughEstimateBeforePLogP(t *testing.T) {
	opt := DefaultOptions()
	opt.Level = Thorough
	opt.Method = MethodRTTTree
	opt.PLogP.MaxBytes = 1 << 12
	var said []string
	opt.Progress = func(s string) { said = append(said, s) }
	out, p, _ := discoverOn(t, "../emu/testdata/test-2x2.yaml", opt)
	n := p.NumRanks()
	if out.EstimatePairs != n*(n-1)/2 || out.Estimate <= 0 {
		t.Fatalf("estimate %v over %d pairs, want > 0 over %d", out.Estimate, out.EstimatePairs, n*(n-1)/2)
	}
	at := -1
	for i, s := range said {
		if strings.HasPrefix(s, "plogp at thorough:") {
			at = i
		}
		if strings.HasPrefix(s, "plogp (") && at < 0 {
			t.Errorf("PLogP started before the estimate: %q", said)
		}
	}
	if at < 0 {
		t.Fatalf("no estimate among %q", said)
	}
	for _, ph := range out.Phases {
		if ph.Name == "plogp" {
			t.Logf("PLogP %v, bound %v", ph.Clock, out.Estimate)
		}
		if ph.Name == "plogp" && ph.Clock > out.Estimate {
			t.Errorf("PLogP took %v, more than its bound %v", ph.Clock, out.Estimate)
		}
	}
}
