package infer

import (
	"math"
	"testing"
)

// star4 is a tree of ranks 0-3 on one switch, 5 us from each.
func star4() *Tree {
	t := NewTree(0)
	t.attach(0, 1, 10e-6)
	s := t.splitEdge(0, t.byRank[1], 5e-6)
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
