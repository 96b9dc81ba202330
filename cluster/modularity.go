package cluster

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/community"
	"gonum.org/v1/gonum/graph/simple"

	"netaware/topo"
)

// checkSimilarity validates a similarity matrix for modularity: square,
// symmetric, finite, non-negative off the diagonal (the diagonal is
// ignored: no self loops).
func checkSimilarity(sim *Matrix) error {
	if sim == nil || sim.N < 0 || len(sim.Data) != sim.N*sim.N {
		return fmt.Errorf("cluster modularity: malformed similarity matrix")
	}
	for i := 0; i < sim.N; i++ {
		for j := i + 1; j < sim.N; j++ {
			w := sim.At(i, j)
			if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
				return fmt.Errorf("cluster modularity: weight (%d,%d) is %v, want finite and >= 0", i, j, w)
			}
			if w != sim.At(j, i) {
				return fmt.Errorf("cluster modularity: similarity not symmetric at (%d,%d)", i, j)
			}
		}
	}
	return nil
}

// similarityGraph is the weighted undirected graph of the positive
// off-diagonal entries; node IDs are point indices. Weights so large or so
// small that the products of degrees overflow or vanish (gonum's Louvain
// then finds no community to move a node to, and panics) are divided by
// the largest: modularity does not depend on the scale.
func similarityGraph(sim *Matrix) *simple.WeightedUndirectedGraph {
	g := simple.NewWeightedUndirectedGraph(0, 0)
	for i := 0; i < sim.N; i++ {
		g.AddNode(simple.Node(i))
	}
	top := 0.0
	for i := 0; i < sim.N; i++ {
		for j := i + 1; j < sim.N; j++ {
			top = max(top, sim.At(i, j))
		}
	}
	scale := 1.0
	if top*float64(sim.N) > 1e100 || top > 0 && top < 1e-100 {
		scale = top
	}
	for i := 0; i < sim.N; i++ {
		for j := i + 1; j < sim.N; j++ {
			if w := sim.At(i, j) / scale; w > 0 {
				g.SetWeightedEdge(simple.WeightedEdge{F: simple.Node(i), T: simple.Node(j), W: w})
			}
		}
	}
	return g
}

func communitiesOf(l Labels) [][]graph.Node {
	var out [][]graph.Node
	for _, grp := range Groups(l) {
		c := make([]graph.Node, len(grp))
		for k, p := range grp {
			c[k] = simple.Node(p)
		}
		out = append(out, c)
	}
	return out
}

// Modularity is the weighted Newman-Girvan modularity (seed 000 Eq. 5.1)
// of a partition of the similarity graph, with resolution gamma:
// Q = 1/2m sum_ij [A_ij - gamma k_i k_j / 2m] delta(c_i, c_j). It is 0 for
// a graph without edges.
func Modularity(sim *Matrix, l Labels, resolution float64) (float64, error) {
	if err := checkSimilarity(sim); err != nil {
		return 0, err
	}
	if len(l) != sim.N {
		return 0, fmt.Errorf("cluster modularity: %d labels for %d points", len(l), sim.N)
	}
	for i, v := range l {
		if v < 0 {
			return 0, fmt.Errorf("cluster modularity: point %d is unlabelled", i)
		}
	}
	g := similarityGraph(sim)
	if g.Edges().Len() == 0 {
		return 0, nil
	}
	return community.Q(g, communitiesOf(l), resolution), nil
}

// Louvain partitions the weighted graph whose edge weights are the
// similarities in sim (e.g. achievable bandwidth) by maximising modularity
// with gonum's Louvain implementation, as seed 000 Sect. 5.2.1 does: it
// keeps the level of Louvain's own hierarchy with the highest modularity.
// resolution is gamma (1 = classical modularity; larger finds smaller
// communities). The seed makes the result reproducible. It returns the
// labels (numbered by smallest member) and Q of that partition on sim. A
// graph without positive weights has nothing to cluster: every point is
// its own community and Q = 0.
func Louvain(sim *Matrix, resolution float64, seed uint64) (Labels, float64, error) {
	if err := checkSimilarity(sim); err != nil {
		return nil, 0, err
	}
	if !(resolution > 0) || math.IsInf(resolution, 0) {
		return nil, 0, fmt.Errorf("cluster louvain: resolution %v, want > 0", resolution)
	}
	n := sim.N
	g := similarityGraph(sim)
	if g.Edges().Len() == 0 {
		l := make(Labels, n)
		for i := range l {
			l[i] = i
		}
		return l, 0, nil
	}
	r := community.Modularize(g, resolution, rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	comms := r.Communities()
	l := make(Labels, n)
	for c, members := range comms {
		for _, nd := range members {
			l[nd.ID()] = c
		}
	}
	l = Canonical(l)
	return l, community.Q(g, communitiesOf(l), resolution), nil
}

// ConnEstimate is seed 000 Eq. 5.2, the expected number of BitTorrent
// connections across a link that separates a peers from b peers:
// min/max * (a+b)/2.
func ConnEstimate(a, b int) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	lo, hi := float64(min(a, b)), float64(max(a, b))
	return lo / hi * (lo + hi) / 2
}

// BandwidthPerConnection is seed 000 Eq. 5.3: the bandwidth each connection
// gets on a link of the given capacity separating a peers from b peers,
// capacity / conn(a, b). It is the "ground truth" of the bandwidth
// hierarchy, used here to build test platforms.
func BandwidthPerConnection(capacity float64, a, b int) float64 {
	c := ConnEstimate(a, b)
	if c == 0 {
		return math.Inf(1)
	}
	return capacity / c
}

// CollapseAveraged builds the graph of the partitions of l, seed 000 Eq.
// 5.4-5.5: the weight between partitions V1 and V2 is the sum of the
// original weights between their points divided by conn_h = min(|V1|,
// |V2|) / max(|V1|, |V2|). |V| counts original points, and the sum runs over
// original point pairs: after several rounds the partitions are still sets
// of hosts, and recomputing from the measured weights avoids compounding the
// heuristic. Partition k of the result is label k of Canonical(l).
func CollapseAveraged(sim *Matrix, l Labels) (*Matrix, error) {
	if err := checkSimilarity(sim); err != nil {
		return nil, err
	}
	if len(l) != sim.N {
		return nil, fmt.Errorf("cluster collapse: %d labels for %d points", len(l), sim.N)
	}
	c := Canonical(l)
	for i, v := range c {
		if v < 0 {
			return nil, fmt.Errorf("cluster collapse: point %d is unlabelled", i)
		}
	}
	k := numClusters(c)
	size := make([]int, k)
	for _, v := range c {
		size[v]++
	}
	out := NewMatrix(k)
	for i := 0; i < sim.N; i++ {
		for j := i + 1; j < sim.N; j++ {
			a, b := c[i], c[j]
			if a != b {
				out.Data[a*k+b] += sim.At(i, j)
				out.Data[b*k+a] += sim.At(i, j)
			}
		}
	}
	for a := 0; a < k; a++ {
		for b := a + 1; b < k; b++ {
			connH := float64(min(size[a], size[b])) / float64(max(size[a], size[b]))
			out.Set(a, b, out.At(a, b)/connH)
		}
	}
	return out, nil
}

// ModularityLevel is one round of the hierarchical modularity clustering:
// a partition of the original points and the modularity of the Louvain
// pass that produced it, on the graph it was run on.
type ModularityLevel struct {
	Labels Labels
	Q      float64
}

// HierarchicalModularity is seed 000's bottom-up clustering (Sect. 5.10):
// Louvain finds the bandwidth partitions, each partition becomes one node
// whose edge weights are the averaged inter-partition weights (Eq.
// 5.4-5.5, CollapseAveraged), and Louvain runs again on that graph, while
// more than two partitions remain and a round still merges something. The
// levels are finest first, each a coarsening of the one before; the final
// "everything" level is implied (LevelsFromPartitions adds it).
func HierarchicalModularity(sim *Matrix, resolution float64, seed uint64) ([]ModularityLevel, error) {
	labels, q, err := Louvain(sim, resolution, seed)
	if err != nil {
		return nil, err
	}
	var out []ModularityLevel
	if numClusters(labels) < sim.N {
		out = append(out, ModularityLevel{Labels: labels, Q: q})
	}
	for round := uint64(1); ; round++ {
		// Two partitions leave only "everything" above them; no merge in
		// the first pass means collapsing would rebuild the same graph.
		if k := numClusters(labels); k <= 2 || k == sim.N {
			break
		}
		g, err := CollapseAveraged(sim, labels)
		if err != nil {
			return nil, err
		}
		top, q, err := Louvain(g, resolution, seed+round)
		if err != nil {
			return nil, err
		}
		if numClusters(top) == g.N {
			break // no partition merges any more
		}
		next := make(Labels, sim.N)
		for i, v := range labels {
			next[i] = top[v]
		}
		labels = Canonical(next)
		out = append(out, ModularityLevel{Labels: labels, Q: q})
	}
	return out, nil
}

// HasseNode is one cluster of a hierarchy: its level (0 = finest), members,
// and the mean similarity inside it (the "achievable bandwidth within the
// set" that orders seed 000's Hasse diagram, Sect. 5.9; 0 for one point).
type HasseNode struct {
	Level      int
	Members    []int
	MeanWithin float64
}

// HasseDiagram is the partial order of a nested hierarchy (Sect. 5.9):
// each edge (child, parent), as indices into Nodes, is the cover relation
// "child is contained in parent" between consecutive levels; when the
// similarity is bandwidth, child >=_bw parent.
type HasseDiagram struct {
	Nodes []HasseNode
	Edges [][2]int
}

// Hasse builds the Hasse diagram of nested partitions (finest first) of the
// points of sim. Clusters that do not change between levels are repeated
// per level, so every level is complete.
func Hasse(sim *Matrix, parts []Labels) (*HasseDiagram, error) {
	if err := checkSimilarity(sim); err != nil {
		return nil, err
	}
	h := &HasseDiagram{}
	var prevIdx []int // point -> node index in previous level
	var prev Labels
	for li, p := range parts {
		if len(p) != sim.N {
			return nil, fmt.Errorf("cluster hasse: level %d has %d labels for %d points", li, len(p), sim.N)
		}
		c := Canonical(p)
		if prev != nil && !isCoarsening(prev, c) {
			return nil, fmt.Errorf("cluster hasse: level %d is not a coarsening of level %d", li, li-1)
		}
		idx := make([]int, sim.N)
		for _, grp := range Groups(c) {
			var s float64
			for a := 0; a < len(grp); a++ {
				for b := a + 1; b < len(grp); b++ {
					s += sim.At(grp[a], grp[b])
				}
			}
			mean := 0.0
			if pairs := len(grp) * (len(grp) - 1) / 2; pairs > 0 {
				mean = s / float64(pairs)
			}
			node := len(h.Nodes)
			h.Nodes = append(h.Nodes, HasseNode{Level: li, Members: grp, MeanWithin: mean})
			children := map[int]bool{}
			for _, pt := range grp {
				idx[pt] = node
				if prevIdx != nil {
					children[prevIdx[pt]] = true
				}
			}
			var cs []int
			for ch := range children {
				cs = append(cs, ch)
			}
			sort.Ints(cs)
			for _, ch := range cs {
				h.Edges = append(h.Edges, [2]int{ch, node})
			}
		}
		prevIdx, prev = idx, c
	}
	return h, nil
}

// PartitionTree is seed 000 Sect. 5.12.2: partition with Louvain, collapse
// the partitions with averaged weights (Eq. 5.4), and return the maximum
// spanning tree of the collapsed graph, whose nodes are the labels.
func PartitionTree(sim *Matrix, resolution float64, seed uint64) (Labels, []PairEdge, error) {
	l, _, err := Louvain(sim, resolution, seed)
	if err != nil {
		return nil, nil, err
	}
	g, err := CollapseAveraged(sim, l)
	if err != nil {
		return nil, nil, err
	}
	t, err := MaximumSpanningTree(g)
	if err != nil {
		return nil, nil, err
	}
	return l, t, nil
}

// ModularityLevels turns a HierarchicalModularity result into topology
// levels (finest first, "all" last).
func ModularityLevels(n int, h []ModularityLevel) ([]topo.Level, error) {
	parts := make([]Labels, len(h))
	for i, lv := range h {
		parts[i] = lv.Labels
	}
	return LevelsFromPartitions(n, parts)
}
