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
}

// DefaultBandwidthParams are 3 transfers of 1 MiB per pair.
func DefaultBandwidthParams() BandwidthParams { return BandwidthParams{Bytes: 1 << 20, Reps: 3} }

// BandwidthMap builds seed 002's bandwidth map (Sect. 6.1) over tree t
// among the live ranks of c (collective: every rank calls it with the same
// tree, as live.Infer returns it). The schedule is computed on every rank
// alike; after each parallel round every pair's result goes to rank 0,
// which broadcasts the round's results so that all ranks elect the same
// hosts for the next stage.
func BandwidthMap(ctx context.Context, c comm.Comm, t *infer.Tree, p BandwidthParams) (*infer.BandwidthMap, error) {
	if p.Bytes <= 0 || p.Reps <= 0 {
		return nil, fmt.Errorf("infer: bandwidth map: %d bytes x %d reps", p.Bytes, p.Reps)
	}
	all := make([]int, c.Size())
	for i := range all {
		all[i] = i
	}
	dup, err := c.Sub(all)
	if err != nil {
		return nil, err
	}
	return infer.BuildBandwidthMap(t, &bwProber{ctx: ctx, c: dup, p: p})
}

type bwProber struct {
	ctx context.Context
	c   comm.Comm
	p   BandwidthParams
}

func (b *bwProber) Bandwidths(pairs []infer.PairBandwidth) ([]float64, error) {
	me, n := b.c.Rank(), b.c.Size()
	mine := -1.0
	for _, q := range pairs {
		if q.A < 0 || q.B < 0 || q.A >= n || q.B >= n || q.A == q.B {
			return nil, fmt.Errorf("infer: bandwidth pair %d-%d outside a world of %d", q.A, q.B, n)
		}
		var err error
		switch me {
		case q.A:
			mine, err = b.measure(q.B)
		case q.B:
			err = b.serve(q.A)
		}
		if err != nil {
			return nil, fmt.Errorf("infer: bandwidth %d-%d: %w", q.A, q.B, err)
		}
	}
	// Results to rank 0 in pair order, then to everyone.
	var enc []byte
	if me == 0 {
		enc = make([]byte, 8*len(pairs))
		for i, q := range pairs {
			v := mine
			if q.A != 0 {
				var buf [8]byte
				if _, err := b.c.Recv(b.ctx, q.A, tagResult, buf[:]); err != nil {
					return nil, fmt.Errorf("infer: bandwidth result of rank %d: %w", q.A, err)
				}
				v = math.Float64frombits(binary.LittleEndian.Uint64(buf[:]))
			}
			binary.LittleEndian.PutUint64(enc[8*i:], math.Float64bits(v))
		}
	} else if mine >= 0 {
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(mine))
		if err := b.c.Send(b.ctx, 0, tagResult, buf[:]); err != nil {
			return nil, err
		}
	}
	enc, err := comm.BcastBytes(b.ctx, b.c, enc)
	if err != nil {
		return nil, err
	}
	if len(enc) != 8*len(pairs) {
		return nil, fmt.Errorf("infer: bandwidth round: %d bytes of results for %d pairs", len(enc), len(pairs))
	}
	out := make([]float64, len(pairs))
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(enc[8*i:]))
	}
	return out, nil
}

// measure sends Reps bulk messages to peer, each acknowledged by a byte;
// the rate of one transfer is Bytes / (T - RTT0), RTT0 the smallest of
// three one-byte round trips, which removes latency and per-message costs.
func (b *bwProber) measure(peer int) (float64, error) {
	one := []byte{0}
	rtt0 := time.Duration(math.MaxInt64)
	for i := 0; i < 3; i++ {
		t0 := b.c.Now()
		if err := b.c.Send(b.ctx, peer, tagBulk, one); err != nil {
			return 0, err
		}
		if _, err := b.c.Recv(b.ctx, peer, tagBulk, one); err != nil {
			return 0, err
		}
		rtt0 = min(rtt0, b.c.Now()-t0)
	}
	buf := make([]byte, b.p.Bytes)
	rates := make([]float64, b.p.Reps)
	for i := range rates {
		t0 := b.c.Now()
		if err := b.c.Send(b.ctx, peer, tagBulk, buf); err != nil {
			return 0, err
		}
		if _, err := b.c.Recv(b.ctx, peer, tagBulk, one); err != nil {
			return 0, err
		}
		dt := (b.c.Now() - t0 - rtt0).Seconds()
		if dt <= 0 {
			return 0, fmt.Errorf("transfer of %d bytes took no time beyond the round trip", b.p.Bytes)
		}
		rates[i] = float64(b.p.Bytes) / dt
	}
	slices.Sort(rates)
	return rates[len(rates)/2], nil
}

// serve is the peer side of measure.
func (b *bwProber) serve(peer int) error {
	one := []byte{0}
	for i := 0; i < 3; i++ {
		if _, err := b.c.Recv(b.ctx, peer, tagBulk, one); err != nil {
			return err
		}
		if err := b.c.Send(b.ctx, peer, tagBulk, one); err != nil {
			return err
		}
	}
	buf := make([]byte, b.p.Bytes)
	for i := 0; i < b.p.Reps; i++ {
		if _, err := b.c.Recv(b.ctx, peer, tagBulk, buf); err != nil {
			return err
		}
		if err := b.c.Send(b.ctx, peer, tagBulk, one); err != nil {
			return err
		}
	}
	return nil
}
