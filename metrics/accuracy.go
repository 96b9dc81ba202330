package metrics

import (
	"fmt"
	"math"
	"sort"
)

// Accuracy is seed 003's level accuracy (Eq. 3.7-3.9): the fraction of ranks
// mapped to the correct machine, node or socket. The seed does not say how a
// found cluster is "mapped" to a true group; we map clusters to true groups
// one to one, choosing the mapping that puts the most ranks in the right
// place (maximum-weight bipartite matching on the contingency table), and
// count a rank as correct when its cluster is mapped to its true group.
// One-to-one matters: with a many-to-one mapping every rank in its own
// cluster would score 1 at every level, and the max over parameters of
// Eq. 3.10 would always pick that degenerate answer.
func Accuracy(found, truth []int) (float64, error) {
	c, err := newContingency(found, truth)
	if err != nil {
		return 0, fmt.Errorf("accuracy: %w", err)
	}
	if c.n == 0 {
		return 1, nil
	}
	return float64(c.bestMatching()) / float64(c.n), nil
}

// Score is Eq. 3.10: the best accuracy over runs of one method with
// different parameters.
func Score(accuracies []float64) float64 {
	best := math.Inf(-1)
	for _, a := range accuracies {
		best = math.Max(best, a)
	}
	if len(accuracies) == 0 {
		return 0
	}
	return best
}

// bestMatching returns the largest total overlap of a one-to-one matching
// between the classes of a and b. The bipartite overlap graph falls apart
// into components (a true group and the clusters touching it, for a nearly
// right clustering), and each is solved on its own, which keeps the cubic
// assignment step small even at thousands of ranks.
func (c *contingency) bestMatching() int {
	ra, rb := len(c.rows), len(c.cols)
	uf := make([]int, ra+rb)
	for i := range uf {
		uf[i] = i
	}
	find := func(x int) int {
		for uf[x] != x {
			uf[x] = uf[uf[x]]
			x = uf[x]
		}
		return x
	}
	for k := range c.cells {
		x, y := find(k[0]), find(ra+k[1])
		if x != y {
			uf[x] = y
		}
	}
	type comp struct{ as, bs []int }
	comps := map[int]*comp{}
	for i := 0; i < ra+rb; i++ {
		r := find(i)
		if comps[r] == nil {
			comps[r] = &comp{}
		}
		if i < ra {
			comps[r].as = append(comps[r].as, i)
		} else {
			comps[r].bs = append(comps[r].bs, i-ra)
		}
	}
	roots := make([]int, 0, len(comps))
	for r := range comps {
		roots = append(roots, r)
	}
	sort.Ints(roots)
	total := 0
	for _, r := range roots {
		cp := comps[r]
		rows, cols := cp.as, cp.bs
		w := func(i, j int) int { return c.cells[[2]int{rows[i], cols[j]}] }
		if len(rows) > len(cols) {
			rows, cols = cols, rows
			w = func(i, j int) int { return c.cells[[2]int{cols[j], rows[i]}] }
		}
		total += maxAssignment(len(rows), len(cols), w)
	}
	return total
}

// maxAssignment solves the rectangular assignment problem (n rows <= m
// columns, each row to a distinct column) for the largest total weight, by
// the Hungarian method with row and column potentials, O(n^2 m).
func maxAssignment(n, m int, w func(i, j int) int) int {
	if n == 0 {
		return 0
	}
	const inf = math.MaxInt64 / 4
	// Minimise cost = -weight. Index 0 is a virtual row/column.
	u := make([]int, n+1)
	v := make([]int, m+1)
	match := make([]int, m+1) // match[j] = row assigned to column j
	way := make([]int, m+1)
	for i := 1; i <= n; i++ {
		match[0] = i
		j0 := 0
		minv := make([]int, m+1)
		used := make([]bool, m+1)
		for j := range minv {
			minv[j] = inf
		}
		for {
			used[j0] = true
			i0, delta, j1 := match[j0], inf, 0
			for j := 1; j <= m; j++ {
				if used[j] {
					continue
				}
				cur := -w(i0-1, j-1) - u[i0] - v[j]
				if cur < minv[j] {
					minv[j] = cur
					way[j] = j0
				}
				if minv[j] < delta {
					delta = minv[j]
					j1 = j
				}
			}
			for j := 0; j <= m; j++ {
				if used[j] {
					u[match[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if match[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			match[j0] = match[j1]
			j0 = j1
		}
	}
	total := 0
	for j := 1; j <= m; j++ {
		if match[j] != 0 {
			total += w(match[j]-1, j-1)
		}
	}
	return total
}
