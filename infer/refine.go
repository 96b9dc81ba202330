package infer

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// Measurement is one pair measured during an inference: initiator A,
// responder B, and the result of seed 002's protocol.
type Measurement struct {
	A, B int
	RTT  RTT
}

// Refine re-places the leaves of t where every measurement taken during
// the inference fits them better than where procedure add put them, and
// returns the refined tree and the number of leaves it moved.
//
// Procedure add places a host once, from the hosts in the tree at that
// moment, and never revisits it. Under real noise that leaves two kinds
// of error: the first host of a switch is hung from the switch above
// (correctly, at the time), and when its switch-mates later create their
// switch on another edge it stays where it was; and a host placed from
// one measurement still carrying a slow spell sits microseconds off. By
// the end, each host has been measured by the hosts added after it as
// well as by itself, so rank 0 knows every pair of the inference: each
// leaf is detached and hung at the point of the tree (a switch, or a new
// one inside an edge) where its measured one-way distances fit best in
// absolute deviation (relative deviation under jitter proportional to
// the path), a fit one slow pair does not move. A leaf moves only
// when the new place fits clearly better, so that without noise, where
// add's tree fits exactly, nothing changes.
func Refine(t *Tree, ms []Measurement) (*Tree, int) {
	return refine(t, ms, nil)
}

// RefineLeaves is Refine re-placing only the given leaves and the leaves
// measured with one of them. After a few more pairs (Unseen's) only
// those can fit better elsewhere: a leaf moved next to its socket-mates
// changes where their partners fit (racks-16x2x8-1gbe, seed 7: a rank
// measured with a moved one stayed beside its socket until re-placed),
// and re-placing all 4,096 leaves of a blind discovery cost 5 s of CPU a
// time.
func RefineLeaves(t *Tree, ms []Measurement, leaves []int) (*Tree, int) {
	given := make(map[int]bool, len(leaves))
	for _, h := range leaves {
		given[h] = true
	}
	only := make(map[int]bool, len(leaves))
	for _, m := range ms {
		if given[m.A] || given[m.B] {
			only[m.A], only[m.B] = true, true
		}
	}
	for h := range given {
		only[h] = true
	}
	return refine(t, ms, only)
}

func refine(t *Tree, ms []Measurement, only map[int]bool) (*Tree, int) {
	g := newAdjTree(t)
	peers := map[int]map[int]RTT{}
	add := func(a, b int, r RTT) {
		if peers[a] == nil {
			peers[a] = map[int]RTT{}
		}
		if old, ok := peers[a][b]; !ok || r.Min < old.Min {
			peers[a][b] = r
		}
	}
	for _, m := range ms {
		if t.Has(m.A) && t.Has(m.B) && m.A != m.B && m.RTT.Min > 0 {
			add(m.A, m.B, m.RTT)
			add(m.B, m.A, m.RTT)
		}
	}
	moved := 0
	relative := !Additive(ms)
	for _, h := range t.Ranks() {
		p := peers[h]
		if only != nil && !only[h] || len(p) < 3 || len(g.adj[g.byRank.at(h)]) != 1 {
			continue
		}
		if g.replace(h, p, relative) {
			moved++
		}
	}
	rt := g.tree(t.nodes[0].rank)
	return rt.contractUnsupported(ms), moved
}

// contractUnsupported merges into its parent every inner switch that the
// measurements do not support. Merging switch c into its parent p over an
// edge of length L, with L added to each of c's other edges, leaves every
// distance as it was except those of the pairs that branch at c, which
// grow by 2L. If those pairs fit at least as well that way, in summed
// absolute deviation and within a quarter of their spreads, c is a copy of
// p that noise made (add splits a switch into near copies a fraction of a
// microsecond apart); a real switch below a real link puts its pairs 2L
// closer than the switch above, and stays.
func (t *Tree) contractUnsupported(ms []Measurement) *Tree {
	n := len(t.nodes)
	children := make([][]int, n)
	for i, x := range t.nodes {
		if x.parent >= 0 {
			children[x.parent] = append(children[x.parent], i)
		}
	}
	// Subtree intervals in a depth-first order of the rooted tree.
	in, out := make([]int, n), make([]int, n)
	clock := 0
	var walk func(int)
	walk = func(u int) {
		in[u] = clock
		clock++
		for _, v := range children[u] {
			walk(v)
		}
		out[u] = clock
	}
	walk(0)
	under := func(x, c int) bool { return in[c] <= in[x] && in[x] < out[c] }
	type pm struct {
		a, b      int     // nodes
		res, half float64 // measured minus tree one-way distance; half the spread
	}
	var pairs []pm
	for _, m := range ms {
		a, okA := t.byRank.get(m.A)
		b, okB := t.byRank.get(m.B)
		if !okA || !okB || a == b || !(m.RTT.Min > 0) {
			continue
		}
		pairs = append(pairs, pm{a, b, m.RTT.Min/2 - t.nodeDistance(a, b), (m.RTT.Upper() - m.RTT.Min) / 2})
	}
	drop := make([]bool, n)
	for c := 1; c < n; c++ {
		p := t.nodes[c].parent
		if t.nodes[c].rank >= 0 || t.nodes[p].rank >= 0 {
			continue // only edges between two switches
		}
		L := t.nodes[c].up
		with, without, margin := 0.0, 0.0, 1e-12
		branching := 0
		for _, q := range pairs {
			if !under(q.a, c) || !under(q.b, c) {
				continue
			}
			same := false
			for _, k := range children[c] {
				if under(q.a, k) && under(q.b, k) {
					same = true
					break
				}
			}
			if same {
				continue
			}
			branching++
			with += math.Abs(q.res)
			without += math.Abs(q.res - 2*L)
			margin += q.half / 4
		}
		if branching > 0 && without <= with+margin {
			drop[c] = true
		}
	}
	g := newAdjTree(t)
	into := make([]int, n) // where a merged switch went
	for i := range into {
		into[i] = i
	}
	// Parents come before children in t's numbering, so a parent merged
	// away has already pointed into its own parent.
	for c := 1; c < n; c++ {
		if drop[c] {
			p := into[t.nodes[c].parent]
			g.merge(c, p)
			into[c] = p
		}
	}
	return g.tree(t.nodes[0].rank)
}

// adjTree is an unrooted tree with undirected weighted edges, which
// detaching and re-hanging leaves is easier on than parent pointers.
// Neighbours are short slices, not maps: Refine re-places every leaf of a
// 4,096-rank tree, and walking maps was 90% of a blind discovery's CPU.
type adjTree struct {
	rank   []int // -1 for a switch; -2 for a node removed by contraction
	adj    [][]halfEdge
	byRank rankIndex
	// seen and at are scratch for replace's walks, one slot per node,
	// left at -1 between calls.
	seen, at []int
}

// halfEdge is an edge seen from one end: the other end and the length.
type halfEdge struct {
	to int
	l  float64
}

func newAdjTree(t *Tree) *adjTree {
	g := &adjTree{byRank: rankIndex{}, rank: make([]int, len(t.nodes)), adj: make([][]halfEdge, len(t.nodes))}
	for i, n := range t.nodes {
		g.rank[i] = n.rank
		if n.rank >= 0 {
			g.byRank.set(n.rank, i)
		}
	}
	for i, n := range t.nodes {
		if n.parent >= 0 {
			g.adj[i] = append(g.adj[i], halfEdge{n.parent, n.up})
			g.adj[n.parent] = append(g.adj[n.parent], halfEdge{i, n.up})
		}
	}
	return g
}

// length is the length of edge x-y, which must exist.
func (g *adjTree) length(x, y int) float64 {
	for _, e := range g.adj[x] {
		if e.to == y {
			return e.l
		}
	}
	panic("infer: adjTree: no such edge")
}

// link sets edge x-y to length l, adding it if missing.
func (g *adjTree) link(x, y int, l float64) {
	g.half(x, y, l)
	g.half(y, x, l)
}

func (g *adjTree) half(x, y int, l float64) {
	for i, e := range g.adj[x] {
		if e.to == y {
			g.adj[x][i].l = l
			return
		}
	}
	g.adj[x] = append(g.adj[x], halfEdge{y, l})
}

// unlink removes edge x-y, keeping the order of the other neighbours.
func (g *adjTree) unlink(x, y int) {
	g.adj[x] = slices.DeleteFunc(g.adj[x], func(e halfEdge) bool { return e.to == y })
	g.adj[y] = slices.DeleteFunc(g.adj[y], func(e halfEdge) bool { return e.to == x })
}

// scratch returns seen and at with a slot per node, every slot -1.
func (g *adjTree) scratch() (seen, at []int) {
	for len(g.seen) < len(g.adj) {
		g.seen = append(g.seen, -1)
		g.at = append(g.at, -1)
	}
	return g.seen, g.at
}

// distsWithin returns the distance from node s to every node of nodes (a
// connected part of the tree holding s, which at numbers: at[x] is x's
// index in nodes, -1 outside), by index. Paths between nodes of a
// connected part stay in it, so each distance is the sum a search over
// the whole tree gives, in the same order.
func (g *adjTree) distsWithin(s int, nodes, at []int) []float64 {
	d := make([]float64, len(nodes))
	for i := range d {
		d[i] = math.Inf(1)
	}
	d[at[s]] = 0
	stack := []int{s}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range g.adj[x] {
			if k := at[e.to]; k >= 0 && math.IsInf(d[k], 1) {
				d[k] = d[at[x]] + e.l
				stack = append(stack, e.to)
			}
		}
	}
	return d
}

// replace detaches leaf h and hangs it again where its measurements fit
// best (in relative deviation when relative, see below); it reports whether
// h moved.
func (g *adjTree) replace(h int, p map[int]RTT, relative bool) bool {
	hn := g.byRank.at(h)
	s, oldLen := g.adj[hn][0].to, g.adj[hn][0].l
	ids := make([]int, 0, len(p))
	for j := range p {
		ids = append(ids, j)
	}
	sort.Ints(ids)
	m := make([]float64, len(ids))
	spread := make([]float64, len(ids))
	// Under jitter proportional to the path (relative), a pair's error
	// grows with its distance: the best of the rounds of a 20 us round
	// trip misses by tens of nanoseconds, a 0.6 us one between two cores
	// by one. Unweighted, the far pairs outvote the near ones, and through
	// a tree whose far edges carry such errors they pull a rank out of
	// its socket (two-level-1024, noise seed 1: 226 ranks moved, 30 hosts
	// with sockets wrong, and the next host's first rank placed from that
	// tree; socket level NMI 0.923). Each residual is then weighed by the
	// inverse of its distance: the fit is in relative deviation. Under CPU
	// noise in absolute time (Additive) the weights stay equal.
	var w []float64
	if relative {
		w = make([]float64, len(ids))
	}
	for k, j := range ids {
		m[k] = p[j].Min / 2
		spread[k] = (p[j].Upper() - p[j].Min) / 2
		if relative {
			w[k] = 1 / math.Max(m[k], 1e-9)
		}
	}
	// Detach. The candidate places are the nodes and edges between h's
	// peers, where the branching point of any two of them lies, and only
	// distances from the peers to those nodes are needed: they are taken
	// within that part of the tree, whose size follows the peers, not the
	// tree.
	g.unlink(hn, s)
	on := g.steiner(s, ids)
	if len(on) < 2 { // no peer apart from s: nothing to fit
		g.link(hn, s, oldLen)
		return false
	}
	_, at := g.scratch()
	for k, u := range on {
		at[u] = k
	}
	defer func() {
		for _, u := range on {
			at[u] = -1
		}
	}()
	d := make([][]float64, len(ids))
	for k, j := range ids {
		d[k] = g.distsWithin(g.byRank.at(j), on, at)
	}
	// cost of hanging h at offset t from u on edge (u, v) of length L.
	res := make([]float64, len(ids))
	med := newMedianSorter(w, len(ids))
	cost := func(u, v int, L, t float64) (float64, float64) {
		iu, iv := at[u], at[v]
		for k := range ids {
			var D float64
			if d[k][iv] < d[k][iu] {
				D = L - t + d[k][iv]
			} else {
				D = t + d[k][iu]
			}
			res[k] = m[k] - D
		}
		l := math.Max(0, med.median(res))
		c := 0.0
		for k, r := range res {
			c += weight(w, k) * math.Abs(r-l)
		}
		return c, l
	}
	// The current place: at s (t = 0 on any of its edges, whose other end
	// is on the candidates' part of the tree: s has a peer beyond each of
	// its edges or is where the part ends, with one edge into it).
	var any halfEdge
	for _, e := range g.adj[s] {
		if at[e.to] >= 0 {
			any = e
			break
		}
	}
	oldCost, _ := cost(s, any.to, any.l, 0)
	need := margin(spread, w)
	type place struct {
		u, v    int
		i       int // position on the edge in steps: 0 is u, steps is v
		L, t, l float64
		c       float64
	}
	const steps = 16
	best := place{c: math.Inf(1)}
	for _, u := range on {
		for _, e := range g.adj[u] {
			v, L := e.to, e.l
			if at[v] < 0 || v < u {
				continue
			}
			for i := 0; i <= steps; i++ {
				t := L * float64(i) / steps
				if (i == 0 && g.rank[u] >= 0) || (i == steps && g.rank[v] >= 0) {
					continue // a host cannot be a switch
				}
				c, l := cost(u, v, L, t)
				// Prefer existing switches: a new one must pay for itself.
				if i > 0 && i < steps {
					c += need
				}
				if c < best.c {
					best = place{u: u, v: v, i: i, L: L, t: t, l: l, c: c}
				}
			}
		}
	}
	if !(best.c < oldCost-need) {
		g.link(hn, s, oldLen)
		return false
	}
	var x int
	switch best.i { // by step, not offset: a zero-length edge has t = 0 = L
	case 0:
		x = best.u
	case steps:
		x = best.v
	default:
		x = len(g.adj)
		g.rank = append(g.rank, -1)
		g.adj = append(g.adj, nil)
		g.unlink(best.u, best.v)
		g.link(x, best.u, best.t)
		g.link(x, best.v, best.L-best.t)
	}
	g.link(hn, x, best.l)
	// Only now may h's old switch go: the new place may be on its edges.
	g.contract(s)
	return true
}

// margin is how much better, in summed (weighted) absolute deviation, a
// new place must fit: a quarter of the pairs' (weighted) spreads, so that
// noise alone does not move a leaf.
func margin(spread, w []float64) float64 {
	s := 1e-12
	for k, v := range spread {
		s += weight(w, k) * v
	}
	return s / 4
}

// weight is w[k], or 1 when w is nil (equal weights).
func weight(w []float64, k int) float64 {
	if w == nil {
		return 1
	}
	return w[k]
}

// medianSorter finds weighted medians of values that move a little between
// calls: replace asks for one at every place it tries, and along an edge
// each peer's residual shifts by the same step, so the order of the last
// call is nearly the order of the next (an insertion sort then costs a
// pass). Far jumps (another edge) fall back to a full sort.
type medianSorter struct {
	v     []xw
	total float64
}

type xw struct {
	x, w float64
	k    int // index of the value in the caller's slice
}

func newMedianSorter(w []float64, n int) *medianSorter {
	s := &medianSorter{v: make([]xw, n)}
	for k := range s.v {
		s.v[k] = xw{w: weight(w, k), k: k}
		s.total += s.v[k].w
	}
	return s
}

// median is a value v of x that minimises the sum of w_k |x_k - v|: the
// first in increasing order past half the weight; with equal weights the
// upper median, x[n/2] sorted. Equal values may come in any order: the
// value returned is the same.
func (s *medianSorter) median(x []float64) float64 {
	v := s.v
	for i := range v {
		v[i].x = x[v[i].k]
	}
	shifts := 0
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j].x < v[j-1].x; j-- {
			v[j], v[j-1] = v[j-1], v[j]
			shifts++
		}
		if shifts > 4*len(v) {
			slices.SortFunc(v, func(a, b xw) int { return cmp.Compare(a.x, b.x) })
			break
		}
	}
	acc := 0.0
	for _, e := range v {
		acc += e.w
		if 2*acc > s.total {
			return e.x
		}
	}
	return v[len(v)-1].x
}

// steiner lists, in increasing order, the nodes on paths between root and
// the peers' nodes. It climbs from each peer towards root along the
// parents of one search from root, which it stops once every peer is
// found.
func (g *adjTree) steiner(root int, peers []int) []int {
	parent, flag := g.scratch()
	want := 0
	for _, j := range peers {
		if x := g.byRank.at(j); x != root {
			want++
		}
	}
	order := []int{root}
	parent[root] = root
	found := 0
	// flag is 1 on a peer's node before the search, 2 on a node listed
	// after it; -1 again on return.
	for _, j := range peers {
		flag[g.byRank.at(j)] = 1
	}
	for k := 0; k < len(order) && found < want; k++ {
		x := order[k]
		for _, e := range g.adj[x] {
			if parent[e.to] == -1 {
				parent[e.to] = x
				order = append(order, e.to)
				if flag[e.to] == 1 {
					found++
				}
			}
		}
	}
	for _, j := range peers {
		flag[g.byRank.at(j)] = -1
	}
	on := []int{root}
	flag[root] = 2
	for _, j := range peers {
		for x := g.byRank.at(j); flag[x] != 2 && parent[x] != -1; x = parent[x] {
			flag[x] = 2
			on = append(on, x)
		}
	}
	for _, x := range order {
		parent[x] = -1
	}
	for _, x := range on {
		flag[x] = -1
	}
	slices.Sort(on)
	return on
}

// merge folds switch c into its neighbour switch p: the edge between them
// disappears and c's other edges hang from p, longer by its length.
func (g *adjTree) merge(c, p int) {
	L := g.length(c, p)
	g.unlink(c, p)
	for _, e := range g.adj[c] {
		g.adj[e.to] = slices.DeleteFunc(g.adj[e.to], func(f halfEdge) bool { return f.to == c })
		g.link(e.to, p, e.l+L)
	}
	g.adj[c] = nil
	g.rank[c] = -2
}

// contract removes switch s if it is left with two neighbours, joining
// their edges.
func (g *adjTree) contract(s int) {
	if g.rank[s] != -1 || len(g.adj[s]) != 2 {
		return
	}
	a, b := g.adj[s][0], g.adj[s][1]
	g.unlink(a.to, s)
	g.unlink(b.to, s)
	g.link(a.to, b.to, a.l+b.l)
	g.adj[s] = nil
	g.rank[s] = -2
}

// tree converts back to a Tree rooted at rank root's node, nodes numbered
// breadth first.
func (g *adjTree) tree(root int) *Tree {
	t := &Tree{byRank: rankIndex{}, nodes: make([]node, 0, len(g.adj))}
	start := g.byRank.at(root)
	id := make([]int, len(g.adj))
	for i := range id {
		id[i] = -1
	}
	id[start] = 0
	t.nodes = append(t.nodes, node{rank: g.rank[start], parent: -1})
	t.byRank.set(root, 0)
	queue := []int{start}
	var nbrs []halfEdge
	for k := 0; k < len(queue); k++ {
		x := queue[k]
		nbrs = append(nbrs[:0], g.adj[x]...)
		slices.SortFunc(nbrs, func(a, b halfEdge) int { return a.to - b.to })
		for _, e := range nbrs {
			y := e.to
			if id[y] >= 0 {
				continue
			}
			id[y] = len(t.nodes)
			t.nodes = append(t.nodes, node{rank: g.rank[y], parent: id[x], up: e.l})
			if g.rank[y] >= 0 {
				t.byRank.set(g.rank[y], id[y])
			}
			queue = append(queue, y)
		}
	}
	t.computeDepths()
	return t
}
