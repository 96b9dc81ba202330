package topo

import "fmt"

// BandwidthTree is seed 000 Sect. 5.12's topology as a tree: the groups of
// one level (Level names it; Groups repeats its groups, so that the tree
// reads on its own) are the nodes, joined by the maximum spanning tree of
// the swarm's weights between them, averaged per connection (Eq. 5.4). A
// heavier edge is a faster path; Unit says what Weight counts.
type BandwidthTree struct {
	Level  string          `json:"level"`
	Groups [][]int         `json:"groups"`
	Edges  []BandwidthEdge `json:"edges"`
	Unit   string          `json:"unit"`
}

// BandwidthEdge joins groups A and B (indices into Groups).
type BandwidthEdge struct {
	A      int     `json:"a"`
	B      int     `json:"b"`
	Weight float64 `json:"weight"`
}

// Validate checks that the groups partition the ranks 0..size-1 and the
// edges form a tree (a forest where some groups never exchanged data)
// over them.
func (b *BandwidthTree) Validate(size int) error {
	if _, err := checkPartition(Level{Name: b.Level, Groups: b.Groups}, size); err != nil {
		return err
	}
	k := len(b.Groups)
	if len(b.Edges) >= k && k > 0 {
		return fmt.Errorf("%d edges over %d groups: not a tree", len(b.Edges), k)
	}
	parent := make([]int, k)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for i, e := range b.Edges {
		if e.A < 0 || e.B < 0 || e.A >= k || e.B >= k || e.A == e.B {
			return fmt.Errorf("edge %d: groups %d-%d out of range (%d groups)", i, e.A, e.B, k)
		}
		if bad(e.Weight) {
			return fmt.Errorf("edge %d: weight %v, want finite and >= 0", i, e.Weight)
		}
		ra, rb := find(e.A), find(e.B)
		if ra == rb {
			return fmt.Errorf("edge %d (%d-%d) closes a cycle", i, e.A, e.B)
		}
		parent[ra] = rb
	}
	return nil
}
