package coll

import (
	"cmp"
	"fmt"
	"slices"

	"netaware/topo"
)

// Topology-aware builders: they take a topo.Topology (topology.json) and
// keep traffic inside groups of a level as much as possible.

// BuildFunc builds a topology-blind schedule for a size and a root.
type BuildFunc func(p, root int) (*Schedule, error)

func checkTopo(name string, t *topo.Topology, p int) error {
	if t == nil {
		return fmt.Errorf("%s: needs a topology", name)
	}
	if t.Size != p {
		return fmt.Errorf("%s: topology has %d ranks, communicator %d", name, t.Size, p)
	}
	if err := topo.ValidateLevels(t.Levels, p); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// DefaultLevel is the level two-level builders use when none is given: the
// coarsest level that has more than one group (index into t.Levels), or -1
// when every level is a single group.
func DefaultLevel(t *topo.Topology) int {
	for i := len(t.Levels) - 1; i >= 0; i-- {
		if len(t.Levels[i].Groups) > 1 {
			return i
		}
	}
	return -1
}

// levelGroups returns the groups of level idx (-1: one group of all ranks).
func levelGroups(t *topo.Topology, idx, p int) ([][]int, error) {
	if idx < 0 {
		all := make([]int, p)
		for i := range all {
			all[i] = i
		}
		return [][]int{all}, nil
	}
	if idx >= len(t.Levels) {
		return nil, fmt.Errorf("level %d out of range: topology has %d levels", idx, len(t.Levels))
	}
	return t.Levels[idx].Groups, nil
}

// leaderOf is the rank that receives first in group g: the root if it is
// in g, else g's lowest rank. With nested levels the leader of a group is
// also the leader of its subgroup that contains it.
func leaderOf(g []int, root int) int {
	if slices.Contains(g, root) {
		return root
	}
	return slices.Min(g)
}

// membersLeaderFirst orders g with its leader first, the rest ascending.
func membersLeaderFirst(g []int, leader int) []int {
	out := []int{leader}
	rest := slices.Clone(g)
	slices.Sort(rest)
	for _, r := range rest {
		if r != leader {
			out = append(out, r)
		}
	}
	return out
}

// embed adds the tree of sub (built over len(members) ranks) to children,
// sub-rank i being members[i].
func embed(children [][]int, members []int, sub *Schedule) {
	for i, ch := range sub.Children {
		for _, c := range ch {
			children[members[i]] = append(children[members[i]], members[c])
		}
	}
}

// twoLevel builds the MagPIe-style tree: the root sends to the leader of
// every other group with top (over the leaders, root first), then every
// leader broadcasts inside its group with intra. The root serves the slow
// inter-group links first.
func twoLevel(name string, t *topo.Topology, level, p, root int, top, intra BuildFunc) (*Schedule, error) {
	if err := checkPR(name, p, root); err != nil {
		return nil, err
	}
	if err := checkTopo(name, t, p); err != nil {
		return nil, err
	}
	groups, err := levelGroups(t, level, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	leaders := []int{root}
	for _, g := range groups {
		if l := leaderOf(g, root); l != root {
			leaders = append(leaders, l)
		}
	}
	children := make([][]int, p)
	ts, err := top(len(leaders), 0)
	if err != nil {
		return nil, fmt.Errorf("%s: leaders: %w", name, err)
	}
	embed(children, leaders, ts)
	for _, g := range groups {
		m := membersLeaderFirst(g, leaderOf(g, root))
		is, err := intra(len(m), 0)
		if err != nil {
			return nil, fmt.Errorf("%s: group %v: %w", name, g, err)
		}
		embed(children, m, is)
	}
	s := newTree(name, p, root, children)
	return s, s.Validate()
}

// Magpie is MagPIe's two-level broadcast (Kielmann et al., seed 003 Sect.
// 6.3.3, seed 000 Sect. 2.3): the root sends the message once to the
// leader of every other group of the level (a flat tree, so each slow link
// carries it exactly once), then each group broadcasts along a binomial
// tree. level indexes t.Levels (-1: DefaultLevel).
func Magpie(t *topo.Topology, level, p, root int) (*Schedule, error) {
	if t != nil && level < 0 {
		level = DefaultLevel(t)
	}
	return twoLevel("magpie", t, level, p, root, Linear, Binomial)
}

// Interpipe is MagPIe with message segmentation (seed 003 Table 6.2): the
// same tree, cut into segments of seg bytes (DefaultSegSize when seg <= 0),
// so the groups start forwarding before the root has finished sending.
func Interpipe(t *topo.Topology, level, p, root, seg int) (*Schedule, error) {
	s, err := Magpie(t, level, p, root)
	if err != nil {
		return nil, err
	}
	if seg <= 0 {
		seg = DefaultSegSize
	}
	s.Name, s.SegSize = "interpipe", seg
	return s, nil
}

// Magpie2 is MagPIe using a base-level algorithm to send to groups (seed
// 003 Table 6.2): a broadcast among the group leaders with base, then one
// inside every group with base, each on its own sub-communicator. It is
// Hierarchical restricted to one level.
func Magpie2(t *topo.Topology, level, p, root int, base BuildFunc) (*Schedule, error) {
	if err := checkTopo("magpie2", t, p); err != nil {
		return nil, err
	}
	if level < 0 {
		level = DefaultLevel(t)
	}
	groups, err := levelGroups(t, level, p)
	if err != nil {
		return nil, fmt.Errorf("magpie2: %w", err)
	}
	s, err := hierarchical("magpie2", p, root, [][][]int{groups}, base)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Hierarchical is the MPICH-G2 multi-level broadcast (seed 000 Sect. 6.1,
// Fig. 6.1) for any number of levels: for every level, coarsest first, one
// sub-communicator per group made of the leaders of its subgroups, rooted at
// the group's leader; broadcasts on the sub-communicators of one level run
// in parallel, levels run one after the other. Every level of t is used
// (repeated partitions are skipped); base builds the schedule inside each
// sub-communicator.
func Hierarchical(t *topo.Topology, p, root int, base BuildFunc) (*Schedule, error) {
	if err := checkTopo("hierarchical", t, p); err != nil {
		return nil, err
	}
	parts := make([][][]int, 0, len(t.Levels))
	for _, l := range t.Levels {
		parts = append(parts, l.Groups)
	}
	return hierarchical("hierarchical", p, root, parts, base)
}

// hierarchical builds the stages for partitions finest first (each a
// coarsening of the one before); an implicit top partition of all ranks is
// added when the coarsest has several groups.
func hierarchical(name string, p, root int, parts [][][]int, base BuildFunc) (*Schedule, error) {
	if err := checkPR(name, p, root); err != nil {
		return nil, err
	}
	all := make([]int, p)
	for i := range all {
		all[i] = i
	}
	var chain [][][]int
	for _, g := range parts {
		if len(chain) == 0 || !samePartition(chain[len(chain)-1], g) {
			chain = append(chain, g)
		}
	}
	if len(chain) == 0 || len(chain[len(chain)-1]) > 1 {
		chain = append(chain, [][]int{all})
	}
	s := &Schedule{Name: name, Kind: KindHier, Size: p, Root: root}
	children := make([][]int, p)
	addStage := func(groups [][]int) error {
		var st Stage
		for _, members := range groups {
			if len(members) < 2 {
				continue
			}
			l := leaderOf(members, root)
			ranks := slices.Sorted(slices.Values(members))
			sub, err := base(len(ranks), slices.Index(ranks, l))
			if err != nil {
				return fmt.Errorf("%s: group %v: %w", name, ranks, err)
			}
			st.Groups = append(st.Groups, Group{Ranks: ranks, Sched: sub})
			embed(children, ranks, sub)
		}
		if len(st.Groups) > 0 {
			s.Stages = append(s.Stages, st)
		}
		return nil
	}
	for j := len(chain) - 1; j >= 1; j-- {
		finer := chain[j-1]
		var groups [][]int
		for _, g := range chain[j] {
			in := map[int]bool{}
			for _, r := range g {
				in[r] = true
			}
			var leaders []int
			for _, f := range finer {
				if len(f) > 0 && in[f[0]] {
					leaders = append(leaders, leaderOf(f, root))
				}
			}
			groups = append(groups, leaders)
		}
		if err := addStage(groups); err != nil {
			return nil, err
		}
	}
	if err := addStage(chain[0]); err != nil {
		return nil, err
	}
	tree := newTree(name, p, root, children)
	s.Parent, s.Children = tree.Parent, tree.Children
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: levels are not nested: %w", name, err)
	}
	return s, nil
}

func samePartition(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(g [][]int) []string {
		out := make([]string, len(g))
		for i, x := range g {
			out[i] = fmt.Sprint(slices.Sorted(slices.Values(x)))
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}

// DFSOrder orders the ranks for a pipeline (seed 002 Sect. 6.2): a
// depth-first traversal of the inferred tree from the root's leaf, visiting
// a node's neighbours by increasing edge latency (then id), so every tree
// edge is crossed once in each direction. Without a tree, ranks are sorted
// by their groups, coarsest level first, the root's groups first. Ranks the
// tree does not name follow in rank order.
func DFSOrder(t *topo.Topology, p, root int) ([]int, error) {
	if err := checkPR("dfs-pipeline", p, root); err != nil {
		return nil, err
	}
	if err := checkTopo("dfs-pipeline", t, p); err != nil {
		return nil, err
	}
	var order []int
	seen := make([]bool, p)
	if t.Tree != nil && len(t.Tree.Nodes) > 0 {
		if err := t.Tree.Validate(p); err != nil {
			return nil, fmt.Errorf("dfs-pipeline: tree: %w", err)
		}
		type nb struct {
			id  string
			lat float64
		}
		adj := map[string][]nb{}
		for _, e := range t.Tree.Edges {
			adj[e.A] = append(adj[e.A], nb{e.B, e.LatencyS})
			adj[e.B] = append(adj[e.B], nb{e.A, e.LatencyS})
		}
		rankOf := map[string]int{}
		start := ""
		for _, n := range t.Tree.Nodes {
			if n.Rank != nil {
				rankOf[n.ID] = *n.Rank
				if *n.Rank == root {
					start = n.ID
				}
			}
		}
		if start != "" {
			visited := map[string]bool{}
			var visit func(id string)
			visit = func(id string) {
				visited[id] = true
				if r, ok := rankOf[id]; ok && r >= 0 && r < p && !seen[r] {
					seen[r] = true
					order = append(order, r)
				}
				next := slices.Clone(adj[id])
				slices.SortFunc(next, func(a, b nb) int {
					return cmp.Or(cmp.Compare(a.lat, b.lat), cmp.Compare(a.id, b.id))
				})
				for _, n := range next {
					if !visited[n.id] {
						visit(n.id)
					}
				}
			}
			visit(start)
		}
	}
	if len(order) == 0 {
		order = levelOrder(t, p, root)
		for _, r := range order {
			seen[r] = true
		}
	}
	if !seen[root] {
		order = append([]int{root}, order...)
		seen[root] = true
	}
	for r := range p {
		if !seen[r] {
			order = append(order, r)
		}
	}
	return order, nil
}

// levelOrder sorts ranks by group, coarsest level first; at every level
// the root's group comes first and the others by their lowest rank.
func levelOrder(t *topo.Topology, p, root int) []int {
	keys := make([][]int, p)
	for i := len(t.Levels) - 1; i >= 0; i-- {
		l := &t.Levels[i]
		lab := l.Labels(p)
		low := make([]int, len(l.Groups))
		for gi, g := range l.Groups {
			low[gi] = slices.Min(g)
		}
		for r := range p {
			k := 0
			if g := lab[r]; g != lab[root] {
				k = 1 + low[g]
			}
			keys[r] = append(keys[r], k)
		}
	}
	order := make([]int, p)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := slices.Compare(keys[a], keys[b]); c != 0 {
			return c
		}
		return cmp.Compare(b2i(a != root), b2i(b != root))
	})
	return order
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ChainOrder is a chain through the ranks in the given order (order[0] is
// the root), cut into segments of seg bytes.
func ChainOrder(name string, order []int, seg int) (*Schedule, error) {
	p := len(order)
	if p == 0 {
		return nil, fmt.Errorf("%s: empty order", name)
	}
	children := make([][]int, p)
	seen := make([]bool, p)
	for i, r := range order {
		if r < 0 || r >= p || seen[r] {
			return nil, fmt.Errorf("%s: order is not a permutation of 0..%d (rank %d)", name, p-1, r)
		}
		seen[r] = true
		if i+1 < p {
			children[r] = []int{order[i+1]}
		}
	}
	s := newTree(name, p, order[0], children)
	s.SegSize = max(seg, 0)
	return s, nil
}

// DFSPipeline is the pipelined broadcast along a depth-first traversal of
// the inferred tree (seed 002 Sect. 6.2), segments of seg bytes
// (DefaultSegSize when seg <= 0).
func DFSPipeline(t *topo.Topology, p, root, seg int) (*Schedule, error) {
	return DFSPipelineFanout(t, p, root, seg, 1)
}

// DFSPipelineFanout is DFSPipeline whose leaf groups (the ranks under one
// switch of the tree, or one group of the finest level that has a group of
// two or more ranks) are served by a pipelined fanout-ary tree instead of
// a chain: the depth-first order is cut into runs of one leaf group; the
// first rank of every run forwards each segment to the first rank of the
// next run (first, as it is on the critical path) and to the root of its
// run's tree, rank j of a run being fed by rank (j-1)/fanout.
//
// Why: a chain through P ranks has P-1 hops, and the first segment pays
// every hop's latency before the last rank receives anything; on 512 ranks
// with 100 us hops that fill alone is 51 ms, so the total time stays far
// from the bottleneck bound at any message size that can be simulated.
// The fan-out keeps the depth-first order across switches, so every
// inter-switch link still carries the message once per direction, and it
// cuts the depth to (runs - 1) + log_fanout(group size). The price is
// fanout+1 copies on an entry rank's own link: it pays when that link is
// several times faster than the bottleneck (dichev-n1: 1 Gbps host links,
// 100 Mbps backbone), and costs bandwidth when the host link is the
// bottleneck, which is why fanout <= 1 (the default) is the plain chain.
func DFSPipelineFanout(t *topo.Topology, p, root, seg, fanout int) (*Schedule, error) {
	order, err := DFSOrder(t, p, root)
	if err != nil {
		return nil, err
	}
	if seg <= 0 {
		seg = DefaultSegSize
	}
	if fanout <= 1 {
		return ChainOrder("dfs-pipeline", order, seg)
	}
	label := leafLabels(t, p)
	var runs [][]int
	for i, r := range order {
		if i == 0 || label[r] != label[order[i-1]] {
			runs = append(runs, nil)
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], r)
	}
	children := make([][]int, p)
	for i, run := range runs {
		if i+1 < len(runs) {
			children[run[0]] = append(children[run[0]], runs[i+1][0])
		}
		for j := 1; j < len(run); j++ {
			parent := run[(j-1)/fanout]
			children[parent] = append(children[parent], run[j])
		}
	}
	s := newTree("dfs-pipeline", p, root, children)
	s.SegSize = seg
	return s, s.Validate()
}

// leafLabels gives every rank the label of its leaf group: the switch it
// hangs off in the tree, else its group in the finest level that has a
// group of two or more ranks; ranks in neither get a label of their own.
func leafLabels(t *topo.Topology, p int) []int {
	label := make([]int, p)
	for r := range label {
		label[r] = -1 - r
	}
	if t.Tree != nil && len(t.Tree.Nodes) > 0 {
		ids := map[string]int{}
		rankOf := map[string]int{}
		for _, n := range t.Tree.Nodes {
			if n.Rank != nil && *n.Rank >= 0 && *n.Rank < p {
				rankOf[n.ID] = *n.Rank
			}
		}
		for _, e := range t.Tree.Edges {
			for _, end := range [][2]string{{e.A, e.B}, {e.B, e.A}} {
				if r, ok := rankOf[end[0]]; ok {
					if _, isRank := rankOf[end[1]]; !isRank {
						if _, ok := ids[end[1]]; !ok {
							ids[end[1]] = len(ids)
						}
						label[r] = ids[end[1]]
					}
				}
			}
		}
		return label
	}
	for i := range t.Levels {
		l := &t.Levels[i]
		if slices.ContainsFunc(l.Groups, func(g []int) bool { return len(g) > 1 }) {
			return l.Labels(p)
		}
	}
	return label
}
