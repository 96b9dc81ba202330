// Package tune benchmarks collective algorithms (bcast, scatter, gather,
// reduce, allgather, allreduce, reduce_scatter) on any comm.Comm: the
// simulator, TCP, MPI, an emulated cluster (seed 003 Sect. 6.5: warm-up W,
// N repetitions, keep the values within the 90th percentile), picks the
// best algorithm per collective, communicator and message size, and writes
// the choice as decision tables for netaware's collectives and as rule
// files for Open MPI's coll/tuned and for MPICH's collective selection,
// every collective in one file per library.
package tune

import (
	"math"
	"slices"
)

// Stats summarises the repetitions of one measurement.
type Stats struct {
	// N is the number of valid repetitions, Kept those within the 90th
	// percentile, which the other fields describe.
	N      int     `json:"n"`
	Kept   int     `json:"kept"`
	MeanS  float64 `json:"mean_s"`
	MinS   float64 `json:"min_s"`
	MaxS   float64 `json:"max_s"`
	VarS2  float64 `json:"var_s2"`
	Median float64 `json:"median_s"`
}

// Percentile is the nearest-rank q-th percentile (0 < q <= 100) of xs.
func Percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k := int(math.Ceil(q / 100 * float64(len(s))))
	return s[min(max(k, 1), len(s))-1]
}

// WithinPercentile keeps the values at or below the q-th percentile, in
// their original order (seed 003 Sect. 6.5.1 uses q = 90: the slowest
// tenth, disturbed by noise, is dropped).
func WithinPercentile(xs []float64, q float64) []float64 {
	if len(xs) == 0 {
		return nil
	}
	cut := Percentile(xs, q)
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x <= cut {
			out = append(out, x)
		}
	}
	return out
}

// Summarize computes Stats over the values within the 90th percentile.
func Summarize(xs []float64) Stats {
	st := Stats{N: len(xs)}
	kept := WithinPercentile(xs, 90)
	st.Kept = len(kept)
	if len(kept) == 0 {
		st.MeanS, st.MinS, st.MaxS, st.Median = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		return st
	}
	st.MinS, st.MaxS = kept[0], kept[0]
	sum := 0.0
	for _, x := range kept {
		sum += x
		st.MinS = min(st.MinS, x)
		st.MaxS = max(st.MaxS, x)
	}
	st.MeanS = sum / float64(len(kept))
	for _, x := range kept {
		st.VarS2 += (x - st.MeanS) * (x - st.MeanS)
	}
	if len(kept) > 1 {
		st.VarS2 /= float64(len(kept) - 1)
	} else {
		st.VarS2 = 0
	}
	st.Median = Percentile(kept, 50)
	return st
}
