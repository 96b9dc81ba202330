package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbeSwarmTruthCurve: --truth scores every iteration's hierarchy
// against the platform's ground truth, the same after the run and from the
// dataset with --show; a truth of another size is a usage error.
func TestProbeSwarmTruthCurve(t *testing.T) {
	plat := filepath.Join("..", "..", "emu", "testdata", "zero-latency-split.yaml")
	out := filepath.Join(t.TempDir(), "ds.json")
	run, stderr, code := runCLI(t, "probe", "swarm", "-q", "--platform", plat, "--size", "1MiB", "--iterations", "2",
		"--stable-iterations", "9", "--out", out, "--truth", plat)
	if code != exitOK {
		t.Fatalf("probe swarm: exit %d: %s", code, stderr)
	}
	if !strings.Contains(run, "against "+plat) || !strings.Contains(run, "bandwidth-cluster") {
		t.Fatalf("no truth table in:\n%s", run)
	}
	shown, stderr, code := runCLI(t, "probe", "swarm", "--show", "--out", out, "--truth", plat)
	if code != exitOK {
		t.Fatalf("--show: exit %d: %s", code, stderr)
	}
	tail := func(s string) string { return s[strings.Index(s, "against "):] }
	if tail(shown) != tail(run) {
		t.Fatalf("--show's truth table differs from the run's:\n%s\nvs\n%s", tail(shown), tail(run))
	}
	js, stderr, code := runCLI(t, "probe", "swarm", "--show", "--json", "--out", out, "--truth", plat)
	if code != exitOK {
		t.Fatalf("--show --json: exit %d: %s", code, stderr)
	}
	var v swarmTruthJSON
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatal(err)
	}
	if v.Swarm == nil || len(v.Truth) != len(v.Swarm.Iterations) || len(v.Truth) != 2 {
		t.Fatalf("json: %d truth rows for %d iterations", len(v.Truth), len(v.Swarm.Iterations))
	}
	rows := strings.Split(strings.TrimSpace(tail(run)), "\n")[2:]
	for k, scores := range v.Truth {
		var want []string
		for _, s := range scores {
			if s.NMI < 0 || s.NMI > 1 {
				t.Fatalf("iteration %d, level %s: NMI %v", k+1, s.Truth, s.NMI)
			}
			want = append(want, fmt.Sprintf("%.3f", s.NMI))
		}
		if got := strings.Fields(rows[k]); strings.Join(got[1:], " ") != strings.Join(want, " ") {
			t.Fatalf("iteration %d: table %q, json %q", k+1, got[1:], want)
		}
	}
	if _, _, code := runCLI(t, "probe", "swarm", "--show", "--out", out, "--truth", "zhu-2racks"); code != exitUsage {
		t.Fatalf("--truth of another size: exit %d, want %d", code, exitUsage)
	}
}
