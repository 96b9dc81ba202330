package coll

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/commtest"
	"netaware/comm/local"
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
		{Name: "model-binomial"},
		{Name: "model-binomial", Variant: "bfs-max"},
		{Name: "traff"},
		{Name: "prim", Variant: "ready"},
		{Name: "prim", SegSize: 700},
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

// world is a way to run SPMD code; adding a transport is one line in worlds().
type world struct {
	name  string
	run   commtest.Runner
	sizes []int // communicator sizes to test
	big   bool  // also run the 1 MiB + 7 messages
}

func sizesUpTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// bigSizes are the communicator sizes that also run 1 MiB + 7 messages
// (every collective for P <= 3, broadcast and reduce beyond).
var bigSizes = []int{1, 2, 3, 33}

// sampled sizes for the slower worlds: small ones, powers of two and their
// neighbours, the largest.
var sampledSizes = []int{1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 33}

func localWorld() world {
	return world{"local", local.Run, sizesUpTo(33), os.Getenv("COLL_NOBIG") == ""}
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

// allRoots: every root for small sizes, a sample (first, second, middle,
// last) for larger ones.
func allRoots(p int) []int {
	if p > 6 {
		return []int{0, p / 2, p - 1}
	}
	out := make([]int, p)
	for i := range out {
		out[i] = i
	}
	return out
}

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

// runAcceptance: every algorithm x size x root x message size, every
// collective, exact bytes; plus the byte count each rank receives in a
// broadcast.
func runAcceptance(t *testing.T, w world) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, a := range acceptanceAlgorithms() {
		t.Run(a.String(), func(t *testing.T) {
			for _, p := range w.sizes {
				env := synthEnv(p)
				var scheds []*Schedule
				for _, root := range allRoots(p) {
					s, err := a.BuildEnv(p, root, env)
					if err != nil {
						t.Fatalf("P=%d root %d: %v", p, root, err)
					}
					scheds = append(scheds, s)
				}
				sizes := []int{0, 1, 1000}
				if w.big && p <= 3 {
					sizes = append(sizes, 1<<20+7) // every collective, 1 MiB + 7 blocks
				}
				var fixtures [][]*fixture
				for _, s := range scheds {
					var fs []*fixture
					for _, n := range sizes {
						fs = append(fs, newFixture(s, n))
					}
					fixtures = append(fixtures, fs)
				}
				err := w.run(ctx, p, func(ctx context.Context, c comm.Comm) error {
					for i, s := range scheds {
						for _, f := range fixtures[i] {
							if err := checkAll(ctx, c, s, f); err != nil {
								return fmt.Errorf("root %d n=%d: %w", s.Root, f.n, err)
							}
						}
					}
					return nil
				})
				if err != nil {
					t.Fatalf("P=%d: %v", p, err)
				}
				if !w.big || !slices.Contains(bigSizes, p) {
					continue
				}
				// 1 MiB + 7 broadcast and reduce, one root; every non-root
				// rank must post receives for exactly n bytes in the
				// broadcast (each segment once).
				n := 1<<20 + 7
				s := scheds[len(scheds)-1]
				if a.SegSize > 0 && a.SegSize < 16<<10 {
					// Tiny segments on a megabyte only cost test time:
					// segmentation is covered by the small messages.
					big := a
					big.SegSize = 16 << 10
					var err error
					if s, err = big.BuildEnv(p, s.Root, env); err != nil {
						t.Fatal(err)
					}
				}
				recvd := make([]atomic.Int64, p)
				want := pattern(n, 99)
				mine := make([][]byte, p)
				sum := make([]byte, n)
				for r := range p {
					mine[r] = pattern(n, r)
					byteSum.Fn(sum, mine[r])
				}
				err = w.run(ctx, p, func(ctx context.Context, c comm.Comm) error {
					buf := make([]byte, n)
					if c.Rank() == s.Root {
						copy(buf, want)
					}
					if err := s.Bcast(ctx, countingComm{c, &recvd[c.Rank()]}, buf); err != nil {
						return err
					}
					if !bytes.Equal(buf, want) {
						return fmt.Errorf("bcast 1MiB+7: rank %d wrong bytes at %d", c.Rank(), firstDiff(buf, want))
					}
					var red []byte
					if c.Rank() == s.Root {
						red = make([]byte, n)
					}
					if err := s.Reduce(ctx, c, mine[c.Rank()], red, byteSum); err != nil {
						return err
					}
					if c.Rank() == s.Root && !bytes.Equal(red, sum) {
						return fmt.Errorf("reduce 1MiB+7: wrong sums at %d", firstDiff(red, sum))
					}
					return nil
				})
				if err != nil {
					t.Fatalf("P=%d 1MiB+7: %v", p, err)
				}
				// Sub-communicators are not counted; scatter-allgather
				// re-sends blocks by design (see the property test).
				if s.Kind != KindHier && s.Kind != KindScatterAllgather {
					for r := range p {
						want := int64(n)
						if r == s.Root {
							want = 0
						}
						if got := recvd[r].Load(); got != want {
							t.Errorf("P=%d: rank %d posted receives for %d bytes in a broadcast of %d, want %d", p, r, got, n, want)
						}
					}
				}
			}
		})
	}
}

func TestAcceptanceLocal(t *testing.T) { runAcceptance(t, localWorld()) }
