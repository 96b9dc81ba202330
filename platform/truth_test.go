package platform

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"netaware/topo"
)

func levelSummary(ls []Level) string {
	s := ""
	for _, l := range ls {
		sizes := map[int]int{}
		for _, g := range l.Groups {
			sizes[len(g)]++
		}
		s += fmt.Sprintf("%s:%d%v ", l.Name, len(l.Groups), sizes)
	}
	return s
}

func checkLevels(t *testing.T, p *Platform, ls []Level) {
	t.Helper()
	n := p.NumRanks()
	for i, l := range ls {
		seen := make([]bool, n)
		for gi, g := range l.Groups {
			if !slices.IsSorted(g) || (gi > 0 && l.Groups[gi-1][0] >= g[0]) {
				t.Errorf("level %s: groups not canonical", l.Name)
			}
			for _, r := range g {
				if seen[r] {
					t.Errorf("level %s: rank %d twice", l.Name, r)
				}
				seen[r] = true
			}
		}
		for r, ok := range seen {
			if !ok {
				t.Errorf("level %s: rank %d missing", l.Name, r)
			}
		}
		if i > 0 && !refines(ls[i-1].Groups, l.Groups, n) {
			t.Errorf("level %s does not coarsen %s", l.Name, ls[i-1].Name)
		}
		if i > 0 && topo.EqualGroups(ls[i-1].Groups, l.Groups) {
			t.Errorf("levels %s and %s identical", ls[i-1].Name, l.Name)
		}
	}
	if last := ls[len(ls)-1]; last.Name != "all" || len(last.Groups) != 1 {
		t.Errorf("last level %s with %d groups", last.Name, len(last.Groups))
	}
}

func TestExampleTruth(t *testing.T) {
	p := loadExample(t)
	ls := p.Truth()
	checkLevels(t, p, ls)
	if got, want := levelSummary(ls), "host:30map[1:30] switch:2map[15:2] all:1map[30:1] "; got != want {
		t.Errorf("per_host 1: %s, want %s", got, want)
	}
	// Hand-worked: with a rank per core, a00 holds ranks 0-11, socket 0 is 0-5.
	q := p.WithRanks(PerHostCores, OrderBlock)
	ls = q.Truth()
	checkLevels(t, q, ls)
	if got, want := levelSummary(ls), "socket:60map[6:60] host:30map[12:30] switch:2map[180:2] all:1map[360:1] "; got != want {
		t.Errorf("per_host cores: %s, want %s", got, want)
	}
	if !slices.Equal(ls[0].Groups[0], []int{0, 1, 2, 3, 4, 5}) || !slices.Equal(ls[0].Groups[1], []int{6, 7, 8, 9, 10, 11}) {
		t.Errorf("socket groups start %v %v", ls[0].Groups[0], ls[0].Groups[1])
	}
	// Cyclic: host a00 holds ranks 0, 30, 60, ...
	c := p.WithRanks(PerHostCores, OrderCyclic)
	ls = c.Truth()
	checkLevels(t, c, ls)
	if g := ls[1].Groups[0]; ls[1].Name != "host" || g[0] != 0 || g[1] != 30 || g[11] != 330 {
		t.Errorf("cyclic host group %v", g)
	}
}

// The docs/platform-format.md truth snippet, added to the docs/platform-format.md example: its
// bandwidth-cluster level splits rack B, so the switch level, which cuts
// across it, is dropped.
func TestExampleTruthSnippet(t *testing.T) {
	ex, _ := os.ReadFile("testdata/example.yaml")
	sn, _ := os.ReadFile("testdata/truth-snippet.yaml")
	p := mustParse(t, "example.yaml", string(ex)+string(sn))
	ls := p.Truth()
	checkLevels(t, p, ls)
	if got, want := levelSummary(ls), "host:30map[1:30] bandwidth-cluster:2map[10:1 20:1] all:1map[30:1] "; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	if want := []int{15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29}[5:]; !slices.Equal(ls[1].Groups[1], want) {
		t.Errorf("second bandwidth cluster %v, want %v", ls[1].Groups[1], want)
	}
}

func TestTruthTreeLevels(t *testing.T) {
	// A binary tree of 7 switches, 2 hosts on each leaf; the middle level
	// (l, r) groups 4 hosts, the root all 8.
	src := `version: 1
switches: [root, l, r, ll, lr, rl, rr]
links:
  - {between: [root, l], bandwidth: 1Gbps, latency: 1us}
  - {between: [root, r], bandwidth: 1Gbps, latency: 1us}
  - {between: [l, ll], bandwidth: 1Gbps, latency: 1us}
  - {between: [l, lr], bandwidth: 1Gbps, latency: 1us}
  - {between: [r, rl], bandwidth: 1Gbps, latency: 1us}
  - {between: [r, rr], bandwidth: 1Gbps, latency: 1us}
hosts:
  - {names: "a[1-2]", switch: ll, link: {bandwidth: 1Gbps, latency: 1us}}
  - {names: "b[1-2]", switch: lr, link: {bandwidth: 1Gbps, latency: 1us}}
  - {names: "c[1-2]", switch: rl, link: {bandwidth: 1Gbps, latency: 1us}}
  - {names: "d[1-2]", switch: rr, link: {bandwidth: 1Gbps, latency: 1us}}
  - {names: "e1", switch: l, link: {bandwidth: 1Gbps, latency: 1us}}
`
	p := mustParse(t, "tree.yaml", src)
	ls := p.Truth()
	checkLevels(t, p, ls)
	want := []Level{
		{"host", [][]int{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}}},
		{"switch", [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8}}},
		{"tree-1", [][]int{{0, 1, 2, 3, 8}, {4, 5, 6, 7}}},
		{"all", [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8}}},
	}
	if fmt.Sprint(ls) != fmt.Sprint(want) {
		t.Errorf("levels\n%v\nwant\n%v", ls, want)
	}
}

func TestTruthLevelsThatCrossAreRejected(t *testing.T) {
	ex, _ := os.ReadFile("testdata/example.yaml")
	src := string(ex) + `truth:
  - {name: one, groups: [["a[00-14]", "b[00-04]"], ["b[05-14]"]]}
  - {name: two, groups: [["a[00-04]"], ["a[05-14]", "b[00-14]"]]}
`
	if _, err := Parse("x.yaml", []byte(src)); err == nil {
		t.Error("crossing truth levels accepted")
	}
	src = string(ex) + `truth:
  - {name: one, groups: [["a[00-14]", "b[00-04]"]]}
`
	if _, err := Parse("x.yaml", []byte(src)); err == nil {
		t.Error("truth level missing hosts accepted")
	}
}

// A ring of four switches is not a tree: the truth uses the routing tree
// from the root. All switches are 2 links from the farthest one and equally
// far in latency, so the root is s1 by name; s3 is reached through s2
// (s1,s2,s3 sorts before s1,s4,s3), so s2 and s3 merge first.
func TestTruthRingUsesRoutingTree(t *testing.T) {
	src := `version: 1
switches: [s1, s2, s3, s4]
links:
  - {between: [s1, s2], bandwidth: 1Gbps, latency: 1us}
  - {between: [s2, s3], bandwidth: 1Gbps, latency: 1us}
  - {between: [s3, s4], bandwidth: 1Gbps, latency: 1us}
  - {between: [s4, s1], bandwidth: 1Gbps, latency: 1us}
hosts:
  - {names: h1, switch: s1, link: {bandwidth: 1Gbps, latency: 1us}}
  - {names: h2, switch: s2, link: {bandwidth: 1Gbps, latency: 1us}}
  - {names: h3, switch: s3, link: {bandwidth: 1Gbps, latency: 1us}}
  - {names: h4, switch: s4, link: {bandwidth: 1Gbps, latency: 1us}}
`
	p := mustParse(t, "ring.yaml", src)
	ls := p.Truth()
	checkLevels(t, p, ls)
	want := []Level{
		{"switch", [][]int{{0}, {1}, {2}, {3}}},
		{"tree-1", [][]int{{0}, {1, 2}, {3}}},
		{"all", [][]int{{0, 1, 2, 3}}},
	}
	if fmt.Sprint(ls) != fmt.Sprint(want) {
		t.Errorf("levels\n%v\nwant\n%v", ls, want)
	}
}
