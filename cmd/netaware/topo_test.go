package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"netaware/platform"
	"netaware/score"
	"netaware/topo"
)

const exampleTopology = "../../topo/testdata/example.json"

// runTopoCLI runs the CLI in-process and returns its standard output.
func runTopoCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func isUsage(err error) bool {
	var ue *usageError
	return errors.As(err, &ue)
}

func TestTopoConvertEveryFormat(t *testing.T) {
	want := map[string]string{
		"json":         `"version": 1`,
		"dot":          `"s0" -- "s2" [label="2us"];`,
		"slurm":        "SwitchName=s2 Switches=s[0-1]",
		"slurm-yaml":   "- topology: netaware-block\n  cluster_default: false\n  block:\n    block_sizes:\n      - 2\n      - 4\n",
		"mpich-coords": "3: 0 1 -1",
		"lgate":        "cluster { group { 2-3 } }",
		"text":         "switch 1: 2 ranks 2-3 on b[00-01]",
	}
	for format, w := range want {
		out, err := runTopoCLI(t, "topo", "convert", exampleTopology, "--to", format)
		if err != nil {
			t.Fatalf("--to %s: %v", format, err)
		}
		if !strings.Contains(out, w) {
			t.Errorf("--to %s output lacks %q:\n%s", format, w, out)
		}
	}
}

func TestTopoConvertFormatAliases(t *testing.T) {
	for alias, format := range map[string]string{"mpich": "mpich-coords", "MPICH": "mpich-coords", "graphviz": "dot"} {
		want, err := runTopoCLI(t, "topo", "convert", exampleTopology, "--to", format)
		if err != nil {
			t.Fatal(err)
		}
		got, err := runTopoCLI(t, "topo", "convert", exampleTopology, "--to", alias)
		if err != nil || got != want {
			t.Errorf("--to %s: %v, output differs from --to %s:\n%s", alias, err, format, got)
		}
	}
	coords := filepath.Join(t.TempDir(), "coords.txt")
	if _, err := runTopoCLI(t, "topo", "convert", exampleTopology, "--to", "mpich", "-o", coords); err != nil {
		t.Fatal(err)
	}
	if _, err := runTopoCLI(t, "topo", "convert", coords, "--from", "mpich", "--to", "json"); err != nil {
		t.Errorf("--from mpich: %v", err)
	}
}

func TestTopoConvertToFileAndBack(t *testing.T) {
	dir := t.TempDir()
	lg := filepath.Join(dir, "groups.lgate")
	if _, err := runTopoCLI(t, "topo", "convert", exampleTopology, "--to", "lgate", "-o", lg); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "back.json")
	if _, err := runTopoCLI(t, "topo", "convert", lg, "--from", "lgate", "--to", "json", "-o", js); err != nil {
		t.Fatal(err)
	}
	back, err := topo.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if back.Size != 4 || len(back.Levels) != 2 {
		t.Errorf("read back %+v", back)
	}
	conf := filepath.Join(dir, "topology.conf")
	if _, err := runTopoCLI(t, "topo", "convert", exampleTopology, "--to", "slurm", "-o", conf); err != nil {
		t.Fatal(err)
	}
	out, err := runTopoCLI(t, "topo", "convert", conf, "--from", "slurm", "--hosts-from", exampleTopology, "--to", "text")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "slurm-1 0: 2 ranks 0-1 on a[00-01]") {
		t.Errorf("slurm read back:\n%s", out)
	}
	coords := filepath.Join(dir, "coords")
	if _, err := runTopoCLI(t, "topo", "convert", exampleTopology, "--to", "mpich-coords", "-o", coords); err != nil {
		t.Fatal(err)
	}
	if _, err := runTopoCLI(t, "topo", "convert", coords, "--from", "mpich-coords", "--to", "json"); err != nil {
		t.Fatal(err)
	}
}

func TestTopoCLIErrors(t *testing.T) {
	usage := [][]string{
		{"topo", "convert", exampleTopology, "--to", "xml"},
		{"topo", "convert", exampleTopology},
		{"topo", "convert", exampleTopology, "--to", "json", "--from", "yaml"},
		{"topo", "convert", exampleTopology, "--to", "json", "--from", "slurm"},
		{"topo", "show"},
		{"topo", "compare", exampleTopology},
	}
	for _, args := range usage {
		if _, err := runTopoCLI(t, args...); !isUsage(err) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"version": 1, "size": 2, "ranks": [{"rank": 0}]}`), 0o644)
	for _, args := range [][]string{
		{"topo", "show", bad},
		{"topo", "show", "/nonexistent/topology.json"},
		{"topo", "compare", exampleTopology, "--truth", "no-such-platform"},
		{"topo", "compare", exampleTopology, "--truth", "zhu-2racks"}, // 4 ranks vs 30
	} {
		_, err := runTopoCLI(t, args...)
		if err == nil || isUsage(err) {
			t.Errorf("%v: err = %v, want a failure", args, err)
		}
	}
}

// platformTree writes the platform's own network as a topology.json: its
// truth levels, and a tree of its switches with one leaf per rank (the
// platform must place one rank per host).
func platformTree(t *testing.T, p *platform.Platform) *topo.Topology {
	t.Helper()
	tp := &topo.Topology{Version: 1, Size: p.NumRanks(), Tree: &topo.Tree{}}
	for r := 0; r < p.NumRanks(); r++ {
		host, _, _ := p.RankIdentity(r)
		tp.Ranks = append(tp.Ranks, topo.Rank{Rank: r, Host: host})
	}
	tp.Levels = p.TruthLevels()
	for _, s := range p.Switches() {
		tp.Tree.Nodes = append(tp.Tree.Nodes, topo.Node{ID: "sw-" + s})
	}
	for _, l := range p.Links() {
		tp.Tree.Edges = append(tp.Tree.Edges, topo.Edge{A: "sw-" + l.A, B: "sw-" + l.B, LatencyS: l.LatencyS})
	}
	for r := 0; r < p.NumRanks(); r++ {
		h := p.Hosts()[p.RankHost(r)]
		rr := r
		id := "r-" + h.Name
		tp.Tree.Nodes = append(tp.Tree.Nodes, topo.Node{ID: id, Rank: &rr})
		tp.Tree.Edges = append(tp.Tree.Edges, topo.Edge{A: id, B: "sw-" + h.Switch, LatencyS: h.Link.LatencyS})
	}
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
	return tp
}

func compareJSON(t *testing.T, path, truth string) score.Report {
	t.Helper()
	out, err := runTopoCLI(t, "topo", "compare", path, "--truth", truth, "--json", "--queries", "3000")
	if err != nil {
		t.Fatal(err)
	}
	var rep score.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return rep
}

// TestTopoCompareTrueTreeScoresPerfect: the platform's own tree answers
// every shared-link query right and predicts every latency exactly.
func TestTopoCompareTrueTreeScoresPerfect(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	tp := platformTree(t, p)
	path := filepath.Join(t.TempDir(), "true.json")
	if err := tp.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	rep := compareJSON(t, path, "zhu-2racks")
	if len(rep.Levels) == 0 {
		t.Fatal("no level scores")
	}
	for _, s := range rep.Levels {
		if s.NMI < 1-1e-12 || s.ARI != 1 || s.Accuracy != 1 {
			t.Errorf("level %+v not perfect", s)
		}
	}
	if q := rep.LinkQueries; q == nil || q.FalsePositive != 0 || q.FalseNegative != 0 || q.TruePositive == 0 || q.TrueNegative == 0 {
		t.Errorf("undirected queries: %+v", q)
	}
	if q := rep.DirQueries; q == nil || q.FalsePositive != 0 || q.FalseNegative != 0 || q.TruePositive == 0 {
		t.Errorf("directed queries: %+v", q)
	}
	if l := rep.Latency; l == nil || l.Within5 != 1 || l.Pairs != 30*29/2 {
		t.Errorf("latency: %+v", l)
	}
	// Human output carries the same numbers.
	out, err := runTopoCLI(t, "topo", "compare", path, "--truth", "zhu-2racks", "--queries", "500")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "false positives   0.00%") || !strings.Contains(out, "within 5%: 100.0%") {
		t.Errorf("text output:\n%s", out)
	}
}

// TestTopoCompareStarTreeMissesSharedBackbone: a star (every host on one
// switch) predicts that flows between distinct hosts never share a link, so
// the cross-rack flows that share the backbone become false negatives and
// no false positive appears.
func TestTopoCompareStarTreeMissesSharedBackbone(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	tp := platformTree(t, p)
	star := &topo.Tree{Nodes: []topo.Node{{ID: "hub"}}}
	for _, n := range tp.Tree.Nodes {
		if n.Rank != nil {
			star.Nodes = append(star.Nodes, n)
			star.Edges = append(star.Edges, topo.Edge{A: n.ID, B: "hub", LatencyS: 1e-4})
		}
	}
	tp.Tree = star
	path := filepath.Join(t.TempDir(), "star.json")
	if err := tp.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	rep := compareJSON(t, path, "zhu-2racks")
	q := rep.LinkQueries
	if q.FalsePositive != 0 || q.FalseNegative == 0 || q.FalseNegativeRate != 1 {
		t.Errorf("star tree queries: %+v", q)
	}
	// Predicted 200us everywhere; true 225us across racks, 220us within.
	if l := rep.Latency; l.Within5 != 0 || l.Max > 0.91 || l.Min < 0.88 {
		t.Errorf("star latency ratios: %+v", l)
	}
}
