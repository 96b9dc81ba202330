package infer

import (
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
		if len(p) < 3 || len(g.adj[g.byRank[h]]) != 1 {
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
		a, okA := t.byRank[m.A]
		b, okB := t.byRank[m.B]
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
type adjTree struct {
	rank   []int // -1 for a switch; -2 for a node removed by contraction
	adj    []map[int]float64
	byRank map[int]int
}

func newAdjTree(t *Tree) *adjTree {
	g := &adjTree{byRank: map[int]int{}}
	for i, n := range t.nodes {
		g.rank = append(g.rank, n.rank)
		g.adj = append(g.adj, map[int]float64{})
		if n.rank >= 0 {
			g.byRank[n.rank] = i
		}
	}
	for i, n := range t.nodes {
		if n.parent >= 0 {
			g.adj[i][n.parent] = n.up
			g.adj[n.parent][i] = n.up
		}
	}
	return g
}

// dists returns the distance from node s to every node.
func (g *adjTree) dists(s int) []float64 {
	d := make([]float64, len(g.adj))
	for i := range d {
		d[i] = math.Inf(1)
	}
	d[s] = 0
	stack := []int{s}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for y, l := range g.adj[x] {
			if math.IsInf(d[y], 1) {
				d[y] = d[x] + l
				stack = append(stack, y)
			}
		}
	}
	return d
}

// replace detaches leaf h and hangs it again where its measurements fit
// best (in relative deviation when relative, see below); it reports whether
// h moved.
func (g *adjTree) replace(h int, p map[int]RTT, relative bool) bool {
	hn := g.byRank[h]
	var s int
	var oldLen float64
	for y, l := range g.adj[hn] {
		s, oldLen = y, l
	}
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
	// Detach, computing distances in the tree without h.
	delete(g.adj[hn], s)
	delete(g.adj[s], hn)
	d := make([][]float64, len(ids))
	for k, j := range ids {
		d[k] = g.dists(g.byRank[j])
	}
	// cost of hanging h at offset t from u on edge (u, v) of length L.
	res := make([]float64, len(ids))
	cost := func(u, v int, L, t float64) (float64, float64) {
		for k := range ids {
			var D float64
			if d[k][v] < d[k][u] {
				D = L - t + d[k][v]
			} else {
				D = t + d[k][u]
			}
			res[k] = m[k] - D
		}
		l := math.Max(0, weightedMedian(res, w))
		c := 0.0
		for k, r := range res {
			c += weight(w, k) * math.Abs(r-l)
		}
		return c, l
	}
	// The current place: at s (t = 0 on any of its edges).
	var any int
	for y := range g.adj[s] {
		any = y
		break
	}
	oldCost, _ := cost(s, any, g.adj[s][any], 0)
	type place struct {
		u, v    int
		i       int // position on the edge in steps: 0 is u, steps is v
		L, t, l float64
		c       float64
	}
	const steps = 16
	best := place{c: math.Inf(1)}
	// Candidate places: the nodes and edges between h's peers, where the
	// branching point of any two of them lies.
	onSteiner := g.steiner(s, ids)
	for u := range g.adj {
		if !onSteiner[u] {
			continue
		}
		for v, L := range g.adj[u] {
			if !onSteiner[v] || v < u {
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
					c += margin(spread, w)
				}
				if c < best.c {
					best = place{u: u, v: v, i: i, L: L, t: t, l: l, c: c}
				}
			}
		}
	}
	if !(best.c < oldCost-margin(spread, w)) {
		g.adj[hn][s], g.adj[s][hn] = oldLen, oldLen
		return false
	}
	var at int
	switch best.i { // by step, not offset: a zero-length edge has t = 0 = L
	case 0:
		at = best.u
	case steps:
		at = best.v
	default:
		at = len(g.adj)
		g.rank = append(g.rank, -1)
		g.adj = append(g.adj, map[int]float64{})
		delete(g.adj[best.u], best.v)
		delete(g.adj[best.v], best.u)
		g.adj[at][best.u], g.adj[best.u][at] = best.t, best.t
		g.adj[at][best.v], g.adj[best.v][at] = best.L-best.t, best.L-best.t
	}
	g.adj[hn][at], g.adj[at][hn] = best.l, best.l
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

// weightedMedian is a value v of x that minimises the sum of w_k |x_k - v|:
// the first in increasing order past half the weight; with equal weights
// (w nil) the upper median, x[n/2] sorted.
func weightedMedian(x, w []float64) float64 {
	if w == nil {
		sorted := slices.Clone(x)
		sort.Float64s(sorted)
		return sorted[len(sorted)/2]
	}
	idx := make([]int, len(x))
	total := 0.0
	for k := range idx {
		idx[k] = k
		total += w[k]
	}
	sort.Slice(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	acc := 0.0
	for _, k := range idx {
		acc += w[k]
		if 2*acc > total {
			return x[k]
		}
	}
	return x[idx[len(idx)-1]]
}

// steiner marks the nodes on paths between root and the peers' nodes.
func (g *adjTree) steiner(root int, peers []int) []bool {
	term := make([]bool, len(g.adj))
	for _, j := range peers {
		term[g.byRank[j]] = true
	}
	on := make([]bool, len(g.adj))
	parent := make([]int, len(g.adj))
	for i := range parent {
		parent[i] = -2
	}
	order := []int{root}
	parent[root] = -1
	for k := 0; k < len(order); k++ {
		x := order[k]
		for y := range g.adj[x] {
			if parent[y] == -2 {
				parent[y] = x
				order = append(order, y)
			}
		}
	}
	for k := len(order) - 1; k >= 0; k-- {
		x := order[k]
		if term[x] {
			on[x] = true
		}
		if on[x] && parent[x] >= 0 {
			on[parent[x]] = true
		}
	}
	on[root] = true
	return on
}

// merge folds switch c into its neighbour switch p: the edge between them
// disappears and c's other edges hang from p, longer by its length.
func (g *adjTree) merge(c, p int) {
	L := g.adj[c][p]
	delete(g.adj[p], c)
	delete(g.adj[c], p)
	for y, l := range g.adj[c] {
		delete(g.adj[y], c)
		g.adj[y][p], g.adj[p][y] = l+L, l+L
	}
	g.adj[c] = map[int]float64{}
	g.rank[c] = -2
}

// contract removes switch s if it is left with two neighbours, joining
// their edges.
func (g *adjTree) contract(s int) {
	if g.rank[s] != -1 || len(g.adj[s]) != 2 {
		return
	}
	var ns []int
	var ls []float64
	for y, l := range g.adj[s] {
		ns, ls = append(ns, y), append(ls, l)
	}
	delete(g.adj[ns[0]], s)
	delete(g.adj[ns[1]], s)
	g.adj[ns[0]][ns[1]] = ls[0] + ls[1]
	g.adj[ns[1]][ns[0]] = ls[0] + ls[1]
	g.adj[s] = map[int]float64{}
	g.rank[s] = -2
}

// tree converts back to a Tree rooted at rank root's node, nodes numbered
// breadth first.
func (g *adjTree) tree(root int) *Tree {
	t := &Tree{byRank: map[int]int{}}
	start := g.byRank[root]
	id := map[int]int{start: 0}
	t.nodes = append(t.nodes, node{rank: g.rank[start], parent: -1})
	t.byRank[root] = 0
	queue := []int{start}
	for k := 0; k < len(queue); k++ {
		x := queue[k]
		nbrs := make([]int, 0, len(g.adj[x]))
		for y := range g.adj[x] {
			nbrs = append(nbrs, y)
		}
		sort.Ints(nbrs)
		for _, y := range nbrs {
			if _, seen := id[y]; seen {
				continue
			}
			id[y] = len(t.nodes)
			t.nodes = append(t.nodes, node{rank: g.rank[y], parent: id[x], up: g.adj[x][y]})
			if g.rank[y] >= 0 {
				t.byRank[g.rank[y]] = id[y]
			}
			queue = append(queue, y)
		}
	}
	t.computeDepths()
	return t
}
