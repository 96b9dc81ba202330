package cluster

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// groupWeights is a matrix of one point per group with the given weights
// between groups a < b (CollapseAveraged passes them through).
func groupWeights(k int, w map[[2]int]float64) *Matrix {
	m := NewMatrix(k)
	for p, v := range w {
		m.Set(p[0], p[1], v)
	}
	return m
}

// hops is the distance of groups a and b along the chain 0-1-2-...
func hops(a, b int) float64 { return math.Abs(float64(a - b)) }

// The chain a-b-c-d, worked by hand. Its group pairs' bandwidths: a-b 100,
// b-d 99.5, c-d 99, b-c 98, a-c 97, a-d 96. The plain maximum spanning
// tree takes a-b, b-d, c-d (the chain read a-b-d-c); within 5 % all six
// are tied, and by hop count a-b, c-d, b-c join first (equal hops keep the
// weight order): the chain. Within
// 1 % the steps of 0.5 tie a-b, b-d and c-d, and the step of 1 to b-c (98)
// ends the band: a-b, c-d join (1 hop), then b-d (2 hops) closes the tree
// before b-c is considered.
func TestNearTiedBandwidthTreeOfAChainFollowsHops(t *testing.T) {
	w := groupWeights(4, map[[2]int]float64{
		{0, 1}: 100, {1, 3}: 99.5, {2, 3}: 99, {1, 2}: 98, {0, 2}: 97, {0, 3}: 96,
	})
	l := Labels{0, 1, 2, 3}
	edges := func(es []PairEdge) [][2]int {
		var out [][2]int
		for _, e := range es {
			out = append(out, [2]int{e.I, e.J})
		}
		return out
	}
	plain, err := BandwidthTree(w, l)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := edges(plain), [][2]int{{0, 1}, {1, 3}, {2, 3}}; !slices.Equal(got, want) {
		t.Fatalf("plain tree %v, want %v (the case is not the near tie)", got, want)
	}
	for _, c := range []struct {
		tol  float64
		want [][2]int
	}{
		{0.05, [][2]int{{0, 1}, {2, 3}, {1, 2}}},
		{0.01, [][2]int{{0, 1}, {2, 3}, {1, 3}}},
		{0, [][2]int{{0, 1}, {1, 3}, {2, 3}}},
	} {
		got, err := BandwidthTreeNearTies(w, l, c.tol, hops)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(edges(got), c.want) {
			t.Errorf("tol %v: tree %v, want %v", c.tol, edges(got), c.want)
		}
	}
	// A missing distance comes last among the tied: without b-c's, the
	// 1-hop a-b and c-d join, then b-d, the heavier of the 2-hop pairs.
	got, err := BandwidthTreeNearTies(w, l, 0.05, func(a, b int) float64 {
		if a == 1 && b == 2 {
			return math.NaN()
		}
		return hops(a, b)
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{0, 1}, {2, 3}, {1, 3}}; !slices.Equal(edges(got), want) {
		t.Errorf("b-c distance missing: tree %v, want %v", edges(got), want)
	}
	for _, tol := range []float64{-0.1, math.NaN(), math.Inf(1)} {
		if _, err := BandwidthTreeNearTies(w, l, tol, hops); err == nil {
			t.Errorf("tolerance %v: no error", tol)
		}
	}
	if _, err := BandwidthTreeNearTies(w, Labels{0, 1, Noise, 3}, 0.05, hops); err == nil {
		t.Error("an unlabelled point: no error")
	}
	if _, err := BandwidthTreeNearTies(w, l, 0.05, nil); err == nil {
		t.Error("no distance: no error")
	}
}

// Two groups of two and one of one: the coefficients of variation of the
// weights between groups, worked by hand. 0-1: {90, 110}, mean 100, sample
// sd 14.142: 0.1414; 0-2: {50, 50}: 0; 1-2: one weight, left out. Median
// of {0, 0.1414}, the lower middle value: 0.
func TestBetweenGroupSpreadIsTheMedianCoefficientOfVariation(t *testing.T) {
	l := Labels{0, 0, 1, 1, 2}
	m := NewMatrix(5)
	m.Set(0, 1, 500)
	m.Set(2, 3, 500)
	m.Set(0, 2, 90)
	m.Set(1, 3, 110)
	m.Set(0, 4, 50)
	m.Set(1, 4, 50)
	m.Set(2, 4, 30)
	got, err := BetweenGroupSpread(m, l)
	if err != nil {
		t.Fatal(err)
	}
	if got != 0 {
		t.Errorf("spread %v, want 0 (median of 0 and 0.1414)", got)
	}
	m.Set(0, 4, 40) // 0-2: {40, 50}, cv 0.1571; median of {0.1414, 0.1571}: 0.1414
	if got, _ = BetweenGroupSpread(m, l); math.Abs(got-math.Sqrt(200)/100) > 1e-12 {
		t.Errorf("spread %v, want %v", got, math.Sqrt(200)/100)
	}
	if _, err := BetweenGroupSpread(m, Labels{0, 1}); err == nil {
		t.Error("2 labels for 5 points: no error")
	}
}

// Seeded chains of 3-7 switches with 2-4 ranks each, where every pair of
// groups has the same 100 Mbit trunk as its bottleneck and each
// connection's rate is off by up to 25 %, and the round trips grow by 2.4
// us a hop with less than 1.2 us of noise: with the tolerance taken from
// the swarm's own spread the tree is the chain in every seed, where the
// plain maximum spanning tree misses it in some. And where the rates do
// differ beyond the noise (halving with each hop), the round trips do not
// override them.
func TestNearTiedBandwidthTreeOfNoisyChainsIsTheChain(t *testing.T) {
	plainMissed := 0
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 17))
		k := 3 + r.IntN(5)
		var l Labels
		for g := 0; g < k; g++ {
			for range 2 + r.IntN(3) {
				l = append(l, g)
			}
		}
		w := NewMatrix(len(l))
		for i := range l {
			for j := i + 1; j < len(l); j++ {
				v := 1000.0
				if l[i] != l[j] {
					v = 100
				}
				w.Set(i, j, v*(1+0.25*(2*r.Float64()-1)))
			}
		}
		rtt := make([]float64, k*k)
		for a := 0; a < k; a++ {
			for b := a + 1; b < k; b++ {
				rtt[a*k+b] = 24 + 2.4*hops(a, b) + 1.2*r.Float64()
			}
		}
		tol, err := BetweenGroupSpread(w, l)
		if err != nil {
			t.Fatal(err)
		}
		got, err := BandwidthTreeNearTies(w, l, tol, func(a, b int) float64 { return rtt[a*k+b] })
		if err != nil {
			t.Fatal(err)
		}
		if !isChain(got, k) {
			t.Errorf("seed %d: %d groups, tolerance %.3f: tree %v is not the chain", seed, k, tol, got)
		}
		// Where the bandwidth does tell (each hop halves a connection's
		// rate), it decides, whatever the round trips say.
		far := NewMatrix(len(l))
		for i := range l {
			for j := i + 1; j < len(l); j++ {
				far.Set(i, j, w.At(i, j)/max(1, hops(l[i], l[j])))
			}
		}
		if tol, err = BetweenGroupSpread(far, l); err != nil {
			t.Fatal(err)
		}
		got, err = BandwidthTreeNearTies(far, l, tol, func(a, b int) float64 { return 100 * r.Float64() })
		if err != nil {
			t.Fatal(err)
		}
		if !isChain(got, k) {
			t.Errorf("seed %d: rates halving with each hop, random round trips: tree %v is not the chain", seed, got)
		}
		plain, err := BandwidthTree(w, l)
		if err != nil {
			t.Fatal(err)
		}
		if !isChain(plain, k) {
			plainMissed++
		}
	}
	if plainMissed == 0 {
		t.Error("the plain maximum spanning tree found every chain: the case does not show the tie-break")
	}
}

// isChain: the k-1 edges are exactly g-(g+1).
func isChain(es []PairEdge, k int) bool {
	if len(es) != k-1 {
		return false
	}
	for _, e := range es {
		if e.J-e.I != 1 {
			return false
		}
	}
	return true
}
