package probe

import (
	"math"
	"testing"
	"time"

	"netaware/dataset"
)

// A protocol small enough to add up by hand: sizes 0 and 1 (MaxBytes 1),
// 2 repetitions, K = 1, saturation batches of 10 then 20 (SatMax 20) up
// to 1 byte, no midpoints; rtt0 = 10 us, 1 MB/s.
//
//	m = 0: RTT 10 us; 2 * (10 + 1 * (20 - 10)) = 40 us; 30 messages of
//	       1 us (the floor) + 2 batches * 10 us = 50 us: 90 us
//	m = 1: RTT 11 us; 2 * (11 + (22 - 10)) = 46 us; 30 messages of 1 us
//	       + 20 us = 50 us: 96 us
func TestPLogPCostByHand(t *testing.T) {
	p := dataset.PLogPParams{MaxBytes: 1, Reps: 2, K: 1, SatStart: 10, SatMax: 20, SatMaxBytes: 1, MaxExtra: -2}
	got := PLogPCost(p, 10e-6, 1e6)
	if want := 186 * time.Microsecond; math.Abs(float64(got-want)) > 1 {
		t.Errorf("cost %v, want %v", got, want)
	}
	// Midpoints cost the mean size each.
	p.MaxExtra = 2
	if got, want := PLogPCost(p, 10e-6, 1e6), 372*time.Microsecond; math.Abs(float64(got-want)) > 1 {
		t.Errorf("with 2 midpoints: cost %v, want %v", got, want)
	}
	if PLogPCost(p, 10e-6, 0) != 0 {
		t.Error("no bandwidth: want 0, no panic")
	}
	// A slower link never costs less.
	q := dataset.PLogPParams{}
	if PLogPCost(q, 30e-6, 12.5e6) <= PLogPCost(q, 30e-6, 125e6) {
		t.Error("100 Mbit no dearer than 1 Gbit")
	}
}
