package probe

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"netaware/dataset"
	"netaware/topo"
)

func pairSet(t *testing.T, p Plan, size int) map[Pair]int {
	t.Helper()
	if err := p.Validate(size); err != nil {
		t.Fatal(err)
	}
	m := map[Pair]int{}
	for _, pr := range p.Pairs() {
		m[pr]++
	}
	return m
}

func checkAllPairsOnce(t *testing.T, p Plan, ranks []int, size int) {
	t.Helper()
	m := pairSet(t, p, size)
	want := len(ranks) * (len(ranks) - 1) / 2
	if len(m) != want {
		t.Errorf("%d distinct pairs, want %d", len(m), want)
	}
	for pr, n := range m {
		if n != 1 || pr.A >= pr.B {
			t.Errorf("pair %v scheduled %d times", pr, n)
		}
	}
}

func TestSerialPlanOrder(t *testing.T) {
	p := SerialPlan([]int{2, 0, 1})
	got := p.Pairs()
	want := []Pair{{0, 1}, {0, 2}, {1, 2}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("pair %d: %v, want %v", i, got[i], want[i])
		}
	}
	if p.Steps() != 3 {
		t.Errorf("steps %d", p.Steps())
	}
}

func TestRoundRobinDisjointComplete(t *testing.T) {
	for n := 2; n <= 9; n++ {
		seen := map[[2]int]bool{}
		rounds := roundRobin(n)
		wantRounds := n - 1
		if n%2 == 1 {
			wantRounds = n
		}
		if len(rounds) != wantRounds {
			t.Errorf("n=%d: %d rounds, want %d", n, len(rounds), wantRounds)
		}
		for _, r := range rounds {
			used := map[int]bool{}
			for _, pr := range r {
				if used[pr[0]] || used[pr[1]] || seen[pr] {
					t.Errorf("n=%d: round %v reuses a group or pair", n, r)
				}
				used[pr[0]], used[pr[1]], seen[pr] = true, true, true
			}
		}
		if len(seen) != n*(n-1)/2 {
			t.Errorf("n=%d: %d pairs", n, len(seen))
		}
	}
}

// Seed 003 Fig. 3.4: four groups of eight ranks joined as a binary tree.
// Leaves run in parallel (28 steps), then the two joins of level 1 in
// parallel (64 steps each, one pair at a time), then the root join (256).
func TestLGateFig34TreePlan(t *testing.T) {
	rng := func(a, b int) []int {
		var r []int
		for i := a; i <= b; i++ {
			r = append(r, i)
		}
		return r
	}
	tree := &dataset.Group{Children: []*dataset.Group{
		{Children: []*dataset.Group{{Ranks: rng(0, 7)}, {Ranks: rng(8, 15)}}},
		{Children: []*dataset.Group{{Ranks: rng(16, 23)}, {Ranks: rng(24, 31)}}},
	}}
	p := HierarchicalPlan(tree, dataset.JoinOne)
	checkAllPairsOnce(t, p, rng(0, 31), 32)
	if len(p.Phases) != 3 || len(p.Phases[0].Lanes) != 4 || len(p.Phases[1].Lanes) != 2 || len(p.Phases[2].Lanes) != 1 {
		t.Fatalf("phases/lanes: %d", len(p.Phases))
	}
	if got := p.Steps(); got != 28+64+256 {
		t.Errorf("steps %d, want 348", got)
	}
	z := HierarchicalPlan(tree, dataset.JoinZip)
	checkAllPairsOnce(t, z, rng(0, 31), 32)
	// zip: a join of two groups of n ranks takes n steps of n pairs
	if got := z.Steps(); got != 28+8+16 {
		t.Errorf("zip steps %d, want 52", got)
	}
}

func TestCrossStepsZipUneven(t *testing.T) {
	steps := crossSteps([]int{0, 1}, []int{2, 3, 4}, dataset.JoinZip)
	if len(steps) != 3 {
		t.Fatalf("%d steps", len(steps))
	}
	seen := map[Pair]bool{}
	for _, st := range steps {
		if len(st) != 2 || st[0].A == st[1].A || st[0].B == st[1].B {
			t.Errorf("step %v", st)
		}
		for _, p := range st {
			seen[p] = true
		}
	}
	if len(seen) != 6 {
		t.Errorf("%d cross pairs, want 6", len(seen))
	}
}

func TestTreeFromLevels(t *testing.T) {
	levels := []topo.Level{
		{Name: "socket", Groups: [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
		{Name: "host", Groups: [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}},
	}
	tree, err := TreeFromLevels(levels, []int{0, 1, 2, 3, 4, 5, 6, 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Children) != 2 || len(tree.Children[0].Children) != 2 || len(tree.Leaves()) != 4 {
		t.Fatalf("tree %+v", tree)
	}
	p := HierarchicalPlan(tree, dataset.JoinOne)
	checkAllPairsOnce(t, p, []int{0, 1, 2, 3, 4, 5, 6, 7}, 8)
	// 1 step per leaf, 4 per socket join, 16 for the host join
	if p.Steps() != 1+4+16 {
		t.Errorf("steps %d", p.Steps())
	}
	// restricted to a subset, a missing rank leaves its socket a singleton
	sub, err := TreeFromLevels(levels, []int{0, 2, 3, 5})
	if err != nil {
		t.Fatal(err)
	}
	checkAllPairsOnce(t, HierarchicalPlan(sub, dataset.JoinOne), []int{0, 2, 3, 5}, 8)
	bad := []topo.Level{levels[0], {Name: "x", Groups: [][]int{{0, 2}, {1, 3, 4, 5, 6, 7}}}}
	if _, err := TreeFromLevels(bad, []int{0, 1, 2, 3, 4, 5, 6, 7}); err == nil {
		t.Error("a level that does not coarsen the one below was accepted")
	}
}

func TestFastTreeSeeded(t *testing.T) {
	tree := &dataset.Group{Children: []*dataset.Group{{Ranks: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}, {Ranks: []int{10, 11, 12}}}}
	a, err := FastTree(tree, 0.3, 42)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FastTree(tree, 0.3, 42)
	la, lb := a.Leaves(), b.Leaves()
	if len(la[0].Ranks) != 3 || len(la[1].Ranks) != 2 {
		t.Errorf("kept %v %v, want 3 and 2 ranks", la[0].Ranks, la[1].Ranks)
	}
	for i := range la {
		for j := range la[i].Ranks {
			if la[i].Ranks[j] != lb[i].Ranks[j] {
				t.Error("same seed, different subsets")
			}
		}
	}
	if _, err := FastTree(tree, 0, 1); err == nil {
		t.Error("fraction 0 accepted")
	}
}

// Seed 004 Sect. 5.2: one measurement per subnet and one per pair of
// subnets, C(C+1)/2 in all: 21 for its six subnets.
func TestEstefanelRepresentativePairs(t *testing.T) {
	groups := [][]int{{0, 1, 2}, {3, 4}, {5, 6, 7, 8}, {9, 10}, {11, 12, 13}, {14, 15}}
	for _, par := range []bool{false, true} {
		p, err := RepresentativePlan(groups, par)
		if err != nil {
			t.Fatal(err)
		}
		m := pairSet(t, p, 16)
		if len(p.Pairs()) != 21 || len(m) != 21 {
			t.Errorf("parallel=%v: %d measurements, want 21", par, len(p.Pairs()))
		}
		for _, g := range groups {
			if m[Pair{g[0], g[1]}] != 1 {
				t.Errorf("group %v: no intra measurement", g)
			}
		}
		if par && len(p.Phases) != 1+5 {
			t.Errorf("parallel: %d phases, want 6 (intra, then 5 rounds)", len(p.Phases))
		}
	}
}

func TestPlanValidateRejects(t *testing.T) {
	bad := []Plan{
		{Phases: []Phase{{Lanes: []Lane{{Members: []int{0, 1}}, {Members: []int{1, 2}}}}}},
		{Phases: []Phase{{Lanes: []Lane{{Members: []int{0, 1}, Steps: [][]Pair{{{0, 2}}}}}}}},
		{Phases: []Phase{{Lanes: []Lane{{Members: []int{0, 1, 2}, Steps: [][]Pair{{{0, 1}, {1, 2}}}}}}}},
		{Phases: []Phase{{Lanes: []Lane{{Members: []int{0, 9}}}}}},
	}
	for i, p := range bad {
		if err := p.Validate(4); err == nil {
			t.Errorf("plan %d accepted", i)
		}
	}
}

// The fast mode measures every pair of a seeded sample of each group.
func TestFastSchedulePlan(t *testing.T) {
	tree := &dataset.Group{Children: []*dataset.Group{{Ranks: []int{0, 1, 2, 3, 4, 5, 6, 7}}, {Ranks: []int{8, 9, 10, 11, 12, 13, 14, 15}}}}
	spec := dataset.ScheduleSpec{Mode: "fast", Ranks: tree.AllRanks(), Tree: tree, Fraction: 0.5, Seed: 3}
	p, err := PlanOf(spec)
	if err != nil {
		t.Fatal(err)
	}
	ft, _ := FastTree(tree, 0.5, 3)
	kept := ft.AllRanks()
	if len(kept) != 8 {
		t.Fatalf("kept %v, want 4 of each group", kept)
	}
	checkAllPairsOnce(t, p, kept, 16)
	if _, err := PlanOf(dataset.ScheduleSpec{Mode: "bogus"}); err == nil {
		t.Error("unknown mode accepted")
	}
}

// Two switches of two hosts of two sockets of two ranks: one pair inside
// each socket (8), one between the sockets of each host (4), one between
// the hosts of each switch (2) and one between the switches (1): 15
// measurements where every socket pair would take 36.
func TestRepresentativePlanLevelsByHand(t *testing.T) {
	var sockets [][]int
	for s := 0; s < 8; s++ {
		sockets = append(sockets, []int{2 * s, 2*s + 1})
	}
	hosts := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}
	switches := [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}}
	all := [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}
	levels := [][][]int{hosts, switches, all}
	want := []Pair{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15},
		{0, 2}, {4, 6}, {8, 10}, {12, 14}, {0, 4}, {8, 12}, {0, 8}}
	for _, par := range []bool{false, true} {
		for _, lv := range [][][][]int{levels, levels[:2]} { // "all" implied
			p, err := RepresentativePlanLevels(sockets, lv, par)
			if err != nil {
				t.Fatal(err)
			}
			m := pairSet(t, p, 16)
			if len(p.Pairs()) != len(want) || len(m) != len(want) {
				t.Errorf("parallel=%v, %d levels: %d measurements, want %d", par, len(lv), len(p.Pairs()), len(want))
			}
			for _, w := range want {
				if m[w] != 1 {
					t.Errorf("parallel=%v, %d levels: pair %v not measured once", par, len(lv), w)
				}
			}
		}
	}
	rep, err := Representatives(sockets, levels)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ a, b, ra, rb int }{
		{1, 3, 0, 2}, // sockets of hosts 0 and 1: the hosts' first sockets
		{3, 1, 2, 0},
		{1, 0, 1, 0}, // the two sockets of host 0: themselves
		{3, 5, 0, 4}, // across the switches: the switches' first sockets
		{7, 6, 7, 6},
		{2, 2, 2, 2},
	} {
		if ra, rb := rep(c.a, c.b); ra != c.ra || rb != c.rb {
			t.Errorf("sockets %d-%d stand as %d-%d, want %d-%d", c.a, c.b, ra, rb, c.ra, c.rb)
		}
	}
	if _, err := RepresentativePlanLevels(sockets, [][][]int{{{0, 1, 2}, {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}}, true); err == nil {
		t.Error("a level splitting a socket was accepted")
	}
	if _, err := RepresentativePlanLevels(sockets, [][][]int{{{0, 1, 2, 3}}}, true); err == nil {
		t.Error("a level leaving ranks of a group out was accepted")
	}
}

// On random nested hierarchies, the plan measures one pair per group
// (of two ranks or more) and one per two sibling groups of every level,
// and the pair standing for any two groups was measured and is split at
// the same level as they are.
func TestRepresentativePlanLevelsProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 200; trial++ {
		// Build bottom-up: finest groups of 1-3 ranks, then levels that
		// merge runs of 1-4 groups of the level below.
		n := 0
		var groups [][]int
		for c := 1 + rng.IntN(12); c > 0; c-- {
			k := 1 + rng.IntN(3)
			var g []int
			for i := 0; i < k; i++ {
				g = append(g, n)
				n++
			}
			groups = append(groups, g)
		}
		var levels [][][]int
		below := groups
		for len(below) > 1 && rng.IntN(4) > 0 {
			var lv [][]int
			for i := 0; i < len(below); {
				k := 1 + rng.IntN(4)
				var g []int
				for ; k > 0 && i < len(below); k-- {
					g = append(g, below[i]...)
					i++
				}
				lv = append(lv, g)
			}
			levels = append(levels, lv)
			below = lv
		}
		// A pair count worked level by level.
		want := 0
		for _, g := range groups {
			if len(g) >= 2 {
				want++
			}
		}
		chain := append([][][]int{groups}, levels...)
		if len(chain[len(chain)-1]) > 1 {
			all := make([]int, n)
			for i := range all {
				all[i] = i
			}
			chain = append(chain, [][]int{all})
		}
		for k := 1; k < len(chain); k++ {
			for _, parent := range chain[k] {
				kids := 0
				for _, c := range chain[k-1] {
					if slices.Contains(parent, c[0]) {
						kids++
					}
				}
				want += kids * (kids - 1) / 2
			}
		}
		p, err := RepresentativePlanLevels(groups, levels, trial%2 == 0)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		m := pairSet(t, p, n)
		if len(p.Pairs()) != want || len(m) != want {
			t.Fatalf("trial %d: %d measurements (%d distinct), want %d", trial, len(p.Pairs()), len(m), want)
		}
		rep, err := Representatives(groups, levels)
		if err != nil {
			t.Fatal(err)
		}
		split := func(a, b int) int { // lowest chain level holding both
			for k := 1; k < len(chain); k++ {
				for _, g := range chain[k] {
					if slices.Contains(g, groups[a][0]) && slices.Contains(g, groups[b][0]) {
						return k
					}
				}
			}
			return len(chain)
		}
		for a := range groups {
			for b := range groups {
				ra, rb := rep(a, b)
				if a == b {
					if ra != a || rb != b {
						t.Fatalf("trial %d: group %d stands as %d-%d", trial, a, ra, rb)
					}
					continue
				}
				if m[orient(groups[ra][0], groups[rb][0])] != 1 {
					t.Fatalf("trial %d: groups %d-%d stand as %d-%d, not measured", trial, a, b, ra, rb)
				}
				if split(a, b) != split(ra, rb) || split(a, ra) >= split(a, b) && a != ra || split(b, rb) >= split(a, b) && b != rb {
					t.Fatalf("trial %d: groups %d-%d stand as %d-%d, split elsewhere", trial, a, b, ra, rb)
				}
			}
		}
	}
}

// A level that leaves 41 groups side by side under the whole: with levels,
// a matching of them (20 pairs, at most 16 at once, and one for the odd
// group) instead of 820 pairs, and every group pair stands as a measured pair holding b's
// group; without levels, seed 004's every pair.
func TestRepresentativePlanManySiblings(t *testing.T) {
	var groups [][]int
	var all []int
	for g := 0; g < 41; g++ {
		groups = append(groups, []int{2 * g, 2*g + 1})
		all = append(all, 2*g, 2*g+1)
	}
	p, err := RepresentativePlanLevels(groups, [][][]int{{all}}, true)
	if err != nil {
		t.Fatal(err)
	}
	m := pairSet(t, p, 82)
	if len(m) != 41+20+1 || len(p.Phases) != 4 || len(p.Phases[1].Lanes) != 16 {
		t.Fatalf("%d pairs in %d phases, want 62 in 4 (intra, the matching in rounds of 16 and 4, odd)", len(m), len(p.Phases))
	}
	rep, err := Representatives(groups, [][][]int{{all}})
	if err != nil {
		t.Fatal(err)
	}
	for a := range groups {
		for b := range groups {
			if a == b {
				continue
			}
			ra, rb := rep(a, b)
			if rb != b || ra == rb || m[orient(groups[ra][0], groups[rb][0])] != 1 {
				t.Fatalf("groups %d-%d stand as %d-%d", a, b, ra, rb)
			}
		}
	}
	if full, _ := RepresentativePlan(groups, true); len(full.Pairs()) != 41*42/2 {
		t.Errorf("without levels: %d pairs, want 861", len(full.Pairs()))
	}
}

// With levels, no phase holds more than MaxPairsAtOnce pairs: 600 groups
// of two under one level give their 600 intra-group pairs in phases of
// 256, 256 and 88.
func TestRepresentativePlanBoundsPairsAtOnce(t *testing.T) {
	var groups [][]int
	var all []int
	for g := 0; g < 600; g++ {
		groups = append(groups, []int{2 * g, 2*g + 1})
		all = append(all, 2*g, 2*g+1)
	}
	p, err := RepresentativePlanLevels(groups, [][][]int{{all}}, true)
	if err != nil {
		t.Fatal(err)
	}
	pairSet(t, p, 1200)
	if len(p.Phases) < 3 || len(p.Phases[0].Lanes) != 256 || len(p.Phases[1].Lanes) != 256 || len(p.Phases[2].Lanes) != 88 {
		t.Fatalf("first phases of %d, %d, %d pairs", len(p.Phases[0].Lanes), len(p.Phases[1].Lanes), len(p.Phases[2].Lanes))
	}
	for i, ph := range p.Phases {
		if len(ph.Lanes) > MaxPairsAtOnce {
			t.Fatalf("phase %d has %d pairs", i, len(ph.Lanes))
		}
	}
	if full, _ := RepresentativePlan(groups[:300], true); len(full.Phases[0].Lanes) != 300 {
		t.Errorf("without levels the intra phase has %d pairs, want all 300", len(full.Phases[0].Lanes))
	}
}

// NewSchedule restricts the groups to the ranks measured and refuses what
// cannot plan.
func TestNewSchedule(t *testing.T) {
	levels := []topo.Level{{Name: "host", Groups: [][]int{{0, 1}, {2, 3}, {4, 5}}}, {Name: "all", Groups: [][]int{{0, 1, 2, 3, 4, 5}}}}
	spec, err := NewSchedule(ScheduleRequest{Mode: "representative", Ranks: []int{1, 4, 5}, Levels: levels, Parallel: true})
	if err != nil || !reflect.DeepEqual(spec.Groups, [][]int{{1}, {4, 5}}) || !spec.Parallel || spec.Mode != "representative" {
		t.Errorf("representative: %+v, %v", spec, err)
	}
	spec, err = NewSchedule(ScheduleRequest{Mode: "fast", Ranks: []int{0, 1, 2, 3}, Levels: levels, Join: "zip", Fraction: 0.5, Seed: 3})
	if err != nil || spec.Tree == nil || spec.Join != dataset.JoinZip || spec.Fraction != 0.5 || spec.Seed != 3 {
		t.Errorf("fast: %+v, %v", spec, err)
	}
	if got := spec.Tree.AllRanks(); !reflect.DeepEqual(got, []int{0, 1, 2, 3}) {
		t.Errorf("fast tree over %v", got)
	}
	for _, r := range []ScheduleRequest{
		{Mode: "hierarchical", Ranks: []int{0, 1}},
		{Mode: "representative", Ranks: []int{0, 1}},
		{Mode: "hierarchical", Ranks: []int{0, 1}, Levels: levels, Join: "sideways"},
		{Mode: "ring", Ranks: []int{0, 1}},
	} {
		if _, err := NewSchedule(r); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
}
