// Faults: abort and its notification, the watchdog (heartbeats, silent
// peers), goodbyes, lost connections and protocol errors.

package tcp

import (
	"errors"
	"fmt"
	"io"
	"time"

	"netaware/comm"
)

func (e *Endpoint) err() error {
	if !e.failed.Load() {
		return nil
	}
	return e.abortErr
}

// finishedErr is the error of a call to or from a rank that is gone: the
// abort's cause when one came (a rank that fails sends its abort before
// its goodbye, on the same connection, but a call may have checked for an
// abort just before both arrived), otherwise that the rank finished.
func (e *Endpoint) finishedErr(rank int) error {
	if err := e.err(); err != nil {
		return err
	}
	return &comm.RankError{Rank: rank, Err: errFinished}
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

// watchdog runs the endpoint's periodic duties with one ticker for all
// peers: it declares dead a peer that has been silent for longer than the
// heartbeat timeout while its host acknowledges nothing (a host that
// vanished without closing its sockets), or for longer than the hung
// timeout (a hung process), queues heartbeats on idle connections, and hands
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
			if silent := now - time.Duration(p.lastRecv.Load()); silent > e.cfg.HeartbeatTimeout && !(silent <= e.cfg.HungTimeout && hostAcks(p.conn, e.cfg.HeartbeatTimeout)) {
				why := "its host acknowledges nothing: host down or cut off"
				if silent > e.cfg.HungTimeout {
					why = "process hung or stopped"
				}
				err := &comm.RankError{Rank: p.rank, Err: fmt.Errorf("silent for %v (%s)", silent.Round(time.Millisecond), why)}
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
