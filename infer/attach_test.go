package infer

import (
	"math"
	"testing"
)

// Two switches 4 us apart: A with ranks 0, 1, 2 on 1, 2 and 3 us links,
// B with ranks 3, 4, 5 on 1 us links. Worked by hand: every rank alone
// joins the rest at its own switch (a = its link); with ranks 0 and 1 as
// one group, they still join at A, where rank 2 and B lie in two
// branches; grouped by switch, a group meets the other only at the far
// switch.
func TestGroupAttachmentsByHand(t *testing.T) {
	const us = 1e-6
	tr := handTree(
		node{rank: -1, parent: -1}, // 0: A (root)
		node{rank: 0, parent: 0, up: 1 * us},
		node{rank: 1, parent: 0, up: 2 * us},
		node{rank: 2, parent: 0, up: 3 * us},
		node{rank: -1, parent: 0, up: 4 * us}, // 4: B
		node{rank: 3, parent: 4, up: 1 * us},
		node{rank: 4, parent: 4, up: 1 * us},
		node{rank: 5, parent: 4, up: 1 * us},
	)
	cases := []struct {
		groups []int
		want   []float64
	}{
		{[]int{0, 1, 2, 3, 4, 5}, []float64{1, 2, 3, 1, 1, 1}},
		{[]int{0, 0, 1, 2, 3, 4}, []float64{1, 2, 3, 1, 1, 1}},
		{[]int{0, 0, 0, 1, 1, 1}, []float64{5, 6, 7, 5, 5, 5}},
		{[]int{0, 0, 0, 0, 0, 0}, []float64{0, 0, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		got := tr.GroupAttachments(c.groups)
		for r := range c.want {
			if math.Abs(got[r]-c.want[r]*us) > 1e-15 {
				t.Errorf("groups %v: rank %d attaches %g us away, want %g", c.groups, r, got[r]/us, c.want[r])
			}
		}
	}
	// The ranks of a rack then lie 0 apart whatever their links, the racks
	// 4 us apart.
	a := tr.GroupAttachments([]int{0, 1, 2, 3, 4, 5})
	if d := tr.Distance(0, 2) - a[0] - a[2]; math.Abs(d) > 1e-15 {
		t.Errorf("ranks 0 and 2 of switch A: %g us apart after their links, want 0", d/us)
	}
	if d := tr.Distance(1, 4) - a[1] - a[4]; math.Abs(d-4*us) > 1e-15 {
		t.Errorf("ranks 1 and 4: %g us apart after their links, want 4", d/us)
	}
}
