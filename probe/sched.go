package probe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"netaware/dataset"
	"netaware/topo"
)

// Pair is an ordered pair of ranks: A initiates the test (PLogP's sender),
// B responds (the receiver). Plans built here always have A < B: like seed
// 003, measurements are taken one way and symmetry is assumed.
type Pair struct {
	A int `json:"a"`
	B int `json:"b"`
}

// Lane is a sequence of steps run by a set of ranks that synchronize only
// among themselves (seed 003 Fig. 3.1's subset barrier): a barrier, then for
// each step its pairs at the same time followed by a barrier. Lanes of one
// phase are disjoint, so they run in parallel without waiting for each
// other.
type Lane struct {
	Members []int    `json:"members"`
	Steps   [][]Pair `json:"steps"`
}

// Phase is a set of disjoint lanes.
type Phase struct {
	Lanes []Lane `json:"lanes"`
}

// Plan is a deterministic schedule of pair tests: every rank derives the
// same Plan from the same inputs and walks it in order, running the lanes it
// belongs to.
type Plan struct {
	Phases []Phase `json:"phases"`
}

// Pairs lists the plan's pairs in execution order (phase, lane, step); the
// index of a pair in this list identifies it in a campaign.
func (p *Plan) Pairs() []Pair {
	var out []Pair
	for _, ph := range p.Phases {
		for _, l := range ph.Lanes {
			for _, st := range l.Steps {
				out = append(out, st...)
			}
		}
	}
	return out
}

// Validate checks that the plan can run on a communicator of size ranks:
// ranks in range, each rank in at most one lane per phase, every pair inside
// its lane and the pairs of a step disjoint.
func (p *Plan) Validate(size int) error {
	for pi, ph := range p.Phases {
		inLane := map[int]int{}
		for li, l := range ph.Lanes {
			mem := map[int]bool{}
			for _, r := range l.Members {
				if r < 0 || r >= size {
					return fmt.Errorf("plan phase %d lane %d: rank %d out of range [0,%d)", pi, li, r, size)
				}
				if prev, ok := inLane[r]; ok {
					return fmt.Errorf("plan phase %d: rank %d in lanes %d and %d", pi, r, prev, li)
				}
				inLane[r] = li
				mem[r] = true
			}
			for si, st := range l.Steps {
				busy := map[int]bool{}
				for _, pr := range st {
					if pr.A == pr.B || !mem[pr.A] || !mem[pr.B] {
						return fmt.Errorf("plan phase %d lane %d step %d: pair %d-%d not two members", pi, li, si, pr.A, pr.B)
					}
					if busy[pr.A] || busy[pr.B] {
						return fmt.Errorf("plan phase %d lane %d step %d: rank in two pairs", pi, li, si)
					}
					busy[pr.A], busy[pr.B] = true, true
				}
			}
		}
	}
	return nil
}

// Steps is the number of steps of the longest chain of lanes, a rough cost
// measure: serial plans have one step per pair.
func (p *Plan) Steps() int {
	n := 0
	for _, ph := range p.Phases {
		m := 0
		for _, l := range ph.Lanes {
			m = max(m, len(l.Steps))
		}
		n += m
	}
	return n
}

func orient(a, b int) Pair {
	if a > b {
		a, b = b, a
	}
	return Pair{a, b}
}

func sortedCopy(r []int) []int {
	c := slices.Clone(r)
	sort.Ints(c)
	return c
}

// allPairsSteps is test_subset of seed 003 Fig. 3.2: one pair at a time,
// every pair of ranks (i < j, by position in ranks).
func allPairsSteps(ranks []int) [][]Pair {
	var steps [][]Pair
	for i := range ranks {
		for j := i + 1; j < len(ranks); j++ {
			steps = append(steps, []Pair{orient(ranks[i], ranks[j])})
		}
	}
	return steps
}

// SerialPlan tests every pair of ranks one at a time (LGate's default, seed
// 003 Sect. 3.1.1).
func SerialPlan(ranks []int) Plan {
	r := sortedCopy(ranks)
	return Plan{Phases: []Phase{{Lanes: []Lane{{Members: r, Steps: allPairsSteps(r)}}}}}
}

// TreeFromLevels turns a topology's levels (finest first, each a coarsening
// of the one before; topo.Level) into a group tree restricted to ranks: the
// leaves are the finest level's groups, each coarser group's children are
// the finer groups it contains, and a root joins the coarsest groups when
// there is more than one. Ranks missing from the levels form singleton
// leaves under the root.
func TreeFromLevels(levels []topo.Level, ranks []int) (*dataset.Group, error) {
	want := map[int]bool{}
	for _, r := range ranks {
		want[r] = true
	}
	if len(levels) == 0 {
		return &dataset.Group{Ranks: sortedCopy(ranks)}, nil
	}
	// groups of the current level as trees, keyed by a representative rank
	type node struct {
		g     *dataset.Group
		ranks []int
	}
	var cur []node
	seen := map[int]bool{}
	for gi, grp := range levels[0].Groups {
		var rs []int
		for _, r := range grp {
			if want[r] {
				if seen[r] {
					return nil, fmt.Errorf("level %q group %d: rank %d appears twice", levels[0].Name, gi, r)
				}
				seen[r] = true
				rs = append(rs, r)
			}
		}
		if len(rs) > 0 {
			sort.Ints(rs)
			cur = append(cur, node{&dataset.Group{Ranks: rs}, rs})
		}
	}
	for _, r := range sortedCopy(ranks) {
		if !seen[r] {
			cur = append(cur, node{&dataset.Group{Ranks: []int{r}}, []int{r}})
		}
	}
	for _, lv := range levels[1:] {
		owner := map[int]int{}
		for gi, grp := range lv.Groups {
			for _, r := range grp {
				owner[r] = gi
			}
		}
		byGroup := map[int][]node{}
		var order []int
		var loose []node
		for _, n := range cur {
			gi, ok := owner[n.ranks[0]]
			if !ok {
				loose = append(loose, n)
				continue
			}
			for _, r := range n.ranks {
				if o, ok := owner[r]; !ok || o != gi {
					return nil, fmt.Errorf("level %q does not coarsen the level below: rank %d", lv.Name, r)
				}
			}
			if _, ok := byGroup[gi]; !ok {
				order = append(order, gi)
			}
			byGroup[gi] = append(byGroup[gi], n)
		}
		var next []node
		for _, gi := range order {
			ch := byGroup[gi]
			if len(ch) == 1 {
				next = append(next, ch[0])
				continue
			}
			g := &dataset.Group{}
			var rs []int
			for _, n := range ch {
				g.Children = append(g.Children, n.g)
				rs = append(rs, n.ranks...)
			}
			sort.Ints(rs)
			next = append(next, node{g, rs})
		}
		cur = append(next, loose...)
	}
	if len(cur) == 1 {
		return cur[0].g, nil
	}
	root := &dataset.Group{}
	for _, n := range cur {
		root.Children = append(root.Children, n.g)
	}
	return root, nil
}

// crossSteps schedules every pair (x, y), x in X, y in Y.
func crossSteps(x, y []int, mode dataset.JoinMode) [][]Pair {
	var steps [][]Pair
	if mode == dataset.JoinZip {
		if len(x) > len(y) {
			x, y = y, x
		}
		for s := 0; s < len(y); s++ {
			var st []Pair
			for i := range x {
				st = append(st, orient(x[i], y[(i+s)%len(y)]))
			}
			steps = append(steps, st)
		}
		return steps
	}
	for _, a := range x {
		for _, b := range y {
			steps = append(steps, []Pair{orient(a, b)})
		}
	}
	return steps
}

// roundRobin pairs n items in rounds so that each round's pairs are
// disjoint and every pair occurs once (the circle method).
func roundRobin(n int) [][][2]int {
	if n < 2 {
		return nil
	}
	m := n
	if m%2 == 1 {
		m++ // a bye
	}
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	var rounds [][][2]int
	for r := 0; r < m-1; r++ {
		var round [][2]int
		for i := 0; i < m/2; i++ {
			a, b := idx[i], idx[m-1-i]
			if a < n && b < n {
				round = append(round, [2]int{min(a, b), max(a, b)})
			}
		}
		rounds = append(rounds, round)
		// rotate all but the first
		last := idx[m-1]
		copy(idx[2:], idx[1:m-1])
		idx[1] = last
	}
	return rounds
}

// HierarchicalPlan is LGate's run_tests (seed 003 Fig. 3.2-3.3) on a group
// tree: every leaf tests its own pairs one at a time, all leaves in
// parallel; then, bottom-up, the children of each inner node are joined
// pairwise in round-robin rounds (disjoint joins in parallel, joins of
// different subtrees in parallel), until the root's children are joined.
func HierarchicalPlan(root *dataset.Group, mode dataset.JoinMode) Plan {
	return Plan{Phases: buildPhases(root, mode)}
}

func buildPhases(g *dataset.Group, mode dataset.JoinMode) []Phase {
	if len(g.Children) == 0 {
		r := sortedCopy(g.Ranks)
		if len(r) < 2 {
			return nil
		}
		return []Phase{{Lanes: []Lane{{Members: r, Steps: allPairsSteps(r)}}}}
	}
	var phases []Phase
	ranks := make([][]int, len(g.Children))
	for i, c := range g.Children {
		ranks[i] = c.AllRanks()
		for k, ph := range buildPhases(c, mode) {
			if k == len(phases) {
				phases = append(phases, Phase{})
			}
			phases[k].Lanes = append(phases[k].Lanes, ph.Lanes...)
		}
	}
	for _, round := range roundRobin(len(g.Children)) {
		var ph Phase
		for _, pr := range round {
			x, y := ranks[pr[0]], ranks[pr[1]]
			if len(x) == 0 || len(y) == 0 {
				continue
			}
			mem := sortedCopy(append(slices.Clone(x), y...))
			ph.Lanes = append(ph.Lanes, Lane{Members: mem, Steps: crossSteps(x, y, mode)})
		}
		if len(ph.Lanes) > 0 {
			phases = append(phases, ph)
		}
	}
	return phases
}

// FastTree is the "fast" mode: from every leaf group it keeps a random
// fraction of the ranks (at least two, or all when fewer), chosen with a
// PCG generator seeded with seed, so every rank derives the same subset.
func FastTree(root *dataset.Group, fraction float64, seed uint64) (*dataset.Group, error) {
	if !(fraction > 0 && fraction <= 1) {
		return nil, fmt.Errorf("fast fraction %g: want 0 < f <= 1", fraction)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var walk func(g *dataset.Group) *dataset.Group
	walk = func(g *dataset.Group) *dataset.Group {
		if len(g.Children) == 0 {
			r := sortedCopy(g.Ranks)
			k := max(min(2, len(r)), int(math.Ceil(fraction*float64(len(r)))))
			rng.Shuffle(len(r), func(i, j int) { r[i], r[j] = r[j], r[i] })
			keep := sortedCopy(r[:k])
			return &dataset.Group{Ranks: keep}
		}
		n := &dataset.Group{}
		for _, c := range g.Children {
			n.Children = append(n.Children, walk(c))
		}
		return n
	}
	return walk(root), nil
}

// RepresentativePlan is seed 004 Sect. 5.2's efficient acquisition: one
// measurement inside each group (its first two ranks) and one between every
// two groups (their first ranks), assuming symmetric links: C(C+1)/2
// measurements for C groups of at least two ranks. With parallel, the
// intra-group pairs run at the same time and the inter-group pairs in
// round-robin rounds of disjoint group pairs; otherwise one at a time.
func RepresentativePlan(groups [][]int, parallel bool) (Plan, error) {
	return RepresentativePlanLevels(groups, nil, parallel)
}

// RepresentativePlanLevels bounds RepresentativePlan by coarser levels
// (partitions nested above groups, finest first): groups are taken to
// talk alike when they are split at the same place of the hierarchy, so
// that one pair stands for every group pair below two sibling groups of a
// coarser level. It measures one pair inside each group, and for every
// group of every level (and the whole, above the last level) one pair
// between every two of its children, from their first finest groups'
// first ranks (a matching of them above MaxAllSiblings children): C + sum
// over the groups of k(k-1)/2 for k children, where
// C(C+1)/2 grows with the square of the finest groups (sockets of 4,096
// ranks: 131,000 pairs against 2,200 for 2-socket hosts, 8 hosts per
// switch, 32 switches). Without levels it is RepresentativePlan.
// Representatives tells which measured pair stands for a group pair.
func RepresentativePlanLevels(groups [][]int, levels [][][]int, parallel bool) (Plan, error) {
	h, err := newRepHierarchy(groups, levels)
	if err != nil {
		return Plan{}, err
	}
	gs := h.groups
	var intra []Pair
	for _, g := range gs {
		if len(g) >= 2 {
			intra = append(intra, orient(g[0], g[1]))
		}
	}
	var inter [][]Pair // rounds: those of the groups of one level run together
	for k := 1; k < len(h.children); k++ {
		var rounds [][]Pair
		for _, ch := range h.children[k] {
			for r, round := range h.siblingRounds(len(ch)) {
				if r == len(rounds) {
					rounds = append(rounds, nil)
				}
				for _, pr := range round {
					rounds[r] = append(rounds[r], orient(gs[h.first[k-1][ch[pr[0]]]][0], gs[h.first[k-1][ch[pr[1]]]][0]))
				}
			}
		}
		inter = append(inter, rounds...)
	}
	if !parallel {
		var steps [][]Pair
		mem := map[int]bool{}
		for _, p := range intra {
			steps = append(steps, []Pair{p})
			mem[p.A], mem[p.B] = true, true
		}
		for _, r := range inter {
			for _, p := range r {
				steps = append(steps, []Pair{p})
				mem[p.A], mem[p.B] = true, true
			}
		}
		var members []int
		for r := range mem {
			members = append(members, r)
		}
		sort.Ints(members)
		return Plan{Phases: []Phase{{Lanes: []Lane{{Members: members, Steps: steps}}}}}, nil
	}
	var phases []Phase
	add := func(pairs []Pair) {
		for len(pairs) > 0 {
			k := len(pairs)
			if h.capped {
				k = min(k, MaxPairsAtOnce)
			}
			var ph Phase
			for _, p := range pairs[:k] {
				ph.Lanes = append(ph.Lanes, Lane{Members: []int{p.A, p.B}, Steps: [][]Pair{{p}}})
			}
			phases = append(phases, ph)
			pairs = pairs[k:]
		}
	}
	add(intra)
	for _, r := range inter {
		add(r)
	}
	return Plan{Phases: phases}, nil
}

// MaxPairsAtOnce bounds the pairs of a representative plan with levels
// that measure at the same time: each holds up to two buffers of the
// largest size (1 MiB at the standard level), and the 1,006 groups that
// the 4,096-rank inference found took 6 GB in one phase.
const MaxPairsAtOnce = 256

// repHierarchy is the hierarchy of a representative plan: level 0 the
// finest groups, then the coarser levels, then the whole when the last
// level has several groups.
type repHierarchy struct {
	groups [][]int // the finest groups, each sorted
	// up[k][i] is the group of level k+1 holding group i of level k;
	// children[k][j] the groups of level k-1 in group j of level k
	// (ascending), and first[k][j] the first finest group in group j of
	// level k.
	up       [][]int
	children [][][]int
	first    [][]int
	// pos[k][j] is group j of level k's place among its parent's children.
	pos [][]int
	// capped: levels were given, and MaxAllSiblings applies.
	capped bool
}

func newRepHierarchy(groups [][]int, levels [][][]int) (*repHierarchy, error) {
	h := &repHierarchy{capped: len(levels) > 0}
	for i, g := range groups {
		if len(g) == 0 {
			return nil, fmt.Errorf("representative plan: group %d is empty", i)
		}
		h.groups = append(h.groups, sortedCopy(g))
	}
	// of[r] is the group of rank r at the level being nested.
	cur := make([]int, len(h.groups))
	for i := range cur {
		cur[i] = i
	}
	h.first = [][]int{cur}
	h.children = [][][]int{nil}
	size := len(h.groups)
	for li := 0; li <= len(levels); li++ {
		var up []int
		var count int
		if li < len(levels) {
			of := map[int]int{}
			for gi, g := range levels[li] {
				for _, r := range g {
					if _, dup := of[r]; dup {
						return nil, fmt.Errorf("representative plan: rank %d twice in level %d", r, li+1)
					}
					of[r] = gi
				}
			}
			// A group of the level below lies in one group of this level.
			up = make([]int, size)
			for j := 0; j < size; j++ {
				up[j] = -1
			}
			for fi, g := range h.groups {
				j := fi
				for k := 0; k < li; k++ {
					j = h.up[k][j]
				}
				for _, r := range g {
					u, ok := of[r]
					if !ok {
						return nil, fmt.Errorf("representative plan: rank %d of group %d is in no group of level %d", r, fi, li+1)
					}
					if up[j] >= 0 && up[j] != u {
						return nil, fmt.Errorf("representative plan: level %d splits a group of the level below (rank %d)", li+1, r)
					}
					up[j] = u
				}
			}
			count = len(levels[li])
		} else {
			// The whole, above the last level.
			up = make([]int, size)
			count = 1
		}
		children := make([][]int, count)
		first := make([]int, count)
		for j := range first {
			first[j] = -1
		}
		pos := make([]int, len(up))
		for j, u := range up {
			pos[j] = len(children[u])
			children[u] = append(children[u], j)
			if fg := h.first[len(h.first)-1][j]; first[u] < 0 || fg < first[u] {
				first[u] = fg
			}
		}
		// Drop the groups of this level with no finest group (ranks not
		// in the plan) by renumbering.
		renum := make([]int, count)
		var keptChildren [][]int
		var keptFirst []int
		for u := range children {
			renum[u] = -1
			if len(children[u]) > 0 {
				renum[u] = len(keptChildren)
				keptChildren = append(keptChildren, children[u])
				keptFirst = append(keptFirst, first[u])
			}
		}
		for j := range up {
			up[j] = renum[up[j]]
		}
		h.up = append(h.up, up)
		h.pos = append(h.pos, pos)
		h.children = append(h.children, keptChildren)
		h.first = append(h.first, keptFirst)
		size = len(keptChildren)
		if size == 1 {
			break // the whole: nothing above it to split
		}
	}
	return h, nil
}

// pathUp lists the groups holding finest group g, level by level.
func (h *repHierarchy) pathUp(g int) []int {
	p := []int{g}
	for k := range h.up {
		g = h.up[k][g]
		p = append(p, g)
	}
	return p
}

// Representatives returns, for a representative plan over groups and
// levels, which finest groups' measured pair stands for each pair of
// finest groups: for groups a != b it is the pair of first finest groups
// of the two sibling groups that split a from b; a group stands for
// itself (its intra-group pair).
func Representatives(groups [][]int, levels [][][]int) (func(a, b int) (int, int), error) {
	h, err := newRepHierarchy(groups, levels)
	if err != nil {
		return nil, err
	}
	return func(a, b int) (int, int) {
		if a == b || a < 0 || b < 0 || a >= len(h.groups) || b >= len(h.groups) {
			return a, b
		}
		pa, pb := h.pathUp(a), h.pathUp(b)
		k := 0
		for pa[k+1] != pb[k+1] {
			k++
		}
		sib := h.children[k+1][pa[k+1]]
		if !h.capped || len(sib) <= MaxAllSiblings {
			return h.first[k][pa[k]], h.first[k][pb[k]]
		}
		// Many siblings: b's side stands with its partner in the matching.
		j := h.pos[k][pb[k]]
		partner := j ^ 1
		if partner >= len(sib) {
			partner = 0
		}
		return h.first[k][sib[partner]], h.first[k][pb[k]]
	}, nil
}

// MaxAllSiblings bounds the sibling groups of one group that the
// representative plan with levels measures pairwise (k(k-1)/2 pairs;
// without levels every group pair is measured, as seed 004 says). Above it the
// siblings are taken to talk alike (the levels found nothing between
// them) and a matching measures k/2 pairs, in rounds of at most
// siblingRound, plus one for an odd sibling, so that every sibling is
// measured once: a level that noise left flat with hundreds of groups
// (4,096 blind ranks gave one of 685) would otherwise cost as much as
// every group pair, and so would the hosts of a leaf switch, one class of
// host pairs (the 32 hosts of each of three-level-4096's leaves took
// 1,984 of its 2,383 PLogP pairs when the bound was 32: the phase grew
// 11-fold from 1,024 ranks, whose leaves hold 8). Seed 004's six
// subnets, and a cluster's switches under its core, stay below it.
const MaxAllSiblings = 16

// siblingRound is how many pairs of a matching measure at once.
const siblingRound = 16

// siblingRounds lists the pairs (by position) measured among k siblings,
// in rounds of disjoint pairs.
func (h *repHierarchy) siblingRounds(k int) [][][2]int {
	if !h.capped || k <= MaxAllSiblings {
		return roundRobin(k)
	}
	// At most siblingRound pairs at once, as in the rounds of the
	// pairwise case: hundreds of pairs crossing one switch together
	// disturb each other's PLogP, and cost the simulator's flow solver
	// the square of their number per round.
	var rounds [][][2]int
	for i := 0; i+1 < k; i += 2 {
		if len(rounds) == 0 || len(rounds[len(rounds)-1]) == siblingRound {
			rounds = append(rounds, nil)
		}
		rounds[len(rounds)-1] = append(rounds[len(rounds)-1], [2]int{i, i + 1})
	}
	if k%2 == 1 {
		rounds = append(rounds, [][2]int{{0, k - 1}})
	}
	return rounds
}
