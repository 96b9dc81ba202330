package cluster

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"netaware/metrics"
)

// KMeansOptions tunes KMeans. Zero values take the defaults.
type KMeansOptions struct {
	Seed    uint64 // seeds k-means++; same seed, same result
	NInit   int    // independent k-means++ starts, best inertia kept (default 10)
	MaxIter int    // Lloyd iterations per start (default 300)
}

// KMeansResult is a k-means clustering of feature vectors.
type KMeansResult struct {
	Labels     Labels      // Labels[i] = index of i's centre
	Centers    [][]float64 // k centroids
	Inertia    float64     // sum of squared distances to the assigned centre
	Iterations int         // Lloyd iterations of the kept start
}

// KMeans partitions feature vectors (all of one length, e.g. the PLogP
// vectors V_i of seed 003, Eq. 3.5) into k clusters minimizing the
// within-cluster sum of squares: Lloyd's iterations (assign each point to
// the nearest centre, lowest index on ties; move each centre to its mean)
// from k-means++ seeding (Arthur and Vassilvitskii 2007: first centre
// uniform, each next one drawn with probability proportional to the squared
// distance to the nearest centre chosen so far), repeated NInit times,
// keeping the lowest inertia. A centre left without points is moved to the
// point farthest from its centre. Time O(NInit * iterations * n k dim).
func KMeans(points [][]float64, k int, opt KMeansOptions) (*KMeansResult, error) {
	n := len(points)
	if n == 0 && k == 0 {
		return &KMeansResult{Labels: Labels{}}, nil
	}
	if k < 1 || k > n {
		return nil, fmt.Errorf("k-means: k = %d for %d points", k, n)
	}
	dim := len(points[0])
	for i, p := range points {
		if len(p) != dim {
			return nil, fmt.Errorf("k-means: point %d has %d coordinates, point 0 has %d", i, len(p), dim)
		}
		for j, v := range p {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("k-means: point %d coordinate %d is not finite", i, j)
			}
		}
	}
	if opt.NInit <= 0 {
		opt.NInit = 10
	}
	if opt.MaxIter <= 0 {
		opt.MaxIter = 300
	}
	r := rand.New(rand.NewPCG(opt.Seed, 0x6b6d65616e73))
	var best *KMeansResult
	for run := 0; run < opt.NInit; run++ {
		res := lloyd(points, kmeansPlusPlus(points, k, r), opt.MaxIter)
		if best == nil || res.Inertia < best.Inertia {
			best = res
		}
	}
	return best, nil
}

func sqDist(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

// kmeansPlusPlus draws k initial centres by D^2 sampling.
func kmeansPlusPlus(points [][]float64, k int, r *rand.Rand) [][]float64 {
	n := len(points)
	centres := [][]float64{append([]float64(nil), points[r.IntN(n)]...)}
	near := make([]float64, n)
	for i, p := range points {
		near[i] = sqDist(p, centres[0])
	}
	for len(centres) < k {
		total := 0.0
		for _, v := range near {
			total += v
		}
		pick := r.IntN(n) // all points on chosen centres: any point will do
		if total > 0 {
			u := r.Float64() * total
			for i, v := range near {
				u -= v
				if u < 0 || i == n-1 {
					pick = i
					break
				}
			}
		}
		c := append([]float64(nil), points[pick]...)
		centres = append(centres, c)
		for i, p := range points {
			near[i] = math.Min(near[i], sqDist(p, c))
		}
	}
	return centres
}

// lloyd runs Lloyd's iterations from the given centres until no assignment
// changes.
func lloyd(points [][]float64, centres [][]float64, maxIter int) *KMeansResult {
	n, k, dim := len(points), len(centres), len(points[0])
	labels := make(Labels, n)
	for i := range labels {
		labels[i] = -1
	}
	counts := make([]int, k)
	iter := 0
	for iter < maxIter {
		iter++
		changed := false
		for i, p := range points {
			bi, bd := 0, math.Inf(1)
			for c, ctr := range centres {
				if d := sqDist(p, ctr); d < bd {
					bi, bd = c, d
				}
			}
			if labels[i] != bi {
				labels[i], changed = bi, true
			}
		}
		if !changed {
			break
		}
		for c := range centres {
			counts[c] = 0
			for j := range centres[c] {
				centres[c][j] = 0
			}
		}
		for i, p := range points {
			c := labels[i]
			counts[c]++
			for j := 0; j < dim; j++ {
				centres[c][j] += p[j]
			}
		}
		for c := range centres {
			if counts[c] > 0 {
				for j := range centres[c] {
					centres[c][j] /= float64(counts[c])
				}
				continue
			}
			// Empty cluster: take the point worst served by its centre.
			far, fd := 0, -1.0
			for i, p := range points {
				if counts[labels[i]] > 1 {
					if d := sqDist(p, centres[labels[i]]); d > fd {
						far, fd = i, d
					}
				}
			}
			counts[labels[far]]--
			labels[far] = c
			counts[c] = 1
			copy(centres[c], points[far])
		}
	}
	inertia := 0.0
	for i, p := range points {
		inertia += sqDist(p, centres[labels[i]])
	}
	return &KMeansResult{Labels: labels, Centers: centres, Inertia: inertia, Iterations: iter}
}

// SpectralOptions tunes Spectral.
type SpectralOptions struct {
	// Sigma is the Gaussian kernel width in distance units; 0 means the
	// median of the positive pairwise distances.
	Sigma float64
	Seed  uint64 // seeds the k-means step
	NInit int    // k-means starts (default 10)
}

// GaussianAffinity returns A(i, j) = exp(-d(i, j)^2 / (2 sigma^2)) with a zero
// diagonal: similarity 1 for identical points, falling off over a few sigma.
func GaussianAffinity(d *Matrix, sigma float64) (*Matrix, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("gaussian affinity: %w", err)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, fmt.Errorf("gaussian affinity: sigma %g must be positive and finite", sigma)
	}
	n := d.N
	a := NewMatrix(n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				v := d.Data[i*n+j]
				a.Data[i*n+j] = math.Exp(-v * v / (2 * sigma * sigma))
			}
		}
	}
	return a, nil
}

// positiveDistances lists the positive off-diagonal entries of d, once a
// pair.
func positiveDistances(d *Matrix) []float64 {
	var v []float64
	for i := 0; i < d.N; i++ {
		for j := i + 1; j < d.N; j++ {
			if x := d.At(i, j); x > 0 {
				v = append(v, x)
			}
		}
	}
	return v
}

// Spectral clusters the points of distance matrix d into k groups with the
// algorithm of Ng, Jordan and Weiss (2001) (seed 003's reference [26]):
// Gaussian affinity A (see GaussianAffinity), M = D^-1/2 A D^-1/2 with D the
// degree matrix (the eigenvectors of M's k largest eigenvalues are those of
// the k smallest of the normalized Laplacian I - M), rows of the n x k
// eigenvector matrix scaled to unit length, then KMeans in that embedding.
// Eigenvectors come from gonum's dense symmetric solver: O(n^3) time, O(n^2)
// memory; to try several k, build a SpectralEmbedding once. Points with zero
// degree (farther than ~40 sigma from all others) embed at the origin.
// Labels are numbered 0.. in order of the lowest point.
func Spectral(d *Matrix, k int, opt SpectralOptions) (Labels, error) {
	if d != nil && d.N == 0 && k == 0 {
		return Labels{}, nil
	}
	e, err := NewSpectralEmbedding(d, opt.Sigma)
	if err != nil {
		return nil, err
	}
	return e.Cluster(k, opt.Seed, opt.NInit)
}

// SpectralEmbedding holds the eigendecomposition behind Spectral so that
// clusterings for several k cost one decomposition.
type SpectralEmbedding struct {
	n     int
	Sigma float64 // kernel width used
	vecs  mat.Dense
}

// NewSpectralEmbedding decomposes M = D^-1/2 A D^-1/2 for the Gaussian
// affinity of width sigma (0: median positive distance).
func NewSpectralEmbedding(d *Matrix, sigma float64) (*SpectralEmbedding, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("spectral: %w", err)
	}
	n := d.N
	if sigma == 0 {
		// The typical distance: points closer than it share a block.
		if v := positiveDistances(d); len(v) > 0 {
			sigma = metrics.Median(v)
		}
		if sigma == 0 {
			sigma = 1 // all points coincide: any width gives one block
		}
	}
	a, err := GaussianAffinity(d, sigma)
	if err != nil {
		return nil, fmt.Errorf("spectral: %w", err)
	}
	e := &SpectralEmbedding{n: n, Sigma: sigma}
	if n == 0 {
		return e, nil
	}
	inv := make([]float64, n)
	for i := 0; i < n; i++ {
		if s := rowSum(a, i); s > 0 {
			inv[i] = 1 / math.Sqrt(s)
		}
	}
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, inv[i]*a.Data[i*n+j]*inv[j])
		}
	}
	var es mat.EigenSym
	if !es.Factorize(sym, true) {
		return nil, fmt.Errorf("spectral: eigendecomposition of %d x %d matrix failed", n, n)
	}
	es.VectorsTo(&e.vecs)
	return e, nil
}

// Cluster runs k-means (seeded, nInit starts, 0 = 10) on the unit-length
// rows of the k leading eigenvectors.
func (e *SpectralEmbedding) Cluster(k int, seed uint64, nInit int) (Labels, error) {
	n := e.n
	if n == 0 && k == 0 {
		return Labels{}, nil
	}
	if k < 1 || k > n {
		return nil, fmt.Errorf("spectral: k = %d for %d points", k, n)
	}
	// Values are ascending: the last k columns belong to the largest.
	emb := make([][]float64, n)
	for i := range emb {
		row := make([]float64, k)
		norm := 0.0
		for c := 0; c < k; c++ {
			row[c] = e.vecs.At(i, n-k+c)
			norm += row[c] * row[c]
		}
		if norm > 0 {
			norm = math.Sqrt(norm)
			for c := range row {
				row[c] /= norm
			}
		}
		emb[i] = row
	}
	km, err := KMeans(emb, k, KMeansOptions{Seed: seed, NInit: nInit})
	if err != nil {
		return nil, fmt.Errorf("spectral: %w", err)
	}
	lab := km.Labels
	return firstSeenLabels(n, func(i int) int { return lab[i] }), nil
}
