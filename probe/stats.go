package probe

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"netaware/dataset"
)

// Summarize returns the summary of xs (the zero Summary for no samples).
func Summarize(xs []float64) dataset.Summary {
	if len(xs) == 0 {
		return dataset.Summary{}
	}
	s := dataset.Summary{N: len(xs), Min: xs[0], Max: xs[0]}
	sum := 0.0
	for _, x := range xs {
		sum += x
		s.Min = math.Min(s.Min, x)
		s.Max = math.Max(s.Max, x)
	}
	s.Mean = sum / float64(len(xs))
	if len(xs) > 1 {
		ss := 0.0
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.SD = math.Sqrt(ss / float64(len(xs)-1))
	}
	return s
}

// CI95HalfWidth is the half width of the two-sided 95% confidence interval of
// the mean of xs (Student's t with n-1 degrees of freedom); +Inf for n < 2.
func CI95HalfWidth(xs []float64) float64 {
	n := len(xs)
	if n < 2 {
		return math.Inf(1)
	}
	s := Summarize(xs)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	return t * s.SD / math.Sqrt(float64(n))
}

// LinearFit is an ordinary least-squares line y = Intercept + Slope*x with
// the standard errors of both coefficients.
type LinearFit struct {
	Intercept, Slope     float64
	InterceptSE, SlopeSE float64
	N                    int
}

// FitLine fits y = a + b*x by least squares. With fewer than two distinct x
// values the slope is undefined and ok is false. Standard errors need at
// least three points; with two they are 0.
func FitLine(x, y []float64) (f LinearFit, ok bool) {
	n := len(x)
	if n != len(y) || n < 2 {
		return f, false
	}
	mx, my := 0.0, 0.0
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	sxx, sxy := 0.0, 0.0
	for i := range x {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (y[i] - my)
	}
	if sxx == 0 {
		return f, false
	}
	f.N = n
	f.Slope = sxy / sxx
	f.Intercept = my - f.Slope*mx
	if n > 2 {
		rss := 0.0
		for i := range x {
			r := y[i] - f.Intercept - f.Slope*x[i]
			rss += r * r
		}
		s2 := rss / float64(n-2)
		f.SlopeSE = math.Sqrt(s2 / sxx)
		sumx2 := 0.0
		for i := range x {
			sumx2 += x[i] * x[i]
		}
		f.InterceptSE = math.Sqrt(s2 * sumx2 / (float64(n) * sxx))
	}
	return f, true
}
