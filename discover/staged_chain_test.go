package discover

import (
	"os"
	"slices"
	"testing"

	"netaware/topo"
)

// treeCuts lists, for each edge of t, the ranks on one side (the side
// without rank 0), as sorted slices.
func treeCuts(t *topo.Tree) [][]int {
	adj := map[string][]string{}
	for _, e := range t.Edges {
		adj[e.A] = append(adj[e.A], e.B)
		adj[e.B] = append(adj[e.B], e.A)
	}
	rank := map[string]int{}
	for _, n := range t.Nodes {
		if n.Rank != nil {
			rank[n.ID] = *n.Rank
		}
	}
	var cuts [][]int
	for _, e := range t.Edges {
		seen := map[string]bool{e.A: true}
		todo := []string{e.A}
		for len(todo) > 0 {
			x := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			for _, y := range adj[x] {
				if !seen[y] && !(x == e.A && y == e.B) {
					seen[y] = true
					todo = append(todo, y)
				}
			}
		}
		var side, other []int
		for id, r := range rank {
			if seen[id] {
				side = append(side, r)
			} else {
				other = append(other, r)
			}
		}
		if slices.Contains(side, 0) {
			side = other
		}
		slices.Sort(side)
		cuts = append(cuts, side)
	}
	return cuts
}

// On chain-4x3 (switches s0-s1-s2-s3, 3 ranks each, every trunk the
// bottleneck of every pair of switches it separates) in the simulator
// with the realistic profile, the staged discovery's tree has an edge for
// each trunk: ranks 3-11, 6-11 and 9-11 cut off, so that each trunk can
// be labelled. Seeds 1-2 (1-10 with NETAWARE_SCALE=1), named and blind.
func TestStagedChainHasEveryTrunk(t *testing.T) {
	seeds := 2
	if os.Getenv("NETAWARE_SCALE") == "1" {
		seeds = 10
	}
	want := [][]int{{3, 4, 5, 6, 7, 8, 9, 10, 11}, {6, 7, 8, 9, 10, 11}, {9, 10, 11}}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		for _, blind := range []bool{false, true} {
			out, _ := stagedOn(t, "../emu/testdata/chain-4x3.yaml", blind, seed)
			cuts := treeCuts(out.Topology.Tree)
			for _, w := range want {
				if !slices.ContainsFunc(cuts, func(c []int) bool { return slices.Equal(c, w) }) {
					t.Errorf("seed %d blind %v: no tree edge cuts off ranks %v", seed, blind, w)
				}
			}
		}
	}
}
