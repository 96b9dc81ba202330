package main

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/dataset"
	"netaware/netsim"
	"netaware/platform"
	"netaware/probe"
)

// simulate records a `probe rtt --keep-samples --rounds 5` campaign over
// every pair of the platform in the simulator, with the realistic profile
// and the given noise seed.
func simulate(t *testing.T, plat string, seed int64) *dataset.Dataset {
	t.Helper()
	p, err := platform.Load(plat)
	if err != nil {
		t.Fatal(err)
	}
	ranks := make([]int, p.NumRanks())
	for i := range ranks {
		ranks[i] = i
	}
	ds := &dataset.Dataset{World: dataset.World{Kind: "sim", Size: len(ranks)}}
	cp := &probe.Campaign{Kind: "rtt", Schedule: dataset.ScheduleSpec{Mode: "serial", Ranks: ranks},
		RTT: dataset.RTTParams{Rounds: 5, KeepSamples: true}}
	_, err = sim.Run(context.Background(), p, sim.Options{Noise: platform.NoiseRealistic, Seed: seed}, func(ctx context.Context, c comm.Comm) error {
		var d *dataset.Dataset
		if c.Rank() == 0 {
			d = ds
		}
		return cp.Run(ctx, c, d, probe.RunHooks{})
	})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// The simulator's realistic profile reproduces the round trips recorded on
// emulated clusters (kernel TCP in network namespaces): the 10th, 50th,
// 90th and 99th percentiles of every exchange's RTT within 20% of the
// recorded ones, for the same campaigns on platform files of the same
// networks, for each of three noise seeds. The recordings are pooled: one
// recording's 90th percentile moves by 25% and its 99th by 3x from one run
// to the next (the machine's other work), and the profile describes the
// machine, not one run.
func TestRealisticProfileMatchesRecordedRTTs(t *testing.T) {
	recs := []struct{ data, plat string }{
		{"emu-rtt-1.json", "star2x6.yaml"},
		{"emu-rtt-2.json", "star2x6.yaml"},
		{"emu-rtt-3.json", "star2x6.yaml"},
		{"emu-chain-1.json", "chain4x3.yaml"},
	}
	var loaded []*Recording
	for _, r := range recs {
		rec, err := Load(filepath.Join("testdata", r.data), filepath.Join("testdata", r.plat))
		if err != nil {
			t.Fatal(err)
		}
		loaded = append(loaded, rec)
	}
	recorded := Merge(loaded)
	qs := []float64{0.1, 0.5, 0.9, 0.99}
	want := Quantiles(recorded.RTTs, qs...)
	for seed := int64(1); seed <= 3; seed++ {
		var rtts []float64
		for i, r := range recs {
			// One simulated campaign per recording, each with its own seed.
			ds := simulate(t, filepath.Join("testdata", r.plat), seed*10+int64(i))
			for _, pr := range ds.RTT.Pairs {
				rtts = append(rtts, pr.Result.SamplesS...)
			}
		}
		got := Quantiles(rtts, qs...)
		for i, q := range qs {
			r := got[i] / want[i]
			if math.Abs(r-1) > 0.2 {
				t.Errorf("seed %d: RTT q%g simulated %.2fus, recorded %.2fus (ratio %.2f)", seed, q*100, got[i]*1e6, want[i]*1e6, r)
			}
			t.Logf("seed %d: RTT q%-4g simulated %7.2fus recorded %7.2fus ratio %.2f", seed, q*100, got[i]*1e6, want[i]*1e6, r)
		}
	}
}

// Without spells no measurement keeps a delayed minimum; with them some
// do: the spells are what makes a pair's minimum unreliable.
func TestSpellsDelayWholeMeasurements(t *testing.T) {
	r := netsim.RealisticProfile()
	with := Emulate(r, dataset.RTTParams{Rounds: 3}, 2000, 24e-6, 3)
	r.SpellProb = 0
	without := Emulate(r, dataset.RTTParams{Rounds: 3}, 2000, 24e-6, 3)
	count := func(rec *Recording) int {
		k := 0
		for _, m := range rec.PairMins {
			if m > 3e-6 {
				k++
			}
		}
		return k
	}
	if w, wo := count(with), count(without); !(w > 20 && wo == 0) {
		t.Errorf("pairs whose minimum is 3 us or more above the floor: %d with spells (want > 20), %d without (want 0)", w, wo)
	}
}

// The list reader names the line of a bad entry.
func TestLoadListErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ body, want string }{
		{"", "no recordings"},
		{"# only a comment\n", "no recordings"},
		{"a.json\n", ":1: want DATASET PLATFORM"},
		{"\nmissing.json star.yaml\n", ":2: "},
	} {
		path := filepath.Join(dir, "list.txt")
		if err := writeFile(path, c.body); err != nil {
			t.Fatal(err)
		}
		_, err := LoadList(path)
		if err == nil || !contains(err.Error(), c.want) {
			t.Errorf("list %q: error %v, want one containing %q", c.body, err, c.want)
		}
	}
}
