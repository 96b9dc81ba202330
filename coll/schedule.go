// Package coll builds communication schedules and runs collective
// operations over comm.Comm.
//
// Two orthogonal concepts (seed 000, Sect. 6.2.3, MPIBlib/CPM): a BUILDER
// makes a Schedule (who sends what to whom, in which order, in how many
// segments) for a communicator size and a root, knowing nothing about the
// semantics of the collective; an OPERATION (Bcast, Scatter, Gather, Reduce,
// Allreduce, ReduceScatter, Allgather, Barrier) executes any suitable
// Schedule over a comm.Comm, knowing nothing about how the schedule was
// made. Topology-blind, topology-aware, performance-aware and allreduce
// (exchange) builders all produce the same type.
package coll

import (
	"fmt"
)

// Kind says which phases a schedule has.
type Kind int

const (
	// KindTree: a spanning tree; every rank receives the whole message
	// from its parent (in segments) and forwards it to its children.
	KindTree Kind = iota
	// KindSplit: the message is cut into NParts parts; in the tree phase a
	// rank receives only the parts in its Span, then exchanges parts in
	// explicit steps (split-binary, binary-with-swap).
	KindSplit
	// KindScatterAllgather: a binomial scatter of P parts (tree phase with
	// nested spans) followed by an allgather in explicit steps.
	KindScatterAllgather
	// KindHier: a sequence of stages, each a set of broadcasts on
	// sub-communicators run in parallel (MPICH-G2, seed 000 Sect. 6.1). The
	// Parent/Children fields hold the equivalent composite tree, which
	// operations other than Bcast use.
	KindHier
	// KindExchange: an allreduce made of explicit steps only (recursive
	// doubling, Rabenseifner, ring); receives marked Reduce combine the
	// incoming parts with the reduction. Parent/Children hold a binomial
	// tree, which the rooted operations use.
	KindExchange
	// KindLevels: an allreduce by levels (LevelsAllreduce): Stages[0]
	// reduces inside groups to their leaders and broadcasts back,
	// Stages[1] allreduces among the leaders. Parent/Children hold the
	// equivalent two-level tree, which the rooted operations use.
	KindLevels
)

func (k Kind) String() string {
	switch k {
	case KindTree:
		return "tree"
	case KindSplit:
		return "split"
	case KindScatterAllgather:
		return "scatter-allgather"
	case KindHier:
		return "hierarchical"
	case KindExchange:
		return "exchange"
	case KindLevels:
		return "levels"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// PartRange is the half-open range [Lo, Hi) of message parts.
type PartRange struct{ Lo, Hi int }

// Empty tells whether the range holds no part.
func (p PartRange) Empty() bool { return p.Hi <= p.Lo }

// Step is one point-to-point transfer of the explicit (non-tree) phase, as
// seen by one rank. Steps of one round run concurrently; rounds run in order.
type Step struct {
	Round int
	Peer  int
	Send  bool // true: send Parts to Peer; false: receive Parts from Peer
	Parts PartRange
	// Reduce (receives of reduction schedules only): combine the parts
	// received with the reduction instead of overwriting them.
	Reduce bool
}

// Stage is one level of a hierarchical schedule: broadcasts on disjoint
// groups that run in parallel.
type Stage struct {
	Groups []Group
}

// Group is a sub-communicator of a stage and the schedule run on it.
// Ranks are numbered in the parent communicator; rank i of the
// sub-communicator is Ranks[i], and Sched.Root indexes Ranks.
type Group struct {
	Ranks []int
	Sched *Schedule
}

// Schedule is a communication schedule for one communicator size and root.
type Schedule struct {
	Name string
	Kind Kind
	Size int
	Root int
	// Parent[r] is r's parent in the spanning tree (-1 for the root);
	// Children[r] lists r's children in the order r sends to them.
	Parent   []int
	Children [][]int
	// SegSize is the segment size in bytes of the tree phase (0: the
	// whole message, or the whole span, in one message). Segments are cut
	// on a global grid (multiples of SegSize from the message start), so a
	// rank forwards a segment as soon as it has received it.
	SegSize int
	// NParts > 0 cuts the message into NParts parts, Open MPI style: part i
	// is bytes [i*c, (i+1)*c) clipped to the message, c = ceil(n/NParts).
	// Span[r] is the range of parts rank r receives in the tree phase.
	NParts int
	Span   []PartRange
	// StepsOf returns the explicit steps of a rank, sorted by round; nil
	// when the schedule has no explicit phase. It is a function so that
	// O(P^2)-step algorithms (ring) cost memory only per rank.
	StepsOf func(rank int) []Step
	// Small, when set, replaces this schedule for messages shorter than
	// SmallBelow bytes (Open MPI's fallbacks, e.g. scatter-allgather ->
	// linear when the message has fewer bytes than ranks).
	Small      *Schedule
	SmallBelow int
	// Stages of a KindHier schedule, coarsest first (of a KindLevels one:
	// the groups, then the leaders).
	Stages []Stage
	// ScatterStepsOf, when set, gives the steps of the reduce-scatter of a
	// KindExchange schedule: the message cut into Size parts (of whole
	// elements), rank r ending with part r fully reduced. Without it,
	// ReduceScatter runs the allreduce and keeps the caller's part.
	ScatterStepsOf func(rank int) []Step
	// RankOrder tells that the steps combine operands in rank order (the
	// lower ranks' data on the left), as MPI requires of operations that
	// are not commutative; schedules without it reject such operations.
	RankOrder bool
}

// For returns the schedule to run for a message of n bytes (the Small
// fallback when n is below SmallBelow).
func (s *Schedule) For(n int) *Schedule {
	if s.Small != nil && n < s.SmallBelow {
		return s.Small.For(n)
	}
	return s
}

// partBytes returns the byte range of part i of a message of n bytes cut
// into nparts parts of ceil(n/nparts) bytes (the last ones may be short or
// empty, as in Open MPI's scatter-allgather).
func partBytes(n, nparts, i int) (lo, hi int) {
	c := (n + nparts - 1) / nparts
	return min(i*c, n), min((i+1)*c, n)
}

// rangeBytes returns the byte range of parts pr.
func rangeBytes(n, nparts int, pr PartRange) (lo, hi int) {
	if pr.Empty() {
		return 0, 0
	}
	lo, _ = partBytes(n, nparts, pr.Lo)
	_, hi = partBytes(n, nparts, pr.Hi-1)
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

// spanBytes is the byte range rank r receives in the tree phase.
func (s *Schedule) spanBytes(n, r int) (lo, hi int) {
	if s.NParts == 0 || s.Span == nil {
		return 0, n
	}
	return rangeBytes(n, s.NParts, s.Span[r])
}

// seg is a byte range [lo, hi).
type seg struct{ lo, hi int }

// grid cuts [lo, hi) at the multiples of size (size <= 0: one piece).
func grid(lo, hi, size int) []seg {
	if hi <= lo {
		return nil
	}
	if size <= 0 {
		return []seg{{lo, hi}}
	}
	var out []seg
	for a := lo; a < hi; {
		b := min((a/size+1)*size, hi)
		out = append(out, seg{a, b})
		a = b
	}
	return out
}

// Depth returns the height of the spanning tree (0 for one rank).
func (s *Schedule) Depth() int {
	d := 0
	for r := range s.Size {
		k := 0
		for x := r; s.Parent[x] >= 0; x = s.Parent[x] {
			k++
		}
		d = max(d, k)
	}
	return d
}

// Preorder lists the ranks in depth-first preorder of the tree, children
// visited in send order; every subtree is a contiguous run.
func (s *Schedule) Preorder() []int {
	out := make([]int, 0, s.Size)
	stack := []int{s.Root}
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, r)
		ch := s.Children[r]
		for i := len(ch) - 1; i >= 0; i-- {
			stack = append(stack, ch[i])
		}
	}
	return out
}

// Validate checks that the schedule is well formed: the tree spans all
// ranks, is connected and acyclic, Parent and Children agree, spans nest,
// and every step has a matching step on its peer.
func (s *Schedule) Validate() error {
	if s.Size < 1 {
		return fmt.Errorf("schedule %q: size %d < 1", s.Name, s.Size)
	}
	if s.Root < 0 || s.Root >= s.Size {
		return fmt.Errorf("schedule %q: root %d out of range [0,%d)", s.Name, s.Root, s.Size)
	}
	if len(s.Parent) != s.Size || len(s.Children) != s.Size {
		return fmt.Errorf("schedule %q: parent/children lists have %d/%d entries, want %d", s.Name, len(s.Parent), len(s.Children), s.Size)
	}
	if s.Parent[s.Root] != -1 {
		return fmt.Errorf("schedule %q: root %d has parent %d", s.Name, s.Root, s.Parent[s.Root])
	}
	nchild := 0
	for r, ch := range s.Children {
		for _, c := range ch {
			if c < 0 || c >= s.Size {
				return fmt.Errorf("schedule %q: rank %d has child %d out of range", s.Name, r, c)
			}
			if s.Parent[c] != r {
				return fmt.Errorf("schedule %q: rank %d lists child %d whose parent is %d", s.Name, r, c, s.Parent[c])
			}
			nchild++
		}
	}
	if nchild != s.Size-1 {
		return fmt.Errorf("schedule %q: %d parent-child edges, want %d", s.Name, nchild, s.Size-1)
	}
	// Every rank reaches the root by following parents: connected, acyclic.
	for r := range s.Size {
		x, steps := r, 0
		for x != s.Root {
			x = s.Parent[x]
			steps++
			if x < 0 || x >= s.Size || steps > s.Size {
				return fmt.Errorf("schedule %q: rank %d does not reach the root", s.Name, r)
			}
		}
	}
	if s.NParts > 0 {
		if len(s.Span) != s.Size {
			return fmt.Errorf("schedule %q: %d spans, want %d", s.Name, len(s.Span), s.Size)
		}
		for r, sp := range s.Span {
			if sp.Lo < 0 || sp.Hi > s.NParts {
				return fmt.Errorf("schedule %q: rank %d span %v outside [0,%d)", s.Name, r, sp, s.NParts)
			}
			if p := s.Parent[r]; p >= 0 && !sp.Empty() {
				ps := s.Span[p]
				if sp.Lo < ps.Lo || sp.Hi > ps.Hi {
					return fmt.Errorf("schedule %q: rank %d span %v not inside parent %d span %v", s.Name, r, sp, p, ps)
				}
			}
		}
	}
	if s.StepsOf != nil {
		if err := checkSteps(s.Name, s.Size, s.StepsOf); err != nil {
			return err
		}
	}
	if s.ScatterStepsOf != nil {
		if err := checkSteps(s.Name+" reduce-scatter", s.Size, s.ScatterStepsOf); err != nil {
			return err
		}
	}
	if s.Small != nil {
		if s.Small.Size != s.Size || s.Small.Root != s.Root {
			return fmt.Errorf("schedule %q: fallback is for size %d root %d", s.Name, s.Small.Size, s.Small.Root)
		}
		if err := s.Small.Validate(); err != nil {
			return fmt.Errorf("schedule %q fallback: %w", s.Name, err)
		}
	}
	for i, st := range s.Stages {
		seen := map[int]bool{}
		for _, g := range st.Groups {
			if g.Sched == nil || g.Sched.Size != len(g.Ranks) {
				return fmt.Errorf("schedule %q stage %d: group %v has no schedule of its size", s.Name, i, g.Ranks)
			}
			for _, r := range g.Ranks {
				if r < 0 || r >= s.Size || seen[r] {
					return fmt.Errorf("schedule %q stage %d: rank %d out of range or in two groups", s.Name, i, r)
				}
				seen[r] = true
			}
			if err := g.Sched.Validate(); err != nil {
				return fmt.Errorf("schedule %q stage %d: %w", s.Name, i, err)
			}
		}
	}
	return nil
}

type stepKey struct {
	round, from, to int
	parts           PartRange
}

// checkSteps verifies that every send has exactly one matching receive.
func checkSteps(name string, size int, stepsOf func(int) []Step) error {
	count := map[stepKey]int{}
	for r := range size {
		last := -1
		for _, st := range stepsOf(r) {
			if st.Round < last {
				return fmt.Errorf("schedule %q: rank %d steps not sorted by round", name, r)
			}
			last = st.Round
			if st.Peer < 0 || st.Peer >= size || st.Peer == r {
				return fmt.Errorf("schedule %q: rank %d step with peer %d", name, r, st.Peer)
			}
			if st.Send && st.Reduce {
				return fmt.Errorf("schedule %q: rank %d round %d: a send marked reduce", name, r, st.Round)
			}
			if st.Send {
				count[stepKey{st.Round, r, st.Peer, st.Parts}]++
			} else {
				count[stepKey{st.Round, st.Peer, r, st.Parts}]--
			}
		}
	}
	for k, v := range count {
		if v != 0 {
			return fmt.Errorf("schedule %q: round %d %d->%d parts %v: unmatched send/receive (%+d)", name, k.round, k.from, k.to, k.parts, v)
		}
	}
	return nil
}

// treeFromChildren fills Parent from Children.
func newTree(name string, p, root int, children [][]int) *Schedule {
	parent := make([]int, p)
	for i := range parent {
		parent[i] = -2
	}
	parent[root] = -1
	for r, ch := range children {
		for _, c := range ch {
			parent[c] = r
		}
	}
	for i := range children {
		if children[i] == nil {
			children[i] = []int{}
		}
	}
	return &Schedule{Name: name, Kind: KindTree, Size: p, Root: root, Parent: parent, Children: children}
}

// vtree builds a tree over virtual ranks (0 is the root) given the
// children of each virtual rank, and maps virtual rank v to rank ranks(v).
func vtree(name string, p, root int, vchildren func(v int) []int) *Schedule {
	children := make([][]int, p)
	for v := range p {
		r := (v + root) % p
		for _, cv := range vchildren(v) {
			children[r] = append(children[r], (cv+root)%p)
		}
	}
	return newTree(name, p, root, children)
}
