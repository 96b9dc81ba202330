package discover

import (
	"math"
	"sort"

	"netaware/cluster"
	"netaware/infer"
)

// treeDistance is the one-way distance the levels are cut from, between
// the tree's ranks 0..n-1 (the clustered ranks): half the best round trip
// where the inference measured the pair, the tree's path elsewhere.
// A pair the inference measured is known better than its tree path: the
// tree fits every pair at once, and a host placed from far-away
// measurements carries their error into all its paths. A pair measured
// more than once (the noise check's pairs, remeasured rounds) keeps its
// best: on a real network a pair's minimum is lifted by whatever slow
// spell its measurement fell into.
//
// It answers pairs from the tree, in memory that follows the tree and the
// measurements, not n^2 (a matrix of 16,384 ranks is 2 GB).
type treeDistance struct {
	t     *infer.Tree
	n     int
	fixes [][]fix // fixes[i]: the measured pairs (i, j), j > i, by j
	pairs int     // measured pairs
	// leaf, when set, holds each rank's leaf edge, taken off both ends of
	// every distance (see leafless).
	leaf []float64
}

// fix is a measured pair's one-way distance, v, to rank j.
type fix struct {
	j int
	v float64
}

func newTreeDistance(t *infer.Tree, n int, ms []infer.Measurement) *treeDistance {
	d := &treeDistance{t: t, n: n, fixes: make([][]fix, n)}
	for _, m := range ms {
		i, j := min(m.A, m.B), max(m.A, m.B)
		if i < 0 || j >= n || i == j {
			continue
		}
		d.fixes[i] = append(d.fixes[i], fix{j, m.RTT.Min})
	}
	for i, fs := range d.fixes {
		sort.SliceStable(fs, func(a, b int) bool { return fs[a].j < fs[b].j })
		out := fs[:0]
		for _, f := range fs {
			if k := len(out) - 1; k >= 0 && out[k].j == f.j {
				out[k].v = math.Min(out[k].v, f.v)
				continue
			}
			out = append(out, f)
		}
		for k := range out {
			out[k].v /= 2
		}
		d.fixes[i] = out
		d.pairs += len(out)
	}
	return d
}

// leafless is d less both ranks' leaf edges, floored at 0: the distance
// between the points where two ranks hang in the tree, d(i,j) - a(i) -
// a(j).
func (d *treeDistance) leafless() *treeDistance {
	out := *d
	out.leaf = make([]float64, d.n)
	for i := range out.leaf {
		out.leaf[i] = d.t.LeafLength(i)
	}
	return &out
}

func (d *treeDistance) Len() int { return d.n }

func (d *treeDistance) At(i, j int) float64 {
	if i == j {
		return 0
	}
	i, j = min(i, j), max(i, j)
	fs := d.fixes[i]
	if k := sort.Search(len(fs), func(k int) bool { return fs[k].j >= j }); k < len(fs) && fs[k].j == j {
		return d.off(i, j, fs[k].v)
	}
	return d.off(i, j, d.t.Distance(i, j))
}

// off takes the leaf edges off v, the distance of i < j, when leafless.
// What is left of two ranks on one switch is rounding (1e-22 s of a 0.3
// us path), not a distance: below a billionth of the path it is 0, or
// the cut would find levels in the rounding, and different ones as the
// merges' sums round differently.
func (d *treeDistance) off(i, j int, v float64) float64 {
	if d.leaf == nil {
		return v
	}
	if w := v - d.leaf[i] - d.leaf[j]; w > 1e-9*v {
		return w
	}
	return 0
}

func (d *treeDistance) EachPair(f func(i, j int, v float64)) {
	row, k := -1, 0
	d.t.EachDistance(d.n, func(i, j int, v float64) {
		if i != row {
			row, k = i, 0
		}
		fs := d.fixes[i]
		for k < len(fs) && fs[k].j < j {
			k++
		}
		if k < len(fs) && fs[k].j == j {
			v = fs[k].v
		}
		f(i, j, d.off(i, j, v))
	})
}

// parts splits the ranks for cluster.AverageLinkageParts: the largest
// subtrees of the tree (rooted where the tree is) of 2 to maxPart ranks
// that are clean under d, every other rank a part of its own. A subtree
// is clean when its largest distance inside is below its smallest to a
// rank outside; both are bounded from the tree, in time linear in its
// nodes and the measured pairs, not the n^2 pairs:
//   - on the tree's paths, every path from a rank inside a subtree to one
//     outside passes its top node x, so the smallest is the nearest rank
//     below x plus the nearest outside from x, and the largest inside is
//     the subtree's diameter, both by dynamic programming over the tree;
//   - a measured pair replaces its path; its value is taken into both
//     bounds beside the path (a larger largest, a smaller smallest), which
//     can only make a clean subtree look unclean, never the reverse.
//
// Leafless, the leaf edges count 0 on the paths, as they do in d.
func (d *treeDistance) parts(maxPart int) [][]int {
	nn := d.t.Len()
	parent := make([]int, nn)
	up := make([]float64, nn)
	rank := make([]int, nn)
	order := make([]int, 0, nn)
	d.t.EachNode(func(x, p int, l float64, r int) {
		parent[x], up[x], rank[x] = p, l, r
		order = append(order, x)
	})
	// tiny bounds what off rounds to 0: a billionth of any path, and no
	// path is longer than all the edges together.
	tiny := 0.0
	if d.leaf != nil {
		for _, x := range order {
			tiny += math.Abs(up[x])
		}
		for _, fs := range d.fixes {
			for _, f := range fs {
				tiny = max(tiny, f.v)
			}
		}
		tiny *= 1e-9
		// The leaf edges off: a rank's own edge up, and for a rank at the
		// root (its leaf edge that of its first child, as LeafLength has
		// it) that length off the edge of every child. Lengths may go
		// negative; the bounds below hold for any lengths.
		root := order[0]
		for _, x := range order[1:] {
			if rank[x] >= 0 {
				up[x] = 0
			}
		}
		if rank[root] >= 0 {
			leaf := d.leaf[rank[root]]
			for _, x := range order[1:] {
				if parent[x] == root {
					up[x] -= leaf
				}
			}
		}
	}
	inf := math.Inf(1)
	cnt := make([]int, nn)
	down := make([]float64, nn) // nearest rank below, from the node
	deep := make([]float64, nn) // farthest rank below
	diam := make([]float64, nn) // farthest two ranks below
	// The two nearest ranks below the node through different children,
	// and the child of the first: the nearest outside a child is through
	// its siblings, its parent's own rank, or its parent's outside.
	best1, best2 := make([]float64, nn), make([]float64, nn)
	bestChild := make([]int, nn)
	for _, x := range order {
		down[x], deep[x], diam[x] = inf, -inf, -inf
		best1[x], best2[x], bestChild[x] = inf, inf, -1
		if rank[x] >= 0 {
			cnt[x], down[x], deep[x] = 1, 0, 0
		}
	}
	for k := len(order) - 1; k > 0; k-- {
		c := order[k]
		p := parent[c]
		near, far := down[c]+up[c], deep[c]+up[c]
		diam[p] = max(diam[p], diam[c], deep[p]+far)
		deep[p] = max(deep[p], far)
		down[p] = min(down[p], near)
		cnt[p] += cnt[c]
		switch {
		case near < best1[p]:
			best1[p], best2[p], bestChild[p] = near, best1[p], c
		case near < best2[p]:
			best2[p] = near
		}
	}
	outside := make([]float64, nn) // nearest rank outside, from the node
	depth := make([]int, nn)
	outside[order[0]] = inf
	for _, c := range order[1:] {
		p := parent[c]
		depth[c] = depth[p] + 1
		o := outside[p]
		if rank[p] >= 0 {
			o = 0
		}
		if bestChild[p] == c {
			o = min(o, best2[p])
		} else {
			o = min(o, best1[p])
		}
		outside[c] = up[c] + o
	}
	largest, smallest := diam, make([]float64, nn)
	for x := range smallest {
		smallest[x] = down[x] + outside[x]
	}
	nodeOf := make([]int, d.n)
	for _, x := range order {
		if r := rank[x]; r >= 0 && r < d.n {
			nodeOf[r] = x
		}
	}
	atTop := make([]float64, nn) // measured pairs' largest, at their top
	for x := range atTop {
		atTop[x] = -inf
	}
	for i, fs := range d.fixes {
		for _, f := range fs {
			v := d.off(i, f.j, f.v)
			a, b := nodeOf[i], nodeOf[f.j]
			for a != b {
				if depth[a] < depth[b] {
					a, b = b, a
				}
				smallest[a] = min(smallest[a], v)
				a = parent[a]
			}
			atTop[a] = max(atTop[a], v)
		}
	}
	for k := len(order) - 1; k > 0; k-- {
		c := order[k]
		atTop[parent[c]] = max(atTop[parent[c]], atTop[c])
	}
	partOf := make([]int, nn)
	var parts [][]int
	for _, x := range order {
		partOf[x] = -1
		if p := parent[x]; p >= 0 && partOf[p] >= 0 {
			partOf[x] = partOf[p]
		} else if in := max(largest[x], atTop[x], 0); cnt[x] >= 2 && cnt[x] <= maxPart && cnt[x] < d.n && in*(1+1e-9) < smallest[x] && smallest[x] > tiny {
			// The margins: the bounds sum the edges in another order
			// than d's paths do, and off may have rounded an outer
			// distance to 0.
			partOf[x] = len(parts)
			parts = append(parts, nil)
		}
		if r := rank[x]; r >= 0 && r < d.n {
			if partOf[x] >= 0 {
				parts[partOf[x]] = append(parts[partOf[x]], r)
			} else {
				parts = append(parts, []int{r})
			}
		}
	}
	for _, p := range parts {
		sort.Ints(p)
	}
	sort.Slice(parts, func(a, b int) bool { return parts[a][0] < parts[b][0] })
	return parts
}

// denseLevelRanks is the number of clustered ranks up to which the levels
// are clustered on the whole matrix (8 MB); above it, part by part. A
// variable for the tests that run the parts on small worlds.
var denseLevelRanks = 1024

// averageLinkage is average linkage over d: on the matrix up to denseUpTo
// ranks, above it by clean parts of the tree of at most denseUpTo ranks
// (cluster.AverageLinkageParts), in memory that follows the parts.
func averageLinkage(d *treeDistance, denseUpTo int) (*cluster.Dendrogram, error) {
	if d.n <= denseUpTo {
		return cluster.Agglomerative(cluster.Dense(d), cluster.AverageLinkage)
	}
	parts := d.parts(denseUpTo)
	between, err := cluster.PartMeans(d, parts)
	if err != nil {
		return nil, err
	}
	within := func(p int) *cluster.Matrix { return cluster.SubOf(d, parts[p]) }
	return cluster.AverageLinkageParts(d.n, parts, within, between)
}
