// The send path: Isend, sends to ourselves, framed writes straight from the
// caller's buffer (writev), and the control-frame writer goroutine.

package tcp

import (
	"fmt"
	"net"
	"time"

	"netaware/comm"

	"golang.org/x/sys/unix"
)

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
		return comm.Failed(e.finishedErr(dst))
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
	p.wv, p.wverr, p.wvFull = bufs, nil, false
	err := p.raw.Write(p.writevFn)
	if p.wvFull {
		p.conn.SetWriteDeadline(time.Time{})
		if err != nil && isTimeout(err) {
			// Not drained within fullGrace: hand the connections back
			// and wait as long as it takes.
			p.ep.endGraces()
			err = p.raw.Write(p.writevFn)
		}
	}
	p.wv = nil
	if err != nil {
		return err
	}
	return p.wverr
}

// fullGrace is how long a write to a full socket waits for the peer to
// drain it before handing every connection left unread back to its reader
// goroutine, when no receive is posted. Most full sockets drain at once (a
// large message to a peer that reads it); handing the connections back
// then would move the reply to the reader goroutine, which the next
// receive has to take it back from: a wake-up and a hand-over per
// message. With a receive posted (a Sendrecv, a pairwise exchange) the
// connections go back at once, since the peer may be blocked writing to
// us.
const fullGrace = 200 * time.Microsecond

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
			// rank blocked writing to us: drain every connection, at
			// once if we wait for a message, after fullGrace otherwise.
			if !p.wvFull {
				p.wvFull = true
				if p.ep.receiving() {
					p.ep.endGraces()
				} else {
					p.conn.SetWriteDeadline(time.Now().Add(fullGrace))
				}
			}
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
