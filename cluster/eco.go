package cluster

import (
	"fmt"
	"math"
)

// DefaultECOBound is ECO's default latency bound: an edge may join two
// subnets only if it is within 20% of the cheapest edge of each endpoint and
// of each subnet involved (seed 004 Sect. 4.1).
const DefaultECOBound = 0.20

// ECO partitions the points into "logical homogeneous subnets" with seed
// 004's Algorithm 1 (from ECO, Lowekamp): edges are taken by non-decreasing
// cost, and an edge (a, b) merges the subnets of a and b only if its cost is
// within (1+bound) of the cheapest edge incident on a, on b, and of the
// cheapest edge already inside the subnet of a and of b. The result is a
// flat list of subnets, no hierarchy, as the paper intends.
//
// d is a latency (or other cost) matrix in which missing measurements are
// NaN: monitoring data from independent sites rarely covers the links
// between them (Sect. 3), and a missing edge simply never merges. A point
// with no measured edge stays alone. bound is a fraction (0.20 = 20%,
// DefaultECOBound); 0 admits only ties with the cheapest edges.
func ECO(d *Matrix, bound float64) (Labels, error) {
	if math.IsNaN(bound) || math.IsInf(bound, 0) || bound < 0 {
		return nil, fmt.Errorf("cluster eco: bound %v", bound)
	}
	es, err := matrixEdges(d)
	if err != nil {
		return nil, fmt.Errorf("cluster eco: %w", err)
	}
	n := d.N
	f := 1 + bound
	minEdge := make([]float64, n)
	for i := range minEdge {
		minEdge[i] = math.Inf(1)
	}
	for _, e := range es {
		if e.W < 0 {
			return nil, fmt.Errorf("cluster eco: pair (%d,%d) has negative cost %v", e.I, e.J, e.W)
		}
		minEdge[e.I] = math.Min(minEdge[e.I], e.W)
		minEdge[e.J] = math.Min(minEdge[e.J], e.W)
	}
	sortEdgesAscending(es)
	sets := newPointSets(n)
	inSubnet := make([]bool, n)
	subnetMin := make([]float64, n) // indexed by set root
	for _, e := range es {
		a, b := e.I, e.J
		ra, rb := sets.find(a), sets.find(b)
		if ra == rb {
			continue
		}
		if e.W > f*minEdge[a] || e.W > f*minEdge[b] {
			continue
		}
		if inSubnet[a] && e.W > f*subnetMin[ra] {
			continue
		}
		if inSubnet[b] && e.W > f*subnetMin[rb] {
			continue
		}
		m := e.W
		if inSubnet[a] {
			m = math.Min(m, subnetMin[ra])
		}
		if inSubnet[b] {
			m = math.Min(m, subnetMin[rb])
		}
		sets.union(ra, rb)
		subnetMin[sets.find(ra)] = m
		inSubnet[a], inSubnet[b] = true, true
		// Every member of a merged subnet is "in a subnet" already; only
		// a and b can be newly so.
	}
	return sets.labels(), nil
}

// sortEdgesAscending orders edges by cost, ties by (I, J).
func sortEdgesAscending(es []PairEdge) { kruskalOrder(es, false) }

// RepresentativePairs lists the pairs to measure with PLogP once the points
// are split into homogeneous subnets (seed 004 Sect. 5.2): one pair inside
// each subnet of two or more points (its two smallest members) and one pair
// between each two subnets (their smallest members), so at most C(C+1)/2
// pairs for C subnets instead of n(n-1)/2.
func RepresentativePairs(l Labels) ([][2]int, error) {
	for i, v := range l {
		if v < 0 {
			return nil, fmt.Errorf("cluster representative pairs: point %d is unclustered", i)
		}
	}
	groups := Groups(l)
	var out [][2]int
	for _, g := range groups {
		if len(g) >= 2 {
			out = append(out, [2]int{g[0], g[1]})
		}
	}
	for a := 0; a < len(groups); a++ {
		for b := a + 1; b < len(groups); b++ {
			out = append(out, [2]int{groups[a][0], groups[b][0]})
		}
	}
	return out, nil
}
