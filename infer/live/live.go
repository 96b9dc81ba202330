// Package live runs RTT tree inference among live ranks of a comm.Comm
// (seed 002 Sect. 4, Fig. 8): the tree under construction is handed from
// rank to rank, H_i adds itself by measuring RTTs to ranks already in the
// tree, and the tree is also sent ahead to H_{i+10} so that it can look for
// close hosts early. Every rank answers pings at all times, so measurements
// never wait for a peer to finish its own work.
package live

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"netaware/comm"
	"netaware/infer"
)

// Message kinds, one byte at the head of every protocol message. All
// messages travel on a private duplicate of the caller's communicator, so a
// single receive with AnySource sees exactly this protocol.
const (
	kindPing byte = iota + 1
	kindPong
	kindAhead // T_{i-Ahead}, for find_close_host
	kindTree  // T_{i-1}, to add oneself to
	kindDone  // the final tree, relayed along a binomial tree
)

// Tags on the private communicator: the protocol and tree bodies (after
// their header on tagProtocol). The measurements are gathered at the end
// by comm.GatherBytesRoot, on its own tag.
const (
	tagProtocol = 0
	tagTree     = 2
)

// Params of the pair measurement (seed 002 Fig. 6).
type Params struct {
	Rounds       int // rounds per pair (seed 002: 3; default 6)
	MaxExchanges int // ping-pongs per round at most (30)
	Stale        int // end a round after this many exchanges without a new best (10)
	Seed         uint64
	// Joined, if set, is called by each rank once it is in the tree, with
	// the ranks in the tree so far (ranks join in rank order, so rank i
	// reports i+1) and the world size: progress for a caller whose ranks
	// share its process (simulator, goroutines), where the calls come from
	// every rank, one after the other along the chain. A rank of a TCP
	// world sees only its own call. It must not block.
	Joined func(inTree, total int)
}

// DefaultParams are the values of seed 002 but for the rounds: 6, not 3.
// On round trips recorded on emulated clusters (kernel TCP, CPU delays
// in spells) 6 rounds took the switch level from 18, 9, 4 and 7 to 19,
// 18, 10 and 17 of 20 replays at the same number of pairs
// (TestReplayEmuRecordings); going on to 6 only where 3 rounds disagreed
// did worse (18, 13, 8, 12): a spell can cover three rounds that agree.
func DefaultParams() Params { return Params{Rounds: 6, MaxExchanges: 30, Stale: 10, Seed: 1} }

// Result is what every rank gets back.
type Result struct {
	Tree            *infer.Tree
	AddMeasurements int // measurements by procedure add (Sect. 3.3 bound)
	Pairs           int // distinct rank pairs measured in all
	Exchanges       int // ping-pong round trips in all
	// Measured holds every pair measurement (initiator A, responder B), on
	// rank 0 only, in initiator order.
	Measured []Measurement
}

// Measurement is one pair's result of seed 002's protocol.
type Measurement = infer.Measurement

// Infer runs the distributed inference on every rank of c (collective: all
// ranks call it) and returns the same tree on every rank. Ranks join the
// tree in rank order.
func Infer(ctx context.Context, c comm.Comm, p Params) (Result, error) {
	n := c.Size()
	dup, err := comm.Dup(c)
	if err != nil {
		return Result{}, err
	}
	r := &runner{c: dup, p: p, me: c.Rank(), n: n}
	res, err := r.run(ctx)
	if err != nil {
		return res, err
	}
	res.Measured, err = gatherMeasurements(ctx, dup, r.known)
	return res, err
}

// gatherMeasurements collects every rank's measurements on rank 0.
func gatherMeasurements(ctx context.Context, c comm.Comm, known map[int]infer.RTT) ([]Measurement, error) {
	peers := make([]int, 0, len(known))
	for j := range known {
		peers = append(peers, j)
	}
	slices.Sort(peers)
	const rec = 28 // rank, min, max, next
	enc := make([]byte, 0, rec*len(peers))
	for _, j := range peers {
		enc = binary.LittleEndian.AppendUint32(enc, uint32(j))
		enc = binary.LittleEndian.AppendUint64(enc, math.Float64bits(known[j].Min))
		enc = binary.LittleEndian.AppendUint64(enc, math.Float64bits(known[j].Max))
		enc = binary.LittleEndian.AppendUint64(enc, math.Float64bits(known[j].Next))
	}
	// Along a binomial tree: every rank sending to rank 0 at once put N
	// flows on its link, which the simulator re-solves at each event.
	parts, err := comm.GatherBytesRoot(ctx, c, enc, rec*c.Size())
	if err != nil || c.Rank() != 0 {
		return nil, err
	}
	var out []Measurement
	for a, b := range parts {
		for ; len(b) >= rec; b = b[rec:] {
			out = append(out, Measurement{A: a, B: int(binary.LittleEndian.Uint32(b)), RTT: infer.RTT{
				Min:  math.Float64frombits(binary.LittleEndian.Uint64(b[4:])),
				Max:  math.Float64frombits(binary.LittleEndian.Uint64(b[12:])),
				Next: math.Float64frombits(binary.LittleEndian.Uint64(b[20:])),
			}})
		}
	}
	return out, nil
}

// The protocol never blocks on a send. A rank waits only in receives,
// and every send it starts is either known to have been received before it
// is waited for (a ping, once its pong is back; a pong, once the same
// peer's next ping arrives) or left pending until the rank has received
// the final tree, after which it expects no protocol message and may block
// until its sends complete. So the protocol is the same whether a send is
// eager (complete at once) or a rendezvous (complete once the receiver has
// matched it): it holds for any eager limit of the world, zero included.
//
// Trees travel as a small header on tagProtocol (kind, running counts,
// body length) followed by the body on tagTree from the same source, so
// that the receive buffer for protocol messages is small and fixed and a
// tree's buffer is allocated at its exact size only when one arrives.

type runner struct {
	c     comm.Comm
	p     Params
	me, n int
	buf   [hdrSize]byte
	seq   uint64
	ahead *infer.Tree
	tree  *infer.Tree
	// counts are the add measurements, pairs and exchanges carried along
	// the chain.
	counts  [3]int
	done    *Result
	exch    int
	known   map[int]infer.RTT
	pending []comm.Request       // tree sends, waited for once done
	pongs   map[int]comm.Request // the last pong sent to each pinger
}

// hdrSize is the largest protocol message: a tree header.
const hdrSize = 1 + 8*4

func (r *runner) run(ctx context.Context) (Result, error) {
	if r.n == 1 {
		return Result{Tree: infer.NewTree(0)}, nil
	}
	if r.me == 0 {
		r.joined()
		enc, _ := infer.NewTree(0).MarshalBinary()
		r.pass(enc)
	} else {
		if err := r.addSelf(ctx); err != nil {
			return Result{}, err
		}
	}
	for r.done == nil {
		if err := r.step(ctx); err != nil {
			return Result{}, err
		}
	}
	// Nothing more is addressed to this rank on the protocol: every send it
	// started has been or will be received without its help.
	for _, q := range r.pongs {
		r.pending = append(r.pending, q)
	}
	r.pongs = nil
	if err := comm.Wait(ctx, r.pending...); err != nil {
		return Result{}, err
	}
	r.pending = nil
	return *r.done, nil
}

// addSelf is infer_local of Fig. 8 for this rank.
func (r *runner) addSelf(ctx context.Context) error {
	ad := infer.NewAdder(r.me, prober{r, ctx}, r.p.Seed)
	if r.me >= infer.Ahead {
		for r.ahead == nil {
			if err := r.step(ctx); err != nil {
				return err
			}
		}
		if _, err := ad.FindCloseHost(r.ahead); err != nil {
			return err
		}
	}
	for r.tree == nil {
		if err := r.step(ctx); err != nil {
			return err
		}
	}
	t := r.tree
	if r.me < infer.Ahead {
		if _, err := ad.FindCloseHost(t); err != nil {
			return err
		}
	} else if err := ad.MeasureNewcomers(t, r.ahead); err != nil {
		return err
	}
	if err := ad.Add(t, ad.Closest(t)); err != nil {
		return err
	}
	// The trees are the next ranks' business now: a rank keeps none of
	// them while it waits for the end.
	r.tree, r.ahead = nil, nil
	r.known = ad.Known
	r.counts[0] += ad.AddRTT
	r.counts[1] += ad.Measured()
	r.counts[2] += r.exch
	r.joined()
	enc, _ := t.MarshalBinary()
	if r.me == r.n-1 {
		res := Result{Tree: sharedTree(enc, t), AddMeasurements: r.counts[0], Pairs: r.counts[1], Exchanges: r.counts[2]}
		r.done = &res
		r.relayDone(enc)
		return nil
	}
	r.pass(enc)
	return nil
}

func (r *runner) joined() {
	if r.p.Joined != nil {
		r.p.Joined(r.me+1, r.n)
	}
}

// pass sends T_i (encoded) on to H_{i+1} with the running counts, and
// ahead to H_{i+Ahead}.
func (r *runner) pass(enc []byte) {
	r.sendTree(r.me+1, kindTree, enc)
	if r.me+infer.Ahead < r.n {
		r.sendTree(r.me+infer.Ahead, kindAhead, enc)
	}
}

// sendTree starts sending a tree header and body to dst; they complete
// in the background and are waited for at the end.
func (r *runner) sendTree(dst int, kind byte, enc []byte) {
	h := make([]byte, hdrSize)
	h[0] = kind
	for i, v := range r.counts {
		binary.LittleEndian.PutUint64(h[1+8*i:], uint64(v))
	}
	binary.LittleEndian.PutUint64(h[1+24:], uint64(len(enc)))
	r.pending = append(r.pending, r.c.Isend(dst, tagProtocol, h), r.c.Isend(dst, tagTree, enc))
}

// relayDone forwards the final tree (encoded) along a binomial tree
// rooted at the last rank.
func (r *runner) relayDone(enc []byte) {
	rel := (r.me - (r.n - 1) + r.n) % r.n // rank relative to the root
	low := rel & -rel
	if rel == 0 {
		low = 1
		for low < r.n {
			low <<= 1
		}
	}
	for k := low >> 1; k >= 1; k >>= 1 {
		if rel+k < r.n {
			r.sendTree((rel+k+r.n-1)%r.n, kindDone, enc)
		}
	}
}

// step receives one protocol message and handles it.
func (r *runner) step(ctx context.Context) error {
	st, err := r.c.Recv(ctx, comm.AnySource, tagProtocol, r.buf[:])
	if err != nil {
		return err
	}
	return r.handle(ctx, st.Source, r.buf[:st.Count])
}

func (r *runner) handle(ctx context.Context, src int, m []byte) error {
	if len(m) == 0 {
		return fmt.Errorf("infer: empty message from rank %d", src)
	}
	switch m[0] {
	case kindPing:
		if len(m) != 9 {
			return fmt.Errorf("infer: ping of %d bytes from rank %d", len(m), src)
		}
		if q := r.pongs[src]; q != nil {
			// src sends a ping only once it has our previous pong: that
			// send is complete.
			if _, err := q.Wait(ctx); err != nil {
				return err
			}
		}
		reply := append([]byte{kindPong}, m[1:]...)
		if r.pongs == nil {
			r.pongs = map[int]comm.Request{}
		}
		r.pongs[src] = r.c.Isend(src, tagProtocol, reply)
		return nil
	case kindPong:
		return fmt.Errorf("infer: unexpected pong from rank %d", src)
	case kindAhead, kindTree, kindDone:
		if len(m) != hdrSize {
			return fmt.Errorf("infer: tree header of %d bytes from rank %d", len(m), src)
		}
		size := binary.LittleEndian.Uint64(m[1+24:])
		if size == 0 || size > uint64(infer.EncodedSize(2*r.n)) {
			return fmt.Errorf("infer: rank %d announces a tree of %d bytes for %d ranks", src, size, r.n)
		}
		var counts [3]int
		for i := range counts {
			counts[i] = int(binary.LittleEndian.Uint64(m[1+8*i:]))
		}
		kind := m[0]
		// The body was sent right after the header: this receive needs
		// nothing more from src.
		var enc []byte
		if kind == kindDone {
			enc = make([]byte, size) // the final tree's bytes stay (decodeShared keeps them)
		} else {
			enc = treeBuffer(int(size))
		}
		if _, err := r.c.Recv(ctx, src, tagTree, enc); err != nil {
			return fmt.Errorf("infer: tree from rank %d: %w", src, err)
		}
		var t *infer.Tree
		var err error
		if kind == kindDone {
			t, err = decodeShared(enc)
		} else if t, err = infer.UnmarshalTree(enc); err == nil {
			// Only after a receive that completed: a failed one may still
			// have the buffer in use.
			treeBuffers.Put(&enc)
		}
		if err != nil {
			return fmt.Errorf("infer: tree from rank %d: %w", src, err)
		}
		switch kind {
		case kindAhead:
			r.ahead = t
		case kindTree:
			r.tree, r.counts = t, counts
		case kindDone:
			r.done = &Result{Tree: t, AddMeasurements: counts[0], Pairs: counts[1], Exchanges: counts[2]}
			r.counts = counts // the totals, relayed as received
			r.relayDone(enc)
		}
		return nil
	}
	return fmt.Errorf("infer: unknown message kind %d from rank %d", m[0], src)
}

// treeBuffers holds receive buffers of trees once decoded: every rank
// receives two trees of the whole inference so far, and in the simulator,
// where all ranks share a process, a fresh buffer each was 0.5 GB of
// garbage at 4,096 ranks.
var treeBuffers sync.Pool

func treeBuffer(size int) []byte {
	if p, ok := treeBuffers.Get().(*[]byte); ok && cap(*p) >= size {
		return (*p)[:size]
	}
	return make([]byte, size, size+size/8)
}

// pingPong measures one round trip to peer, answering other ranks' pings
// (and queueing their trees) while it waits.
func (r *runner) pingPong(ctx context.Context, peer int) (time.Duration, error) {
	r.seq++
	var ping [9]byte
	ping[0] = kindPing
	binary.LittleEndian.PutUint64(ping[1:], r.seq)
	t0 := r.c.Now()
	// Non-blocking: the peer may be pinging this rank at the same moment,
	// and two blocking rendezvous sends would wait for each other.
	q := r.c.Isend(peer, tagProtocol, ping[:])
	for {
		st, err := r.c.Recv(ctx, comm.AnySource, tagProtocol, r.buf[:])
		if err != nil {
			return 0, err
		}
		m := r.buf[:st.Count]
		if len(m) == 9 && m[0] == kindPong && st.Source == peer && binary.LittleEndian.Uint64(m[1:]) == r.seq {
			d := r.c.Now() - t0
			r.exch++
			// The peer answered: it has received the ping.
			if _, err := q.Wait(ctx); err != nil {
				return 0, err
			}
			return d, nil
		}
		if err := r.handle(ctx, st.Source, m); err != nil {
			return 0, err
		}
	}
}

// prober measures from this rank with seed 002's protocol (Fig. 6): rounds
// of ping-pongs that end when the best has not improved for Stale
// exchanges or after MaxExchanges; the min and max of the rounds' bests.
type prober struct {
	r   *runner
	ctx context.Context
}

func (p prober) RTT(a, b int) (infer.RTT, error) {
	if a != p.r.me {
		return infer.RTT{}, errors.New("infer: live prober measures from its own rank only")
	}
	return MeasurePair(p.r.p, func() (time.Duration, error) { return p.r.pingPong(p.ctx, b) })
}

// MeasurePair runs seed 002's pair protocol (Fig. 6) over a ping-pong
// function and returns the min and max over the rounds of each round's
// best RTT, and the second best, in seconds.
func MeasurePair(p Params, pingPong func() (time.Duration, error)) (infer.RTT, error) {
	res := infer.RTT{Min: math.Inf(1), Max: math.Inf(-1)}
	bests := make([]float64, 0, p.Rounds)
	for round := 0; round < p.Rounds; round++ {
		best := time.Duration(math.MaxInt64)
		stale := 0
		for j := 0; j < p.MaxExchanges && stale < p.Stale; j++ {
			rtt, err := pingPong()
			if err != nil {
				return infer.RTT{}, err
			}
			if rtt < best {
				best, stale = rtt, 0
			} else {
				stale++
			}
		}
		s := best.Seconds()
		res.Min = math.Min(res.Min, s)
		res.Max = math.Max(res.Max, s)
		bests = append(bests, s)
	}
	if len(bests) > 1 {
		slices.Sort(bests)
		res.Next = bests[1]
	}
	return res, nil
}
