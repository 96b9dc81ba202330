// Package local is an in-process transport: every rank is a goroutine of
// this process and messages are copied between them. It is the quickest
// world for unit tests of code written against comm.Comm, and it lets Go
// programs run collectives among goroutines. Time is the real monotonic
// clock.
package local

import (
	"context"
	"fmt"
	"sync"
	"time"

	"netaware/comm"
	"netaware/comm/internal/match"
)

// World is a group of in-process ranks.
type World struct {
	eps   []*endpoint
	start time.Time

	abortOnce sync.Once
	aborted   chan struct{}
	abortRank int
	abortErr  error
}

// NewWorld makes a world of n ranks.
func NewWorld(n int) *World {
	w := &World{start: time.Now(), aborted: make(chan struct{})}
	for r := 0; r < n; r++ {
		id := comm.LocalIdentity(r)
		w.eps = append(w.eps, &endpoint{w: w, rank: r, id: id, eng: match.New[*message, *request]()})
	}
	return w
}

// Comm returns rank r's world communicator.
func (w *World) Comm(r int) comm.Comm { return comm.NewWorld(w.eps[r]) }

// Abort fails every pending and future operation of the world with an error
// naming rank.
func (w *World) Abort(rank int, err error) {
	w.abortOnce.Do(func() {
		w.abortRank = rank
		w.abortErr = &comm.RankError{Rank: rank, Err: fmt.Errorf("failed: %w", err)}
		close(w.aborted)
	})
}

// Run runs body on n ranks, each in its own goroutine, and returns the first
// error; a failing rank aborts the others, whose pending calls then fail.
func Run(ctx context.Context, n int, body func(ctx context.Context, c comm.Comm) error) error {
	w := NewWorld(n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			if err := body(ctx, w.Comm(r)); err != nil {
				errs[r] = err
				w.Abort(r, err)
			}
		}(r)
	}
	wg.Wait()
	// Report the rank that failed first, not the ones it brought down.
	if w.err() != nil {
		return fmt.Errorf("rank %d: %w", w.abortRank, errs[w.abortRank])
	}
	return nil
}

type message struct {
	data []byte
	sync *request // completed when the message is matched (Ssend)
}

type endpoint struct {
	w    *World
	rank int
	id   comm.Identity

	mu  sync.Mutex
	eng *match.Engine[*message, *request]
}

func (e *endpoint) Rank() int               { return e.rank }
func (e *endpoint) Size() int               { return len(e.w.eps) }
func (e *endpoint) Now() time.Duration      { return time.Since(e.w.start) }
func (e *endpoint) Identity() comm.Identity { return e.id }

func (e *endpoint) Spin(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
	}
}

func (e *endpoint) Isend(cid uint64, dst, tag int, b []byte, sync bool) comm.Request {
	if err := e.w.err(); err != nil {
		return comm.Failed(err)
	}
	m := &message{data: append([]byte(nil), b...)}
	send := newRequest(e.w)
	if sync {
		m.sync = send
	}
	d := e.w.eps[dst]
	d.mu.Lock()
	recv, ok := d.eng.Arrive(cid, e.rank, tag, m)
	d.mu.Unlock()
	if ok {
		deliver(recv, m, e.rank, tag)
	}
	if !sync {
		send.complete(comm.Status{}, nil)
	}
	return send
}

func (e *endpoint) Irecv(cid uint64, src, tag int, b []byte) comm.Request {
	if err := e.w.err(); err != nil {
		return comm.Failed(err)
	}
	r := newRequest(e.w)
	r.buf = b
	e.mu.Lock()
	m, msrc, mtag, ticket, ok := e.eng.Post(cid, src, tag, r)
	if !ok {
		r.cancel = func() bool {
			e.mu.Lock()
			defer e.mu.Unlock()
			return e.eng.Cancel(ticket)
		}
	}
	e.mu.Unlock()
	if ok {
		deliver(r, m, msrc, mtag)
	}
	return r
}

// deliver copies a matched message into its receive and completes both the
// receive and, for a synchronous send, the send.
func deliver(r *request, m *message, src, tag int) {
	st := comm.Status{Source: src, Tag: tag, Count: len(m.data)}
	var err error
	if len(m.data) > len(r.buf) {
		err = &comm.RankError{Rank: src, Err: fmt.Errorf("%w (%d > %d bytes)", comm.ErrTruncate, len(m.data), len(r.buf))}
		st.Count = 0
	} else {
		copy(r.buf, m.data)
	}
	r.complete(st, err)
	if m.sync != nil {
		m.sync.complete(comm.Status{}, nil)
	}
}

func (w *World) err() error {
	select {
	case <-w.aborted:
		return w.abortErr
	default:
		return nil
	}
}

type request struct {
	w      *World
	buf    []byte
	once   sync.Once
	done   chan struct{}
	st     comm.Status
	err    error
	cancel func() bool
}

func newRequest(w *World) *request { return &request{w: w, done: make(chan struct{})} }

func (r *request) complete(st comm.Status, err error) {
	r.once.Do(func() {
		r.st, r.err = st, err
		close(r.done)
	})
}

func (r *request) Wait(ctx context.Context) (comm.Status, error) {
	select {
	case <-r.done:
		return r.st, r.err
	default:
	}
	select {
	case <-r.done:
		return r.st, r.err
	case <-ctx.Done():
		if r.cancel == nil || r.cancel() {
			return comm.Status{}, ctx.Err()
		}
		<-r.done // matched while we were cancelling
		return r.st, r.err
	case <-r.w.aborted:
		select {
		case <-r.done:
			return r.st, r.err
		default:
			return comm.Status{}, r.w.abortErr
		}
	}
}

func (r *request) Test() (bool, comm.Status, error) {
	select {
	case <-r.done:
		return true, r.st, r.err
	default:
	}
	if err := r.w.err(); err != nil {
		return true, comm.Status{}, err
	}
	return false, comm.Status{}, nil
}
