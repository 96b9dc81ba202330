// Reading a connection: the reader goroutine, frames, and payloads read
// straight into a posted receive or into the unexpected queue.

package tcp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"netaware/comm"
)

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
		k, err := br.Read(r.buf[have:min(fit, have+directChunk)])
		have += k
		if err != nil && (have < fit || k == 0) {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
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
