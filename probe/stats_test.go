package probe

import (
	"math"
	"testing"

	"netaware/dataset"
)

func TestSummarizeAndCI(t *testing.T) {
	s := Summarize([]float64{1, 2, 3})
	if s.N != 3 || s.Mean != 2 || s.Min != 1 || s.Max != 3 || s.SD != 1 {
		t.Errorf("summary %+v", s)
	}
	// t(0.975, 2) = 4.302653; half width = t * sd / sqrt(3)
	if got := CI95HalfWidth([]float64{1, 2, 3}); math.Abs(got-4.302653/math.Sqrt(3)) > 1e-5 {
		t.Errorf("CI half width %g", got)
	}
	if !math.IsInf(CI95HalfWidth([]float64{1}), 1) || Summarize(nil).N != 0 {
		t.Error("degenerate inputs")
	}
}

func TestFitLineHandWorked(t *testing.T) {
	f, ok := FitLine([]float64{0, 1, 2, 3}, []float64{2, 5, 8, 11})
	if !ok || f.Intercept != 2 || f.Slope != 3 || f.SlopeSE != 0 || f.InterceptSE != 0 {
		t.Errorf("exact line: %+v", f)
	}
	// y = 1, 2, 2, 4 at x = 0..3: slope 0.9, intercept 0.9, rss 0.7,
	// s^2 = 0.35, SE(slope) = sqrt(0.35/5), SE(intercept) = sqrt(0.35*14/(4*5))
	f, _ = FitLine([]float64{0, 1, 2, 3}, []float64{1, 2, 2, 4})
	if math.Abs(f.Slope-0.9) > 1e-12 || math.Abs(f.Intercept-0.9) > 1e-12 ||
		math.Abs(f.SlopeSE-math.Sqrt(0.35/5)) > 1e-12 || math.Abs(f.InterceptSE-math.Sqrt(0.35*14/20)) > 1e-12 {
		t.Errorf("noisy line: %+v", f)
	}
	if _, ok := FitLine([]float64{1, 1}, []float64{1, 2}); ok {
		t.Error("a vertical line was fitted")
	}
}

// TestDatasetMatrices: a pair measured in both directions and twice keeps
// its smallest RTT minimum; bandwidth keeps the last result; unmeasured
// pairs are NaN, the diagonal 0, and out-of-range pairs are ignored.
func TestDatasetMatrices(t *testing.T) {
	rtt := func(a, b int, v float64) dataset.PairResult[dataset.RTTResult] {
		return dataset.PairResult[dataset.RTTResult]{A: a, B: b, Result: dataset.RTTResult{MinS: v, MaxS: 2 * v}}
	}
	bw := func(a, b int, v float64) dataset.PairResult[dataset.BandwidthResult] {
		return dataset.PairResult[dataset.BandwidthResult]{A: a, B: b, Result: dataset.BandwidthResult{BandwidthBps: v}}
	}
	ds := &dataset.Dataset{World: dataset.World{Size: 3},
		RTT:       &dataset.RTTSection{Pairs: []dataset.PairResult[dataset.RTTResult]{rtt(0, 1, 5e-6), rtt(1, 0, 3e-6), rtt(0, 1, 4e-6), rtt(2, 7, 1e-6)}},
		Bandwidth: &dataset.BandwidthSection{Pairs: []dataset.PairResult[dataset.BandwidthResult]{bw(1, 2, 1e9), bw(2, 1, 2e9)}},
	}
	r := ds.RTTMin()
	if r[0][1] != 3e-6 || r[1][0] != 3e-6 || r[0][0] != 0 || !math.IsNaN(r[0][2]) || !math.IsNaN(r[1][2]) {
		t.Errorf("rtt matrix %v", r)
	}
	b := ds.BandwidthMatrix()
	if b[1][2] != 2e9 || b[2][1] != 2e9 || !math.IsNaN(b[0][1]) || b[2][2] != 0 {
		t.Errorf("bandwidth matrix %v", b)
	}
	if e := (&dataset.Dataset{World: dataset.World{Size: 2}}).RTTMin(); !math.IsNaN(e[0][1]) || e[1][1] != 0 {
		t.Errorf("empty section %v", e)
	}
}
