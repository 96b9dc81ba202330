package tune

import (
	"context"
	"math"
	"testing"

	"netaware/coll"
	"netaware/comm"
	"netaware/comm/sim"
	"netaware/dataset"
	"netaware/model"
	"netaware/probe"
)

// The heterogeneous Hockney model, fitted by a probe campaign in the
// simulator (dataset -> model.FromDataset), predicts the schedules whose
// transfers do not share a NIC at the same time — chain, segmented
// pipeline, flat tree, k-nomial — within 15% of their simulated time, once
// the latency of consecutive sends overlaps (HeteroHockney.Overlap). The
// binomial and binary trees send from several ranks of one host at once;
// the per-pair model cannot see that NIC sharing and is only logged for
// them. Seed 001's contention model (Algorithms 1-2 with transfers
// arriving as the broadcast proceeds) predicts every unsegmented schedule,
// binomial and binary included, within 10%.
func TestZhuContentionAndHeteroHockneyPredictSimulatedBcast(t *testing.T) {
	p := tinyPlatform(t).WithoutNoise()
	n := p.NumRanks()
	var ranks []int
	for i := range n {
		ranks = append(ranks, i)
	}
	cp := &probe.Campaign{Kind: "hockney", Schedule: dataset.ScheduleSpec{Mode: "serial", Ranks: ranks},
		Hockney: dataset.HockneyParams{MaxBytes: 1 << 20, Reps: 2}, Sync: probe.SyncToken}
	ds := &dataset.Dataset{Version: dataset.Version, World: dataset.World{Kind: "sim", Platform: p.Name, Size: n}}
	_, err := sim.Run(context.Background(), p, sim.Options{}, func(ctx context.Context, c comm.Comm) error {
		var d *dataset.Dataset
		if c.Rank() == 0 {
			d = ds
		}
		return cp.Run(ctx, c, d, probe.RunHooks{Checkpoint: func(*dataset.Dataset, bool) error { return nil }})
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := model.FromDataset(ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.HeteroHockney()
	if err != nil {
		t.Fatal(err)
	}
	h.Overlap = true
	algs := []coll.Algorithm{{Name: "chain"}, {Name: "pipeline", SegSize: 8192}, {Name: "linear"}, {Name: "knomial", K: 4}, {Name: "binomial"}, {Name: "binary"}}
	ms, err := simRun(p, sim.Options{}, BenchConfig{Sizes: []int{65536, 1 << 20}, Reps: 2, Warmup: 1}, algs)
	if err != nil {
		t.Fatal(err)
	}
	// Seed 001's contention model on the same platform: node = host,
	// rack = the host's switch; 1 Gbps NICs, 10 Gbps backbone; latency from
	// the probed alpha.
	ct := &model.Contention{NodeOf: make([]int, n), RackOf: make([]int, n),
		BetaNIC: 8 / 1e9, BetaBackbone: 8 / 10e9, IntraNodeBeta: 1 / 20e9}
	for r := range n {
		h := p.RankHost(r)
		ct.NodeOf[r] = h
		ct.RackOf[r] = h / 2 // a0 a1 on rackA, b0 b1 on rackB
	}
	lat := func(i, j int) float64 { return h.At(i, j).AlphaS }
	for _, m := range ms {
		s, err := m.Resolved.Build(n, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := ScheduleTree(s)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := model.PredictBcast(tr, m.Bytes, h)
		if err != nil {
			t.Fatal(err)
		}
		ratio := pr.TimeS / m.Stats.MeanS
		cratio := math.NaN()
		if tr.SegBytes == 0 || tr.SegBytes >= m.Bytes {
			pc, err := model.PredictBcastContention(tr, m.Bytes, ct, lat)
			if err != nil {
				t.Fatal(err)
			}
			cratio = pc.TimeS / m.Stats.MeanS
		}
		t.Logf("%-20s %8d B: simulated %.4g s, hetero Hockney %.2f, contention %.2f", m.Label, m.Bytes, m.Stats.MeanS, ratio, cratio)
		if m.Algorithm.Name != "binomial" && m.Algorithm.Name != "binary" && math.Abs(ratio-1) > 0.15 {
			t.Errorf("%s at %d bytes: hetero Hockney predicted/simulated = %.2f", m.Label, m.Bytes, ratio)
		}
		if !math.IsNaN(cratio) && math.Abs(cratio-1) > 0.10 {
			t.Errorf("%s at %d bytes: contention model predicted/simulated = %.2f", m.Label, m.Bytes, cratio)
		}
	}
}
