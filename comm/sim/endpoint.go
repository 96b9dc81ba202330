package sim

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"netaware/comm"
	"netaware/netsim"
)

// The endpoint methods run on the rank's goroutine while it holds the
// baton, so they touch kernel state without locks.

func (r *rank) Rank() int               { return r.id }
func (r *rank) Size() int               { return len(r.k.ranks) }
func (r *rank) Now() time.Duration      { return seconds(r.k.now) }
func (r *rank) Identity() comm.Identity { return r.ident }

// SerialMemory: one rank runs at a time, and the kernel copies messages
// while every rank waits (comm.Scratch).
func (r *rank) SerialMemory() bool { return true }

// Spin busy-waits d of virtual time. Once the run is aborted, Spin ends the
// rank (runtime.Goexit, deferred calls run): it cannot report the failure,
// and a loop of Spins waiting for time to pass would otherwise never end.
func (r *rank) Spin(d time.Duration) {
	if r.k.abortErr != nil {
		runtime.Goexit()
	}
	if d > 0 {
		r.sleep(d.Seconds())
	}
}

// sleep blocks the rank for s seconds of virtual time (returns at once once
// the run is aborted).
func (r *rank) sleep(s float64) {
	if s <= 0 || r.k.abortErr != nil {
		return
	}
	k := r.k
	k.at(k.now+s, func() { k.makeReady(r) })
	r.block()
}

type opKind uint8

const (
	opSend opKind = iota
	opSsend
	opRecv
)

func (o opKind) String() string {
	switch o {
	case opSend:
		return "Send"
	case opSsend:
		return "Ssend"
	}
	return "Recv"
}

// request is a pending send or receive of one rank.
type request struct {
	owner *rank
	op    opKind
	cid   uint64
	peer  int // destination, or source (may be AnySource)
	tag   int
	buf   []byte // receive buffer
	since float64

	done bool
	st   comm.Status
	err  error
}

func (q *request) complete(st comm.Status, err error) {
	if q.done {
		return
	}
	q.done, q.st, q.err = true, st, err
	k := q.owner.k
	if k.log != nil {
		k.logf("complete rank=%d op=%v peer=%d tag=%d err=%v", q.owner.id, q.op, q.peer, q.tag, err != nil)
	}
	if q.owner.waiting == q {
		k.makeReady(q.owner)
	}
}

func (q *request) Wait(ctx context.Context) (comm.Status, error) {
	r := q.owner
	for !q.done {
		if err := r.k.abortErr; err != nil {
			return comm.Status{}, err
		}
		if err := ctx.Err(); err != nil {
			return comm.Status{}, err
		}
		r.waiting = q
		r.block()
		r.waiting = nil
	}
	return q.st, q.err
}

// Test reports completion; a request still pending costs the poll interval
// of virtual time, so that polling loops let the simulation advance.
func (q *request) Test() (bool, comm.Status, error) {
	if q.done {
		return true, q.st, q.err
	}
	if err := q.owner.k.abortErr; err != nil {
		return true, comm.Status{}, err
	}
	q.owner.sleep(q.owner.k.poll)
	if q.done {
		return true, q.st, q.err
	}
	return false, comm.Status{}, nil
}

// message is one point-to-point message in flight.
type message struct {
	id        int64
	src, dst  int
	cid       uint64
	tag       int
	data      []byte // the sender's buffer, or its sentCopy once the send completed
	size      int
	eager     bool
	sync      bool
	send      *request
	recv      *request // once matched
	dataDone  bool
	sendDone  bool // completed before its data arrived (send buffer)
	truncated bool // the receive failed: the data is dropped
}

// Isend charges the sender's overhead (the rank is busy for it), then puts
// the message on the wire: eagerly (envelope and data together) up to the
// eager limit, otherwise as a rendezvous (RTS; CTS back; data).
func (r *rank) Isend(cid uint64, dst, tag int, b []byte, sync bool) comm.Request {
	k := r.k
	op := opSend
	if sync {
		op = opSsend
	}
	q := &request{owner: r, op: op, cid: cid, peer: dst, tag: tag, since: k.now}
	if dst < 0 || dst >= len(k.ranks) {
		return comm.Failed(fmt.Errorf("sim: send to rank %d out of range [0,%d)", dst, len(k.ranks)))
	}
	if err := k.abortErr; err != nil {
		return comm.Failed(err)
	}
	if os := r.ov.SendS + r.ov.SendPerByteS*float64(len(b)); os > 0 {
		// The rank's CPU injects the message after any overhead it is
		// still busy with (receives being processed).
		r.busy = max(k.now, r.busy) + os
		r.sleep(r.busy - k.now)
	}
	if err := k.abortErr; err != nil {
		return comm.Failed(err)
	}
	k.messages++
	m := &message{id: k.messages, src: r.id, dst: dst, cid: cid, tag: tag, size: len(b), sync: sync, send: q}
	m.eager = k.eager >= 0 && len(b) <= k.eager
	if k.log != nil {
		k.logf("send msg=%d %d->%d cid=%d tag=%d bytes=%d eager=%v sync=%v", m.id, r.id, dst, cid, tag, len(b), m.eager, sync)
	}
	if m.eager {
		m.data = r.sentCopy(b)
		k.post(m, itemEager, r.id, dst)
		if !sync {
			q.complete(comm.Status{}, nil)
		}
	} else {
		m.data = b
		k.post(m, itemRTS, r.id, dst)
	}
	return q
}

// sentCopy is the copy a message carries once its send has completed
// before its bytes arrived (an eager message, or a rendezvous whose bytes
// fit the socket's send buffer): the sender may reuse b. A sender that sends the same unchanged buffer
// again (a saturation batch: 320 messages of up to 64 KiB in flight per
// pair) shares the previous copy, which nobody writes to (deliver copies
// out of it), instead of queueing a copy per message.
func (r *rank) sentCopy(b []byte) []byte {
	if comm.InScratch(b) {
		// Only timed, never read: a pipelined broadcast of 4 MiB in
		// segments of 8 KiB on 512 ranks queued a copy of every segment.
		return b
	}
	if len(b) > 0 && len(b) == len(r.lastCopy) && unsafe.SliceData(b) == r.lastFrom && bytes.Equal(b, r.lastCopy) {
		r.lastRefs++
		return r.lastCopy
	}
	c := append([]byte(nil), b...)
	if len(b) > 0 {
		r.lastFrom, r.lastCopy, r.lastRefs = unsafe.SliceData(b), c, 1
	}
	return c
}

// dropCopy tells the sender that a message's sentCopy is no longer
// needed; the rank lets go of its last copy once no message holds it.
func (k *kernel) dropCopy(m *message) {
	src := k.ranks[m.src]
	if len(m.data) > 0 && unsafe.SliceData(m.data) == unsafe.SliceData(src.lastCopy) {
		if src.lastRefs--; src.lastRefs <= 0 {
			src.lastFrom, src.lastCopy, src.lastRefs = nil, nil, 0
		}
	}
	m.data = nil
}

// Irecv posts a receive; it costs nothing until a message completes it.
func (r *rank) Irecv(cid uint64, src, tag int, b []byte) comm.Request {
	k := r.k
	q := &request{owner: r, op: opRecv, cid: cid, peer: src, tag: tag, buf: b, since: k.now}
	if src != comm.AnySource && (src < 0 || src >= len(k.ranks)) {
		return comm.Failed(fmt.Errorf("sim: receive from rank %d out of range [0,%d)", src, len(k.ranks)))
	}
	if err := k.abortErr; err != nil {
		return comm.Failed(err)
	}
	if m, _, _, _, ok := r.engine.Post(cid, src, tag, q); ok {
		k.match(m, q)
	}
	return q
}

// Everything one rank sends another (eager messages, RTS, CTS, acks,
// rendezvous data) travels in one FIFO stream per ordered pair, as over one
// TCP connection: an item leaves when the previous one has arrived, its
// first byte arriving at max(sent + latency, previous arrival) — the stream
// is pipelined, so queueing adds no latency bubble — and back-to-back
// messages queue instead of sharing the link as parallel flows. Envelopes
// therefore reach the matching engine in send order even with latency
// jitter.

type itemKind uint8

const (
	itemEager itemKind = iota // envelope and data of an eager message
	itemRTS                   // rendezvous request to send
	itemCTS                   // rendezvous clear to send (receiver to sender)
	itemData                  // rendezvous data
	itemAck                   // match notice for Ssend and truncated rendezvous
)

func (i itemKind) String() string {
	return [...]string{"eager", "rts", "cts", "data", "ack"}[i]
}

type item struct {
	kind     itemKind
	m        *message
	src, dst int
	sentAt   float64
	lat      float64 // jittered one-way latency
	fwd, rev []int   // resources, for items that carry bytes
	path     []int   // forward resources, for the queueing delay of any item
	s        *stream
	flow     *netsim.Flow // while an item carrying bytes is on the wire
}

type stream struct {
	busy  bool
	queue []*item
}

// post sends an item from src to dst now.
func (k *kernel) post(m *message, kind itemKind, src, dst int) {
	route := k.p.Route(src, dst)
	it := &item{kind: kind, m: m, src: src, dst: dst, sentAt: k.now, lat: k.noise.Delay(route.LatencyS, src, dst, k.now)}
	if kind == itemEager || kind == itemData {
		it.fwd, it.rev = route.Forward, route.Reverse
	}
	it.path = route.Forward
	key := uint64(src)<<32 | uint64(uint32(dst))
	s := k.streams[key]
	if s == nil {
		s = &stream{}
		k.streams[key] = s
	}
	it.s = s
	if s.busy {
		s.queue = append(s.queue, it)
		return
	}
	k.begin(it)
}

// begin puts an item on its idle stream.
func (k *kernel) begin(it *item) {
	it.s.busy = true
	lat := max(0, it.sentAt+it.lat-k.now) + k.queueDelay(it.path)
	if it.kind == itemEager || it.kind == itemData {
		f, err := k.net.Start(netsim.FlowSpec{Bytes: int64(it.m.size), LatencyS: lat, PathLatencyS: it.lat, Forward: it.fwd, Reverse: it.rev, Data: it})
		if err != nil {
			// Routes come from a validated platform; a failure here is a bug.
			panic(fmt.Sprintf("sim: flow %d->%d: %v", it.src, it.dst, err))
		}
		if k.queueS > 0 {
			it.flow = f
			for _, r := range it.fwd {
				k.onLink[r] = append(k.onLink[r], it)
			}
		}
		return
	}
	k.at(k.now+lat, func() {
		k.control(it)
		k.next(it.s)
	})
}

// queueDelay is how long an item entering its path now waits in the FIFO
// buffers of the path's links (platform tcp.queue): on a link that the
// flows already on it saturate, TCP keeps the buffer full, so the item
// waits until the bytes they still have to send have drained, at most the
// buffer's length. A link with spare capacity holds no standing queue.
// Max-min sharing alone lets a small message or a rendezvous handshake
// through a saturated link at once, where a real one waits behind the
// bulk data queued ahead of it (the per-segment handshakes of Open MPI's
// trees crossing a busy trunk, issue 11).
func (k *kernel) queueDelay(path []int) float64 {
	if k.queueS <= 0 {
		return 0
	}
	k.net.Flush()
	d := 0.0
	for _, r := range path {
		var rate, backlog float64
		for _, it := range k.onLink[r] {
			x := it.flow.Rate()
			rate += x
			if x > 0 {
				backlog += x * (it.flow.EventTime() - k.now)
			}
		}
		if bps := k.linkBps[r]; bps > 0 && rate >= saturated*bps {
			d += min(k.queueS, backlog/bps)
		}
	}
	return d
}

// saturated is the share of a link's capacity in use above which it is
// taken to be the flows' bottleneck (below 1: bandwidth jitter and the
// solver's rounding).
const saturated = 0.95

// leaveLinks removes a finished item from the links it loaded.
func (k *kernel) leaveLinks(it *item) {
	if it.flow == nil {
		return
	}
	for _, r := range it.fwd {
		l := k.onLink[r]
		for i, x := range l {
			if x == it {
				l[i] = l[len(l)-1]
				l[len(l)-1] = nil
				k.onLink[r] = l[:len(l)-1]
				break
			}
		}
	}
	it.flow = nil
}

// next starts the stream's next queued item, if any.
func (k *kernel) next(s *stream) {
	s.busy = false
	if len(s.queue) > 0 {
		it := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		k.begin(it)
	}
}

// control handles the arrival of a control item.
func (k *kernel) control(it *item) {
	m := it.m
	if k.log != nil {
		k.logf("%v msg=%d %d->%d", it.kind, m.id, it.src, it.dst)
	}
	switch it.kind {
	case itemRTS:
		k.arrive(m)
	case itemCTS:
		k.post(m, itemData, m.src, m.dst)
		if int64(m.size) <= k.sendBuf {
			// Over TCP an MPI send completes once its last byte is in the
			// socket's send buffer: the sender goes on while the data
			// drains (Open MPI's and MPICH's TCP transports alike). The
			// kernel's copy is what arrives.
			m.data = k.ranks[m.src].sentCopy(m.data)
			m.sendDone = true
			m.send.complete(comm.Status{}, nil)
		}
	case itemAck:
		m.send.complete(comm.Status{}, nil)
	}
}

// flowEvent handles the network's events for items carrying bytes: the
// first byte of an eager item is its envelope; the last byte completes it.
func (k *kernel) flowEvent(e netsim.Event) {
	it := e.Flow.Data().(*item)
	m := it.m
	switch e.Kind {
	case netsim.LatencyDone:
		if it.kind == itemEager {
			k.arrive(m)
		}
	case netsim.Done:
		k.leaveLinks(it)
		m.dataDone = true
		if k.log != nil {
			k.logf("data msg=%d %d->%d bytes=%d", m.id, m.src, m.dst, m.size)
		}
		if !m.eager && !m.sendDone {
			m.send.complete(comm.Status{}, nil)
		}
		if m.recv != nil && !m.truncated {
			k.deliver(m)
		}
		k.next(it.s)
	}
}

// arrive delivers a message's envelope (eager header or rendezvous RTS) to
// the destination's matching engine.
func (k *kernel) arrive(m *message) {
	if k.log != nil {
		k.logf("arrive msg=%d %d->%d tag=%d", m.id, m.src, m.dst, m.tag)
	}
	if q, ok := k.ranks[m.dst].engine.Arrive(m.cid, m.src, m.tag, m); ok {
		k.match(m, q)
	}
}

// match pairs a message with a receive at the current time.
func (k *kernel) match(m *message, q *request) {
	m.recv = q
	if k.log != nil {
		k.logf("match msg=%d %d->%d tag=%d", m.id, m.src, m.dst, m.tag)
	}
	if m.size > len(q.buf) {
		m.truncated = true
		if m.eager {
			k.dropCopy(m)
		}
		q.complete(comm.Status{Source: m.src, Tag: m.tag, Count: m.size},
			&comm.RankError{Rank: m.src, Err: fmt.Errorf("%w (%d > %d bytes, tag %d)", comm.ErrTruncate, m.size, len(q.buf), m.tag)})
		if !m.eager || m.sync {
			// The sender learns of the match (and drops the data).
			k.post(m, itemAck, m.dst, m.src)
		}
		return
	}
	switch {
	case !m.eager:
		k.post(m, itemCTS, m.dst, m.src)
	case m.sync:
		k.post(m, itemAck, m.dst, m.src)
	}
	if m.eager && m.dataDone {
		k.deliver(m)
	}
}

// deliver copies a matched message whose data has arrived into the receive
// buffer and completes the receive after the receiver's overhead.
func (k *kernel) deliver(m *message) {
	q := m.recv
	dst := k.ranks[m.dst]
	if len(m.data) > 0 && unsafe.SliceData(m.data) != unsafe.SliceData(q.buf) {
		copy(q.buf, m.data)
	}
	if m.eager || m.sendDone {
		k.dropCopy(m)
	}
	st := comm.Status{Source: m.src, Tag: m.tag, Count: m.size}
	o := dst.ov.RecvS + dst.ov.RecvPerByteS*float64(m.size)
	if o <= 0 {
		q.complete(st, nil)
		return
	}
	// One CPU per rank: receive overheads queue behind each other and
	// behind send overheads (LogP's o at a gather root).
	dst.busy = max(k.now, dst.busy) + o
	k.at(dst.busy, func() { q.complete(st, nil) })
}
