package cluster

import (
	"fmt"
	"math"
	"sort"
)

// Linkage selects how the distance between two clusters is derived from the
// distances between their members in agglomerative clustering.
type Linkage int

const (
	// SingleLinkage: distance of the closest pair (computed via a minimum
	// spanning tree, Prim's algorithm on the dense matrix).
	SingleLinkage Linkage = iota
	// CompleteLinkage: distance of the farthest pair.
	CompleteLinkage
	// AverageLinkage: mean pairwise distance (UPGMA).
	AverageLinkage
	// WeightedLinkage: mean of the two merged clusters' distances (WPGMA).
	WeightedLinkage
	// WardLinkage: Ward's minimum-variance criterion applied to the given
	// distances through the Lance-Williams update, as SciPy does. The
	// heights are meaningful as variance increases only when the input is
	// Euclidean; on other inputs the update can go negative, which is
	// reported as an error.
	WardLinkage
)

// String returns the SciPy name of the linkage.
func (l Linkage) String() string {
	switch l {
	case SingleLinkage:
		return "single"
	case CompleteLinkage:
		return "complete"
	case AverageLinkage:
		return "average"
	case WeightedLinkage:
		return "weighted"
	case WardLinkage:
		return "ward"
	}
	return fmt.Sprintf("Linkage(%d)", int(l))
}

// ParseLinkage maps a SciPy method name ("single", "complete", "average",
// "weighted", "ward") to a Linkage.
func ParseLinkage(s string) (Linkage, error) {
	for l := SingleLinkage; l <= WardLinkage; l++ {
		if l.String() == s {
			return l, nil
		}
	}
	return 0, fmt.Errorf("cluster: unknown linkage %q (want single, complete, average, weighted or ward)", s)
}

// Agglomerative clusters the n points of the distance matrix d bottom-up and
// returns the full merge history in SciPy's linkage convention, so that the
// result equals scipy.cluster.hierarchy.linkage(squareform(d), method)
// merge for merge, including ties:
//
//   - single linkage is computed with Prim's algorithm from point 0 (ties to
//     the lowest index), complete/average/weighted/ward with the
//     nearest-neighbour chain (ties to the previous chain element, else the
//     lowest index); both in O(n^2) time, the chain on an n x n working
//     copy of the matrix;
//   - the merges are then stably sorted by height and renumbered: each row
//     names the two current cluster ids (points 0..n-1, merge i creates
//     n+i), smaller id first, and the size of the new cluster.
//
// All five linkages are reducible (monotone), so Heights never decrease.
func Agglomerative(d *Matrix, method Linkage) (*Dendrogram, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("agglomerative %s: %w", method, err)
	}
	if method < SingleLinkage || method > WardLinkage {
		return nil, fmt.Errorf("agglomerative: unknown linkage %d", int(method))
	}
	n := d.N
	den := &Dendrogram{N: n}
	if n < 2 {
		return den, nil
	}
	var raw []Merge
	if method == SingleLinkage {
		raw = primMerges(d)
	} else {
		var err error
		raw, err = nnChainMerges(d, method, nil)
		if err != nil {
			return nil, fmt.Errorf("agglomerative %s: %w", method, err)
		}
	}
	sort.SliceStable(raw, func(a, b int) bool { return raw[a].Height < raw[b].Height })
	den.Merges = relabelMerges(raw, n)
	return den, nil
}

// primMerges returns the n-1 minimum-spanning-tree edges in the order Prim's
// algorithm adds them, as point-id merges: A is the point added in the
// previous step, B the point added now.
func primMerges(d *Matrix) []Merge {
	n := d.N
	best := make([]float64, n)
	for i := range best {
		best[i] = math.Inf(1)
	}
	in := make([]bool, n)
	out := make([]Merge, 0, n-1)
	x := 0
	for k := 0; k < n-1; k++ {
		in[x] = true
		y, cur := -1, math.Inf(1)
		row := d.Data[x*n : (x+1)*n]
		for i := 0; i < n; i++ {
			if in[i] {
				continue
			}
			if row[i] < best[i] {
				best[i] = row[i]
			}
			if best[i] < cur || y < 0 {
				y, cur = i, best[i]
			}
		}
		out = append(out, Merge{A: x, B: y, Height: cur})
		x = y
	}
	return out
}

// nnChainMerges runs the nearest-neighbour chain algorithm with the
// Lance-Williams update of the given linkage. A merge of representatives
// x < y keeps y as the representative of the union. It works on a full
// row-major copy of the matrix (twice the memory of a triangle, but every
// scan is a contiguous row) and scans only the live clusters, in index
// order so that ties resolve as in SciPy. Point i starts as a cluster of
// sizes[i] points (1 for all when sizes is nil): AverageLinkageParts
// clusters parts as points of their sizes.
func nnChainMerges(d *Matrix, method Linkage, sizes []int) ([]Merge, error) {
	n := d.N
	dist := append([]float64(nil), d.Data...)
	size := make([]int, n)
	live := make([]int, n)
	for i := range size {
		size[i] = 1
		if sizes != nil {
			size[i] = sizes[i]
		}
		live[i] = i
	}
	chain := make([]int, 0, n)
	out := make([]Merge, 0, n-1)
	for k := 0; k < n-1; k++ {
		if len(chain) == 0 {
			chain = append(chain, live[0])
		}
		var x, y int
		var cur float64
		for {
			x = chain[len(chain)-1]
			row := dist[x*n : (x+1)*n]
			cur = math.Inf(1)
			y = -1
			// Prefer the previous chain element on ties so the chain
			// cannot cycle between equidistant clusters.
			if len(chain) > 1 {
				y = chain[len(chain)-2]
				cur = row[y]
			}
			for _, i := range live {
				if i == x {
					continue
				}
				if v := row[i]; v < cur || y < 0 {
					cur, y = v, i
				}
			}
			if len(chain) > 1 && y == chain[len(chain)-2] {
				break
			}
			chain = append(chain, y)
		}
		chain = chain[:len(chain)-2]
		if x > y {
			x, y = y, x
		}
		nx, ny := size[x], size[y]
		out = append(out, Merge{A: x, B: y, Height: cur, Size: nx + ny})
		size[x] = 0
		size[y] = nx + ny
		for p, i := range live {
			if i == x {
				live = append(live[:p], live[p+1:]...)
				break
			}
		}
		rx, ry := dist[x*n:(x+1)*n], dist[y*n:(y+1)*n]
		for _, i := range live {
			if i == y {
				continue
			}
			v, err := lanceWilliams(method, rx[i], ry[i], cur, nx, ny, size[i])
			if err != nil {
				return nil, fmt.Errorf("merging %d and %d against %d: %w", x, y, i, err)
			}
			ry[i] = v
			dist[i*n+y] = v
		}
	}
	return out, nil
}

// lanceWilliams is the distance from cluster i to the union of x and y. The
// operation order follows SciPy's so that results agree to the last bit.
func lanceWilliams(method Linkage, dxi, dyi, dxy float64, nx, ny, ni int) (float64, error) {
	switch method {
	case CompleteLinkage:
		return math.Max(dxi, dyi), nil
	case AverageLinkage:
		return (float64(nx)*dxi + float64(ny)*dyi) / float64(nx+ny), nil
	case WeightedLinkage:
		return 0.5 * (dxi + dyi), nil
	case WardLinkage:
		t := 1.0 / float64(nx+ny+ni)
		s := float64(ni+nx)*t*dxi*dxi + float64(ni+ny)*t*dyi*dyi - float64(ni)*t*dxy*dxy
		if s < 0 {
			if s > -1e-12*(dxi*dxi+dyi*dyi+dxy*dxy) {
				return 0, nil
			}
			return 0, fmt.Errorf("ward update is negative (%g): distances are not Euclidean", s)
		}
		return math.Sqrt(s), nil
	}
	return math.Min(dxi, dyi), nil
}

// relabelMerges turns merges of point representatives (sorted by height)
// into SciPy cluster ids with a union-find whose roots are the cluster ids.
func relabelMerges(raw []Merge, n int) []Merge {
	parent := make([]int, 2*n-1)
	size := make([]int, 2*n-1)
	for i := range parent {
		parent[i] = i
		size[i] = 1
	}
	find := func(x int) int {
		r := x
		for parent[r] != r {
			r = parent[r]
		}
		for parent[x] != r {
			parent[x], x = r, parent[x]
		}
		return r
	}
	out := make([]Merge, len(raw))
	for i, m := range raw {
		a, b := find(m.A), find(m.B)
		if a > b {
			a, b = b, a
		}
		id := n + i
		parent[a], parent[b] = id, id
		size[id] = size[a] + size[b]
		out[i] = Merge{A: a, B: b, Height: m.Height, Size: size[id]}
	}
	return out
}

// applyMerges unions the members of every merge i with keep(i) true (in merge
// order) and labels the resulting groups 0.. in order of their lowest point.
func applyMerges(d *Dendrogram, keep func(i int) bool) Labels {
	n := d.N
	parent := make([]int, 2*n)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for i, m := range d.Merges {
		id := n + i
		if keep(i) {
			parent[find(m.A)] = id
			parent[find(m.B)] = id
		}
	}
	return firstSeenLabels(n, find)
}

// firstSeenLabels numbers the groups given by root(i) 0.. in order of their
// lowest member.
func firstSeenLabels(n int, root func(int) int) Labels {
	out := make(Labels, n)
	ids := make(map[int]int)
	for i := 0; i < n; i++ {
		r := root(i)
		l, ok := ids[r]
		if !ok {
			l = len(ids)
			ids[r] = l
		}
		out[i] = l
	}
	return out
}

// Cut undoes the last k-1 merges of d and returns exactly k clusters (for 1
// <= k <= N), numbered 0.. in order of their lowest point. Unlike SciPy's
// fcluster(criterion="maxclust"), which cuts at a height and so may return
// fewer than k clusters when heights tie, Cut follows the merge order; the
// two agree whenever the height of merge N-k differs from that of merge
// N-k-1.
func Cut(d *Dendrogram, k int) (Labels, error) {
	if err := ValidateDendrogram(d); err != nil {
		return nil, err
	}
	if d.N == 0 && k == 0 {
		return Labels{}, nil
	}
	if k < 1 || k > d.N {
		return nil, fmt.Errorf("cluster: cut into %d clusters of %d points", k, d.N)
	}
	last := d.N - k // merges [0, last) are kept
	return applyMerges(d, func(i int) bool { return i < last }), nil
}

// CutHeight returns the flat clusters whose cophenetic distance is at most h,
// as SciPy's fcluster(Z, h, criterion="distance"): a merge is kept when the
// largest height in its subtree is <= h (for monotone dendrograms that is
// its own height). Clusters are numbered 0.. in order of their lowest point.
func CutHeight(d *Dendrogram, h float64) (Labels, error) {
	if err := ValidateDendrogram(d); err != nil {
		return nil, err
	}
	if math.IsNaN(h) {
		return nil, fmt.Errorf("cluster: cut height is NaN")
	}
	n := d.N
	maxd := make([]float64, len(d.Merges))
	sub := func(c int) float64 {
		if c < n {
			return math.Inf(-1)
		}
		return maxd[c-n]
	}
	for i, m := range d.Merges {
		maxd[i] = math.Max(m.Height, math.Max(sub(m.A), sub(m.B)))
	}
	return applyMerges(d, func(i int) bool { return maxd[i] <= h }), nil
}
