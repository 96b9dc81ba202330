// Package tcp is the TCP transport of comm: one process per rank, a full
// mesh of authenticated TCP connections opened at start-up (Join), and
// MPI matching through the shared engine. Ranks of one machine talk
// through shared-memory rings instead, under the same framing and engine
// (local.go, shm_linux.go).
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
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"netaware/comm"
	"netaware/comm/internal/match"
)

// Config tunes the transport; zero fields take the defaults.
type Config struct {
	// MaxMessage bounds a message's size in bytes, both sent and announced
	// by a peer (default 1 GiB).
	MaxMessage int64
	// HeartbeatInterval is how often an idle connection sends a heartbeat
	// (default 1 s). HeartbeatTimeout is how long a silent peer is
	// tolerated when its host does not acknowledge our bytes either: the
	// host is down or cut off (default 5 s). HungTimeout is how long a
	// silent peer is tolerated while its host's kernel still acknowledges
	// (default 60 s): its process is stopped, starved of CPU or hung. On
	// a loaded machine a starved rank was silent for over 5 s and alive;
	// a killed one closes its sockets and is detected at once.
	HeartbeatInterval time.Duration
	HeartbeatTimeout  time.Duration
	HungTimeout       time.Duration
	// HandshakeTimeout bounds the authentication of one connection (default 10 s).
	HandshakeTimeout time.Duration
	// BootstrapTimeout bounds Join as a whole: waiting for the coordinator
	// and every rank to show up (default 2 min).
	BootstrapTimeout time.Duration
	// CloseTimeout bounds how long Close waits for peers to acknowledge
	// the goodbye (default 5 s).
	CloseTimeout time.Duration
	// NoShm keeps ranks of one machine on loopback TCP instead of the
	// intra-host path (Unix sockets, see local.go).
	NoShm bool
	// ShmRing is the size of each direction's shared-memory ring between
	// two ranks of one machine, a power of two from 4 KiB to 64 MiB;
	// 0 (the default) is 2 MiB, less with more than 23 ranks on a machine
	// (1 GiB of rings per machine at most, see ringFor); negative keeps
	// them on plain Unix sockets.
	// ShmSpin is how long a receiver waiting for a message polls its ring
	// before it sleeps (default 200 µs; negative: never).
	ShmRing int
	ShmSpin time.Duration
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
	if c.HungTimeout <= 0 {
		c.HungTimeout = 60 * time.Second
	}
	c.HungTimeout = max(c.HungTimeout, c.HeartbeatTimeout)
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
	if c.ShmSpin == 0 {
		c.ShmSpin = shmSpin
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
	if dc, ok := conn.(drivenConn); ok {
		p.dc = dc
		// As for a full socket (see writev): hand the connections back at
		// once if a receive waits, after a short wait otherwise.
		dc.setOnFull(func(waited bool) {
			if waited || e.receiving() {
				e.endGraces()
			}
		})
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
		for _, p := range e.peers {
			if p != nil && p.dc != nil {
				p.dc.release()
			}
		}
	})
	return nil
}
