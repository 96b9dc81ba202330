package cluster

import (
	"fmt"
	"math"
	"sort"
)

// HDBSCANSelection chooses which clusters of the condensed tree HDBSCAN
// returns.
type HDBSCANSelection int

const (
	// ExcessOfMass selects the set of non-overlapping clusters with the
	// largest total stability (Campello et al. 2013, Sect. 3.2); the root is
	// never selected.
	ExcessOfMass HDBSCANSelection = iota
	// LeafSelection selects the leaves of the condensed cluster tree: the
	// finest clusters of at least MinClusterSize points.
	LeafSelection
)

// HDBSCANOptions are the parameters of HDBSCAN. Zero values take the
// scikit-learn defaults.
type HDBSCANOptions struct {
	// MinClusterSize is the smallest group that counts as a cluster (>= 2;
	// default 5). Smaller groups split off a cluster are "falling out"
	// points, not a split.
	MinClusterSize int
	// MinSamples is the k of the core distance: the distance to the k-th
	// nearest point, the point itself included (default MinClusterSize).
	MinSamples int
	// Selection is ExcessOfMass (default) or LeafSelection.
	Selection HDBSCANSelection
}

// CondensedEdge is one row of the condensed tree, as in scikit-learn's
// condensed tree: Child (a point id < N, or a cluster id >= N) leaves
// cluster Parent at density Lambda = 1/distance (+Inf at distance 0).
// ChildSize is 1 for points.
type CondensedEdge struct {
	Parent, Child int
	Lambda        float64
	ChildSize     int
}

// HDBSCANResult is the outcome of HDBSCAN with everything needed to draw or
// re-cut the hierarchy.
type HDBSCANResult struct {
	Labels Labels // Noise for points in no selected cluster
	// Probabilities: strength of membership in [0, 1], as scikit-learn's
	// probabilities_ (0 for noise).
	Probabilities []float64
	// CoreDistances[i] is the MinSamples-th smallest distance of point i.
	CoreDistances []float64
	// Tree is the single-linkage dendrogram of the mutual-reachability
	// distances (SciPy convention).
	Tree *Dendrogram
	// Condensed is the condensed tree; its clusters are numbered N (the
	// root, all points), N+1, ... in breadth-first order of creation.
	Condensed []CondensedEdge
	// Stability of every condensed cluster, indexed by id - N (before the
	// excess-of-mass propagation).
	Stability []float64
	// Selected lists the condensed cluster ids returned; Labels[i] = j means
	// point i belongs to Selected[j]. Ids are increasing.
	Selected []int
}

// HDBSCAN clusters the points of distance matrix d (Campello, Moulavi and
// Sander 2013), in the formulation of McInnes and Healy 2017 that
// scikit-learn's HDBSCAN(metric="precomputed") implements:
//
//  1. core distance of i = MinSamples-th smallest value of row i (the
//     point itself, distance 0, counts);
//  2. mutual reachability m(i, j) = max(core(i), core(j), d(i, j));
//  3. minimum spanning tree of m (Prim, O(n^2)), edges sorted stably by
//     weight, turned into a single-linkage tree;
//  4. condensed tree: walking down from the root, a split where both sides
//     have >= MinClusterSize points creates two new clusters; otherwise the
//     smaller side's points fall out of the current cluster at lambda =
//     1/height;
//  5. stability of cluster C = sum over its points of (lambda_leave -
//     lambda_birth(C)); excess of mass keeps a cluster when its stability is
//     at least the sum of its children's (propagated bottom-up), or the leaf
//     rule keeps the leaves;
//  6. points take the label of the selected cluster above them, else Noise;
//     probability = min(lambda_point, lambda_max(C)) / lambda_max(C).
//
// Equal-weight MST edges are ordered by Prim's discovery order (scikit-learn
// uses an unstable sort there, so on exact ties the two may build different
// but equally valid trees). Time O(n^2), memory O(n^2) for the
// mutual-reachability matrix. With fewer than 2 points everything is noise.
func HDBSCAN(d *Matrix, opt HDBSCANOptions) (*HDBSCANResult, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("hdbscan: %w", err)
	}
	if opt.MinClusterSize == 0 {
		opt.MinClusterSize = 5
	}
	if opt.MinSamples == 0 {
		opt.MinSamples = opt.MinClusterSize
	}
	if opt.MinClusterSize < 2 {
		return nil, fmt.Errorf("hdbscan: MinClusterSize %d must be >= 2", opt.MinClusterSize)
	}
	if opt.MinSamples < 1 {
		return nil, fmt.Errorf("hdbscan: MinSamples %d must be >= 1", opt.MinSamples)
	}
	if opt.Selection != ExcessOfMass && opt.Selection != LeafSelection {
		return nil, fmt.Errorf("hdbscan: unknown selection %d", int(opt.Selection))
	}
	n := d.N
	res := &HDBSCANResult{Labels: make(Labels, n), Probabilities: make([]float64, n), Tree: &Dendrogram{N: n}}
	for i := range res.Labels {
		res.Labels[i] = Noise
	}
	if n < 2 {
		res.CoreDistances = make([]float64, n)
		return res, nil
	}
	if opt.MinSamples > n {
		return nil, fmt.Errorf("hdbscan: MinSamples %d exceeds the %d points", opt.MinSamples, n)
	}
	res.CoreDistances = coreDistances(d, opt.MinSamples)
	mr := mutualReachability(d, res.CoreDistances)
	raw := primMerges(mr)
	sort.SliceStable(raw, func(a, b int) bool { return raw[a].Height < raw[b].Height })
	res.Tree.Merges = relabelMerges(raw, n)
	res.Condensed = condenseTree(res.Tree, opt.MinClusterSize)
	res.Stability = clusterStability(res.Condensed, n)
	switch opt.Selection {
	case ExcessOfMass:
		res.Selected = selectEOM(res.Condensed, res.Stability, n)
	case LeafSelection:
		res.Selected = selectLeaves(res.Condensed, n)
	}
	labelCondensed(res, n)
	return res, nil
}

// coreDistances returns the k-th smallest value of every row: a sorted
// buffer of the k smallest values (O(n k) per row) for small k, a full sort
// otherwise.
func coreDistances(d *Matrix, k int) []float64 {
	n := d.N
	out := make([]float64, n)
	buf := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		row := d.Data[i*n : (i+1)*n]
		if k > 64 {
			buf = append(buf[:0], row...)
			sort.Float64s(buf)
			out[i] = buf[k-1]
			continue
		}
		buf = buf[:0]
		for _, v := range row {
			if len(buf) == k && v >= buf[k-1] {
				continue
			}
			p := sort.SearchFloat64s(buf, v)
			if len(buf) < k {
				buf = append(buf, 0)
			}
			copy(buf[p+1:], buf[p:len(buf)-1])
			buf[p] = v
		}
		out[i] = buf[k-1]
	}
	return out
}

// mutualReachability returns max(core(i), core(j), d(i, j)) with a zero
// diagonal.
func mutualReachability(d *Matrix, core []float64) *Matrix {
	n := d.N
	m := NewMatrix(n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				m.Data[i*n+j] = math.Max(d.Data[i*n+j], math.Max(core[i], core[j]))
			}
		}
	}
	return m
}

// condenseTree walks the single-linkage tree top-down, breadth first, and
// keeps only splits into two parts of at least minSize points.
func condenseTree(t *Dendrogram, minSize int) []CondensedEdge {
	n := t.N
	root := 2*n - 2
	size := func(c int) int {
		if c < n {
			return 1
		}
		return t.Merges[c-n].Size
	}
	relabel := make([]int, 2*n-1)
	relabel[root] = n
	next := n + 1
	var out []CondensedEdge
	// fallOut emits every point under c as leaving parent at lambda.
	stack := []int{}
	fallOut := func(c, parent int, lambda float64) {
		stack = append(stack[:0], c)
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if x < n {
				out = append(out, CondensedEdge{Parent: parent, Child: x, Lambda: lambda, ChildSize: 1})
				continue
			}
			m := t.Merges[x-n]
			stack = append(stack, m.B, m.A)
		}
	}
	queue := []int{root}
	for len(queue) > 0 {
		node := queue[0]
		queue = queue[1:]
		m := t.Merges[node-n]
		lambda := math.Inf(1)
		if m.Height > 0 {
			lambda = 1 / m.Height
		}
		p := relabel[node]
		left, right := m.A, m.B
		lbig, rbig := size(left) >= minSize, size(right) >= minSize
		switch {
		case lbig && rbig:
			for _, c := range [2]int{left, right} {
				relabel[c] = next
				out = append(out, CondensedEdge{Parent: p, Child: next, Lambda: lambda, ChildSize: size(c)})
				next++
			}
		case !lbig && !rbig:
			fallOut(left, p, lambda)
			fallOut(right, p, lambda)
			continue
		case !lbig:
			relabel[right] = p
			fallOut(left, p, lambda)
			left = -1
		default:
			relabel[left] = p
			fallOut(right, p, lambda)
			right = -1
		}
		for _, c := range [2]int{left, right} {
			if c >= n {
				queue = append(queue, c)
			}
		}
	}
	return out
}

// clusterStability returns, for every condensed cluster id c >= n, the sum
// over its rows of (lambda - lambda_birth(c)) * childSize.
func clusterStability(ct []CondensedEdge, n int) []float64 {
	nc := 1
	for _, e := range ct {
		if e.Child >= n && e.Child-n+1 > nc {
			nc = e.Child - n + 1
		}
	}
	birth := make([]float64, nc)
	for _, e := range ct {
		if e.Child >= n {
			birth[e.Child-n] = e.Lambda
		}
	}
	st := make([]float64, nc)
	for _, e := range ct {
		b := birth[e.Parent-n]
		if e.Lambda == b {
			continue // also avoids Inf - Inf for duplicate points
		}
		st[e.Parent-n] += (e.Lambda - b) * float64(e.ChildSize)
	}
	return st
}

// clusterChildren lists, per condensed cluster, its child clusters.
func clusterChildren(ct []CondensedEdge, n, nc int) [][]int {
	ch := make([][]int, nc)
	for _, e := range ct {
		if e.Child >= n {
			ch[e.Parent-n] = append(ch[e.Parent-n], e.Child)
		}
	}
	return ch
}

// selectEOM picks clusters by excess of mass: bottom-up (children have
// larger ids than parents), a cluster beats its descendants unless their
// propagated stability is larger.
func selectEOM(ct []CondensedEdge, stability []float64, n int) []int {
	nc := len(stability)
	st := append([]float64(nil), stability...)
	ch := clusterChildren(ct, n, nc)
	sel := make([]bool, nc)
	for c := nc - 1; c >= 1; c-- {
		sub := 0.0
		for _, x := range ch[c] {
			sub += st[x-n]
		}
		if len(ch[c]) > 0 && sub > st[c] {
			st[c] = sub
			continue
		}
		sel[c] = true
		// Deselect every descendant.
		stack := append([]int(nil), ch[c]...)
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			sel[x-n] = false
			stack = append(stack, ch[x-n]...)
		}
	}
	return selectedIDs(sel, n)
}

// selectLeaves picks the condensed clusters without child clusters (never
// the root).
func selectLeaves(ct []CondensedEdge, n int) []int {
	nc := 1
	for _, e := range ct {
		if e.Child >= n && e.Child-n+1 > nc {
			nc = e.Child - n + 1
		}
	}
	ch := clusterChildren(ct, n, nc)
	sel := make([]bool, nc)
	for c := 1; c < nc; c++ {
		sel[c] = len(ch[c]) == 0
	}
	return selectedIDs(sel, n)
}

func selectedIDs(sel []bool, n int) []int {
	var out []int
	for c, ok := range sel {
		if ok {
			out = append(out, c+n)
		}
	}
	return out
}

// labelCondensed gives each point the label of the nearest selected cluster
// above it and its membership probability.
func labelCondensed(res *HDBSCANResult, n int) {
	nc := len(res.Stability)
	parent := make([]int, nc) // parent cluster of every cluster, -1 for root
	parent[0] = -1
	maxLambda := make([]float64, nc)
	pointParent := make([]int, n)
	pointLambda := make([]float64, n)
	for _, e := range res.Condensed {
		if e.Lambda > maxLambda[e.Parent-n] {
			maxLambda[e.Parent-n] = e.Lambda
		}
		if e.Child >= n {
			parent[e.Child-n] = e.Parent
		} else {
			pointParent[e.Child] = e.Parent
			pointLambda[e.Child] = e.Lambda
		}
	}
	label := make([]int, nc)
	for i := range label {
		label[i] = Noise
	}
	for j, c := range res.Selected {
		label[c-n] = j
	}
	// Clusters are created after their parents, so one forward pass
	// propagates a selected ancestor's label down.
	for c := 1; c < nc; c++ {
		if label[c] == Noise && parent[c] >= 0 {
			label[c] = label[parent[c]-n]
		}
	}
	for i := 0; i < n; i++ {
		l := label[pointParent[i]-n]
		res.Labels[i] = l
		if l == Noise {
			continue
		}
		ml := maxLambda[res.Selected[l]-n]
		if ml == 0 || math.IsInf(pointLambda[i], 1) {
			res.Probabilities[i] = 1
		} else {
			res.Probabilities[i] = math.Min(pointLambda[i], ml) / ml
		}
	}
}
