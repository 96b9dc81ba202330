package modelcheck

import (
	"context"
	"math"
	"os"
	"testing"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/dataset"
	"netaware/model"
	"netaware/platform"
	"netaware/topo"
)

func zhuOptions(t *testing.T) (*platform.Platform, Options) {
	t.Helper()
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	node, rack, err := model.Bindings(&topo.Topology{Version: topo.Version, Size: p.NumRanks(), Levels: p.TruthLevels()})
	if err != nil {
		t.Fatal(err)
	}
	return p, Options{P: 0.5, Seed: 1, NodeOf: node, RackOf: rack, Pattern: dataset.PatternParams{Bytes: 4 << 20, MaxIter: 30}}
}

func runCheck(t *testing.T, p *platform.Platform, o Options) *Report {
	t.Helper()
	var rep *Report
	_, err := sim.Run(context.Background(), p, sim.Options{}, func(ctx context.Context, c comm.Comm) error {
		r, err := Run(ctx, c, o)
		if c.Rank() == 0 {
			rep = r
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Seed 001 Table II in the simulator (whose TCP model has the asymmetric
// property): on the seed's busiest settings, |N| = 20 and 30 with d = 3,
// the asymmetric model predicts at least 90% of the links within 10%, and
// more of them than the fairness-only model. Experiments A and B measure
// the 1 Gbps NICs and the 10 Gbps backbone first.
func TestZhuTableIIAsymmetricModelWithin10PercentInSimulator(t *testing.T) {
	p, o := zhuOptions(t)
	o.Settings = []Setting{{20, 3}, {30, 3}}
	o.Links = 40
	rep := runCheck(t, p, o)
	cal := rep.Calibration
	if nic := 8 / cal.BetaNICSPerByte; nic < 0.95e9 || nic > 1e9 {
		t.Errorf("experiment A: NIC %.3g bps, want about 1 Gbps", nic)
	}
	if bb := 8 / cal.BetaBackboneSPerByte; cal.BackboneAtLeast || bb < 9.5e9 || bb > 10e9 {
		t.Errorf("experiment B: backbone %.3g bps (at least: %v), want about 10 Gbps measured", bb, cal.BackboneAtLeast)
	}
	for _, r := range rep.Rows {
		if r.Links < o.Links || r.Patterns < 1 || r.Steps < 1 {
			t.Errorf("|N| %d d %d: %d links in %d patterns, %.1f steps", r.Nodes, r.D, r.Links, r.Patterns, r.Steps)
		}
		t.Logf("|N| %d d %d: %d links, within 10%%: asymmetric %.1f%%, fairness %.1f%%", r.Nodes, r.D, r.Links, 100*r.Within10Asym, 100*r.Within10Fair)
		if r.Within10Asym < 0.9 || r.Within10Asym <= r.Within10Fair {
			t.Errorf("|N| %d d %d: within 10%%: asymmetric %.1f%%, fairness %.1f%%: want >= 90%% and above", r.Nodes, r.D, 100*r.Within10Asym, 100*r.Within10Fair)
		}
	}
}

// Seed 001 Sect. 7.3 / Fig. 8: an irregular alltoallv over four nodes of
// one rack, predicted within 5% by the asymmetric model (the seed: 1%)
// and missed by the fairness model (the seed: 20% too fast).
func TestZhuFig8AlltoallvWithin5PercentInSimulator(t *testing.T) {
	p, o := zhuOptions(t)
	o.Links = 1
	o.BetaNIC, o.BetaBackbone = 8/1e9, 8/10e9
	o.Alltoallv = ExampleAlltoallv()
	a := runCheck(t, p, o).Alltoallv
	if a == nil || len(a.Links) != 7 {
		t.Fatalf("alltoallv %+v", a)
	}
	t.Logf("alltoallv: measured %.4g s, asymmetric %.4g s (%+.1f%%), fairness %.4g s (%+.1f%%)", a.MeasS, a.AsymS, 100*a.EpsAsym, a.FairS, 100*a.EpsFair)
	if math.Abs(a.EpsAsym) > 0.05 || a.EpsFair > -0.15 {
		t.Errorf("asymmetric %+.1f%%, fairness %+.1f%%: want within 5%% and more than 15%% too fast", 100*a.EpsAsym, 100*a.EpsFair)
	}
}

// Worked by hand: the error columns of Table II.
func TestSummarizeTableIIColumns(t *testing.T) {
	ls := []Link{
		{EpsAsym: 0.05, EpsFair: -0.5, Bidirectional: true},
		{EpsAsym: -0.1, EpsFair: 0.1},
		{EpsAsym: 0.2, EpsFair: 0, Bidirectional: true},
		{EpsAsym: 0, EpsFair: -0.3},
	}
	r := Summarize(ls)
	if r.Links != 4 || r.Within10Asym != 0.75 || r.Within10Fair != 0.5 || r.BidirLinks != 2 {
		t.Errorf("%+v", r)
	}
	if math.Abs(r.MeanAbsAsym-0.0875) > 1e-12 || math.Abs(r.MeanAbsFair-0.225) > 1e-12 ||
		math.Abs(r.MeanAbsAsymBidir-0.125) > 1e-12 || math.Abs(r.MeanAbsFairBidir-0.25) > 1e-12 {
		t.Errorf("%+v", r)
	}
	if Summarize(nil).Links != 0 {
		t.Error("empty")
	}
}

// Bidirectional: a NIC or a rack with flows both in and out.
func TestBidirectionalPatterns(t *testing.T) {
	node, rack := []int{0, 1, 2, 3}, []int{0, 0, 1, 1}
	for _, c := range []struct {
		flows []model.Flow
		want  bool
	}{
		{[]model.Flow{{Src: 0, Dst: 1}, {Src: 2, Dst: 3}}, false},
		{[]model.Flow{{Src: 0, Dst: 1}, {Src: 1, Dst: 0}}, true},
		{[]model.Flow{{Src: 0, Dst: 2}, {Src: 3, Dst: 1}}, true}, // the backbone both ways
		{[]model.Flow{{Src: 0, Dst: 1}, {Src: 1, Dst: 3}}, true}, // node 1
		{[]model.Flow{{Src: 0, Dst: 2}, {Src: 1, Dst: 3}}, false},
	} {
		if got := Bidirectional(c.flows, node, rack); got != c.want {
			t.Errorf("%v: %v, want %v", c.flows, got, c.want)
		}
	}
}

// Settings that the world cannot hold, or bad options, are errors before
// anything runs.
func TestOptionsRejected(t *testing.T) {
	_, o := zhuOptions(t)
	o.Links = 10
	for name, mod := range map[string]func(*Options){
		"too many nodes": func(o *Options) { o.Settings = []Setting{{40, 1}} },
		"d 0":            func(o *Options) { o.Settings = []Setting{{10, 0}} },
		"p 0":            func(o *Options) { o.P = 0 },
		"bindings":       func(o *Options) { o.NodeOf = o.NodeOf[:3] },
		"alltoallv":      func(o *Options) { o.Alltoallv = [][]float64{{0, 1}, {1}} },
	} {
		oo := o
		oo.Settings = []Setting{{10, 1}}
		mod(&oo)
		if err := oo.Validate(30); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if d := dedupe([]dataset.Link{{Src: 1, Dst: 2}, {Src: 1, Dst: 2}, {Src: 2, Dst: 1}}); len(d) != 2 {
		t.Errorf("dedupe %v", d)
	}
}

// Table II's whole experiment in the simulator: the nine settings with
// at least 500 links each (3-4 minutes on two busy cores; opt-in with
// NETAWARE_TABLE2=1). Every setting has the asymmetric model at least 90%
// within 10% and above the fairness model, as does the total.
func TestZhuTableIINineSettingsInSimulator(t *testing.T) {
	if os.Getenv("NETAWARE_TABLE2") == "" {
		t.Skip("set NETAWARE_TABLE2=1 to run Table II's nine settings (3-4 minutes)")
	}
	p, o := zhuOptions(t)
	o.Settings, o.Links = ZhuSettings, 500
	o.Pattern = dataset.PatternParams{Bytes: 8 << 20, MaxIter: 50}
	rep := runCheck(t, p, o)
	for _, r := range append(rep.Rows, rep.Total) {
		t.Logf("|N| %d d %d: %d links, %.1f steps, within 10%%: asymmetric %.1f%%, fairness %.1f%%", r.Nodes, r.D, r.Links, r.Steps, 100*r.Within10Asym, 100*r.Within10Fair)
		if r.Links < 500 || r.Within10Asym < 0.9 || r.Within10Asym <= r.Within10Fair {
			t.Errorf("|N| %d d %d: %d links, within 10%%: asymmetric %.1f%%, fairness %.1f%%", r.Nodes, r.D, r.Links, 100*r.Within10Asym, 100*r.Within10Fair)
		}
	}
}
