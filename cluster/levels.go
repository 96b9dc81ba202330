package cluster

import (
	"fmt"
	"math"
	"sort"

	"netaware/topo"
)

// GapOptions tunes how LevelsFromDendrogram decides where one topology
// level ends and the next begins.
//
// The merge heights of a dendrogram built from a hierarchical platform come
// in bands: every intra-socket pair merges near the intra-socket distance,
// every socket pair of a node near the inter-socket distance, and so on. The
// bands are separated by multiplicative jumps (2x between sockets, 10x-1000x
// between hosts and sites), while inside a band the heights only spread by
// measurement noise. So the sorted heights are scanned in log space and a
// level boundary is declared where the jump to the next height is both
//   - large in absolute terms: h[k+1]/h[k] >= 1+MinJump, so that noise alone
//     (a few percent) never splits a band, and
//   - large relative to the band below: log(h[k+1]/h[k]) > SpreadFactor *
//     log(h[k]/median of the current band's heights), so that a band that
//     is itself widely spread (heterogeneous links) is not cut at an
//     ordinary step within it.
//
// Working in log space makes the rule scale-free: the same options work for
// nanosecond RTTs and for 1/bandwidth distances.
type GapOptions struct {
	// MinJump is the smallest relative jump between consecutive sorted
	// merge heights that can separate two levels. Default 0.25 (25%), well
	// above the 2-5% jitter of repeated latency measurements and well below
	// the 2x between sockets of one host.
	MinJump float64
	// SpreadFactor is how many times the band's log-spread above its median
	// must fit into the jump. Default 1.5: on a fram-like matrix with +-20%
	// jitter and 1% of pairs tripled, average linkage still finds sockets
	// and nodes in 10 of 10 seeds (3 gives 1 of 10), while a flat matrix
	// with the same noise still yields no level.
	SpreadFactor float64
}

// DefaultGapOptions returns the defaults documented on GapOptions.
func DefaultGapOptions() GapOptions { return GapOptions{MinJump: 0.25, SpreadFactor: 1.5} }

func (o GapOptions) withDefaults() GapOptions {
	d := DefaultGapOptions()
	if o.MinJump <= 0 {
		o.MinJump = d.MinJump
	}
	if o.SpreadFactor <= 0 {
		o.SpreadFactor = d.SpreadFactor
	}
	return o
}

// ValidateDendrogram checks that d is a complete merge history in SciPy's
// convention: n-1 merges, each merging two existing, not yet merged
// clusters, with finite non-negative heights.
func ValidateDendrogram(d *Dendrogram) error {
	if d == nil || d.N < 0 {
		return fmt.Errorf("cluster: dendrogram is nil or has negative size")
	}
	want := d.N - 1
	if d.N == 0 {
		want = 0
	}
	if len(d.Merges) != want {
		return fmt.Errorf("cluster: dendrogram of %d points has %d merges, want %d", d.N, len(d.Merges), want)
	}
	used := make([]bool, d.N+len(d.Merges))
	for i, m := range d.Merges {
		for _, id := range [2]int{m.A, m.B} {
			if id < 0 || id >= d.N+i {
				return fmt.Errorf("cluster: dendrogram merge %d refers to cluster %d which does not exist yet", i, id)
			}
			if used[id] {
				return fmt.Errorf("cluster: dendrogram merge %d reuses cluster %d", i, id)
			}
			used[id] = true
		}
		if m.A == m.B {
			return fmt.Errorf("cluster: dendrogram merge %d merges cluster %d with itself", i, m.A)
		}
		if math.IsNaN(m.Height) || math.IsInf(m.Height, 0) || m.Height < 0 {
			return fmt.Errorf("cluster: dendrogram merge %d has invalid height %v", i, m.Height)
		}
	}
	return nil
}

// dendroOrder holds the merges of a dendrogram with monotone heights, sorted
// by height, and the point that represents each cluster id.
type dendroOrder struct {
	n      int
	rep    []int     // cluster id -> one point of it
	order  []int     // merge indices sorted by effective height
	height []float64 // effective height of merge i (max with its children)
}

// newDendroOrder makes heights monotone (a merge is never lower than the
// merges it contains, which centroid/median linkages can violate) so that
// cuts at increasing heights are always nested partitions.
func newDendroOrder(d *Dendrogram) *dendroOrder {
	n := d.N
	o := &dendroOrder{n: n, rep: make([]int, n+len(d.Merges)), height: make([]float64, len(d.Merges))}
	for i := 0; i < n; i++ {
		o.rep[i] = i
	}
	eff := func(id int) float64 {
		if id < n {
			return 0
		}
		return o.height[id-n]
	}
	for i, m := range d.Merges {
		o.rep[n+i] = o.rep[m.A]
		o.height[i] = math.Max(m.Height, math.Max(eff(m.A), eff(m.B)))
	}
	o.order = make([]int, len(d.Merges))
	for i := range o.order {
		o.order[i] = i
	}
	sort.SliceStable(o.order, func(a, b int) bool { return o.height[o.order[a]] < o.height[o.order[b]] })
	return o
}

// labelsAfter returns the partition after the first k merges in height order.
func (o *dendroOrder) labelsAfter(d *Dendrogram, k int) Labels {
	uf := newPointSets(o.n)
	for _, mi := range o.order[:k] {
		m := d.Merges[mi]
		uf.union(o.rep[m.A], o.rep[m.B])
	}
	return uf.labels()
}

// LevelCuts returns the heights at which LevelsFromDendrogram cuts d: each
// returned height is the last merge height of one level's band, in
// increasing order.
func LevelCuts(d *Dendrogram, opt GapOptions) ([]float64, error) {
	if err := ValidateDendrogram(d); err != nil {
		return nil, err
	}
	o := newDendroOrder(d)
	h := make([]float64, len(o.order))
	for i, mi := range o.order {
		h[i] = o.height[mi]
	}
	var cuts []float64
	for _, k := range gapBoundaries(h, opt.withDefaults()) {
		cuts = append(cuts, h[k])
	}
	return cuts, nil
}

// gapBoundaries returns indices k into the sorted heights h such that a level
// ends at h[k] (h[k+1] starts the next band). See GapOptions for the rule.
func gapBoundaries(h []float64, opt GapOptions) []int {
	var out []int
	start := 0
	minGap := math.Log1p(opt.MinJump)
	for k := 0; k+1 < len(h); k++ {
		lo, hi := h[k], h[k+1]
		if lo <= 0 {
			// Identical points (zero distance) form their own band.
			if hi > 0 {
				out = append(out, k)
				start = k + 1
			}
			continue
		}
		gap := math.Log(hi / lo)
		// The band's spread is measured from its median, not its minimum:
		// the few lowest merges of a band are the luckiest samples, and
		// measuring from them lets a wide jitter (or a rare outlier that
		// lifts a merge) mask the jump to the next level.
		spread := math.Log(lo / h[start+(k-start)/2])
		if gap >= minGap && gap > opt.SpreadFactor*spread {
			out = append(out, k)
			start = k + 1
		}
	}
	return out
}

// LevelsFromDendrogram cuts d at every height gap (see GapOptions) and
// returns the resulting partitions as topology levels, finest first. The
// all-singletons partition is omitted (it says nothing); the last level is
// the single group "all". Levels are named level-1, level-2, ...; giving
// them physical names is the caller's job.
func LevelsFromDendrogram(d *Dendrogram, opt GapOptions) ([]topo.Level, error) {
	if err := ValidateDendrogram(d); err != nil {
		return nil, err
	}
	o := newDendroOrder(d)
	h := make([]float64, len(o.order))
	for i, mi := range o.order {
		h[i] = o.height[mi]
	}
	var parts []Labels
	for _, k := range gapBoundaries(h, opt.withDefaults()) {
		parts = append(parts, o.labelsAfter(d, k+1))
	}
	return LevelsFromPartitions(d.N, parts)
}

// LevelsFromPartitions turns a sequence of nested flat clusterings (finest
// first, each a coarsening of the previous) into topology levels: trivial
// all-singleton partitions and repeats are dropped, and a final "all" level
// is appended unless the last partition already is one group. Noise labels
// are not allowed: every level must list every point.
func LevelsFromPartitions(n int, parts []Labels) ([]topo.Level, error) {
	var kept []Labels
	for pi, p := range parts {
		if len(p) != n {
			return nil, fmt.Errorf("cluster: partition %d has %d labels, want %d", pi, len(p), n)
		}
		for i, l := range p {
			if l < 0 {
				return nil, fmt.Errorf("cluster: partition %d leaves point %d unclustered", pi, i)
			}
		}
		c := Canonical(p)
		if numClusters(c) == n && n > 1 {
			continue
		}
		if len(kept) > 0 {
			prev := kept[len(kept)-1]
			if !isCoarsening(prev, c) {
				return nil, fmt.Errorf("cluster: partition %d is not a coarsening of the one before", pi)
			}
			if numClusters(prev) == numClusters(c) {
				continue
			}
		}
		kept = append(kept, c)
	}
	if n > 0 && (len(kept) == 0 || numClusters(kept[len(kept)-1]) > 1) {
		kept = append(kept, make(Labels, n))
	}
	levels := make([]topo.Level, len(kept))
	for i, p := range kept {
		name := fmt.Sprintf("level-%d", i+1)
		if numClusters(p) == 1 {
			name = "all"
		}
		levels[i] = topo.Level{Name: name, Groups: Groups(p)}
	}
	return levels, nil
}

// Canonical renumbers labels 0..k-1 in order of first appearance, keeping
// Noise as is.
func Canonical(l Labels) Labels {
	out := make(Labels, len(l))
	next := 0
	seen := map[int]int{}
	for i, v := range l {
		if v < 0 {
			out[i] = Noise
			continue
		}
		id, ok := seen[v]
		if !ok {
			id = next
			seen[v] = id
			next++
		}
		out[i] = id
	}
	return out
}

// Groups lists the points of each cluster (sorted), clusters ordered by their
// smallest point; Noise points are left out.
func Groups(l Labels) [][]int {
	c := Canonical(l)
	var groups [][]int
	for i, v := range c {
		if v < 0 {
			continue
		}
		for v >= len(groups) {
			groups = append(groups, nil)
		}
		groups[v] = append(groups[v], i)
	}
	return groups
}

// numClusters counts the distinct non-noise labels.
func numClusters(l Labels) int {
	seen := map[int]bool{}
	for _, v := range l {
		if v >= 0 {
			seen[v] = true
		}
	}
	return len(seen)
}

// isCoarsening reports whether every cluster of fine lies inside one cluster
// of coarse.
func isCoarsening(fine, coarse Labels) bool {
	to := map[int]int{}
	for i, f := range fine {
		c, ok := to[f]
		if !ok {
			to[f] = coarse[i]
			continue
		}
		if c != coarse[i] {
			return false
		}
	}
	return true
}

// pointSets is a union-find over points 0..n-1.
type pointSets struct{ parent []int }

func newPointSets(n int) *pointSets {
	p := &pointSets{parent: make([]int, n)}
	for i := range p.parent {
		p.parent[i] = i
	}
	return p
}

func (p *pointSets) find(x int) int {
	for p.parent[x] != x {
		p.parent[x] = p.parent[p.parent[x]]
		x = p.parent[x]
	}
	return x
}

// union joins the sets of a and b and reports whether they were distinct.
func (p *pointSets) union(a, b int) bool {
	ra, rb := p.find(a), p.find(b)
	if ra == rb {
		return false
	}
	if rb < ra {
		ra, rb = rb, ra
	}
	p.parent[rb] = ra
	return true
}

// labels numbers the sets in order of their smallest point.
func (p *pointSets) labels() Labels {
	l := make(Labels, len(p.parent))
	for i := range l {
		l[i] = p.find(i)
	}
	return Canonical(l)
}

// LevelsFromDistances is the whole "levels without counts" pipeline:
// agglomerative clustering of d with the given linkage (average is the
// recommended one: its heights are the mean distance between groups, which
// noise moves least) and the gap cut of LevelsFromDendrogram.
func LevelsFromDistances(d *Matrix, link Linkage, opt GapOptions) ([]topo.Level, error) {
	den, err := Agglomerative(d, link)
	if err != nil {
		return nil, err
	}
	return LevelsFromDendrogram(den, opt)
}
