package probe

import (
	"context"
	"fmt"
	"time"

	"netaware/comm"
	"netaware/dataset"
)

// HockneyPair measures from the calling rank to peer, which must be in
// PLogPServe(ctx, c, me).
func HockneyPair(ctx context.Context, c comm.Comm, peer int, p dataset.HockneyParams) (*dataset.HockneyResult, error) {
	p = p.WithDefaults()
	if p.MaxBytes > 1<<30 {
		return nil, fmt.Errorf("hockney: max size %d bytes is above 1 GiB", p.MaxBytes)
	}
	l := &pairLink{c: c, peer: peer, clk: time.Duration(p.ClockOverheadS * 1e9)}
	defer l.release()
	l.ensure(p.MaxBytes)
	res := &dataset.HockneyResult{}
	var xs, ys []float64
	for _, m := range p.Sizes() {
		rtt, _, err := l.ping(ctx, m, p.Reps, false, true)
		if err != nil {
			return nil, fmt.Errorf("hockney %d->%d, %d bytes: %w", c.Rank(), peer, m, err)
		}
		half := make([]float64, len(rtt))
		for i, r := range rtt {
			half[i] = r / 2
			xs = append(xs, float64(m))
			ys = append(ys, half[i])
		}
		hs := dataset.HockneySize{Bytes: m, Time: Summarize(half)}
		if p.KeepSamples {
			hs.Samples = half
		}
		res.Sizes = append(res.Sizes, hs)
	}
	if err := l.start(ctx, opDone, 0, 0); err != nil {
		return nil, fmt.Errorf("hockney %d->%d: %w", c.Rank(), peer, err)
	}
	fit, ok := FitLine(xs, ys)
	if !ok {
		return nil, fmt.Errorf("hockney %d->%d: need at least two distinct sizes", c.Rank(), peer)
	}
	res.AlphaS, res.AlphaSES = fit.Intercept, fit.InterceptSE
	res.BetaSPerByte, res.BetaSESPerB = fit.Slope, fit.SlopeSE
	res.Observations = fit.N
	if fit.Slope > 0 {
		res.BandwidthBps = 1 / fit.Slope
	} // else 0: the sizes did not show a cost per byte (noise, too small)
	return res, nil
}

// ShortTransfer is the size of the shorter transfer of a bandwidth
// measurement of bytes (DifferenceRate).
func ShortTransfer(bytes int) int { return bytes / 4 }

// DifferenceRate is the bandwidth of a pair from two bulk transfers timed
// with their acknowledgement: long bytes in tLong, short bytes in tShort:
// (long - short) / (tLong - tShort). Everything a transfer pays whatever
// its size cancels: latency both ways, per-message costs, and the
// rendezvous handshake of a large message, which a baseline of zero-byte
// pings does not see (over grid5000-4sites' 10 ms WAN round trip, long /
// (tLong - RTT0) rated a 1 Gbit/s path at 312 Mbit/s with 1 MiB and 930
// with 16 MiB). A difference that is not positive (one transfer hit a slow
// spell the other did not) falls back to long / (tLong - rtt0), a lower
// bound, and to long / tLong if that is not positive either: one bad
// sample never ends a measurement.
func DifferenceRate(long, short int, tLong, tShort, rtt0 time.Duration) float64 {
	if dt := tLong - tShort; dt > 0 && short < long {
		return float64(long-short) / dt.Seconds()
	}
	dt := tLong - rtt0
	if dt <= 0 {
		dt = tLong
	}
	return float64(long) / max(dt.Seconds(), 1e-9)
}

// BandwidthPair measures from the calling rank to peer, which must be in
// PLogPServe(ctx, c, me).
func BandwidthPair(ctx context.Context, c comm.Comm, peer int, p dataset.BandwidthParams) (*dataset.BandwidthResult, error) {
	p = p.WithDefaults()
	if p.Bytes > 1<<30 {
		return nil, fmt.Errorf("bandwidth: %d bytes is above 1 GiB", p.Bytes)
	}
	fail := func(err error) (*dataset.BandwidthResult, error) {
		return nil, fmt.Errorf("bandwidth %d->%d: %w", c.Rank(), peer, err)
	}
	l := &pairLink{c: c, peer: peer, clk: time.Duration(p.ClockOverheadS * 1e9)}
	defer l.release()
	rtt, _, err := l.ping(ctx, 0, p.Reps, false, false)
	if err != nil {
		return fail(err)
	}
	rtt0 := Summarize(rtt).Min
	l.ensure(p.Bytes)
	// The server receives into a buffer of Bytes: the short transfers fit.
	if err := l.start(ctx, opBulk, p.Bytes, 2*p.Reps); err != nil {
		return fail(err)
	}
	transfer := func(n int) (time.Duration, error) {
		start := c.Now()
		if err := c.Send(ctx, peer, tagData, l.buf[:n]); err != nil {
			return 0, err
		}
		if _, err := c.Recv(ctx, peer, tagReply, nil); err != nil {
			return 0, err
		}
		return c.Now() - start - l.clk, nil
	}
	short := ShortTransfer(p.Bytes)
	var bws []float64
	for i := 0; i < p.Reps; i++ {
		ts, err := transfer(short)
		if err != nil {
			return fail(err)
		}
		tl, err := transfer(p.Bytes)
		if err != nil {
			return fail(err)
		}
		bws = append(bws, DifferenceRate(p.Bytes, short, tl, ts, time.Duration(rtt0*1e9)))
	}
	if err := l.start(ctx, opDone, 0, 0); err != nil {
		return fail(err)
	}
	s := Summarize(bws)
	return &dataset.BandwidthResult{BandwidthBps: s.Mean, Bandwidth: s, RTT0S: rtt0, Bytes: p.Bytes}, nil
}
