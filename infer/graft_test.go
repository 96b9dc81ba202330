package infer

import (
	"math"
	"testing"
)

// star4 is a tree of ranks 0-3 on one switch, 5 us from each.
func star4() *Tree {
	t := NewTree(0)
	t.attach(0, 1, 10e-6)
	s := t.splitEdge(0, t.byRank.at(1), 5e-6)
	t.attach(s, 2, 5e-6)
	t.attach(s, 3, 5e-6)
	return t
}

// Two groups of four on their own switches, 10 us apart, composed from
// a two-rank tree between the leaders (0 and 4, 20 us) and each group's
// star: every distance worked by hand.
func TestGraftTwoStars(t *testing.T) {
	top, err := func() (*Tree, error) {
		tt := NewTree(0)
		tt.attach(0, 1, 20e-6)
		return tt.Renamed([]int{0, 4})
	}()
	if err != nil {
		t.Fatal(err)
	}
	if err := top.Graft(star4(), []int{0, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := top.Graft(star4(), []int{4, 5, 6, 7}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b int
		want float64
	}{{0, 1, 10e-6}, {1, 2, 10e-6}, {5, 7, 10e-6}, {0, 4, 20e-6}, {1, 5, 20e-6}, {3, 6, 20e-6}} {
		if d := top.Distance(c.a, c.b); math.Abs(d-c.want) > 1e-12 {
			t.Errorf("d(%d,%d) = %g, want %g", c.a, c.b, d, c.want)
		}
	}
	if got := len(top.Ranks()); got != 8 {
		t.Errorf("%d ranks, want 8", got)
	}
	sib := top.Siblings()
	if len(sib) != 2 || len(sib[0]) != 4 || len(sib[1]) != 4 {
		t.Errorf("siblings %v, want two groups of four", sib)
	}
	// The composed tree survives the wire.
	b, _ := top.MarshalBinary()
	if _, err := UnmarshalTree(b); err != nil {
		t.Fatal(err)
	}
}

// A group of two has no switch of its own: the branching point goes
// halfway between them, within the leader's edge.
func TestGraftPair(t *testing.T) {
	top := NewTree(0)
	top.attach(0, 1, 4e-6) // ranks 0 and 1: renamed 0 and 2
	top, _ = top.Renamed([]int{0, 2})
	pair := NewTree(0)
	pair.attach(0, 1, 6e-6)
	if err := top.Graft(pair, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	// The leader's edge is 4 us: the branching point at 3 us from 0.
	if d := top.Distance(0, 1); math.Abs(d-6e-6) > 1e-12 {
		t.Errorf("d(0,1) = %g, want 6e-6", d)
	}
	if d := top.Distance(1, 2); math.Abs(d-4e-6) > 1e-12 {
		t.Errorf("d(1,2) = %g, want 4e-6 (3 up from 1, 1 on to 2)", d)
	}
}

func TestGraftErrors(t *testing.T) {
	top := NewTree(0)
	top.attach(0, 1, 4e-6)
	if err := top.Graft(star4(), []int{7, 1, 2, 3}); err == nil {
		t.Error("leader not in the tree: no error")
	}
	if err := top.Graft(star4(), []int{0, 1, 2, 3}); err == nil {
		t.Error("rank 1 twice: no error")
	}
	if err := top.Graft(star4(), []int{0, 5}); err == nil {
		t.Error("too few names: no error")
	}
	if _, err := star4().Renamed([]int{0, 1}); err == nil {
		t.Error("Renamed with too few names: no error")
	}
}

func TestTreeOf(t *testing.T) {
	// Rank 0 - switch - switch - rank 1, and rank 2 on the first switch.
	tr, err := TreeOf([]int{0, -1, -1, 1, 2}, []int{-1, 0, 1, 2, 1}, []float64{0, 5e-6, 1e-6, 5e-6, 5e-6})
	if err != nil {
		t.Fatal(err)
	}
	if d := tr.Distance(0, 1); math.Abs(d-11e-6) > 1e-12 {
		t.Errorf("d(0,1) = %g, want 11e-6", d)
	}
	if d := tr.Distance(1, 2); math.Abs(d-11e-6) > 1e-12 {
		t.Errorf("d(1,2) = %g, want 11e-6", d)
	}
	if _, err := TreeOf([]int{0, 1}, []int{-1, 1}, []float64{0, 1}); err == nil {
		t.Error("a node its own parent: no error")
	}
	if _, err := TreeOf([]int{-1}, []int{-1}, []float64{0}); err == nil {
		t.Error("a switch as root: no error")
	}
}

// A group grafted onto a leader whose edge ends at a switch as long as
// the group's own: the group's ranks hang from that switch, no copy of it.
func TestGraftOntoSwitch(t *testing.T) {
	// Leaders 0 and 4 on switches 5 us away, joined by a 2 us trunk.
	top, err := TreeOf([]int{0, -1, -1, 4}, []int{-1, 0, 1, 2}, []float64{0, 5e-6, 2e-6, 5e-6})
	if err != nil {
		t.Fatal(err)
	}
	if err := top.Graft(star4(), []int{0, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := top.Graft(star4(), []int{4, 5, 6, 7}); err != nil {
		t.Fatal(err)
	}
	if n := top.Switches(); n != 2 {
		t.Errorf("%d switches, want 2", n)
	}
	if d := top.Distance(1, 6); math.Abs(d-12e-6) > 1e-12 {
		t.Errorf("d(1,6) = %g, want 12e-6", d)
	}
}
