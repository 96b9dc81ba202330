package topo

import (
	"fmt"
	"math"
)

// Validate checks every rule of docs/topology-format.md and reports the first broken one,
// naming the level, group, rank or node at fault.
func (t *Topology) Validate() error {
	if t.Version != Version {
		return fmt.Errorf("topology: version %d not supported (want %d)", t.Version, Version)
	}
	if t.Size <= 0 {
		return fmt.Errorf("topology: size %d: want at least 1 rank", t.Size)
	}
	if len(t.Ranks) != t.Size {
		return fmt.Errorf("topology: %d rank entries for size %d: want one per rank", len(t.Ranks), t.Size)
	}
	for i, r := range t.Ranks {
		if r.Rank != i {
			return fmt.Errorf("topology: ranks[%d] is rank %d: entries must be in rank order", i, r.Rank)
		}
		if r.Core != nil && *r.Core < 0 {
			return fmt.Errorf("topology: rank %d: core %d is negative", i, *r.Core)
		}
		if r.Socket != nil && *r.Socket < 0 {
			return fmt.Errorf("topology: rank %d: socket %d is negative", i, *r.Socket)
		}
	}
	if err := ValidateLevels(t.Levels, t.Size); err != nil {
		return fmt.Errorf("topology: %w", err)
	}
	if t.Tree != nil {
		if err := t.Tree.Validate(t.Size); err != nil {
			return fmt.Errorf("topology: tree: %w", err)
		}
	}
	if t.BandwidthTree != nil {
		if err := t.BandwidthTree.Validate(t.Size); err != nil {
			return fmt.Errorf("topology: bandwidth_tree: %w", err)
		}
	}
	if m := t.Measurements; m != nil {
		if m.PairsMeasured < 0 || m.PairsTotal < 0 {
			return fmt.Errorf("topology: measurements: negative pair count")
		}
		if bad(m.VirtualTimeS) || bad(m.WallTimeS) {
			return fmt.Errorf("topology: measurements: times must be finite and >= 0")
		}
	}
	return nil
}

func bad(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) || x < 0 }

// ValidateLevels checks that each level is a partition of ranks 0..size-1
// into sorted groups and that each level coarsens the one before it.
func ValidateLevels(levels []Level, size int) error {
	var prev []int // group index of each rank in the previous level
	for li, l := range levels {
		where, err := checkPartition(l, size)
		if err != nil {
			return fmt.Errorf("level %d %q: %w", li, l.Name, err)
		}
		if prev != nil {
			// Coarsening: ranks together before must stay together.
			for _, g := range levels[li-1].Groups {
				for _, r := range g[1:] {
					if where[r] != where[g[0]] {
						return fmt.Errorf("level %d %q is not a coarsening of level %d %q: ranks %d and %d share a group there but are split here (levels go finest first)",
							li, l.Name, li-1, levels[li-1].Name, g[0], r)
					}
				}
			}
		}
		prev = where
	}
	return nil
}

// checkPartition returns, for each rank, the index of its group.
func checkPartition(l Level, size int) ([]int, error) {
	where := make([]int, size)
	for i := range where {
		where[i] = -1
	}
	for gi, g := range l.Groups {
		if len(g) == 0 {
			return nil, fmt.Errorf("group %d is empty", gi)
		}
		for k, r := range g {
			if r < 0 || r >= size {
				return nil, fmt.Errorf("group %d: rank %d out of range [0,%d)", gi, r, size)
			}
			if k > 0 && g[k-1] >= r {
				return nil, fmt.Errorf("group %d: not sorted ascending at rank %d (after %d)", gi, r, g[k-1])
			}
			if where[r] >= 0 {
				return nil, fmt.Errorf("rank %d is in group %d and group %d", r, where[r], gi)
			}
			where[r] = gi
		}
	}
	for r, w := range where {
		if w < 0 {
			return nil, fmt.Errorf("rank %d is in no group", r)
		}
	}
	return where, nil
}

// Validate checks that the tree is an undirected tree over uniquely named
// nodes whose leaves are exactly the rank nodes, one per rank 0..size-1, with
// edges between existing nodes and non-negative latencies.
func (tr *Tree) Validate(size int) error {
	idx := make(map[string]int, len(tr.Nodes))
	rankNode := make([]int, size)
	for i := range rankNode {
		rankNode[i] = -1
	}
	for i, n := range tr.Nodes {
		if n.ID == "" {
			return fmt.Errorf("node %d has an empty id", i)
		}
		if _, dup := idx[n.ID]; dup {
			return fmt.Errorf("node id %q appears twice", n.ID)
		}
		idx[n.ID] = i
		if n.Rank != nil {
			r := *n.Rank
			if r < 0 || r >= size {
				return fmt.Errorf("node %q: rank %d out of range [0,%d)", n.ID, r, size)
			}
			if rankNode[r] >= 0 {
				return fmt.Errorf("rank %d is on nodes %q and %q", r, tr.Nodes[rankNode[r]].ID, n.ID)
			}
			rankNode[r] = i
		}
	}
	for r, n := range rankNode {
		if n < 0 {
			return fmt.Errorf("rank %d has no node", r)
		}
	}
	if len(tr.Edges) != len(tr.Nodes)-1 {
		return fmt.Errorf("%d nodes and %d edges: a tree has exactly one edge fewer than nodes", len(tr.Nodes), len(tr.Edges))
	}
	deg := make([]int, len(tr.Nodes))
	uf := newUnionFind(len(tr.Nodes))
	for i, e := range tr.Edges {
		a, okA := idx[e.A]
		b, okB := idx[e.B]
		switch {
		case !okA:
			return fmt.Errorf("edge %d %s-%s: no node %q", i, e.A, e.B, e.A)
		case !okB:
			return fmt.Errorf("edge %d %s-%s: no node %q", i, e.A, e.B, e.B)
		case a == b:
			return fmt.Errorf("edge %d %s-%s is a loop", i, e.A, e.B)
		}
		if math.IsNaN(e.LatencyS) || math.IsInf(e.LatencyS, 0) || e.LatencyS < 0 {
			return fmt.Errorf("edge %d %s-%s: latency_s %v: want a finite value >= 0", i, e.A, e.B, e.LatencyS)
		}
		if e.Bandwidth != nil {
			if bw := *e.Bandwidth; math.IsNaN(bw) || math.IsInf(bw, 0) || bw <= 0 {
				return fmt.Errorf("edge %d %s-%s: bandwidth_Bps %v: want a finite value > 0", i, e.A, e.B, bw)
			}
		}
		if !uf.union(a, b) {
			return fmt.Errorf("edge %d %s-%s closes a cycle (or repeats an edge)", i, e.A, e.B)
		}
		deg[a]++
		deg[b]++
	}
	// n-1 edges and no cycle means connected; now the leaf rule.
	if len(tr.Nodes) == 1 {
		return nil // a single rank, no edges
	}
	for i, n := range tr.Nodes {
		switch {
		case n.Rank != nil && deg[i] != 1:
			return fmt.Errorf("rank node %q has %d edges: ranks must be leaves", n.ID, deg[i])
		case n.Rank == nil && deg[i] < 2:
			return fmt.Errorf("switch node %q has %d edge(s): leaves must be rank nodes", n.ID, deg[i])
		}
	}
	return nil
}

type unionFind []int

func newUnionFind(n int) unionFind {
	u := make(unionFind, n)
	for i := range u {
		u[i] = i
	}
	return u
}

func (u unionFind) find(x int) int {
	for u[x] != x {
		u[x] = u[u[x]]
		x = u[x]
	}
	return x
}

// union joins the sets of a and b and reports whether they were apart.
func (u unionFind) union(a, b int) bool {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return false
	}
	u[ra] = rb
	return true
}
