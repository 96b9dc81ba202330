// Package metrics scores a discovered topology against ground truth: how
// well partitions agree (NMI, adjusted Rand index, seed 003's level
// accuracy), how often shared-link queries are answered wrongly and how
// close predicted latencies come to measured ones (seed 002 Sect. 5).
// It works on data only; truth and predictions come in as values or
// functions so that callers can plug in a platform's routes or a tree.
package metrics

import (
	"fmt"
	"math"
)

// LabelsFromGroups turns a partition given as groups of ranks 0..n-1 into one
// label per rank (the group index). Every rank must appear exactly once.
func LabelsFromGroups(groups [][]int, n int) ([]int, error) {
	lab := make([]int, n)
	for i := range lab {
		lab[i] = -1
	}
	for gi, g := range groups {
		for _, r := range g {
			if r < 0 || r >= n {
				return nil, fmt.Errorf("group %d: rank %d out of range [0,%d)", gi, r, n)
			}
			if lab[r] >= 0 {
				return nil, fmt.Errorf("rank %d is in group %d and group %d", r, lab[r], gi)
			}
			lab[r] = gi
		}
	}
	for r, l := range lab {
		if l < 0 {
			return nil, fmt.Errorf("rank %d is in no group", r)
		}
	}
	return lab, nil
}

// contingency is the table of co-occurrence counts of two labelings, with
// labels renumbered densely in order of first appearance.
type contingency struct {
	n     int
	a, b  []int          // dense labels
	rows  []int          // size of each class of a
	cols  []int          // size of each class of b
	cells map[[2]int]int // (class of a, class of b) -> count, non-zero only
}

func newContingency(a, b []int) (*contingency, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("labelings have %d and %d elements", len(a), len(b))
	}
	c := &contingency{n: len(a), cells: map[[2]int]int{}}
	c.a, c.rows = dense(a)
	c.b, c.cols = dense(b)
	for i := range c.a {
		c.cells[[2]int{c.a[i], c.b[i]}]++
	}
	return c, nil
}

func dense(x []int) (lab, sizes []int) {
	id := map[int]int{}
	lab = make([]int, len(x))
	for i, v := range x {
		k, ok := id[v]
		if !ok {
			k = len(id)
			id[v] = k
			sizes = append(sizes, 0)
		}
		lab[i] = k
		sizes[k]++
	}
	return lab, sizes
}

func entropy(sizes []int, n int) float64 {
	var h float64
	for _, s := range sizes {
		if s > 0 {
			p := float64(s) / float64(n)
			h -= p * math.Log(p)
		}
	}
	return h
}

func (c *contingency) mutualInfo() float64 {
	var mi float64
	n := float64(c.n)
	for k, v := range c.cells {
		nij := float64(v)
		mi += nij / n * (math.Log(nij) + math.Log(n) - math.Log(float64(c.rows[k[0]])) - math.Log(float64(c.cols[k[1]])))
	}
	return math.Max(mi, 0)
}

// NMI is the normalized mutual information of two labelings with the
// arithmetic-mean normalization, MI / ((H(a)+H(b))/2), matching scikit-learn's
// normalized_mutual_info_score defaults, including its limit cases: two
// labelings that both put everything in one cluster score 1, and any other
// pair with zero mutual information scores 0.
func NMI(a, b []int) (float64, error) {
	c, err := newContingency(a, b)
	if err != nil {
		return 0, fmt.Errorf("nmi: %w", err)
	}
	if len(c.rows) == len(c.cols) && len(c.rows) <= 1 {
		return 1, nil
	}
	mi := c.mutualInfo()
	if mi == 0 {
		return 0, nil
	}
	norm := (entropy(c.rows, c.n) + entropy(c.cols, c.n)) / 2
	return mi / norm, nil
}

// ARI is the adjusted Rand index of two labelings (Hubert and Arabie),
// computed from the pair confusion matrix as scikit-learn's
// adjusted_rand_score does; 1 for identical partitions, about 0 for
// independent ones, negative when worse than chance.
func ARI(a, b []int) (float64, error) {
	c, err := newContingency(a, b)
	if err != nil {
		return 0, fmt.Errorf("ari: %w", err)
	}
	var ss, sa, sb int64
	for _, v := range c.cells {
		ss += int64(v) * int64(v)
	}
	for _, v := range c.rows {
		sa += int64(v) * int64(v)
	}
	for _, v := range c.cols {
		sb += int64(v) * int64(v)
	}
	n := int64(c.n)
	// Ordered pairs: tp together in both, fp together only in b, fn only in a.
	tp := ss - n
	fp := sb - ss
	fn := sa - ss
	tn := n*n - fp - fn - ss
	if fn == 0 && fp == 0 {
		return 1, nil
	}
	ftp, ffp, ffn, ftn := float64(tp), float64(fp), float64(fn), float64(tn)
	return 2 * (ftp*ftn - ffn*ffp) / ((ftp+ffn)*(ffn+ftn) + (ftp+ffp)*(ffp+ftn)), nil
}

// NMIGroups and ARIGroups are NMI and ARI on partitions given as groups.
func NMIGroups(a, b [][]int, n int) (float64, error) {
	la, lb, err := bothLabels(a, b, n)
	if err != nil {
		return 0, fmt.Errorf("nmi: %w", err)
	}
	return NMI(la, lb)
}

// ARIGroups is ARI on partitions given as groups of ranks 0..n-1.
func ARIGroups(a, b [][]int, n int) (float64, error) {
	la, lb, err := bothLabels(a, b, n)
	if err != nil {
		return 0, fmt.Errorf("ari: %w", err)
	}
	return ARI(la, lb)
}

func bothLabels(a, b [][]int, n int) ([]int, []int, error) {
	la, err := LabelsFromGroups(a, n)
	if err != nil {
		return nil, nil, fmt.Errorf("first partition: %w", err)
	}
	lb, err := LabelsFromGroups(b, n)
	if err != nil {
		return nil, nil, fmt.Errorf("second partition: %w", err)
	}
	return la, lb, nil
}
