package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rttDataset measures the RTT of every pair of the two-switch test platform
// into a fresh dataset and returns its path.
func rttDataset(t *testing.T) string {
	t.Helper()
	ds := filepath.Join(t.TempDir(), "d.json")
	if _, stderr, code := runCLI(t, "probe", "rtt", "--platform", twoSwitches, "-q", "--out", ds); code != exitOK {
		t.Fatalf("probe rtt: exit %d: %s", code, stderr)
	}
	return ds
}

// TestClusterPrintsTableAndJSON: cluster prints a table (it printed a raw Go
// map) and, with --json, the same summary as JSON, naming the file written.
func TestClusterPrintsTableAndJSON(t *testing.T) {
	ds := rttDataset(t)
	out := filepath.Join(t.TempDir(), "topology.json")
	stdout, stderr, code := runCLI(t, "cluster", ds, "--distance", "rtt", "--algorithm", "agglomerative", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"method agglomerative\n", "parameters: distance=rtt  linkage=average  min_jump=0.05\n",
		"LEVEL", "GROUPS", "wrote " + out + "\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "map[") {
		t.Errorf("output prints a Go map:\n%s", stdout)
	}
	stdout, stderr, code = runCLI(t, "cluster", ds, "--distance", "rtt", "--algorithm", "agglomerative", "--out", out, "--json")
	var sum clusterSummary
	if err := json.Unmarshal([]byte(stdout), &sum); code != exitOK || err != nil {
		t.Fatalf("exit %d, %v: %s%s", code, err, stdout, stderr)
	}
	last := sum.Levels[len(sum.Levels)-1]
	if sum.Ranks != 8 || sum.Method != "agglomerative" || sum.Params["linkage"] != "average" || sum.TopologyFile != out ||
		last.Groups != 1 || last.MinSize != 8 || last.MaxSize != 8 {
		t.Errorf("summary %+v", sum)
	}
}

// TestJSONEverywhere: every command that prints a table prints JSON with
// --json, on stdout alone (notices and progress go to stderr), and the
// JSON says the same as the run: ranks, levels, files written.
func TestJSONEverywhere(t *testing.T) {
	dir := t.TempDir()
	decode := func(t *testing.T, v any, args ...string) {
		t.Helper()
		stdout, stderr, code := runCLI(t, append(args, "--json")...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		dec := json.NewDecoder(strings.NewReader(stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%v --json: %v\n%s", args, err, stdout)
		}
		if dec.More() {
			t.Fatalf("%v --json: more than one JSON value:\n%s", args, stdout)
		}
	}
	t.Run("discover", func(t *testing.T) {
		out := filepath.Join(dir, "disc")
		var s discoverSummary
		decode(t, &s, "discover", "--platform", twoSwitches, "--level", "fast", "--blind", "--out", out)
		if s.Ranks != 8 || s.Dir != out || len(s.Levels) < 2 || s.Levels[len(s.Levels)-1].Groups != 1 || s.PairsMeasured < 1 ||
			!slices.Contains(s.Files, "topology.json") || !slices.Contains(s.Files, "dataset.json") {
			t.Errorf("summary %+v", s)
		}
	})
	t.Run("infer", func(t *testing.T) {
		out := filepath.Join(dir, "infer.json")
		var s inferSummary
		decode(t, &s, "infer", "--platform", twoSwitches, "--out", out)
		if s.Ranks != 8 || s.TopologyFile != out || s.TreeSwitches < 1 || s.PairsTotal != 28 || s.VirtualTimeS <= 0 {
			t.Errorf("summary %+v", s)
		}
	})
	t.Run("tune", func(t *testing.T) {
		out := filepath.Join(dir, "tuned")
		var s tuneSummary
		decode(t, &s, "tune", "bcast", "--platform", twoSwitches, "--sizes", "1,64KiB", "--algorithms", "binomial", "--reps", "1", "--quiet", "--out", out)
		if s.Ranks != 8 || len(s.Choices) != 2 || s.Choices[1].Bytes != 64<<10 || len(s.Files) < 2 || !strings.HasPrefix(s.Files[0], out) {
			t.Errorf("summary %+v", s)
		}
	})
	t.Run("platform show", func(t *testing.T) {
		var s platformSummary
		decode(t, &s, "platform", "show", "zhu-2racks")
		if s.Hosts != 30 || s.Ranks != 30 || len(s.SwitchLinks) != 1 || s.SwitchLinks[0].Link.BandwidthBps != 1.25e9 ||
			s.Routes.LatencyMaxS != 225e-6 || len(s.Truth) != 3 || s.Truth[1].Sizes != "2x15" {
			t.Errorf("summary %+v", s)
		}
	})
	t.Run("topo show", func(t *testing.T) {
		var s topoSummary
		decode(t, &s, "topo", "show", exampleTopology)
		if s.Ranks != 4 || s.File != exampleTopology || len(s.Levels) == 0 {
			t.Errorf("summary %+v", s)
		}
	})
}
