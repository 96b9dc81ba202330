package cluster

import (
	"math"
	"testing"
)

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestReinfjellEq33Time(t *testing.T) {
	p := PLogPParams{L: 10, Os: 2, Or: 4, G: 5}
	if got := p.Time(); got != 18 { // 10 + (2+4)/2 + 5
		t.Fatalf("t = %v, want 18", got)
	}
}

func TestReinfjellEq34DistanceSymmetrized(t *testing.T) {
	params := map[[2]int]PLogPParams{
		{0, 1}: {L: 10, Os: 2, Or: 4, G: 5}, // t = 18
		{1, 0}: {L: 10, Os: 4, Or: 6, G: 5}, // t = 20
		{0, 2}: {L: 1, Os: 0, Or: 0, G: 1},  // t = 2, reverse missing
	}
	d, missing, err := PLogPDistance(3, func(i, j int) (PLogPParams, bool) {
		p, ok := params[[2]int{i, j}]
		return p, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.At(0, 1) != 19 || d.At(1, 0) != 19 {
		t.Errorf("D01 = %v, want mean 19", d.At(0, 1))
	}
	if d.At(0, 2) != 2 || d.At(2, 0) != 2 {
		t.Errorf("D02 = %v, want one-way 2", d.At(0, 2))
	}
	if !IsMissing(d.At(1, 2)) || missing != 1 {
		t.Errorf("D12 = %v missing=%d, want NaN and 1", d.At(1, 2), missing)
	}
	if d.At(0, 0) != 0 {
		t.Errorf("diagonal %v", d.At(0, 0))
	}
	_, _, err = PLogPDistance(2, func(i, j int) (PLogPParams, bool) { return PLogPParams{L: math.Inf(1)}, true })
	if err == nil {
		t.Error("accepted infinite parameter")
	}
}

func TestReinfjellEq35Eq36Features(t *testing.T) {
	// v_01 = [1,2,3,4], v_10 = [1,2,3,6]: V_0 = [0 0 0 0 1 2 3 4], V_1 = [1 2 3 6 0 0 0 0].
	at := func(i, j int) (PLogPParams, bool) {
		if i == 0 {
			return PLogPParams{1, 2, 3, 4}, true
		}
		return PLogPParams{1, 2, 3, 6}, true
	}
	v, err := PLogPFeatures(2, at)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{0, 0, 0, 0, 1, 2, 3, 4}, {1, 2, 3, 6, 0, 0, 0, 0}}
	for i := range want {
		for k := range want[i] {
			if v[i][k] != want[i][k] {
				t.Fatalf("V = %v, want %v", v, want)
			}
		}
	}
	a, err := EuclideanDistance(v)
	if err != nil {
		t.Fatal(err)
	}
	// ||V0-V1||^2 = 1+4+9+36 + 1+4+9+16 = 80
	if !near(a.At(0, 1), math.Sqrt(80)) || a.At(1, 0) != a.At(0, 1) {
		t.Fatalf("A01 = %v, want sqrt(80)", a.At(0, 1))
	}
	if _, err := PLogPFeatures(3, func(i, j int) (PLogPParams, bool) { return PLogPParams{}, i != 2 }); err == nil {
		t.Error("features accepted a missing pair")
	}
	if _, err := EuclideanDistance([][]float64{{1, 2}, {1}}); err == nil {
		t.Error("accepted ragged vectors")
	}
}

func TestPLogPCurveFits(t *testing.T) {
	c := &PLogPCurve{
		SizesBytes: []float64{0, 100, 200},
		L:          5,
		Os:         []float64{1, 2, 5},
		Or:         []float64{1, 1, 1},
		G:          []float64{0, 10, 20},
	}
	p, err := c.At(150, Interpolate)
	if err != nil {
		t.Fatal(err)
	}
	if p != (PLogPParams{L: 5, Os: 3.5, Or: 1, G: 15}) {
		t.Errorf("interpolated %+v", p)
	}
	p, _ = c.At(300, Interpolate) // extends the last segment
	if p.Os != 8 || p.G != 30 {
		t.Errorf("extrapolated %+v", p)
	}
	// Regression of o_s over (0,1),(100,2),(200,5): slope 0.02, intercept 2/3.
	p, _ = c.At(100, Regress)
	if !near(p.Os, 0.02*100+2.0/3) || !near(p.G, 10) {
		t.Errorf("regressed %+v", p)
	}
	bad := &PLogPCurve{SizesBytes: []float64{1, 1}, Os: []float64{1, 1}, Or: []float64{1, 1}, G: []float64{1, 1}}
	if _, err := bad.At(1, Interpolate); err == nil {
		t.Error("accepted non-increasing sizes")
	}
	if _, err := (&PLogPCurve{SizesBytes: []float64{1}}).At(1, Regress); err == nil {
		t.Error("accepted short value slices")
	}
}

func TestRTTDistanceMin(t *testing.T) {
	s := map[[2]int][]float64{{0, 1}: {5, 3, 4}, {1, 0}: {2.5, 9}, {1, 2}: {7}}
	d, missing, err := RTTDistance(3, func(i, j int) []float64 { return s[[2]int{i, j}] })
	if err != nil {
		t.Fatal(err)
	}
	if d.At(0, 1) != 2.5 || d.At(1, 2) != 7 || !IsMissing(d.At(0, 2)) || missing != 1 {
		t.Fatalf("got %v missing %d", d.Data, missing)
	}
	if _, _, err := RTTDistance(2, func(i, j int) []float64 { return []float64{-1} }); err == nil {
		t.Error("accepted negative RTT")
	}
}

func TestBandwidthSimilarityAndDistance(t *testing.T) {
	bw := map[[2]int]float64{{0, 1}: 100, {1, 0}: 300, {0, 2}: 50, {2, 1}: 25}
	s, missing, err := BandwidthSimilarity(3, func(i, j int) (float64, bool) { v, ok := bw[[2]int{i, j}]; return v, ok })
	if err != nil || missing != 0 {
		t.Fatal(err, missing)
	}
	if s.At(0, 1) != 200 || s.At(0, 2) != 50 || s.At(1, 2) != 25 || s.At(1, 1) != 0 {
		t.Fatalf("similarity %v", s.Data)
	}
	d, err := BandwidthDistance(s)
	if err != nil {
		t.Fatal(err)
	}
	if d.At(0, 1) != 1.0/200 || d.At(2, 1) != 1.0/25 || d.At(0, 0) != 0 {
		t.Fatalf("distance %v", d.Data)
	}
	s.Set(0, 1, 0)
	if _, err := BandwidthDistance(s); err == nil {
		t.Error("accepted zero bandwidth")
	}
}

// Property: a PLogP distance is symmetric and non-negative, and the feature
// Euclidean distance is a metric (triangle inequality) on random inputs.
func TestDistancePropertiesRandom(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		n := 2 + int(seed%7)
		rng := newRand(seed)
		par := make([]PLogPParams, n*n)
		for i := range par {
			par[i] = PLogPParams{L: rng.Float64(), Os: rng.Float64(), Or: rng.Float64(), G: rng.Float64()}
		}
		at := func(i, j int) (PLogPParams, bool) { return par[i*n+j], true }
		d, _, err := PLogPDistance(n, at)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		v, err := PLogPFeatures(n, at)
		if err != nil {
			t.Fatal(err)
		}
		a, err := EuclideanDistance(v)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				for k := 0; k < n; k++ {
					if a.At(i, k) > a.At(i, j)+a.At(j, k)+1e-12 {
						t.Fatalf("triangle inequality fails at %d,%d,%d", i, j, k)
					}
				}
			}
		}
	}
}
