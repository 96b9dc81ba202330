package coll

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"netaware/comm"
	"netaware/topo"
)

// synthTopo makes a two-level topology for p ranks whose groups are not
// runs of consecutive ranks: rank r sits on node (5r mod nodes), node k on
// switch k mod 2. withTree adds the matching switch tree.
func synthTopo(p int, withTree bool) *topo.Topology {
	t := &topo.Topology{Version: 1, Size: p}
	nodes := max(1, (p+2)/3)
	node := func(r int) int { return (5 * r) % nodes }
	byNode := map[int][]int{}
	bySw := map[int][]int{}
	for r := range p {
		t.Ranks = append(t.Ranks, topo.Rank{Rank: r})
		byNode[node(r)] = append(byNode[node(r)], r)
		bySw[node(r)%2] = append(bySw[node(r)%2], r)
	}
	var ng, sg [][]int
	for k := range nodes {
		if g := byNode[k]; len(g) > 0 {
			ng = append(ng, g)
		}
	}
	for k := range 2 {
		if g := bySw[k]; len(g) > 0 {
			sg = append(sg, g)
		}
	}
	all := make([]int, p)
	for i := range all {
		all[i] = i
	}
	t.Levels = []topo.Level{{Name: "node", Groups: ng}, {Name: "switch", Groups: sg}, {Name: "all", Groups: [][]int{all}}}
	if withTree && p > 1 {
		tr := &topo.Tree{}
		tr.Nodes = append(tr.Nodes, topo.Node{ID: "top"})
		for k := range 2 {
			if len(bySw[k]) > 0 {
				tr.Nodes = append(tr.Nodes, topo.Node{ID: fmt.Sprintf("s%d", k)})
				tr.Edges = append(tr.Edges, topo.Edge{A: fmt.Sprintf("s%d", k), B: "top", LatencyS: 1e-4})
			}
		}
		for k := range nodes {
			if len(byNode[k]) > 0 {
				id := fmt.Sprintf("n%d", k)
				tr.Nodes = append(tr.Nodes, topo.Node{ID: id})
				tr.Edges = append(tr.Edges, topo.Edge{A: id, B: fmt.Sprintf("s%d", k%2), LatencyS: 1e-5})
			}
		}
		for r := range p {
			rr := r
			id := fmt.Sprintf("r%d", r)
			tr.Nodes = append(tr.Nodes, topo.Node{ID: id, Rank: &rr})
			tr.Edges = append(tr.Edges, topo.Edge{A: id, B: fmt.Sprintf("n%d", node(r)), LatencyS: 1e-6})
		}
		t.Tree = pruneInnerLeaves(tr)
	}
	return t
}

// pruneInnerLeaves removes switches left with one edge (a group layout
// can leave a switch with a single child), repeatedly.
func pruneInnerLeaves(tr *topo.Tree) *topo.Tree {
	for {
		deg := map[string]int{}
		for _, e := range tr.Edges {
			deg[e.A]++
			deg[e.B]++
		}
		drop := map[string]bool{}
		for _, n := range tr.Nodes {
			if n.Rank == nil && deg[n.ID] <= 1 {
				drop[n.ID] = true
			}
		}
		if len(drop) == 0 {
			return tr
		}
		var nodes []topo.Node
		for _, n := range tr.Nodes {
			if !drop[n.ID] {
				nodes = append(nodes, n)
			}
		}
		var edges []topo.Edge
		for _, e := range tr.Edges {
			if !drop[e.A] && !drop[e.B] {
				edges = append(edges, e)
			}
		}
		tr.Nodes, tr.Edges = nodes, edges
	}
}

func TestSynthTopoIsValid(t *testing.T) {
	for p := 1; p <= 40; p++ {
		for _, tree := range []bool{false, true} {
			if err := synthTopo(p, tree).Validate(); err != nil {
				t.Fatalf("P=%d tree=%v: %v", p, tree, err)
			}
		}
	}
}

// acceptanceAlgorithms is every builder, some with non-default parameters
// (small segments, so that segmentation is exercised at small sizes).
func acceptanceAlgorithms() []Algorithm {
	return []Algorithm{
		{Name: "linear"},
		{Name: "chain"},
		{Name: "pipeline", SegSize: 1000},
		{Name: "binary"},
		{Name: "binary", SegSize: 512},
		{Name: "split-binary"},
		{Name: "split-binary", SegSize: 300},
		{Name: "k-chain", K: 3},
		{Name: "binomial"},
		{Name: "knomial"},
		{Name: "knomial", K: 3, SegSize: 4096},
		{Name: "scatter-allgather"},
		{Name: "scatter-allgather-ring"},
		{Name: "binary-swap"},
		{Name: "binary-swap", SegSize: 256},
		{Name: "magpie"},
		{Name: "magpie", Level: 1},
		{Name: "magpie2", Base: "binary"},
		{Name: "magpie2", Base: "scatter-allgather", Level: 2},
		{Name: "interpipe", SegSize: 4096},
		{Name: "hierarchical"},
		{Name: "hierarchical", Base: "split-binary"},
		{Name: "dfs-pipeline", SegSize: 777},
		{Name: "dfs-pipeline", K: 3, SegSize: 500},
		{Name: "model-binomial"},
		{Name: "model-binomial", Variant: "bfs-max"},
		{Name: "traff"},
		{Name: "prim", Variant: "ready"},
		{Name: "prim", SegSize: 700},
		// The allreduce algorithms last (see opAlgs).
		{Name: "recursive-doubling"},
		{Name: "rabenseifner"},
		{Name: "ring"},
		{Name: "dfs-ring"},
		{Name: "levels-allreduce"},
		{Name: "levels-allreduce", Level: 2, Base: "pipeline", SegSize: 300, Variant: "rabenseifner"},
	}
}

// synthEnv is the build environment of the acceptance tests: the synthetic
// topology and a Hockney cost that grows with the level two ranks share.
func synthEnv(p int) Env {
	tp := synthTopo(p, p%2 == 0)
	node, sw := tp.Levels[0].Labels(p), tp.Levels[1].Labels(p)
	cost := func(i, j, m int) float64 {
		switch {
		case node[i] == node[j]:
			return 1e-6 + float64(m)/1e10
		case sw[i] == sw[j]:
			return 1e-5 + float64(m)/1e9
		}
		return 1e-4 + float64(m)/1e8
	}
	return Env{Topo: tp, Cost: cost, Bytes: 1000}
}

// countingComm counts the bytes a rank posts receives for.
type countingComm struct {
	comm.Comm
	n *atomic.Int64
}

func (c countingComm) Irecv(src, tag int, b []byte) comm.Request {
	c.n.Add(int64(len(b)))
	return c.Comm.Irecv(src, tag, b)
}

func (c countingComm) Recv(ctx context.Context, src, tag int, b []byte) (comm.Status, error) {
	c.n.Add(int64(len(b)))
	return c.Comm.Recv(ctx, src, tag, b)
}

func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + seed*17 + i>>8)
	}
	return b
}

// byteSum adds bytes modulo 256: associative and commutative, and exact,
// so every tree must give the same result.
var byteSum = Op{Name: "byte-sum", ElemSize: 1, Fn: func(inout, in []byte) {
	for i := range in {
		inout[i] += in[i]
	}
}}

// fixture is the data of one checkAll call, computed once and shared
// read-only by every rank.
type fixture struct {
	n      int
	want   []byte   // broadcast payload
	blocks [][]byte // rank r's block
	all    []byte   // blocks in rank order
	counts []int    // Scatterv/Gatherv counts (some zero)
	vall   []byte   // the variable blocks in rank order
	sum    []byte   // byte sum of the blocks
}

func newFixture(s *Schedule, n int) *fixture {
	p := s.Size
	seed := n + s.Root*7 + len(s.Name)
	f := &fixture{n: n, want: pattern(n, seed), counts: make([]int, p), sum: make([]byte, n)}
	for r := range p {
		b := pattern(n, seed+r+1)
		f.blocks = append(f.blocks, b)
		f.all = append(f.all, b...)
		c := (n * (r%4 + 1) / 3) % (n + 1)
		if r%5 == 3 {
			c = 0
		}
		f.counts[r] = min(c, n)
		f.vall = append(f.vall, b[:f.counts[r]]...)
		byteSum.Fn(f.sum, b)
	}
	return f
}

// checkAll runs every collective with schedule s and the fixture's message
// size on one rank, and checks the exact bytes.
func checkAll(ctx context.Context, c comm.Comm, s *Schedule, f *fixture) error {
	p, me, root, n := c.Size(), c.Rank(), s.Root, f.n
	buf := make([]byte, n)
	if me == root {
		copy(buf, f.want)
	}
	if err := s.Bcast(ctx, c, buf); err != nil {
		return err
	}
	if !bytes.Equal(buf, f.want) {
		return fmt.Errorf("bcast: rank %d got wrong bytes (first diff at %d)", me, firstDiff(buf, f.want))
	}

	// Scatter / Gather / Allgather with blocks of n bytes.
	recv := make([]byte, n)
	var send []byte
	if me == root {
		send = f.all
	}
	if err := s.Scatter(ctx, c, send, recv); err != nil {
		return err
	}
	if !bytes.Equal(recv, f.blocks[me]) {
		return fmt.Errorf("scatter: rank %d got wrong block", me)
	}
	var gathered []byte
	if me == root {
		gathered = make([]byte, p*n)
	}
	if err := s.Gather(ctx, c, f.blocks[me], gathered); err != nil {
		return err
	}
	if me == root && !bytes.Equal(gathered, f.all) {
		return fmt.Errorf("gather: root got wrong bytes (first diff at %d)", firstDiff(gathered, f.all))
	}
	ag := make([]byte, p*n)
	if err := s.Allgather(ctx, c, f.blocks[me], ag); err != nil {
		return err
	}
	if !bytes.Equal(ag, f.all) {
		return fmt.Errorf("allgather: rank %d got wrong bytes (first diff at %d)", me, firstDiff(ag, f.all))
	}

	// Scatterv / Gatherv with uneven counts (some zero).
	vrecv := make([]byte, f.counts[me])
	var vsend []byte
	if me == root {
		vsend = f.vall
	}
	if err := s.Scatterv(ctx, c, vsend, f.counts, vrecv); err != nil {
		return err
	}
	if !bytes.Equal(vrecv, f.blocks[me][:f.counts[me]]) {
		return fmt.Errorf("scatterv: rank %d got wrong block", me)
	}
	var vg []byte
	if me == root {
		vg = make([]byte, len(f.vall))
	}
	if err := s.Gatherv(ctx, c, f.blocks[me][:f.counts[me]], f.counts, vg); err != nil {
		return err
	}
	if me == root && !bytes.Equal(vg, f.vall) {
		return fmt.Errorf("gatherv: root got wrong bytes")
	}

	// Reduce: byte sums.
	var red []byte
	if me == root {
		red = make([]byte, n)
	}
	if err := s.Reduce(ctx, c, f.blocks[me], red, byteSum); err != nil {
		return err
	}
	if me == root && !bytes.Equal(red, f.sum) {
		return fmt.Errorf("reduce: root got wrong sums (first diff at %d)", firstDiff(red, f.sum))
	}
	return s.Barrier(ctx, c)
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
