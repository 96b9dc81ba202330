package dataset

import (
	"fmt"
	"slices"
	"sort"
)

// Group is a node of an LGate group tree (seed 003 Fig. 3.4): a leaf lists
// ranks whose pairs are tested one at a time; an inner node's children are
// independent groups, tested in parallel and then joined. LGate used binary
// trees; like the seed's extension, any number of children is allowed.
type Group struct {
	Ranks    []int    `json:"ranks,omitempty"`
	Children []*Group `json:"children,omitempty"`
}

// AllRanks returns the ranks below g, ascending.
func (g *Group) AllRanks() []int {
	if len(g.Children) == 0 {
		return slices.Sorted(slices.Values(g.Ranks))
	}
	var out []int
	for _, c := range g.Children {
		out = append(out, c.AllRanks()...)
	}
	sort.Ints(out)
	return out
}

// Leaves returns the leaf groups, left to right.
func (g *Group) Leaves() []*Group {
	if len(g.Children) == 0 {
		return []*Group{g}
	}
	var out []*Group
	for _, c := range g.Children {
		out = append(out, c.Leaves()...)
	}
	return out
}

// JoinMode says how the cross pairs of two joined groups are scheduled.
type JoinMode string

const (
	// JoinOne tests the cross pairs of two groups one at a time: joins of
	// disjoint group pairs still run in parallel, but no two tests of one
	// join share a host link, so results equal serial ones.
	JoinOne JoinMode = "one"
	// JoinZip is LGate's join_leaves (seed 003 Fig. 3.3): the ranks of the
	// two groups are zipped and the zipped pairs run at the same time; we
	// rotate the zip so every cross pair is tested once. Faster, but tests
	// of one step share the groups' links.
	JoinZip JoinMode = "zip"
)

// ParseJoinMode accepts "one" or "zip".
func ParseJoinMode(s string) (JoinMode, error) {
	switch JoinMode(s) {
	case JoinOne, JoinZip:
		return JoinMode(s), nil
	}
	return "", fmt.Errorf("join mode %q: want one or zip", s)
}
