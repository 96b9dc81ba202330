package main

import (
	"path/filepath"
	"strings"
	"testing"

	"netaware/cluster"
	"netaware/metrics"
	"netaware/platform"
	"netaware/score"
	"netaware/topo"
)

const twoSwitches = "testdata/infer-2switches.yaml"

func switchTruth(t *testing.T) (topo.Level, int) {
	t.Helper()
	p, err := platform.Load(twoSwitches)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range p.Truth() {
		if l.Name == "switch" {
			return topo.Level{Name: l.Name, Groups: l.Groups}, p.NumRanks()
		}
	}
	t.Fatal("no switch level")
	return topo.Level{}, 0
}

func hasLevel(t *testing.T, levels []topo.Level, want topo.Level, n int) bool {
	t.Helper()
	for _, l := range levels {
		if v, err := metrics.NMIGroups(l.Groups, want.Groups, n); err == nil && v > 1-1e-12 {
			return true
		}
	}
	return false
}

// TestInferCommandTreeAndBandwidth: netaware infer on a simulated platform
// writes a valid topology whose tree carries bandwidths and whose levels
// hold the two switches, found both by latency and by the slow links.
func TestInferCommandTreeAndBandwidth(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.json")
	stdout, err := runTopoCLI(t, "infer", "--platform", twoSwitches, "--bandwidth", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "virtual time") || !strings.Contains(stdout, "bandwidth map:") {
		t.Errorf("summary lacks times or the map:\n%s", stdout)
	}
	tp, err := topo.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	truth, n := switchTruth(t)
	if !hasLevel(t, tp.Levels, truth, n) {
		t.Errorf("levels %+v miss the two switches", tp.Levels)
	}
	slow := 0
	for _, e := range tp.Tree.Edges {
		if e.Bandwidth == nil {
			t.Fatalf("edge %s-%s has no bandwidth", e.A, e.B)
		}
		if *e.Bandwidth < 20e6 {
			slow++
		}
	}
	if slow == 0 {
		t.Error("no edge labelled with the 100 Mbps links")
	}
	found := false
	for _, l := range tp.Levels {
		found = found || strings.Contains(l.Name, "bandwidth-cluster")
	}
	if !found {
		t.Error("no bandwidth-cluster level")
	}
}

func TestInferCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{"infer", "--platform", twoSwitches, "--bandwidth-bytes", "0"},
		{"infer", "--platform", twoSwitches, "--slow-ratio", "1"},
		{"infer", "extra"},
	} {
		if _, err := runTopoCLI(t, args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestClusterCommandEveryAlgorithm: from an RTT dataset of the two-switch
// platform, every algorithm runs without a cluster count and writes a
// valid topology; agglomerative and auto find the two switches.
func TestClusterCommandEveryAlgorithm(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "d.json")
	if _, err := runTopoCLI(t, "probe", "rtt", "--platform", twoSwitches, "-q", "--out", ds); err != nil {
		t.Fatal(err)
	}
	truth, n := switchTruth(t)
	for _, algo := range cluster.Algorithms {
		out := filepath.Join(dir, algo+".json")
		if _, err := runTopoCLI(t, "cluster", ds, "--distance", "rtt", "--algorithm", algo, "--out", out); err != nil {
			t.Errorf("%s: %v", algo, err)
			continue
		}
		tp, err := topo.ReadFile(out)
		if err != nil {
			t.Errorf("%s: %v", algo, err)
			continue
		}
		if (algo == "auto" || algo == "agglomerative") && !hasLevel(t, tp.Levels, truth, n) {
			t.Errorf("%s: levels %+v miss the two switches", algo, tp.Levels)
		}
	}
	for _, args := range [][]string{
		{"cluster", ds, "--algorithm", "kmeans"},
		{"cluster", ds, "--distance", "hops"},
		{"cluster", ds, "--distance", "plogp"}, // no plogp section
		{"cluster", ds, "--steps", "1"},
	} {
		_, err := runTopoCLI(t, args...)
		if err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestShiraiLiveAcceptance: issue 5's acceptance on shirai-4clusters with
// the live protocol in the simulator (platform noise, its seed):
// fewer than 15% of the pairs measured, no false negative and under 5%
// false positives on shared-link queries, 95% of the latencies within 5%.
func TestShiraiLiveAcceptance(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.json")
	if _, err := runTopoCLI(t, "infer", "--platform", "shirai-4clusters", "--out", out); err != nil {
		t.Fatal(err)
	}
	tp, err := topo.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := score.LoadTruth("shirai-4clusters")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := score.Compare(tp, out, truth, score.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	m, q, l := tp.Measurements, rep.LinkQueries, rep.Latency
	if m == nil || q == nil || l == nil {
		t.Fatalf("missing figures: measurements %v, queries %v, latency %v", m, q, l)
	}
	t.Logf("pairs %d of %d; FN %.4f FP %.4f; within 5%% %.4f", m.PairsMeasured, m.PairsTotal, q.FalseNegativeRate, q.FalsePositiveRate, l.Within5)
	if m.PairsTotal != 32640 || float64(m.PairsMeasured) >= 0.15*float64(m.PairsTotal) {
		t.Errorf("%d of %d pairs measured, want under 15%%", m.PairsMeasured, m.PairsTotal)
	}
	if q.FalseNegativeRate != 0 || q.FalsePositiveRate >= 0.05 {
		t.Errorf("shared-link queries: FN %.4f (want 0), FP %.4f (want < 0.05)", q.FalseNegativeRate, q.FalsePositiveRate)
	}
	if l.Within5 < 0.95 {
		t.Errorf("latencies within 5%%: %.4f, want >= 0.95", l.Within5)
	}
}
