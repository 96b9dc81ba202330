package cluster

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"

	"netaware/metrics"
)

// BandwidthTreeNearTies is BandwidthTree where the swarm cannot tell some
// edges apart. Its weight between two groups is the mean positive weight
// between their points (a pair of groups with none has no edge): on rates
// that is the bandwidth of their bottleneck whatever the groups' sizes,
// the quantity the tolerance is relative to (Eq. 5.4's sum grows with
// the groups). In a chain of switches every pair of groups has one trunk
// as its bottleneck, so the averaged weights of adjacent and of distant
// groups differ by less than the swarm's noise, and the maximum spanning
// tree joins whichever groups the noise favoured (a-b-d-c for the chain
// a-b-c-d). Here the edges are taken in bands of near ties: sorted by
// weight, a band runs on while each edge lies within the relative
// tolerance tol below the one before (a gap wider than the noise ends
// it, so an outlier at the top does not cut the tie short), and within
// a band the pairs of groups with the shorter distance(a, b) (their
// round trip: fewer switches between them) join first. A missing (NaN)
// distance comes last. tol is typically BetweenGroupSpread(w, l); with tol
// 0 only equal weights are tied.
func BandwidthTreeNearTies(w *Matrix, l Labels, tol float64, distance func(a, b int) float64) ([]PairEdge, error) {
	if !(tol >= 0) || math.IsInf(tol, 0) {
		return nil, fmt.Errorf("cluster: bandwidth tree tie tolerance %v is not a finite non-negative number", tol)
	}
	if distance == nil {
		return nil, fmt.Errorf("cluster: bandwidth tree without a distance to break ties")
	}
	if err := checkTreeLabels(w, l); err != nil {
		return nil, err
	}
	g := collapseMeans(w, l, math.NaN())
	es, err := matrixEdges(g)
	if err != nil {
		return nil, err
	}
	d := func(e PairEdge) float64 {
		if v := distance(e.I, e.J); !math.IsNaN(v) {
			return v
		}
		return math.Inf(1)
	}
	kruskalOrder(es, true)
	uf := newPointSets(g.N)
	var tree []PairEdge
	for len(es) > 0 {
		n := 1
		for n < len(es) && es[n].W >= es[n-1].W-tol*math.Abs(es[n-1].W) {
			n++
		}
		// Within the band the shorter distance first; equal distances
		// keep the weight order (stable).
		band := es[:n]
		sort.SliceStable(band, func(a, b int) bool { return d(band[a]) < d(band[b]) })
		for _, e := range band {
			if uf.union(e.I, e.J) {
				tree = append(tree, e)
			}
		}
		es = es[n:]
	}
	return tree, nil
}

// BetweenGroupSpread is the swarm's measurement noise as a relative
// spread: for each pair of groups of l with at least two positive weights
// between them, their coefficient of variation (those connections share
// one bottleneck, so their differences are noise); the median over the
// pairs of groups. 0 when no pair of groups has two weights.
func BetweenGroupSpread(w *Matrix, l Labels) (float64, error) {
	if err := checkSimilarity(w); err != nil {
		return 0, err
	}
	if len(l) != w.N {
		return 0, fmt.Errorf("cluster: %d labels for %d points", len(l), w.N)
	}
	c := Canonical(l)
	k := numClusters(c)
	vals := make(map[[2]int][]float64)
	for i := 0; i < w.N; i++ {
		for j := i + 1; j < w.N; j++ {
			a, b := c[i], c[j]
			if a == b || a < 0 || b < 0 || !(w.At(i, j) > 0) {
				continue
			}
			key := [2]int{min(a, b), max(a, b)}
			vals[key] = append(vals[key], w.At(i, j))
		}
	}
	var cv []float64
	for a := 0; a < k; a++ {
		for b := a + 1; b < k; b++ {
			v := vals[[2]int{a, b}]
			if len(v) < 2 {
				continue
			}
			mean, sd := stat.MeanStdDev(v, nil)
			cv = append(cv, sd/mean)
		}
	}
	if len(cv) == 0 {
		return 0, nil
	}
	return metrics.Median(cv), nil
}
