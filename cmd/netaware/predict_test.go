package main

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"netaware/model"
	"netaware/modelcheck"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Seed 001 Table I through the command line: Fig. 1's bindings and
// 940 Mbps NICs and copper backbone in model.json, its five flows as a
// pattern file; the asymmetric model's times are the table's 0.255 s and
// 0.425 s, in two steps.
func TestZhuTableIThroughPredictCLI(t *testing.T) {
	dir := t.TempDir()
	beta := 8 / 940e6
	mf := &model.File{Version: model.Version, Size: 10,
		Hockney: &model.HockneySection{Default: &model.Hockney{AlphaS: 1e-4, BetaSPerByte: beta}},
		Contention: &model.ContentionSection{BetaNICSPerByte: beta, BetaBackboneSPerByte: beta,
			NodeOf: []int{0, 0, 1, 2, 4, 5, 3, 6, 7, 6}, RackOf: []int{0, 0, 0, 0, 1, 1, 0, 1, 1, 1}}}
	mpath := filepath.Join(dir, "model.json")
	if err := mf.WriteFile(mpath); err != nil {
		t.Fatal(err)
	}
	pat := writeFile(t, dir, "pattern.txt", "# Fig. 1: a1..a5 -> b1..b5\n0 5 10000000\n1 6 20000000\n2 7 20000000\n3 8 20000000\n4 9 20000000\n")
	out, err := runSimCLI(t, "predict", "--model", mpath, "--pattern", pat, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var p model.OperationPrediction
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	want := []float64{0.255, 0.255, 0.425, 0.425, 0.255}
	for i, w := range want {
		if got := p.Flows[i].EndS[model.Asymmetric]; math.Abs(got-w) > 0.001 {
			t.Errorf("flow %d: %.4f s, want %.3f", i, got, w)
		}
	}
	if p.Totals[0].Model != model.Asymmetric || p.Totals[0].Steps != 2 {
		t.Errorf("totals %+v", p.Totals)
	}
	// The table form names every model (0.4255 s prints as 426ms: three
	// significant digits, as every time netaware prints).
	out, err = runSimCLI(t, "predict", "--model", mpath, "--pattern", pat)
	if err != nil || !strings.Contains(out, "asymmetric") || !strings.Contains(out, "fairness") || !strings.Contains(out, "426ms") {
		t.Errorf("%v\n%s", err, out)
	}
}

// Every collective of --op runs, with the pair models for trees; bad
// command lines are usage errors naming what is wrong.
func TestPredictCollectivesCLI(t *testing.T) {
	dir := t.TempDir()
	mf := &model.File{Version: model.Version, Size: 4,
		Hockney:    &model.HockneySection{Default: &model.Hockney{AlphaS: 1e-5, BetaSPerByte: 1e-8}},
		PLogP:      &model.PLogPSection{Default: &model.PLogP{LS: 1e-5, Points: []model.PLogPPoint{{Bytes: 0, OsS: 1e-6, OrS: 1e-6, GS: 2e-6}, {Bytes: 1 << 20, OsS: 1e-3, OrS: 1e-3, GS: 1e-2}}}},
		Contention: &model.ContentionSection{BetaNICSPerByte: 1e-8, BetaBackboneSPerByte: 1e-9, NodeOf: []int{0, 1, 2, 3}, RackOf: []int{0, 0, 1, 1}}}
	mpath := filepath.Join(dir, "model.json")
	if err := mf.WriteFile(mpath); err != nil {
		t.Fatal(err)
	}
	counts := writeFile(t, dir, "counts.txt", "0 1KiB 2KiB 4KiB\n")
	matrix := writeFile(t, dir, "a2a.txt", "0 1MiB 0 0\n1MiB 0 0 0\n0 0 0 1MiB\n0 0 1MiB 0\n")
	for _, args := range [][]string{
		{"--op", "bcast", "--alg", "binomial"},
		{"--op", "bcast", "--alg", "pipeline", "--seg", "65536"},
		{"--op", "scatter", "--alg", "binomial"},
		{"--op", "scatterv", "--alg", "linear", "--counts", counts},
		{"--op", "gather", "--alg", "chain"},
		{"--op", "gatherv", "--alg", "binomial", "--counts", counts},
		{"--op", "reduce", "--alg", "model-binomial"},
		{"--op", "alltoallv", "--counts", matrix},
	} {
		out, err := runSimCLI(t, append([]string{"predict", "--model", mpath, "--size", "1MiB", "--json"}, args...)...)
		if err != nil {
			t.Errorf("%v: %v\n%s", args, err, out)
			continue
		}
		var p model.OperationPrediction
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		models := strings.Join(p.ModelNames(), ",")
		if models != "hockney,hetero-hockney,loggp,plogp,asymmetric,fairness" {
			t.Errorf("%v: models %s", args, models)
		}
		for _, tot := range p.Totals {
			if !(tot.TimeS > 0) {
				t.Errorf("%v: %s predicts %g", args, tot.Model, tot.TimeS)
			}
		}
	}
	// The inline form is the pattern file's: rank 1 receives two flows and
	// sends one, so under the asymmetric model all three share its NIC.
	out, err := runSimCLI(t, "predict", "--model", mpath, "--flows", "0>1:1000,3>1:1000,1>2:1000", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var inline model.OperationPrediction
	if err := json.Unmarshal([]byte(out), &inline); err != nil {
		t.Fatal(err)
	}
	if f := inline.Flows[2]; !(f.EndS[model.Asymmetric] > 1.9*f.EndS[model.Fairness]) {
		t.Errorf("1 -> 2 with two flows into 1: asymmetric %g s, fairness %g s: want about twice", f.EndS[model.Asymmetric], f.EndS[model.Fairness])
	}
	badPat := writeFile(t, dir, "bad.txt", "0 1 1KiB\n0 0 1KiB\n")
	for _, args := range [][]string{
		{"--json"},
		{"--model", mpath},
		{"--model", mpath, "--op", "bcast", "--pattern", badPat},
		{"--model", mpath, "--op", "allreduce"},
		{"--model", mpath, "--op", "scatterv"},
		{"--model", mpath, "--op", "bcast", "--alg", "nosuch"},
		{"--model", mpath, "--op", "bcast", "--root", "4"},
		{"--model", mpath, "--pattern", badPat},
		{"--model", mpath, "--pattern", badPat, "--nic-bw", "fast"},
		{"--model", mpath, "--flows", "0>0:1KiB"},
		{"--model", mpath, "--flows", "0>1"},
		{"--model", mpath, "--flows", "0>1:1KiB", "--pattern", badPat},
	} {
		_, err := runSimCLI(t, append([]string{"predict"}, args...)...)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	_, err = runSimCLI(t, "predict", "--model", mpath, "--pattern", badPat)
	if err == nil || !strings.Contains(err.Error(), "bad.txt:2") {
		t.Errorf("bad pattern line: %v, want the file and line named", err)
	}
}

// Issue 13's acceptance: discover's model.json carries Hockney (with
// standard errors) and contention parameters, and 'tune bcast --model'
// takes it and measures the model-based builders into bench.json.
func TestTuneBcastWithDiscoverModel(t *testing.T) {
	dir := t.TempDir()
	if out, err := runSimCLI(t, "discover", "--platform", tinyPlatform, "--out", dir, "--quiet"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	mf, err := model.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		t.Fatal(err)
	}
	if mf.Hockney == nil || len(mf.Hockney.GroupPairs) == 0 || mf.Hockney.GroupPairs[0].BetaSES <= 0 {
		t.Fatalf("discover's model has no hockney fit with standard errors: %+v", mf.Hockney)
	}
	if mf.Contention == nil || mf.Contention.BetaNICSPerByte <= 0 {
		t.Fatalf("discover's model has no NIC bandwidth: %+v", mf.Contention)
	}
	out, err := runSimCLI(t, "tune", "bcast", "--platform", tinyPlatform, "--out", dir, "--quiet", "--model", filepath.Join(dir, "model.json"),
		"--sizes", "1MiB", "--reps", "2", "--algorithms", "binomial,model-binomial,prim,traff")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	rep := readBenchJSON(t, dir)
	ok := map[string]bool{}
	for _, m := range rep.Measurements {
		ok[m.Label] = m.Err == ""
	}
	for _, l := range []string{"model-binomial", "prim", "traff"} {
		if !ok[l] {
			t.Errorf("%s not measured: %v", l, ok)
		}
	}
	// The contention model predicts the measured binomial broadcast
	// within 15% from discover's files alone (the backbone, which one pair
	// cannot fill, given).
	pred, err := runSimCLI(t, "predict", "--model", filepath.Join(dir, "model.json"), "--topology", filepath.Join(dir, "topology.json"),
		"--op", "bcast", "--alg", "binomial", "--size", "1MiB", "--backbone-bw", "10Gbps", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, pred)
	}
	var p model.OperationPrediction
	if err := json.Unmarshal([]byte(pred), &p); err != nil {
		t.Fatal(err)
	}
	var measured float64
	for _, m := range rep.Measurements {
		if m.Label == "binomial" {
			measured = m.Stats.Median
		}
	}
	for _, tot := range p.Totals {
		if tot.Model == model.Asymmetric && math.Abs(tot.TimeS-measured) > 0.15*measured {
			t.Errorf("binomial 1 MiB: asymmetric model %g s, measured %g s", tot.TimeS, measured)
		}
	}
}

// predict check runs end to end on a small simulated platform and prints
// Table II's columns; --json carries every link.
func TestPredictCheckCLI(t *testing.T) {
	out, err := runSimCLI(t, "predict", "check", "--platform", tinyPlatform, "--settings", "4x1,4x2", "--links", "4", "--size", "1MiB", "--alltoallv", "none", "--quiet")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, w := range []string{"asym within 10%", "fair within 10%", "experiments A and B", "all"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	out, err = runSimCLI(t, "predict", "check", "--platform", tinyPlatform, "--settings", "4x2", "--links", "4", "--size", "1MiB", "--alltoallv", "none", "--quiet", "--json", "--nic-bw", "1Gbps", "--backbone-bw", "10Gbps")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var rep modelcheck.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Calibration.Measured || len(rep.Links) < 4 || rep.Total.Links != len(rep.Links) {
		t.Errorf("report %+v", rep)
	}
	for _, args := range [][]string{
		{"--settings", "4"},
		{"--settings", "40x1"},
		{"--nic-bw", "x"},
	} {
		_, err := runSimCLI(t, append([]string{"predict", "check", "--platform", tinyPlatform, "--alltoallv", "none", "--quiet"}, args...)...)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
