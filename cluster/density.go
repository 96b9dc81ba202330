package cluster

import (
	"fmt"
	"math"
)

// DBSCAN clusters the points of distance matrix d by density (Ester et al.
// 1996), with scikit-learn's conventions for DBSCAN(metric="precomputed"):
//
//   - the eps-neighbourhood of i is every j (i itself included) with
//     d(i, j) <= eps;
//   - i is a core point when its neighbourhood has at least minPts points;
//   - clusters grow from core points taken in index order, so cluster 0
//     contains the lowest-index core point, cluster 1 the next core point
//     not yet reached, and so on;
//   - a border point (not core, within eps of a core point) belongs to the
//     first cluster, in that order, that reaches it;
//   - everything else is Noise.
//
// Time O(n^2), memory O(n) beyond the matrix.
func DBSCAN(d *Matrix, eps float64, minPts int) (Labels, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("dbscan: %w", err)
	}
	if math.IsNaN(eps) || eps < 0 {
		return nil, fmt.Errorf("dbscan: eps %g must be >= 0", eps)
	}
	if minPts < 1 {
		return nil, fmt.Errorf("dbscan: minPts %d must be >= 1", minPts)
	}
	n := d.N
	core := make([]bool, n)
	for i := 0; i < n; i++ {
		c := 0
		for _, v := range d.Data[i*n : (i+1)*n] {
			if v <= eps {
				c++
			}
		}
		core[i] = c >= minPts
	}
	labels := make(Labels, n)
	for i := range labels {
		labels[i] = Noise
	}
	next := 0
	stack := make([]int, 0, n)
	for s := 0; s < n; s++ {
		if labels[s] != Noise || !core[s] {
			continue
		}
		labels[s] = next
		stack = append(stack[:0], s)
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for q, v := range d.Data[p*n : (p+1)*n] {
				if v > eps || labels[q] != Noise {
					continue
				}
				labels[q] = next
				if core[q] {
					stack = append(stack, q)
				}
			}
		}
		next++
	}
	return labels, nil
}

// ConnectedComponents labels the connected components of the graph with an
// edge between i and j whenever d(i, j) < threshold (strictly), numbered 0..
// in order of their lowest point. This is the "connected components"
// clustering of seed 003 (threshold searched over the distance range); it is
// single linkage cut just below threshold. Time O(n^2).
func ConnectedComponents(d *Matrix, threshold float64) (Labels, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("connected components: %w", err)
	}
	if math.IsNaN(threshold) {
		return nil, fmt.Errorf("connected components: threshold is NaN")
	}
	n := d.N
	labels := make(Labels, n)
	for i := range labels {
		labels[i] = Noise
	}
	next := 0
	stack := make([]int, 0, n)
	for s := 0; s < n; s++ {
		if labels[s] != Noise {
			continue
		}
		labels[s] = next
		stack = append(stack[:0], s)
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for q, v := range d.Data[p*n : (p+1)*n] {
				if v < threshold && labels[q] == Noise {
					labels[q] = next
					stack = append(stack, q)
				}
			}
		}
		next++
	}
	return labels, nil
}
