// The connection to one other rank: the state its writers, readers and the watchdog share.

package tcp

import (
	"bufio"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// peer is the connection to one other rank.
type peer struct {
	ep   *Endpoint
	rank int
	conn net.Conn
	dc   drivenConn // conn, if it is shared memory

	wmu      sync.Mutex // serializes frames on the socket
	hbuf     [headerSize]byte
	wbuf     []byte
	wdone    bool // goodbye written; no more frames (guarded by wmu)
	raw      syscall.RawConn
	iov      [2][]byte
	wv       [][]byte // what writevStep still has to write
	wverr    error
	wvFull   bool // this write found the socket full (see writev)
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
