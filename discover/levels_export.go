package discover

import (
	"fmt"

	"netaware/cluster"
	"netaware/comm"
	"netaware/infer"
	"netaware/infer/live"
	"netaware/topo"
)

// TreeLevels cuts a latency tree over ranks 0..n-1 into levels the way a
// blind discovery does (tree distances, average-linkage dendrogram, gap
// rule, names by latency), for callers that infer the tree themselves
// (netaware infer). It also returns the dendrogram and its cut heights.
func TreeLevels(t *infer.Tree, n int, gap cluster.GapOptions) ([]topo.Level, *cluster.Dendrogram, []float64, error) {
	if t == nil || len(t.Ranks()) != n {
		return nil, nil, nil, fmt.Errorf("discover: tree levels need a tree over all %d ranks", n)
	}
	if gap == (cluster.GapOptions{}) {
		gap = TreeGap()
	}
	ids := make([]comm.Identity, n)
	for i := range ids {
		ids[i] = comm.Identity{Rank: i, Core: -1, Socket: -1}
	}
	hosts := hostGroups(ids, true)
	reps := make([]int, n)
	for i := range reps {
		reps[i] = i
	}
	out := &Outcome{}
	levels, err := out.levelsFromTree(n, ids, hosts, reps, live.Result{Tree: t}, nil, Options{Blind: true, Gap: gap})
	return levels, out.Dendrogram, out.Cuts, err
}
