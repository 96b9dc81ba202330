package cluster

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// Six points 0 1 2 | 10 11 12, k = 2: the medoids are the middles 1 and 11,
// total deviation 4. BUILD picks 2 first (least row sum: 2+1+0+8+9+10 = 30
// vs 31 for point 1), then 11; FasterPAM swaps 2 for 1.
func TestKMedoidsLineByHand(t *testing.T) {
	m := lineMatrix(0, 1, 2, 10, 11, 12)
	if got := pamBuild(m, 2); got[0] != 2 || got[1] != 4 {
		t.Errorf("BUILD = %v, want [2 4]", got)
	}
	r, err := KMedoids(m, 2, KMedoidsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Cost != 4 || r.Medoids[0] != 1 || r.Medoids[1] != 4 || r.Swaps != 1 {
		t.Errorf("result %+v, want medoids [1 4], cost 4, 1 swap", r)
	}
	if want := (Labels{0, 0, 0, 1, 1, 1}); !equalLabels(r.Labels, want) {
		t.Errorf("labels %v, want %v", r.Labels, want)
	}
	// From the worst start, eager swaps still reach the optimum.
	r, err = KMedoids(m, 2, KMedoidsOptions{Init: GivenInit, Medoids: []int{0, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Cost != 4 {
		t.Errorf("from [0 2]: cost %g, medoids %v", r.Cost, r.Medoids)
	}
}

// exhaustiveKMedoids returns the optimal total deviation over all k-subsets.
func exhaustiveKMedoids(d *Matrix, k int) float64 {
	best := math.Inf(1)
	sub := make([]int, k)
	var rec func(pos, from int)
	rec = func(pos, from int) {
		if pos == k {
			c := 0.0
			for o := 0; o < d.N; o++ {
				m := math.Inf(1)
				for _, s := range sub {
					m = math.Min(m, d.At(o, s))
				}
				c += m
			}
			best = math.Min(best, c)
			return
		}
		for i := from; i < d.N; i++ {
			sub[pos] = i
			rec(pos+1, i+1)
		}
	}
	rec(0, 0)
	return best
}

// TestSchubertFasterPAMReachesOptimumOnSmallCases: on small seeded inputs
// FasterPAM (BUILD start) matches the exhaustive optimum whenever the
// clusters are well separated, is never below it, and is always a swap
// local optimum (no single medoid/non-medoid exchange lowers the cost).
func TestSchubertFasterPAMReachesOptimumOnSmallCases(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		for k := 2; k <= 4; k++ {
			r := rand.New(rand.NewPCG(seed, 9))
			pts := make([][]float64, 12)
			for i := range pts { // centres 20 apart on a diagonal, unit spread
				c := float64(20 * (i % k))
				pts[i] = []float64{c + r.NormFloat64(), c + r.NormFloat64()}
			}
			blobs := euclidean(pts)
			noise := NewMatrix(11)
			for i := 0; i < 11; i++ {
				for j := i + 1; j < 11; j++ {
					noise.Set(i, j, 1+r.Float64()*9)
				}
			}
			for name, m := range map[string]*Matrix{"blobs": blobs, "random": noise} {
				opt := exhaustiveKMedoids(m, k)
				for _, init := range []KMedoidsOptions{{}, {Init: RandomInit, Seed: seed}} {
					res, err := KMedoids(m, k, init)
					if err != nil {
						t.Fatal(err)
					}
					if res.Cost < opt-1e-9 {
						t.Fatalf("seed %d k %d %s: cost %g below the optimum %g", seed, k, name, res.Cost, opt)
					}
					if name == "blobs" && init.Init == BuildInit && math.Abs(res.Cost-opt) > 1e-9 {
						t.Errorf("seed %d k %d blobs: cost %g, optimum %g", seed, k, res.Cost, opt)
					}
					if imp := bestSingleSwap(m, res.Medoids, res.Cost); imp < -1e-9 {
						t.Errorf("seed %d k %d %s: a swap still improves by %g", seed, k, name, -imp)
					}
				}
			}
		}
	}
}

// bestSingleSwap returns the most negative cost change of any single swap.
func bestSingleSwap(d *Matrix, med []int, cost float64) float64 {
	best := 0.0
	isMed := map[int]bool{}
	for _, m := range med {
		isMed[m] = true
	}
	for i := range med {
		for x := 0; x < d.N; x++ {
			if isMed[x] {
				continue
			}
			trial := append([]int(nil), med...)
			trial[i] = x
			c := 0.0
			for o := 0; o < d.N; o++ {
				m := math.Inf(1)
				for _, s := range trial {
					m = math.Min(m, d.At(o, s))
				}
				c += m
			}
			best = math.Min(best, c-cost)
		}
	}
	return best
}

func TestKMedoidsDeterministicAndLabelsConsistent(t *testing.T) {
	_, m := randomPoints(5, 200, 3, 6)
	a, err := KMedoids(m, 6, KMedoidsOptions{Init: RandomInit, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := KMedoids(m, 6, KMedoidsOptions{Init: RandomInit, Seed: 42})
	if !equalLabels(a.Labels, b.Labels) || a.Cost != b.Cost {
		t.Error("same seed, different result")
	}
	cost := 0.0
	for o, l := range a.Labels {
		for _, md := range a.Medoids {
			if m.At(o, md) < m.At(o, a.Medoids[l]) {
				t.Fatalf("point %d not assigned to its nearest medoid", o)
			}
		}
		cost += m.At(o, a.Medoids[l])
	}
	if math.Abs(cost-a.Cost) > 1e-9 {
		t.Errorf("cost %g, recomputed %g", a.Cost, cost)
	}
	for i, md := range a.Medoids {
		if a.Labels[md] != i {
			t.Errorf("medoid %d labelled %d", md, a.Labels[md])
		}
	}
}

func TestKMedoidsDegenerate(t *testing.T) {
	if r, err := KMedoids(NewMatrix(0), 0, KMedoidsOptions{}); err != nil || len(r.Labels) != 0 {
		t.Errorf("n=0: %v", err)
	}
	r, err := KMedoids(NewMatrix(1), 1, KMedoidsOptions{})
	if err != nil || r.Medoids[0] != 0 || r.Cost != 0 {
		t.Errorf("n=1: %+v %v", r, err)
	}
	r, err = KMedoids(NewMatrix(2), 2, KMedoidsOptions{})
	if err != nil || r.Cost != 0 {
		t.Errorf("n=2 k=2: %+v %v", r, err)
	}
	eq := NewMatrix(7)
	for i := 0; i < 7; i++ {
		for j := i + 1; j < 7; j++ {
			eq.Set(i, j, 2)
		}
	}
	r, err = KMedoids(eq, 3, KMedoidsOptions{})
	if err != nil || r.Cost != 8 {
		t.Errorf("all-equal: %+v %v", r, err)
	}
	// k = 1 is the exact 1-medoid: the middle of the line.
	r, _ = KMedoids(lineMatrix(0, 1, 2, 3, 10), 1, KMedoidsOptions{})
	if r.Medoids[0] != 2 || r.Cost != 12 {
		t.Errorf("k=1: %+v", r)
	}
	for _, c := range []struct {
		k   int
		opt KMedoidsOptions
	}{{0, KMedoidsOptions{}}, {8, KMedoidsOptions{}}, {2, KMedoidsOptions{Init: GivenInit, Medoids: []int{1, 1}}},
		{2, KMedoidsOptions{Init: GivenInit, Medoids: []int{1}}}, {2, KMedoidsOptions{Init: GivenInit, Medoids: []int{1, 9}}},
		{2, KMedoidsOptions{Init: 7}}} {
		if _, err := KMedoids(eq, c.k, c.opt); err == nil {
			t.Errorf("k=%d %+v accepted", c.k, c.opt)
		}
	}
	bad := NewMatrix(3)
	bad.Data[5] = math.NaN()
	if _, err := KMedoids(bad, 2, KMedoidsOptions{}); err == nil {
		t.Error("NaN accepted")
	}
}

// BenchmarkKMedoids: FasterPAM's per-pass cost is O(n^2) (seed 003, Sect.
// 2.5.5); compare n=1024 and n=2048 (ratio ~4 expected).
func BenchmarkKMedoids(b *testing.B) {
	for _, n := range []int{1024, 2048} {
		_, m := randomPoints(11, n, 3, 16)
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := KMedoids(m, 16, KMedoidsOptions{Init: RandomInit, Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
