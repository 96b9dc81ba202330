package report

import (
	"math"
	"testing"

	"netaware/cluster"
)

// The ranks of one switch get one label with the range of their links
// (measured links differ in the last digit, and a label per rank overlaps
// at 30 pixels a rank); a switch child is not part of it.
func TestSharedLabelRangesLeafLinks(t *testing.T) {
	rank := func(lat, bw float64) *tnode { return &tnode{kind: kindRank, lat: lat, latMax: lat, bw: bw} }
	n := &tnode{kind: kindSwitch, children: []*tnode{
		rank(110e-6, 119e6), rank(111e-6, 120e6), rank(110.2e-6, 119.5e6),
		{kind: kindSwitch, lat: 4.47e-6, latMax: 4.47e-6, bw: 120e6},
	}}
	if got, want := sharedLabel(n), "each 110us–111us · 952Mbps–960Mbps"; got != want {
		t.Errorf("shared label %q, want %q", got, want)
	}
	one := &tnode{kind: kindSwitch, children: []*tnode{rank(10e-6, math.NaN()), {kind: kindSwitch}}}
	if got := sharedLabel(one); got != "" {
		t.Errorf("one leaf: shared label %q, want none", got)
	}
	if got, want := latLabel(110e-6, 110.4e-6*1.01), "110us–112us"; got != want {
		t.Errorf("latLabel %q, want %q", got, want)
	}
	if got, want := latLabel(110e-6, 110.4e-6), "110us"; got != want {
		t.Errorf("latLabel of equal printed values %q, want %q", got, want)
	}
}

// The heat map's caption speaks of grey cells only when some pair has no
// value.
func TestHasUnmeasured(t *testing.T) {
	m := cluster.NewMatrix(3)
	m.Set(0, 1, 1)
	m.Set(0, 2, 2)
	m.Set(1, 2, 3)
	if hasUnmeasured(m) {
		t.Error("a full matrix has unmeasured pairs")
	}
	m.Set(1, 2, math.NaN())
	if !hasUnmeasured(m) {
		t.Error("a NaN pair is not unmeasured")
	}
}
