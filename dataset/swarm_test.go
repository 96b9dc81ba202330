package dataset

import (
	"math"
	"testing"
)

// Three ranks, two iterations, worked by hand.
func TestSwarmWeightsByHand(t *testing.T) {
	s := &SwarmSection{Iterations: []SwarmIteration{
		{Counts: []SwarmCount{
			{From: 0, To: 1, Fragments: 10, BusyS: 2.5, StallS: 0.5, StallFragments: 2},
			{From: 1, To: 0, Fragments: 4, BusyS: 1},
		}},
		{Counts: []SwarmCount{
			{From: 0, To: 1, Fragments: 6, BusyS: 3},
			{From: 2, To: 1, Fragments: 1, BusyS: 0.5, StallS: 0.5, StallFragments: 1},
		}},
	}}
	for _, tc := range []struct {
		name   string
		weight string
		i, j   int
		want   float64
	}{
		// Eq. 4.2: (10 + 4 + 6) / 2 iterations; (1) / 2.
		{"fragments 0-1", WeightFragments, 0, 1, 10},
		{"fragments 1-2", WeightFragments, 1, 2, 0.5},
		// Rates: mean of 10/2.5, 4/1, 6/3 over the three counts seen;
		// 1/0.5.
		{"rate 0-1", WeightRate, 1, 0, (4.0 + 4 + 2) / 3},
		{"rate 1-2", "", 2, 1, 2},
		// Adaptive pipelines: stalls out, (10-2)/(2.5-0.5); a count whose
		// fragments all stalled is not measured.
		{"adaptive rate 0-1", "adaptive", 1, 0, (4.0 + 4 + 2) / 3},
		{"adaptive rate 1-2", "adaptive", 2, 1, 0},
	} {
		s.Params.Weight = tc.weight
		s.Params.Swarm.Adaptive = tc.weight == "adaptive"
		if s.Params.Swarm.Adaptive {
			s.Params.Weight = WeightRate
		}
		if got := s.Graph(3, 0).At(tc.i, tc.j); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := s.Graph(3, 1).At(0, 1); got != 4 {
		t.Errorf("adaptive rate 0-1 after iteration 1: %v, want (4+4)/2", got)
	}
}

// A count stalled longer than it waited is refused.
func TestSwarmCheckStall(t *testing.T) {
	s := &SwarmSection{Iterations: []SwarmIteration{{Counts: []SwarmCount{{From: 0, To: 1, Fragments: 2, BusyS: 1, StallS: 2}}}}}
	if err := s.check(2); err == nil {
		t.Error("stalled 2 s of 1 s: no error")
	}
}
