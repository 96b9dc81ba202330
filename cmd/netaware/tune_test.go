package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"netaware/coll"
	"netaware/model"
	"netaware/tune"
)

const tinyPlatform = "../../tune/testdata/tiny-2racks.yaml"

func TestTuneBcastWritesAllFiles(t *testing.T) {
	dir := t.TempDir()
	out, err := runSimCLI(t, "tune", "bcast", "--platform", tinyPlatform, "--out", dir, "--quiet",
		"--sizes", "1,64KiB,1MiB", "--reps", "3", "--algorithms", "binomial,pipeline,hierarchical,magpie2", "--segs", "8KiB", "--bases", "binomial")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "using the platform's ground-truth levels") {
		t.Errorf("output does not say the topology defaulted to the ground truth:\n%s", out)
	}
	for _, f := range []string{"ompi-rules.conf", "ompi-rules.json", "mpich-coll.json", "decision.json", "bench.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	d, err := coll.ReadDecisionFile(filepath.Join(dir, "decision.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Lookup(16, 1<<20); !ok {
		t.Errorf("decision has no rule for 16 ranks")
	}
	rep := readBenchJSON(t, dir)
	// Baseline + binomial whole and segmented + pipeline + hierarchical +
	// magpie2 at 3 levels, 3 sizes.
	if len(rep.Measurements) != 8*3 || rep.TopologySource != "platform ground truth" || len(rep.Choices) != 3 {
		t.Errorf("bench.json: %d measurements, topology %q, %d choices", len(rep.Measurements), rep.TopologySource, len(rep.Choices))
	}
	conf, _ := os.ReadFile(filepath.Join(dir, "ompi-rules.conf"))
	if !strings.Contains(string(conf), "\n7 # collective id: bcast\n") || !strings.Contains(string(conf), "\n16 # communicator size\n") {
		t.Errorf("rules file:\n%s", conf)
	}
}

func TestTuneBcastSeveralCommSizes(t *testing.T) {
	dir := t.TempDir()
	out, err := runSimCLI(t, "tune", "bcast", "--platform", tinyPlatform, "--out", dir, "--quiet",
		"--sizes", "1KiB,1MiB", "--reps", "2", "--algorithms", "binomial,pipeline", "--segs", "8KiB", "--comm-sizes", "8,16")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	d, err := coll.ReadDecisionFile(filepath.Join(dir, "decision.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Rules) != 2 || d.Rules[0].MinRanks != 8 || d.Rules[1].MinRanks != 16 {
		t.Fatalf("decision rules %+v", d.Rules)
	}
	if _, err := runSimCLI(t, "tune", "bcast", "--platform", tinyPlatform, "--out", dir, "--comm-sizes", "16,8"); err == nil {
		t.Errorf("descending --comm-sizes accepted")
	}
}

func TestTuneBcastWithModel(t *testing.T) {
	dir := t.TempDir()
	mf := &model.File{Version: model.Version, Size: 16,
		Groups:  [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}},
		Hockney: &model.HockneySection{Default: &model.Hockney{AlphaS: 220e-6, BetaSPerByte: 8e-9}}}
	for g := range 4 {
		mf.Hockney.GroupPairs = append(mf.Hockney.GroupPairs, model.HockneyEntry{A: g, B: g, Hockney: model.Hockney{AlphaS: 1e-6, BetaSPerByte: 5e-11}})
	}
	mpath := filepath.Join(dir, "model.json")
	if err := mf.WriteFile(mpath); err != nil {
		t.Fatal(err)
	}
	out, err := runSimCLI(t, "tune", "bcast", "--platform", tinyPlatform, "--out", dir, "--quiet", "--model", mpath,
		"--sizes", "1MiB", "--reps", "2", "--algorithms", "binomial,model-binomial,prim")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	rep := readBenchJSON(t, dir)
	labels := map[string]bool{}
	for _, m := range rep.Measurements {
		labels[m.Label] = m.Err == ""
	}
	if !labels["model-binomial"] || !labels["prim"] {
		t.Fatalf("performance-aware builders not measured: %v", labels)
	}
	bad := &model.File{Version: model.Version, Size: 4, Hockney: &model.HockneySection{Default: &model.Hockney{}}}
	bpath := filepath.Join(dir, "bad.json")
	_ = bad.WriteFile(bpath)
	_, err = runSimCLI(t, "tune", "bcast", "--platform", tinyPlatform, "--out", dir, "--model", bpath)
	var ue *usageError
	if !errors.As(err, &ue) {
		t.Errorf("a 4-rank model for 16 ranks: %v, want a usage error", err)
	}
}

func TestBenchBcastJSONAndPlot(t *testing.T) {
	dir := t.TempDir()
	plotBase := filepath.Join(dir, "bcast")
	out, err := runSimCLI(t, "bench", "bcast", "--platform", tinyPlatform, "--sizes", "1KiB,256KiB", "--reps", "2",
		"--algorithms", "binomial,hierarchical", "--bases", "binomial", "--segs", "8KiB", "--json", "--plot", plotBase+".png")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var res collBench
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// ompi-fixed, binomial whole and in 8 KiB segments, hierarchical.
	if res.Ranks != 16 || len(res.Series) != 4 || len(res.Tuned) != 2 {
		t.Fatalf("result %+v", res)
	}
	for _, c := range res.Tuned {
		if c.Speedup < 1 {
			t.Errorf("%d bytes: tuned %s slower than ompi-fixed (%.2f)", c.Bytes, c.Tuned, c.Speedup)
		}
	}
	for _, ext := range []string{".png", ".svg"} {
		if st, err := os.Stat(plotBase + ext); err != nil || st.Size() == 0 {
			t.Errorf("plot %s: %v", ext, err)
		}
	}
}

func TestBenchBcastWithDecision(t *testing.T) {
	dir := t.TempDir()
	if out, err := runSimCLI(t, "tune", "bcast", "--platform", tinyPlatform, "--out", dir, "--quiet",
		"--sizes", "1KiB,1MiB", "--reps", "2", "--algorithms", "binomial,pipeline", "--segs", "8KiB"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := runSimCLI(t, "bench", "bcast", "--platform", tinyPlatform, "--sizes", "1KiB,1MiB", "--reps", "2",
		"--algorithms", "binomial", "--decision", filepath.Join(dir, "decision.json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "auto -> ") {
		t.Errorf("tuned series does not show what auto resolved to:\n%s", out)
	}
}

func TestTuneBadInputIsUsageError(t *testing.T) {
	for _, args := range [][]string{
		{"tune", "bcast", "--platform", tinyPlatform},
		{"tune", "bcast", "--out", t.TempDir()},
		{"tune", "bcast", "--platform", tinyPlatform, "--out", t.TempDir(), "--sizes", "lots"},
		{"tune", "bcast", "--platform", tinyPlatform, "--out", t.TempDir(), "--algorithms", "nope"},
		{"tune", "bcast", "--platform", tinyPlatform, "--out", t.TempDir(), "--reps", "0"},
		{"tune", "bcast", "--platform", tinyPlatform, "--out", t.TempDir(), "--per-host", "99"},
		{"bench", "bcast", "--platform", tinyPlatform, "--topology", "/nonexistent.json"},
		{"bench", "bcast", "--platform", tinyPlatform, "--comm-sizes", "4,8"},
		{"tune", "bcast", "--platform", tinyPlatform, "--out", t.TempDir(), "--comm-sizes", "99"},
	} {
		_, err := runSimCLI(t, args...)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: got %v, want a usage error", args, err)
		}
	}
}

// TestTuneBcastLive: without --platform, tune bcast runs on the live world
// it was started in: 3 processes over TCP (netaware launch), rank 0
// writing the files, topology-blind candidates only (no topology given);
// bench bcast on goroutines (--local) measures every candidate.
func TestTuneBcastLive(t *testing.T) {
	bin := buildNetaware(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "launch", "-n", "3", "--", "netaware", "tune", "bcast", "--quiet", "--out", dir,
		"--sizes", "1KiB,64KiB", "--algorithms", "binomial,magpie", "--segs", "16KiB", "--reps", "2")
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("launch tune bcast: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "topology-blind algorithms only") || strings.Contains(string(out), "[1] ") {
		t.Errorf("rank 0 does not say it has no topology, or another rank printed:\n%s", out)
	}
	rep := readBenchJSON(t, dir)
	// ompi-fixed, binomial whole and in 16 KiB segments (magpie needs a
	// topology), 2 sizes, each with 2 positive repetitions.
	if rep.Ranks != 3 || rep.Platform != "live" || rep.TopologySource != "none" || len(rep.Measurements) != 3*2 || len(rep.Choices) != 2 {
		t.Fatalf("bench.json: %d ranks, world %q, topology %q, %d measurements, %d choices", rep.Ranks, rep.Platform, rep.TopologySource, len(rep.Measurements), len(rep.Choices))
	}
	for _, m := range rep.Measurements {
		if m.Err != "" || len(m.TimesS) != 2 || m.Stats.MinS <= 0 {
			t.Errorf("%s at %d bytes: %+v", m.Label, m.Bytes, m)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ompi-rules.conf")); err != nil {
		t.Error(err)
	}

	res, err := runSimCLI(t, "bench", "bcast", "--local", "4", "--quiet", "--json", "--sizes", "4KiB", "--algorithms", "binomial,pipeline", "--segs", "1KiB")
	if err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	var bb collBench
	if err := json.Unmarshal([]byte(res), &bb); err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	if bb.Ranks != 4 || len(bb.Series) != 4 || len(bb.Tuned) != 1 {
		t.Fatalf("bench over --local 4: %+v", bb)
	}
	if _, err := runSimCLI(t, "bench", "bcast", "--local", "2", "--per-host", "2"); err == nil {
		t.Error("--per-host accepted without a platform")
	}
}

// TestTuneBcastFrom: --from decides again from an earlier bench.json
// without measuring: the same measurements give the same rules files; a
// missing or empty file is a usage error.
func TestTuneBcastFrom(t *testing.T) {
	dir, again := t.TempDir(), t.TempDir()
	if out, err := runSimCLI(t, "tune", "bcast", "--platform", tinyPlatform, "--out", dir, "--quiet",
		"--sizes", "1KiB,1MiB", "--reps", "2", "--algorithms", "binomial,binomial-inorder,pipeline", "--segs", "8KiB"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := runSimCLI(t, "tune", "bcast", "--from", filepath.Join(dir, "bench.json"), "--out", again); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, f := range []string{"ompi-rules.conf", "mpich-coll.json", "decision.json"} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, err := os.ReadFile(filepath.Join(again, f))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s differs after --from (%v):\n%s\n---\n%s", f, err, a, b)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty.json")
	os.WriteFile(empty, []byte(`{"version": 1}`), 0o644)
	for _, from := range []string{"/nonexistent/bench.json", empty} {
		_, err := runSimCLI(t, "tune", "bcast", "--from", from, "--out", t.TempDir())
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("--from %s: %v, want a usage error", from, err)
		}
	}
}

// TestTuneAllreduceLive: tune allreduce on 4 live ranks (goroutines over
// the real clock) measures every algorithm asked and writes allreduce's
// decision table and rules; bench allreduce prints the same series.
func TestTuneAllreduceLive(t *testing.T) {
	dir := t.TempDir()
	out, err := runSimCLI(t, "tune", "allreduce", "--local", "4", "--quiet", "--out", dir,
		"--sizes", "1000,64KiB", "--algorithms", "ring,recursive-doubling,rabenseifner,binomial", "--reps", "2")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	rep := readBenchJSON(t, dir)
	// No ompi-fixed baseline for allreduce; 1000 bytes is 250 floats.
	if rep.Ranks != 4 || rep.Platform != "local" || len(rep.Measurements) != 4*2 || len(rep.Choices) != 2 {
		t.Fatalf("bench.json: %d ranks, world %q, %d measurements, %d choices", rep.Ranks, rep.Platform, len(rep.Measurements), len(rep.Choices))
	}
	for _, m := range rep.Measurements {
		if m.Collective != tune.Allreduce || m.Err != "" || len(m.TimesS) != 2 || m.Stats.MinS <= 0 || (m.Bytes != 1000 && m.Bytes != 65536) {
			t.Errorf("%s at %d bytes: %+v", m.Label, m.Bytes, m)
		}
	}
	conf, err := os.ReadFile(filepath.Join(dir, "ompi-rules.conf"))
	if err != nil || !strings.Contains(string(conf), "1 # number of collectives\n2 # collective id: allreduce\n") {
		t.Errorf("ompi-rules.conf (%v):\n%s", err, conf)
	}
	if _, err := coll.ReadDecisionFile(filepath.Join(dir, "decision-allreduce.json")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "decision.json")); err == nil {
		t.Error("tune allreduce wrote the broadcast's decision.json")
	}
	mj, _ := os.ReadFile(filepath.Join(dir, "mpich-coll.json"))
	if !strings.Contains(string(mj), `"collective=allreduce": {`) || !strings.Contains(string(mj), "avg_msg_size") {
		t.Errorf("mpich-coll.json:\n%s", mj)
	}

	res, err := runSimCLI(t, "bench", "allreduce", "--local", "4", "--quiet", "--json", "--sizes", "4KiB", "--algorithms", "ring,binomial", "--reps", "2")
	if err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	var bb collBench
	if err := json.Unmarshal([]byte(res), &bb); err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	if bb.Collective != "allreduce" || bb.Ranks != 4 || len(bb.Series) != 2 || len(bb.Tuned) != 1 || bb.Tuned[0].Speedup != 0 {
		t.Fatalf("bench allreduce over --local 4: %+v", bb)
	}
	if _, err := runSimCLI(t, "bench", "gather", "--local", "2", "--algorithms", "ring"); err == nil {
		t.Error("ring accepted for gather")
	}
}

// TestTuneAllOneRulesFile: tune all writes the collectives it measured
// into one Open MPI rules file and one MPICH file, a decision table each;
// tune allreduce --from its bench.json decides allreduce alone.
func TestTuneAllOneRulesFile(t *testing.T) {
	dir, again := t.TempDir(), t.TempDir()
	out, err := runSimCLI(t, "tune", "all", "--collectives", "allreduce,gather,bcast", "--platform", tinyPlatform, "--out", dir, "--quiet",
		"--sizes", "1KiB,1MiB", "--reps", "2", "--algorithms", "binomial,linear,ring,rabenseifner")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	conf, _ := os.ReadFile(filepath.Join(dir, "ompi-rules.conf"))
	for _, want := range []string{"3 # number of collectives\n", "\n2 # collective id: allreduce\n", "\n7 # collective id: bcast\n", "\n9 # collective id: gather\n"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("ompi-rules.conf lacks %q:\n%s", want, conf)
		}
	}
	for _, f := range []string{"decision.json", "decision-allreduce.json", "decision-gather.json"} {
		if _, err := coll.ReadDecisionFile(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(out, "allreduce") || !strings.Contains(out, "gather") {
		t.Errorf("table without the collectives:\n%s", out)
	}
	if out, err := runSimCLI(t, "tune", "allreduce", "--from", filepath.Join(dir, "bench.json"), "--out", again); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	conf2, _ := os.ReadFile(filepath.Join(again, "ompi-rules.conf"))
	if !strings.Contains(string(conf2), "1 # number of collectives\n2 # collective id: allreduce\n") {
		t.Errorf("--from allreduce:\n%s", conf2)
	}
	_, err = runSimCLI(t, "tune", "all", "--collectives", "alltoall", "--platform", tinyPlatform, "--out", again)
	var ue *usageError
	if !errors.As(err, &ue) {
		t.Errorf("--collectives alltoall: %v, want a usage error", err)
	}
}

// TestBenchCommDefault: --comm-default measures what netaware.Comm runs by
// default with the platform's topology as its own series, next to the
// algorithms and not among the tuned choices.
func TestBenchCommDefault(t *testing.T) {
	res, err := runSimCLI(t, "bench", "allreduce", "--platform", tinyPlatform, "--quiet", "--json", "--comm-default",
		"--sizes", "1KiB,1MiB", "--algorithms", "ring,recursive-doubling", "--reps", "2")
	if err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	var bb collBench
	if err := json.Unmarshal([]byte(res), &bb); err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	if len(bb.Series) != 3 || bb.Series[2].Label != commDefaultSeries || len(bb.Tuned) != 2 {
		t.Fatalf("series %+v, tuned %+v", bb.Series, bb.Tuned)
	}
	// netaware.Comm's topology-aware choices on a topology (choose.go):
	// levels-allreduce with recursive doubling below 64 KiB, dfs-ring up
	// to 8 MiB.
	want := []string{"levels-allreduce(variant=recursive-doubling)", "dfs-ring"}
	for i, c := range bb.Tuned {
		if c.CommDefault != want[i] || c.CommDefaultS <= 0 || c.Tuned == commDefaultSeries {
			t.Errorf("%d bytes: %+v, want the default %s", c.Bytes, c, want[i])
		}
	}
	if _, err := runSimCLI(t, "bench", "allreduce", "--local", "2", "--comm-default", "--decision", "x.json"); err == nil {
		t.Error("--comm-default with --decision accepted")
	}
}

// readBenchJSON reads the bench.json a tune run wrote into dir.
func readBenchJSON(t *testing.T, dir string) tune.Report {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep tune.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}
