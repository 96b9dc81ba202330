// Who reads a connection: turns, drives by a waiting receiver, graces and
// their hand-back to the reader goroutine, context interrupts.

package tcp

import (
	"context"
	"errors"
	"time"
)

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
	if p.dc != nil {
		p.dc.setDriving(true)
		defer p.dc.setDriving(false)
	}
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
