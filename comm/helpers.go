package comm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"
	"unsafe"
)

// Barrier blocks until every rank of c has entered it: c's own barrier if
// it has one (Barrierer), else a dissemination barrier (ceil(log2 P)
// rounds, in round k rank r signals r+2^k and waits for r-2^k).
func Barrier(ctx context.Context, c Comm) error {
	if b, ok := c.(Barrierer); ok {
		return b.Barrier(ctx)
	}
	// No list of the N members: every rank of a simulated world would
	// allocate one, N^2 in all.
	return dissemination(ctx, c, c.Size(), func(i int) int { return i }, c.Rank(), tagBarrier)
}

// SubsetBarrier blocks until every rank listed in ranks has entered it; the
// other ranks of c are not involved (seed 003, Fig. 3.1: LGate's
// dissemination barrier over a subset, which lets independent groups
// synchronize without the whole communicator). Every listed rank must call
// it with the same list; a rank not in the list gets ErrNotMember.
func SubsetBarrier(ctx context.Context, c Comm, ranks []int) error {
	me := -1
	for i, r := range ranks {
		if r < 0 || r >= c.Size() {
			return fmt.Errorf("subset barrier: rank %d out of range [0,%d)", r, c.Size())
		}
		if r == c.Rank() {
			me = i
		}
	}
	if me < 0 {
		return ErrNotMember
	}
	return dissemination(ctx, c, len(ranks), func(i int) int { return ranks[i] }, me, tagSubsetBarrier)
}

// dissemination runs the barrier among the n members member(0..n-1)
// (ranks of c); me is the caller's index among them. Messages of
// consecutive barriers cannot be confused: within one barrier each round
// has a distinct source, and messages from one source are matched in
// order.
func dissemination(ctx context.Context, c Comm, n int, member func(int) int, me, tag int) error {
	var token [1]byte
	for k := 1; k < n; k *= 2 {
		to := member((me + k) % n)
		from := member((me - k%n + n) % n)
		if _, err := Sendrecv(ctx, c, to, tag, token[:], from, tag, token[:]); err != nil {
			return fmt.Errorf("barrier round %d (to %d, from %d): %w", k, to, from, err)
		}
	}
	return nil
}

// GatherIdentities returns every rank's identity, indexed by rank, on every
// rank (gather to rank 0, then broadcast along a binomial tree). Every
// rank then holds N identities: code that needs them on rank 0 only calls
// GatherIdentitiesRoot, which keeps the other ranks O(1).
func GatherIdentities(ctx context.Context, c Comm) ([]Identity, error) {
	all, err := GatherIdentitiesRoot(ctx, c)
	if err != nil {
		return nil, err
	}
	table, err := json.Marshal(all)
	if err != nil {
		return nil, err
	}
	table, err = broadcast(ctx, c, table, tagIdentity)
	if err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	if err := json.Unmarshal(table, &all); err != nil {
		return nil, fmt.Errorf("identity table: %w", err)
	}
	return all, nil
}

// GatherIdentitiesRoot returns every rank's identity, indexed by rank, on
// rank 0, and nil on the other ranks.
func GatherIdentitiesRoot(ctx context.Context, c Comm) ([]Identity, error) {
	mine, err := json.Marshal(c.Identity())
	if err != nil {
		return nil, err
	}
	if len(mine) > maxIdentity {
		return nil, fmt.Errorf("identity of rank %d: %d bytes of JSON (limit %d)", c.Rank(), len(mine), maxIdentity)
	}
	parts, err := gatherTree(ctx, c, mine, maxIdentity, tagIdentity, false)
	if err != nil || parts == nil {
		if err != nil {
			err = fmt.Errorf("identity: %w", err)
		}
		return nil, err
	}
	all := make([]Identity, len(parts))
	for r, b := range parts {
		if r == 0 {
			all[0] = c.Identity()
			continue
		}
		var id Identity
		if err := json.Unmarshal(b, &id); err != nil {
			return nil, fmt.Errorf("identity from rank %d: %w", r, err)
		}
		id.Rank = r
		all[r] = id
	}
	return all, nil
}

// maxIdentity bounds one rank's identity as JSON (host and machine names).
const maxIdentity = 4096

// GatherBytesRoot returns every rank's b, indexed by rank, on rank 0, and
// nil on the other ranks. A rank's b may be up to limit bytes. It carries
// control data (measurements, identities) to rank 0 along a binomial tree.
func GatherBytesRoot(ctx context.Context, c Comm, b []byte, limit int) ([][]byte, error) {
	if len(b) > limit {
		return nil, fmt.Errorf("gather: rank %d has %d bytes (limit %d)", c.Rank(), len(b), limit)
	}
	return gatherTree(ctx, c, b, limit, tagGather, true)
}

// gatherTree gathers along a binomial tree: rank r collects ranks [r,
// r+lowBit(r)) from its children r+1, r+2, r+4, ... and sends them on to
// r-lowBit(r), so that no rank receives from more than log2 N others.
// Every rank sending to rank 0 at once puts N flows on rank 0's link,
// which the simulator re-solves together at each of their 2N events:
// O(N^2), 96 of the 136 s of a 4,096-rank discovery. Each rank's part is
// a record (4-byte length, bytes), in rank order.
//
// sized sends each subtree's records as a length, then a body, so a
// receiver allocates only what arrives (large parts). Without it each
// child sends one message into a buffer of its subtree's bound (ranks x
// (4+limit)): for small bounded parts such as identities, which then take
// N-1 messages, as many as every rank sending to rank 0 did.
func gatherTree(ctx context.Context, c Comm, mine []byte, limit, tag int, sized bool) ([][]byte, error) {
	n, me := c.Size(), c.Rank()
	body := binary.LittleEndian.AppendUint32(nil, uint32(len(mine)))
	body = append(body, mine...)
	span := lowBit(me)
	if me == 0 {
		span = n
	}
	var buf []byte
	for k := 1; k < span && me+k < n; k <<= 1 {
		child := me + k
		bound := min(k, n-child) * (4 + limit)
		if sized {
			b, err := recvSized(ctx, c, child, tag, uint64(bound))
			if err != nil {
				return nil, err
			}
			body = append(body, b...)
			continue
		}
		if len(buf) < bound {
			buf = make([]byte, bound)
		}
		st, err := c.Recv(ctx, child, tag, buf)
		if err != nil {
			return nil, err
		}
		body = append(body, buf[:st.Count]...)
	}
	switch parent := me &^ lowBit(me); {
	case me == 0:
		return splitRecords(body, 0, n, limit)
	case sized:
		return nil, sendSized(ctx, c, parent, tag, body)
	default:
		return nil, c.Send(ctx, parent, tag, body)
	}
}

// ScatterBytes hands parts[r], given on rank 0 (len(parts) == c.Size()),
// to rank r, along a binomial tree (rank 0 sends log2 N messages, not N
// at once: see gatherTree), and returns the caller's part. The other
// ranks pass nil; a part may be up to limit bytes.
func ScatterBytes(ctx context.Context, c Comm, parts [][]byte, limit int) ([]byte, error) {
	n, me := c.Size(), c.Rank()
	span := lowBit(me)
	var mine [][]byte // parts of ranks [me, me+span)
	if me == 0 {
		if len(parts) != n {
			return nil, fmt.Errorf("scatter: %d parts for %d ranks", len(parts), n)
		}
		for r, p := range parts {
			if len(p) > limit {
				return nil, fmt.Errorf("scatter: part of rank %d has %d bytes (limit %d)", r, len(p), limit)
			}
		}
		span, mine = n, parts
	} else {
		parent := me &^ lowBit(me)
		count := min(span, n-me)
		b, err := recvSized(ctx, c, parent, tagScatter, uint64(count)*uint64(4+limit))
		if err != nil {
			return nil, err
		}
		if mine, err = splitRecords(b, me, count, limit); err != nil {
			return nil, &RankError{Rank: parent, Err: err}
		}
	}
	// Larger subtrees first: they have the most to pass on.
	limitK := 1
	for limitK < span {
		limitK <<= 1
	}
	for k := limitK >> 1; k >= 1; k >>= 1 {
		child := me + k
		if k >= span || child >= n {
			continue
		}
		var body []byte
		for _, p := range mine[k:min(2*k, n-me)] {
			body = binary.LittleEndian.AppendUint32(body, uint32(len(p)))
			body = append(body, p...)
		}
		if err := sendSized(ctx, c, child, tagScatter, body); err != nil {
			return nil, err
		}
	}
	return mine[0], nil
}

// sendSized sends b's length, then b.
func sendSized(ctx context.Context, c Comm, dst, tag int, b []byte) error {
	var hdr [8]byte
	binary.LittleEndian.PutUint64(hdr[:], uint64(len(b)))
	if err := c.Send(ctx, dst, tag, hdr[:]); err != nil {
		return err
	}
	return c.Send(ctx, dst, tag, b)
}

// recvSized receives what sendSized sent, refusing more than limit bytes.
func recvSized(ctx context.Context, c Comm, src, tag int, limit uint64) ([]byte, error) {
	var hdr [8]byte
	if _, err := c.Recv(ctx, src, tag, hdr[:]); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint64(hdr[:])
	if size > limit {
		return nil, &RankError{Rank: src, Err: fmt.Errorf("%d bytes announced (limit %d)", size, limit)}
	}
	b := make([]byte, size)
	if _, err := c.Recv(ctx, src, tag, b); err != nil {
		return nil, err
	}
	return b, nil
}

// splitRecords cuts b into count records of ranks first, first+1, ...
func splitRecords(b []byte, first, count, limit int) ([][]byte, error) {
	out := make([][]byte, count)
	for i := range out {
		if len(b) < 4 {
			return nil, fmt.Errorf("part of rank %d missing (%d of %d)", first+i, i, count)
		}
		size := binary.LittleEndian.Uint32(b)
		if uint64(size) > uint64(len(b)-4) || int64(size) > int64(limit) {
			return nil, fmt.Errorf("part of rank %d: %d bytes announced, %d left (limit %d)", first+i, size, len(b)-4, limit)
		}
		out[i] = b[4 : 4+size : 4+size]
		b = b[4+size:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes left after the parts of ranks %d-%d", len(b), first, first+count-1)
	}
	return out, nil
}

// BcastBytes broadcasts rank 0's b, whose length the other ranks need not
// know, to every rank of c (binomial tree); it returns the bytes on every
// rank. It is a small helper for control data; package coll has the
// tuned collectives.
func BcastBytes(ctx context.Context, c Comm, b []byte) ([]byte, error) {
	return broadcast(ctx, c, b, tagBcast)
}

// maxBroadcast bounds what a peer may announce to BcastBytes: it carries
// control data (identity tables, levels), never bulk data.
const maxBroadcast = 1 << 30

// broadcast sends the length first, then the bytes.
func broadcast(ctx context.Context, c Comm, b []byte, tag int) ([]byte, error) {
	n, me := c.Size(), c.Rank()
	var hdr [8]byte
	if me != 0 {
		parent := me &^ lowBit(me)
		if _, err := c.Recv(ctx, parent, tag, hdr[:]); err != nil {
			return nil, err
		}
		n := binary.LittleEndian.Uint64(hdr[:])
		if n > maxBroadcast {
			return nil, &RankError{Rank: parent, Err: fmt.Errorf("broadcast of %d bytes announced (limit %d)", n, maxBroadcast)}
		}
		b = make([]byte, int(n))
		if _, err := c.Recv(ctx, parent, tag, b); err != nil {
			return nil, err
		}
	} else {
		binary.LittleEndian.PutUint64(hdr[:], uint64(len(b)))
	}
	// Children of me are me+2^k for 2^k below me's lowest set bit.
	limit := lowBit(me)
	if me == 0 {
		limit = 1
		for limit < n {
			limit <<= 1
		}
	}
	for k := limit >> 1; k >= 1; k >>= 1 {
		child := me + k
		if child >= n {
			continue
		}
		if err := c.Send(ctx, child, tag, hdr[:]); err != nil {
			return nil, err
		}
		if err := c.Send(ctx, child, tag, b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func lowBit(x int) int { return x & -x }

// zeros backs Zeros.
var zeros struct {
	sync.Mutex
	b []byte
}

// Zeros returns n zero bytes to send where only the size of a message
// matters (probes, bulk transfers). Every caller of the process shares
// them: they must never be written to. Hundreds of pairs measuring at
// once in the simulator would otherwise hold a buffer of up to 1 MiB each.
func Zeros(n int) []byte {
	if n <= 0 {
		return nil
	}
	zeros.Lock()
	defer zeros.Unlock()
	if len(zeros.b) < n {
		zeros.b = make([]byte, n)
	}
	return zeros.b[:n:n]
}

// prefixes backs Dup.
var prefixes struct {
	sync.Mutex
	ranks []int
}

// Dup returns a communicator of c's ranks, in c's order, with its own
// matching context (MPI_Comm_dup), for a protocol that must not see c's
// other traffic. Its rank list 0..N-1 is one read-only slice per process:
// every rank of a simulated world building its own was N^2 in all (2 GB
// per Dup at 16,384 ranks).
func Dup(c Comm) (Comm, error) {
	n := c.Size()
	prefixes.Lock()
	for len(prefixes.ranks) < n {
		prefixes.ranks = append(prefixes.ranks, len(prefixes.ranks))
	}
	all := prefixes.ranks[:n:n]
	prefixes.Unlock()
	return c.Sub(all)
}

// scratch backs Scratch.
var scratch struct {
	sync.Mutex
	b []byte
}

// SerialMemory is implemented by endpoints whose ranks of one process never
// touch message buffers at the same time: the simulator runs one rank at a
// time and copies messages while every rank waits.
type SerialMemory interface {
	SerialMemory() bool
}

// Scratch returns n bytes for transfers whose contents do not matter
// (benchmarks time them): on a transport whose endpoints report
// SerialMemory, one buffer of the process that every rank shares, written
// by any of them; elsewhere a buffer of the caller's own. A simulated
// world of 512 ranks broadcasting 4 MiB would otherwise hold 2 GB of
// receive buffers, and a message sent from the buffer it is received into
// is not copied at all.
func Scratch(c Comm, n int) []byte {
	if n <= 0 {
		return nil
	}
	if s, ok := c.(SerialMemory); !ok || !s.SerialMemory() {
		return make([]byte, n)
	}
	scratch.Lock()
	defer scratch.Unlock()
	if len(scratch.b) < n {
		scratch.b = make([]byte, n)
	}
	return scratch.b[:n:n]
}

// InScratch tells whether b lies in the shared scratch buffer of Scratch:
// a transport may then send it without a copy of its own (the simulator's
// eager messages), since nobody reads what it holds.
func InScratch(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	scratch.Lock()
	defer scratch.Unlock()
	if len(scratch.b) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(scratch.b)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(scratch.b))
}
