package topo

import (
	"fmt"
	"math"
)

// LevelOf returns the first level called name, or nil.
func (t *Topology) LevelOf(name string) *Level {
	for i := range t.Levels {
		if t.Levels[i].Name == name {
			return &t.Levels[i]
		}
	}
	return nil
}

// GroupOf returns the index of the group of level that holds rank, or -1.
func (l *Level) GroupOf(rank int) int {
	for gi, g := range l.Groups {
		for _, r := range g {
			if r == rank {
				return gi
			}
		}
	}
	return -1
}

// GroupOf returns the group index of rank in the level called level, or an
// error naming what is missing.
func (t *Topology) GroupOf(level string, rank int) (int, error) {
	l := t.LevelOf(level)
	if l == nil {
		return -1, fmt.Errorf("topology has no level %q", level)
	}
	g := l.GroupOf(rank)
	if g < 0 {
		return -1, fmt.Errorf("level %q: rank %d is in no group", level, rank)
	}
	return g, nil
}

// Labels returns the group index of every rank, the form metrics work on.
func (l *Level) Labels(size int) []int {
	lab := make([]int, size)
	for i := range lab {
		lab[i] = -1
	}
	for gi, g := range l.Groups {
		for _, r := range g {
			if r >= 0 && r < size {
				lab[r] = gi
			}
		}
	}
	return lab
}

// Paths answers path queries on a validated tree in O(path length) each,
// after O(nodes) set-up: the tree is rooted at node 0 and each node keeps its
// parent, the edge to it and its depth.
type Paths struct {
	tree     *Tree
	parent   []int
	upEdge   []int
	depth    []int
	rankNode []int
}

// Paths indexes t's tree for path queries; t must have a tree and be valid.
func (t *Topology) Paths() (*Paths, error) {
	if t.Tree == nil {
		return nil, fmt.Errorf("topology has no tree")
	}
	if err := t.Tree.Validate(t.Size); err != nil {
		return nil, fmt.Errorf("tree: %w", err)
	}
	return newPaths(t.Tree, t.Size), nil
}

func newPaths(tr *Tree, size int) *Paths {
	n := len(tr.Nodes)
	idx := make(map[string]int, n)
	p := &Paths{tree: tr, parent: make([]int, n), upEdge: make([]int, n), depth: make([]int, n), rankNode: make([]int, size)}
	for i, nd := range tr.Nodes {
		idx[nd.ID] = i
		if nd.Rank != nil {
			p.rankNode[*nd.Rank] = i
		}
	}
	type half struct{ to, edge int }
	adj := make([][]half, n)
	for ei, e := range tr.Edges {
		a, b := idx[e.A], idx[e.B]
		adj[a] = append(adj[a], half{b, ei})
		adj[b] = append(adj[b], half{a, ei})
	}
	for i := range p.parent {
		p.parent[i] = -1
		p.upEdge[i] = -1
	}
	seen := make([]bool, n)
	stack := []int{0}
	seen[0] = true
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, h := range adj[v] {
			if !seen[h.to] {
				seen[h.to] = true
				p.parent[h.to] = v
				p.upEdge[h.to] = h.edge
				p.depth[h.to] = p.depth[v] + 1
				stack = append(stack, h.to)
			}
		}
	}
	return p
}

func (p *Paths) checkRank(r int) error {
	if r < 0 || r >= len(p.rankNode) {
		return fmt.Errorf("rank %d out of range [0,%d)", r, len(p.rankNode))
	}
	return nil
}

// PathEdges returns the indices into Tree.Edges of the path from rank a to
// rank b, in order from a; empty when a == b.
func (p *Paths) PathEdges(a, b int) ([]int, error) {
	if err := p.checkRank(a); err != nil {
		return nil, err
	}
	if err := p.checkRank(b); err != nil {
		return nil, err
	}
	u, v := p.rankNode[a], p.rankNode[b]
	var up, down []int
	for p.depth[u] > p.depth[v] {
		up = append(up, p.upEdge[u])
		u = p.parent[u]
	}
	for p.depth[v] > p.depth[u] {
		down = append(down, p.upEdge[v])
		v = p.parent[v]
	}
	for u != v {
		up = append(up, p.upEdge[u])
		down = append(down, p.upEdge[v])
		u, v = p.parent[u], p.parent[v]
	}
	for i := len(down) - 1; i >= 0; i-- {
		up = append(up, down[i])
	}
	return up, nil
}

// SharesLink reports whether the tree paths a->b and c->d have an edge in
// common (docs/topology-format.md's definition of two flows sharing a link).
func (p *Paths) SharesLink(a, b, c, d int) (bool, error) {
	return pathsIntersect(p.PathEdges, a, b, c, d)
}

// pathsIntersect tells whether path(a, b) and path(c, d) have an element
// in common.
func pathsIntersect(path func(x, y int) ([]int, error), a, b, c, d int) (bool, error) {
	e1, err := path(a, b)
	if err != nil {
		return false, err
	}
	e2, err := path(c, d)
	if err != nil {
		return false, err
	}
	on := make(map[int]bool, len(e1))
	for _, e := range e1 {
		on[e] = true
	}
	for _, e := range e2 {
		if on[e] {
			return true, nil
		}
	}
	return false, nil
}

// PathLatency is the one-way latency predicted for a->b: the sum of the
// edge latencies on the tree path, in path order (as PathEdges lists
// them). It walks the path without building it: the report asks for
// every pair of ranks (8.4M at 4,096), and two slices per pair were most
// of its cost.
func (p *Paths) PathLatency(a, b int) (float64, error) {
	if err := p.checkRank(a); err != nil {
		return 0, err
	}
	if err := p.checkRank(b); err != nil {
		return 0, err
	}
	lat := func(x int) float64 { return p.tree.Edges[p.upEdge[x]].LatencyS }
	var stack [64]int
	down := stack[:0] // b's side, from b up; summed last, from the top
	u, v := p.rankNode[a], p.rankNode[b]
	s := 0.0
	for p.depth[u] > p.depth[v] {
		s += lat(u)
		u = p.parent[u]
	}
	for p.depth[v] > p.depth[u] {
		down = append(down, v)
		v = p.parent[v]
	}
	for u != v {
		s += lat(u)
		down = append(down, v)
		u, v = p.parent[u], p.parent[v]
	}
	for i := len(down) - 1; i >= 0; i-- {
		s += lat(down[i])
	}
	return s, nil
}

// MinBandwidthOnPath is the smallest bandwidth_Bps on the path a->b (the
// bottleneck, as seed 002 Sect. 6 answers bandwidth queries). ok is false
// when no edge on the path has a bandwidth (or a == b).
func (p *Paths) MinBandwidthOnPath(a, b int) (bw float64, ok bool, err error) {
	es, err := p.PathEdges(a, b)
	if err != nil {
		return 0, false, err
	}
	bw = math.Inf(1)
	for _, e := range es {
		if x := p.tree.Edges[e].Bandwidth; x != nil && *x < bw {
			bw, ok = *x, true
		}
	}
	if !ok {
		return 0, false, nil
	}
	return bw, true, nil
}

// PathEdges is Paths().PathEdges for a single query.
func (t *Topology) PathEdges(a, b int) ([]int, error) {
	p, err := t.Paths()
	if err != nil {
		return nil, err
	}
	return p.PathEdges(a, b)
}

// SharesLink is Paths().SharesLink for a single query; use Paths for many.
func (t *Topology) SharesLink(a, b, c, d int) (bool, error) {
	p, err := t.Paths()
	if err != nil {
		return false, err
	}
	return p.SharesLink(a, b, c, d)
}

// PathLatency is Paths().PathLatency for a single query.
func (t *Topology) PathLatency(a, b int) (float64, error) {
	p, err := t.Paths()
	if err != nil {
		return 0, err
	}
	return p.PathLatency(a, b)
}

// MinBandwidthOnPath is Paths().MinBandwidthOnPath for a single query.
func (t *Topology) MinBandwidthOnPath(a, b int) (float64, bool, error) {
	p, err := t.Paths()
	if err != nil {
		return 0, false, err
	}
	return p.MinBandwidthOnPath(a, b)
}

// SharesLinkDirected reports whether the paths a->b and c->d cross a common
// edge in the same direction: on full-duplex links only such flows compete
// (the stricter reading of "share a link" that simulators and seed 001 use).
func (p *Paths) SharesLinkDirected(a, b, c, d int) (bool, error) {
	return pathsIntersect(p.directedPath, a, b, c, d)
}

// directedPath returns the path a->b as edge index+1 when the edge is
// crossed from its A end to its B end, and -(index+1) the other way.
func (p *Paths) directedPath(a, b int) ([]int, error) {
	es, err := p.PathEdges(a, b)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(es))
	cur := p.tree.Nodes[p.rankNode[a]].ID
	for i, e := range es {
		ed := p.tree.Edges[e]
		if ed.A == cur {
			out[i], cur = e+1, ed.B
		} else {
			out[i], cur = -(e + 1), ed.A
		}
	}
	return out, nil
}
