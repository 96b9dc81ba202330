package cluster

import (
	"fmt"
	"math"

	"netaware/metrics"
)

// DefaultSearchSteps is seed 003's k = 50 (Sect. 3.3): the smallest number
// of points that gave useful results at P = 32.
const DefaultSearchSteps = 50

// Space is a parameter interval (Low, High) scanned by LinearSearch; an
// Integer space rounds each point and skips repeats, which turns a scan of
// [1, P) into the exhaustive search the seed describes for k-medoids.
type Space struct {
	Low, High float64
	Integer   bool
}

// Points are seed 003's linear search: from Low towards High in increments
// of (High-Low)/k, i.e. Low + i (High-Low)/k for i = 0..k-1 (High itself
// is excluded, as in the seed's [1, P)).
func (s Space) Points(k int) ([]float64, error) {
	if k <= 0 {
		return nil, fmt.Errorf("cluster search: %d steps, want > 0", k)
	}
	if math.IsNaN(s.Low) || math.IsNaN(s.High) || math.IsInf(s.Low, 0) || math.IsInf(s.High, 0) || s.High < s.Low {
		return nil, fmt.Errorf("cluster search: invalid space (%v, %v)", s.Low, s.High)
	}
	var out []float64
	step := (s.High - s.Low) / float64(k)
	for i := 0; i < k; i++ {
		x := s.Low + float64(i)*step
		if s.Integer {
			x = math.Round(x)
			if x >= s.High && s.High > s.Low || len(out) > 0 && out[len(out)-1] == x {
				continue
			}
		}
		out = append(out, x)
	}
	return out, nil
}

// DistanceSpace is the seed's space for threshold parameters (DBSCAN's eps,
// connected components' threshold): (min A, max A) over the off-diagonal
// entries of the distance matrix.
func DistanceSpace(d *Matrix) (Space, error) {
	if err := d.Validate(); err != nil {
		return Space{}, err
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := 0; i < d.N; i++ {
		for j := i + 1; j < d.N; j++ {
			lo, hi = math.Min(lo, d.At(i, j)), math.Max(hi, d.At(i, j))
		}
	}
	if d.N < 2 {
		lo, hi = 0, 0
	}
	return Space{Low: lo, High: hi}, nil
}

// SSSTreeAlphaSpace is the seed's space for SSSTree's alpha.
var SSSTreeAlphaSpace = Space{Low: 0, High: 5}

// Trial is one evaluated parameter value.
type Trial struct {
	X      float64
	Labels Labels
	// Score is the criterion; NaN when it is undefined for this clustering
	// (e.g. a silhouette of a single cluster), such trials are never chosen.
	Score float64
}

// SearchResult is the outcome of a linear parameter search.
type SearchResult struct {
	Trials []Trial
	Best   int // index into Trials, -1 if no trial had a defined score
}

// BestTrial returns the chosen trial, or an error if none was usable.
func (r *SearchResult) BestTrial() (Trial, error) {
	if r == nil || r.Best < 0 {
		return Trial{}, fmt.Errorf("cluster search: no parameter value gave a clustering the criterion can score")
	}
	return r.Trials[r.Best], nil
}

// LinearSearch runs the clustering at every point of the space (seed 003
// Sect. 3.3) and scores each result with criterion, larger is better. The
// first maximum wins, so ties go to the smallest parameter. A run that fails
// aborts the search with the parameter named.
func LinearSearch(s Space, k int, run func(x float64) (Labels, error), criterion func(Labels) float64) (*SearchResult, error) {
	xs, err := s.Points(k)
	if err != nil {
		return nil, err
	}
	res := &SearchResult{Best: -1}
	for _, x := range xs {
		l, err := run(x)
		if err != nil {
			return nil, fmt.Errorf("cluster search: parameter %v: %w", x, err)
		}
		sc := criterion(l)
		res.Trials = append(res.Trials, Trial{X: x, Labels: l, Score: sc})
		if !math.IsNaN(sc) && (res.Best < 0 || sc > res.Trials[res.Best].Score) {
			res.Best = len(res.Trials) - 1
		}
	}
	return res, nil
}

// SilhouetteCriterion scores a clustering of d by its mean silhouette, the
// ground-truth-free criterion used to pick parameters automatically. The
// seed scores its search with accuracy against known machines, nodes and
// sockets (Eq. 3.7-3.10), which a user discovering an unknown platform does
// not have; the silhouette rewards exactly what the seed's clusters are
// meant to be, points much closer to their own group than to the next.
func SilhouetteCriterion(d *Matrix) func(Labels) float64 {
	return func(l Labels) float64 {
		s, err := Silhouette(d, l)
		if err != nil {
			return math.NaN()
		}
		return s
	}
}

// Silhouette is the mean silhouette coefficient of the clustering l on the
// distance matrix d (Rousseeuw 1987, as scikit-learn's silhouette_score with
// metric="precomputed"): s(i) = (b-a)/max(a,b), a the mean distance to the
// rest of i's cluster, b the smallest mean distance to another cluster, and
// s(i) = 0 for a point alone in its cluster. Noise points count as clusters
// of their own. It is defined for 2 <= clusters <= n-1.
func Silhouette(d *Matrix, l Labels) (float64, error) {
	if err := d.Validate(); err != nil {
		return 0, err
	}
	n := d.N
	if len(l) != n {
		return 0, fmt.Errorf("cluster silhouette: %d labels for %d points", len(l), n)
	}
	c := make(Labels, n)
	k := 0
	ids := map[int]int{}
	for i, v := range l {
		if v < 0 {
			c[i] = k
			k++
			continue
		}
		id, ok := ids[v]
		if !ok {
			id = k
			ids[v] = id
			k++
		}
		c[i] = id
	}
	if k < 2 || k > n-1 {
		return 0, fmt.Errorf("cluster silhouette: %d clusters for %d points, want 2..n-1", k, n)
	}
	size := make([]int, k)
	for _, v := range c {
		size[v]++
	}
	sum := make([]float64, k)
	var total float64
	for i := 0; i < n; i++ {
		if size[c[i]] == 1 {
			continue // s(i) = 0
		}
		for j := range sum {
			sum[j] = 0
		}
		for j := 0; j < n; j++ {
			sum[c[j]] += d.At(i, j)
		}
		a := sum[c[i]] / float64(size[c[i]]-1)
		b := math.Inf(1)
		for j := 0; j < k; j++ {
			if j != c[i] {
				b = math.Min(b, sum[j]/float64(size[j]))
			}
		}
		if m := math.Max(a, b); m > 0 {
			total += (b - a) / m
		}
	}
	return total / float64(n), nil
}

// Accuracy is seed 003's accuracy at one level (Eq. 3.7-3.9), computed by
// package metrics (clusters matched one-to-one to true groups so as to
// maximise the points in matched pairs). A Noise point counts as a cluster
// of its own, as in Silhouette.
func Accuracy(found, truth Labels) (float64, error) {
	f := make([]int, len(found))
	next := 0
	for _, v := range found {
		next = max(next, v+1)
	}
	for i, v := range found {
		if v < 0 {
			v = next
			next++
		}
		f[i] = v
	}
	for i, v := range truth {
		if v < 0 {
			return 0, fmt.Errorf("cluster accuracy: true label of point %d is noise", i)
		}
	}
	return metrics.Accuracy(f, truth)
}

// ScoreMaxOverParameters is seed 003 Eq. 3.10: the best accuracy over all
// runs of a method (all parameter values tried). It needs the ground truth
// and is for evaluation only.
func ScoreMaxOverParameters(r *SearchResult, truth Labels) (float64, error) {
	if r == nil || len(r.Trials) == 0 {
		return 0, fmt.Errorf("cluster score: no trials")
	}
	acc := make([]float64, len(r.Trials))
	for i, tr := range r.Trials {
		a, err := Accuracy(tr.Labels, truth)
		if err != nil {
			return 0, fmt.Errorf("cluster score: parameter %v: %w", tr.X, err)
		}
		acc[i] = a
	}
	return metrics.Score(acc), nil
}
