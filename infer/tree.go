// Package infer reconstructs the network as a latency-weighted tree from
// RTTs between end hosts (Shirai, Saito and Taura, seed 002): leaves are
// ranks, inner nodes inferred switches, edge lengths one-way latencies. It
// works on measurements only; the measurements themselves come through the
// small Prober interface, so the same code runs on recorded data, in the
// simulator, or on live processes.
package infer

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"netaware/topo"
)

// Tree is a growing latency tree. Nodes are numbered in creation order; it is
// kept rooted at node 0 (the first host) so that paths are found by walking
// up parent pointers.
type Tree struct {
	nodes  []node
	byRank rankIndex // rank -> node id
	// depths[k] is node k's number of edges up to the root, kept with
	// every change, so that a path is walked without first climbing to
	// the root from both ends.
	depths []int32
}

type node struct {
	rank   int     // -1 for a switch
	parent int     // -1 for the root
	up     float64 // length of the edge to the parent (one-way seconds)
}

// NewTree returns a tree holding only the given rank.
func NewTree(rank int) *Tree {
	t := &Tree{byRank: rankIndex{}, depths: []int32{0}}
	t.nodes = append(t.nodes, node{rank: rank, parent: -1})
	t.byRank.set(rank, 0)
	return t
}

// Ranks returns the ranks in the tree, in insertion order.
func (t *Tree) Ranks() []int {
	var r []int
	for _, n := range t.nodes {
		if n.rank >= 0 {
			r = append(r, n.rank)
		}
	}
	return r
}

// rankNodes returns the node ids of the ranks, in insertion order (that
// of Ranks).
func (t *Tree) rankNodes() []int {
	r := make([]int, 0, t.byRank.len())
	for i, n := range t.nodes {
		if n.rank >= 0 {
			r = append(r, i)
		}
	}
	return r
}

// Has tells whether rank is in the tree.
func (t *Tree) Has(rank int) bool { _, ok := t.byRank.get(rank); return ok }

// Len returns the number of nodes (ranks and switches).
func (t *Tree) Len() int { return len(t.nodes) }

// path returns the nodes from a to b (inclusive) and the length of each
// step: steps[i] is the length between path[i] and path[i+1]. It only
// reads the tree, so ranks of one process may share a tree.
func (t *Tree) path(a, b int) (path []int, steps []float64) {
	var fromB []int
	t.climb(a, b, func(x int) {
		path = append(path, x)
		steps = append(steps, t.nodes[x].up)
	}, func(y int) { fromB = append(fromB, y) }, func(lca int) { path = append(path, lca) })
	for i := len(fromB) - 1; i >= 0; i-- {
		steps = append(steps, t.nodes[fromB[i]].up)
		path = append(path, fromB[i])
	}
	return path, steps
}

// climb walks from a and b up to their lowest common ancestor, calling
// fromA for every node on a's side (from a up, the LCA excluded), fromB
// likewise for b's side, then atLCA.
func (t *Tree) climb(a, b int, fromA, fromB, atLCA func(int)) {
	da, db := t.depth(a), t.depth(b)
	for ; da > db; da-- {
		fromA(a)
		a = t.nodes[a].parent
	}
	for ; db > da; db-- {
		fromB(b)
		b = t.nodes[b].parent
	}
	for a != b {
		fromA(a)
		a = t.nodes[a].parent
		fromB(b)
		b = t.nodes[b].parent
	}
	atLCA(a)
}

// depth is the number of edges from x up to the root.
func (t *Tree) depth(x int) int { return int(t.depths[x]) }

// computeDepths fills depths top-down, and tells whether every node
// reaches the root (a decoded tree may hold a cycle).
func (t *Tree) computeDepths() bool {
	order := t.topDown()
	if cap(t.depths) < len(t.nodes) {
		t.depths = make([]int32, len(t.nodes), len(t.nodes)+2) // room as in UnmarshalTree
	}
	t.depths = t.depths[:len(t.nodes)]
	for _, k := range order {
		t.depths[k] = 0
		if p := t.nodes[k].parent; p >= 0 {
			t.depths[k] = t.depths[p] + 1
		}
	}
	return len(order) == len(t.nodes)
}

// Distance is the one-way path length between two ranks in the tree.
func (t *Tree) Distance(a, b int) float64 {
	return t.nodeDistance(t.byRank.at(a), t.byRank.at(b))
}

// EachDistance calls f(i, j, Distance(i, j)) for every pair of ranks
// 0 <= i < j < n, bit for bit the same values, a row at a time: the sums
// from i up its path to the root, then down from there in one pass over
// the tree, instead of a walk from both ends for every pair (8.4M pairs
// at 4,096 ranks). Every rank below n must be in the tree.
func (t *Tree) EachDistance(n int, f func(i, j int, d float64)) {
	order := t.topDown()
	mark := make([]int, len(t.nodes)) // row+1 on the chain of rank row's node
	val := make([]float64, len(t.nodes))
	nodeOf := make([]int, n)
	for r := range nodeOf {
		nodeOf[r] = t.byRank.at(r)
	}
	for i := 0; i < n; i++ {
		// i's side of a path: summed from i upwards, as nodeDistance does.
		s := 0.0
		for x := nodeOf[i]; ; x = t.nodes[x].parent {
			mark[x], val[x] = i+1, s
			if t.nodes[x].parent < 0 {
				break
			}
			s += t.nodes[x].up
		}
		// The other side: from where it leaves i's chain, downwards.
		for _, v := range order {
			if mark[v] != i+1 {
				val[v] = val[t.nodes[v].parent] + t.nodes[v].up
			}
		}
		for j := i + 1; j < n; j++ {
			f(i, j, val[nodeOf[j]])
		}
	}
}

// nodeDistance sums the path's edges in path order (a's side up, then b's
// side down), as path does, without allocating for trees of usual depth.
func (t *Tree) nodeDistance(a, b int) float64 {
	var stack [64]float64
	down := stack[:0]
	s := 0.0
	da, db := t.depth(a), t.depth(b)
	for ; da > db; da-- {
		s += t.nodes[a].up
		a = t.nodes[a].parent
	}
	for ; db > da; db-- {
		down = append(down, t.nodes[b].up)
		b = t.nodes[b].parent
	}
	for a != b {
		s += t.nodes[a].up
		a = t.nodes[a].parent
		down = append(down, t.nodes[b].up)
		b = t.nodes[b].parent
	}
	for i := len(down) - 1; i >= 0; i-- {
		s += down[i]
	}
	return s
}

// EachNode calls f for every node of the tree, parents before children,
// the root first: its parent (-1 for the root), the length of the edge
// to the parent, and its rank (-1 for a switch). Nodes are numbered
// 0..Len()-1. It gives walks outside the package the tree's shape
// (discover bounds distances over subtrees with it).
func (t *Tree) EachNode(f func(node, parent int, up float64, rank int)) {
	for _, x := range t.topDown() {
		n := t.nodes[x]
		f(x, n.parent, n.up, n.rank)
	}
}

// topDown lists the nodes root first, every parent before its children.
// Children come in increasing node order; they are kept in one array
// indexed by offsets, not a slice per node (a rank of a blind inference
// decodes two trees of thousands of nodes).
func (t *Tree) topDown() []int {
	n := len(t.nodes)
	start, kids := t.children()
	order := make([]int, 1, n)
	for k := 0; k < len(order); k++ {
		for _, c := range kids[start[order[k]]:start[order[k]+1]] {
			order = append(order, int(c))
		}
	}
	return order
}

// children lists every node's children in increasing order, node k's
// as kids[start[k]:start[k+1]].
func (t *Tree) children() (start, kids []int32) {
	n := len(t.nodes)
	start = make([]int32, n+1)
	for _, x := range t.nodes {
		if x.parent >= 0 {
			start[x.parent+1]++
		}
	}
	for k := 0; k < n; k++ {
		start[k+1] += start[k]
	}
	kids = make([]int32, start[n])
	fill := slices.Clone(start[:n])
	for i, x := range t.nodes {
		if p := x.parent; p >= 0 {
			kids[fill[p]] = int32(i)
			fill[p]++
		}
	}
	return start, kids
}

// adjacency is a tree's nodes seen as a graph: each node's neighbours
// (its parent, then its children in increasing order) and the length of
// the edge to each.
type adjacency struct {
	t           *Tree
	start, kids []int32
}

func (t *Tree) adjacency() adjacency {
	start, kids := t.children()
	return adjacency{t, start, kids}
}

// childrenOf lists x's children.
func (a adjacency) childrenOf(x int) []int32 { return a.kids[a.start[x]:a.start[x+1]] }

// each calls f for every neighbour of x.
func (a adjacency) each(x int, f func(y int)) {
	if p := a.t.nodes[x].parent; p >= 0 {
		f(p)
	}
	for _, c := range a.childrenOf(x) {
		f(int(c))
	}
}

// length is the length of the edge between neighbours x and y.
func (a adjacency) length(x, y int) float64 {
	if a.t.nodes[x].parent == y {
		return a.t.nodes[x].up
	}
	return a.t.nodes[y].up
}

// spans numbers the nodes in a depth-first order from the root: the
// subtree of x is the nodes y with in[x] <= in[y] < out[x]. Nodes that do
// not reach the root (none, in a checked tree) get empty spans.
func (t *Tree) spans() (in, out []int32) {
	n := len(t.nodes)
	start, kids := t.children()
	in, out = make([]int32, n), make([]int32, n)
	var clock int32
	// next[x] is the next child of x to visit, on a stack from the root.
	next := slices.Clone(start[:n])
	stack := []int32{0}
	in[0] = clock
	clock++
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		if next[x] < start[x+1] {
			c := kids[next[x]]
			next[x]++
			in[c] = clock
			clock++
			stack = append(stack, c)
			continue
		}
		out[x] = clock
		stack = stack[:len(stack)-1]
	}
	return in, out
}

// isAncestor tells whether anc is x or one of x's ancestors.
func (t *Tree) isAncestor(anc, x int) bool {
	for ; x >= 0; x = t.nodes[x].parent {
		if x == anc {
			return true
		}
	}
	return false
}

// inBranch tells whether node x lies in the component of the tree minus
// node at that contains at's neighbour nb.
func (t *Tree) inBranch(at, nb, x int) bool {
	if t.nodes[at].parent == nb {
		return !t.isAncestor(at, x)
	}
	return t.isAncestor(nb, x)
}

// splitEdge inserts a new switch on the edge between adjacent nodes u and v,
// at distance d from u, and returns it.
func (t *Tree) splitEdge(u, v int, d float64) int {
	child, parent, fromChild := u, v, d
	if t.nodes[v].parent == u {
		child, parent = v, u
		fromChild = t.nodes[v].up - d
	}
	total := t.nodes[child].up
	fromChild = math.Min(math.Max(fromChild, 0), total)
	s := len(t.nodes)
	t.nodes = append(t.nodes, node{rank: -1, parent: parent, up: total - fromChild})
	t.nodes[child].parent = s
	t.nodes[child].up = fromChild
	t.computeDepths() // the child's subtree moved one edge down
	return s
}

// attach adds rank as a leaf below node at, with the given edge length.
func (t *Tree) attach(at, rank int, length float64) {
	id := len(t.nodes)
	t.nodes = append(t.nodes, node{rank: rank, parent: at, up: math.Max(length, 0)})
	t.depths = append(t.depths, t.depths[at]+1)
	t.byRank.set(rank, id)
}

// Switches returns the number of inferred switches.
func (t *Tree) Switches() int {
	n := 0
	for _, x := range t.nodes {
		if x.rank < 0 {
			n++
		}
	}
	return n
}

// Topo converts the tree into the topology.json tree form: rank nodes are
// "r<rank>", switches "s<k>" numbered in creation order.
func (t *Tree) Topo() *topo.Tree {
	ids := make([]string, len(t.nodes))
	out := &topo.Tree{}
	k := 0
	for i, n := range t.nodes {
		if n.rank >= 0 {
			ids[i] = "r" + strconv.Itoa(n.rank)
			r := n.rank
			out.Nodes = append(out.Nodes, topo.Node{ID: ids[i], Rank: &r})
		} else {
			ids[i] = "s" + strconv.Itoa(k)
			k++
			out.Nodes = append(out.Nodes, topo.Node{ID: ids[i]})
		}
	}
	for i, n := range t.nodes {
		if n.parent >= 0 {
			out.Edges = append(out.Edges, topo.Edge{A: ids[i], B: ids[n.parent], LatencyS: n.up})
		}
	}
	return out
}

// MarshalBinary encodes the tree for handing it from rank to rank: per node
// its rank (-1 for a switch), its parent (-1 for the root) and the length of
// the edge to its parent, 16 bytes in all.
func (t *Tree) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 16*len(t.nodes))
	for _, n := range t.nodes {
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(n.rank)))
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(n.parent)))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(n.up))
	}
	return b, nil
}

// EncodedSize is the size of MarshalBinary's output for a tree of n nodes.
func EncodedSize(nodes int) int { return 16 * nodes }

// UnmarshalTree decodes and checks a tree made by MarshalBinary.
func UnmarshalTree(b []byte) (*Tree, error) {
	if len(b) == 0 || len(b)%16 != 0 {
		return nil, fmt.Errorf("infer: tree message of %d bytes", len(b))
	}
	n := len(b) / 16
	// Room for the two nodes procedure add puts in (a host and the
	// switch it may split an edge with): growing a tree of thousands of
	// nodes by one copied it whole, once per joining rank.
	t := &Tree{byRank: rankIndex{}, nodes: make([]node, 0, n+2)}
	maxRank := -1
	for i := 0; i < n; i++ {
		maxRank = max(maxRank, int(int32(binary.LittleEndian.Uint32(b[16*i:]))))
	}
	t.byRank.reserve(maxRank+1, n)
	for i := 0; i < n; i++ {
		rec := b[16*i:]
		rank := int(int32(binary.LittleEndian.Uint32(rec)))
		p := int(int32(binary.LittleEndian.Uint32(rec[4:])))
		up := math.Float64frombits(binary.LittleEndian.Uint64(rec[8:]))
		if (i == 0) != (p < 0) || p >= n || p == i || !(up >= 0) || math.IsInf(up, 0) || rank < -1 {
			return nil, fmt.Errorf("infer: tree node %d has bad parent %d or length %g", i, p, up)
		}
		if rank >= 0 {
			if _, dup := t.byRank.get(rank); dup {
				return nil, fmt.Errorf("infer: rank %d twice in tree", rank)
			}
			t.byRank.set(rank, i)
		}
		t.nodes = append(t.nodes, node{rank: rank, parent: p, up: up})
	}
	// Every node must reach the root: no cycles.
	if !t.computeDepths() {
		return nil, fmt.Errorf("infer: tree of %d nodes: some do not reach the root", n)
	}
	return t, nil
}

// LeafLength is the length of the edge that joins rank's leaf to the tree
// (0 for a rank alone in it).
func (t *Tree) LeafLength(rank int) float64 {
	x := t.byRank.at(rank)
	if t.nodes[x].parent >= 0 {
		return t.nodes[x].up
	}
	for _, n := range t.nodes { // the root's one neighbour holds the edge
		if n.parent == x {
			return n.up
		}
	}
	return 0
}

// Siblings groups the ranks by the switch they hang from, each group
// sorted, groups ordered by first rank.
func (t *Tree) Siblings() [][]int {
	at := map[int][]int{}
	t.byRank.each(func(r, x int) {
		p := t.nodes[x].parent
		if p < 0 { // the root host: its switch is its one child
			for i, n := range t.nodes {
				if n.parent == x && n.rank < 0 {
					p = i
				}
			}
		}
		at[p] = append(at[p], r)
	})
	out := make([][]int, 0, len(at))
	for _, g := range at {
		sort.Ints(g)
		out = append(out, g)
	}
	sort.Slice(out, func(a, b int) bool { return out[a][0] < out[b][0] })
	return out
}

// Renamed returns a copy of t in which rank r is names[r]: a tree
// inferred among a sub-communicator's ranks, in the ranks of the world.
func (t *Tree) Renamed(names []int) (*Tree, error) {
	out := &Tree{byRank: rankIndex{}, depths: slices.Clone(t.depths)}
	out.nodes = slices.Clone(t.nodes)
	for i, n := range out.nodes {
		if n.rank < 0 {
			continue
		}
		if n.rank >= len(names) {
			return nil, fmt.Errorf("infer: rank %d of the tree has no name (%d names)", n.rank, len(names))
		}
		r := names[n.rank]
		if _, dup := out.byRank.get(r); dup {
			return nil, fmt.Errorf("infer: rank %d named twice", r)
		}
		out.nodes[i].rank = r
		out.byRank.set(r, i)
	}
	return out, nil
}

// Graft hangs sub, a tree inferred within one group of ranks, into t in
// place of the group's leader: sub's rank 0 (its root, as trees of the
// inference are rooted at their first rank) is rank names[0] of t, a
// leaf, and sub's rank i becomes names[i]. The leader keeps its place in
// t; the point where the group's other ranks branch from it in sub is put
// on its leaf edge at sub's distance (at most the edge's length), so that
// distances inside the group are sub's and those from the group to the
// rest of t run through the leader's edge. It is how discover composes
// the trees it inferred within bandwidth groups and between one rank per
// group.
func (t *Tree) Graft(sub *Tree, names []int) error {
	if len(sub.nodes) == 0 || sub.nodes[0].rank != 0 {
		return fmt.Errorf("infer: graft: the group's tree is not rooted at its rank 0")
	}
	if len(names) == 0 {
		return fmt.Errorf("infer: graft: no names")
	}
	x, ok := t.byRank.get(names[0])
	if !ok {
		return fmt.Errorf("infer: graft: rank %d is not in the tree", names[0])
	}
	for _, r := range sub.Ranks() {
		if r >= len(names) {
			return fmt.Errorf("infer: graft: rank %d of the group has no name (%d names)", r, len(names))
		}
		if r > 0 && t.Has(names[r]) {
			return fmt.Errorf("infer: graft: rank %d is already in the tree", names[r])
		}
	}
	if len(sub.nodes) == 1 {
		return nil // a group of one: its leader is all of it
	}
	// The leader's one neighbour in t, and the length of that edge.
	y, lt := t.nodes[x].parent, t.nodes[x].up
	if y < 0 {
		for i, n := range t.nodes {
			if n.parent == x {
				y, lt = i, n.up
				break
			}
		}
	}
	if y < 0 {
		return fmt.Errorf("infer: graft: rank %d is alone in the tree", names[0])
	}
	children := make([][]int, len(sub.nodes))
	for i, n := range sub.nodes {
		if n.parent >= 0 {
			children[n.parent] = append(children[n.parent], i)
		}
	}
	if len(children[0]) != 1 {
		return fmt.Errorf("infer: graft: the group's leader has %d neighbours", len(children[0]))
	}
	c := children[0][0]
	lc := sub.nodes[c].up
	mapped := make([]int, len(sub.nodes))
	mapped[0] = x
	extra := 0.0 // added to the edges below c when c becomes the new switch
	// The branching point: a new switch on the leader's edge, or the
	// switch at its end when it lies that far (no copy of it at distance
	// zero).
	at := func(d float64) int {
		if d >= lt && t.nodes[y].rank < 0 {
			return y
		}
		return t.splitEdge(x, y, d)
	}
	if sub.nodes[c].rank < 0 {
		d := math.Min(lc, lt)
		mapped[c] = at(d)
		extra = lc - d
	} else {
		// Two ranks: the branching point is somewhere on the path
		// between them; put it halfway, within the leader's edge.
		d := math.Min(lc/2, lt)
		t.attach(at(d), names[sub.nodes[c].rank], lc-d)
		return nil
	}
	queue := []int{c}
	for k := 0; k < len(queue); k++ {
		u := queue[k]
		for _, v := range children[u] {
			up := sub.nodes[v].up
			if u == c {
				up += extra
			}
			if r := sub.nodes[v].rank; r >= 0 {
				t.attach(mapped[u], names[r], up)
				continue
			}
			mapped[v] = len(t.nodes)
			t.nodes = append(t.nodes, node{rank: -1, parent: mapped[u], up: up})
			t.depths = append(t.depths, t.depths[mapped[u]]+1)
			queue = append(queue, v)
		}
	}
	return nil
}

// TreeOf builds a tree from its nodes: node i holds rank[i] (-1 for a
// switch), hangs from parent[i] (-1 for node 0 alone, the root, which
// must be a rank) over an edge of up[i] seconds. It is how a caller
// states a tree's shape that it knows from elsewhere (discover: the
// swarm's bandwidth tree between groups), checked as a received tree is.
func TreeOf(rank, parent []int, up []float64) (*Tree, error) {
	if len(rank) == 0 || len(parent) != len(rank) || len(up) != len(rank) {
		return nil, fmt.Errorf("infer: tree of %d ranks, %d parents and %d lengths", len(rank), len(parent), len(up))
	}
	if rank[0] < 0 {
		return nil, fmt.Errorf("infer: the root of a tree must be a rank")
	}
	b := make([]byte, 0, EncodedSize(len(rank)))
	for i := range rank {
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(rank[i])))
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(parent[i])))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(up[i]))
	}
	return UnmarshalTree(b)
}
