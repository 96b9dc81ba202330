// Package comm is the process-group interface every measurement, inference
// step and collective is written against. A Comm runs unchanged on the
// simulator (comm/sim), over TCP (comm/tcp) and in one process (comm/local).
//
// Messages match on (communicator context, source, tag) in order, as in MPI:
// two messages from one source to one destination on one communicator are
// received in the order they were sent when both match a receive.
package comm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// AnySource matches a message from any rank; AnyTag matches any user tag
// (tags >= 0), never a system tag.
const (
	AnySource = -1
	AnyTag    = -1
)

// System tags are negative and reserved for library protocols (barriers,
// identity exchange, collectives, probes), so that they never match a user's
// receive, not even one with AnyTag.
const (
	tagBarrier       = -2
	tagSubsetBarrier = -3
	tagIdentity      = -4
	tagBcast         = -5
	tagGather        = -6
	tagScatter       = -7
	// SystemTagBase is the first tag of the range libraries above comm may
	// use for their own protocols: SystemTag(0), SystemTag(1), ...
	systemTagBase = -1024
)

// SystemTag returns the n-th (n >= 0) reserved tag for protocols of packages
// above comm (collectives, probes); user code uses tags >= 0.
func SystemTag(n int) int { return systemTagBase - n }

// IsUserTag tells whether tag is an ordinary (non-reserved) tag.
func IsUserTag(tag int) bool { return tag >= 0 }

// Status describes a received message.
type Status struct {
	Source int // rank in the communicator the receive was posted on
	Tag    int
	Count  int // bytes received
}

// Request is a pending non-blocking operation.
type Request interface {
	// Wait blocks until the operation completes, fails, or ctx is done.
	Wait(ctx context.Context) (Status, error)
	// Test reports whether the operation has completed, without blocking.
	Test() (done bool, st Status, err error)
}

// Identity is what a rank knows about where it runs. Core and Socket are -1
// when unknown; they are hints (the OS may move a process).
type Identity struct {
	Rank int    `json:"rank"`
	Host string `json:"host,omitempty"`
	// Machine names the kernel and network stack the rank runs in (boot
	// id and network namespace on Linux). Ranks that report one host name
	// but different machines are on different kernels, or in containers
	// or emulated hosts of one kernel, and talk over a network: they are
	// not one host.
	Machine string `json:"machine,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Core    int    `json:"core"`
	Socket  int    `json:"socket"`
}

// Comm is a group of ranks that exchange messages.
type Comm interface {
	Rank() int
	Size() int
	// Send returns when b may be reused.
	Send(ctx context.Context, dst, tag int, b []byte) error
	// Ssend returns once the receiver has matched the message.
	Ssend(ctx context.Context, dst, tag int, b []byte) error
	// Recv receives into b; src may be AnySource and tag AnyTag. A message
	// longer than b fails with ErrTruncate.
	Recv(ctx context.Context, src, tag int, b []byte) (Status, error)
	Isend(dst, tag int, b []byte) Request
	Irecv(src, tag int, b []byte) Request
	// Now is a monotonic clock: virtual in the simulator.
	Now() time.Duration
	// Spin busy-waits for d (PLogP's o_r measurement); virtual in the simulator.
	Spin(d time.Duration)
	// Sub makes a sub-communicator of the listed ranks (numbered in this
	// communicator; rank i of the result is ranks[i]) with its own matching
	// context. Every listed rank must call Sub with the same list, in the same
	// order relative to its other Sub calls with that list; no communication
	// takes place, except on comm/mpi, where Sub is MPI_Comm_create_group and
	// returns once every listed rank has called it. A caller not in ranks
	// gets ErrNotMember.
	Sub(ranks []int) (Comm, error)
	// Identity describes the calling rank (Rank is its rank in this communicator).
	Identity() Identity
}

// Errors shared by all transports.
var (
	ErrTruncate  = errors.New("message longer than the receive buffer")
	ErrNotMember = errors.New("rank is not a member of the sub-communicator")
	ErrClosed    = errors.New("communicator closed")
)

// RankError names the rank an operation failed on (the peer, or the rank
// whose failure brought the group down).
type RankError struct {
	Rank int
	Err  error
}

func (e *RankError) Error() string { return fmt.Sprintf("rank %d: %v", e.Rank, e.Err) }
func (e *RankError) Unwrap() error { return e.Err }

// Endpoint is one rank's attachment to a world, implemented by transports.
// Ranks are world ranks; cid is the matching context of a communicator.
type Endpoint interface {
	Rank() int
	Size() int
	// Isend starts a send; with sync it completes only once the receiver has
	// matched the message.
	Isend(cid uint64, dst, tag int, b []byte, sync bool) Request
	// Irecv starts a receive; src may be AnySource, tag AnyTag. The Status's
	// Source is a world rank.
	Irecv(cid uint64, src, tag int, b []byte) Request
	Now() time.Duration
	Spin(d time.Duration)
	Identity() Identity
}

// Wait waits for every request and returns the first error.
func Wait(ctx context.Context, reqs ...Request) error {
	var first error
	for _, r := range reqs {
		if r == nil {
			continue
		}
		if _, err := r.Wait(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Sendrecv sends to dst and receives from src at the same time, so that
// pairwise exchanges cannot deadlock on rendezvous sends.
func Sendrecv(ctx context.Context, c Comm, dst, stag int, sb []byte, src, rtag int, rb []byte) (Status, error) {
	sr := c.Isend(dst, stag, sb)
	st, err := c.Recv(ctx, src, rtag, rb)
	if serr := Wait(ctx, sr); err == nil {
		err = serr
	}
	return st, err
}

// failedRequest is a request that failed before it started (bad arguments).
type failedRequest struct{ err error }

// Failed returns a request that has already failed with err.
func Failed(err error) Request { return failedRequest{err} }

func (f failedRequest) Wait(context.Context) (Status, error) { return Status{}, f.err }
func (f failedRequest) Test() (bool, Status, error)          { return true, Status{}, f.err }
