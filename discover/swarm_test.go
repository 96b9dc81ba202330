package discover

import (
	"context"
	"testing"

	"netaware/comm/sim"
	"netaware/metrics"
	"netaware/platform"
)

// --method swarm finds the bandwidth split of two switches joined by a
// 100 Mbit trunk of zero latency (issue 12), with a bandwidth tree of two
// groups, and keeps the swarm section in the dataset.
func TestSwarmMethodFindsZeroLatencySplit(t *testing.T) {
	p, err := platform.Load("../emu/testdata/zero-latency-split.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.Method = MethodSwarm
	opt.Swarm = DiscoverSwarmParams()
	opt.Swarm.Bytes = 1 << 20
	out, _, err := runOnSim(context.Background(), p, sim.Options{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	top := out.Topology
	if err := top.Validate(); err != nil {
		t.Fatal(err)
	}
	scores, err := metrics.Compare(top.Levels, p.TruthLevels())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scores {
		if s.NMI < 0.99 {
			t.Errorf("truth level %s: best found %s, NMI %.3f", s.Truth, s.Found, s.NMI)
		}
	}
	bt := top.BandwidthTree
	if bt == nil || len(bt.Groups) != 2 || len(bt.Edges) != 1 {
		t.Fatalf("bandwidth tree %+v, want two groups and one edge", bt)
	}
	if out.Dataset.Swarm == nil || len(out.Dataset.Swarm.Iterations) == 0 || out.Dataset.Swarm.Params.Weight != opt.Swarm.Weight {
		t.Errorf("dataset without the swarm section")
	}
}

func TestParseMethod(t *testing.T) {
	for in, want := range map[string]string{"": MethodAuto, "auto": MethodAuto, "swarm": MethodSwarm, "rtt-tree": MethodRTTTree} {
		if got, err := ParseMethod(in); err != nil || got != want {
			t.Errorf("%q: %q, %v", in, got, err)
		}
	}
	if _, err := ParseMethod("latency"); err == nil {
		t.Error("latency: no error")
	}
}

// --method auto adds the swarm where the latency tree finds no level
// between the hosts and the world (one switch here: the swarm finds none
// either, and the levels stay host and all); rtt-tree never runs it.
func TestAutoRunsSwarmWithoutMiddleLevel(t *testing.T) {
	p, err := platform.Parse("flat.yaml", []byte(`version: 1
name: flat
switches: [s0]
hosts:
  - {names: "h[0-5]", switch: s0, link: {bandwidth: 1Gbps, latency: 10us}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{MethodAuto, MethodRTTTree} {
		opt := DefaultOptions()
		opt.Level, opt.Method = Fast, method
		opt.Swarm = DiscoverSwarmParams()
		opt.Swarm.Bytes, opt.Swarm.MaxIterations = 256<<10, 2
		out, _, err := runOnSim(context.Background(), p, sim.Options{}, opt)
		if err != nil {
			t.Fatal(err)
		}
		ran := out.Dataset.Swarm != nil
		if ran != (method == MethodAuto) {
			t.Errorf("%s: swarm ran %v", method, ran)
		}
		if ran && (len(out.Dataset.Swarm.Iterations) != 2 || out.Topology.Method.Name != "rtt-tree+agglomerative+swarm") {
			t.Errorf("%s: %d iterations, method %s", method, len(out.Dataset.Swarm.Iterations), out.Topology.Method.Name)
		}
		if n := len(out.Topology.Levels); n != 2 {
			t.Errorf("%s: %d levels, want host and all", method, n)
		}
	}
}
