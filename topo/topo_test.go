package topo

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func loadExample(t testing.TB) *Topology {
	t.Helper()
	tp, err := ReadFile("testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// TestReadTopologyMDExample reads the example printed in docs/topology-format.md.
func TestReadTopologyMDExample(t *testing.T) {
	tp := loadExample(t)
	if tp.Size != 4 || len(tp.Ranks) != 4 || len(tp.Levels) != 3 {
		t.Fatalf("got size %d, %d ranks, %d levels", tp.Size, len(tp.Ranks), len(tp.Levels))
	}
	if tp.Ranks[0].Host != "a00" || tp.Ranks[0].Core == nil || *tp.Ranks[0].Core != 0 || tp.Ranks[1].Core != nil {
		t.Errorf("rank hints wrong: %+v %+v", tp.Ranks[0], tp.Ranks[1])
	}
	if got := tp.Levels[1].Groups; !reflect.DeepEqual(got, [][]int{{0, 1}, {2, 3}}) {
		t.Errorf("switch level = %v", got)
	}
	if tp.Tree == nil || len(tp.Tree.Nodes) != 7 || len(tp.Tree.Edges) != 6 {
		t.Fatalf("tree not read: %+v", tp.Tree)
	}
	if b := tp.Tree.Edges[0].Bandwidth; b == nil || *b != 1.25e8 {
		t.Errorf("edge 0 bandwidth = %v", b)
	}
	if tp.Tree.Edges[1].Bandwidth != nil {
		t.Errorf("edge 1 bandwidth should be absent")
	}
	if tp.Method.Name != "rtt-tree+agglomerative" || tp.Method.Params["linkage"] != "average" {
		t.Errorf("method = %+v", tp.Method)
	}
	if tp.Measurements.PairsMeasured != 5 || tp.Measurements.WallTimeS != 0.4 {
		t.Errorf("measurements = %+v", tp.Measurements)
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	tp := loadExample(t)
	var buf bytes.Buffer
	if err := tp.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Read(&buf)
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(tp, back) {
		t.Errorf("round trip changed the topology:\n%+v\n%+v", tp, back)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "topology.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	tp := loadExample(t)
	if err := tp.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
	// An invalid topology must leave the old file alone.
	tp.Size = 7
	if err := tp.WriteFile(path); err == nil {
		t.Fatal("writing an invalid topology succeeded")
	}
	if _, err := ReadFile(path); err != nil {
		t.Errorf("old file damaged: %v", err)
	}
}

func TestReadToleratesUnknownFields(t *testing.T) {
	data, _ := os.ReadFile("testdata/example.json")
	s := strings.Replace(string(data), `"size": 4,`, `"size": 4, "future_field": {"x": [1,2]},`, 1)
	s = strings.Replace(s, `{"rank": 1, "host": "a01"}`, `{"rank": 1, "host": "a01", "numa": 3}`, 1)
	if _, err := Parse([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

func TestReadErrorsNameLineAndProblem(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"syntax":   {"{\n  \"version\": 1,\n  \"size\": ,\n}", "line 3"},
		"type":     {`{"version": 1, "size": "four"}`, "line 1"},
		"trailing": {`{"version":1,"size":1,"ranks":[{"rank":0}],"levels":[]} {}`, "after the JSON"},
		"truncate": {`{"version":1,"size":1,`, "truncated"},
		"version":  {`{"version":2,"size":1,"ranks":[{"rank":0}],"levels":[]}`, "version 2"},
	}
	for name, c := range cases {
		_, err := Parse([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want mention of %q", name, err, c.want)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Topology)
		want   string
	}{
		{"rank order", func(tp *Topology) { tp.Ranks[1].Rank = 2 }, "ranks[1] is rank 2"},
		{"missing rank entry", func(tp *Topology) { tp.Ranks = tp.Ranks[:3] }, "3 rank entries"},
		{"rank missing from level", func(tp *Topology) { tp.Levels[1].Groups = [][]int{{0, 1}, {2}} }, `level 1 "switch": rank 3 is in no group`},
		{"rank twice", func(tp *Topology) { tp.Levels[1].Groups = [][]int{{0, 1, 2}, {2, 3}} }, "rank 2 is in group 0 and group 1"},
		{"unsorted group", func(tp *Topology) { tp.Levels[1].Groups = [][]int{{1, 0}, {2, 3}} }, "group 0: not sorted"},
		{"empty group", func(tp *Topology) { tp.Levels[1].Groups = [][]int{{0, 1}, {}, {2, 3}} }, "group 1 is empty"},
		{"out of range", func(tp *Topology) { tp.Levels[0].Groups[3] = []int{4} }, "rank 4 out of range"},
		{"coarsest first", func(tp *Topology) {
			tp.Levels[0], tp.Levels[2] = tp.Levels[2], tp.Levels[0]
		}, "not a coarsening"},
		{"crossing levels", func(tp *Topology) {
			tp.Levels[1].Groups = [][]int{{0, 2}, {1, 3}}
			tp.Levels = append(tp.Levels[:2], Level{Name: "x", Groups: [][]int{{0, 1}, {2, 3}}}, tp.Levels[2])
		}, `level 2 "x" is not a coarsening of level 1 "switch": ranks 0 and 2`},
		{"edge to nowhere", func(tp *Topology) { tp.Tree.Edges[5].B = "s9" }, `no node "s9"`},
		{"negative latency", func(tp *Topology) { tp.Tree.Edges[2].LatencyS = -1 }, "edge 2 r2-s1: latency_s -1"},
		{"NaN latency", func(tp *Topology) { tp.Tree.Edges[2].LatencyS = math.NaN() }, "latency_s NaN"},
		{"zero bandwidth", func(tp *Topology) { z := 0.0; tp.Tree.Edges[2].Bandwidth = &z }, "bandwidth_Bps 0"},
		{"duplicate id", func(tp *Topology) { tp.Tree.Nodes[5].ID = "s0" }, `node id "s0" appears twice`},
		{"rank without node", func(tp *Topology) { tp.Tree.Nodes[3].Rank = nil }, "rank 3 has no node"},
		{"rank twice in tree", func(tp *Topology) { two := 2; tp.Tree.Nodes[3].Rank = &two }, `rank 2 is on nodes "r2" and "r3"`},
		{"cycle", func(tp *Topology) {
			tp.Tree.Edges[5] = Edge{A: "s0", B: "s1"}
			tp.Tree.Edges = append(tp.Tree.Edges, Edge{A: "s0", B: "s1"})
			tp.Tree.Nodes = append(tp.Tree.Nodes, Node{ID: "s3"})
		}, "closes a cycle"},
		{"disconnected", func(tp *Topology) { tp.Tree.Edges = tp.Tree.Edges[:5] }, "7 nodes and 5 edges"},
		{"rank not a leaf", func(tp *Topology) {
			// Hang switch s2 under rank 3 instead of s1: r3 gets degree 2.
			tp.Tree.Edges[5] = Edge{A: "r3", B: "s2"}
		}, `rank node "r3" has 2 edges`},
		{"switch leaf", func(tp *Topology) {
			tp.Tree.Nodes = append(tp.Tree.Nodes, Node{ID: "s9"})
			tp.Tree.Edges = append(tp.Tree.Edges, Edge{A: "s2", B: "s9"})
		}, `switch node "s9" has 1 edge`},
		{"bad size", func(tp *Topology) { tp.Size = 0; tp.Ranks = nil }, "size 0"},
		{"negative core", func(tp *Topology) { c := -1; tp.Ranks[2].Core = &c }, "rank 2: core -1"},
	}
	for _, c := range cases {
		tp := loadExample(t)
		c.mutate(tp)
		err := tp.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want mention of %q", c.name, err, c.want)
		}
	}
}

func TestValidateSingleRank(t *testing.T) {
	zero := 0
	tp := &Topology{Version: 1, Size: 1, Ranks: []Rank{{Rank: 0}},
		Levels: []Level{{Name: "all", Groups: [][]int{{0}}}},
		Tree:   &Tree{Nodes: []Node{{ID: "r0", Rank: &zero}}}}
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err := tp.Paths()
	if err != nil {
		t.Fatal(err)
	}
	if es, _ := p.PathEdges(0, 0); len(es) != 0 {
		t.Errorf("path 0->0 = %v", es)
	}
}

func TestLevelAndGroupLookups(t *testing.T) {
	tp := loadExample(t)
	if l := tp.LevelOf("switch"); l == nil || len(l.Groups) != 2 {
		t.Fatalf("LevelOf(switch) = %v", l)
	}
	if tp.LevelOf("rack") != nil {
		t.Error("LevelOf(rack) found something")
	}
	if g, err := tp.GroupOf("switch", 3); err != nil || g != 1 {
		t.Errorf("GroupOf(switch,3) = %d, %v", g, err)
	}
	if _, err := tp.GroupOf("rack", 0); err == nil || !strings.Contains(err.Error(), `"rack"`) {
		t.Errorf("GroupOf(rack) err = %v", err)
	}
	if _, err := tp.GroupOf("switch", 9); err == nil || !strings.Contains(err.Error(), "rank 9") {
		t.Errorf("GroupOf(switch,9) err = %v", err)
	}
	if got := tp.Levels[1].Labels(4); !reflect.DeepEqual(got, []int{0, 0, 1, 1}) {
		t.Errorf("Labels = %v", got)
	}
}

// TestPathQueriesByHand checks the path helpers on the docs/topology-format.md example:
// r0,r1 under s0; r2,r3 under s1; s0,s1 under s2.
func TestPathQueriesByHand(t *testing.T) {
	tp := loadExample(t)
	p, err := tp.Paths()
	if err != nil {
		t.Fatal(err)
	}
	// Edge indices: 0 r0-s0, 1 r1-s0, 2 r2-s1, 3 r3-s1, 4 s0-s2, 5 s1-s2.
	for _, c := range []struct {
		a, b int
		want []int
	}{{0, 1, []int{0, 1}}, {1, 0, []int{1, 0}}, {0, 2, []int{0, 4, 5, 2}}, {3, 1, []int{3, 5, 4, 1}}, {2, 2, nil}} {
		got, err := p.PathEdges(c.a, c.b)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("PathEdges(%d,%d) = %v, %v; want %v", c.a, c.b, got, err, c.want)
		}
	}
	for _, c := range []struct {
		a, b, c, d int
		want       bool
	}{
		{0, 2, 1, 3, true},  // both cross s0-s2 and s2-s1
		{0, 1, 2, 3, false}, // stay under their own switches
		{0, 1, 1, 2, true},  // share r1-s0
		{0, 2, 3, 1, true},  // reverse direction, same undirected edges
		{0, 1, 0, 1, true},
	} {
		got, err := p.SharesLink(c.a, c.b, c.c, c.d)
		if err != nil || got != c.want {
			t.Errorf("SharesLink(%d,%d,%d,%d) = %v, %v", c.a, c.b, c.c, c.d, got, err)
		}
	}
	if l, _ := p.PathLatency(0, 3); math.Abs(l-2.4e-5) > 1e-18 {
		t.Errorf("PathLatency(0,3) = %g, want 2.4e-5", l)
	}
	if l, _ := p.PathLatency(0, 1); math.Abs(l-2e-5) > 1e-18 {
		t.Errorf("PathLatency(0,1) = %g, want 2e-5", l)
	}
	if bw, ok, _ := p.MinBandwidthOnPath(0, 3); !ok || bw != 1.25e8 {
		t.Errorf("MinBandwidthOnPath(0,3) = %g, %v", bw, ok)
	}
	if _, ok, _ := p.MinBandwidthOnPath(2, 3); ok {
		t.Errorf("MinBandwidthOnPath(2,3) found a bandwidth on unmeasured edges")
	}
	if _, err := p.PathEdges(0, 4); err == nil {
		t.Error("PathEdges to rank 4 of 4 succeeded")
	}
	if ok, err := tp.SharesLink(0, 2, 1, 3); !ok || err != nil {
		t.Errorf("Topology.SharesLink = %v, %v", ok, err)
	}
}

// randomTree builds a random valid topology with a tree: switches form a
// random tree, each rank hangs off a random switch, then switches left as
// leaves are pruned.
func randomTree(rng *rand.Rand, size int) *Topology {
	tp := &Topology{Version: 1, Size: size, Tree: &Tree{}}
	nsw := 1 + rng.IntN(size)
	parent := make([]int, nsw)
	for i := 1; i < nsw; i++ {
		parent[i] = rng.IntN(i)
	}
	hang := make([]int, size)
	for r := 0; r < size; r++ {
		hang[r] = rng.IntN(nsw)
	}
	// Prune switches with no rank below them, repeatedly, so all leaves are ranks.
	alive := make([]bool, nsw)
	sub := make([]int, nsw) // ranks below each switch
	for r := 0; r < size; r++ {
		for s := hang[r]; ; s = parent[s] {
			sub[s]++
			if s == 0 {
				break
			}
		}
	}
	for i := range alive {
		alive[i] = sub[i] > 0
	}
	id := func(s int) string { return "s" + itoa(s) }
	for i := 0; i < nsw; i++ {
		if alive[i] {
			tp.Tree.Nodes = append(tp.Tree.Nodes, Node{ID: id(i)})
			if i > 0 {
				tp.Tree.Edges = append(tp.Tree.Edges, Edge{A: id(i), B: id(parent[i]), LatencyS: rng.Float64() * 1e-5})
			}
		}
	}
	for r := 0; r < size; r++ {
		rr := r
		tp.Ranks = append(tp.Ranks, Rank{Rank: r})
		tp.Tree.Nodes = append(tp.Tree.Nodes, Node{ID: "r" + itoa(r), Rank: &rr})
		tp.Tree.Edges = append(tp.Tree.Edges, Edge{A: "r" + itoa(r), B: id(hang[r]), LatencyS: rng.Float64() * 1e-5})
	}
	tp.Tree = contractUnary(tp.Tree)
	all := make([]int, size)
	for i := range all {
		all[i] = i
	}
	tp.Levels = []Level{{Name: "all", Groups: [][]int{all}}}
	return tp
}

func itoa(i int) string { return strconv.Itoa(i) }

// contractUnary removes switches with a single neighbour (leaf switches can
// remain after pruning when a switch has only a switch child that got pruned).
func contractUnary(tr *Tree) *Tree {
	for {
		deg := map[string]int{}
		for _, e := range tr.Edges {
			deg[e.A]++
			deg[e.B]++
		}
		var drop string
		for _, n := range tr.Nodes {
			if n.Rank == nil && deg[n.ID] < 2 && len(tr.Nodes) > 1 {
				drop = n.ID
				break
			}
		}
		if drop == "" {
			return tr
		}
		var nodes []Node
		for _, n := range tr.Nodes {
			if n.ID != drop {
				nodes = append(nodes, n)
			}
		}
		var edges []Edge
		for _, e := range tr.Edges {
			if e.A != drop && e.B != drop {
				edges = append(edges, e)
			}
		}
		tr = &Tree{Nodes: nodes, Edges: edges}
	}
}

// TestPathPropertiesRandomTrees checks, on seeded random trees, that paths
// are symmetric, connect their endpoints, never repeat an edge, and that a
// path always shares a link with itself.
func TestPathPropertiesRandomTrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		size := 2 + rng.IntN(30)
		tp := randomTree(rng, size)
		if err := tp.Validate(); err != nil {
			t.Fatalf("trial %d: generator made an invalid tree: %v", trial, err)
		}
		p, err := tp.Paths()
		if err != nil {
			t.Fatal(err)
		}
		for q := 0; q < 40; q++ {
			a, b := rng.IntN(size), rng.IntN(size)
			ab, _ := p.PathEdges(a, b)
			ba, _ := p.PathEdges(b, a)
			if len(ab) != len(ba) {
				t.Fatalf("path %d->%d and back differ: %v %v", a, b, ab, ba)
			}
			for i := range ab {
				if ab[i] != ba[len(ba)-1-i] {
					t.Fatalf("path %d->%d is not the reverse of %d->%d", a, b, b, a)
				}
			}
			seen := map[int]bool{}
			for _, e := range ab {
				if seen[e] {
					t.Fatalf("path %d->%d repeats edge %d", a, b, e)
				}
				seen[e] = true
			}
			// Walk the path to check it connects a to b.
			cur := "r" + itoa(a)
			for _, e := range ab {
				ed := tp.Tree.Edges[e]
				switch cur {
				case ed.A:
					cur = ed.B
				case ed.B:
					cur = ed.A
				default:
					t.Fatalf("path %d->%d: edge %d does not continue from %s", a, b, e, cur)
				}
			}
			if cur != "r"+itoa(b) {
				t.Fatalf("path %d->%d ends at %s", a, b, cur)
			}
			if a != b {
				if s, _ := p.SharesLink(a, b, a, b); !s {
					t.Fatalf("path %d->%d does not share a link with itself", a, b)
				}
			}
			lab, _ := p.PathLatency(a, b)
			lba, _ := p.PathLatency(b, a)
			sum := 0.0 // the edges of PathEdges in order: the same sum, bit for bit
			for _, e := range ab {
				sum += tp.Tree.Edges[e].LatencyS
			}
			if lab != sum {
				t.Fatalf("latency %d->%d %g, its path's edges sum to %g", a, b, lab, sum)
			}
			if math.Abs(lab-lba) > 1e-15 {
				t.Fatalf("latency %d->%d %g != %g", a, b, lab, lba)
			}
		}
	}
}

func FuzzReadTopology(f *testing.F) {
	data, err := os.ReadFile("testdata/example.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"version":1,"size":1,"ranks":[{"rank":0}],"levels":[{"name":"all","groups":[[0]]}]}`))
	f.Add([]byte(`{"version":1,"size":2,"ranks":[{"rank":0},{"rank":1}],"levels":[],"tree":{"nodes":[{"id":"a","rank":0},{"id":"b","rank":1}],"edges":[{"a":"a","b":"b","latency_s":1}]}}`))
	f.Add([]byte(`{"version":1,"size":-3}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tp, err := Parse(data)
		if err != nil {
			return
		}
		// Anything accepted must survive a write/read cycle and answer queries.
		var buf bytes.Buffer
		if err := tp.Write(&buf); err != nil {
			t.Fatalf("valid topology failed to write: %v", err)
		}
		if _, err := Parse(buf.Bytes()); err != nil {
			t.Fatalf("written topology does not read back: %v\n%s", err, buf.String())
		}
		if tp.Tree != nil {
			p, err := tp.Paths()
			if err != nil {
				t.Fatal(err)
			}
			for a := 0; a < tp.Size && a < 4; a++ {
				if _, err := p.PathEdges(a, tp.Size-1); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

func TestSharesLinkDirectedByHand(t *testing.T) {
	p, err := loadExample(t).Paths()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b, c, d int
		want       bool
	}{
		{0, 2, 1, 3, true},  // both go up s0->s2 and down s2->s1
		{0, 2, 3, 1, false}, // same edges, opposite directions
		{0, 1, 2, 1, true},  // both go down s0->r1
		{0, 1, 1, 2, false}, // r1 receives on r1-s0 in one, sends in the other
		{0, 3, 1, 2, true},
	} {
		got, err := p.SharesLinkDirected(c.a, c.b, c.c, c.d)
		if err != nil || got != c.want {
			t.Errorf("SharesLinkDirected(%d,%d,%d,%d) = %v, %v; want %v", c.a, c.b, c.c, c.d, got, err, c.want)
		}
	}
}
