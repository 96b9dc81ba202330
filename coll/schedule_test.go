package coll

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"netaware/topo"
)

func mustBuild(t *testing.T) func(*Schedule, error) *Schedule {
	return func(s *Schedule, err error) *Schedule {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		return s
	}
}

func wantChildren(t *testing.T, s *Schedule, want map[int][]int) {
	t.Helper()
	for r := range s.Size {
		w := want[r]
		if w == nil {
			w = []int{}
		}
		if !slices.Equal(s.Children[r], w) {
			t.Errorf("%s P=%d root %d: children of %d = %v, want %v", s.Name, s.Size, s.Root, r, s.Children[r], w)
		}
	}
}

func wantParents(t *testing.T, s *Schedule, want []int) {
	t.Helper()
	if !slices.Equal(s.Parent, want) {
		t.Errorf("%s P=%d root %d: parents %v, want %v", s.Name, s.Size, s.Root, s.Parent, want)
	}
}

// Binomial tree for P=6, root 2, worked by hand from Open MPI's build_bmtree
// rule (virtual rank v = (r-2) mod 6; children v|2^j above v's top bit):
// v0 -> v1, v2, v4 = ranks 3, 4, 0; v1 -> v3, v5 = ranks 5, 1.
func TestBinomialP6Root2(t *testing.T) {
	s := mustBuild(t)(Binomial(6, 2))
	wantChildren(t, s, map[int][]int{2: {3, 4, 0}, 3: {5, 1}})
	wantParents(t, s, []int{2, 3, -1, 2, 2, 3})
}

// MPICH's binomial bcast on 8 ranks: relative rank v receives from v minus
// its lowest set bit and sends to v+4, v+2, v+1 below that bit; with root 3
// every rank shifts by 3 mod 8. Open MPI's tree of the same size differs:
// there the root's first child, 1, leads 1 3 5 7.
func TestBinomialInOrderP8(t *testing.T) {
	s := mustBuild(t)(BinomialInOrder(8, 0))
	wantChildren(t, s, map[int][]int{0: {4, 2, 1}, 4: {6, 5}, 2: {3}, 6: {7}})
	wantParents(t, s, []int{-1, 0, 0, 2, 0, 4, 4, 6})
	s3 := mustBuild(t)(BinomialInOrder(8, 3))
	wantChildren(t, s3, map[int][]int{3: {7, 5, 4}, 7: {1, 0}, 5: {6}, 1: {2}})
	o := mustBuild(t)(Binomial(8, 0))
	wantChildren(t, o, map[int][]int{0: {1, 2, 4}, 1: {3, 5}, 3: {7}, 2: {6}})
	// 6 ranks (not a power of two): 0 -> 4 2 1, 4 -> 5, 2 -> 3.
	s6 := mustBuild(t)(BinomialInOrder(6, 0))
	wantChildren(t, s6, map[int][]int{0: {4, 2, 1}, 4: {5}, 2: {3}})
}

// Open MPI's kmtree comment: comm_size=10, radix=4: 0 -> 4 8 1 2 3,
// 4 -> 5 6 7, 8 -> 9.
func TestKNomialRadix4P10(t *testing.T) {
	s := mustBuild(t)(KNomial(10, 0, 4))
	wantChildren(t, s, map[int][]int{0: {4, 8, 1, 2, 3}, 4: {5, 6, 7}, 8: {9}})
	// Radix 3 from the same comment: 0 -> 9 3 6 1 2, 3 -> 4 5, 6 -> 7 8.
	s3 := mustBuild(t)(KNomial(10, 0, 3))
	wantChildren(t, s3, map[int][]int{0: {9, 3, 6, 1, 2}, 3: {4, 5}, 6: {7, 8}})
	// And with root 7 everything shifts by 7 mod 10.
	s7 := mustBuild(t)(KNomial(10, 7, 4))
	wantChildren(t, s7, map[int][]int{7: {1, 5, 8, 9, 0}, 1: {2, 3, 4}, 5: {6}})
}

// Open MPI's binary tree numbers levels: 0 -> 1 2; 1 -> 3 5; 2 -> 4 6;
// 3 -> 7; 4 -> 8; 5 -> 9 for P=10.
func TestBinaryOMPILevelNumbering(t *testing.T) {
	s := mustBuild(t)(Binary(10, 0))
	wantChildren(t, s, map[int][]int{0: {1, 2}, 1: {3, 5}, 2: {4, 6}, 3: {7}, 4: {8}, 5: {9}})
}

// Split binary: the left subtree (odd virtual ranks) gets the first half,
// the right (even) the second; pairs (1,2), (3,4), ... swap; for even P the
// last virtual rank gets the second half from the root.
func TestSplitBinaryHalves(t *testing.T) {
	s := mustBuild(t)(SplitBinary(10, 0, 0))
	for r := 1; r < 10; r++ {
		want := PartRange{1, 2}
		if r%2 == 1 {
			want = PartRange{0, 1}
		}
		if s.Span[r] != want {
			t.Errorf("rank %d span %v, want %v", r, s.Span[r], want)
		}
	}
	if got := s.StepsOf(0); len(got) != 1 || got[0].Peer != 9 || !got[0].Send || got[0].Parts != (PartRange{1, 2}) {
		t.Errorf("root steps %+v, want one send of the second half to 9", got)
	}
	if got := s.StepsOf(9); len(got) != 1 || got[0].Peer != 0 || got[0].Send {
		t.Errorf("rank 9 steps %+v, want one receive from the root", got)
	}
	for _, pair := range [][2]int{{1, 2}, {3, 4}, {5, 6}, {7, 8}} {
		for i, r := range pair {
			st := s.StepsOf(r)
			other := pair[1-i]
			if len(st) != 2 || st[0].Peer != other || st[1].Peer != other {
				t.Errorf("rank %d steps %+v, want exchange with %d", r, st, other)
			}
		}
	}
	// Odd P: nobody pairs with the root.
	s9 := mustBuild(t)(SplitBinary(9, 4, 0))
	if st := s9.StepsOf(4); len(st) != 0 {
		t.Errorf("P=9: root has steps %+v", st)
	}
	// Halves in bytes: 7 bytes -> 4 + 3.
	if lo, hi := s.spanBytes(7, 1); lo != 0 || hi != 4 {
		t.Errorf("left half of 7 bytes = [%d,%d), want [0,4)", lo, hi)
	}
	if lo, hi := s.spanBytes(7, 2); lo != 4 || hi != 7 {
		t.Errorf("right half of 7 bytes = [%d,%d), want [4,7)", lo, hi)
	}
	// Open MPI falls back to the chain below 2 bytes.
	if s.For(1).Name != "chain" || s.For(2) != s {
		t.Errorf("fallback: For(1)=%s For(2)=%s", s.For(1).Name, s.For(2).Name)
	}
}

func TestKChainAndChain(t *testing.T) {
	s := mustBuild(t)(KChain(10, 0, 3))
	wantChildren(t, s, map[int][]int{0: {1, 4, 7}, 1: {2}, 2: {3}, 4: {5}, 5: {6}, 7: {8}, 8: {9}})
	s9 := mustBuild(t)(KChain(9, 0, 3)) // 8 ranks in chains of 3, 3, 2
	wantChildren(t, s9, map[int][]int{0: {1, 4, 7}, 1: {2}, 2: {3}, 4: {5}, 5: {6}, 7: {8}})
	c := mustBuild(t)(Chain(4, 2))
	wantChildren(t, c, map[int][]int{2: {3}, 3: {0}, 0: {1}})
	l := mustBuild(t)(Linear(4, 1))
	wantChildren(t, l, map[int][]int{1: {0, 2, 3}})
}

func TestScatterAllgatherScatterTree(t *testing.T) {
	s := mustBuild(t)(ScatterAllgather(6, 0))
	wantChildren(t, s, map[int][]int{0: {4, 2, 1}, 2: {3}, 4: {5}})
	want := []PartRange{{0, 6}, {1, 2}, {2, 4}, {3, 4}, {4, 6}, {5, 6}}
	if !slices.Equal(s.Span, want) {
		t.Errorf("spans %v, want %v", s.Span, want)
	}
	// Fewer bytes than ranks: Open MPI switches to the linear broadcast.
	if s.For(5).Name != "linear" || s.For(6) != s {
		t.Errorf("fallback: For(5)=%s For(6)=%s", s.For(5).Name, s.For(6).Name)
	}
}

func TestBinarySwapPairs(t *testing.T) {
	s := mustBuild(t)(BinarySwap(6, 0, 0))
	wantChildren(t, s, map[int][]int{0: {1, 2}, 1: {3, 4}, 2: {5}})
	// left {1,3,4}, right {2,5}: pairs (1,2), (3,5); 4 gets half 2 from the root.
	if st := s.StepsOf(4); len(st) != 1 || st[0].Peer != 0 || st[0].Send || st[0].Parts != (PartRange{1, 2}) {
		t.Errorf("rank 4 steps %+v", st)
	}
	if st := s.StepsOf(3); len(st) != 2 || st[0].Peer != 5 {
		t.Errorf("rank 3 steps %+v", st)
	}
}

// threeGroups: groups {0,1,2}, {3,4,5}, {6,7} at level "node", all at "all".
func threeGroups() *topo.Topology {
	t := &topo.Topology{Version: 1, Size: 8}
	for r := range 8 {
		t.Ranks = append(t.Ranks, topo.Rank{Rank: r})
	}
	t.Levels = []topo.Level{
		{Name: "node", Groups: [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7}}},
		{Name: "all", Groups: [][]int{{0, 1, 2, 3, 4, 5, 6, 7}}},
	}
	return t
}

// MagPIe: the root sends once to every other group's leader, then binomial
// trees inside the groups.
func TestKielmannMagpieOneMessagePerSlowLink(t *testing.T) {
	tp := threeGroups()
	s := mustBuild(t)(Magpie(tp, -1, 8, 4))
	wantChildren(t, s, map[int][]int{4: {0, 6, 3, 5}, 0: {1, 2}, 6: {7}})
	cross := 0
	lab := tp.Levels[0].Labels(8)
	for r, ch := range s.Children {
		for _, c := range ch {
			if lab[r] != lab[c] {
				cross++
			}
		}
	}
	if cross != 2 {
		t.Errorf("%d inter-group messages, want 2 (one per other group)", cross)
	}
}

// Seed 000 Fig. 6.1: the MPICH-G2 hierarchy of 32 ranks gives L2 = {0, 8,
// 16}; L3 = {0..7}, {8..15}, {16, 20, 24, 28}; L4 = {16..19}, ...,
// {28..31}, broadcast level by level.
func TestDichevFig61HierarchicalCommunicators(t *testing.T) {
	tp := &topo.Topology{Version: 1, Size: 32}
	var finest [][]int
	for r := range 32 {
		tp.Ranks = append(tp.Ranks, topo.Rank{Rank: r})
		if r < 16 {
			finest = append(finest, []int{r})
		}
	}
	for g := 16; g < 32; g += 4 {
		finest = append(finest, []int{g, g + 1, g + 2, g + 3})
	}
	seq := func(a, b int) []int {
		var out []int
		for i := a; i < b; i++ {
			out = append(out, i)
		}
		return out
	}
	tp.Levels = []topo.Level{
		{Name: "L4", Groups: finest},
		{Name: "L3", Groups: [][]int{seq(0, 8), seq(8, 16), seq(16, 32)}},
	}
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
	s := mustBuild(t)(Hierarchical(tp, 32, 0, Binomial))
	var got [][][]int
	for _, st := range s.Stages {
		var gs [][]int
		for _, g := range st.Groups {
			gs = append(gs, g.Ranks)
		}
		got = append(got, gs)
	}
	want := [][][]int{
		{{0, 8, 16}},
		{seq(0, 8), seq(8, 16), {16, 20, 24, 28}},
		{seq(16, 20), seq(20, 24), seq(24, 28), seq(28, 32)},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stages %v\nwant %v", got, want)
	}
	for i, st := range s.Stages {
		for _, g := range st.Groups {
			if leader := g.Ranks[g.Sched.Root]; leader != g.Ranks[0] {
				t.Errorf("stage %d group %v rooted at %d, want its first rank", i, g.Ranks, leader)
			}
		}
	}
}

// The DFS order crosses every tree edge twice at most: on two switches
// with ranks {0,2} and {1,3}, the pipeline from 0 visits 2 before leaving.
func TestShiraiDFSPipelineOrder(t *testing.T) {
	tp := synthTopo(8, true)
	order, err := DFSOrder(tp, 8, 3)
	if err != nil {
		t.Fatal(err)
	}
	if order[0] != 3 {
		t.Fatalf("order %v does not start at the root", order)
	}
	// Consecutive ranks in the order that are in different node groups
	// must be as few as the number of node groups minus one.
	lab := tp.Levels[0].Labels(8)
	changes := 0
	for i := 1; i < len(order); i++ {
		if lab[order[i]] != lab[order[i-1]] {
			changes++
		}
	}
	if changes != len(tp.Levels[0].Groups)-1 {
		t.Errorf("order %v changes node group %d times, want %d", order, changes, len(tp.Levels[0].Groups)-1)
	}
	// Without a tree the level order gives the same grouping.
	tp.Tree = nil
	order2, err := DFSOrder(tp, 8, 3)
	if err != nil {
		t.Fatal(err)
	}
	changes = 0
	for i := 1; i < len(order2); i++ {
		if lab[order2[i]] != lab[order2[i-1]] {
			changes++
		}
	}
	if order2[0] != 3 || changes != len(tp.Levels[0].Groups)-1 {
		t.Errorf("level order %v", order2)
	}
}

// symBcast plays a broadcast of n bytes symbolically: it returns, per rank,
// how many times each byte arrived, and fails when a rank sends a byte it
// does not hold yet.
func symBcast(s *Schedule, n int) ([][]int, error) {
	x := s.For(n)
	cnt := make([][]int, x.Size)
	for r := range cnt {
		cnt[r] = make([]int, n)
	}
	has := func(r, b int) bool { return r == x.Root || cnt[r][b] > 0 }
	if x.Kind == KindHier && len(x.Stages) > 0 {
		for si, st := range x.Stages {
			for _, g := range st.Groups {
				leader := g.Ranks[g.Sched.Root]
				for b := range n {
					if !has(leader, b) {
						return nil, fmt.Errorf("stage %d: leader %d lacks byte %d", si, leader, b)
					}
				}
				sub, err := symBcast(g.Sched, n)
				if err != nil {
					return nil, fmt.Errorf("stage %d: %w", si, err)
				}
				for i, r := range g.Ranks {
					for b := range n {
						cnt[r][b] += sub[i][b]
					}
				}
			}
		}
		return cnt, nil
	}
	for _, r := range x.Preorder() {
		p := x.Parent[r]
		if p < 0 {
			continue
		}
		lo, hi := x.spanBytes(n, r)
		for b := lo; b < hi; b++ {
			if !has(p, b) {
				return nil, fmt.Errorf("tree: %d forwards byte %d to %d without holding it", p, b, r)
			}
			cnt[r][b]++
		}
	}
	if x.StepsOf == nil {
		return cnt, nil
	}
	byRound := map[int][]struct {
		from, to int
		st       Step
	}{}
	for r := range x.Size {
		for _, st := range x.StepsOf(r) {
			if st.Send {
				byRound[st.Round] = append(byRound[st.Round], struct {
					from, to int
					st       Step
				}{r, st.Peer, st})
			}
		}
	}
	var rounds []int
	for k := range byRound {
		rounds = append(rounds, k)
	}
	sort.Ints(rounds)
	for _, k := range rounds {
		type rx struct{ to, lo, hi int }
		var apply []rx
		for _, m := range byRound[k] {
			lo, hi := rangeBytes(n, x.NParts, m.st.Parts)
			for b := lo; b < hi; b++ {
				if !has(m.from, b) {
					return nil, fmt.Errorf("round %d: %d sends byte %d to %d without holding it", k, m.from, b, m.to)
				}
			}
			apply = append(apply, rx{m.to, lo, hi})
		}
		for _, a := range apply {
			for b := a.lo; b < a.hi; b++ {
				cnt[a.to][b]++
			}
		}
	}
	return cnt, nil
}

// resends tells whether a broadcast of n bytes with s runs a
// scatter-allgather somewhere.
func resends(s *Schedule, n int) bool {
	x := s.For(n)
	if x.Kind == KindScatterAllgather {
		return true
	}
	for _, st := range x.Stages {
		for _, g := range st.Groups {
			if resends(g.Sched, n) {
				return true
			}
		}
	}
	return false
}

// Property: for every builder, size 1..40 and root, the schedule is a
// valid spanning tree (connected, acyclic), its steps match, and a
// broadcast delivers every byte exactly once to every non-root rank and
// never to the root, for message sizes around P and segment boundaries.
func TestPropertyEveryByteExactlyOnce(t *testing.T) {
	algs := acceptanceAlgorithms()
	algs = algs[:opAlgs(opBcast, algs)] // the broadcast builders
	for p := 1; p <= 40; p++ {
		env := synthEnv(p)
		for root := range p {
			if p > 20 && root%5 != 0 && root != p-1 {
				continue
			}
			for _, a := range algs {
				s, err := a.BuildEnv(p, root, env)
				if err != nil {
					t.Fatalf("%s P=%d root %d: %v", a, p, root, err)
				}
				if err := s.Validate(); err != nil {
					t.Fatalf("%s P=%d root %d: %v", a, p, root, err)
				}
				for _, n := range []int{0, 1, p - 1, p, 3*p + 5, 257} {
					if n < 0 {
						continue
					}
					cnt, err := symBcast(s, n)
					if err != nil {
						t.Fatalf("%s P=%d root %d n=%d: %v", a, p, root, n, err)
					}
					// The scatter-allgather broadcasts re-send, as Open MPI's
					// do, blocks a rank already got in the scatter (and the
					// root's own): there every rank needs each byte at least
					// once.
					atLeast := resends(s, n)
					for r := range p {
						want := 1
						if r == root {
							want = 0
						}
						for b := range n {
							if atLeast && cnt[r][b] >= want {
								continue
							}
							if cnt[r][b] != want {
								t.Fatalf("%s P=%d root %d n=%d: rank %d got byte %d %d times, want %d", a, p, root, n, r, b, cnt[r][b], want)
							}
						}
					}
				}
			}
		}
	}
}

// Property: the segment grid cuts a span into pieces that tile it, none
// longer than the segment, and a child's pieces are exactly its parent's
// pieces clipped to the child's span.
func TestPropertyGridTiles(t *testing.T) {
	for _, size := range []int{0, 1, 3, 7, 64} {
		for lo := 0; lo < 20; lo++ {
			for hi := lo; hi < 40; hi += 3 {
				g := grid(lo, hi, size)
				at := lo
				for _, s := range g {
					if s.lo != at || s.hi <= s.lo || (size > 0 && s.hi-s.lo > size) {
						t.Fatalf("grid(%d,%d,%d) = %v", lo, hi, size, g)
					}
					at = s.hi
				}
				if at != hi && hi > lo {
					t.Fatalf("grid(%d,%d,%d) = %v does not reach %d", lo, hi, size, g, hi)
				}
				// clipping to a sub-span gives the sub-span's own grid
				a, b := lo+(hi-lo)/3, hi-(hi-lo)/4
				var clipped []seg
				for _, s := range g {
					if x, y := max(s.lo, a), min(s.hi, b); x < y {
						clipped = append(clipped, seg{x, y})
					}
				}
				if fmt.Sprint(clipped) != fmt.Sprint(grid(a, b, size)) {
					t.Fatalf("clip of grid(%d,%d,%d) to [%d,%d) = %v, want %v", lo, hi, size, a, b, clipped, grid(a, b, size))
				}
			}
		}
	}
}

func TestBuildersRejectBadInput(t *testing.T) {
	if _, err := Binomial(0, 0); err == nil {
		t.Error("size 0 accepted")
	}
	if _, err := Linear(4, 4); err == nil {
		t.Error("root 4 of 4 accepted")
	}
	if _, err := KNomial(4, 0, 1); err == nil {
		t.Error("radix 1 accepted")
	}
	if _, err := Magpie(nil, 0, 4, 0); err == nil {
		t.Error("magpie without topology accepted")
	}
	if _, err := Magpie(threeGroups(), 5, 8, 0); err == nil {
		t.Error("level out of range accepted")
	}
	if _, err := (Algorithm{Name: "nope"}).Build(4, 0, nil); err == nil {
		t.Error("unknown algorithm accepted")
	}
	if _, err := (Algorithm{Name: "hierarchical", Base: "magpie"}).Build(8, 0, threeGroups()); err == nil {
		t.Error("topology-aware base accepted")
	}
	if _, err := Magpie(threeGroups(), 0, 9, 0); err == nil {
		t.Error("topology of the wrong size accepted")
	}
}

func TestWriteText(t *testing.T) {
	s := mustBuild(t)(SplitBinary(4, 1, 0))
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, line := range []string{
		"schedule split-binary (split): 4 ranks, root 1, depth 2, below 2 bytes: chain\n",
		"1 parts [0,2) of 2 -> [2 3]\n",
		"  2 parts [0,1) of 2 -> [0]\n",
		"    0 parts [0,1) of 2\n",
		"  3 parts [1,2) of 2\n",
		"round 0: 1 -> 0 parts [1,2)\n", // even P: the root sends the second half to v=P-1
		"round 0: 2 -> 3 parts [0,1)\n",
		"round 0: 3 -> 2 parts [1,2)\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("missing %q in\n%s", line, got)
		}
	}
}

// Seed 003 Figs. 6.1-6.3: 12 processes in 3 clusters of 4, root P1: a
// binary tree broadcast over the clustering crosses clusters only twice,
// the plain binary tree many more times.
func TestReinfjellFig62ClusteredBinaryCrossesTwice(t *testing.T) {
	tp := &topo.Topology{Version: 1, Size: 12}
	for r := range 12 {
		tp.Ranks = append(tp.Ranks, topo.Rank{Rank: r})
	}
	tp.Levels = []topo.Level{{Name: "cluster", Groups: [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}}}}
	lab := tp.Levels[0].Labels(12)
	cross := func(s *Schedule) int {
		n := 0
		for r, ch := range s.Children {
			for _, c := range ch {
				if lab[r] != lab[c] {
					n++
				}
			}
		}
		return n
	}
	m, err := Algorithm{Name: "magpie2", Base: "binary"}.Build(12, 1, tp)
	if err != nil {
		t.Fatal(err)
	}
	plain := mustBuild(t)(Binary(12, 1))
	if got := cross(m); got != 2 {
		t.Errorf("clustered binary tree crosses clusters %d times, want 2", got)
	}
	if got := cross(plain); got < 5 {
		t.Errorf("plain binary tree crosses clusters only %d times", got)
	}
}
