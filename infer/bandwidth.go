package infer

import (
	"fmt"
	"math"
	"sort"

	"netaware/topo"
)

// PairBandwidth is one end-to-end bandwidth measurement between two hosts.
type PairBandwidth struct {
	A, B int // ranks; A starts the transfer
}

// BandwidthProber measures end-to-end bandwidths (bytes per second) of
// host pairs. All pairs of one call run at the same time: the caller only
// groups pairs whose paths share no link of the tree, so they do not
// disturb each other.
type BandwidthProber interface {
	Bandwidths(pairs []PairBandwidth) ([]float64, error)
}

// BandwidthMap is the tree with a bandwidth on each edge (seed 002 Sect.
// 6.1). Edges are those of the tree re-rooted at a switch; edge k joins
// node k to its parent in that rooting.
type BandwidthMap struct {
	Tree *Tree
	Root int // node id of the root switch
	// Parent and Depth are the rooting: Parent[k] is node k's parent (-1
	// for the root), Depth[k] its number of hops from the root.
	Parent, Depth []int
	// Edge[k] is the bandwidth of the edge between k and Parent[k] in
	// bytes per second, +Inf when no measurement covered it.
	Edge []float64
	// AtLeast[k] marks an edge whose measurement was explained by links
	// below it (the elected host's own bandwidth up to the child was no
	// higher than what the pair achieved): the link is then known to carry
	// at least Edge[k], not to be a bottleneck of that value.
	AtLeast []bool
	// Rounds lists the parallel measurement rounds in order, and
	// Measurements counts the pairs measured.
	Rounds       [][]PairBandwidth
	Measurements int
}

// AtLeastSlack is the relative margin within which a pair's bandwidth is
// taken as explained by the links below the measured ones.
const AtLeastSlack = 0.05

// BuildBandwidthMap measures the bandwidth of every edge of t in stages
// (seed 002 Sect. 6.1). The root is the switch that minimizes the height
// of the tree. Stage i measures the links between the nodes X at depth
// h-i and their children C_1..C_p: under each C_j it elects the host with
// the largest bandwidth to C_j known so far, pairs the elected hosts of X
// up (H_1-H_2, H_3-H_4, ...) and measures all pairs of all nodes of that
// depth in one parallel round; the bandwidth of pair H_j-H_k is recorded
// on XC_j and XC_k. Seed 002 pairs each child once (and the last of an
// odd p with H_1), which leaves a host link paired with a slow trunk
// labelled at the trunk's speed; here every child is paired with two
// neighbours in a ring, in up to three rounds (paths of different X's
// share no link, so a round holds the pairs of every X of the depth at
// once), and an edge keeps the higher result.
func BuildBandwidthMap(t *Tree, p BandwidthProber) (*BandwidthMap, error) {
	if len(t.Ranks()) < 2 {
		return nil, fmt.Errorf("infer: bandwidth map needs two hosts or more")
	}
	m := &BandwidthMap{Tree: t}
	m.root()
	n := len(t.nodes)
	m.Edge = make([]float64, n)
	m.AtLeast = make([]bool, n)
	for k := range m.Edge {
		m.Edge[k] = math.Inf(1)
	}
	children := make([][]int, n)
	h := 0
	for k := 0; k < n; k++ {
		if m.Parent[k] >= 0 {
			children[m.Parent[k]] = append(children[m.Parent[k]], k)
		}
		h = max(h, m.Depth[k])
	}
	byDepth := make([][]int, h+1)
	for k := 0; k < n; k++ {
		byDepth[m.Depth[k]] = append(byDepth[m.Depth[k]], k)
	}
	for stage := 1; stage <= h; stage++ {
		type job struct {
			pair   PairBandwidth
			edges  []int   // children whose edge to X the result labels
			below  float64 // known bandwidth from the hosts up to those children
			hostBW [2]float64
		}
		// Three rounds: pairs (0,1),(2,3),... of X's children; then
		// (1,2),(3,4),... and, for an even p, (p-1,0); then (p-1,0) for an
		// odd p. Every child edge is thus measured with two partners: a
		// pair's bandwidth is that of its slower edge, and a host link
		// paired with a trunk once is paired with a host link the other
		// time. An edge keeps the higher of its two results.
		var rounds [3][]job
		for _, x := range byDepth[h-stage] {
			cs := children[x]
			if r := t.nodes[x].rank; r >= 0 && len(cs) == 1 {
				// A host as root (a tree without switches): it measures
				// its one neighbour itself.
				h, up := m.elect(cs[0], children)
				rounds[0] = append(rounds[0], job{pair: PairBandwidth{A: t.nodes[h].rank, B: r}, edges: []int{cs[0]}, hostBW: [2]float64{up, math.Inf(1)}})
				continue
			}
			p := len(cs)
			if p < 2 {
				continue // nothing to pair under X: its edges stay unmeasured
			}
			hosts := make([]int, p)
			up := make([]float64, p)
			for j, c := range cs {
				hosts[j], up[j] = m.elect(c, children)
			}
			pair := func(j, k int) job {
				return job{pair: PairBandwidth{A: t.nodes[hosts[j]].rank, B: t.nodes[hosts[k]].rank},
					edges: []int{cs[j], cs[k]}, hostBW: [2]float64{up[j], up[k]}}
			}
			for j := 0; j+1 < p; j += 2 {
				rounds[0] = append(rounds[0], pair(j, j+1))
			}
			if p == 2 {
				continue
			}
			for j := 1; j+1 < p; j += 2 {
				rounds[1] = append(rounds[1], pair(j, j+1))
			}
			if p%2 == 0 {
				rounds[1] = append(rounds[1], pair(p-1, 0))
			} else {
				rounds[2] = append(rounds[2], pair(p-1, 0))
			}
		}
		measured := map[int]bool{}
		for _, round := range rounds {
			if len(round) == 0 {
				continue
			}
			pairs := make([]PairBandwidth, len(round))
			for i, j := range round {
				pairs[i] = j.pair
			}
			bw, err := p.Bandwidths(pairs)
			if err != nil {
				return nil, fmt.Errorf("infer: bandwidth stage %d: %w", stage, err)
			}
			if len(bw) != len(pairs) {
				return nil, fmt.Errorf("infer: bandwidth stage %d: %d results for %d pairs", stage, len(bw), len(pairs))
			}
			m.Rounds = append(m.Rounds, pairs)
			m.Measurements += len(pairs)
			for i, j := range round {
				if !(bw[i] > 0) || math.IsInf(bw[i], 0) {
					return nil, fmt.Errorf("infer: bandwidth %d-%d is %g", j.pair.A, j.pair.B, bw[i])
				}
				for e, c := range j.edges {
					if measured[c] && m.Edge[c] >= bw[i] {
						continue
					}
					measured[c] = true
					m.Edge[c] = bw[i]
					m.AtLeast[c] = j.hostBW[e] <= bw[i]*(1+AtLeastSlack)
				}
			}
		}
	}
	return m, nil
}

// root re-roots the tree at the switch of least height (ties to the lower
// node id) and fills Parent and Depth. The heights of all nodes come from
// one pass down and one up the tree (a search from every switch was
// O(N^2): seconds and gigabytes at 1,024 ranks).
func (m *BandwidthMap) root() {
	t := m.Tree
	n := len(t.nodes)
	adj := make([][]int, n)
	for k, x := range t.nodes {
		if x.parent >= 0 {
			adj[k] = append(adj[k], x.parent)
			adj[x.parent] = append(adj[x.parent], k)
		}
	}
	bfs := func(r int) (parent, depth []int, height int) {
		parent, depth = make([]int, n), make([]int, n)
		for k := range depth {
			depth[k] = -1
		}
		parent[r], depth[r] = -1, 0
		q := []int{r}
		for len(q) > 0 {
			u := q[0]
			q = q[1:]
			height = max(height, depth[u])
			for _, v := range adj[u] {
				if depth[v] < 0 {
					depth[v], parent[v] = depth[u]+1, u
					q = append(q, v)
				}
			}
		}
		return parent, depth, height
	}
	ecc := t.eccentricities()
	best, bestH := 0, math.MaxInt
	hasSwitch := t.Switches() > 0
	for k, x := range t.nodes {
		if x.rank >= 0 && hasSwitch {
			continue
		}
		if ecc[k] < bestH {
			best, bestH = k, ecc[k]
		}
	}
	m.Root = best
	m.Parent, m.Depth, _ = bfs(best)
}

// elect returns the host node under c (c itself if it is a host) with the
// largest bandwidth up to c known so far, ties to the lower rank, and that
// bandwidth.
func (m *BandwidthMap) elect(c int, children [][]int) (int, float64) {
	best, bestBW, bestRank := -1, -1.0, math.MaxInt
	var walk func(u int, bw float64)
	walk = func(u int, bw float64) {
		if r := m.Tree.nodes[u].rank; r >= 0 {
			if bw > bestBW || bw == bestBW && r < bestRank {
				best, bestBW, bestRank = u, bw, r
			}
			return
		}
		for _, v := range children[u] {
			walk(v, math.Min(bw, m.Edge[v]))
		}
	}
	walk(c, math.Inf(1))
	return best, bestBW
}

// Bandwidth answers a query: the smallest bandwidth on the path between
// ranks a and b (+Inf if no edge on it was measured).
func (m *BandwidthMap) Bandwidth(a, b int) float64 {
	path, _ := m.Tree.path(m.Tree.byRank.at(a), m.Tree.byRank.at(b))
	bw := math.Inf(1)
	for i := 0; i+1 < len(path); i++ {
		u, v := path[i], path[i+1]
		if m.Parent[v] == u {
			u = v
		}
		bw = math.Min(bw, m.Edge[u])
	}
	return bw
}

// Topo converts the map into the topology.json tree form, with
// bandwidth_Bps on every measured edge (names as Tree.Topo).
func (m *BandwidthMap) Topo() *topo.Tree {
	tt := m.Tree.Topo()
	// Tree.Topo lists an edge per non-root node k of the original rooting,
	// in node order: find the same edge in the bandwidth rooting.
	k := 0
	for i, x := range m.Tree.nodes {
		if x.parent < 0 {
			continue
		}
		e := i
		if m.Parent[i] != x.parent {
			e = x.parent // the edge is stored at the other end after re-rooting
		}
		if bw := m.Edge[e]; !math.IsInf(bw, 0) {
			v := bw
			tt.Edges[k].Bandwidth = &v
		}
		k++
	}
	return tt
}

// SlowGroups cuts the map at its slow edges and returns the ranks of each
// part, each sorted, parts ordered by first rank, with the threshold used.
// Slow edges are the measured ones (AtLeast or not) below the largest
// relative gap of the sorted distinct edge bandwidths, when that gap is at
// least minRatio; otherwise there is no slow edge and one part holds every
// rank.
func (m *BandwidthMap) SlowGroups(minRatio float64) ([][]int, float64) {
	var vals []float64
	for k, bw := range m.Edge {
		if m.Parent[k] >= 0 && !math.IsInf(bw, 0) {
			vals = append(vals, bw)
		}
	}
	sort.Float64s(vals)
	threshold, bestRatio := 0.0, minRatio
	for i := 0; i+1 < len(vals); i++ {
		if r := vals[i+1] / vals[i]; r >= bestRatio {
			threshold, bestRatio = vals[i+1], r
		}
	}
	// Union the nodes joined by fast (or unmeasured) edges.
	n := len(m.Tree.nodes)
	ps := make([]int, n)
	for k := range ps {
		ps[k] = k
	}
	var find func(int) int
	find = func(x int) int {
		for ps[x] != x {
			ps[x] = ps[ps[x]]
			x = ps[x]
		}
		return x
	}
	for k := 0; k < n; k++ {
		if m.Parent[k] >= 0 && !(m.Edge[k] < threshold) {
			ps[find(k)] = find(m.Parent[k])
		}
	}
	parts := map[int][]int{}
	for _, r := range m.Tree.Ranks() {
		root := find(m.Tree.byRank.at(r))
		parts[root] = append(parts[root], r)
	}
	var out [][]int
	for _, g := range parts {
		sort.Ints(g)
		out = append(out, g)
	}
	sort.Slice(out, func(a, b int) bool { return out[a][0] < out[b][0] })
	return out, threshold
}

// eccentricities returns, for every node, the number of hops to the node
// farthest from it (its height were the tree rooted there): the longest
// way down in the tree rooted at node 0, or up through the parent.
func (t *Tree) eccentricities() []int {
	n := len(t.nodes)
	order := t.topDown()
	down1, down2, via := make([]int, n), make([]int, n), make([]int, n)
	for k := range via {
		via[k] = -1
	}
	for i := len(order) - 1; i >= 0; i-- {
		u := order[i]
		if p := t.nodes[u].parent; p >= 0 {
			if h := down1[u] + 1; h > down1[p] {
				down1[p], down2[p], via[p] = h, down1[p], u
			} else if h > down2[p] {
				down2[p] = h
			}
		}
	}
	up := make([]int, n)
	ecc := make([]int, n)
	for _, u := range order {
		if p := t.nodes[u].parent; p >= 0 {
			side := down1[p]
			if via[p] == u {
				side = down2[p]
			}
			up[u] = 1 + max(up[p], side)
		}
		ecc[u] = max(down1[u], up[u])
	}
	return ecc
}
