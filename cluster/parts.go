package cluster

import (
	"fmt"
	"sort"
)

// AverageLinkageParts is Agglomerative(d, AverageLinkage) over n points
// computed part by part, without an n x n matrix: each part of two or more
// points is clustered alone, on the matrix within(p) of its own points
// (point k of that matrix is parts[p][k]), and then the parts are
// clustered as points of their sizes on between, the k x k matrix of the
// mean distances between parts (mean of d(i, j) over i in one part and j
// in the other). parts must be disjoint and cover the n points; a point
// alone is a part of one.
//
// It is the whole clustering when every part is clean: its largest
// distance inside is below its smallest distance to a point outside it.
// Average linkage then finishes each part before any of its points merges
// outside: a cluster inside the part is at most the largest inner distance
// from another one inside (a mean of inner distances), and at least the
// smallest outer distance from any cluster outside (a mean of outer
// distances), so the part's closest pair of clusters is always inside it,
// and the merges inside it are those of the part clustered alone. Once
// whole, a part is at the mean of its pairs from every other cluster,
// which is where between starts. Heights agree with Agglomerative's up to
// rounding (the means are summed in another order than the Lance-Williams
// updates), and merges of equal height may come in another order; the
// partitions cut between two heights are the same. Parts that are not
// clean give a different, still valid, dendrogram: cleanness is the
// caller's to check (TreeParts in package discover does it on a tree).
func AverageLinkageParts(n int, parts [][]int, within func(p int) *Matrix, between *Matrix) (*Dendrogram, error) {
	if err := checkParts(n, parts); err != nil {
		return nil, err
	}
	if between == nil || between.N != len(parts) {
		return nil, fmt.Errorf("cluster: the matrix between %d parts is malformed", len(parts))
	}
	if err := between.Validate(); err != nil {
		return nil, fmt.Errorf("cluster: between parts: %w", err)
	}
	den := &Dendrogram{N: n}
	if n < 2 {
		return den, nil
	}
	raw := make([]Merge, 0, n-1)
	sizes := make([]int, len(parts))
	for p, pts := range parts {
		sizes[p] = len(pts)
		if len(pts) < 2 {
			continue
		}
		m := within(p)
		if m == nil || m.N != len(pts) {
			return nil, fmt.Errorf("cluster: part %d has %d points, its matrix is not %d x %d", p, len(pts), len(pts), len(pts))
		}
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("cluster: part %d: %w", p, err)
		}
		ms, err := nnChainMerges(m, AverageLinkage, nil)
		if err != nil {
			return nil, err
		}
		for _, x := range ms {
			raw = append(raw, Merge{A: pts[x.A], B: pts[x.B], Height: x.Height})
		}
	}
	ms, err := nnChainMerges(between, AverageLinkage, sizes)
	if err != nil {
		return nil, err
	}
	for _, x := range ms {
		// Any point of a cluster names it: relabelMerges finds its root.
		raw = append(raw, Merge{A: parts[x.A][0], B: parts[x.B][0], Height: x.Height})
	}
	sort.SliceStable(raw, func(a, b int) bool { return raw[a].Height < raw[b].Height })
	den.Merges = relabelMerges(raw, n)
	return den, nil
}

func checkParts(n int, parts [][]int) error {
	seen := make([]bool, n)
	count := 0
	for p, pts := range parts {
		if len(pts) == 0 {
			return fmt.Errorf("cluster: part %d is empty", p)
		}
		for _, i := range pts {
			if i < 0 || i >= n {
				return fmt.Errorf("cluster: part %d holds point %d, outside 0..%d", p, i, n-1)
			}
			if seen[i] {
				return fmt.Errorf("cluster: point %d is in two parts", i)
			}
			seen[i] = true
			count++
		}
	}
	if count != n {
		return fmt.Errorf("cluster: the parts hold %d of %d points", count, n)
	}
	return nil
}

// PartMeans is the matrix of mean distances between parts (mean of d(i,
// j) over i in one part and j in the other, 0 on the diagonal), from one
// pass over d's pairs: O(k^2) memory for k parts, not O(n^2).
func PartMeans(d Distances, parts [][]int) (*Matrix, error) {
	n := d.Len()
	if err := checkParts(n, parts); err != nil {
		return nil, err
	}
	of := make([]int, n)
	for p, pts := range parts {
		for _, i := range pts {
			of[i] = p
		}
	}
	// The sums land on either side of the diagonal as the pairs come;
	// each cell pair is read once and replaced by the mean.
	k := len(parts)
	out := NewMatrix(k)
	d.EachPair(func(i, j int, v float64) {
		if a, b := of[i], of[j]; a != b {
			out.Data[a*k+b] += v
		}
	})
	for a := 0; a < k; a++ {
		for b := a + 1; b < k; b++ {
			out.Set(a, b, (out.Data[a*k+b]+out.Data[b*k+a])/(float64(len(parts[a]))*float64(len(parts[b]))))
		}
	}
	return out, nil
}
