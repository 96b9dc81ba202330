package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"netaware/comm"
	"netaware/comm/local"
	"netaware/comm/sim"
	"netaware/dataset"
	"netaware/platform"
	"netaware/topo"
)

var errInjected = errors.New("injected interruption")

// runCampaignLocal runs a campaign on n in-process ranks; rank 0 fills ds.
func runCampaignLocal(t *testing.T, n int, cp *Campaign, ds *dataset.Dataset, hooks RunHooks) error {
	t.Helper()
	return local.Run(withTimeout(t), n, func(ctx context.Context, c comm.Comm) error {
		var d *dataset.Dataset
		if c.Rank() == 0 {
			d = ds
		}
		return cp.Run(ctx, c, d, hooks)
	})
}

// runCampaignSim runs a campaign on the simulated platform p; rank 0
// fills ds.
func runCampaignSim(p *platform.Platform, opts sim.Options, cp *Campaign, ds *dataset.Dataset) (sim.Result, error) {
	return sim.Run(context.Background(), p, opts, func(ctx context.Context, c comm.Comm) error {
		var d *dataset.Dataset
		if c.Rank() == 0 {
			d = ds
		}
		return cp.Run(ctx, c, d, RunHooks{})
	})
}

func TestCampaignSerialAndHierarchicalLocal(t *testing.T) {
	ranks := []int{0, 1, 2, 3, 4, 5}
	levels := []topo.Level{{Name: "host", Groups: [][]int{{0, 1, 2}, {3, 4, 5}}}}
	tree, err := TreeFromLevels(levels, ranks)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []dataset.ScheduleSpec{
		{Mode: "serial", Ranks: ranks},
		{Mode: "hierarchical", Ranks: ranks, Tree: tree, Join: dataset.JoinZip},
	} {
		for _, sync := range []Sync{SyncBarrier, SyncToken} {
			ds := &dataset.Dataset{World: dataset.World{Kind: "local", Size: 6}}
			var progress [][2]int
			cp := &Campaign{Kind: "rtt", Schedule: spec, Sync: sync}
			err := runCampaignLocal(t, 6, cp, ds, RunHooks{Progress: func(d, n int) { progress = append(progress, [2]int{d, n}) }})
			if err != nil {
				t.Fatalf("%s/%s: %v", spec.Mode, sync, err)
			}
			if len(ds.RTT.Pairs) != 15 || !ds.RTT.Complete || ds.RTT.PairsTotal != 15 {
				t.Errorf("%s/%s: %d pairs, complete %v", spec.Mode, sync, len(ds.RTT.Pairs), ds.RTT.Complete)
			}
			if len(progress) != 16 || progress[15] != [2]int{15, 15} {
				t.Errorf("%s/%s: progress %v", spec.Mode, sync, progress)
			}
			if len(ds.Ranks) != 6 || len(ds.ClockOverheadS) != 6 {
				t.Errorf("identities %d, clock overheads %d", len(ds.Ranks), len(ds.ClockOverheadS))
			}
			m := ds.RTTMin()
			for i := range m {
				for j := range m {
					if i != j && !(m[i][j] > 0) {
						t.Errorf("RTT[%d][%d] = %g", i, j, m[i][j])
					}
				}
			}
		}
	}
}

// A campaign interrupted after some pairs resumes from its checkpoint: the
// finished pairs are kept unchanged and only the others are measured.
func TestCampaignResumeAfterInterruption(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dataset.json")
	ranks := []int{0, 1, 2, 3, 4}
	cp := &Campaign{Kind: "plogp", Schedule: dataset.ScheduleSpec{Mode: "serial", Ranks: ranks},
		PLogP: dataset.PLogPParams{MaxBytes: 64, Reps: 2, SatMax: 40}}
	ds := &dataset.Dataset{World: dataset.World{Kind: "local", Size: 5}}
	seen := 0
	err := runCampaignLocal(t, 5, cp, ds, RunHooks{Checkpoint: func(d *dataset.Dataset, final bool) error {
		if err := d.Save(path); err != nil {
			return err
		}
		seen++
		if seen == 4 {
			return errInjected // the driver dies right after its 4th checkpoint
		}
		return nil
	}})
	if !errors.Is(err, errInjected) {
		t.Fatalf("interrupted run: %v", err)
	}
	saved, err := dataset.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.PLogP.Pairs) != 4 || saved.PLogP.Complete {
		t.Fatalf("checkpoint holds %d pairs, complete %v", len(saved.PLogP.Pairs), saved.PLogP.Complete)
	}
	before, _ := json.Marshal(saved.PLogP.Pairs)
	measured := 0
	cp.Resume = true
	err = runCampaignLocal(t, 5, cp, saved, RunHooks{
		Checkpoint: func(d *dataset.Dataset, final bool) error { return d.Save(path) },
		Progress:   func(d, n int) { measured = d },
	})
	if err != nil {
		t.Fatal(err)
	}
	final, err := dataset.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(final.PLogP.Pairs) != 10 || !final.PLogP.Complete || final.PLogP.Runs != 2 || measured != 10 {
		t.Fatalf("resumed: %d pairs, complete %v, runs %d", len(final.PLogP.Pairs), final.PLogP.Complete, final.PLogP.Runs)
	}
	after, _ := json.Marshal(final.PLogP.Pairs[:4])
	if string(before) != string(after) {
		t.Error("pairs finished before the interruption changed on resume")
	}
	// resuming with other parameters is refused
	cp.PLogP.Reps = 3
	if err := runCampaignLocal(t, 5, cp, final, RunHooks{}); err == nil {
		t.Error("resume with other parameters accepted")
	}
}

// LGate's parallel schedule gives the same per-pair results as the serial
// one: on the noise-free simulator, every pair's PLogP RTT(m), o_s, o_r and
// g(m) agree within 1%, and the parallel campaign takes less virtual time.
func TestLGateParallelMatchesSerial(t *testing.T) {
	p := loadTestPlatform(t, "testdata/twonodes.yaml")
	n := p.NumRanks()
	ranks := make([]int, n)
	for i := range ranks {
		ranks[i] = i
	}
	tree, err := TreeFromLevels(p.TruthLevels(), ranks)
	if err != nil {
		t.Fatal(err)
	}
	params := dataset.PLogPParams{MaxBytes: 1 << 17, Reps: 2, MaxExtra: -1, MidpointEps: 1, SatMax: 40}
	run := func(spec dataset.ScheduleSpec) (*dataset.Dataset, float64) {
		ds := &dataset.Dataset{World: dataset.World{Kind: "sim", Size: n}}
		cp := &Campaign{Kind: "plogp", Schedule: spec, PLogP: params}
		res, err := runCampaignSim(p, sim.Options{NoNoise: true}, cp, ds)
		if err != nil {
			t.Fatal(err)
		}
		return ds, res.VirtualTime.Seconds()
	}
	serial, ts := run(dataset.ScheduleSpec{Mode: "serial", Ranks: ranks})
	par, tp := run(dataset.ScheduleSpec{Mode: "hierarchical", Ranks: ranks, Tree: tree, Join: dataset.JoinOne})
	t.Logf("virtual time: serial %.4gs, hierarchical %.4gs (%.2fx)", ts, tp, ts/tp)
	if !(tp < ts) {
		t.Errorf("parallel campaign %gs not faster than serial %gs", tp, ts)
	}
	if len(par.PLogP.Pairs) != n*(n-1)/2 {
		t.Fatalf("%d pairs", len(par.PLogP.Pairs))
	}
	for _, pr := range par.PLogP.Pairs {
		s, ok := serial.PLogP.Lookup(pr.A, pr.B)
		if !ok {
			t.Fatalf("pair %d-%d missing from the serial run", pr.A, pr.B)
		}
		for i, a := range pr.Result.Sizes {
			b := s.Sizes[i]
			if !within(a.RTT.Mean, b.RTT.Mean, 0.01) || !within(a.Os.Mean, b.Os.Mean, 0.01) ||
				!within(a.Or.Mean, b.Or.Mean, 0.01) || !within(a.GS, b.GS, 0.01) {
				t.Errorf("pair %d-%d, %d bytes: parallel %+v, serial %+v", pr.A, pr.B, a.Bytes, a, b)
			}
		}
	}
}

func TestDatasetSaveLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.json")
	ds := &dataset.Dataset{World: dataset.World{Kind: "sim", Platform: "x", Size: 3},
		RTT: &dataset.RTTSection{Params: dataset.RTTParams{}.WithDefaults(), Pairs: []dataset.PairResult[dataset.RTTResult]{{A: 0, B: 2, Result: dataset.RTTResult{MinS: 1e-6, MaxS: 2e-6}}}}}
	if err := ds.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := dataset.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 1 || got.RTTMin()[2][0] != 1e-6 {
		t.Errorf("round trip: %+v", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	for _, bad := range []string{`{"version":2}`, `{"version":1,"world":{"size":2},"rtt":{"pairs":[{"a":0,"b":5}]}}`, `[`} {
		if _, err := dataset.Parse([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func FuzzParseDataset(f *testing.F) {
	f.Add([]byte(`{"version":1,"world":{"kind":"sim","size":2},"rtt":{"pairs":[{"a":0,"b":1,"result":{"min_s":1e-6}}]}}`))
	f.Add([]byte(`{"version":1,"world":{"size":3},"patterns":{"patterns":[{"links":[{"src":0,"dst":2}]}]}}`))
	f.Add([]byte(`{"version":1,"plogp":{"pairs":[{"a":0,"b":1,"result":{"sizes":[{"bytes":0}]}}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := dataset.Parse(b)
		if err != nil {
			return
		}
		_ = d.RTTMin()
		_ = d.BandwidthMatrix()
		_ = d.PLogPMatrix(0, func(s dataset.PLogPSize) float64 { return s.GS })
	})
}

// Every schedule mode and synchronisation completes in the simulator
// whatever the eager limit (every message a rendezvous, 512 bytes): no
// campaign relies on a send completing before its receiver is there.
func TestCampaignAnyEagerLimit(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithRanks(1, "block")
	ranks := []int{0, 1, 15, 16}
	levels := []topo.Level{{Name: "rack", Groups: [][]int{{0, 1}, {15, 16}}}}
	tree, err := TreeFromLevels(levels, ranks)
	if err != nil {
		t.Fatal(err)
	}
	for _, eager := range []int{-1, 512} {
		for _, spec := range []dataset.ScheduleSpec{
			{Mode: "serial", Ranks: ranks},
			{Mode: "hierarchical", Ranks: ranks, Tree: tree, Join: dataset.JoinZip},
			{Mode: "representative", Ranks: ranks, Groups: levels[0].Groups, Levels: [][][]int{{ranks}}, Parallel: true},
		} {
			for _, sync := range []Sync{SyncBarrier, SyncToken} {
				ds := &dataset.Dataset{World: dataset.World{Kind: "sim", Size: p.NumRanks()}}
				cp := &Campaign{Kind: "plogp", Schedule: spec, Sync: sync, PLogP: dataset.PLogPParams{MaxBytes: 1024, Reps: 1, SatMax: 20}}
				_, err := runCampaignSim(p, sim.Options{EagerLimit: eager}, cp, ds)
				if err != nil {
					t.Fatalf("eager %d, %s/%s: %v", eager, spec.Mode, sync, err)
				}
				if len(ds.PLogP.Pairs) != ds.PLogP.PairsTotal {
					t.Fatalf("eager %d, %s/%s: %d of %d pairs", eager, spec.Mode, sync, len(ds.PLogP.Pairs), ds.PLogP.PairsTotal)
				}
			}
		}
	}
}

// In a phase of one-pair lanes (a parallel representative plan) no
// initiator sends its result to rank 0 directly: the results come along a
// binomial tree once the phase is over, not from every initiator at once
// while rank 0 measures (the old code: 14 of the 15 other initiators).
// Every result still arrives.
func TestParallelPhaseResultsComeByTree(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithRanks(1, "block")
	n := p.NumRanks()
	var groups [][]int
	for r := 0; r+1 < n; r += 2 {
		groups = append(groups, []int{r, r + 1})
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	spec := dataset.ScheduleSpec{Mode: "representative", Ranks: all, Groups: groups, Levels: [][][]int{{all}}, Parallel: true}
	var log strings.Builder
	ds := &dataset.Dataset{World: dataset.World{Kind: "sim", Size: n}}
	cp := &Campaign{Kind: "rtt", Schedule: spec, RTT: dataset.RTTParams{Rounds: 2}}
	_, err = runCampaignSim(p, sim.Options{EventLog: &log}, cp, ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.RTT.Pairs) != ds.RTT.PairsTotal || ds.RTT.PairsTotal < n/2 {
		t.Fatalf("%d of %d pairs arrived", len(ds.RTT.Pairs), ds.RTT.PairsTotal)
	}
	direct := map[int]bool{}
	for _, line := range strings.Split(log.String(), "\n") {
		var id, src, dst, tag int
		var cid uint64
		i := strings.Index(line, "send msg=")
		if i < 0 {
			continue
		}
		if _, err := fmt.Sscanf(line[i:], "send msg=%d %d->%d cid=%d tag=%d", &id, &src, &dst, &cid, &tag); err != nil || dst != 0 {
			continue
		}
		if tag == tagResHdr {
			direct[src] = true
		}
	}
	if len(direct) != 0 {
		t.Errorf("results sent to rank 0 directly by ranks %v", direct)
	}
}
