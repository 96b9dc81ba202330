package cluster

import (
	"fmt"
	"math"
	"sort"
)

// PLogPParams are the PLogP parameters of one ordered pair (sender i,
// receiver j) at one message size, in seconds: latency L, sender overhead
// o_s, receiver overhead o_r and gap g.
type PLogPParams struct {
	L, Os, Or, G float64
}

// Time is the predicted time of one message under the parameters, seed 003
// Eq. 3.3: t(m) = L + (o_s(m) + o_r(m))/2 + g(m).
func (p PLogPParams) Time() float64 { return p.L + (p.Os+p.Or)/2 + p.G }

// vector is the pair's four-element feature v_ij of seed 003 Eq. 3.5.
func (p PLogPParams) vector() [4]float64 { return [4]float64{p.L, p.Os, p.Or, p.G} }

func (p PLogPParams) finite() bool {
	for _, v := range p.vector() {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// PLogPCurve is the PLogP measurement of one ordered pair over message sizes:
// L is a single number, o_s, o_r and g one value per size (seconds).
type PLogPCurve struct {
	SizesBytes []float64 // strictly increasing
	L          float64
	Os, Or, G  []float64
}

// Fit selects how a PLogPCurve is evaluated between measured sizes; seed 003
// Sect. 3.2 uses both.
type Fit int

const (
	// Interpolate is the piecewise-linear fit between consecutive measured
	// sizes (PLogP adds sizes until this is within epsilon), extrapolating the
	// end segments.
	Interpolate Fit = iota
	// Regress is one least-squares line p(m) = a m + b per parameter.
	Regress
)

func (c *PLogPCurve) validate() error {
	n := len(c.SizesBytes)
	if n == 0 {
		return fmt.Errorf("plogp curve has no message sizes")
	}
	if len(c.Os) != n || len(c.Or) != n || len(c.G) != n {
		return fmt.Errorf("plogp curve has %d sizes but %d/%d/%d o_s/o_r/g values", n, len(c.Os), len(c.Or), len(c.G))
	}
	for i := 1; i < n; i++ {
		if !(c.SizesBytes[i] > c.SizesBytes[i-1]) {
			return fmt.Errorf("plogp curve sizes not increasing at index %d", i)
		}
	}
	return nil
}

// At evaluates the curve at message size m with the given fit.
func (c *PLogPCurve) At(m float64, fit Fit) (PLogPParams, error) {
	if err := c.validate(); err != nil {
		return PLogPParams{}, err
	}
	eval := func(y []float64) float64 {
		if fit == Regress {
			a, b := leastSquaresLine(c.SizesBytes, y)
			return a*m + b
		}
		return piecewiseLinear(c.SizesBytes, y, m)
	}
	return PLogPParams{L: c.L, Os: eval(c.Os), Or: eval(c.Or), G: eval(c.G)}, nil
}

// piecewiseLinear interpolates (x, y) at v, extending the first and last
// segments; a single point is a constant.
func piecewiseLinear(x, y []float64, v float64) float64 {
	n := len(x)
	if n == 1 {
		return y[0]
	}
	k := sort.SearchFloat64s(x, v) // first x[k] >= v
	switch {
	case k == 0:
		k = 1
	case k >= n:
		k = n - 1
	}
	x0, x1, y0, y1 := x[k-1], x[k], y[k-1], y[k]
	return y0 + (y1-y0)*(v-x0)/(x1-x0)
}

// leastSquaresLine fits y = a x + b; with one point the line is flat.
func leastSquaresLine(x, y []float64) (a, b float64) {
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx += x[i]
		sy += y[i]
		sxx += x[i] * x[i]
		sxy += x[i] * y[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0, sy / n
	}
	a = (n*sxy - sx*sy) / den
	return a, (sy - a*sx) / n
}

// PairFunc yields the value measured from i to j, and whether it exists.
type PairFunc func(i, j int) (float64, bool)

// symmetrize builds a symmetric matrix from a directed pair measurement by
// averaging the two directions; a pair measured one way only takes that
// value, and a pair measured neither way is NaN (missing). It returns how
// many pairs are missing.
func symmetrize(n int, at PairFunc, what string) (*Matrix, int, error) {
	if n < 0 {
		return nil, 0, fmt.Errorf("cluster %s: negative size %d", what, n)
	}
	m := NewMatrix(n)
	missing := 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			a, okA := at(i, j)
			b, okB := at(j, i)
			for _, c := range []struct {
				v  float64
				ok bool
				s  [2]int
			}{{a, okA, [2]int{i, j}}, {b, okB, [2]int{j, i}}} {
				if c.ok && (math.IsNaN(c.v) || math.IsInf(c.v, 0) || c.v < 0) {
					return nil, 0, fmt.Errorf("cluster %s: pair %d->%d has invalid value %v", what, c.s[0], c.s[1], c.v)
				}
			}
			var v float64
			switch {
			case okA && okB:
				v = (a + b) / 2
			case okA:
				v = a
			case okB:
				v = b
			default:
				v = math.NaN()
				missing++
			}
			m.Set(i, j, v)
		}
	}
	return m, missing, nil
}

// PLogPDistance is seed 003 Eq. 3.4: D(m)_ij = t_ij(m) (Eq. 3.3) for the
// parameters at one message size. PLogP measures each direction separately
// and t_ij != t_ji in general (o_s and o_r are measured at different ends),
// while every clustering here needs a symmetric dissimilarity, so D_ij is the
// mean of t_ij and t_ji: the cost of one message each way, halved. A pair
// measured in one direction only uses that direction; a pair measured in
// neither is NaN (missing, for ECO), and the count of such pairs is
// returned.
func PLogPDistance(n int, at func(i, j int) (PLogPParams, bool)) (*Matrix, int, error) {
	var bad error
	m, missing, err := symmetrize(n, func(i, j int) (float64, bool) {
		p, ok := at(i, j)
		if ok && !p.finite() && bad == nil {
			bad = fmt.Errorf("cluster plogp distance: pair %d->%d has non-finite parameters %+v", i, j, p)
		}
		return p.Time(), ok && p.finite()
	}, "plogp distance")
	if bad != nil {
		return nil, 0, bad
	}
	return m, missing, err
}

// PLogPFeatures builds seed 003's Eq. 3.5 vectors: V_i concatenates v_ij =
// [L, o_s, o_r, g] of pair (i, j) for j = 0..n-1, so 4n numbers per rank. The
// self pair (i, i) is not measured and contributes zeros. Every other pair
// must be present, since a Euclidean distance over partially missing
// coordinates would not compare like with like.
func PLogPFeatures(n int, at func(i, j int) (PLogPParams, bool)) ([][]float64, error) {
	if n < 0 {
		return nil, fmt.Errorf("cluster plogp features: negative size %d", n)
	}
	v := make([][]float64, n)
	for i := range v {
		v[i] = make([]float64, 4*n)
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			p, ok := at(i, j)
			if !ok {
				return nil, fmt.Errorf("cluster plogp features: pair %d->%d missing", i, j)
			}
			if !p.finite() {
				return nil, fmt.Errorf("cluster plogp features: pair %d->%d has non-finite parameters %+v", i, j, p)
			}
			x := p.vector()
			copy(v[i][4*j:4*j+4], x[:])
		}
	}
	return v, nil
}

// EuclideanDistance is seed 003 Eq. 3.6: A_ij = ||V_i - V_j|| over the given
// vectors, which must all have the same finite length.
func EuclideanDistance(vectors [][]float64) (*Matrix, error) {
	n := len(vectors)
	m := NewMatrix(n)
	for i := 0; i < n; i++ {
		if len(vectors[i]) != len(vectors[0]) {
			return nil, fmt.Errorf("cluster euclidean: vector %d has %d elements, vector 0 has %d", i, len(vectors[i]), len(vectors[0]))
		}
		for k, x := range vectors[i] {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("cluster euclidean: vector %d element %d is %v", i, k, x)
			}
		}
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			var s float64
			for k := range vectors[i] {
				d := vectors[i][k] - vectors[j][k]
				s += d * d
			}
			m.Set(i, j, math.Sqrt(s))
		}
	}
	return m, nil
}

// RTTDistance is the minimum round-trip time over all samples of a pair,
// taken in either direction: the minimum is the sample least disturbed by
// queueing and scheduling noise, so it is the best estimate of the path's
// propagation delay. samples(i, j) returns the RTTs measured with i as the
// initiator (may be empty). Pairs without samples are NaN (missing), and
// their count is returned.
func RTTDistance(n int, samples func(i, j int) []float64) (*Matrix, int, error) {
	if n < 0 {
		return nil, 0, fmt.Errorf("cluster rtt distance: negative size %d", n)
	}
	m := NewMatrix(n)
	missing := 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			best := math.Inf(1)
			for _, dir := range [][2]int{{i, j}, {j, i}} {
				for k, s := range samples(dir[0], dir[1]) {
					if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
						return nil, 0, fmt.Errorf("cluster rtt distance: pair %d->%d sample %d is %v", dir[0], dir[1], k, s)
					}
					best = math.Min(best, s)
				}
			}
			if math.IsInf(best, 1) {
				best = math.NaN()
				missing++
			}
			m.Set(i, j, best)
		}
	}
	return m, missing, nil
}

// BandwidthSimilarity is the achievable bandwidth of each pair (bytes/s,
// larger = closer) as edge weights for modularity clustering, averaged over
// the two directions as seed 000 counts fragments exchanged both ways on a
// connection (Eq. 4.1). The diagonal is 0 (no self loops). Missing pairs
// are NaN; their count is returned.
func BandwidthSimilarity(n int, bw PairFunc) (*Matrix, int, error) {
	return symmetrize(n, bw, "bandwidth similarity")
}

// BandwidthDistance turns a bandwidth similarity into the distance 1/bw for
// the distance-based algorithms (time per byte). A zero bandwidth is an
// error (infinitely far); NaN (missing) stays NaN.
func BandwidthDistance(sim *Matrix) (*Matrix, error) {
	if sim == nil || len(sim.Data) != sim.N*sim.N {
		return nil, fmt.Errorf("cluster bandwidth distance: malformed matrix")
	}
	n := sim.N
	m := NewMatrix(n)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			b := sim.At(i, j)
			switch {
			case math.IsNaN(b):
				m.Set(i, j, b)
			case !(b > 0) || math.IsInf(b, 0):
				return nil, fmt.Errorf("cluster bandwidth distance: pair (%d,%d) has bandwidth %v", i, j, b)
			default:
				m.Set(i, j, 1/b)
			}
		}
	}
	return m, nil
}

// IsMissing reports whether a matrix entry marks an unmeasured pair.
func IsMissing(v float64) bool { return math.IsNaN(v) }
