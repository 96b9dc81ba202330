package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"netaware/topo"
)

// A campaign on 8 of grid5000-4sites' 64 ranks (two hosts of two sites):
// cluster says it clusters those 8, lists them, finds the two sites.
func TestClusterSubsetDataset(t *testing.T) {
	dir := t.TempDir()
	ds, out := filepath.Join(dir, "d.json"), filepath.Join(dir, "t.json")
	if _, stderr, code := runCLI(t, "probe", "rtt", "--platform", "grid5000-4sites", "--ranks", "0-3,32-35", "-q", "--out", ds); code != 0 {
		t.Fatal(stderr)
	}
	stdout, stderr, code := runCLI(t, "cluster", ds, "--distance", "rtt", "--out", out, "--json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var sum clusterSummary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Ranks != 8 || sum.Params["ranks"] != "0-3,32-35" || len(sum.Notes) != 1 || !strings.Contains(sum.Notes[0], "8 of 64 ranks have measured pairs (0-3,32-35)") {
		t.Errorf("summary %+v", sum)
	}
	tp, err := topo.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Ranks[4].Host != "toulouse-01" || len(tp.Levels) < 2 || len(tp.Levels[0].Groups) != 2 {
		t.Errorf("topology ranks %+v levels %+v", tp.Ranks, tp.Levels)
	}
}

func TestClusterCSV(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("sites.csv", ",a,b,c,d\na,,1,,\nb,1,,,\nc,,,,2\nd,,,2,\n")
	out := filepath.Join(dir, "t.json")
	stdout, stderr, code := runCLI(t, "cluster", good, "--out", out)
	if code != 0 || !strings.Contains(stdout, "note: 4 of 6 pairs not measured: ECO") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	tp, err := topo.ReadFile(out)
	if err != nil || tp.Ranks[2].Host != "c" || len(tp.Levels[0].Groups) != 2 {
		t.Errorf("%v %+v", err, tp)
	}
	if _, stderr, code := runCLI(t, "cluster", good, "--algorithm", "kmedoids", "--out", out); code != 1 || !strings.Contains(stderr, "kmedoids needs every pair measured and 4 of the 6 pairs are not") {
		t.Errorf("kmedoids on holes: exit %d %s", code, stderr)
	}
	bad := write("bad.csv", ",a,b\na,,1\nb,x1,\n")
	if _, stderr, code := runCLI(t, "cluster", bad, "--out", out); code != 1 || !strings.Contains(stderr, "bad.csv: csv: line 3, column 3: \"x1\" is not a number") {
		t.Errorf("bad cell: exit %d %s", code, stderr)
	}
	if _, _, code := runCLI(t, "cluster", good, "--distance", "rtt", "--out", out); code != 2 {
		t.Errorf("--distance rtt on a CSV: exit %d, want 2", code)
	}
	bw := write("bw.csv", ",n1,n2,n3,n4\nn1,,900,90,90\nn2,900,,90,90\nn3,90,90,,900\nn4,90,90,900,\n")
	if stdout, stderr, code := runCLI(t, "cluster", bw, "--distance", "bandwidth", "--algorithm", "louvain", "--out", out, "--json"); code != 0 || !strings.Contains(stdout, `"distance": "bandwidth"`) {
		t.Errorf("bandwidth csv: exit %d %s %s", code, stdout, stderr)
	}
	if tp, err := topo.ReadFile(out); err != nil || len(tp.Levels[0].Groups) != 2 {
		t.Errorf("bandwidth csv levels: %v %+v", err, tp)
	}
}

// Seed 003 Eq. 3.5's feature vectors over the ranks a PLogP campaign
// measured (2 hosts of Bordeaux, 2 of Toulouse): the two sites.
func TestClusterSubsetFeatures(t *testing.T) {
	dir := t.TempDir()
	ds, out := filepath.Join(dir, "d.json"), filepath.Join(dir, "t.json")
	if _, stderr, code := runCLI(t, "probe", "plogp", "--platform", "grid5000-4sites", "--ranks", "0-1,32-33", "--reps", "4", "--max-size", "16", "--max-extra", "0", "--sat-max", "320", "-q", "--out", ds); code != 0 {
		t.Fatal(stderr)
	}
	if _, stderr, code := runCLI(t, "cluster", ds, "--distance", "features", "--out", out); code != 0 {
		t.Fatal(stderr)
	}
	tp, err := topo.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range tp.Levels {
		found = found || fmt.Sprint(l.Groups) == "[[0 1] [2 3]]"
	}
	if tp.Size != 4 || !found {
		t.Errorf("levels %+v", tp.Levels)
	}
}
