package dataset

import (
	"math"
	"testing"
)

// Three ranks, two iterations, worked by hand.
func TestSwarmWeightsByHand(t *testing.T) {
	s := &SwarmSection{Iterations: []SwarmIteration{
		{Counts: []SwarmCount{
			{From: 0, To: 1, Fragments: 10, BusyS: 2, Streamed: 8, StreamS: 0.5},
			{From: 1, To: 0, Fragments: 4, BusyS: 1, Streamed: 0},
		}},
		{Counts: []SwarmCount{
			{From: 0, To: 1, Fragments: 6, BusyS: 3, Streamed: 5, StreamS: 0.25},
			{From: 2, To: 1, Fragments: 1, BusyS: 0.5},
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
		// Rates: mean of 10/2, 4/1, 6/3 over the three counts seen.
		{"rate 0-1", WeightRate, 0, 1, (5.0 + 4 + 2) / 3},
		{"rate 1-2", "", 2, 1, 2},
		// Streams: 8/0.5 and 5/0.25; the count that never streamed and
		// the pair 1-2 are unmeasured.
		{"stream 0-1", WeightStream, 1, 0, (16.0 + 20) / 2},
		{"stream 1-2", WeightStream, 1, 2, 0},
	} {
		s.Params.Weight = tc.weight
		if got := s.Graph(3, 0).At(tc.i, tc.j); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	s.Params.Weight = WeightStream
	if got := s.Graph(3, 1).At(0, 1); got != 16 {
		t.Errorf("stream 0-1 after iteration 1: %v, want 16", got)
	}
}

// A count claiming more fragments streamed than received is refused.
func TestSwarmCheckStreamed(t *testing.T) {
	s := &SwarmSection{Iterations: []SwarmIteration{{Counts: []SwarmCount{{From: 0, To: 1, Fragments: 2, Streamed: 3}}}}}
	if err := s.check(2); err == nil {
		t.Error("3 of 2 fragments streamed: no error")
	}
}
