package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// LinkOracle answers "do the flows a->b and c->d share a link?".
type LinkOracle func(a, b, c, d int) (bool, error)

// LinkQueryResult counts the answers of a predicted oracle against the truth
// over random queries (seed 002 Sect. 5).
type LinkQueryResult struct {
	Queries       int `json:"queries"`
	TruePositive  int `json:"true_positive"`
	FalsePositive int `json:"false_positive"`
	FalseNegative int `json:"false_negative"`
	TrueNegative  int `json:"true_negative"`
	// FalsePositiveRate is FP / (FP + TN): of the flow pairs that truly do
	// not share a link, the fraction predicted to share one (0 if none).
	FalsePositiveRate float64 `json:"false_positive_rate"`
	// FalseNegativeRate is FN / (FN + TP): of the flow pairs that truly
	// share a link, the fraction predicted not to (0 if none).
	FalseNegativeRate float64 `json:"false_negative_rate"`
	// ErrorRate is (FP + FN) / Queries.
	ErrorRate float64 `json:"error_rate"`
}

// SharedLinkQueries asks both oracles the same random queries: each draws
// four distinct endpoints A, B, C, D from endpoints (for seed 002, one rank
// per host) and asks whether A->B and C->D share a link. The same seed gives
// the same queries.
func SharedLinkQueries(endpoints []int, queries int, seed uint64, predicted, truth LinkOracle) (LinkQueryResult, error) {
	var res LinkQueryResult
	if len(endpoints) < 4 {
		return res, fmt.Errorf("shared-link queries need at least 4 endpoints, have %d", len(endpoints))
	}
	if queries < 0 {
		return res, fmt.Errorf("shared-link queries: negative query count %d", queries)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed0002))
	for q := 0; q < queries; q++ {
		// Rejection sampling of 4 distinct endpoints: cheap, since queries
		// only make sense with many more endpoints than 4.
		var pick, idx [4]int
		for k := 0; k < 4; {
			i := rng.IntN(len(endpoints))
			if slices.Contains(idx[:k], i) {
				continue
			}
			idx[k], pick[k] = i, endpoints[i]
			k++
		}
		a, b, c, d := pick[0], pick[1], pick[2], pick[3]
		p, err := predicted(a, b, c, d)
		if err != nil {
			return res, fmt.Errorf("predicted %d->%d vs %d->%d: %w", a, b, c, d, err)
		}
		t, err := truth(a, b, c, d)
		if err != nil {
			return res, fmt.Errorf("truth %d->%d vs %d->%d: %w", a, b, c, d, err)
		}
		res.Queries++
		switch {
		case p && t:
			res.TruePositive++
		case p && !t:
			res.FalsePositive++
		case !p && t:
			res.FalseNegative++
		default:
			res.TrueNegative++
		}
	}
	res.FalsePositiveRate = ratio(res.FalsePositive, res.FalsePositive+res.TrueNegative)
	res.FalseNegativeRate = ratio(res.FalseNegative, res.FalseNegative+res.TruePositive)
	res.ErrorRate = ratio(res.FalsePositive+res.FalseNegative, res.Queries)
	return res, nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// LatencyFunc gives a one-way latency for a pair of ranks, in seconds.
type LatencyFunc func(a, b int) (float64, error)

// Bin is one histogram bin [Lo, Hi).
type Bin struct {
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Count int     `json:"count"`
}

// LatencySummary describes predicted/measured latency ratios (seed 002
// Sect. 5: a good tree puts them near 1.0).
type LatencySummary struct {
	Pairs    int     `json:"pairs"`
	Skipped  int     `json:"skipped"` // pairs whose measured latency was not > 0
	Within5  float64 `json:"within_5pct"`
	Within10 float64 `json:"within_10pct"`
	Min      float64 `json:"min"`
	Median   float64 `json:"median"`
	Mean     float64 `json:"mean"`
	Max      float64 `json:"max"`
	Bins     []Bin   `json:"bins"`
	Under    int     `json:"under"` // ratios below the first bin
	Over     int     `json:"over"`  // ratios at or above the last bin
}

// DefaultBins are the histogram bins LatencyRatios uses: 0.0 to 2.0 in 0.05 steps.
const (
	DefaultBinLo    = 0.0
	DefaultBinHi    = 2.0
	DefaultBinCount = 40
)

// LatencyRatios computes predicted/measured for each pair and summarises
// the ratios. Pairs whose measured latency is not positive are skipped and
// counted, since a ratio to zero means nothing.
func LatencyRatios(pairs [][2]int, predicted, measured LatencyFunc) ([]float64, LatencySummary, error) {
	var s LatencySummary
	ratios := make([]float64, 0, len(pairs))
	for _, pr := range pairs {
		m, err := measured(pr[0], pr[1])
		if err != nil {
			return nil, s, fmt.Errorf("measured latency %d->%d: %w", pr[0], pr[1], err)
		}
		if !(m > 0) || math.IsInf(m, 0) {
			s.Skipped++
			continue
		}
		p, err := predicted(pr[0], pr[1])
		if err != nil {
			return nil, s, fmt.Errorf("predicted latency %d->%d: %w", pr[0], pr[1], err)
		}
		ratios = append(ratios, p/m)
	}
	s = Summarize(ratios)
	s.Skipped = len(pairs) - len(ratios)
	return ratios, s, nil
}

// Summarize describes a set of ratios with DefaultBins.
func Summarize(ratios []float64) LatencySummary {
	s := LatencySummary{Pairs: len(ratios)}
	s.Bins, s.Under, s.Over = Histogram(ratios, DefaultBinLo, DefaultBinHi, DefaultBinCount)
	if len(ratios) == 0 {
		return s
	}
	sorted := append([]float64(nil), ratios...)
	sort.Float64s(sorted)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	if k := len(sorted); k%2 == 1 {
		s.Median = sorted[k/2]
	} else {
		s.Median = (sorted[k/2-1] + sorted[k/2]) / 2
	}
	var sum float64
	w5, w10 := 0, 0
	for _, r := range ratios {
		sum += r
		// A small slack keeps ratios like 1.05 computed as 1.0500000000000003 inside.
		if math.Abs(r-1) <= 0.05+1e-12 {
			w5++
		}
		if math.Abs(r-1) <= 0.10+1e-12 {
			w10++
		}
	}
	s.Mean = sum / float64(len(ratios))
	s.Within5 = float64(w5) / float64(len(ratios))
	s.Within10 = float64(w10) / float64(len(ratios))
	return s
}

// Histogram counts xs in n equal bins over [lo, hi); values below lo and at
// or above hi are counted in under and over.
func Histogram(xs []float64, lo, hi float64, n int) (bins []Bin, under, over int) {
	if n <= 0 || !(hi > lo) {
		return nil, 0, 0
	}
	// Edges as lo + (hi-lo)*i/n rather than lo + i*w, so that 0..2 in 40
	// bins has the edge 1.2 exactly and not 1.2000000000000002.
	edge := func(i int) float64 { return lo + (hi-lo)*float64(i)/float64(n) }
	w := (hi - lo) / float64(n)
	bins = make([]Bin, n)
	for i := range bins {
		bins[i] = Bin{Lo: edge(i), Hi: edge(i + 1)}
	}
	for _, x := range xs {
		switch {
		case x < lo || math.IsNaN(x):
			under++
		case x >= hi:
			over++
		default:
			i := min(int((x-lo)/w), n-1)
			// The division can land one bin off near an edge; the edges decide.
			if i > 0 && x < bins[i].Lo {
				i--
			} else if i < n-1 && x >= bins[i].Hi {
				i++
			}
			bins[i].Count++
		}
	}
	return bins, under, over
}

// AllPairs lists every unordered pair of distinct endpoints.
func AllPairs(endpoints []int) [][2]int {
	var out [][2]int
	for i := range endpoints {
		for j := i + 1; j < len(endpoints); j++ {
			out = append(out, [2]int{endpoints[i], endpoints[j]})
		}
	}
	return out
}
