package platform

import "math"

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

func (p *Platform) labelLess(latA int64, hopsA int, pathA []int, latB int64, hopsB int, pathB []int) bool {
	if latA != latB {
		return latA < latB
	}
	if hopsA != hopsB {
		return hopsA < hopsB
	}
	for i := 0; i < len(pathA) && i < len(pathB); i++ {
		if pathA[i] != pathB[i] {
			return p.switches[pathA[i]] < p.switches[pathB[i]]
		}
	}
	return len(pathA) < len(pathB)
}

// shortestTree runs Dijkstra from src with the full (latency, hops, names)
// label. The label order is preserved when two paths are extended by the same
// link, so the greedy choice stays optimal. Switch counts are small, so the
// simple quadratic scan beats a heap here.
func (p *Platform) shortestTree(src int) *spTree {
	n := len(p.switches)
	t := &spTree{latPS: make([]int64, n), hops: make([]int, n), nodes: make([][]int, n), links: make([][]int, n)}
	have := make([]bool, n)
	done := make([]bool, n)
	have[src] = true
	t.nodes[src] = []int{src}
	t.links[src] = []int{}
	for {
		u := -1
		for v := range n {
			if have[v] && !done[v] && (u < 0 || p.labelLess(t.latPS[v], t.hops[v], t.nodes[v], t.latPS[u], t.hops[u], t.nodes[u])) {
				u = v
			}
		}
		if u < 0 {
			return t
		}
		done[u] = true
		for _, e := range p.adj[u] {
			v := e.to
			if done[v] {
				continue
			}
			lat := t.latPS[u] + picoseconds(p.links[e.link].LatencyS)
			hops := t.hops[u] + 1
			path := append(append(make([]int, 0, len(t.nodes[u])+1), t.nodes[u]...), v)
			if !have[v] || p.labelLess(lat, hops, path, t.latPS[v], t.hops[v], t.nodes[v]) {
				have[v] = true
				t.latPS[v], t.hops[v], t.nodes[v] = lat, hops, path
				t.links[v] = append(append(make([]int, 0, len(t.links[u])+1), t.links[u]...), e.link)
			}
		}
	}
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
