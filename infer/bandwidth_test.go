package infer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// trueBW is a ground-truth tree with a bandwidth per edge (edge k joins
// node k to its parent), answering a pair with the minimum on its path.
type trueBW struct {
	tt    *trueTree
	bw    []float64
	calls [][]PairBandwidth
}

func (p *trueBW) Bandwidths(pairs []PairBandwidth) ([]float64, error) {
	p.calls = append(p.calls, pairs)
	busy := map[int]bool{}
	out := make([]float64, len(pairs))
	for i, q := range pairs {
		for _, r := range []int{q.A, q.B} {
			if busy[r] {
				panic("a host in two pairs of one round")
			}
			busy[r] = true
		}
		out[i] = p.pathMin(q.A, q.B)
	}
	return out, nil
}

func (p *trueBW) pathMin(a, b int) float64 {
	anc := map[int]bool{}
	for x := p.tt.host[a]; x >= 0; x = p.tt.parent[x] {
		anc[x] = true
	}
	bw := math.Inf(1)
	y := p.tt.host[b]
	for ; !anc[y]; y = p.tt.parent[y] {
		bw = math.Min(bw, p.bw[y])
	}
	for x := p.tt.host[a]; x != y; x = p.tt.parent[x] {
		bw = math.Min(bw, p.bw[x])
	}
	return bw
}

// handBW: switch C (node 0) joins switch A (node 1, hosts 0-2) and switch B
// (node 2, hosts 3-4) over 10 B/s links, and host 5 over a 50 B/s link;
// hosts hang from A and B by 100 B/s links.
func handBW() *trueBW {
	tt := &trueTree{parent: []int{-1, 0, 0}, up: []float64{0, 3e-6, 4e-6}}
	bw := []float64{0, 10, 10}
	for h, sw := range []int{1, 1, 1, 2, 2, 0} {
		tt.parent = append(tt.parent, sw)
		tt.up = append(tt.up, 1e-6*float64(1+h%3))
		tt.host = append(tt.host, len(tt.parent)-1)
		bw = append(bw, 100)
	}
	bw[len(bw)-1] = 50
	return &trueBW{tt: tt, bw: bw}
}

// TestShiraiBandwidthMapStages: the staged measurement of Sect. 6.1 on a
// case worked by hand. Rooted at C (height 2), stage 1 measures the host
// links of A and B in one parallel round (pairs 0-1 and 3-4), then the rest
// of A's ring (1-2, then 2-0); stage 2 measures C's three children in a
// ring too (A-B, B-5, 5-A), one pair a round. The A-C and B-C links get 10 B/s, the host links 100 B/s, and
// host 5's 50 B/s link is labelled 10 B/s (the pair's bottleneck: the
// port-homogeneity assumption of Sect. 6.1). Every single-flow query is
// answered exactly.
func TestShiraiBandwidthMapStages(t *testing.T) {
	p := handBW()
	res, err := Infer([]int{0, 1, 2, 3, 4, 5}, &exactProber{tt: p.tt}, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := BuildBandwidthMap(res.Tree, p)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tree.nodes[m.Root].rank >= 0 || m.Depth[res.Tree.byRank.at(5)] != 1 || m.Depth[res.Tree.byRank.at(0)] != 2 {
		t.Fatalf("root %d is not switch C", m.Root)
	}
	if want := "[[{0 1} {3 4}] [{1 2}] [{2 0}] [{0 3}] [{3 5}] [{5 0}]]"; fmt.Sprint(m.Rounds) != want || m.Measurements != 7 {
		t.Fatalf("rounds %v (%d measurements), want %s (7)", m.Rounds, m.Measurements, want)
	}
	for _, r := range []int{0, 1, 2, 3, 4} {
		leaf := m.Tree.byRank.at(r)
		if m.Edge[leaf] != 100 {
			t.Errorf("host %d link %g, want 100", r, m.Edge[leaf])
		}
		sw := m.Parent[leaf]
		if m.Edge[sw] != 10 || m.AtLeast[sw] {
			t.Errorf("uplink of host %d's switch: %g (at least: %v), want a 10 B/s bottleneck", r, m.Edge[sw], m.AtLeast[sw])
		}
	}
	if e := m.Edge[m.Tree.byRank.at(5)]; e != 10 {
		t.Errorf("host 5 link labelled %g, want 10 (the pair's bottleneck)", e)
	}
	for a := 0; a < 6; a++ {
		for b := a + 1; b < 6; b++ {
			if got, want := m.Bandwidth(a, b), p.pathMin(a, b); got != want {
				t.Errorf("query %d-%d: %g, want %g", a, b, got, want)
			}
		}
	}
	groups, thr := m.SlowGroups(2)
	// Every 10 B/s edge is slow: A's hosts, B's hosts and host 5 apart.
	if want := [][]int{{0, 1, 2}, {3, 4}, {5}}; thr != 100 || fmt.Sprint(groups) != fmt.Sprint(want) {
		t.Errorf("slow cut %v at %g, want %v at 100", groups, thr, want)
	}
	tt := m.Topo()
	n := 0
	for _, e := range tt.Edges {
		if e.Bandwidth != nil {
			n++
		}
	}
	if n != len(tt.Edges) {
		t.Errorf("%d of %d topology edges carry a bandwidth", n, len(tt.Edges))
	}
}

// A host link paired with a slow trunk in the first round is not left
// with the trunk's speed: the ring pairs it with another host link too.
// Switch X (node 0) holds host 0, switch S (node 1, hosts 1-2) over a
// 10 B/s trunk, and host 3; host links are 100 B/s. X's children in
// order are host 0, S, host 3: seed 002's pairing measures 0 with S's
// host first and would label host 0's link 10.
func TestBandwidthMapRingSeparatesHostLinkFromTrunk(t *testing.T) {
	tt := &trueTree{parent: []int{-1, 0}, up: []float64{0, 2e-6}}
	bw := []float64{0, 10}
	for _, sw := range []int{0, 1, 1, 0} {
		tt.parent = append(tt.parent, sw)
		tt.up = append(tt.up, 5e-6)
		tt.host = append(tt.host, len(tt.parent)-1)
		bw = append(bw, 100)
	}
	p := &trueBW{tt: tt, bw: bw}
	res, err := Infer([]int{0, 1, 2, 3}, &exactProber{tt: tt}, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := BuildBandwidthMap(res.Tree, p)
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range []float64{100, 100, 100, 100} {
		if got := m.Edge[m.Tree.byRank.at(r)]; got != want {
			t.Errorf("host %d link labelled %g, want %g", r, got, want)
		}
	}
	for a := 0; a < 4; a++ {
		for b := a + 1; b < 4; b++ {
			if got, want := m.Bandwidth(a, b), p.pathMin(a, b); got != want {
				t.Errorf("query %d-%d: %g, want %g", a, b, got, want)
			}
		}
	}
}

// TestShiraiBandwidthMapAtLeast: a fast link above slow ones is measured
// through them; its label is the pair's bandwidth, marked as a lower bound.
func TestShiraiBandwidthMapAtLeast(t *testing.T) {
	// Root R joins S1 and S2 (1000 B/s); S1 joins A, B over 10 B/s links,
	// S2 joins C, D the same; two hosts 100 B/s on each of A-D.
	tt := &trueTree{parent: []int{-1, 0, 0, 1, 1, 2, 2}, up: []float64{0, 5e-6, 6e-6, 2e-6, 3e-6, 2e-6, 4e-6}}
	bw := []float64{0, 1000, 1000, 10, 10, 10, 10}
	for h := 0; h < 8; h++ {
		tt.parent = append(tt.parent, 3+h/2)
		tt.up = append(tt.up, 1e-6)
		tt.host = append(tt.host, len(tt.parent)-1)
		bw = append(bw, 100)
	}
	p := &trueBW{tt: tt, bw: bw}
	res, err := Infer([]int{0, 1, 2, 3, 4, 5, 6, 7}, &exactProber{tt: tt}, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := BuildBandwidthMap(res.Tree, p)
	if err != nil {
		t.Fatal(err)
	}
	slow, lower := 0, 0
	for k, e := range m.Edge {
		if m.Parent[k] < 0 || m.Tree.nodes[k].rank >= 0 {
			continue
		}
		switch {
		case e == 10 && !m.AtLeast[k]:
			slow++
		case e == 10 && m.AtLeast[k]:
			lower++
		default:
			t.Errorf("switch edge %d labelled %g", k, e)
		}
	}
	if slow != 4 || lower != 1 {
		t.Fatalf("%d bottleneck edges and %d lower bounds, want 4 and 1 (R has degree 2, so S1-R-S2 is one inferred edge)", slow, lower)
	}
	groups, _ := m.SlowGroups(2)
	if len(groups) != 4 {
		t.Fatalf("cut at slow edges: %v, want the 4 pairs of hosts", groups)
	}
}

// TestBandwidthMapTwoHosts: without a switch the root is a host, which
// measures its one neighbour.
func TestBandwidthMapTwoHosts(t *testing.T) {
	tt := &trueTree{parent: []int{-1, 0, 0}, up: []float64{0, 1e-6, 2e-6}, host: []int{1, 2}}
	p := &trueBW{tt: tt, bw: []float64{0, 7, 9}}
	res, err := Infer([]int{0, 1}, &exactProber{tt: tt}, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := BuildBandwidthMap(res.Tree, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Bandwidth(0, 1); got != 7 || m.Measurements != 1 {
		t.Fatalf("query %g after %d measurements, want 7 after 1", got, m.Measurements)
	}
}

// The heights from one pass down and one up equal a search from every
// node, on random trees whose parents are numbered before or after their
// children (switches are inserted after the nodes below them).
func TestEccentricitiesMatchSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(40)
		perm := append([]int{0}, rng.Perm(n-1)...) // node 0 stays the root
		for i := 1; i < n; i++ {
			perm[i]++
		}
		tr := &Tree{byRank: rankIndex{}}
		tr.nodes = make([]node, n)
		tr.nodes[0] = node{rank: 0, parent: -1}
		for i := 1; i < n; i++ {
			tr.nodes[perm[i]] = node{rank: -1, parent: perm[rng.IntN(i)]}
		}
		adj := make([][]int, n)
		for k, x := range tr.nodes {
			if x.parent >= 0 {
				adj[k] = append(adj[k], x.parent)
				adj[x.parent] = append(adj[x.parent], k)
			}
		}
		ecc := tr.eccentricities()
		for r := 0; r < n; r++ {
			depth := make([]int, n)
			for k := range depth {
				depth[k] = -1
			}
			depth[r] = 0
			h := 0
			for q := []int{r}; len(q) > 0; q = q[1:] {
				u := q[0]
				h = max(h, depth[u])
				for _, v := range adj[u] {
					if depth[v] < 0 {
						depth[v] = depth[u] + 1
						q = append(q, v)
					}
				}
			}
			if ecc[r] != h {
				t.Fatalf("trial %d: node %d height %d, search says %d", trial, r, ecc[r], h)
			}
		}
	}
}
