package coll

import (
	"context"
	"fmt"
	"slices"

	"netaware/comm"
	"netaware/topo"
)

// Allreduce and reduce-scatter (issue 14). The exchange builders make
// KindExchange schedules: explicit steps only, some receives combining
// what arrives with the reduction. Every other schedule runs Allreduce as
// its Reduce followed by its Bcast (on a hierarchical schedule: reduce up
// the composite tree, broadcast down level by level) and ReduceScatter as
// its Reduce followed by its Scatter.

// fold is MPICH's handling of a size that is not a power of two: pof2 is
// the largest power of two <= p and rem = p - pof2; among the first 2*rem
// ranks every even rank hands its data to the odd rank after it and sits
// out until the end. The others take new ranks 0..pof2-1 in rank order,
// so a new rank stands for a contiguous run of ranks and exchanges between
// aligned runs of new ranks keep the operands in rank order.
type fold struct{ pof2, rem, log int }

func newFold(p int) fold {
	f := fold{pof2: 1}
	for f.pof2*2 <= p {
		f.pof2 *= 2
		f.log++
	}
	f.rem = p - f.pof2
	return f
}

// newRank is r's new rank, -1 for a rank that sits out.
func (f fold) newRank(r int) int {
	if r < 2*f.rem {
		if r%2 == 0 {
			return -1
		}
		return r / 2
	}
	return r - f.rem
}

func (f fold) rank(nr int) int {
	if nr < f.rem {
		return 2*nr + 1
	}
	return nr + f.rem
}

// Rounds of the folded algorithms: 0 fold, 1..2*log the exchanges, then
// the unfold, so that every rank numbers them alike.
func (f fold) unfoldRound() int { return 2*f.log + 1 }

// foldSteps wraps the exchange steps of new rank nr (made by body) with
// the fold and unfold of rank r: the whole message (parts all) goes in,
// and the result goes back out.
func (f fold) steps(r int, all PartRange, body func(nr int) []Step) []Step {
	var out []Step
	if r < 2*f.rem {
		if r%2 == 0 {
			return []Step{
				{Round: 0, Peer: r + 1, Send: true, Parts: all},
				{Round: f.unfoldRound(), Peer: r + 1, Parts: all},
			}
		}
		out = append(out, Step{Round: 0, Peer: r - 1, Parts: all, Reduce: true})
	}
	out = append(out, body(f.newRank(r))...)
	if r < 2*f.rem {
		out = append(out, Step{Round: f.unfoldRound(), Peer: r - 1, Send: true, Parts: all})
	}
	return out
}

// exchange makes the frame of a KindExchange schedule: the binomial tree
// for the rooted operations and nparts parts that every rank holds whole.
func exchange(name string, p, root, nparts int) (*Schedule, error) {
	s, err := Binomial(p, root)
	if err != nil {
		return nil, err
	}
	s.Name, s.Kind, s.NParts = name, KindExchange, nparts
	s.Span = make([]PartRange, p)
	for r := range s.Span {
		s.Span[r] = PartRange{0, nparts}
	}
	return s, nil
}

// RecursiveDoubling is MPICH's recursive-doubling allreduce: after the
// fold, in round k new rank v swaps its whole vector with v xor 2^k and
// both combine, the lower-ranked operand on the left. It combines in rank
// order. Reduce-scatter runs the allreduce and keeps the caller's block.
func RecursiveDoubling(p, root int) (*Schedule, error) {
	if err := checkPR("recursive-doubling", p, root); err != nil {
		return nil, err
	}
	s, err := exchange("recursive-doubling", p, root, 1)
	if err != nil {
		return nil, err
	}
	f, all := newFold(p), PartRange{0, 1}
	s.StepsOf = func(r int) []Step {
		return f.steps(r, all, func(nr int) []Step {
			var out []Step
			round := 1
			for mask := 1; mask < f.pof2; mask <<= 1 {
				peer := f.rank(nr ^ mask)
				out = append(out,
					Step{Round: round, Peer: peer, Parts: all, Reduce: true},
					Step{Round: round, Peer: peer, Send: true, Parts: all})
				round++
			}
			return out
		})
	}
	s.RankOrder = true
	return s, nil
}

// Rabenseifner is the reduce-scatter + allgather allreduce (MPICH's
// reduce_scatter_allgather): after the fold, the vector is cut into pof2
// parts; in round k new rank v keeps one half of its current range,
// sends the other to v xor 2^k and combines the half it receives
// (recursive halving of the vector, doubling of the distance, so partners
// always hold aligned runs of ranks and rank order is kept); then the
// halves are gathered back in the reverse order (recursive doubling), and
// the folded ranks get the result. Its reduce-scatter (ScatterStepsOf) is
// MPICH's recursive halving: distance halving, each new rank ending with
// the blocks of the ranks it stands for, the folded partner's block then
// handed over.
func Rabenseifner(p, root int) (*Schedule, error) {
	if err := checkPR("rabenseifner", p, root); err != nil {
		return nil, err
	}
	f := newFold(p)
	s, err := exchange("rabenseifner", p, root, f.pof2)
	if err != nil {
		return nil, err
	}
	all := PartRange{0, f.pof2}
	s.StepsOf = func(r int) []Step {
		return f.steps(r, all, func(nr int) []Step {
			// keep[k], give[k]: the halves of round k.
			var keep, give []PartRange
			cur := all
			for mask := 1; mask < f.pof2; mask <<= 1 {
				mid := (cur.Lo + cur.Hi) / 2
				lo, hi := PartRange{cur.Lo, mid}, PartRange{mid, cur.Hi}
				if nr&mask == 0 {
					keep, give = append(keep, lo), append(give, hi)
					cur = lo
				} else {
					keep, give = append(keep, hi), append(give, lo)
					cur = hi
				}
			}
			var out []Step
			round := 1
			for k, mask := 0, 1; mask < f.pof2; k, mask = k+1, mask<<1 {
				peer := f.rank(nr ^ mask)
				out = append(out,
					Step{Round: round, Peer: peer, Parts: keep[k], Reduce: true},
					Step{Round: round, Peer: peer, Send: true, Parts: give[k]})
				round++
			}
			for k := f.log - 1; k >= 0; k-- {
				peer := f.rank(nr ^ (1 << k))
				out = append(out,
					Step{Round: round, Peer: peer, Parts: give[k]},
					Step{Round: round, Peer: peer, Send: true, Parts: keep[k]})
				round++
			}
			return out
		})
	}
	s.RankOrder = true
	s.ScatterStepsOf = func(r int) []Step { return halvingScatterSteps(p, f, r) }
	return s, nil
}

// halvingScatterSteps is the reduce-scatter by recursive halving over p
// parts (part r for rank r): new rank v stands for the parts own(v) of its
// ranks; in round k (distance pof2/2^k) it keeps the half of its group's
// parts that holds its own and sends the other half. The order of the
// operands depends on the round, so only commutative operations use it.
func halvingScatterSteps(p int, f fold, r int) []Step {
	own := func(nr int) PartRange {
		if nr < f.rem {
			return PartRange{2 * nr, 2*nr + 2}
		}
		return PartRange{nr + f.rem, nr + f.rem + 1}
	}
	parts := func(lo, hi int) PartRange { return PartRange{own(lo).Lo, own(hi - 1).Hi} }
	all := PartRange{0, p}
	if r < 2*f.rem && r%2 == 0 {
		return []Step{
			{Round: 0, Peer: r + 1, Send: true, Parts: all},
			{Round: f.log + 1, Peer: r + 1, Parts: PartRange{r, r + 1}},
		}
	}
	var out []Step
	if r < 2*f.rem {
		out = append(out, Step{Round: 0, Peer: r - 1, Parts: all, Reduce: true})
	}
	nr := f.newRank(r)
	round := 1
	for mask := f.pof2 / 2; mask > 0; mask >>= 1 {
		peer := f.rank(nr ^ mask)
		base := nr &^ (2*mask - 1)
		lo, hi := parts(base, base+mask), parts(base+mask, base+2*mask)
		if nr&mask != 0 {
			lo, hi = hi, lo
		}
		out = append(out,
			Step{Round: round, Peer: peer, Parts: lo, Reduce: true},
			Step{Round: round, Peer: peer, Send: true, Parts: hi})
		round++
	}
	if r < 2*f.rem {
		out = append(out, Step{Round: f.log + 1, Peer: r - 1, Send: true, Parts: PartRange{r - 1, r}})
	}
	return out
}

// Ring is the ring allreduce: the vector cut into P parts, P-1 rounds of
// reduce-scatter in which every rank passes a partial part to the next
// and combines the one it gets from the previous, then P-1 rounds of
// allgather around the same ring. Its first half alone is the ring
// reduce-scatter. The parts travel around the ring, so a part's operands
// are not combined in rank order: operations that are not commutative are
// rejected.
func Ring(p, root int) (*Schedule, error) {
	if err := checkPR("ring", p, root); err != nil {
		return nil, err
	}
	order := make([]int, p)
	for i := range order {
		order[i] = i
	}
	return RingOrder("ring", order, root)
}

// DFSRing is the ring allreduce along DFSOrder: on a tree network every
// link carries each part once per direction per phase.
func DFSRing(t *topo.Topology, p, root int) (*Schedule, error) {
	order, err := DFSOrder(t, p, root)
	if err != nil {
		return nil, err
	}
	return RingOrder("dfs-ring", order, root)
}

// RingOrder is the ring allreduce and reduce-scatter with the ranks in
// the given ring order. Part j of the ring is rank order[j]'s block, so
// that the reduce-scatter leaves every rank its own block.
func RingOrder(name string, order []int, root int) (*Schedule, error) {
	p := len(order)
	if err := checkPR(name, p, root); err != nil {
		return nil, err
	}
	pos := make([]int, p)
	for i := range pos {
		pos[i] = -1
	}
	for i, r := range order {
		if r < 0 || r >= p || pos[r] >= 0 {
			return nil, fmt.Errorf("%s: order %v is not a permutation of 0..%d", name, order, p-1)
		}
		pos[r] = i
	}
	s, err := exchange(name, p, root, p)
	if err != nil {
		return nil, err
	}
	part := func(j int) PartRange {
		r := order[((j%p)+p)%p]
		return PartRange{r, r + 1}
	}
	scatter := func(r int) []Step {
		if p == 1 {
			return nil
		}
		i := pos[r]
		next, prev := order[(i+1)%p], order[(i-1+p)%p]
		out := make([]Step, 0, 2*(p-1))
		for k := range p - 1 {
			out = append(out,
				Step{Round: k, Peer: prev, Parts: part(i - k - 2), Reduce: true},
				Step{Round: k, Peer: next, Send: true, Parts: part(i - k - 1)})
		}
		return out
	}
	s.ScatterStepsOf = scatter
	s.StepsOf = func(r int) []Step {
		out := scatter(r)
		if p == 1 {
			return out
		}
		i := pos[r]
		next, prev := order[(i+1)%p], order[(i-1+p)%p]
		for k := range p - 1 {
			out = append(out,
				Step{Round: p - 1 + k, Peer: prev, Parts: part(i - k - 1)},
				Step{Round: p - 1 + k, Peer: next, Send: true, Parts: part(i - k)})
		}
		return out
	}
	return s, nil
}

// runReduceSteps executes steps on buf (a message of whole op elements cut
// into nparts parts of whole elements): per round every receive is
// posted, then every send; once all completed (so no send still reads
// buf), the received parts marked Reduce are combined into buf, a lower
// peer's operand on the left.
func runReduceSteps(ctx context.Context, c comm.Comm, steps []Step, buf []byte, nparts int, op Op, tag int) error {
	me, es := c.Rank(), op.ElemSize
	elems := len(buf) / es
	bytesOf := func(pr PartRange) (int, int) {
		lo, hi := rangeBytes(elems, nparts, pr)
		return lo * es, hi * es
	}
	// scratch holds the round's incoming operands; it grows to the
	// largest round (n/P for the ring, n/2 for Rabenseifner), not n.
	var scratch []byte
	var sb *[]byte // scratch's pooled buffer
	type pending struct{ lo, hi, peer, at int }
	for i := 0; i < len(steps); {
		j := i
		for j < len(steps) && steps[j].Round == steps[i].Round {
			j++
		}
		var recvs []recvReq
		var reds []pending
		need := 0
		for _, st := range steps[i:j] {
			if lo, hi := bytesOf(st.Parts); st.Reduce && !st.Send && lo < hi {
				need += hi - lo
			}
		}
		if cap(scratch) < need {
			// Every receive into the old scratch has completed.
			putBuf(sb)
			sb = getBuf(need)
			scratch = (*sb)[:cap(*sb)]
		}
		at := 0
		var sends []comm.Request
		var peers []int
		for _, st := range steps[i:j] {
			if st.Send {
				continue
			}
			lo, hi := bytesOf(st.Parts)
			if lo >= hi {
				continue
			}
			dst := buf[lo:hi]
			if st.Reduce {
				dst = scratch[at : at+hi-lo]
				reds = append(reds, pending{lo, hi, st.Peer, at})
				at += hi - lo
			}
			recvs = append(recvs, recvReq{c.Irecv(st.Peer, tag, dst), st.Peer, hi - lo})
		}
		for _, st := range steps[i:j] {
			if lo, hi := bytesOf(st.Parts); st.Send && lo < hi {
				sends = append(sends, c.Isend(st.Peer, tag, buf[lo:hi]))
				peers = append(peers, st.Peer)
			}
		}
		for _, r := range recvs {
			if err := r.wait(ctx); err != nil {
				return fmt.Errorf("round %d: %w", steps[i].Round, err)
			}
		}
		if err := waitSends(ctx, sends, peers); err != nil {
			return fmt.Errorf("round %d: %w", steps[i].Round, err)
		}
		for _, x := range reds {
			mine, in := buf[x.lo:x.hi], scratch[x.at:x.at+x.hi-x.lo]
			if x.peer < me {
				op.Fn(in, mine)
				copy(mine, in)
			} else {
				op.Fn(mine, in)
			}
		}
		i = j
	}
	putBuf(sb)
	return nil
}

// Allreduce combines every rank's send element-wise with op and leaves the
// result in every rank's recv (at least len(send) bytes; send and recv may
// be the same slice). Every rank passes the same length. A KindExchange
// schedule runs its steps, a KindLevels schedule its stages; any other
// runs its Reduce and then its Bcast.
func (s *Schedule) Allreduce(ctx context.Context, c comm.Comm, send, recv []byte, op Op) error {
	if err := s.check(c, "allreduce"); err != nil {
		return err
	}
	n, me := len(send), c.Rank()
	if err := op.check(n); err != nil {
		return fmt.Errorf("coll allreduce: %w", err)
	}
	if len(recv) < n {
		return fmt.Errorf("coll allreduce: rank %d: receive buffer %d bytes < %d", me, len(recv), n)
	}
	if s.Kind == KindLevels {
		if err := op.checkOrder(s); err != nil {
			return fmt.Errorf("coll allreduce: %w", err)
		}
		copy(recv[:n], send)
		if n == 0 {
			return nil
		}
		return s.wrap("allreduce", c, s.allreduceLevels(ctx, c, recv[:n], op))
	}
	if s.Kind != KindExchange {
		if err := s.Reduce(ctx, c, send, recv, op); err != nil {
			return err
		}
		return s.Bcast(ctx, c, recv[:n])
	}
	if err := op.checkOrder(s); err != nil {
		return fmt.Errorf("coll allreduce: %w", err)
	}
	if s.StepsOf == nil || s.NParts < 1 {
		return fmt.Errorf("coll allreduce: schedule %q has no steps", s.Name)
	}
	copy(recv[:n], send)
	if n == 0 {
		return nil
	}
	return s.wrap("allreduce", c, runReduceSteps(ctx, c, s.StepsOf(me), recv[:n], s.NParts, op, tagAllreduce))
}

// ReduceScatter is MPI_Reduce_scatter_block: send holds Size blocks of
// len(recv) bytes; the blocks are combined element-wise over the ranks
// with op, and rank r receives block r of the result. A KindExchange
// schedule runs its reduce-scatter steps for a commutative op, else its
// allreduce (keeping the caller's block), as a KindLevels schedule does;
// any other schedule runs its Reduce and then its Scatter.
func (s *Schedule) ReduceScatter(ctx context.Context, c comm.Comm, send, recv []byte, op Op) error {
	if err := s.check(c, "reduce-scatter"); err != nil {
		return err
	}
	p, m, me := s.Size, len(recv), c.Rank()
	if err := op.check(m); err != nil {
		return fmt.Errorf("coll reduce-scatter: %w", err)
	}
	if len(send) != p*m {
		return fmt.Errorf("coll reduce-scatter: rank %d: send buffer %d bytes, want %d blocks of %d", me, len(send), p, m)
	}
	if m == 0 {
		return nil
	}
	fb := getBuf(p * m)
	full := *fb
	switch {
	case s.Kind == KindLevels:
		if err := s.Allreduce(ctx, c, send, full, op); err != nil {
			return err
		}
	case s.Kind != KindExchange:
		if err := s.Reduce(ctx, c, send, full, op); err != nil {
			return err
		}
		if err := s.Scatter(ctx, c, full, recv); err != nil {
			return err
		}
		putBuf(fb)
		return nil
	case s.ScatterStepsOf != nil && !op.NonCommutative:
		copy(full, send)
		if err := runReduceSteps(ctx, c, s.ScatterStepsOf(me), full, p, op, tagRedScat); err != nil {
			return s.wrap("reduce-scatter", c, err)
		}
	default:
		if err := s.Allreduce(ctx, c, send, full, op); err != nil {
			return err
		}
	}
	copy(recv, full[me*m:(me+1)*m])
	putBuf(fb)
	return nil
}

// LevelsAllreduce is the allreduce by levels (MPICH's SMP-aware allreduce,
// per group of a topology level): every group of the level reduces to its
// leader with intra, the leaders allreduce among themselves with top, and
// every leader broadcasts the result in its group with intra. Stages[0]
// holds the groups (leader first), Stages[1] the leaders (the root's
// first); Parent/Children hold the equivalent two-level tree (a binomial
// tree over the leaders), which the rooted operations use. level indexes
// t.Levels; -1 picks the finest level that has more than one group and is
// not all singletons (a host or socket level, where the reduction stays in
// shared memory), else the whole communicator as one group.
func LevelsAllreduce(t *topo.Topology, level, p, root int, intra, top BuildFunc) (*Schedule, error) {
	const name = "levels-allreduce"
	if err := checkTopo(name, t, p); err != nil {
		return nil, err
	}
	if level < 0 {
		for i, l := range t.Levels {
			if len(l.Groups) > 1 && len(l.Groups) < p {
				level = i
				break
			}
		}
	}
	s, err := twoLevel(name, t, level, p, root, Binomial, intra)
	if err != nil {
		return nil, err
	}
	groups, err := levelGroups(t, level, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	leaders := []int{root}
	var local Stage
	for _, g := range groups {
		l := leaderOf(g, root)
		if l != root {
			leaders = append(leaders, l)
		}
		m := membersLeaderFirst(g, l)
		is, err := intra(len(m), 0)
		if err != nil {
			return nil, fmt.Errorf("%s: group %v: %w", name, g, err)
		}
		local.Groups = append(local.Groups, Group{Ranks: m, Sched: is})
	}
	ts, err := top(len(leaders), 0)
	if err != nil {
		return nil, fmt.Errorf("%s: leaders: %w", name, err)
	}
	s.Kind = KindLevels
	s.Stages = []Stage{local, {Groups: []Group{{Ranks: leaders, Sched: ts}}}}
	return s, s.Validate()
}

// allreduceLevels runs a KindLevels schedule on buf (the caller's data on
// entry, the result on return).
func (s *Schedule) allreduceLevels(ctx context.Context, c comm.Comm, buf []byte, op Op) error {
	if len(s.Stages) != 2 || len(s.Stages[1].Groups) != 1 {
		return fmt.Errorf("schedule %q: want a stage of groups and a stage of leaders", s.Name)
	}
	me := c.Rank()
	var g Group
	for _, x := range s.Stages[0].Groups {
		if slices.Contains(x.Ranks, me) {
			g = x
			break
		}
	}
	if g.Sched == nil {
		return fmt.Errorf("rank %d is in no group", me)
	}
	sub, err := c.Sub(g.Ranks)
	if err != nil {
		return fmt.Errorf("group %v: %w", g.Ranks, err)
	}
	if err := g.Sched.Reduce(ctx, sub, buf, buf, op); err != nil {
		return fmt.Errorf("group %v: %w", g.Ranks, err)
	}
	if sub.Rank() == g.Sched.Root {
		top := s.Stages[1].Groups[0]
		lsub, err := c.Sub(top.Ranks)
		if err != nil {
			return fmt.Errorf("leaders %v: %w", top.Ranks, err)
		}
		if err := top.Sched.Allreduce(ctx, lsub, buf, buf, op); err != nil {
			return fmt.Errorf("leaders: %w", err)
		}
	}
	if err := g.Sched.Bcast(ctx, sub, buf); err != nil {
		return fmt.Errorf("group %v: %w", g.Ranks, err)
	}
	return nil
}

// Allreduce runs the allreduce of alg on c: the schedule is built for c's
// size and root 0 with the options' topology and cost. Every rank passes
// the same algorithm, options and lengths. auto and ompi-fixed are
// broadcast decisions and are refused.
func Allreduce(ctx context.Context, c comm.Comm, send, recv []byte, op Op, alg Algorithm, opts ...Option) error {
	s, err := buildFor(c, len(send), alg, opts)
	if err != nil {
		return fmt.Errorf("coll allreduce: %w", err)
	}
	return s.Allreduce(ctx, c, send, recv, op)
}

// ReduceScatter runs the reduce-scatter (MPI_Reduce_scatter_block) of alg
// on c, built as Allreduce builds it.
func ReduceScatter(ctx context.Context, c comm.Comm, send, recv []byte, op Op, alg Algorithm, opts ...Option) error {
	s, err := buildFor(c, len(send), alg, opts)
	if err != nil {
		return fmt.Errorf("coll reduce-scatter: %w", err)
	}
	return s.ReduceScatter(ctx, c, send, recv, op)
}

func buildFor(c comm.Comm, n int, alg Algorithm, opts []Option) (*Schedule, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return alg.BuildEnv(c.Size(), 0, Env{Topo: o.topo, Cost: o.cost, Bytes: n})
}
