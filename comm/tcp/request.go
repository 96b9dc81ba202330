// Requests: the completion state of a send or receive, Wait and Test.

package tcp

import (
	"context"
	"runtime"
	"sync/atomic"

	"netaware/comm"
	"netaware/comm/internal/match"
)

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
