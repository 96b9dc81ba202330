package cluster

import (
	"fmt"
	"math"
	"slices"

	"netaware/metrics"
)

// DefaultSplitRatio is BandwidthHierarchy's test of a split: the mean
// weight between the parts at most this fraction of the mean weight
// within the less connected part. Modularity splits a flat cluster along
// the noise of few iterations too (the bumpy optimisation surface of seed
// 000 Sect. 5.2.1); such parts show ratios of 0.6 to 1 where real
// bandwidth levels show 0.1 to 0.3.
const DefaultSplitRatio = 0.5

// BandwidthHierarchy is seed 000 Sect. 5.10 on a graph of achievable
// bandwidth (the swarm's w_n(e)): Louvain's best partition (each point
// then moved to the group it is fastest to on average, reassignByMean),
// then the partitions collapsed with averaged weights (Eq. 5.4, collapseMeans)
// and partitioned again while that merges anything, as nested partitions,
// finest first.
// Coarsest first, the parts of a group that are not distinct (the mean
// weight between two of them above ratio times the smaller mean within
// them; missing edges, weight 0, left out) are merged again, and levels that no longer
// differ from their neighbours are dropped. Then every group of the finest
// level is partitioned alone, the same way, while that splits any: a
// finer level. Last, a level that joins the finest groups at two bands of
// closeness far apart is split in two (separateBands). The whole-set
// level is left out (a caller adds "all"); a graph without structure
// gives no level.
func BandwidthHierarchy(w *Matrix, seed uint64, ratio float64) ([]Labels, error) {
	if err := checkSimilarity(w); err != nil {
		return nil, err
	}
	labels, _, err := Louvain(w, 1, seed)
	if err != nil {
		return nil, err
	}
	// A graph measured sparsely (each rank exchanged fragments with a
	// few dozen peers) makes Louvain split one bandwidth cluster into
	// loosely knit parts; parts as fast between them as within are one.
	labels = reassignByMean(w, mergeSimilar(w, labels, ratio))
	var levels []Labels
	if k := numClusters(labels); k > 1 && k < w.N {
		levels = append(levels, labels)
	}
	for round := uint64(1); ; round++ {
		if k := numClusters(labels); k <= 2 || k == w.N {
			break
		}
		g := collapseMeans(w, labels, 0)
		top, _, err := Louvain(g, 1, seed+round)
		if err != nil {
			return nil, err
		}
		if numClusters(top) == g.N {
			break // no partition merges any more
		}
		next := make(Labels, w.N)
		for i, v := range labels {
			next[i] = top[v]
		}
		labels = Canonical(next)
		levels = append(levels, labels)
	}
	all := make(Labels, w.N)
	for i := len(levels) - 1; i >= 0; i-- {
		parent := all
		if i+1 < len(levels) {
			parent = levels[i+1]
		}
		levels[i] = mergeWeakSplits(w, levels[i], parent, ratio)
	}
	var out []Labels
	for i, l := range levels {
		k := numClusters(l)
		if k <= 1 || k == w.N {
			continue
		}
		if i+1 < len(levels) && numClusters(levels[i+1]) == k {
			continue // the next level is the same partition
		}
		out = append(out, l)
	}
	// Modularity's resolution limit: in the whole graph, groups much
	// smaller than the graph and joined by strong links (two leaf
	// switches behind one uplink, seed 000 Fig. 5.19's lowest level)
	// gain more merged than apart. Within their group they are large.
	for len(out) > 0 {
		finer, err := refine(w, out[0], seed, ratio)
		if err != nil {
			return nil, err
		}
		if numClusters(finer) == numClusters(out[0]) {
			break
		}
		out = append([]Labels{finer}, out...)
	}
	return separateBands(w, out, DefaultBandGap), nil
}

// refine partitions every group of l alone (Louvain, then the parts that
// are not distinct merged again, as in BandwidthHierarchy) and returns the
// finer partition.
func refine(w *Matrix, l Labels, seed uint64, ratio float64) (Labels, error) {
	c := Canonical(l)
	k := numClusters(c)
	members := make([][]int, k)
	for i, v := range c {
		members[v] = append(members[v], i)
	}
	out := make(Labels, len(c))
	next := 0
	for _, pts := range members {
		parts := make(Labels, len(pts))
		if len(pts) >= 4 {
			sub := w.Sub(pts)
			lab, _, err := Louvain(sub, 1, seed)
			if err != nil {
				return nil, err
			}
			parts = reassignByMean(sub, mergeSimilar(sub, lab, ratio))
			if minGroup(parts) < 2 {
				// A point split off alone is one that measured too
				// little inside its group, not a group.
				parts = make(Labels, len(pts))
			}
		}
		for a, i := range pts {
			out[i] = next + parts[a]
		}
		next += numClusters(parts)
	}
	if next == len(c) {
		return c, nil // every point alone is no level
	}
	return out, nil
}

// mergeSimilar merges, most similar first, two groups of l whose mean
// weight between them exceeds ratio times the smaller of their mean
// weights within (missing edges, weight 0, left out; a group of one point
// has no weight within and is judged by the other's), until no two do.
func mergeSimilar(w *Matrix, l Labels, ratio float64) Labels {
	c := Canonical(l)
	for {
		k := numClusters(c)
		if k < 2 {
			return c
		}
		mean := groupMeans(w, c, k, nil)
		best, ba, bb := ratio, -1, -1
		for a := 0; a < k; a++ {
			for b := a + 1; b < k; b++ {
				if r := closeness(mean, a, b); r > best {
					best, ba, bb = r, a, b
				}
			}
		}
		if ba < 0 {
			return c
		}
		for i := range c {
			if c[i] == bb {
				c[i] = ba
			}
		}
		c = Canonical(c)
	}
}

// closeness is the mean weight between groups a and b over the smaller of
// their mean weights within (a group of one point, without weight within,
// judged by the other's); NaN when either is unmeasured.
func closeness(mean func(a, b int) float64, a, b int) float64 {
	between := mean(a, b)
	within := math.Min(mean(a, a), mean(b, b)) // NaN-free when one is
	if math.IsNaN(within) {
		within = mean(a, a)
		if math.IsNaN(within) {
			within = mean(b, b)
		}
	}
	if math.IsNaN(between) || math.IsNaN(within) || !(within > 0) {
		return math.NaN()
	}
	return between / within
}

// mergeWeakSplits merges, within every group of parent, the groups of l
// that are not distinct: two groups whose mean weight between them
// exceeds ratio times the smaller of their mean weights within (see
// BandwidthHierarchy).
func mergeWeakSplits(w *Matrix, l, parent Labels, ratio float64) Labels {
	c := Canonical(l)
	k := numClusters(c)
	par := Canonical(parent)
	mean := groupMeans(w, c, k, par)
	sets := newPointSets(k)
	for a := 0; a < k; a++ {
		for b := a + 1; b < k; b++ {
			between, wa, wb := mean(a, b), mean(a, a), mean(b, b)
			if math.IsNaN(between) || math.IsNaN(wa) || math.IsNaN(wb) {
				continue
			}
			if between > ratio*min(wa, wb) {
				sets.union(a, b)
			}
		}
	}
	out := make(Labels, len(c))
	for i, v := range c {
		out[i] = sets.find(v)
	}
	return Canonical(out)
}

// HierarchyNMI compares two hierarchies level by level, finest first: the
// smallest NMI of the pairs of levels, a level present in only one of them
// counting 0. Two empty hierarchies agree (1). It is how the swarm probe
// decides that successive iterations found the same structure.
func HierarchyNMI(a, b []Labels) (float64, error) {
	if len(a) == 0 && len(b) == 0 {
		return 1, nil
	}
	if len(a) != len(b) {
		return 0, nil
	}
	worst := math.Inf(1)
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return 0, fmt.Errorf("cluster: hierarchy level %d has %d and %d points", i, len(a[i]), len(b[i]))
		}
		v, err := metrics.NMI(a[i], b[i])
		if err != nil {
			return 0, err
		}
		worst = min(worst, v)
	}
	return worst, nil
}

// BandwidthTree is seed 000 Sect. 5.12: the points grouped by a partition
// (the finest level of BandwidthHierarchy, Sect. 5.12.1), the groups'
// weights averaged (Eq. 5.4 as Fig. 5.11 works it, collapseMeans) and the
// maximum spanning tree of that graph, whose nodes are the labels of l. A
// single group gives no edge.
func BandwidthTree(w *Matrix, l Labels) ([]PairEdge, error) {
	if err := checkTreeLabels(w, l); err != nil {
		return nil, err
	}
	return MaximumSpanningTree(collapseMeans(w, l, 0))
}

// checkTreeLabels checks what a bandwidth tree needs: a similarity matrix
// and a label for each of its points.
func checkTreeLabels(w *Matrix, l Labels) error {
	if err := checkSimilarity(w); err != nil {
		return err
	}
	if len(l) != w.N {
		return fmt.Errorf("cluster: bandwidth tree: %d labels for %d points", len(l), w.N)
	}
	for i, v := range l {
		if v < 0 {
			return fmt.Errorf("cluster: bandwidth tree: point %d is unlabelled", i)
		}
	}
	return nil
}

// collapseMeans is the graph of the groups of l (label k of Canonical(l)
// is node k): between two groups, the mean weight of the measured pairs
// (weight > 0) between their points, none where none was measured (0 for
// the maximum spanning tree, NaN, missing, for no edge at all). It is seed
// 000's Eq. 5.4 as the thesis works it and argues it: "we consider
// averaging rather than summation suitable" (Sect. 5.7.1), and for N2
// beside {N3, N4} (Fig. 5.11) "we accordingly average over the 2
// connections". Eq. 5.4 as printed, the sum over the pairs divided by
// conn_h = min(|V1|,|V2|)/max(|V1|,|V2|) (CollapseAveraged), is no
// average: a group twice the size of the others weighs four times as
// much, and on dichev-n2, whose first level joins R3 and R4, every other
// router hung on {R3, R4} (the bandwidth tree a star, where the means give
// N2's tree; the second level {R1..R4}, {R5..R9} of Fig. 5.20 lost in a
// graph whose best modularity was 0.01 to 0.02, where the means make it the
// best partition; docs/swarm.md).
func collapseMeans(w *Matrix, l Labels, none float64) *Matrix {
	c := Canonical(l)
	k := numClusters(c)
	mean := groupMeans(w, c, k, nil)
	out := NewMatrix(k)
	for a := 0; a < k; a++ {
		for b := a + 1; b < k; b++ {
			if v := mean(a, b); !math.IsNaN(v) {
				out.Set(a, b, v)
			} else if none != 0 {
				out.Set(a, b, none)
			}
		}
	}
	return out
}

// groupMeans returns the mean positive weight of w between (and within)
// the k groups of c, NaN for a pair of groups with no such weight; with
// within non-nil, only pairs of points in one group of within count.
func groupMeans(w *Matrix, c Labels, k int, within Labels) func(a, b int) float64 {
	sum := make([]float64, k*k)
	cnt := make([]int, k*k)
	for i := 0; i < w.N; i++ {
		for j := i + 1; j < w.N; j++ {
			x := w.At(i, j)
			if !(x > 0) || within != nil && within[i] != within[j] {
				continue
			}
			a, b := c[i], c[j]
			sum[a*k+b] += x
			cnt[a*k+b]++
			if a != b {
				sum[b*k+a] += x
				cnt[b*k+a]++
			}
		}
	}
	return func(a, b int) float64 {
		if cnt[a*k+b] == 0 {
			return math.NaN()
		}
		return sum[a*k+b] / float64(cnt[a*k+b])
	}
}

// reassignByMean moves every point to the group its measured pairs are
// fastest to on average, when it measured at least two pairs there and
// that mean exceeds its own group's; rounds of simultaneous moves, at most
// ten, until none moves. Modularity weighs a point's links by their sum,
// and a sparsely measured graph gives a point however many pairs its peer
// sets happened to hold in each group: on dichev-n1 a host that measured 3
// pairs in its own leaf at 1,600-2,300 fragments/s and 12 in the sibling
// leaf at 450-600 went with the sibling (docs/swarm.md). The mean over the
// measured pairs does not depend on how many there were.
func reassignByMean(w *Matrix, l Labels) Labels {
	c := Canonical(l)
	k := numClusters(c)
	sum := make([]float64, k)
	cnt := make([]int, k)
	for round := 0; round < 10; round++ {
		next := make(Labels, len(c))
		moved := false
		for i := range c {
			clear(sum)
			clear(cnt)
			for j := range c {
				if x := w.At(i, j); j != i && x > 0 {
					sum[c[j]] += x
					cnt[c[j]]++
				}
			}
			best, bm := c[i], -1.0
			if cnt[c[i]] > 0 {
				bm = sum[c[i]] / float64(cnt[c[i]])
			}
			for g := 0; g < k; g++ {
				if g != c[i] && cnt[g] >= 2 && sum[g]/float64(cnt[g]) > bm {
					best, bm = g, sum[g]/float64(cnt[g])
				}
			}
			next[i] = best
			moved = moved || best != c[i]
		}
		if !moved {
			break
		}
		c = next
	}
	return Canonical(c)
}

// minGroup is the size of l's smallest group.
func minGroup(l Labels) int {
	size := map[int]int{}
	for _, v := range l {
		size[v]++
	}
	m := len(l)
	for _, k := range size {
		m = min(m, k)
	}
	return m
}

// DefaultBandGap is the factor of closeness (see closeness) that separates
// two levels of a bandwidth hierarchy within one level found by
// modularity: on dichev-n1 the pairs of leaf routers behind one uplink
// are 0.09 to 0.25 (sibling leaf over within a leaf), the groups behind
// the 100 Mbit links 0.0005, a factor of 180 apart, while the joins of
// one level spread over a factor of 3.
const DefaultBandGap = 20

// separateBands finds levels that join groups of the finest level at two
// bands of closeness and splits each into two: a level with the close
// joins alone, then the level as it was. Louvain over the whole graph
// stops at different depths in different parts of it (on dichev-n1 it
// joined two leaf routers behind one uplink and left the other three
// pairs apart), and the collapse above it then joins the remaining pairs
// together with the weakly linked groups, so that no level holds the
// pairs alone (docs/swarm.md). A level between two whose joins are of one
// band, the earlier one partial, is dropped. levels is finest first; the
// finest level is kept as it is.
func separateBands(w *Matrix, levels []Labels, gap float64) []Labels {
	if len(levels) < 2 {
		return levels
	}
	f := Canonical(levels[0])
	k := numClusters(f)
	mean := groupMeans(w, f, k, nil)
	// group(l)[a] is the group of l holding finest group a.
	group := func(l Labels) []int {
		g := make([]int, k)
		for p, a := range f {
			g[a] = l[p]
		}
		return g
	}
	// together chains the finest groups of each group of fine, as edges
	// of infinite closeness.
	together := func(fine []int) []PairEdge {
		var es []PairEdge
		first := map[int]int{}
		for a, g := range fine {
			if a0, ok := first[g]; ok {
				es = append(es, PairEdge{I: a0, J: a, W: math.Inf(1)})
			} else {
				first[g] = a
			}
		}
		return es
	}
	// joins returns the closest joins (a maximum spanning forest by
	// closeness, its weights) that make coarse's groups out of fine's.
	joins := func(fine, coarse []int) []PairEdge {
		es := together(fine)
		for a := 0; a < k; a++ {
			for b := a + 1; b < k; b++ {
				if coarse[a] != coarse[b] || fine[a] == fine[b] {
					continue
				}
				if c := closeness(mean, a, b); c > 0 {
					es = append(es, PairEdge{I: a, J: b, W: c})
				}
			}
		}
		return slices.DeleteFunc(kruskal(k, es, true), func(e PairEdge) bool { return math.IsInf(e.W, 1) })
	}
	spread := func(a, b []PairEdge) float64 {
		lo, hi := math.Inf(1), 0.0
		for _, e := range slices.Concat(a, b) {
			lo, hi = min(lo, e.W), max(hi, e.W)
		}
		return hi / lo
	}
	out := []Labels{levels[0]}
	var prevJoins []PairEdge // the joins that made out's last level from the one below
	for _, l := range levels[1:] {
		fine, coarse := group(out[len(out)-1]), group(l)
		js := joins(fine, coarse)
		// js is sorted closest first; the widest step between neighbours
		// separates the bands.
		cut, step := -1, gap
		for i := 1; i < len(js); i++ {
			if r := js[i-1].W / js[i].W; r >= step {
				cut, step = i, r
			}
		}
		if cut > 0 {
			close := js[:cut]
			sets := newPointSets(k)
			for _, e := range slices.Concat(together(fine), close) {
				sets.union(e.I, e.J)
			}
			mid := make(Labels, len(f))
			for p, a := range f {
				mid[p] = sets.find(a)
			}
			if len(out) > 1 && len(prevJoins) > 0 && spread(prevJoins, close) < gap {
				// The level below joined part of the same band.
				out = out[:len(out)-1]
			}
			out = append(out, Canonical(mid))
			js = js[cut:]
		}
		out = append(out, l)
		prevJoins = js
	}
	return out
}
