package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"netaware/cluster"
	"netaware/dataset"
	"netaware/report"
	"netaware/topo"
)

// discoverDir makes a discovery directory the slow way discover will do it
// fast: RTTs of zhu-2racks by 'probe rtt', levels by agglomerative cuts.
func discoverDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ds := filepath.Join(dir, "dataset.json")
	if _, err := runTopoCLI(t, "probe", "rtt", "--platform", "zhu-2racks", "-q", "--out", ds); err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Load(ds)
	if err != nil {
		t.Fatal(err)
	}
	dist, err := report.DistanceFromDataset(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	levels, err := cluster.LevelsFromDistances(dist.M, cluster.AverageLinkage, cluster.DefaultGapOptions())
	if err != nil {
		t.Fatal(err)
	}
	n := d.World.Size
	tp := &topo.Topology{Version: topo.Version, Size: n, Levels: levels, Method: &topo.Method{Name: "agglomerative", Params: map[string]any{"linkage": "average"}}}
	for r := 0; r < n; r++ {
		tp.Ranks = append(tp.Ranks, topo.Rank{Rank: r})
	}
	if err := tp.WriteFile(filepath.Join(dir, "topology.json")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReportCommand(t *testing.T) {
	dir := discoverDir(t)
	out, err := runTopoCLI(t, "report", dir, "--date", "2026-11-21")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.html", "tree.svg", "heatmap.png", "heatmap.svg", "dendrogram.png", "dendrogram.svg"} {
		p := filepath.Join(dir, f)
		if !strings.Contains(out, p+"\n") {
			t.Errorf("output does not list %s:\n%s", p, out)
		}
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", p, err)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	// The dataset's own platform is the truth by default.
	for _, s := range []string{"2026-11-21", `<section id="accuracy">`, "platform zhu-2racks", "RTT ping-pong"} {
		if !strings.Contains(string(page), s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if _, err := runTopoCLI(t, "report", dir, "--truth", "none", "--date", "x"); err != nil {
		t.Fatal(err)
	}
	page, _ = os.ReadFile(filepath.Join(dir, "report.html"))
	if strings.Contains(string(page), `<section id="accuracy">`) {
		t.Error("--truth none still has an accuracy section")
	}
	// A truth of the wrong size is refused, naming both sizes.
	if _, err := runTopoCLI(t, "report", dir, "--truth", "fram-like"); err == nil || !strings.Contains(err.Error(), "512") {
		t.Errorf("fram-like truth for 30 ranks: %v", err)
	}
}

func TestReportCommandBadInput(t *testing.T) {
	if _, err := runTopoCLI(t, "report", filepath.Join(t.TempDir(), "missing")); !isUsage(err) {
		t.Errorf("missing directory: %v, want a usage error", err)
	}
	if _, err := runTopoCLI(t, "report"); !isUsage(err) {
		t.Errorf("no argument: %v, want a usage error", err)
	}
	dir := t.TempDir()
	if _, err := runTopoCLI(t, "report", dir); err == nil || !strings.Contains(err.Error(), "topology.json") {
		t.Errorf("empty directory: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "topology.json"), []byte(`{"version": 1, "size": 2, "ranks": [{"rank": 0}, {"rank": 1}], "levels": [{"name":"all","groups":[[0,1]]}]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "dataset.json"), []byte(`{"version": 1, "world": {"size": 2}, "rtt": {"pairs": [{"a": 0, "b": 7}]}}`), 0o644)
	if _, err := runTopoCLI(t, "report", dir); err == nil || !strings.Contains(err.Error(), "dataset.json") {
		t.Errorf("bad dataset: %v", err)
	}
}

// TestReportDirRebuildsDiscoversReport: 'netaware report DIR' on a
// discovery directory gives discover's own report, byte for byte but the
// date: the same title, matrix, dendrogram, cuts and numbers (blind, so
// that every rank is clustered and the dendrogram is the levels' own).
func TestReportDirRebuildsDiscoversReport(t *testing.T) {
	dir := t.TempDir()
	if _, err := runTopoCLI(t, "discover", "--platform", "zhu-2racks", "--blind", "-q", "--out", dir); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, report.HierarchyFileName)); err != nil {
		t.Fatalf("discover did not keep its dendrogram: %v", err)
	}
	date := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d UTC`).Find(first)
	if date == nil {
		t.Fatal("discover's report has no date")
	}
	if _, err := runTopoCLI(t, "report", dir, "--date", string(date)); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(again) {
		a, b := string(first), string(again)
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		t.Fatalf("report DIR differs from discover's report at byte %d:\ndiscover: %.300s\nreport:   %.300s", i, a[max(0, i-100):], b[max(0, i-100):])
	}
}
