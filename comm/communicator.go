package comm

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"sync"
	"time"
)

// WorldContext is the matching context of the world communicator.
const WorldContext uint64 = 1

// NewWorld returns the world communicator over ep: rank i is world rank i.
// It allocates nothing per rank of the world (the rank maps are the
// identity), so that a simulator with thousands of ranks in one process
// does not pay O(N^2) for its communicators.
func NewWorld(ep Endpoint) Comm {
	return &communicator{ep: ep, cid: WorldContext, size: ep.Size(), rank: ep.Rank(), subs: map[uint64]int{}}
}

// communicator maps a communicator's ranks onto world ranks and its traffic
// onto one matching context of the endpoint.
type communicator struct {
	ep      Endpoint
	cid     uint64
	size    int
	members []int       // local rank -> world rank; nil for the world (identity)
	local   map[int]int // world rank -> local rank; nil for the world
	rank    int

	mu   sync.Mutex
	subs map[uint64]int // hash of a Sub member list -> calls so far
}

func newCommunicator(ep Endpoint, cid uint64, members []int, rank int) *communicator {
	local := make(map[int]int, len(members))
	for i, w := range members {
		local[w] = i
	}
	return &communicator{ep: ep, cid: cid, size: len(members), members: members, local: local, rank: rank, subs: map[uint64]int{}}
}

// SerialMemory tells whether the endpoint's ranks of this process never
// touch buffers at the same time (see Scratch).
func (c *communicator) SerialMemory() bool {
	s, ok := c.ep.(SerialMemory)
	return ok && s.SerialMemory()
}

// world maps a rank of this communicator to a world rank.
func (c *communicator) world(r int) int {
	if c.members == nil {
		return r
	}
	return c.members[r]
}

func (c *communicator) Rank() int          { return c.rank }
func (c *communicator) Size() int          { return c.size }
func (c *communicator) Now() time.Duration { return c.ep.Now() }
func (c *communicator) Spin(d time.Duration) {
	if d > 0 {
		c.ep.Spin(d)
	}
}

func (c *communicator) Identity() Identity {
	id := c.ep.Identity()
	id.Rank = c.rank
	return id
}

func (c *communicator) checkPeer(op string, peer int, any bool) error {
	if any && peer == AnySource {
		return nil
	}
	if peer < 0 || peer >= c.size {
		return fmt.Errorf("%s: rank %d out of range [0,%d)", op, peer, c.size)
	}
	return nil
}

func checkSendTag(op string, tag int) error {
	if tag == AnyTag {
		return fmt.Errorf("%s: AnyTag is only valid in receives", op)
	}
	return nil
}

func (c *communicator) isend(op string, dst, tag int, b []byte, sync bool) Request {
	if err := c.checkPeer(op, dst, false); err != nil {
		return Failed(err)
	}
	if err := checkSendTag(op, tag); err != nil {
		return Failed(err)
	}
	return c.ep.Isend(c.cid, c.world(dst), tag, b, sync)
}

func (c *communicator) Isend(dst, tag int, b []byte) Request {
	return c.isend("isend", dst, tag, b, false)
}

func (c *communicator) Send(ctx context.Context, dst, tag int, b []byte) error {
	_, err := c.isend("send", dst, tag, b, false).Wait(ctx)
	return err
}

func (c *communicator) Ssend(ctx context.Context, dst, tag int, b []byte) error {
	_, err := c.isend("ssend", dst, tag, b, true).Wait(ctx)
	return err
}

func (c *communicator) Irecv(src, tag int, b []byte) Request {
	if err := c.checkPeer("irecv", src, true); err != nil {
		return Failed(err)
	}
	wsrc := src
	if src != AnySource {
		wsrc = c.world(src)
	}
	inner := c.ep.Irecv(c.cid, wsrc, tag, b)
	if c.members == nil {
		return inner // world ranks are this communicator's ranks
	}
	return &localRequest{inner: inner, c: c}
}

func (c *communicator) Recv(ctx context.Context, src, tag int, b []byte) (Status, error) {
	return c.recvBlocking(ctx, src, tag, b)
}

// localRequest translates the world source rank of a receive into this
// communicator's numbering.
type localRequest struct {
	inner Request
	c     *communicator
}

func (r *localRequest) fix(st Status, err error) (Status, error) {
	if err == nil {
		if l, ok := r.c.local[st.Source]; ok {
			st.Source = l
		} else {
			err = fmt.Errorf("message from world rank %d, not a member of this communicator", st.Source)
		}
	}
	return st, err
}

func (r *localRequest) Wait(ctx context.Context) (Status, error) {
	return r.fix(r.inner.Wait(ctx))
}

func (r *localRequest) Test() (bool, Status, error) {
	done, st, err := r.inner.Test()
	if !done {
		return false, st, err
	}
	st, err = r.fix(st, err)
	return true, st, err
}

func (c *communicator) Sub(ranks []int) (Comm, error) {
	if len(ranks) == 0 {
		return nil, fmt.Errorf("sub: empty rank list")
	}
	// Every rank of a world of N calls Sub with lists of up to N ranks:
	// what it keeps and does per listed rank is O(N^2) in all, so an
	// ascending list needs no duplicate set, and a list that is world
	// ranks 0..k-1 in order keeps no rank maps at all (as the world).
	h := fnv.New64a()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], c.cid)
	h.Write(buf[:])
	if prefix(ranks) && c.members == nil {
		// Hashed by its length alone (after a marker no rank list holds):
		// hashing every listed rank on every rank was O(N^2) in all, a
		// second per duplicate of a simulated world of 16,384 ranks.
		if c.rank >= len(ranks) {
			return nil, ErrNotMember
		}
		binary.LittleEndian.PutUint64(buf[:], math.MaxUint64)
		h.Write(buf[:])
		binary.LittleEndian.PutUint64(buf[:], uint64(len(ranks)))
		h.Write(buf[:])
		return &communicator{ep: c.ep, cid: c.nextContext(h), size: len(ranks), rank: c.rank, subs: map[uint64]int{}}, nil
	}
	var seen map[int]bool
	me := -1
	members := make([]int, len(ranks))
	identity := true
	for i, r := range ranks {
		if r < 0 || r >= c.size {
			return nil, fmt.Errorf("sub: rank %d out of range [0,%d)", r, c.size)
		}
		if seen == nil && i > 0 && r <= ranks[i-1] {
			seen = make(map[int]bool, len(ranks))
			for _, q := range ranks[:i] {
				seen[q] = true
			}
		}
		if seen != nil {
			if seen[r] {
				return nil, fmt.Errorf("sub: rank %d listed twice", r)
			}
			seen[r] = true
		}
		if r == c.rank {
			me = i
		}
		members[i] = c.world(r)
		identity = identity && members[i] == i
		binary.LittleEndian.PutUint64(buf[:], uint64(r))
		h.Write(buf[:])
	}
	if me < 0 {
		return nil, ErrNotMember
	}
	cid := c.nextContext(h)
	if identity {
		return &communicator{ep: c.ep, cid: cid, size: len(members), rank: me, subs: map[uint64]int{}}, nil
	}
	return newCommunicator(c.ep, cid, members, me), nil
}

// prefix tells whether ranks is 0, 1, ..., len(ranks)-1.
func prefix(ranks []int) bool {
	for i, r := range ranks {
		if r != i {
			return false
		}
	}
	return true
}

// nextContext returns the context of a Sub whose member list h has hashed:
// the k-th Sub with the same list gets its own context, so two
// communicators with equal membership never see each other's messages.
func (c *communicator) nextContext(h hash.Hash64) uint64 {
	key := h.Sum64()
	c.mu.Lock()
	n := c.subs[key]
	c.subs[key] = n + 1
	c.mu.Unlock()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(n))
	h.Write(buf[:])
	cid := h.Sum64()
	if cid == WorldContext || cid == 0 {
		cid ^= 0x9e3779b97f4a7c15
	}
	return cid
}
