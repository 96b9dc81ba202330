package coll

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"netaware/comm"
)

// Tags of the collective protocols (comm.SystemTag(200..299) is reserved
// for this package). Every phase has its own tag so that the phases of one
// operation never match each other's messages; consecutive operations on a
// communicator cannot be confused because messages between two ranks with
// one tag are matched in order and every rank runs the same sequence.
var (
	tagBcast     = comm.SystemTag(200)
	tagBcastStep = comm.SystemTag(201)
	tagScatter   = comm.SystemTag(202)
	tagGather    = comm.SystemTag(203)
	tagReduce    = comm.SystemTag(204)
	tagAllgather = comm.SystemTag(205)
	tagAlltoallv = comm.SystemTag(206)
	tagBarrierIn = comm.SystemTag(207)
	tagBarrierOu = comm.SystemTag(208)
	tagAllreduce = comm.SystemTag(209)
	tagRedScat   = comm.SystemTag(210)
)

func (s *Schedule) check(c comm.Comm, op string) error {
	if s == nil {
		return fmt.Errorf("coll %s: nil schedule", op)
	}
	if c.Size() != s.Size {
		return fmt.Errorf("coll %s: schedule %q is for %d ranks, communicator has %d", op, s.Name, s.Size, c.Size())
	}
	if len(s.Parent) != s.Size || len(s.Children) != s.Size {
		return fmt.Errorf("coll %s: schedule %q has no tree", op, s.Name)
	}
	return nil
}

func (s *Schedule) wrap(op string, c comm.Comm, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("coll %s (%s, root %d) at rank %d: %w", op, s.Name, s.Root, c.Rank(), err)
}

// recvReq is a posted receive and the byte count it must deliver.
type recvReq struct {
	req  comm.Request
	peer int
	want int
}

func (r recvReq) wait(ctx context.Context) error {
	st, err := r.req.Wait(ctx)
	if err != nil {
		return fmt.Errorf("receive from rank %d: %w", r.peer, err)
	}
	if st.Count != r.want {
		return fmt.Errorf("receive from rank %d: %d bytes, want %d (schedules differ between ranks?)", r.peer, st.Count, r.want)
	}
	return nil
}

func waitSends(ctx context.Context, sends []comm.Request, peers []int) error {
	var first error
	for i, r := range sends {
		if _, err := r.Wait(ctx); err != nil && first == nil {
			first = fmt.Errorf("send to rank %d: %w", peers[i], err)
		}
	}
	return first
}

// spanFunc gives the byte range [lo, hi) (in the operation's global
// coordinates) that a rank holds in the tree phase.
type spanFunc func(rank int) (lo, hi int)

// treeDown moves data from the root to the leaves: buf holds the caller's
// bytes [base, base+len(buf)). Every receive is posted before anything is
// sent, and a segment is forwarded to the children as soon as it has
// arrived, so segments pipeline down the tree and rendezvous sends cannot
// deadlock.
func (s *Schedule) treeDown(ctx context.Context, c comm.Comm, buf []byte, base int, span spanFunc, seg, tag int) error {
	me := c.Rank()
	lo, hi := span(me)
	segs := grid(lo, hi, seg)
	parent := s.Parent[me]
	var recvs []recvReq
	if parent >= 0 {
		recvs = make([]recvReq, len(segs))
		for i, g := range segs {
			recvs[i] = recvReq{c.Irecv(parent, tag, buf[g.lo-base:g.hi-base]), parent, g.hi - g.lo}
		}
	}
	kids := s.Children[me]
	klo, khi := make([]int, len(kids)), make([]int, len(kids))
	for i, k := range kids {
		klo[i], khi[i] = span(k)
	}
	var w window
	for i, g := range segs {
		if recvs != nil {
			if err := recvs[i].wait(ctx); err != nil {
				return err
			}
		}
		if err := w.open(ctx); err != nil {
			return err
		}
		for j, k := range kids {
			a, b := max(g.lo, klo[j]), min(g.hi, khi[j])
			if a < b {
				w.send(c, k, tag, buf[a-base:b-base])
			}
		}
	}
	return w.drain(ctx)
}

// sendWindow is how many segments a rank keeps in flight: before sending
// segment i it waits until its sends of segment i-sendWindow completed, as
// Open MPI's segmented broadcasts do. Without the bound every segment of a
// long message would be on the wire at once, sharing the link, and arrive
// at the same late instant, which defeats pipelining.
const sendWindow = 2

// window tracks the sends of the last sendWindow segments.
type window struct {
	segs  [][]comm.Request
	peers [][]int
}

// open starts a new segment, first completing the oldest one in flight.
func (w *window) open(ctx context.Context) error {
	if len(w.segs) >= sendWindow {
		if err := waitSends(ctx, w.segs[0], w.peers[0]); err != nil {
			return err
		}
		w.segs, w.peers = w.segs[1:], w.peers[1:]
	}
	w.segs = append(w.segs, nil)
	w.peers = append(w.peers, nil)
	return nil
}

func (w *window) send(c comm.Comm, peer, tag int, b []byte) {
	i := len(w.segs) - 1
	w.segs[i] = append(w.segs[i], c.Isend(peer, tag, b))
	w.peers[i] = append(w.peers[i], peer)
}

func (w *window) drain(ctx context.Context) error {
	var first error
	for i := range w.segs {
		if err := waitSends(ctx, w.segs[i], w.peers[i]); err != nil && first == nil {
			first = err
		}
	}
	w.segs, w.peers = nil, nil
	return first
}

// treeUp moves data from the leaves to the root, the children's spans
// being disjoint parts of their parent's: buf holds bytes [base,
// base+len(buf)) and already contains the caller's own bytes. A segment
// goes up as soon as every piece of it has arrived from below.
func (s *Schedule) treeUp(ctx context.Context, c comm.Comm, buf []byte, base int, span spanFunc, seg, tag int) error {
	me := c.Rank()
	type pend struct {
		lo int
		r  recvReq
	}
	var rs []pend
	for _, k := range s.Children[me] {
		klo, khi := span(k)
		for _, g := range grid(klo, khi, seg) {
			rs = append(rs, pend{g.lo, recvReq{c.Irecv(k, tag, buf[g.lo-base:g.hi-base]), k, g.hi - g.lo}})
		}
	}
	slices.SortStableFunc(rs, func(a, b pend) int { return cmp.Compare(a.lo, b.lo) })
	next := 0
	var w window
	if parent := s.Parent[me]; parent >= 0 {
		lo, hi := span(me)
		for _, g := range grid(lo, hi, seg) {
			for next < len(rs) && rs[next].lo < g.hi {
				if err := rs[next].r.wait(ctx); err != nil {
					return err
				}
				next++
			}
			if err := w.open(ctx); err != nil {
				return err
			}
			w.send(c, parent, tag, buf[g.lo-base:g.hi-base])
		}
	}
	for ; next < len(rs); next++ {
		if err := rs[next].r.wait(ctx); err != nil {
			return err
		}
	}
	return w.drain(ctx)
}

// runSteps executes the explicit phase of s on a message of n bytes held
// in buf: per round, every receive is posted, then every send, then all
// are waited for.
func (s *Schedule) runSteps(ctx context.Context, c comm.Comm, n int, buf []byte, tag int) error {
	steps := s.StepsOf(c.Rank())
	for i := 0; i < len(steps); {
		j := i
		for j < len(steps) && steps[j].Round == steps[i].Round {
			j++
		}
		var recvs []recvReq
		var sends []comm.Request
		var peers []int
		for _, st := range steps[i:j] {
			if !st.Send {
				if lo, hi := rangeBytes(n, s.NParts, st.Parts); lo < hi {
					recvs = append(recvs, recvReq{c.Irecv(st.Peer, tag, buf[lo:hi]), st.Peer, hi - lo})
				}
			}
		}
		for _, st := range steps[i:j] {
			if st.Send {
				if lo, hi := rangeBytes(n, s.NParts, st.Parts); lo < hi {
					sends = append(sends, c.Isend(st.Peer, tag, buf[lo:hi]))
					peers = append(peers, st.Peer)
				}
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
		i = j
	}
	return nil
}

// Bcast broadcasts buf (its contents significant at the root) from
// s.Root to every rank of c. Every rank passes a buffer of the same length.
func (s *Schedule) Bcast(ctx context.Context, c comm.Comm, buf []byte) error {
	if err := s.check(c, "bcast"); err != nil {
		return err
	}
	n := len(buf)
	if n == 0 || s.Size == 1 {
		return nil
	}
	x := s.For(n)
	if x.Kind == KindHier && len(x.Stages) > 0 {
		return x.wrap("bcast", c, x.bcastStages(ctx, c, buf))
	}
	span := func(r int) (int, int) { return x.spanBytes(n, r) }
	if err := x.treeDown(ctx, c, buf, 0, span, x.SegSize, tagBcast); err != nil {
		return x.wrap("bcast", c, err)
	}
	if x.StepsOf != nil && x.Kind != KindExchange {
		return x.wrap("bcast", c, x.runSteps(ctx, c, n, buf, tagBcastStep))
	}
	return nil
}

// bcastStages runs the stages of a hierarchical schedule: in each, the
// caller joins the sub-communicator of its group (if any) and broadcasts
// there with the group's schedule.
func (s *Schedule) bcastStages(ctx context.Context, c comm.Comm, buf []byte) error {
	me := c.Rank()
	for i, st := range s.Stages {
		for _, g := range st.Groups {
			if !slices.Contains(g.Ranks, me) {
				continue
			}
			sub, err := c.Sub(g.Ranks)
			if err != nil {
				return fmt.Errorf("stage %d: sub-communicator %v: %w", i, g.Ranks, err)
			}
			if err := g.Sched.Bcast(ctx, sub, buf); err != nil {
				return fmt.Errorf("stage %d: %w", i, err)
			}
			break
		}
	}
	return nil
}

// vlayout places variable blocks in the preorder of the tree, so that every
// subtree's blocks are one contiguous run: off[r] is where rank r's block
// starts, sub[r] the bytes of r's whole subtree.
type vlayout struct {
	off, sub []int
	total    int
}

func (s *Schedule) layout(counts []int) vlayout {
	pre := s.Preorder()
	l := vlayout{off: make([]int, s.Size), sub: make([]int, s.Size)}
	for _, r := range pre {
		l.off[r] = l.total
		l.total += counts[r]
	}
	for i := len(pre) - 1; i >= 0; i-- {
		r := pre[i]
		l.sub[r] += counts[r]
		if p := s.Parent[r]; p >= 0 {
			l.sub[p] += l.sub[r]
		}
	}
	return l
}

func (l vlayout) span(r int) (int, int) { return l.off[r], l.off[r] + l.sub[r] }

func checkCounts(op string, counts []int, p int) (displs []int, total int, err error) {
	if len(counts) != p {
		return nil, 0, fmt.Errorf("coll %s: %d counts for %d ranks", op, len(counts), p)
	}
	displs = make([]int, p)
	for r, n := range counts {
		if n < 0 {
			return nil, 0, fmt.Errorf("coll %s: rank %d count %d < 0", op, r, n)
		}
		displs[r] = total
		total += n
	}
	return displs, total, nil
}

// Scatter sends block r of send (at the root: Size blocks of len(recv)
// bytes, in rank order) to rank r's recv. Every rank passes a recv of the
// same length. Only the tree of s is used (pipelined in segments).
func (s *Schedule) Scatter(ctx context.Context, c comm.Comm, send, recv []byte) error {
	counts := make([]int, s.Size)
	for i := range counts {
		counts[i] = len(recv)
	}
	return s.Scatterv(ctx, c, send, counts, recv)
}

// Scatterv sends counts[r] bytes to rank r; the blocks lie in send (at the
// root) one after the other in rank order. Unlike MPI, counts must be given
// on every rank: intermediate ranks of the tree need them to forward.
func (s *Schedule) Scatterv(ctx context.Context, c comm.Comm, send []byte, counts []int, recv []byte) error {
	if err := s.check(c, "scatterv"); err != nil {
		return err
	}
	displs, total, err := checkCounts("scatterv", counts, s.Size)
	if err != nil {
		return err
	}
	me := c.Rank()
	if len(recv) < counts[me] {
		return fmt.Errorf("coll scatterv: rank %d: receive buffer %d bytes < count %d", me, len(recv), counts[me])
	}
	if me == s.Root && len(send) < total {
		return fmt.Errorf("coll scatterv: root %d: send buffer %d bytes < %d", me, len(send), total)
	}
	if total == 0 {
		return nil
	}
	l := s.layout(counts)
	lo, hi := l.span(me)
	buf := make([]byte, hi-lo)
	if me == s.Root {
		for r := range s.Size {
			copy(buf[l.off[r]:], send[displs[r]:displs[r]+counts[r]])
		}
	}
	if err := s.treeDown(ctx, c, buf, lo, l.span, s.SegSize, tagScatter); err != nil {
		return s.wrap("scatterv", c, err)
	}
	copy(recv, buf[:counts[me]])
	return nil
}

// Gather collects every rank's send (all of the same length) into recv at
// the root, in rank order.
func (s *Schedule) Gather(ctx context.Context, c comm.Comm, send, recv []byte) error {
	counts := make([]int, s.Size)
	for i := range counts {
		counts[i] = len(send)
	}
	return s.Gatherv(ctx, c, send, counts, recv)
}

// Gatherv collects counts[r] bytes from rank r into recv at the root, one
// block after the other in rank order; counts must be given on every rank.
func (s *Schedule) Gatherv(ctx context.Context, c comm.Comm, send []byte, counts []int, recv []byte) error {
	if err := s.check(c, "gatherv"); err != nil {
		return err
	}
	displs, total, err := checkCounts("gatherv", counts, s.Size)
	if err != nil {
		return err
	}
	me := c.Rank()
	if len(send) < counts[me] {
		return fmt.Errorf("coll gatherv: rank %d: send buffer %d bytes < count %d", me, len(send), counts[me])
	}
	if me == s.Root && len(recv) < total {
		return fmt.Errorf("coll gatherv: root %d: receive buffer %d bytes < %d", me, len(recv), total)
	}
	if total == 0 {
		return nil
	}
	l := s.layout(counts)
	lo, hi := l.span(me)
	buf := make([]byte, hi-lo)
	copy(buf, send[:counts[me]])
	if err := s.treeUp(ctx, c, buf, lo, l.span, s.SegSize, tagGather); err != nil {
		return s.wrap("gatherv", c, err)
	}
	if me == s.Root {
		for r := range s.Size {
			copy(recv[displs[r]:displs[r]+counts[r]], buf[l.off[r]:])
		}
	}
	return nil
}

// Reduce combines every rank's send element-wise with op along the tree
// of s and leaves the result in recv at the root. A rank combines its own
// data with its children's in send order, so op must be associative and
// commutative for the result not to depend on the tree. Segments are cut
// at element boundaries.
func (s *Schedule) Reduce(ctx context.Context, c comm.Comm, send, recv []byte, op Op) error {
	if err := s.check(c, "reduce"); err != nil {
		return err
	}
	if err := op.check(len(send)); err != nil {
		return fmt.Errorf("coll reduce: %w", err)
	}
	if op.NonCommutative {
		// Children are combined in send order along any tree, not in rank
		// order.
		return fmt.Errorf("coll reduce (%s): reduction %q is not commutative; the tree reduction needs a commutative one", s.Name, op.Name)
	}
	me, n := c.Rank(), len(send)
	if me == s.Root && len(recv) < n {
		return fmt.Errorf("coll reduce: root %d: receive buffer %d bytes < %d", me, len(recv), n)
	}
	if n == 0 {
		return nil
	}
	seg := s.SegSize
	if seg > 0 {
		seg = max(op.ElemSize, seg-seg%op.ElemSize)
	}
	// The accumulator and the children's operands come from bufPools and
	// go back only once every receive and send completed.
	var bufs []*[]byte
	var acc []byte
	if me == s.Root {
		acc = recv[:n]
	} else {
		b := getBuf(n)
		bufs = append(bufs, b)
		acc = *b
	}
	copy(acc, send)
	segs := grid(0, n, seg)
	kids := s.Children[me]
	tmp := make([][]byte, len(kids))
	recvs := make([]recvReq, len(kids)*len(segs))
	for i, k := range kids {
		b := getBuf(n)
		bufs = append(bufs, b)
		tmp[i] = *b
		for gi, g := range segs {
			recvs[i*len(segs)+gi] = recvReq{c.Irecv(k, tagReduce, tmp[i][g.lo:g.hi]), k, g.hi - g.lo}
		}
	}
	parent := s.Parent[me]
	var w window
	for gi, g := range segs {
		for i := range kids {
			if err := recvs[i*len(segs)+gi].wait(ctx); err != nil {
				return s.wrap("reduce", c, err)
			}
			op.Fn(acc[g.lo:g.hi], tmp[i][g.lo:g.hi])
		}
		if parent >= 0 {
			if err := w.open(ctx); err != nil {
				return s.wrap("reduce", c, err)
			}
			w.send(c, parent, tagReduce, acc[g.lo:g.hi])
		}
	}
	if err := w.drain(ctx); err != nil {
		return s.wrap("reduce", c, err)
	}
	for _, b := range bufs {
		putBuf(b)
	}
	return nil
}

// Allgather gives every rank the concatenation, in rank order, of every
// rank's send (all of the same length). A scatter-allgather schedule runs
// only its allgather steps (each rank starts with its own block); any other
// schedule gathers to its root along its tree and broadcasts back.
func (s *Schedule) Allgather(ctx context.Context, c comm.Comm, send, recv []byte) error {
	if err := s.check(c, "allgather"); err != nil {
		return err
	}
	p, b, me := s.Size, len(send), c.Rank()
	if len(recv) < p*b {
		return fmt.Errorf("coll allgather: rank %d: receive buffer %d bytes < %d", me, len(recv), p*b)
	}
	if b == 0 {
		return nil
	}
	if s.Kind == KindScatterAllgather && s.StepsOf != nil && s.NParts == p {
		// Part v of the steps is the block of virtual rank v.
		buf := recv[:p*b]
		if s.Root != 0 {
			buf = make([]byte, p*b)
		}
		v := (me - s.Root + p) % p
		copy(buf[v*b:], send)
		if err := s.runSteps(ctx, c, p*b, buf, tagAllgather); err != nil {
			return s.wrap("allgather", c, err)
		}
		if s.Root != 0 {
			for r := range p {
				v := (r - s.Root + p) % p
				copy(recv[r*b:(r+1)*b], buf[v*b:])
			}
		}
		return nil
	}
	if err := s.Gather(ctx, c, send, recv); err != nil {
		return err
	}
	return s.Bcast(ctx, c, recv[:p*b])
}

// Barrier returns once every rank has entered it: a fan-in to the root
// along the tree of s, then a fan-out. A nil schedule uses the
// dissemination barrier of package comm.
func (s *Schedule) Barrier(ctx context.Context, c comm.Comm) error {
	if s == nil {
		return comm.Barrier(ctx, c)
	}
	if err := s.check(c, "barrier"); err != nil {
		return err
	}
	me := c.Rank()
	var token [0]byte
	var recvs []recvReq
	for _, k := range s.Children[me] {
		recvs = append(recvs, recvReq{c.Irecv(k, tagBarrierIn, token[:]), k, 0})
	}
	for _, r := range recvs {
		if err := r.wait(ctx); err != nil {
			return s.wrap("barrier", c, err)
		}
	}
	if p := s.Parent[me]; p >= 0 {
		if err := c.Send(ctx, p, tagBarrierIn, token[:]); err != nil {
			return s.wrap("barrier", c, fmt.Errorf("send to rank %d: %w", p, err))
		}
		if err := (recvReq{c.Irecv(p, tagBarrierOu, token[:]), p, 0}).wait(ctx); err != nil {
			return s.wrap("barrier", c, err)
		}
	}
	var sends []comm.Request
	for _, k := range s.Children[me] {
		sends = append(sends, c.Isend(k, tagBarrierOu, token[:]))
	}
	return s.wrap("barrier", c, waitSends(ctx, sends, s.Children[me]))
}

// Alltoallv sends sendcounts[j] bytes at senddispls[j] of send to rank j,
// which receives them at recvdispls[me] of its recv (recvcounts[me] bytes).
// It needs no schedule: every receive is posted, then every send, in the
// order me+1, me+2, ... (pairwise-exchange order, so that no rank is the
// target of all others at once), then everything is waited for.
func Alltoallv(ctx context.Context, c comm.Comm, send []byte, sendcounts, senddispls []int, recv []byte, recvcounts, recvdispls []int) error {
	p, me := c.Size(), c.Rank()
	if len(sendcounts) != p || len(senddispls) != p || len(recvcounts) != p || len(recvdispls) != p {
		return fmt.Errorf("coll alltoallv: rank %d: counts and displacements need %d entries", me, p)
	}
	for j := range p {
		if sendcounts[j] < 0 || senddispls[j] < 0 || senddispls[j]+sendcounts[j] > len(send) {
			return fmt.Errorf("coll alltoallv: rank %d: block for rank %d [%d,+%d) outside send buffer of %d bytes", me, j, senddispls[j], sendcounts[j], len(send))
		}
		if recvcounts[j] < 0 || recvdispls[j] < 0 || recvdispls[j]+recvcounts[j] > len(recv) {
			return fmt.Errorf("coll alltoallv: rank %d: block from rank %d [%d,+%d) outside receive buffer of %d bytes", me, j, recvdispls[j], recvcounts[j], len(recv))
		}
	}
	if sendcounts[me] != recvcounts[me] {
		return fmt.Errorf("coll alltoallv: rank %d: sends %d bytes to itself but expects %d", me, sendcounts[me], recvcounts[me])
	}
	var recvs []recvReq
	for k := 1; k < p; k++ {
		j := (me - k + p) % p
		recvs = append(recvs, recvReq{c.Irecv(j, tagAlltoallv, recv[recvdispls[j]:recvdispls[j]+recvcounts[j]]), j, recvcounts[j]})
	}
	var sends []comm.Request
	var peers []int
	for k := 1; k < p; k++ {
		j := (me + k) % p
		sends = append(sends, c.Isend(j, tagAlltoallv, send[senddispls[j]:senddispls[j]+sendcounts[j]]))
		peers = append(peers, j)
	}
	copy(recv[recvdispls[me]:recvdispls[me]+recvcounts[me]], send[senddispls[me]:senddispls[me]+sendcounts[me]])
	for _, r := range recvs {
		if err := r.wait(ctx); err != nil {
			return fmt.Errorf("coll alltoallv at rank %d: %w", me, err)
		}
	}
	if err := waitSends(ctx, sends, peers); err != nil {
		return fmt.Errorf("coll alltoallv at rank %d: %w", me, err)
	}
	return nil
}
