package platform

import (
	"math"
	"slices"
	"strings"
)

// Routing rule (docs/platform-format.md): the lowest total latency; among equal
// latencies the fewest hops; among those the path whose sequence of switch
// names, read from the endpoint whose name sorts first, is lexicographically
// smallest. Reading from the smaller endpoint makes routes symmetric: the
// route from b to a is the route from a to b reversed. Latencies are compared
// in whole picoseconds so that 2us+2us ties with 4us despite float rounding.

// spTree is the routing tree from one source switch.
type spTree struct {
	latPS []int64
	hops  []int
	nodes [][]int // switches on the path from the source, both ends included
	links [][]int // links on that path
}

func picoseconds(s float64) int64 { return int64(math.Round(s * 1e12)) }

// labelLess orders two labels; nameRank[s] is switch s's position in the
// order of switch names (comparing ranks instead of the names themselves
// took most of the time of a 1,025-switch platform's routing trees).
func labelLess(nameRank []int, latA int64, hopsA int, pathA []int, latB int64, hopsB int, pathB []int) bool {
	if latA != latB {
		return latA < latB
	}
	if hopsA != hopsB {
		return hopsA < hopsB
	}
	for i := 0; i < len(pathA) && i < len(pathB); i++ {
		if pathA[i] != pathB[i] {
			return nameRank[pathA[i]] < nameRank[pathB[i]]
		}
	}
	return len(pathA) < len(pathB)
}

// switchNameRanks gives each switch its position in name order.
func (p *Platform) switchNameRanks() []int {
	order := make([]int, len(p.switches))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(p.switches[a], p.switches[b]) })
	rank := make([]int, len(order))
	for r, s := range order {
		rank[s] = r
	}
	return rank
}

// shortestTree runs Dijkstra from src with the full (latency, hops, names)
// label. The label order is preserved when two paths are extended by the same
// link, so the greedy choice stays optimal. Labels of different switches
// never tie (their paths end differently), so the heap settles switches in
// the order a scan for the least label would; the heap matters because
// truth levels build the tree of every switch (a scan made that cubic: 4 s
// for 1,025 switches).
func (p *Platform) shortestTree(src int) *spTree {
	n := len(p.switches)
	nameRank := p.switchNameRanks()
	t := &spTree{latPS: make([]int64, n), hops: make([]int, n), nodes: make([][]int, n), links: make([][]int, n)}
	have := make([]bool, n)
	done := make([]bool, n)
	have[src] = true
	t.nodes[src] = []int{src}
	t.links[src] = []int{}
	h := &labelHeap{rank: nameRank}
	h.push(label{0, 0, t.nodes[src]})
	for len(h.items) > 0 {
		u := h.pop().path
		v0 := u[len(u)-1]
		if done[v0] {
			continue // a label superseded by a better one
		}
		done[v0] = true
		for _, e := range p.adj[v0] {
			v := e.to
			if done[v] {
				continue
			}
			lat := t.latPS[v0] + picoseconds(p.links[e.link].LatencyS)
			hops := t.hops[v0] + 1
			path := append(append(make([]int, 0, len(t.nodes[v0])+1), t.nodes[v0]...), v)
			if !have[v] || labelLess(nameRank, lat, hops, path, t.latPS[v], t.hops[v], t.nodes[v]) {
				have[v] = true
				t.latPS[v], t.hops[v], t.nodes[v] = lat, hops, path
				t.links[v] = append(append(make([]int, 0, len(t.links[v0])+1), t.links[v0]...), e.link)
				h.push(label{lat, hops, path})
			}
		}
	}
	return t
}

// label is a path from the source with its latency and hop count.
type label struct {
	latPS int64
	hops  int
	path  []int // switches from the source, both ends included
}

// labelHeap is a min-heap of labels in labelLess order.
type labelHeap struct {
	items []label
	rank  []int
}

func (h *labelHeap) less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return labelLess(h.rank, a.latPS, a.hops, a.path, b.latPS, b.hops, b.path)
}

func (h *labelHeap) push(l label) {
	h.items = append(h.items, l)
	for i := len(h.items) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *labelHeap) pop() label {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.items) && h.less(l, m) {
			m = l
		}
		if r < len(h.items) && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return top
}

// path returns the cached route from switch a to switch b.
func (c *routeCache) path(p *Platform, a, b int) *switchPath {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := [2]int{a, b}
	if sp, ok := c.paths[key]; ok {
		return sp
	}
	var nodes, links []int
	if p.switches[a] <= p.switches[b] {
		t := c.tree(p, a)
		nodes, links = t.nodes[b], t.links[b]
	} else {
		t := c.tree(p, b)
		nodes, links = reversed(t.nodes[a]), reversed(t.links[a])
	}
	sp := &switchPath{nodes: nodes, links: links}
	for i, l := range links {
		sp.latencyS += p.links[l].LatencyS
		sp.fwd = append(sp.fwd, p.linkDir(l, nodes[i]))
	}
	for i := len(links) - 1; i >= 0; i-- {
		sp.rev = append(sp.rev, p.linkDir(links[i], nodes[i+1]))
	}
	c.paths[key] = sp
	return sp
}

func (c *routeCache) tree(p *Platform, src int) *spTree {
	if t, ok := c.trees[src]; ok {
		return t
	}
	t := p.shortestTree(src)
	c.trees[src] = t
	return t
}

// linkDir is the resource loaded by traffic entering link l at switch from.
func (p *Platform) linkDir(l, from int) int {
	if p.links[l].a == from {
		return p.linkAB[l]
	}
	return p.linkBA[l]
}

func reversed(s []int) []int {
	r := make([]int, len(s))
	for i, v := range s {
		r[len(s)-1-i] = v
	}
	return r
}
