// Package commtest is a conformance suite for comm transports: every
// transport (local, tcp, sim) runs the same checks of MPI matching
// semantics, sub-communicators, barriers and identity exchange.
package commtest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"netaware/comm"
)

// Runner runs body on n ranks of a fresh world and returns the first error.
type Runner func(ctx context.Context, n int, body func(ctx context.Context, c comm.Comm) error) error

// Run runs every conformance check with the given world sizes (the
// all-to-all check uses the largest).
func Run(t *testing.T, run Runner, sizes ...int) {
	if len(sizes) == 0 {
		sizes = []int{1, 2, 5, 8}
	}
	big := sizes[len(sizes)-1]
	t.Run("AllToAllEveryTagAndSource", func(t *testing.T) { AllToAll(t, run, big, 3) })
	t.Run("AnySourceOrdering", func(t *testing.T) { AnySourceOrdering(t, run) })
	t.Run("SubCommunicatorIsolation", func(t *testing.T) { SubIsolation(t, run) })
	t.Run("SubPrefixAndBadLists", func(t *testing.T) { SubPrefix(t, run) })
	t.Run("SsendWaitsForMatch", func(t *testing.T) { SsendCompletes(t, run) })
	t.Run("Truncation", func(t *testing.T) { Truncation(t, run) })
	for _, n := range sizes {
		t.Run(fmt.Sprintf("Barriers/%d", n), func(t *testing.T) { Barriers(t, run, n) })
		t.Run(fmt.Sprintf("Identities/%d", n), func(t *testing.T) { Identities(t, run, n) })
		t.Run(fmt.Sprintf("GatherScatter/%d", n), func(t *testing.T) { GatherScatter(t, run, n) })
	}
}

func payload(src, dst, tag, seq int) []byte {
	b := make([]byte, 16+(src*7+dst*3+tag)%40)
	binary.LittleEndian.PutUint32(b[0:], uint32(src))
	binary.LittleEndian.PutUint32(b[4:], uint32(dst))
	binary.LittleEndian.PutUint32(b[8:], uint32(tag))
	binary.LittleEndian.PutUint32(b[12:], uint32(seq))
	for i := 16; i < len(b); i++ {
		b[i] = byte(src ^ dst ^ tag ^ seq ^ i)
	}
	return b
}

// AllToAll: every rank sends `tags` messages with distinct tags, twice each,
// to every rank (itself included); receivers post receives for tags in
// reverse order with explicit sources, so matching by tag and source (and
// in-order delivery of the two messages with the same tag) is checked.
func AllToAll(t *testing.T, run Runner, n, tags int) {
	err := run(context.Background(), n, func(ctx context.Context, c comm.Comm) error {
		me := c.Rank()
		var reqs []comm.Request
		for dst := 0; dst < n; dst++ {
			for tag := 0; tag < tags; tag++ {
				for seq := 0; seq < 2; seq++ {
					reqs = append(reqs, c.Isend(dst, tag, payload(me, dst, tag, seq)))
				}
			}
		}
		buf := make([]byte, 64)
		for src := n - 1; src >= 0; src-- {
			for tag := tags - 1; tag >= 0; tag-- {
				for seq := 0; seq < 2; seq++ {
					st, err := c.Recv(ctx, src, tag, buf)
					if err != nil {
						return err
					}
					want := payload(src, me, tag, seq)
					if st.Source != src || st.Tag != tag || !bytes.Equal(buf[:st.Count], want) {
						return fmt.Errorf("rank %d: from %d tag %d seq %d: got status %+v payload %x", me, src, tag, seq, st, buf[:st.Count])
					}
				}
			}
		}
		return comm.Wait(ctx, reqs...)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// AnySourceOrdering: each sender's messages arrive in its send order even
// when received with AnySource and AnyTag.
func AnySourceOrdering(t *testing.T, run Runner) {
	const n, per = 4, 20
	err := run(context.Background(), n, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() != 0 {
			for i := 0; i < per; i++ {
				if err := c.Send(ctx, 0, i%3, payload(c.Rank(), 0, i%3, i)); err != nil {
					return err
				}
			}
			return nil
		}
		next := make([]int, n)
		buf := make([]byte, 64)
		for k := 0; k < (n-1)*per; k++ {
			st, err := c.Recv(ctx, comm.AnySource, comm.AnyTag, buf)
			if err != nil {
				return err
			}
			seq := int(binary.LittleEndian.Uint32(buf[12:]))
			if seq != next[st.Source] {
				return fmt.Errorf("from rank %d got message %d, want %d", st.Source, seq, next[st.Source])
			}
			if st.Tag != seq%3 {
				return fmt.Errorf("from rank %d message %d has tag %d", st.Source, seq, st.Tag)
			}
			next[st.Source]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// SubIsolation: messages on a sub-communicator never match receives on the
// parent or on another sub-communicator with the same members, and ranks
// are renumbered.
func SubIsolation(t *testing.T, run Runner) {
	const n = 6
	err := run(context.Background(), n, func(ctx context.Context, c comm.Comm) error {
		me := c.Rank()
		odd := []int{5, 3, 1} // rank i of the sub is odd[i]
		if me%2 == 0 {
			if _, err := c.Sub(odd); !errors.Is(err, comm.ErrNotMember) {
				return fmt.Errorf("non-member Sub: got %v, want ErrNotMember", err)
			}
			return comm.Barrier(ctx, c)
		}
		s1, err := c.Sub(odd)
		if err != nil {
			return err
		}
		s2, err := c.Sub(odd)
		if err != nil {
			return err
		}
		if want := map[int]int{5: 0, 3: 1, 1: 2}[me]; s1.Rank() != want || s1.Size() != 3 {
			return fmt.Errorf("sub rank %d size %d, want %d/3", s1.Rank(), s1.Size(), want)
		}
		// Every odd rank sends to sub rank 0 (world 5) on s2, then s1, then
		// the parent, all with tag 1; world 5 receives in the opposite order.
		if s1.Rank() != 0 {
			for i, cc := range []comm.Comm{s2, s1} {
				if err := cc.Send(ctx, 0, 1, []byte{byte(10 + i)}); err != nil {
					return err
				}
			}
			if err := c.Send(ctx, 5, 1, []byte{12}); err != nil {
				return err
			}
		} else {
			b := make([]byte, 1)
			for i := 0; i < 2; i++ {
				st, err := c.Recv(ctx, comm.AnySource, 1, b)
				if err != nil || b[0] != 12 || (st.Source != 1 && st.Source != 3) {
					return fmt.Errorf("parent receive: %v %v %+v", err, b, st)
				}
				if _, err := s1.Recv(ctx, comm.AnySource, comm.AnyTag, b); err != nil || b[0] != 11 {
					return fmt.Errorf("sub1 receive: %v %v", err, b)
				}
				st, err = s2.Recv(ctx, comm.AnySource, 1, b)
				if err != nil || b[0] != 10 || (st.Source != 1 && st.Source != 2) {
					return fmt.Errorf("sub2 receive: %v %v %+v", err, b, st)
				}
			}
		}
		if err := comm.Barrier(ctx, s1); err != nil {
			return err
		}
		return comm.Barrier(ctx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// SubPrefix: a sub-communicator of the first ranks in order (which keeps
// no rank maps) and one of a sub of it number ranks and report sources
// like any other, and stay apart from a duplicate with the same members;
// lists naming a rank twice, in any order, are refused.
func SubPrefix(t *testing.T, run Runner) {
	const n = 5
	err := run(context.Background(), n, func(ctx context.Context, c comm.Comm) error {
		for _, bad := range [][]int{{0, 1, 1}, {2, 0, 2}, {3, 1, 0, 1}} {
			if _, err := c.Sub(bad); err == nil {
				return fmt.Errorf("Sub(%v) accepted", bad)
			}
		}
		me := c.Rank()
		if me == 4 {
			return comm.Barrier(ctx, c)
		}
		p1, err := c.Sub([]int{0, 1, 2, 3})
		if err != nil {
			return err
		}
		p2, err := c.Sub([]int{0, 1, 2, 3})
		if err != nil {
			return err
		}
		if p1.Rank() != me || p1.Size() != 4 {
			return fmt.Errorf("prefix sub rank %d size %d", p1.Rank(), p1.Size())
		}
		// Ranks 1..3 send their rank on p2 then p1; rank 0 takes p1's first.
		b := make([]byte, 1)
		if me != 0 {
			if err := p2.Send(ctx, 0, 0, []byte{byte(10 + me)}); err != nil {
				return err
			}
			if err := p1.Send(ctx, 0, 0, []byte{byte(me)}); err != nil {
				return err
			}
		} else {
			for i := 0; i < 3; i++ {
				st, err := p1.Recv(ctx, comm.AnySource, 0, b)
				if err != nil || int(b[0]) != st.Source {
					return fmt.Errorf("prefix sub receive: %v, %d from %d", err, b[0], st.Source)
				}
				st, err = p2.Recv(ctx, st.Source, 0, b)
				if err != nil || int(b[0]) != 10+st.Source {
					return fmt.Errorf("duplicate sub receive: %v, %d from %d", err, b[0], st.Source)
				}
			}
		}
		// A sub of the prefix that is not a prefix of the world: [2, 3].
		if me >= 2 {
			q, err := p1.Sub([]int{2, 3})
			if err != nil {
				return err
			}
			if q.Rank() != me-2 {
				return fmt.Errorf("sub of the prefix: rank %d, want %d", q.Rank(), me-2)
			}
			if _, err := comm.Sendrecv(ctx, q, 1-q.Rank(), 0, []byte{byte(me)}, 1-q.Rank(), 0, b); err != nil || int(b[0]) != 5-me {
				return fmt.Errorf("sub of the prefix exchange: %v, got %d", err, b[0])
			}
		}
		if err := comm.Barrier(ctx, p1); err != nil {
			return err
		}
		return comm.Barrier(ctx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// SsendCompletes: a synchronous send completes once matched, and the
// receiver gets the data.
func SsendCompletes(t *testing.T, run Runner) {
	err := run(context.Background(), 2, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 0 {
			big := bytes.Repeat([]byte{7}, 200000)
			if err := c.Ssend(ctx, 1, 4, big); err != nil {
				return err
			}
			return c.Ssend(ctx, 1, 4, []byte("small"))
		}
		b := make([]byte, 200000)
		st, err := c.Recv(ctx, 0, 4, b)
		if err != nil || st.Count != 200000 || b[199999] != 7 {
			return fmt.Errorf("big: %v %+v", err, st)
		}
		st, err = c.Recv(ctx, 0, 4, b)
		if err != nil || string(b[:st.Count]) != "small" {
			return fmt.Errorf("small: %v %+v", err, st)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Truncation: a message longer than the buffer fails with ErrTruncate.
func Truncation(t *testing.T, run Runner) {
	err := run(context.Background(), 2, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 0 {
			return c.Send(ctx, 1, 0, make([]byte, 10))
		}
		_, err := c.Recv(ctx, 0, 0, make([]byte, 4))
		if !errors.Is(err, comm.ErrTruncate) {
			return fmt.Errorf("got %v, want ErrTruncate", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Barriers: full and subset barriers complete repeatedly, and no rank
// leaves a barrier before every participant has entered it.
func Barriers(t *testing.T, run Runner, n int) {
	err := run(context.Background(), n, func(ctx context.Context, c comm.Comm) error {
		for i := 0; i < 3; i++ {
			if err := comm.Barrier(ctx, c); err != nil {
				return err
			}
		}
		// Check ordering: rank 0 sends "late" after the barrier; everyone
		// else first posts a receive for it, so a barrier that let rank 0
		// through early would still pass — instead, everyone but rank 0
		// sends "entered" before the barrier and rank 0 checks after it
		// that all of them are already queued.
		if c.Rank() != 0 {
			if err := c.Send(ctx, 0, 9, []byte{1}); err != nil {
				return err
			}
		}
		if err := comm.Barrier(ctx, c); err != nil {
			return err
		}
		if c.Rank() == 0 {
			b := make([]byte, 1)
			for i := 1; i < n; i++ {
				if _, err := c.Recv(ctx, comm.AnySource, 9, b); err != nil {
					return err
				}
			}
		}
		evens := []int{}
		for r := 0; r < n; r += 2 {
			evens = append(evens, r)
		}
		if c.Rank()%2 == 0 {
			for i := 0; i < 2; i++ {
				if err := comm.SubsetBarrier(ctx, c, evens); err != nil {
					return err
				}
			}
		} else if err := comm.SubsetBarrier(ctx, c, evens); !errors.Is(err, comm.ErrNotMember) {
			return fmt.Errorf("odd rank in subset barrier: %v", err)
		}
		return comm.Barrier(ctx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Identities: every rank gets the same identity table, in rank order.
func Identities(t *testing.T, run Runner, n int) {
	err := run(context.Background(), n, func(ctx context.Context, c comm.Comm) error {
		ids, err := comm.GatherIdentities(ctx, c)
		if err != nil {
			return err
		}
		if len(ids) != n {
			return fmt.Errorf("%d identities, want %d", len(ids), n)
		}
		for r, id := range ids {
			if id.Rank != r {
				return fmt.Errorf("identity %d has rank %d", r, id.Rank)
			}
		}
		if ids[c.Rank()].Host != c.Identity().Host || ids[c.Rank()].PID != c.Identity().PID {
			return fmt.Errorf("own identity %+v differs from %+v", ids[c.Rank()], c.Identity())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// part is rank r's bytes in GatherScatter: rank-specific content of a
// length that varies with the rank, empty for every third rank.
func part(r, salt int) []byte {
	b := make([]byte, (r%3)*(r%10+salt))
	for i := range b {
		b[i] = byte(r*31 + i + salt)
	}
	return b
}

// GatherScatter: rank 0 gets every rank's bytes, in rank order, from
// GatherBytesRoot, and every rank gets its own part from ScatterBytes,
// twice in a row (consecutive calls must not mix their messages).
func GatherScatter(t *testing.T, run Runner, n int) {
	err := run(context.Background(), n, func(ctx context.Context, c comm.Comm) error {
		me := c.Rank()
		for salt := 1; salt <= 2; salt++ {
			got, err := comm.GatherBytesRoot(ctx, c, part(me, salt), 64)
			if err != nil {
				return err
			}
			if me != 0 && got != nil {
				return fmt.Errorf("rank %d got %d parts from a gather to rank 0", me, len(got))
			}
			if me == 0 {
				if len(got) != n {
					return fmt.Errorf("gathered %d parts, want %d", len(got), n)
				}
				for r, b := range got {
					if !bytes.Equal(b, part(r, salt)) {
						return fmt.Errorf("gathered part of rank %d is %v, want %v", r, b, part(r, salt))
					}
				}
			}
		}
		for salt := 3; salt <= 4; salt++ {
			var parts [][]byte
			if me == 0 {
				for r := 0; r < n; r++ {
					parts = append(parts, part(r, salt))
				}
			}
			b, err := comm.ScatterBytes(ctx, c, parts, 64)
			if err != nil {
				return err
			}
			if !bytes.Equal(b, part(me, salt)) {
				return fmt.Errorf("rank %d scattered %v, want %v", me, b, part(me, salt))
			}
		}
		if _, err := comm.GatherBytesRoot(ctx, c, make([]byte, 65), 64); err == nil {
			return fmt.Errorf("rank %d: a part over the limit was gathered", me)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
