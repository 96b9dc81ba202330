package probe

import (
	"math"
	"testing"
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
