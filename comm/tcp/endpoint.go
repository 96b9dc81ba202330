// Package tcp is the TCP transport of comm: one process per rank, a full
// mesh of authenticated TCP connections opened at start-up (Join), and
// MPI matching through the shared engine.
//
// Data path. A send writes a 40-byte header and then the caller's slice
// straight to the socket (one writev, from the caller's buffer, for large
// messages; one write of a small copy for small ones), in the caller's
// goroutine, so a Send returns once the kernel has the bytes. A goroutine
// waiting for a receive from a given rank reads that connection itself
// (see drive): the payload lands straight in its buffer with no hand-off
// between goroutines. Otherwise each connection's reader goroutine drains
// the socket: a payload whose header matches a posted receive is read
// straight into its buffer, others go to the unexpected queue, and if a
// receive claims one while it is still arriving, the rest is read straight
// into the receive's buffer. Because connections are always drained (a
// write that finds the socket full hands any idle connection back to its
// reader first), blocking writes cannot deadlock. Synchronous sends carry
// an id and complete when the receiver's ack frame (sent when the message
// is matched) comes back. RecvBlocking (comm.BlockingReceiver) is Irecv
// and Wait with a reused request: a receive loop allocates nothing.
//
// Faults. A connection that breaks without a goodbye, a protocol error, or
// a peer silent for longer than the heartbeat timeout fails every pending
// and future call of this rank with a *comm.RankError naming that peer, and
// the news is forwarded to the other ranks. A rank that finished cleanly
// (Close) says goodbye; receives waiting for it specifically then fail, and
// the rest of the world carries on.
package tcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"netaware/comm"
	"netaware/comm/internal/match"

	"golang.org/x/sys/unix"
)

// Config tunes the transport; zero fields take the defaults.
type Config struct {
	// MaxMessage bounds a message's size in bytes, both sent and announced
	// by a peer (default 1 GiB).
	MaxMessage int64
	// HeartbeatInterval is how often an idle connection sends a heartbeat
	// (default 1 s); HeartbeatTimeout is how long a silent peer is
	// tolerated before it is declared dead (default 5 s).
	HeartbeatInterval time.Duration
	HeartbeatTimeout  time.Duration
	// HandshakeTimeout bounds the authentication of one connection (default 10 s).
	HandshakeTimeout time.Duration
	// BootstrapTimeout bounds Join as a whole: waiting for the coordinator
	// and every rank to show up (default 2 min).
	BootstrapTimeout time.Duration
	// CloseTimeout bounds how long Close waits for peers to acknowledge
	// the goodbye (default 5 s).
	CloseTimeout time.Duration
	// Logger receives refused connections and lost peers (default slog.Default()).
	Logger *slog.Logger
}

const (
	defaultMaxMessage = 1 << 30
	smallCopy         = 16 << 10  // messages up to this size are copied after the header: one write
	readChunk         = 256 << 10 // unexpected payloads are read in chunks, marking progress for the watchdog
	// directChunk bounds one read straight into a receive buffer: large, so
	// that a read takes whatever the socket holds (one syscall per socket
	// buffer, as a bare socket does), yet a huge message still marks
	// progress for the watchdog every few MiB.
	directChunk  = 4 << 20
	initialAlloc = 1 << 20 // unexpected payloads above this grow as bytes arrive
	// readBuffer is the connection's read buffer. Whatever a read brings
	// in beyond a frame's header is copied once more on its way to the
	// receive buffer, while reads of at least this size bypass it and land
	// in the receive buffer directly: a small buffer keeps that extra copy
	// of a large payload short (at most 4 KiB of a 64 KiB or 1 MiB message)
	// and still batches small frames into one read.
	readBuffer = 4 << 10
)

func (c Config) withDefaults() Config {
	if c.MaxMessage <= 0 {
		c.MaxMessage = defaultMaxMessage
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = time.Second
	}
	if c.HeartbeatTimeout <= 0 {
		c.HeartbeatTimeout = 5 * time.Second
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.BootstrapTimeout <= 0 {
		c.BootstrapTimeout = 2 * time.Minute
	}
	if c.CloseTimeout <= 0 {
		c.CloseTimeout = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

var errFinished = errors.New("rank has finished (closed its endpoint)")

// Endpoint is one rank's attachment to a TCP world. It implements
// comm.Endpoint; Join wraps it in the world communicator.
type Endpoint struct {
	rank, size int
	cfg        Config
	start      time.Time
	id         comm.Identity
	addr       string // our listen address ("" when size is 1)

	mu  sync.Mutex // guards eng and the receive slot
	eng *match.Engine[*inmsg, *request]
	// slot holds one posted receive outside eng (see post).
	slot             *request
	slotCid          uint64
	slotSrc, slotTag int

	peers []*peer // nil at our own rank

	recvPool sync.Pool // of *request for RecvBlocking

	abortOnce sync.Once
	aborted   chan struct{}
	abortErr  error
	failed    atomic.Bool // set once abortErr is final (cheaper to poll than aborted)

	closeOnce sync.Once
	closing   atomic.Bool
	stop      chan struct{} // stops writers and the watchdog
	readers   sync.WaitGroup
	others    sync.WaitGroup
}

// inmsg is an arrived (or arriving) message.
type inmsg struct {
	src, tag int
	n        int
	data     []byte
	done     bool                    // payload complete (guarded by Endpoint.mu)
	claimer  atomic.Pointer[request] // receive that matched it while it was arriving
	syncID   uint64                  // ack this id to src on match (remote Ssend)
	sync     bool
	local    *request // completed on match (Ssend to ourselves)
}

// peer is the connection to one other rank.
type peer struct {
	ep   *Endpoint
	rank int
	conn net.Conn

	wmu      sync.Mutex // serializes frames on the socket
	hbuf     [headerSize]byte
	wbuf     []byte
	wdone    bool // goodbye written; no more frames (guarded by wmu)
	raw      syscall.RawConn
	iov      [2][]byte
	wv       [][]byte // what writevStep still has to write
	wverr    error
	writevFn func(fd uintptr) bool

	rmu   sync.Mutex // held by whoever reads the socket
	br    *bufio.Reader
	rhdr  [headerSize]byte
	spare *inmsg // reusable for messages that match at arrival (under rmu)
	// midFrame is set by whoever holds rmu while it reads a frame's bytes
	// (after the first): interrupts are absorbed then (see frameReader).
	midFrame bool

	// turn says who may read the connection (see the turn constants).
	turn atomic.Uint64

	dmu       sync.Mutex // guards the fields below (and turn's changes from turnFree)
	readOver  bool       // the stream ended; nobody reads any more (written by the reader of the moment)
	bgReading bool       // the reader goroutine is in its read section
	resume    chan struct{}
	graceGen  uint64        // drive count of the grace the watchdog last saw (watchdog only)
	graceSeen time.Duration // when the watchdog first saw that grace
	// watchDone and watchStop are the context registration of watchCtx,
	// used by the driver of the moment (changed under dmu).
	watchDone <-chan struct{}
	watchStop func() bool

	hbQueued  atomic.Bool  // a heartbeat waits in the control queue
	lastRecv  atomic.Int64 // Endpoint.Now() of the last byte read, ns (as of the last watchdog tick)
	lastWrite atomic.Int64
	heard     atomic.Bool // bytes read since the watchdog's last tick
	wrote     atomic.Bool // frame written since the watchdog's last tick

	byeRecv  atomic.Bool // peer said goodbye: it sends nothing more
	byeOnce  sync.Once
	gone     atomic.Bool // goodbye received or connection over
	ctrlMu   sync.Mutex
	ctrl     []ctrlFrame
	ctrlWake chan struct{}

	syncMu  sync.Mutex
	nextID  uint64
	pending map[uint64]*request // our synchronous sends awaiting ack
}

type ctrlFrame struct {
	h      header
	reason []byte
}

func newEndpoint(rank, size int, cfg Config) *Endpoint {
	e := &Endpoint{
		rank:    rank,
		size:    size,
		cfg:     cfg,
		start:   time.Now(),
		id:      comm.LocalIdentity(rank),
		eng:     match.New[*inmsg, *request](),
		peers:   make([]*peer, size),
		aborted: make(chan struct{}),
		stop:    make(chan struct{}),
	}
	return e
}

// attach adds the connection to rank r; start launches the goroutines once
// every connection is attached.
func (e *Endpoint) attach(r int, conn net.Conn) {
	p := &peer{ep: e, rank: r, conn: conn, ctrlWake: make(chan struct{}, 1), resume: make(chan struct{}, 1), pending: map[uint64]*request{}}
	if sc, ok := conn.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			p.raw = rc
			p.writevFn = p.writevStep
		}
	}
	p.br = bufio.NewReaderSize(frameReader{p}, readBuffer)
	now := int64(e.Now())
	p.lastRecv.Store(now)
	p.lastWrite.Store(now)
	e.peers[r] = p
}

func (e *Endpoint) startGoroutines() {
	for _, p := range e.peers {
		if p == nil {
			continue
		}
		e.readers.Add(1)
		go p.readLoop()
		e.others.Add(1)
		go p.writeLoop()
	}
	if e.size > 1 {
		e.others.Add(1)
		go e.watchdog()
	}
}

func (e *Endpoint) Rank() int               { return e.rank }
func (e *Endpoint) Size() int               { return e.size }
func (e *Endpoint) Identity() comm.Identity { return e.id }

// Addr is the address this rank accepted mesh connections on.
func (e *Endpoint) Addr() string { return e.addr }

// Now is the monotonic time since the endpoint was made.
func (e *Endpoint) Now() time.Duration { return time.Since(e.start) }

// Spin busy-waits (it keeps the CPU, as PLogP's overhead measurement needs).
func (e *Endpoint) Spin(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
	}
}

func (e *Endpoint) err() error {
	if !e.failed.Load() {
		return nil
	}
	return e.abortErr
}

// abort fails every pending and future call with err; with notify, the
// other ranks are told which rank failed and why.
func (e *Endpoint) abort(err error, notify bool) {
	e.abortOnce.Do(func() {
		e.abortErr = err
		e.failed.Store(true)
		close(e.aborted)
		for _, p := range e.peers {
			if p != nil {
				p.interrupt() // drivers stop reading for their receive
				p.endGrace()
			}
		}
		var re *comm.RankError
		if !notify || !errors.As(err, &re) {
			return
		}
		reason := []byte(re.Err.Error())
		if len(reason) > maxReason {
			reason = reason[:maxReason]
		}
		for _, p := range e.peers {
			if p != nil && p.rank != re.Rank && !p.gone.Load() {
				p.queue(ctrlFrame{h: header{kind: kindAbort, tag: int64(re.Rank), length: int64(len(reason))}, reason: reason})
			}
		}
	})
}

// Abort declares this rank failed with err: every other rank's pending and
// future calls fail with a *comm.RankError naming this rank. Call Close after.
func (e *Endpoint) Abort(err error) {
	e.abort(&comm.RankError{Rank: e.rank, Err: fmt.Errorf("failed: %w", err)}, true)
}

// Isend sends b to world rank dst on context cid. The payload is written to
// the socket before Isend returns; with sync the request completes when the
// receiver has matched the message.
func (e *Endpoint) Isend(cid uint64, dst, tag int, b []byte, sync bool) comm.Request {
	if err := e.err(); err != nil {
		return comm.Failed(err)
	}
	if int64(len(b)) > e.cfg.MaxMessage {
		return comm.Failed(&comm.RankError{Rank: dst, Err: fmt.Errorf("send of %d bytes exceeds the maximum message size of %d bytes", len(b), e.cfg.MaxMessage)})
	}
	if dst == e.rank {
		return e.selfSend(cid, tag, b, sync)
	}
	p := e.peers[dst]
	if p.gone.Load() {
		return comm.Failed(&comm.RankError{Rank: dst, Err: errFinished})
	}
	h := header{kind: kindData, cid: cid, tag: int64(tag), length: int64(len(b))}
	var req *request
	if sync {
		req = newRequest(e)
		req.send = true
		req.peer = p // waiting for the ack may drive the connection
		h.flags = flagSync
		h.id = p.addPending(req)
	}
	if err := p.writeData(&h, b); err != nil {
		if sync {
			p.takePending(h.id)
		}
		return comm.Failed(&comm.RankError{Rank: dst, Err: fmt.Errorf("send: %w", err)})
	}
	if sync {
		return req
	}
	return completed{}
}

func (e *Endpoint) selfSend(cid uint64, tag int, b []byte, sync bool) comm.Request {
	m := &inmsg{src: e.rank, tag: tag, n: len(b), data: append([]byte(nil), b...), done: true}
	var req comm.Request = completed{}
	if sync {
		r := newRequest(e)
		r.send = true
		m.local = r
		req = r
	}
	e.mu.Lock()
	recv, ok := e.arrive(cid, e.rank, tag, m)
	e.mu.Unlock()
	if ok {
		e.matched(m)
		deliver(recv, m, m.data)
	}
	return req
}

// Irecv posts a receive for a message from world rank src (or AnySource).
func (e *Endpoint) Irecv(cid uint64, src, tag int, b []byte) comm.Request {
	if err := e.err(); err != nil {
		return comm.Failed(err)
	}
	r := newRequest(e)
	if err := e.startRecv(r, cid, src, tag, b); err != nil {
		return comm.Failed(err)
	}
	return r
}

// RecvBlocking receives like Irecv followed by Wait, without a request
// for the caller to hold: the request comes from a free list and goes
// back to it once complete, so a loop of blocking receives allocates
// nothing (comm.BlockingReceiver).
func (e *Endpoint) RecvBlocking(ctx context.Context, cid uint64, src, tag int, b []byte) (comm.Status, error) {
	if err := e.err(); err != nil {
		return comm.Status{}, err
	}
	r := e.getRecv()
	if err := e.startRecv(r, cid, src, tag, b); err != nil {
		return comm.Status{}, err
	}
	st, err := r.Wait(ctx)
	e.putRecv(r)
	return st, err
}

// startRecv matches receive r against the unexpected messages or posts it.
// An error means r was not posted (and will never complete).
func (e *Endpoint) startRecv(r *request, cid uint64, src, tag int, b []byte) error {
	r.buf = b
	e.mu.Lock()
	m, ok := e.post(cid, src, tag, r)
	if !ok {
		if src >= 0 && src != e.rank && e.peers[src].byeRecv.Load() {
			// The peer said goodbye and every message it sent before has
			// been matched against the queue: nothing can come.
			e.unpost(r)
			e.mu.Unlock()
			return &comm.RankError{Rank: src, Err: errFinished}
		}
		if src >= 0 && src != e.rank {
			r.peer = e.peers[src]
		}
		e.mu.Unlock()
		return nil
	}
	complete := m.done
	if !complete {
		m.claimer.Store(r) // the reader finishes it
	}
	e.mu.Unlock()
	e.matched(m)
	if complete {
		deliver(r, m, m.data)
	}
	return nil
}

// getRecv takes a receive request from the free list (see RecvBlocking).
func (e *Endpoint) getRecv() *request {
	if r, _ := e.recvPool.Get().(*request); r != nil {
		return r
	}
	return newRequest(e)
}

// putRecv returns r to the free list if nothing can touch it any more:
// once it is complete (complete's last access to r is the state; the
// slot, the engine and the message that matched it dropped it before; and
// a receive is completed exactly once, by whoever took it out of the slot
// or the engine under e.mu, so no late complete can hit the reused r).
// A receive abandoned before completing (its context ended, the endpoint
// aborted, it could not be posted) is left to the collector.
func (e *Endpoint) putRecv(r *request) {
	if r.state.Load() != reqDone {
		return
	}
	*r = request{ep: e}
	e.recvPool.Put(r)
}

// The receive slot. A receive posted while the engine holds nothing (no
// posted receive, no unexpected message) -- every receive of a ping-pong
// or a stream -- waits in e.slot instead of the engine: posting and
// matching it then cost no allocation and no map operation. Order is kept:
// the slot is only filled when the engine is empty, so it is older than
// every receive posted to the engine after it, and an arriving message is
// offered to the slot first; and it only holds a receive that found no
// unexpected message to match. All under e.mu.

// post matches receive r against the unexpected messages or posts it.
func (e *Endpoint) post(cid uint64, src, tag int, r *request) (*inmsg, bool) {
	if e.slot == nil {
		if nu, np := e.eng.Len(); nu == 0 && np == 0 {
			e.slot, e.slotCid, e.slotSrc, e.slotTag = r, cid, src, tag
			return nil, false
		}
	}
	m, _, _, t, ok := e.eng.Post(cid, src, tag, r)
	if !ok {
		r.tk, r.posted = t, true
	}
	return m, ok
}

// arrive offers a message to the posted receives, queueing it if none
// accepts it.
func (e *Endpoint) arrive(cid uint64, src, tag int, m *inmsg) (*request, bool) {
	if r := e.slot; r != nil && e.slotCid == cid &&
		(e.slotSrc == comm.AnySource || e.slotSrc == src) &&
		(e.slotTag == tag || e.slotTag == comm.AnyTag && tag >= 0) {
		e.slot = nil
		return r, true
	}
	return e.eng.Arrive(cid, src, tag, m)
}

// unpost withdraws a receive that has not matched; false if it was not
// posted any more (it matched).
func (e *Endpoint) unpost(r *request) bool {
	if e.slot == r {
		e.slot = nil
		return true
	}
	return r.posted && e.eng.Cancel(r.tk)
}

// matched runs the sender-side consequences of a match: the ack of a
// synchronous send.
func (e *Endpoint) matched(m *inmsg) {
	if m.local != nil {
		m.local.complete(comm.Status{}, nil)
	}
	if m.sync {
		if p := e.peers[m.src]; p != nil && !p.gone.Load() {
			p.queue(ctrlFrame{h: header{kind: kindAck, id: m.syncID}})
		}
	}
}

// deliver completes receive r with message m whose payload (or the part
// that fits) is already in data; data may alias r.buf.
func deliver(r *request, m *inmsg, data []byte) {
	st := comm.Status{Source: m.src, Tag: m.tag, Count: m.n}
	var err error
	if m.n > len(r.buf) {
		err = &comm.RankError{Rank: m.src, Err: fmt.Errorf("%w (%d > %d bytes)", comm.ErrTruncate, m.n, len(r.buf))}
		st.Count = 0
	} else if len(data) > 0 && &data[0] != &r.buf[0] {
		copy(r.buf, data[:m.n])
	}
	r.complete(st, err)
}

// failPosted fails every posted receive that waits specifically for rank.
func (e *Endpoint) failPosted(rank int, err error) {
	var victims []*request
	e.mu.Lock()
	if e.slot != nil && e.slotSrc == rank {
		victims = append(victims, e.slot)
	}
	e.eng.Posted(func(cid uint64, src, tag int, r *request) {
		if src == rank {
			victims = append(victims, r)
		}
	})
	for _, r := range victims {
		e.unpost(r)
	}
	e.mu.Unlock()
	for _, r := range victims {
		r.complete(comm.Status{}, err)
	}
}

// Close says goodbye to every peer, waits (bounded by CloseTimeout) for
// their goodbyes, then releases the sockets and every goroutine. Pending
// calls fail with comm.ErrClosed.
func (e *Endpoint) Close() error {
	e.closeOnce.Do(func() {
		e.closing.Store(true)
		e.endGraces()
		// A rank leaving because of a failure says why before its goodbye,
		// so that no peer mistakes its departure for a clean finish.
		var cause []byte
		var re *comm.RankError
		if err := e.err(); errors.As(err, &re) {
			if cause = []byte(re.Err.Error()); len(cause) > maxReason {
				cause = cause[:maxReason]
			}
		}
		for _, p := range e.peers {
			if p == nil {
				continue
			}
			if re != nil && p.rank != re.Rank && !p.gone.Load() {
				p.queue(ctrlFrame{h: header{kind: kindAbort, tag: int64(re.Rank), length: int64(len(cause))}, reason: cause})
			}
			p.sayBye()
		}
		done := make(chan struct{})
		go func() { e.readers.Wait(); close(done) }()
		t := time.NewTimer(e.cfg.CloseTimeout)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
		e.abort(comm.ErrClosed, false)
		close(e.stop)
		for _, p := range e.peers {
			if p != nil {
				p.conn.Close()
				p.unwatch()
			}
		}
		<-done
		e.others.Wait()
	})
	return nil
}

// watchdog runs the endpoint's periodic duties with one ticker for all
// peers: it declares dead a peer that has been silent for longer than the
// heartbeat timeout (a hung process or a host that vanished without
// closing its sockets), queues heartbeats on idle connections, and hands
// connections left unread after a drive back to their reader goroutines.
func (e *Endpoint) watchdog() {
	defer e.others.Done()
	iv := e.cfg.HeartbeatInterval
	t := time.NewTicker(min(iv/2, handbackTick))
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		now := e.Now()
		for _, p := range e.peers {
			if p == nil || p.gone.Load() {
				continue
			}
			if p.heard.Swap(false) {
				p.lastRecv.Store(int64(now))
			}
			if p.wrote.Swap(false) {
				p.lastWrite.Store(int64(now))
			}
			if silent := now - time.Duration(p.lastRecv.Load()); silent > e.cfg.HeartbeatTimeout {
				err := &comm.RankError{Rank: p.rank, Err: fmt.Errorf("silent for %v (host down or process hung)", silent.Round(time.Millisecond))}
				e.cfg.Logger.Warn("tcp: peer declared dead", "rank", e.rank, "peer", p.rank, "addr", p.conn.RemoteAddr().String(), "err", err)
				e.abort(err, true)
				p.gone.Store(true)
				p.conn.Close()
				continue
			}
			if t := p.turn.Load(); t&turnMask == turnGrace {
				// Reading the clock at the end of every drive would cost
				// more than the drive's bookkeeping: the watchdog notes when
				// it first sees a grace, and ends it a tick later if no
				// drive happened in between.
				if gen := t >> turnShift; gen != p.graceGen {
					p.graceGen, p.graceSeen = gen, now
				} else if now-p.graceSeen >= handbackGrace && p.turn.CompareAndSwap(t, t&^turnMask|turnFree) {
					p.wakeReader()
				}
			}
			if now-time.Duration(p.lastWrite.Load()) >= iv/2 && !p.hbQueued.Swap(true) {
				p.queue(ctrlFrame{h: header{kind: kindHeartbeat}})
			}
		}
	}
}

// ---- peer: writing ----

// touchWrite and touchRead mark activity for the watchdog, which turns the
// marks into times at its next tick: reading the clock on every frame
// costs more than the frame's own bookkeeping.
func (p *peer) touchWrite() {
	if !p.wrote.Load() {
		p.wrote.Store(true)
	}
}

func (p *peer) touchRead() {
	if !p.heard.Load() {
		p.heard.Store(true)
	}
}

func (p *peer) writeData(h *header, b []byte) error {
	p.wmu.Lock()
	err := p.writeDataLocked(h, b)
	p.wmu.Unlock()
	return err
}

func (p *peer) writeDataLocked(h *header, b []byte) error {
	if p.wdone {
		return errFinished
	}
	var err error
	switch {
	case p.raw != nil:
		if len(b) <= smallCopy {
			if cap(p.wbuf) < headerSize+len(b) {
				p.wbuf = make([]byte, headerSize+smallCopy)
			}
			p.wbuf = p.wbuf[:headerSize+len(b)]
			h.encode(p.wbuf)
			copy(p.wbuf[headerSize:], b)
			p.iov[0], p.iov[1] = p.wbuf, nil
			err = p.writev(p.iov[:1])
		} else {
			h.encode(p.hbuf[:])
			p.iov[0], p.iov[1] = p.hbuf[:], b
			err = p.writev(p.iov[:2])
		}
		p.iov[0], p.iov[1] = nil, nil
	case len(b) <= smallCopy:
		h.encode(p.hbuf[:])
		p.wbuf = append(append(p.wbuf[:0], p.hbuf[:]...), b...)
		_, err = p.conn.Write(p.wbuf)
	default:
		h.encode(p.hbuf[:])
		bufs := net.Buffers{p.hbuf[:], b}
		_, err = bufs.WriteTo(p.conn)
	}
	p.touchWrite()
	return err
}

// writev writes bufs to the socket with writev(2), straight from the
// caller's slices. If the socket is full, every connection left unread
// after a drive (see handbackGrace) goes back to its reader goroutine
// before we wait: two ranks writing large messages to each other at once
// (a pairwise exchange) must keep draining each other. Detecting the full
// socket here costs nothing, where a write deadline would arm a timer per
// message.
func (p *peer) writev(bufs [][]byte) error {
	p.wv, p.wverr = bufs, nil
	err := p.raw.Write(p.writevFn)
	p.wv = nil
	if err != nil {
		return err
	}
	return p.wverr
}

// writevStep is the raw write callback of writev (bound once per peer, so
// that a send allocates nothing); it works on p.wv under wmu.
func (p *peer) writevStep(fd uintptr) bool {
	for len(p.wv) > 0 {
		var n int
		var err error
		if len(p.wv) == 1 {
			// write(2) of one buffer: cheaper in the kernel than a
			// one-element writev (no iovec to import) and no iovec
			// array to build here.
			n, err = unix.Write(int(fd), p.wv[0])
		} else {
			n, err = unix.Writev(int(fd), p.wv)
		}
		switch {
		case err == unix.EAGAIN:
			// The peer may itself be blocked writing to us, or to a
			// rank blocked writing to us: drain every connection.
			p.ep.endGraces()
			return false // wait until writable, then call again
		case err == unix.EINTR:
			continue
		case err != nil:
			p.wverr = err
			return true
		}
		for n > 0 {
			if n < len(p.wv[0]) {
				p.wv[0] = p.wv[0][n:]
				break
			}
			n -= len(p.wv[0])
			p.wv = p.wv[1:]
		}
	}
	return true
}

func (p *peer) writeCtrl(f ctrlFrame) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.wdone {
		return errFinished
	}
	f.h.encode(p.hbuf[:])
	p.wbuf = append(append(p.wbuf[:0], p.hbuf[:]...), f.reason...)
	_, err := p.conn.Write(p.wbuf)
	p.touchWrite()
	if f.h.kind == kindBye {
		p.wdone = true
		if tc, ok := p.conn.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
	}
	return err
}

// queue hands a control frame to the writer goroutine, so that readers
// never block on a socket write.
func (p *peer) queue(f ctrlFrame) {
	p.ctrlMu.Lock()
	p.ctrl = append(p.ctrl, f)
	p.ctrlMu.Unlock()
	select {
	case p.ctrlWake <- struct{}{}:
	default:
	}
}

func (p *peer) sayBye() {
	p.byeOnce.Do(func() { p.queue(ctrlFrame{h: header{kind: kindBye}}) })
}

func (p *peer) writeLoop() {
	defer p.ep.others.Done()
	for {
		select {
		case <-p.ep.stop:
			return
		case <-p.ctrlWake:
			p.ctrlMu.Lock()
			fs := p.ctrl
			p.ctrl = nil
			p.ctrlMu.Unlock()
			for _, f := range fs {
				if f.h.kind == kindHeartbeat {
					p.hbQueued.Store(false)
				}
				if err := p.writeCtrl(f); err != nil || f.h.kind == kindBye {
					return
				}
			}
		}
	}
}

func (p *peer) addPending(r *request) uint64 {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	p.nextID++
	p.pending[p.nextID] = r
	return p.nextID
}

func (p *peer) takePending(id uint64) *request {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	r := p.pending[id]
	delete(p.pending, id)
	return r
}

// ---- peer: reading ----

// Reading. Exactly one goroutine reads a connection at a time (see the
// turns below). Usually that is the peer's reader goroutine; but a
// goroutine waiting for a receive from this peer becomes the reader itself
// (it "drives" the connection) until its message is in, so that the bytes
// are read by the goroutine that wants them, woken directly by the network
// poller, with no hand-off to another goroutine (which costs as much as the
// loopback round trip itself). The reader goroutine is moved out of the
// way between frames: a past read deadline interrupts its wait for the
// next frame, and is absorbed inside a frame (frameReader).

var longAgo = time.Unix(1, 0)

// testHookReaderTurn, when set by a test, runs in the reader goroutine
// between its turn and its read lock (the window a driver can slip into).
var testHookReaderTurn atomic.Pointer[func(p *peer)]

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

func (p *peer) readLoop() {
	defer p.ep.readers.Done()
	for p.awaitTurn() {
		if hook := testHookReaderTurn.Load(); hook != nil {
			(*hook)(p)
		}
		p.rmu.Lock()
		// A driver may have taken the connection, read and left it in
		// grace between awaitTurn and rmu (it kicked us with a past
		// deadline, then cleared it when it got rmu first). Reading now
		// would race the next driver, which takes a grace without rmu.
		p.dmu.Lock()
		if p.turn.Load()&turnMask != turnFree {
			p.bgReading = false
			p.dmu.Unlock()
			p.rmu.Unlock()
			continue
		}
		p.dmu.Unlock()
		_, err := p.br.Peek(1)
		if err != nil && isTimeout(err) {
			p.dmu.Lock()
			p.bgReading = false
			p.dmu.Unlock()
			p.rmu.Unlock()
			p.clearStaleDeadline()
			continue
		}
		p.dmu.Lock()
		if p.turn.Load()&turnMask == turnDriving {
			p.bgReading = false
			p.dmu.Unlock()
			p.rmu.Unlock() // a driver arrived: the bytes stay buffered for it
			continue
		}
		p.dmu.Unlock()
		if err == nil {
			p.midFrame = true
			err = p.readFrame()
			p.midFrame = false
		}
		p.dmu.Lock()
		p.bgReading = false
		p.dmu.Unlock()
		p.rmu.Unlock()
		if err != nil {
			p.finish(err)
			return
		}
	}
}

// frameReader is the connection as the read buffer sees it. A read
// deadline in the past is how a reader blocked between frames is
// interrupted (see interrupt). Inside a frame, where the rest of the bytes
// are on their way, such an interrupt is absorbed: the deadline is cleared
// and the read retried. That loses nothing: an interrupt only says "look
// again", whoever reads re-checks why it reads before every frame, and
// whatever made an interrupt (a context ended, an abort, a driver waiting)
// happened before the deadline that the clearing undoes. So no lock is
// taken per frame to keep interrupts out of frames.
type frameReader struct{ p *peer }

func (f frameReader) Read(b []byte) (int, error) {
	p := f.p
	for {
		n, err := p.conn.Read(b)
		if n == 0 && err != nil && p.midFrame && isTimeout(err) {
			p.conn.SetReadDeadline(time.Time{})
			continue
		}
		return n, err
	}
}

// awaitTurn waits while a driver reads, or while the connection is handed
// back after a drive; false means reading is over.
func (p *peer) awaitTurn() bool {
	for {
		p.dmu.Lock()
		if p.readOver {
			p.dmu.Unlock()
			return false
		}
		if p.turn.Load()&turnMask == turnFree {
			p.bgReading = true
			p.dmu.Unlock()
			return true
		}
		p.dmu.Unlock()
		select {
		case <-p.resume:
		case <-p.ep.stop:
			return false
		}
	}
}

// A connection left unread after a drive goes back to the reader
// goroutine when the watchdog, which ticks every handbackTick, has seen it
// idle (no new drive) for at least handbackGrace: one to two ticks after
// the drive.
// A goroutine that waits again meanwhile (the next receive of a loop)
// drives at once, without first moving the reader goroutine out of the
// way; anything that needs the reader goroutine (a wait that cannot drive,
// a poll with Test, a full socket on write, Close, an abort) hands the
// connection back at once. No timer is armed per drive: timers on this
// path cost a wake-up of the network poller per message.
const (
	handbackGrace = 2 * time.Millisecond
	handbackTick  = 20 * time.Millisecond
)

// endGrace hands the connection back to the reader goroutine if it is
// in grace.
func (p *peer) endGrace() {
	for {
		t := p.turn.Load()
		if t&turnMask != turnGrace {
			return
		}
		if p.turn.CompareAndSwap(t, t&^turnMask|turnFree) {
			p.wakeReader()
			return
		}
	}
}

// wakeReader makes the reader goroutine re-examine its turn.
func (p *peer) wakeReader() {
	select {
	case p.resume <- struct{}{}:
	default:
	}
}

// endGraces hands every connection back (before waiting in a way that
// depends on the reader goroutines).
func (e *Endpoint) endGraces() {
	for _, p := range e.peers {
		if p != nil {
			p.endGrace()
		}
	}
}

// interrupt makes the current reader re-examine its situation (a driver's
// context ended, the endpoint aborted, a driver waits) if it is waiting
// for the next frame; a reader inside a frame finishes it first (see
// frameReader).
func (p *peer) interrupt() {
	p.conn.SetReadDeadline(longAgo)
}

func (p *peer) clearStaleDeadline() {
	p.dmu.Lock()
	defer p.dmu.Unlock()
	if p.turn.Load()&turnMask != turnDriving {
		p.conn.SetReadDeadline(time.Time{})
	}
}

// Turns. Who may read a connection is one atomic word, turn: the state
// in its low bits, and in the others the number of drives so far (the
// watchdog tells a new grace from an old one by it).
//
//	turnFree:    the reader goroutine may read (it enters its read section
//	             under dmu, noting bgReading, and holds rmu while in it);
//	turnDriving: one driver reads, and nobody else;
//	turnGrace:   a driver left the connection unread; nobody reads until
//	             a driver takes it (grace -> driving, one compare-and-swap,
//	             no lock) or it is handed back (grace -> free: endGrace).
//
// Only a driver leaves turnDriving. free -> driving happens under dmu, so
// that the driver sees bgReading and moves the reader goroutine out of
// the way (a past read deadline, then rmu). In grace the reader goroutine
// is outside its read section (it entered only in turnFree, and a driver
// that took the connection from it waited on rmu), so a driver that takes
// a grace reads without any lock: a receive loop (a ping-pong, a stream)
// costs two atomic operations per message here.
const (
	turnFree    = 0
	turnDriving = 1
	turnGrace   = 2
	turnMask    = 3
	turnShift   = 2
)

// drive reads this peer's connection in the calling goroutine until r
// completes, ctx ends or the endpoint aborts. It returns at once if another
// goroutine already drives the connection (r then completes by that one or
// by the reader goroutine).
func (p *peer) drive(ctx context.Context, r *request) {
	t := p.turn.Load()
	if t&turnMask == turnGrace && p.turn.CompareAndSwap(t, t&^turnMask|turnDriving) {
		// Taken from a grace: nobody else reads, nobody holds rmu for reading.
		if p.readOver {
			p.turn.Store(t)
			return
		}
		if done := ctx.Done(); done != nil && done != p.watchDone {
			p.dmu.Lock()
			p.watchCtx(ctx)
			p.dmu.Unlock()
		}
		p.readFor(ctx, r)
		p.turn.Store(t + 1<<turnShift) // grace again, one more drive
		return
	}
	p.dmu.Lock()
	for {
		t = p.turn.Load()
		if t&turnMask == turnDriving || p.readOver {
			p.dmu.Unlock()
			return
		}
		if p.turn.CompareAndSwap(t, t&^turnMask|turnDriving) {
			break
		}
	}
	kicked := p.bgReading
	if kicked {
		p.conn.SetReadDeadline(longAgo) // move the reader goroutine out of its wait
	}
	p.watchCtx(ctx)
	p.dmu.Unlock()
	p.rmu.Lock()
	if kicked {
		p.conn.SetReadDeadline(time.Time{})
	}
	p.readFor(ctx, r)
	p.turn.Store(t&^turnMask | turnGrace + 1<<turnShift)
	p.rmu.Unlock()
}

// readFor reads frames as the driver until r completes, ctx ends or the
// endpoint aborts; a read error ends reading for good (finish).
func (p *peer) readFor(ctx context.Context, r *request) {
	e := p.ep
	done := ctx.Done()
	// The conditions are checked after any clearing of the deadline, so
	// an interrupt is never lost (see frameReader).
	for !r.isDone() && !closed(done) && e.err() == nil {
		if _, err := p.br.Peek(1); err != nil {
			if !isTimeout(err) {
				p.finish(err)
				return
			}
			p.conn.SetReadDeadline(time.Time{})
			continue // an interrupt: re-check why we drive
		}
		p.midFrame = true
		err := p.readFrame()
		p.midFrame = false
		if err != nil {
			p.finish(err)
			return
		}
	}
}

// watchCtx makes sure that the end of ctx interrupts whoever reads the
// connection, so that a driver waiting with ctx stops. The registration is
// kept for the next drive with the same context (a receive loop passes the
// same ctx every time): registering and removing an AfterFunc per message
// costs allocations and a lock of the parent context. A registration that
// fires while nobody drives with that context only makes the current reader
// re-check its situation. Called with dmu held, by the (single) driver.
func (p *peer) watchCtx(ctx context.Context) {
	done := ctx.Done()
	if done == nil || done == p.watchDone || p.ep.closing.Load() {
		return // never cancelled, or already watched
	}
	if p.watchStop != nil {
		p.watchStop()
	}
	p.watchDone = done
	p.watchStop = context.AfterFunc(ctx, p.interrupt)
}

// unwatch drops the context registration (at Close).
func (p *peer) unwatch() {
	p.dmu.Lock()
	defer p.dmu.Unlock()
	if p.watchStop != nil {
		p.watchStop()
	}
	// watchDone stays: a driver may be reading it (drives after Close
	// fail at once anyway).
	p.watchStop = nil
}

// closed reports whether done (a context's Done, possibly nil) is closed;
// cheaper than ctx.Err(), which locks the context.
func closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// finish ends reading with err (once, whoever read it).
func (p *peer) finish(err error) {
	p.dmu.Lock()
	if p.readOver {
		p.dmu.Unlock()
		return
	}
	p.readOver = true
	p.dmu.Unlock()
	p.wakeReader()
	if errors.Is(err, errProtocol) {
		p.protocolError(err)
	} else {
		p.readFailed(err)
	}
}

// readFrame reads and handles one frame.
func (p *peer) readFrame() error {
	e := p.ep
	br := p.br
	if _, err := io.ReadFull(br, p.rhdr[:]); err != nil {
		return err
	}
	p.touchRead()
	h, err := decodeHeader(p.rhdr[:], e.cfg.MaxMessage)
	if err != nil {
		return err
	}
	if p.byeRecv.Load() && h.kind != kindHeartbeat {
		return fmt.Errorf("%w: frame %d after goodbye", errProtocol, h.kind)
	}
	switch h.kind {
	case kindData:
		return p.readData(br, h)
	case kindAck:
		r := p.takePending(h.id)
		if r == nil {
			return fmt.Errorf("%w: ack for unknown synchronous send %d", errProtocol, h.id)
		}
		r.complete(comm.Status{}, nil)
	case kindBye:
		p.gotBye()
	case kindAbort:
		reason := make([]byte, h.length)
		if _, err := io.ReadFull(br, reason); err != nil {
			return err
		}
		failed := int(h.tag)
		if failed >= e.size {
			return fmt.Errorf("%w: abort names rank %d of %d", errProtocol, failed, e.size)
		}
		e.abort(&comm.RankError{Rank: failed, Err: fmt.Errorf("%s (reported by rank %d)", reason, p.rank)}, false)
	}
	return nil
}

func (p *peer) gotBye() {
	p.byeRecv.Store(true)
	p.gone.Store(true)
	if p.ep.err() != nil {
		p.sayBye()
		return // pending calls already fail with the abort's cause
	}
	p.ep.failPosted(p.rank, &comm.RankError{Rank: p.rank, Err: errFinished})
	p.syncMu.Lock()
	pend := p.pending
	p.pending = map[uint64]*request{}
	p.syncMu.Unlock()
	for _, r := range pend {
		r.complete(comm.Status{}, &comm.RankError{Rank: p.rank, Err: fmt.Errorf("finished before matching a synchronous send: %w", errFinished)})
	}
	p.sayBye()
}

// readFailed handles the end of the stream: expected after a goodbye or
// while we close, a failure of the peer otherwise.
func (p *peer) readFailed(err error) {
	e := p.ep
	if p.byeRecv.Load() && errors.Is(err, io.EOF) {
		return
	}
	if e.closing.Load() || e.err() != nil && p.gone.Load() {
		p.gone.Store(true)
		return
	}
	p.gone.Store(true)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("connection lost (process exited or was killed): %w", err)
	} else {
		err = fmt.Errorf("connection lost: %w", err)
	}
	re := &comm.RankError{Rank: p.rank, Err: err}
	if e.err() == nil {
		e.cfg.Logger.Warn("tcp: lost peer", "rank", e.rank, "peer", p.rank, "addr", p.conn.RemoteAddr().String(), "err", err)
	}
	e.abort(re, true)
}

func (p *peer) protocolError(err error) {
	e := p.ep
	p.gone.Store(true)
	e.cfg.Logger.Warn("tcp: protocol error", "rank", e.rank, "peer", p.rank, "addr", p.conn.RemoteAddr().String(), "err", err)
	e.abort(&comm.RankError{Rank: p.rank, Err: err}, true)
	p.conn.Close()
}

// readData reads a data frame's payload: straight into a posted receive
// when one matches, otherwise into the unexpected queue.
func (p *peer) readData(br *bufio.Reader, h header) error {
	e := p.ep
	// A message that matches a posted receive needs its inmsg only while
	// it is read: the reader (one at a time, under rmu) reuses one.
	m := p.spare
	if m == nil {
		m = new(inmsg)
	}
	p.spare = nil
	*m = inmsg{src: p.rank, tag: int(h.tag), n: int(h.length), sync: h.flags&flagSync != 0, syncID: h.id}
	e.mu.Lock()
	r, ok := e.arrive(h.cid, p.rank, int(h.tag), m)
	e.mu.Unlock()
	if ok {
		e.matched(m)
		err := p.readInto(br, r, m, nil)
		p.spare = m
		return err
	}
	// The receive for this message is often about to be posted by a
	// goroutine we just woke (a receiver looping over Recv): let it run
	// before reading, so that the payload can go straight into its buffer.
	if m.n >= smallCopy {
		runtime.Gosched()
	}
	var data []byte
	chunk := smallCopy
	for len(data) < m.n {
		if r := m.claimer.Load(); r != nil {
			return p.readInto(br, r, m, data)
		}
		k := min(m.n-len(data), chunk)
		chunk = min(2*chunk, readChunk)
		if cap(data)-len(data) < k {
			grown := make([]byte, len(data), min(m.n, max(2*cap(data), len(data)+k, initialAlloc)))
			copy(grown, data)
			data = grown
		}
		got := len(data)
		data = data[:got+k]
		if _, err := io.ReadFull(br, data[got:]); err != nil {
			return err
		}
		p.touchRead()
	}
	if data == nil {
		data = []byte{}
	}
	e.mu.Lock()
	m.data = data
	m.done = true
	r = m.claimer.Load()
	e.mu.Unlock()
	if r != nil {
		deliver(r, m, data)
	}
	return nil
}

// readInto completes receive r with message m, of which prefix has been
// read already: the rest goes straight into r's buffer, and what does not
// fit is discarded (the receive then fails with ErrTruncate).
func (p *peer) readInto(br *bufio.Reader, r *request, m *inmsg, prefix []byte) error {
	fit := min(m.n, len(r.buf))
	have := copy(r.buf[:fit], prefix)
	for have < fit {
		k := min(fit-have, readChunk)
		if _, err := io.ReadFull(br, r.buf[have:have+k]); err != nil {
			return err
		}
		have += k
		p.touchRead()
	}
	if rest := int64(m.n - max(fit, len(prefix))); rest > 0 {
		if _, err := io.CopyN(io.Discard, br, rest); err != nil {
			return err
		}
	}
	deliver(r, m, r.buf[:fit])
	return nil
}

// ---- requests ----

// request is a pending send or receive. Completion is an atomic state:
// the goroutine that drives the connection checks it between frames
// without any channel operation, and a channel is made only when some
// goroutine actually has to block on the request (most receives complete
// while their owner is reading the socket itself).
type request struct {
	ep     *Endpoint
	buf    []byte
	state  atomic.Uint32                 // reqPending, reqWaiting, reqCompleting, reqDone: st and err are final at reqDone
	ch     atomic.Pointer[chan struct{}] // made by a waiter (doneCh) before it sets reqWaiting; closed on completion
	st     comm.Status
	err    error
	posted bool // the receive went to the engine under tk (else maybe e.slot)
	tk     match.Ticket
	send   bool
	peer   *peer // a receive from this peer: Wait may drive its connection
}

// closedCh is returned by doneCh for a request that is already complete.
var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

const (
	reqPending uint32 = iota
	reqWaiting        // as pending, and a waiter sleeps on r.ch
	reqCompleting
	reqDone
)

func (r *request) isDone() bool { return r.state.Load() == reqDone }

func newRequest(e *Endpoint) *request { return &request{ep: e} }

// complete records the outcome (the first call wins) and wakes the
// waiters, if any: two atomic operations, a compare-and-swap that claims
// the request and the store of reqDone. The store is complete's last
// access to r (it reads the waiters' channel before), so that a request
// may be reused as soon as its owner sees reqDone (see getRecv).
func (r *request) complete(st comm.Status, err error) {
	for {
		s := r.state.Load()
		if s >= reqCompleting {
			return
		}
		if !r.state.CompareAndSwap(s, reqCompleting) {
			continue // a waiter arrived meanwhile
		}
		r.st, r.err = st, err
		if s == reqWaiting {
			ch := r.ch.Load()
			r.state.Store(reqDone)
			close(*ch)
			return
		}
		r.state.Store(reqDone)
		return
	}
}

// doneCh returns a channel closed when r completes. A waiter publishes
// its channel in r.ch, then moves the state from pending to waiting: a
// completer that claims the request after that closes the channel, and a
// completer that claimed it before is at most a few instructions from
// reqDone.
func (r *request) doneCh() <-chan struct{} {
	if r.isDone() {
		return closedCh
	}
	ch := r.ch.Load()
	if ch == nil {
		c := make(chan struct{})
		if r.ch.CompareAndSwap(nil, &c) {
			ch = &c
		} else {
			ch = r.ch.Load() // another waiter's
		}
	}
	for {
		switch r.state.Load() {
		case reqWaiting:
			return *ch
		case reqPending:
			if r.state.CompareAndSwap(reqPending, reqWaiting) {
				return *ch
			}
		default:
			for !r.isDone() {
				runtime.Gosched()
			}
			return closedCh
		}
	}
}

// cancel withdraws a posted receive that has not matched yet; false means
// it matched (or was never posted) and will complete normally.
func (r *request) cancel() bool {
	r.ep.mu.Lock()
	defer r.ep.mu.Unlock()
	return r.ep.unpost(r)
}

func (r *request) Wait(ctx context.Context) (comm.Status, error) {
	if r.isDone() {
		return r.st, r.err
	}
	if r.peer != nil {
		r.peer.drive(ctx, r)
		if r.isDone() {
			return r.st, r.err
		}
	} else {
		r.ep.endGraces()
	}
	done := r.doneCh()
	select {
	case <-done:
		return r.st, r.err
	case <-ctx.Done():
		if r.cancel() {
			return comm.Status{}, ctx.Err()
		}
		if r.send {
			return comm.Status{}, ctx.Err() // a synchronous send: the data is already out
		}
		select {
		case <-done: // matched while we were cancelling
			return r.st, r.err
		case <-r.ep.aborted:
			return comm.Status{}, r.ep.abortErr
		}
	case <-r.ep.aborted:
		select {
		case <-done:
			return r.st, r.err
		default:
			return comm.Status{}, r.ep.abortErr
		}
	}
}

func (r *request) Test() (bool, comm.Status, error) {
	if r.isDone() {
		return true, r.st, r.err
	}
	// Whoever polls relies on the reader goroutines: hand back connections
	// left unread after a drive.
	if r.peer != nil {
		r.peer.endGrace()
	} else {
		r.ep.endGraces()
	}
	if err := r.ep.err(); err != nil {
		return true, comm.Status{}, err
	}
	return false, comm.Status{}, nil
}

// completed is a send request that finished when it was started.
type completed struct{}

func (completed) Wait(context.Context) (comm.Status, error) { return comm.Status{}, nil }
func (completed) Test() (bool, comm.Status, error)          { return true, comm.Status{}, nil }
