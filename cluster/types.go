// Package cluster turns pairwise measurements into groups of ranks: distance
// matrices, clustering algorithms written from their papers, automatic
// parameter search, and hierarchies cut into topology levels.
package cluster

import "fmt"

// Matrix is a dense symmetric n x n matrix of pairwise values: distances
// (smaller = closer) for most algorithms, or similarities/weights (larger =
// closer, e.g. bandwidth) for the modularity-based ones.
type Matrix struct {
	N    int
	Data []float64 // row-major, N*N
}

// NewMatrix returns an n x n zero matrix.
func NewMatrix(n int) *Matrix { return &Matrix{N: n, Data: make([]float64, n*n)} }

// At returns the value for pair (i, j).
func (m *Matrix) At(i, j int) float64 { return m.Data[i*m.N+j] }

// Set sets the value for pair (i, j) and (j, i).
func (m *Matrix) Set(i, j int, v float64) {
	m.Data[i*m.N+j] = v
	m.Data[j*m.N+i] = v
}

// Distances is a symmetric distance between Len() points that need not
// be held as an n x n matrix: a tree metric answers any pair from the
// tree, in O(n) memory where the matrix takes O(n^2) (8 GB of float64 at
// 32,768 points).
type Distances interface {
	Len() int
	At(i, j int) float64
	// EachPair calls f once for every pair i < j, row by row and j
	// increasing within a row: a whole pass costs what the matrix's would,
	// without the matrix.
	EachPair(f func(i, j int, d float64))
}

// Len is the number of points.
func (m *Matrix) Len() int { return m.N }

// EachPair calls f for every pair i < j, row by row.
func (m *Matrix) EachPair(f func(i, j int, d float64)) {
	for i := 0; i < m.N; i++ {
		for j := i + 1; j < m.N; j++ {
			f(i, j, m.Data[i*m.N+j])
		}
	}
}

// Dense is d as a matrix: d itself when it is one.
func Dense(d Distances) *Matrix {
	if m, ok := d.(*Matrix); ok {
		return m
	}
	m := NewMatrix(d.Len())
	d.EachPair(m.Set)
	return m
}

// Labels assigns each point a cluster id 0..k-1; Noise marks points that a
// density-based algorithm left unclustered.
type Labels []int

// Noise is the label of an unclustered point.
const Noise = -1

// Merge is one step of an agglomerative clustering, in SciPy's linkage
// convention: ids below N are points, id N+i is the cluster made by merge i.
type Merge struct {
	A, B   int
	Height float64
	Size   int
}

// Dendrogram is the full merge history of n points (n-1 merges, heights
// non-decreasing for monotone linkages).
type Dendrogram struct {
	N      int
	Merges []Merge
}

// Validate checks that m is square, symmetric and finite.
func (m *Matrix) Validate() error {
	if m == nil || m.N < 0 || len(m.Data) != m.N*m.N {
		return fmt.Errorf("cluster: malformed matrix")
	}
	for i := 0; i < m.N; i++ {
		for j := 0; j < m.N; j++ {
			v := m.Data[i*m.N+j]
			if v != v || v > 1e300 || v < -1e300 {
				return fmt.Errorf("cluster: matrix entry (%d,%d) is not finite", i, j)
			}
			if v != m.Data[j*m.N+i] {
				return fmt.Errorf("cluster: matrix not symmetric at (%d,%d)", i, j)
			}
		}
	}
	return nil
}
