// The receive side: posting a receive, the receive slot, matching against
// the unexpected messages, delivery, failing receives from a lost rank.

package tcp

import (
	"context"
	"fmt"
	"sync/atomic"

	"netaware/comm"
)

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
			return e.finishedErr(src)
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

// receiving says whether a receive is posted (waiting for its message).
func (e *Endpoint) receiving() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, np := e.eng.Len()
	return e.slot != nil || np > 0
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
