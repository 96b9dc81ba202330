package live

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"netaware/comm"
	"netaware/infer"
	"netaware/probe"
)

// Tags of the bandwidth map on its private communicator.
const (
	tagBulk   = 2
	tagResult = 3
)

// BandwidthParams of one pair's bandwidth measurement.
type BandwidthParams struct {
	Bytes int // bytes of each bulk transfer (1 MiB)
	Reps  int // transfers per pair; the median rate counts (3)
	// MinTimes rates the pair by the least time of each transfer size
	// over the Reps instead (MinTimesRate): on a loaded machine a rank
	// descheduled during the short transfer inflates that repetition's
	// rate, and two such of three moved the median (netaware emu's
	// chain-4x3 at load 23: a 95 Mbit/s trunk labelled 124).
	MinTimes bool
}

// DefaultBandwidthParams are 3 transfers of 1 MiB per pair.
func DefaultBandwidthParams() BandwidthParams { return BandwidthParams{Bytes: 1 << 20, Reps: 3} }

// BandwidthMap builds seed 002's bandwidth map (Sect. 6.1) over tree t
// among the live ranks of c (collective). Rank 0 runs the staged schedule
// and returns the map; before each parallel round it broadcasts the
// round's pairs, the ranks of those pairs measure, and the initiators
// send their result to rank 0. The other ranks return nil and never read
// t (they may pass nil): the schedule and the map are O(N) each, and
// every rank computing them was O(N^2) in time and memory in all.
func BandwidthMap(ctx context.Context, c comm.Comm, t *infer.Tree, p BandwidthParams) (*infer.BandwidthMap, error) {
	if p.Bytes <= 0 || p.Reps <= 0 {
		return nil, fmt.Errorf("infer: bandwidth map: %d bytes x %d reps", p.Bytes, p.Reps)
	}
	dup, err := comm.Dup(c)
	if err != nil {
		return nil, err
	}
	b := &bwProber{ctx: ctx, c: dup, p: p}
	if dup.Rank() != 0 {
		return nil, b.follow()
	}
	m, err := infer.BuildBandwidthMap(t, b)
	end := roundDone
	if err != nil {
		end = roundFailed
	}
	if _, berr := comm.BcastBytes(ctx, dup, []byte{end}); err == nil && berr != nil {
		err = berr
	}
	return m, err
}

// Kinds of rank 0's round announcements: a round of pairs follows, the
// map is done, or rank 0 failed (the others stop with an error).
const (
	roundPairs byte = iota + 1
	roundDone
	roundFailed
)

type bwProber struct {
	ctx context.Context
	c   comm.Comm
	p   BandwidthParams
}

// Bandwidths runs one round from rank 0: announce it, take part, collect
// the initiators' results in pair order.
func (b *bwProber) Bandwidths(pairs []infer.PairBandwidth) ([]float64, error) {
	enc := []byte{roundPairs}
	for _, q := range pairs {
		enc = binary.LittleEndian.AppendUint32(enc, uint32(q.A))
		enc = binary.LittleEndian.AppendUint32(enc, uint32(q.B))
	}
	if _, err := comm.BcastBytes(b.ctx, b.c, enc); err != nil {
		return nil, err
	}
	mine, err := b.round(pairs)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(pairs))
	for i, q := range pairs {
		if q.A == 0 {
			out[i] = mine
			continue
		}
		var buf [8]byte
		if _, err := b.c.Recv(b.ctx, q.A, tagResult, buf[:]); err != nil {
			return nil, fmt.Errorf("infer: bandwidth result of rank %d: %w", q.A, err)
		}
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[:]))
	}
	return out, nil
}

// follow is a rank other than 0: it takes part in every round rank 0
// announces until the map is done.
func (b *bwProber) follow() error {
	for {
		enc, err := comm.BcastBytes(b.ctx, b.c, nil)
		if err != nil {
			return err
		}
		switch {
		case len(enc) == 1 && enc[0] == roundDone:
			return nil
		case len(enc) == 1 && enc[0] == roundFailed:
			return fmt.Errorf("infer: bandwidth map failed on rank 0")
		case len(enc) == 0 || enc[0] != roundPairs || (len(enc)-1)%8 != 0:
			return fmt.Errorf("infer: bandwidth round announcement of %d bytes from rank 0", len(enc))
		}
		pairs := make([]infer.PairBandwidth, (len(enc)-1)/8)
		for i := range pairs {
			pairs[i] = infer.PairBandwidth{A: int(binary.LittleEndian.Uint32(enc[1+8*i:])), B: int(binary.LittleEndian.Uint32(enc[5+8*i:]))}
		}
		mine, err := b.round(pairs)
		if err != nil {
			return err
		}
		if mine >= 0 {
			var buf [8]byte
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(mine))
			if err := b.c.Send(b.ctx, 0, tagResult, buf[:]); err != nil {
				return err
			}
		}
	}
}

// round takes this rank's part in a round's pairs, in order; it returns
// the rate it measured as an initiator, or -1.
func (b *bwProber) round(pairs []infer.PairBandwidth) (float64, error) {
	me, n := b.c.Rank(), b.c.Size()
	mine := -1.0
	for _, q := range pairs {
		if q.A < 0 || q.B < 0 || q.A >= n || q.B >= n || q.A == q.B {
			return 0, fmt.Errorf("infer: bandwidth pair %d-%d outside a world of %d", q.A, q.B, n)
		}
		var err error
		switch me {
		case q.A:
			mine, err = b.measure(q.B)
		case q.B:
			err = b.serve(q.A)
		}
		if err != nil {
			return 0, fmt.Errorf("infer: bandwidth %d-%d: %w", q.A, q.B, err)
		}
	}
	return mine, nil
}

// baselinePings is how many one-byte round trips warm the pair up (a
// connection made on first use) and give RTT0, the fallback's baseline:
// one of three could miss the floor by hundreds of microseconds on a real
// network.
const baselinePings = 8

// measure rates the pair as probe bandwidth does (probe.DifferenceRate):
// a transfer of Bytes/4 and one of Bytes, each acknowledged by a byte,
// Reps times; the median rate counts.
func (b *bwProber) measure(peer int) (float64, error) {
	one := []byte{0}
	rtt0 := time.Duration(math.MaxInt64)
	for i := 0; i < baselinePings; i++ {
		t0 := b.c.Now()
		if err := b.c.Send(b.ctx, peer, tagBulk, one); err != nil {
			return 0, err
		}
		if _, err := b.c.Recv(b.ctx, peer, tagBulk, one); err != nil {
			return 0, err
		}
		rtt0 = min(rtt0, b.c.Now()-t0)
	}
	buf := comm.Zeros(b.p.Bytes) // never read: shared by the ranks of a process
	transfer := func(n int) (time.Duration, error) {
		t0 := b.c.Now()
		if err := b.c.Send(b.ctx, peer, tagBulk, buf[:n]); err != nil {
			return 0, err
		}
		if _, err := b.c.Recv(b.ctx, peer, tagBulk, one); err != nil {
			return 0, err
		}
		return b.c.Now() - t0, nil
	}
	short := probe.ShortTransfer(b.p.Bytes)
	ts := make([]time.Duration, b.p.Reps)
	tl := make([]time.Duration, b.p.Reps)
	for i := range ts {
		var err error
		if ts[i], err = transfer(short); err != nil {
			return 0, err
		}
		if tl[i], err = transfer(b.p.Bytes); err != nil {
			return 0, err
		}
	}
	if b.p.MinTimes {
		return MinTimesRate(b.p.Bytes, short, tl, ts, rtt0), nil
	}
	rates := make([]float64, b.p.Reps)
	for i := range rates {
		rates[i] = probe.DifferenceRate(b.p.Bytes, short, tl[i], ts[i], rtt0)
	}
	slices.Sort(rates)
	return rates[len(rates)/2], nil
}

// MinTimesRate is probe.DifferenceRate over the least time of the long
// transfers (tLong) and of the short ones (tShort): a stall only adds
// time, so each minimum is the repetition least disturbed, where the
// median of the repetitions' rates goes wrong once half of them had a
// stall in either transfer.
func MinTimesRate(long, short int, tLong, tShort []time.Duration, rtt0 time.Duration) float64 {
	if len(tLong) == 0 || len(tShort) == 0 {
		return math.NaN()
	}
	return probe.DifferenceRate(long, short, slices.Min(tLong), slices.Min(tShort), rtt0)
}

// serve is the peer side of measure.
func (b *bwProber) serve(peer int) error {
	one := []byte{0}
	for i := 0; i < baselinePings; i++ {
		if _, err := b.c.Recv(b.ctx, peer, tagBulk, one); err != nil {
			return err
		}
		if err := b.c.Send(b.ctx, peer, tagBulk, one); err != nil {
			return err
		}
	}
	// Never read either: in the simulator one buffer serves every rank
	// (comm.Scratch), where a buffer per serving rank held 16 GB in a
	// round of thousands of pairs at 16,384 ranks.
	buf := comm.Scratch(b.c, b.p.Bytes)
	for i := 0; i < 2*b.p.Reps; i++ { // the short and the long transfer of each repetition
		if _, err := b.c.Recv(b.ctx, peer, tagBulk, buf); err != nil {
			return err
		}
		if err := b.c.Send(b.ctx, peer, tagBulk, one); err != nil {
			return err
		}
	}
	return nil
}
