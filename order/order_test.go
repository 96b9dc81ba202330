package order

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"netaware/topo"
)

// star builds a topology whose ranks sit on the given hosts and whose tree
// hangs each rank off the switch named in sw[rank] (10 us), the switches
// in a chain s0-s1-... (40 us a hop).
func star(t *testing.T, hosts []string, sw []int) *topo.Topology {
	t.Helper()
	tp := &topo.Topology{Version: topo.Version, Size: len(hosts), Tree: &topo.Tree{}}
	nsw := slices.Max(sw) + 1
	byHost := map[string][]int{}
	var order []string
	for r, h := range hosts {
		tp.Ranks = append(tp.Ranks, topo.Rank{Rank: r, Host: h})
		rr := r
		id := fmt.Sprintf("r%d", r)
		tp.Tree.Nodes = append(tp.Tree.Nodes, topo.Node{ID: id, Rank: &rr})
		tp.Tree.Edges = append(tp.Tree.Edges, topo.Edge{A: id, B: fmt.Sprintf("s%d", sw[r]), LatencyS: 1e-5})
		if byHost[h] == nil {
			order = append(order, h)
		}
		byHost[h] = append(byHost[h], r)
	}
	for s := range nsw {
		tp.Tree.Nodes = append(tp.Tree.Nodes, topo.Node{ID: fmt.Sprintf("s%d", s)})
		if s > 0 {
			tp.Tree.Edges = append(tp.Tree.Edges, topo.Edge{A: fmt.Sprintf("s%d", s-1), B: fmt.Sprintf("s%d", s), LatencyS: 4e-5})
		}
	}
	var hostLevel [][]int
	for _, h := range order {
		hostLevel = append(hostLevel, byHost[h])
	}
	slices.SortFunc(hostLevel, func(a, b []int) int { return a[0] - b[0] })
	all := make([]int, len(hosts))
	for i := range all {
		all[i] = i
	}
	tp.Levels = []topo.Level{{Name: "host", Groups: hostLevel}}
	if len(hostLevel) > 1 {
		tp.Levels = append(tp.Levels, topo.Level{Name: "all", Groups: [][]int{all}})
	}
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
	return tp
}

// cyclic8 is two switches of four hosts, ranks dealt to hosts cyclically:
// rank 0 on a1, 1 on b1, 2 on a2, ...
func cyclic8(t *testing.T) *topo.Topology {
	hosts := []string{"a1", "b1", "a2", "b2", "a3", "b3", "a4", "b4"}
	return star(t, hosts, []int{0, 1, 0, 1, 0, 1, 0, 1})
}

// By hand: from rank 0 the traversal takes s0's ranks 2, 4, 6 (10 us
// links) before the 40 us trunk to s1's ranks 1, 3, 5, 7.
func TestDepthFirstCyclicTwoSwitches(t *testing.T) {
	p, err := DepthFirst(cyclic8(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Order(), []int{0, 2, 4, 6, 1, 3, 5, 7}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	want := map[string]string{
		"ompi-hostfile":  "a1 slots=1\na2 slots=1\na3 slots=1\na4 slots=1\nb1 slots=1\nb2 slots=1\nb3 slots=1\nb4 slots=1\n",
		"ompi-rankfile":  "rank 0=a1 slot=0\nrank 1=a2 slot=0\nrank 2=a3 slot=0\nrank 3=a4 slot=0\nrank 4=b1 slot=0\nrank 5=b2 slot=0\nrank 6=b3 slot=0\nrank 7=b4 slot=0\n",
		"machinefile":    "a1:1\na2:1\na3:1\na4:1\nb1:1\nb2:1\nb3:1\nb4:1\n",
		"slurm-hostfile": "a1\na2\na3\na4\nb1\nb2\nb3\nb4\n",
		"hosts":          "a1\na2\na3\na4\nb1\nb2\nb3\nb4\n",
	}
	for _, f := range Formats {
		var b bytes.Buffer
		if err := p.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		if b.String() != want[f] {
			t.Errorf("%s:\n%s\nwant\n%s", f, b.String(), want[f])
		}
	}
}

// Two ranks per host, hosts dealt cyclically: each host's ranks stay
// together and get slots 0 and 1.
func TestDepthFirstSeveralRanksPerHost(t *testing.T) {
	// Ranks 0..7 on hosts h1 h2 h3 h4 h1 h2 h3 h4; h1 and h3 under s0.
	hosts := []string{"h1", "h2", "h3", "h4", "h1", "h2", "h3", "h4"}
	p, err := DepthFirst(star(t, hosts, []int{0, 1, 0, 1, 0, 1, 0, 1}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Order(), []int{0, 4, 2, 6, 1, 5, 3, 7}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	for f, want := range map[string]string{
		"ompi-hostfile":  "h1 slots=2\nh3 slots=2\nh2 slots=2\nh4 slots=2\n",
		"ompi-rankfile":  "rank 0=h1 slot=0\nrank 1=h1 slot=1\nrank 2=h3 slot=0\nrank 3=h3 slot=1\nrank 4=h2 slot=0\nrank 5=h2 slot=1\nrank 6=h4 slot=0\nrank 7=h4 slot=1\n",
		"machinefile":    "h1:2\nh3:2\nh2:2\nh4:2\n",
		"slurm-hostfile": "h1\nh1\nh3\nh3\nh2\nh2\nh4\nh4\n",
		"hosts":          "h1\nh3\nh2\nh4\n",
	} {
		var b bytes.Buffer
		if err := p.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("%s:\n%s\nwant\n%s", f, b.String(), want)
		}
	}
}

// A tree that separates a host's ranks (r0 and r2 on h1, r1 on h2 between
// them in the traversal) still gives each host one block: h1 holds 0 and 2.
func TestDepthFirstKeepsHostsTogether(t *testing.T) {
	p, err := DepthFirst(star(t, []string{"h1", "h2", "h1"}, []int{0, 0, 1}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Order(), []int{0, 2, 1}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// Without a tree the levels order the ranks (coarsest first); a blind
// topology or a bad host name is an error naming the rank.
func TestDepthFirstLevelsAndErrors(t *testing.T) {
	tp := cyclic8(t)
	tp.Tree = nil
	tp.Levels = []topo.Level{
		{Name: "host", Groups: [][]int{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}},
		{Name: "switch", Groups: [][]int{{0, 2, 4, 6}, {1, 3, 5, 7}}},
	}
	p, err := DepthFirst(tp)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Order(), []int{0, 2, 4, 6, 1, 3, 5, 7}; !slices.Equal(got, want) {
		t.Errorf("order by levels %v, want %v", got, want)
	}
	blind := cyclic8(t)
	blind.Ranks[3].Host = ""
	if _, err := DepthFirst(blind); err == nil || !strings.Contains(err.Error(), "rank 3") {
		t.Errorf("blind topology: %v", err)
	}
	bad := cyclic8(t)
	bad.Ranks[5].Host = "b3 slots=9"
	if _, err := DepthFirst(bad); err == nil || !strings.Contains(err.Error(), "rank 5") {
		t.Errorf("host with a space: %v", err)
	}
	if _, err := DepthFirst(nil); err == nil {
		t.Error("nil topology accepted")
	}
	p, _ = DepthFirst(cyclic8(t))
	if err := p.Write(&bytes.Buffer{}, "rankfile"); err == nil || !strings.Contains(err.Error(), "ompi-rankfile") {
		t.Errorf("unknown format: %v", err)
	}
}

// Seeded random property: on random cyclic placements over random switch
// counts, the order is a permutation, each host's ranks are consecutive,
// and a ring in the new order moves from one switch to another once per
// switch (each switch's block is entered once), the minimum, where the
// cyclic order changes switch on every hop.
func TestDepthFirstRingCrossingsProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 2))
	for trial := range 200 {
		nsw := 1 + rng.IntN(4)
		per := 1 + rng.IntN(5)
		if nsw == 1 {
			per++ // a switch needs two edges
		}
		n := nsw * per
		hosts := make([]string, n)
		sw := make([]int, n)
		for r := range n {
			// Deal ranks to switches cyclically, one host each.
			sw[r] = r % nsw
			hosts[r] = fmt.Sprintf("n%d-%d", r%nsw, r/nsw)
		}
		p, err := DepthFirst(star(t, hosts, sw))
		if err != nil {
			t.Fatal(err)
		}
		o := p.Order()
		if s := slices.Sorted(slices.Values(o)); len(s) != n || s[0] != 0 || s[n-1] != n-1 || len(slices.Compact(s)) != n {
			t.Fatalf("trial %d: order %v is not a permutation", trial, o)
		}
		crossings := 0
		for i := range n {
			if sw[o[i]] != sw[o[(i+1)%n]] {
				crossings++
			}
		}
		want := nsw
		if nsw == 1 {
			want = 0
		}
		if crossings != want {
			t.Errorf("trial %d (%d switches x %d): ring crosses switches %d times, want %d: %v", trial, nsw, per, crossings, want, o)
		}
	}
}
