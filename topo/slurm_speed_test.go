package topo

import (
	"bytes"
	"sort"
	"strings"
	"testing"
)

// withBandwidths gives the example's six edges the bandwidths (bytes/s)
// in edge order: r0-s0, r1-s0, r2-s1, r3-s1, s0-s2, s1-s2.
func withBandwidths(t *testing.T, bw ...float64) *Topology {
	t.Helper()
	tp := loadExample(t)
	for i := range tp.Tree.Edges {
		tp.Tree.Edges[i].Bandwidth = nil
		if i < len(bw) && bw[i] > 0 {
			v := bw[i]
			tp.Tree.Edges[i].Bandwidth = &v
		}
	}
	return tp
}

// Link speeds by hand: s0's hosts at 1000 and 500 Mbit/s give 500, s1's
// two 1000; the top switch's children hang off the path s0-s2-s1, whose
// slowest edge (100, s0-s2) gives 100.
func TestSlurmLinkSpeedByHand(t *testing.T) {
	tp := withBandwidths(t, 1.25e8, 6.25e7, 1.25e8, 1.25e8, 1.25e7, 2.5e7)
	var b bytes.Buffer
	if err := tp.WriteSlurm(&b); err != nil {
		t.Fatal(err)
	}
	want := "SwitchName=s0 Nodes=a[00-01] LinkSpeed=500\nSwitchName=s1 Nodes=b[00-01] LinkSpeed=1000\nSwitchName=s2 Switches=s[0-1] LinkSpeed=100\n"
	if got := stripComments(b.String()); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	back, err := ReadSlurm(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if back[2].LinkSpeed != "100" {
		t.Errorf("read back LinkSpeed %q, want 100", back[2].LinkSpeed)
	}
}

// A switch with one unmeasured link to a child gets no LinkSpeed: the
// slowest link could be the one nobody measured.
func TestSlurmLinkSpeedOnlyWhenAllMeasured(t *testing.T) {
	tp := withBandwidths(t, 1.25e8, 0, 1.25e8, 1.25e8, 1.25e7, 0) // r1-s0 and s1-s2 unmeasured
	var b bytes.Buffer
	if err := tp.WriteSlurm(&b); err != nil {
		t.Fatal(err)
	}
	want := "SwitchName=s0 Nodes=a[00-01]\nSwitchName=s1 Nodes=b[00-01] LinkSpeed=1000\nSwitchName=s2 Switches=s[0-1]\n"
	if got := stripComments(b.String()); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// treeCuts finds the edge that cuts a set of ranks off, on either side of
// the tree's root, and nothing for sets no single edge separates.
func TestTreeCutsByHand(t *testing.T) {
	tp := loadExample(t)
	c := newTreeCuts(tp.Tree, tp.Size)
	name := func(es []int) string {
		if len(es) == 0 {
			return "none"
		}
		var names []string
		for _, e := range es {
			names = append(names, tp.Tree.Edges[e].A+"-"+tp.Tree.Edges[e].B)
		}
		sort.Strings(names)
		return strings.Join(names, " ")
	}
	cases := []struct {
		ranks []int
		want  string
	}{
		{[]int{0}, "r0-s0"},
		{[]int{1}, "r1-s0"},
		{[]int{3}, "r3-s1"},
		{[]int{0, 1}, "s0-s2 s1-s2"}, // s2 branches nowhere else
		{[]int{1, 0}, "s0-s2 s1-s2"},
		{[]int{2, 3}, "s0-s2 s1-s2"},
		{[]int{1, 2, 3}, "r0-s0"},
		{[]int{0, 2}, "none"},
		{[]int{0, 1, 2, 3}, "none"},
		{nil, "none"},
	}
	for _, k := range cases {
		if got := name(c.edges(k.ranks)); got != k.want {
			t.Errorf("edges(%v) = %s, want %s", k.ranks, got, k.want)
		}
	}
}
