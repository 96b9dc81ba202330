// Package longhaul moves one large message across a high-latency link
// through helper ranks, as seed 000 Sect. 3.2.1 does for MPI across
// Grid'5000 sites, models its cost (Eq. 3.1-3.2), and derives the TCP and
// MPI settings of the alternative it compares with (the reconfiguration
// of its reference [49]: a TCP window and an eager threshold large enough
// that no synchronisation message is needed).
package longhaul

import (
	"context"
	"fmt"

	"netaware/comm"
)

// Plan names the ranks of one long-haul transfer: the sender Src, the
// receiver Dst, and helper ranks on each side of the long link. With h
// helpers on each side the seed counts n = 2h + 2 processes and splits the
// message into n - 1 pieces, one per process other than the sender (its
// Fig. 3.2: 2 helpers per node, P0-P5, 5 pieces).
type Plan struct {
	Src, Dst   int
	SrcHelpers []int // on the sender's side: receive a piece from Src, send it across to Dst
	DstHelpers []int // on the receiver's side: receive a piece across from Src, pass it to Dst
}

// Pieces is the number of pieces the message is split into (the seed's
// n - 1), which is also the number of transfers crossing the long link.
func (p Plan) Pieces() int { return 1 + len(p.SrcHelpers) + len(p.DstHelpers) }

// Validate checks that the plan's ranks are distinct ranks of a
// communicator of the given size.
func (p Plan) Validate(size int) error {
	seen := map[int]string{}
	check := func(r int, role string) error {
		if r < 0 || r >= size {
			return fmt.Errorf("longhaul: %s rank %d: the communicator has ranks 0-%d", role, r, size-1)
		}
		if prev, dup := seen[r]; dup {
			return fmt.Errorf("longhaul: rank %d is both %s and %s", r, prev, role)
		}
		seen[r] = role
		return nil
	}
	if err := check(p.Src, "sender"); err != nil {
		return err
	}
	if err := check(p.Dst, "receiver"); err != nil {
		return err
	}
	for _, r := range p.SrcHelpers {
		if err := check(r, "sender-side helper"); err != nil {
			return err
		}
	}
	for _, r := range p.DstHelpers {
		if err := check(r, "receiver-side helper"); err != nil {
			return err
		}
	}
	return nil
}

// carriers lists, for piece k, the rank that carries it: piece 0 goes to
// Dst directly, then one piece per receiver-side helper (sent across in
// phase 1), then one per sender-side helper (sent across in phase 2).
func (p Plan) carriers() []int {
	out := append([]int{p.Dst}, p.DstHelpers...)
	return append(out, p.SrcHelpers...)
}

// pieceBounds splits n bytes into k pieces, the first n mod k one byte
// longer: piece i is [off[i], off[i+1]).
func pieceBounds(n, k int) []int {
	off := make([]int, k+1)
	for i := 0; i < k; i++ {
		sz := n / k
		if i < n%k {
			sz++
		}
		off[i+1] = off[i] + sz
	}
	return off
}

// Transfer moves size bytes from the plan's Src to its Dst. Every rank of
// the plan calls it with the same plan, tag and size; buf is the message
// at Src and the receive buffer at Dst (size bytes), and unused at the
// helpers. Ranks outside the plan return at once.
//
// Phase 1 is a linear scatter: Src starts one non-blocking send per piece,
// the pieces for the receiver's side first so that the long transfers
// start together, then those for its own side's helpers; each carrier
// receives its piece. Phase 2 is a linear gather: Dst posts one
// non-blocking receive per piece (its own piece from Src and one from
// every helper, into place), and every helper sends on the piece it holds.
// Every piece crosses the long link in a transfer of its own (a process
// pair, so a connection, of its own), so their synchronisations - TCP
// window acknowledgements, rendezvous handshakes - overlap instead of
// queueing: the "pipelined acknowledgements" of the seed.
func Transfer(ctx context.Context, c comm.Comm, p Plan, tag int, buf []byte, size int) error {
	if err := p.Validate(c.Size()); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("longhaul: size %d", size)
	}
	me := c.Rank()
	carriers := p.carriers()
	off := pieceBounds(size, len(carriers))
	piece := func(k int, b []byte) []byte { return b[off[k]:off[k+1]] }
	switch me {
	case p.Src:
		if len(buf) < size {
			return fmt.Errorf("longhaul: sender buffer of %d bytes for a %d-byte message", len(buf), size)
		}
		reqs := make([]comm.Request, len(carriers))
		for k, r := range carriers {
			reqs[k] = c.Isend(r, tag, piece(k, buf))
		}
		return comm.Wait(ctx, reqs...)
	case p.Dst:
		if len(buf) < size {
			return fmt.Errorf("longhaul: receiver buffer of %d bytes for a %d-byte message", len(buf), size)
		}
		reqs := make([]comm.Request, len(carriers))
		reqs[0] = c.Irecv(p.Src, tag, piece(0, buf))
		for k := 1; k < len(carriers); k++ {
			reqs[k] = c.Irecv(carriers[k], tag, piece(k, buf))
		}
		return comm.Wait(ctx, reqs...)
	}
	for k := 1; k < len(carriers); k++ {
		if carriers[k] != me {
			continue
		}
		b := make([]byte, off[k+1]-off[k])
		st, err := c.Recv(ctx, p.Src, tag, b)
		if err != nil {
			return fmt.Errorf("longhaul: helper %d: piece %d from %d: %w", me, k, p.Src, err)
		}
		if st.Count != len(b) {
			return fmt.Errorf("longhaul: helper %d: piece %d from %d has %d bytes, want %d (do all ranks give the same size?)", me, k, p.Src, st.Count, len(b))
		}
		if err := c.Send(ctx, p.Dst, tag, b); err != nil {
			return fmt.Errorf("longhaul: helper %d: piece %d to %d: %w", me, k, p.Dst, err)
		}
		return nil
	}
	return nil
}
