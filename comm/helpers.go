package comm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"
)

// Barrier blocks until every rank of c has entered it (dissemination
// barrier: ceil(log2 P) rounds, in round k rank r signals r+2^k and waits
// for r-2^k).
func Barrier(ctx context.Context, c Comm) error {
	n := c.Size()
	members := make([]int, n)
	for i := range members {
		members[i] = i
	}
	return dissemination(ctx, c, members, c.Rank(), tagBarrier)
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
	return dissemination(ctx, c, ranks, me, tagSubsetBarrier)
}

// dissemination runs the barrier among members (ranks of c); me is the
// caller's index in members. Messages of consecutive barriers cannot be
// confused: within one barrier each round has a distinct source, and
// messages from one source are matched in order.
func dissemination(ctx context.Context, c Comm, members []int, me, tag int) error {
	n := len(members)
	var token [1]byte
	for k := 1; k < n; k *= 2 {
		to := members[(me+k)%n]
		from := members[(me-k%n+n)%n]
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
	n, me := c.Size(), c.Rank()
	mine, err := json.Marshal(c.Identity())
	if err != nil {
		return nil, err
	}
	if me != 0 {
		if err := c.Send(ctx, 0, tagIdentity, mine); err != nil {
			return nil, fmt.Errorf("identity: %w", err)
		}
		return nil, nil
	}
	all := make([]Identity, n)
	all[0] = c.Identity()
	buf := make([]byte, 4096)
	for i := 1; i < n; i++ {
		st, err := c.Recv(ctx, AnySource, tagIdentity, buf)
		if err != nil {
			return nil, fmt.Errorf("identity: %w", err)
		}
		var id Identity
		if err := json.Unmarshal(buf[:st.Count], &id); err != nil {
			return nil, fmt.Errorf("identity from rank %d: %w", st.Source, err)
		}
		id.Rank = st.Source
		all[st.Source] = id
	}
	return all, nil
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
