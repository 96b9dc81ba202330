package probe

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"netaware/comm"
	"netaware/dataset"
)

// Operations the sender asks of the receiver (serveSender).
const (
	opDone   = 0
	opPing   = 1 // A = m, B = reps: m-byte ping, zero-byte reply (RTT(m))
	opRecvOH = 2 // A = m, B = reps: m-byte ping, m-byte reply (o_r(m))
	opSat    = 3 // A = m, B = n: n messages, one zero-byte reply (g(m))
	opBulk   = 4 // A = m, B = reps: m bytes, zero-byte acknowledgement each
	opEcho   = 5 // A = m, B = reps: m-byte ping, m-byte reply (Hockney)
)

// pairLink is the sender's handle on a measurement session with a receiver.
type pairLink struct {
	c    comm.Comm
	peer int
	clk  time.Duration
	buf  []byte
	rbuf []byte
}

// ensure sizes the link's buffers for m bytes: what it sends is never
// read, so it sends zeros shared by the process (comm.Zeros); replies
// need a buffer of its own.
func (l *pairLink) ensure(m int) {
	if len(l.buf) < m {
		l.buf = comm.Zeros(m)
		putBuf(l.rbuf)
		l.rbuf = getBuf(m)
	}
}

// release returns the link's reply buffer to the pool once every send is
// done.
func (l *pairLink) release() {
	putBuf(l.rbuf)
	l.buf, l.rbuf = nil, nil
}

// bufPool recycles message buffers between pairs: a campaign measures
// thousands of pairs with the same sizes, and allocating (and clearing)
// megabytes per pair would dominate the simulator's run time.
var bufPool sync.Pool

func getBuf(n int) []byte {
	if v, ok := bufPool.Get().(*[]byte); ok && cap(*v) >= n {
		return (*v)[:n]
	}
	return make([]byte, n)
}

func putBuf(b []byte) {
	if cap(b) > 0 {
		bufPool.Put(&b)
	}
}

// start tells the receiver the next operation and waits until it is posted
// (the "synchronize sender and receiver" step of every seed procedure).
func (l *pairLink) start(ctx context.Context, op, a, b int) error {
	if err := l.c.Send(ctx, l.peer, tagCtl, ctlMsg{Op: int64(op), A: int64(a), B: int64(b)}.encode()); err != nil {
		return err
	}
	if op == opDone {
		return nil
	}
	_, err := l.c.Recv(ctx, l.peer, tagReady, nil)
	return err
}

// ping runs reps round trips of an m-byte message answered by a zero-byte
// reply (echo false: PLogP's RTT(m), Fig. 2.1) or by the same m bytes (echo
// true: a classic ping-pong), and returns the RTTs and the times of the
// sends.
func (l *pairLink) ping(ctx context.Context, m, reps int, ssend, echo bool) (rtt, os []float64, err error) {
	l.ensure(m)
	op, reply := opPing, 0
	if echo {
		op, reply = opEcho, m
	}
	if err := l.start(ctx, op, m, reps); err != nil {
		return nil, nil, err
	}
	for i := 0; i < reps; i++ {
		start := l.c.Now()
		if ssend {
			err = l.c.Ssend(ctx, l.peer, tagData, l.buf[:m])
		} else {
			err = l.c.Send(ctx, l.peer, tagData, l.buf[:m])
		}
		if err != nil {
			return nil, nil, err
		}
		sent := l.c.Now()
		if _, err := l.c.Recv(ctx, l.peer, tagReply, l.rbuf[:reply]); err != nil {
			return nil, nil, err
		}
		end := l.c.Now()
		os = append(os, (sent - start - l.clk).Seconds())
		rtt = append(rtt, (end - start - 2*l.clk).Seconds())
	}
	return rtt, os, nil
}

// recvOverhead is measure_recv of Fig. 3.6: send, spin until k*rtt after
// the send, then time the receive of the reply that has already arrived.
func (l *pairLink) recvOverhead(ctx context.Context, m, reps int, wait time.Duration) ([]float64, error) {
	l.ensure(m)
	if err := l.start(ctx, opRecvOH, m, reps); err != nil {
		return nil, err
	}
	var or []float64
	for i := 0; i < reps; i++ {
		sendTime := l.c.Now()
		if err := l.c.Send(ctx, l.peer, tagData, l.buf[:m]); err != nil {
			return nil, err
		}
		l.c.Spin(sendTime + wait - l.c.Now())
		recvStart := l.c.Now()
		if _, err := l.c.Recv(ctx, l.peer, tagReply, l.rbuf[:m]); err != nil {
			return nil, err
		}
		or = append(or, (l.c.Now() - recvStart - l.clk).Seconds())
	}
	return or, nil
}

// batch sends n messages of m bytes back to back and waits for the single
// reply; it returns the total time.
func (l *pairLink) batch(ctx context.Context, m, n int) (time.Duration, error) {
	l.ensure(m)
	if err := l.start(ctx, opSat, m, n); err != nil {
		return 0, err
	}
	start := l.c.Now()
	for i := 0; i < n; i++ {
		if err := l.c.Send(ctx, l.peer, tagData, l.buf[:m]); err != nil {
			return 0, err
		}
	}
	if _, err := l.c.Recv(ctx, l.peer, tagReply, nil); err != nil {
		return 0, err
	}
	return l.c.Now() - start - l.clk, nil
}

// saturate is seed 003's link-saturation measurement of g(m): batches of n
// = SatStart, 2*SatStart, ... messages until the average time per message
// moves by at most Eps, or n reaches SatMax.
func (l *pairLink) saturate(ctx context.Context, m int, p dataset.PLogPParams) (g float64, n int, err error) {
	prev := -1.0
	for n = p.SatStart; ; n = min(2*n, p.SatMax) {
		t, err := l.batch(ctx, m, n)
		if err != nil {
			return 0, 0, err
		}
		avg := t.Seconds() / float64(n)
		if prev > 0 && math.Abs(avg-prev) <= p.Eps*prev {
			return avg, n, nil
		}
		if n >= p.SatMax {
			return avg, n, nil
		}
		prev = avg
	}
}

// serveSender is the receiver's side of every sender-driven operation: it
// follows the control messages until opDone.
func serveSender(ctx context.Context, c comm.Comm, peer int) error {
	ctl := make([]byte, ctlSize)
	var buf []byte
	defer func() { putBuf(buf) }()
	for {
		st, err := c.Recv(ctx, peer, tagCtl, ctl)
		if err != nil {
			return err
		}
		m := decodeCtl(ctl[:st.Count])
		size, count := int(m.A), int(m.B)
		if m.Op == opDone {
			return nil
		}
		if size < 0 || size > 1<<30 || count < 0 {
			return fmt.Errorf("bad control message %+v from %d", m, peer)
		}
		if len(buf) < size {
			putBuf(buf)
			buf = getBuf(size)
		}
		if err := c.Send(ctx, peer, tagReady, nil); err != nil {
			return err
		}
		switch m.Op {
		case opPing, opRecvOH, opEcho:
			reply := size
			if m.Op == opPing {
				reply = 0
			}
			for i := 0; i < count; i++ {
				if _, err := c.Recv(ctx, peer, tagData, buf[:size]); err != nil {
					return err
				}
				if err := c.Send(ctx, peer, tagReply, buf[:reply]); err != nil {
					return err
				}
			}
		case opSat, opBulk:
			for i := 0; i < count; i++ {
				if _, err := c.Recv(ctx, peer, tagData, buf[:size]); err != nil {
					return err
				}
				if m.Op == opBulk {
					if err := c.Send(ctx, peer, tagReply, nil); err != nil {
						return err
					}
				}
			}
			if m.Op == opSat {
				if err := c.Send(ctx, peer, tagReply, nil); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("unknown operation %d from %d", m.Op, peer)
		}
	}
}

// PLogPPair measures the PLogP parameters from the calling rank (the
// sender) to peer (the receiver), which must call PLogPServe(ctx, c,
// sender) at the same time. Both sides need no shared state but the
// communicator.
//
// Procedure (seed 003 Sect. 3.1.2): for each size m (0, then 2^i up to M),
// R round trips timing the send (o_s(m)) and the round trip (RTT(m), m
// bytes out, zero bytes back); R m-byte round trips where the sender spins
// K times the expected round trip after its send and then times the
// receive of the reply (o_r(m)); g(m) by saturation for m <= SatMaxBytes and by Eq. 3.1
// above; L by Eq. 3.2. Then extra sizes are measured at midpoints where
// RTT(m) is not within MidpointEps of the interpolation of its neighbours.
func PLogPPair(ctx context.Context, c comm.Comm, peer int, p dataset.PLogPParams) (*dataset.PLogPResult, error) {
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	l := &pairLink{c: c, peer: peer, clk: time.Duration(p.ClockOverheadS * 1e9)}
	defer l.release()
	l.ensure(p.MaxBytes)
	res, err := plogpRun(ctx, l, p)
	if err != nil {
		return nil, fmt.Errorf("plogp %d->%d: %w", c.Rank(), peer, err)
	}
	if err := l.start(ctx, opDone, 0, 0); err != nil {
		return nil, fmt.Errorf("plogp %d->%d: %w", c.Rank(), peer, err)
	}
	res.LogGP.P = c.Size()
	return res, nil
}

// PLogPServe is the receiver's side of PLogPPair (and of HockneyPair and
// BandwidthPair): it answers the sender until the sender is done.
func PLogPServe(ctx context.Context, c comm.Comm, sender int) error {
	if err := serveSender(ctx, c, sender); err != nil {
		return fmt.Errorf("probe %d->%d (receiver): %w", sender, c.Rank(), err)
	}
	return nil
}

func plogpRun(ctx context.Context, l *pairLink, p dataset.PLogPParams) (*dataset.PLogPResult, error) {
	res := &dataset.PLogPResult{}
	var rtt0 float64
	measure := func(m int, extra bool) (dataset.PLogPSize, error) {
		s := dataset.PLogPSize{Bytes: m, Extra: extra}
		rtt, os, err := l.ping(ctx, m, p.Reps, p.Ssend, false)
		if err != nil {
			return s, fmt.Errorf("%d bytes, round trips: %w", m, err)
		}
		s.RTT, s.Os = Summarize(rtt), Summarize(os)
		// The o_r round trip answers m bytes with m bytes; by the model
		// it takes 2L + 2g(m) = RTT(m) + (RTT(m) - RTT(0)) (Eq. 3.1).
		expect := s.RTT.Mean
		if m > 0 {
			expect = 2*s.RTT.Mean - rtt0
		}
		wait := time.Duration(p.K * expect * 1e9)
		or, err := l.recvOverhead(ctx, m, p.Reps, wait)
		if err != nil {
			return s, fmt.Errorf("%d bytes, receive overhead: %w", m, err)
		}
		s.Or = Summarize(or)
		if m == 0 || m <= p.SatMaxBytes {
			g, n, err := l.saturate(ctx, m, p)
			if err != nil {
				return s, fmt.Errorf("%d bytes, saturation: %w", m, err)
			}
			s.GS, s.GMethod, s.SatMessages = g, "saturation", n
		} else {
			s.GS, s.GMethod = s.RTT.Mean-rtt0+res.G0S, "eq3.1"
		}
		if p.KeepSamples {
			s.Samples = &dataset.PLogPSamples{RTT: rtt, Os: os, Or: or}
		}
		return s, nil
	}
	for _, m := range p.Sizes() {
		s, err := measure(m, false)
		if err != nil {
			return nil, err
		}
		if m == 0 {
			rtt0, res.G0S = s.RTT.Mean, s.GS
			res.LS = (rtt0 - 2*res.G0S) / 2 // Eq. 3.2
		}
		res.Sizes = append(res.Sizes, s)
	}
	extra := 0
	for p.MaxExtra > -2 {
		mids := midpoints(res.Sizes, p)
		if len(mids) == 0 {
			break
		}
		for _, m := range mids {
			if p.MaxExtra >= 0 && extra >= p.MaxExtra {
				break
			}
			s, err := measure(m, true)
			if err != nil {
				return nil, err
			}
			res.Sizes = append(res.Sizes, s)
			extra++
		}
		sort.Slice(res.Sizes, func(i, j int) bool { return res.Sizes[i].Bytes < res.Sizes[j].Bytes })
		if p.MaxExtra >= 0 && extra >= p.MaxExtra {
			break
		}
	}
	res.LogGP = deriveLogGP(res)
	return res, nil
}

// midpoints returns the sizes to measure next: for every interior size b
// with neighbours a < b < c whose RTT misses the line through a and c by
// more than MidpointEps, the midpoints of (a,b) and (b,c) when those gaps
// are wider than MinGapBytes and the midpoint is not measured yet.
func midpoints(sizes []dataset.PLogPSize, p dataset.PLogPParams) []int {
	have := map[int]bool{}
	for _, s := range sizes {
		have[s.Bytes] = true
	}
	var out []int
	add := func(lo, hi int) {
		if hi-lo <= p.MinGapBytes {
			return
		}
		mid := lo + (hi-lo)/2
		if !have[mid] {
			have[mid] = true
			out = append(out, mid)
		}
	}
	for i := 1; i+1 < len(sizes); i++ {
		a, b, c := sizes[i-1], sizes[i], sizes[i+1]
		want := a.RTT.Mean + (c.RTT.Mean-a.RTT.Mean)*float64(b.Bytes-a.Bytes)/float64(c.Bytes-a.Bytes)
		if math.Abs(b.RTT.Mean-want) > p.MidpointEps*math.Abs(b.RTT.Mean) {
			add(a.Bytes, b.Bytes)
			add(b.Bytes, c.Bytes)
		}
	}
	sort.Ints(out)
	return out
}

// deriveLogGP applies seed 003 Table 2.1.
func deriveLogGP(r *dataset.PLogPResult) dataset.LogGP {
	var lg dataset.LogGP
	one, ok := r.At(1)
	if !ok {
		return lg
	}
	lg.LS = r.LS + one.GS - one.Os.Mean - one.Or.Mean
	lg.OS = (one.Os.Mean + one.Or.Mean) / 2
	lg.GS = one.GS
	last := r.Sizes[len(r.Sizes)-1]
	if last.Bytes > 0 {
		lg.GPerByteS = last.GS / float64(last.Bytes)
		lg.GFromBytes = last.Bytes
	}
	return lg
}
