package main

import (
	"encoding/json"
	"path/filepath"
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
