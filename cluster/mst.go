package cluster

import (
	"fmt"
	"math"
	"sort"
)

// PairEdge is an undirected weighted edge between points I < J.
type PairEdge struct {
	I, J int
	W    float64
}

// matrixEdges lists the pairs i < j of m whose entry is not missing (NaN).
func matrixEdges(m *Matrix) ([]PairEdge, error) {
	if m == nil || m.N < 0 || len(m.Data) != m.N*m.N {
		return nil, fmt.Errorf("cluster: malformed matrix")
	}
	var es []PairEdge
	for i := 0; i < m.N; i++ {
		for j := i + 1; j < m.N; j++ {
			w := m.At(i, j)
			if IsMissing(w) {
				continue
			}
			if math.IsInf(w, 0) {
				return nil, fmt.Errorf("cluster: matrix entry (%d,%d) is infinite", i, j)
			}
			if w != m.At(j, i) {
				return nil, fmt.Errorf("cluster: matrix not symmetric at (%d,%d)", i, j)
			}
			es = append(es, PairEdge{I: i, J: j, W: w})
		}
	}
	return es, nil
}

// kruskal returns a spanning forest of the edges, preferring larger weights
// when max is set. Ties break on (I, J) so the result is deterministic.
func kruskal(n int, es []PairEdge, max bool) []PairEdge {
	kruskalOrder(es, max)
	uf := newPointSets(n)
	var tree []PairEdge
	for _, e := range es {
		if uf.union(e.I, e.J) {
			tree = append(tree, e)
		}
	}
	return tree
}

// kruskalOrder sorts edges by weight (descending if max), ties by (I, J).
func kruskalOrder(es []PairEdge, max bool) {
	sort.SliceStable(es, func(a, b int) bool {
		x, y := es[a], es[b]
		if x.W != y.W {
			if max {
				return x.W > y.W
			}
			return x.W < y.W
		}
		if x.I != y.I {
			return x.I < y.I
		}
		return x.J < y.J
	})
}

// MinimumSpanningTree returns the edges of a minimum spanning forest of the
// complete graph whose weights are the entries of m (missing NaN entries are
// absent edges), in the order Kruskal adds them (non-decreasing weight).
func MinimumSpanningTree(m *Matrix) ([]PairEdge, error) {
	es, err := matrixEdges(m)
	if err != nil {
		return nil, err
	}
	return kruskal(m.N, es, false), nil
}

// MaximumSpanningTree returns the edges of a maximum spanning forest of the
// graph whose edge weights are the similarities in m (seed 000 Sect.
// 5.12.2: on achievable bandwidth the heaviest edges are the links of the
// bandwidth tree). Missing (NaN) entries are absent edges; the order is
// non-increasing weight.
func MaximumSpanningTree(m *Matrix) ([]PairEdge, error) {
	es, err := matrixEdges(m)
	if err != nil {
		return nil, err
	}
	return kruskal(m.N, es, true), nil
}

// TreeWeight sums the weights of the edges.
func TreeWeight(es []PairEdge) float64 {
	var s float64
	for _, e := range es {
		s += e.W
	}
	return s
}
