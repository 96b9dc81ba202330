package cluster

import (
	"math"
	"reflect"
	"testing"
)

func ecoHand() *Matrix {
	m := NewMatrix(5)
	for i := 0; i < 5; i++ {
		for j := i + 1; j < 5; j++ {
			m.Set(i, j, 10)
		}
	}
	m.Set(0, 1, 1)
	m.Set(1, 2, 1.1)
	m.Set(0, 2, 1.15)
	m.Set(2, 3, 1.3)
	m.Set(3, 4, 5)
	return m
}

func TestEstefanelAlgorithm1Hand(t *testing.T) {
	// 0-1 (1) merges; 1-2 (1.1) is within 20% of both endpoints and of the
	// subnet's cheapest edge; 2-3 (1.3) is within 20% of 2's and 3's own
	// cheapest edges but not of the subnet's (1.2), so 3 stays out; 3-4 (5)
	// is far above 3's cheapest edge.
	l, err := ECO(ecoHand(), DefaultECOBound)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l, Labels{0, 0, 0, 1, 2}) {
		t.Fatalf("got %v", l)
	}
	// A 35% bound admits 2-3 (1.3 <= 1.35) but still not 3-4.
	l, err = ECO(ecoHand(), 0.35)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l, Labels{0, 0, 0, 0, 1}) {
		t.Fatalf("bound 0.35: got %v", l)
	}
}

func TestEstefanelSect3IncompleteMatrix(t *testing.T) {
	// Two sites monitored independently: no measurement between them, and
	// point 6 never measured at all.
	m := NewMatrix(7)
	for i := 0; i < 7; i++ {
		for j := i + 1; j < 7; j++ {
			m.Set(i, j, math.NaN())
		}
	}
	for _, site := range [][]int{{0, 2, 4}, {1, 3, 5}} {
		for a := 0; a < 3; a++ {
			for b := a + 1; b < 3; b++ {
				m.Set(site[a], site[b], 1+0.01*float64(a+b))
			}
		}
	}
	l, err := ECO(m, DefaultECOBound)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l, Labels{0, 1, 0, 1, 0, 1, 2}) {
		t.Fatalf("got %v", l)
	}
}

func TestEstefanelECOFramSockets(t *testing.T) {
	// Intra-socket edges are the cheapest and within 20% of each other,
	// inter-socket ones are 2x: ECO's homogeneous subnets are the sockets.
	for seed := uint64(1); seed <= 3; seed++ {
		m0, s0, _ := framLike(2, 16, 0.02, seed)
		m, tr := shuffled(m0, seed, s0)
		l, err := ECO(m, DefaultECOBound)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(l, Canonical(tr[0])) {
			t.Fatalf("seed %d: %v", seed, Groups(l))
		}
	}
}

func TestECORejects(t *testing.T) {
	m := ecoHand()
	m.Set(0, 1, -1)
	if _, err := ECO(m, DefaultECOBound); err == nil {
		t.Error("accepted negative cost")
	}
	if _, err := ECO(ecoHand(), math.NaN()); err == nil {
		t.Error("accepted NaN bound")
	}
	if _, err := ECO(ecoHand(), -0.1); err == nil {
		t.Error("accepted negative bound")
	}
	m = ecoHand()
	m.Data[1] = 7 // asymmetric
	if _, err := ECO(m, DefaultECOBound); err == nil {
		t.Error("accepted asymmetric matrix")
	}
}

// Property: every subnet is connected by edges that are each within
// (1+bound) of the cheapest edge of both endpoints.
func TestECOPropertiesRandom(t *testing.T) {
	for seed := uint64(0); seed < 30; seed++ {
		rng := newRand(seed)
		n := 1 + rng.IntN(20)
		m := NewMatrix(n)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if rng.Float64() < 0.1 {
					m.Set(i, j, math.NaN())
				} else {
					m.Set(i, j, 1+rng.Float64())
				}
			}
		}
		l, err := ECO(m, 0.2)
		if err != nil {
			t.Fatal(err)
		}
		if len(l) != n {
			t.Fatalf("%d labels for %d points", len(l), n)
		}
		minEdge := make([]float64, n)
		for i := range minEdge {
			minEdge[i] = math.Inf(1)
			for j := 0; j < n; j++ {
				if j != i && !IsMissing(m.At(i, j)) {
					minEdge[i] = math.Min(minEdge[i], m.At(i, j))
				}
			}
		}
		// Connectivity of each subnet through admissible edges.
		adm := newPointSets(n)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				w := m.At(i, j)
				if l[i] == l[j] && !IsMissing(w) && w <= 1.2*minEdge[i] && w <= 1.2*minEdge[j] {
					adm.union(i, j)
				}
			}
		}
		if !reflect.DeepEqual(adm.labels(), Canonical(l)) {
			t.Fatalf("seed %d: subnets %v not connected by admissible edges", seed, Groups(l))
		}
	}
}

func TestEstefanelSect52MeasurementBound(t *testing.T) {
	l := Labels{0, 0, 1, 1, 1, 2, 3, 3}
	pairs, err := RepresentativePairs(l)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]int{{0, 1}, {2, 3}, {6, 7}, {0, 2}, {0, 5}, {0, 6}, {2, 5}, {2, 6}, {5, 6}}
	if !reflect.DeepEqual(pairs, want) {
		t.Fatalf("got %v", pairs)
	}
	// C = 4 subnets: at most C(C+1)/2 = 10 measurements (one subnet is a
	// single point, so 9 here), against n(n-1)/2 = 28.
	if c := 4; len(pairs) > c*(c+1)/2 {
		t.Fatalf("%d pairs > C(C+1)/2", len(pairs))
	}
	if _, err := RepresentativePairs(Labels{0, Noise}); err == nil {
		t.Error("accepted noise")
	}
}
