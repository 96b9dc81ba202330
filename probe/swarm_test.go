package probe

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/dataset"
	"netaware/metrics"
	"netaware/platform"
)

func runSwarmSim(t *testing.T, p *platform.Platform, ds *dataset.Dataset, prm dataset.SwarmParams, hooks RunHooks) error {
	t.Helper()
	_, err := sim.Run(context.Background(), p, sim.Options{}, func(ctx context.Context, c comm.Comm) error {
		var d *dataset.Dataset
		if c.Rank() == 0 {
			d = ds
		}
		return RunSwarm(ctx, c, d, prm, hooks)
	})
	return err
}

func splitPlatform(t *testing.T) *platform.Platform {
	p, err := platform.Load("../emu/testdata/zero-latency-split.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Seed 000 Sect. 4.7 and Fig. 5.13: iterating the broadcasts converges
// (successive hierarchies agree and the probe stops by itself), and the
// hierarchy is the bandwidth split that latency cannot see (a 100 Mbit
// trunk of zero latency), with NMI 1 against the truth.
func TestSwarmConvergesOverIterations(t *testing.T) {
	p := splitPlatform(t)
	prm := DefaultSwarmParams()
	prm.Bytes = 1 << 20
	ds := &dataset.Dataset{World: dataset.World{Size: p.NumRanks()}}
	if err := runSwarmSim(t, p, ds, prm, RunHooks{}); err != nil {
		t.Fatal(err)
	}
	s := ds.Swarm
	k := len(s.Iterations)
	if !s.Stable || !s.Complete || k >= prm.MaxIterations {
		t.Fatalf("stable %v complete %v after %d iterations", s.Stable, s.Complete, k)
	}
	if s.Iterations[0].NMI != nil {
		t.Errorf("first iteration has an NMI: %v", *s.Iterations[0].NMI)
	}
	for _, it := range s.Iterations[k-prm.StableIterations:] {
		if it.NMI == nil || *it.NMI < prm.StableNMI {
			t.Errorf("stable, but the last iterations' NMI include %v", it.NMI)
		}
	}
	if s.Iterations[0].Root == s.Iterations[1].Root {
		t.Errorf("the root did not rotate: %d twice", s.Iterations[0].Root)
	}
	h, err := SwarmHierarchy(s, p.NumRanks(), 0)
	if err != nil || len(h) != 1 {
		t.Fatalf("hierarchy %v, %v: want one level", h, err)
	}
	truth, _ := metrics.LabelsFromGroups(p.TruthLevels()[1].Groups, p.NumRanks())
	if v, _ := metrics.NMI(h[0], truth); v < 0.99 {
		t.Errorf("NMI against %s: %.3f", p.TruthLevels()[1].Name, v)
	}
	// Eq. 4.1: every non-root rank received the whole message once per
	// iteration, so w(e) sums to (n-1) * fragments per iteration.
	w := s.Weights(p.NumRanks(), 1)
	var sum float64
	for i := 0; i < w.N; i++ {
		for j := i + 1; j < w.N; j++ {
			sum += w.At(i, j)
		}
	}
	if want := float64((p.NumRanks() - 1) * (prm.Bytes / prm.Swarm.Fragment)); sum != want {
		t.Errorf("w_1 sums to %v, want %v", sum, want)
	}
	// The section survives dataset.json.
	ds.Version = dataset.Version
	b, err := json.Marshal(ds)
	if err != nil {
		t.Fatal(err)
	}
	back, err := dataset.Parse(b)
	if err != nil || len(back.Swarm.Iterations) != len(s.Iterations) {
		t.Fatalf("round trip: %v", err)
	}
}

var errStop = errors.New("stop")

// An interrupted probe keeps its iterations and a second run continues
// them (the iterations kept are not measured again).
func TestSwarmResume(t *testing.T) {
	p := splitPlatform(t)
	prm := DefaultSwarmParams()
	prm.Bytes = 256 << 10
	prm.MaxIterations = 3
	prm.StableIterations = 5 // never stable: run to MaxIterations
	ds := &dataset.Dataset{World: dataset.World{Size: p.NumRanks()}}
	stop := RunHooks{Checkpoint: func(d *dataset.Dataset, final bool) error {
		if len(d.Swarm.Iterations) == 1 {
			return errStop
		}
		return nil
	}}
	if err := runSwarmSim(t, p, ds, prm, stop); !errors.Is(err, errStop) {
		t.Fatalf("interrupted run: %v", err)
	}
	first := ds.Swarm.Iterations[0]
	if len(ds.Swarm.Iterations) != 1 || ds.Swarm.Complete {
		t.Fatalf("after the interruption: %d iterations, complete %v", len(ds.Swarm.Iterations), ds.Swarm.Complete)
	}
	if err := runSwarmSim(t, p, ds, prm, RunHooks{}); err != nil {
		t.Fatal(err)
	}
	s := ds.Swarm
	if len(s.Iterations) != 3 || !s.Complete || s.Stable || s.Runs != 2 {
		t.Fatalf("resumed: %d iterations, complete %v, stable %v, runs %d", len(s.Iterations), s.Complete, s.Stable, s.Runs)
	}
	if s.Iterations[0].TimeS != first.TimeS || s.Iterations[1].Root != SwarmRoot(p.NumRanks(), 1, prm.Swarm.Seed) {
		t.Errorf("the kept iteration changed or the roots restarted")
	}
}

func TestSwarmBadInput(t *testing.T) {
	for _, prm := range []dataset.SwarmParams{{Bytes: 0, MaxIterations: 1, StableIterations: 1}, {Bytes: 1, MaxIterations: 0, StableIterations: 1}, {Bytes: 1, MaxIterations: 1, StableIterations: 1, StableNMI: 2}, {Bytes: 1, MaxIterations: 1, StableIterations: 1, Weight: "x"}} {
		if err := checkSwarm(prm); err == nil {
			t.Errorf("%+v: no error", prm)
		}
	}
	bad := `{"version":1,"world":{"kind":"sim","size":2},"swarm":{"iterations":[{"root":0,"counts":[{"from":0,"to":5,"fragments":1}]}]}}`
	if _, err := dataset.Parse([]byte(bad)); err == nil {
		t.Error("a count naming rank 5 of 2: no error")
	}
}

// A world without bandwidth structure gives no level, iteration after
// iteration: the NMI curve says they agree, but the probe does not call
// that stable (early iterations of a large world find no level either)
// and measures up to MaxIterations.
func TestSwarmWithoutStructureRunsToMaxIterations(t *testing.T) {
	p, err := platform.Parse("flat.yaml", []byte(`version: 1
name: flat
switches: [s0]
hosts:
  - {names: "h[0-7]", switch: s0, link: {bandwidth: 1Gbps, latency: 10us}}
`))
	if err != nil {
		t.Fatal(err)
	}
	prm := DefaultSwarmParams()
	prm.Bytes = 512 << 10
	prm.MaxIterations = 4
	ds := &dataset.Dataset{World: dataset.World{Size: p.NumRanks()}}
	if err := runSwarmSim(t, p, ds, prm, RunHooks{}); err != nil {
		t.Fatal(err)
	}
	s := ds.Swarm
	if s.Stable || !s.Complete || len(s.Iterations) != prm.MaxIterations {
		t.Errorf("stable %v complete %v after %d iterations, want %d and not stable", s.Stable, s.Complete, len(s.Iterations), prm.MaxIterations)
	}
	for i, it := range s.Iterations {
		if it.Levels != 0 {
			t.Errorf("iteration %d: %d levels on one switch", i+1, it.Levels)
		}
		if i > 0 && (it.NMI == nil || *it.NMI != 1) {
			t.Errorf("iteration %d: NMI %v, want 1 (no level twice)", i+1, it.NMI)
		}
	}
}
