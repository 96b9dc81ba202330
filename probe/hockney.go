package probe

import (
	"context"
	"fmt"
	"math"
	"time"

	"netaware/comm"
)

// HockneyPair measures from the calling rank to peer, which must be in
// PLogPServe(ctx, c, me).
func HockneyPair(ctx context.Context, c comm.Comm, peer int, p HockneyParams) (*HockneyResult, error) {
	p = p.WithDefaults()
	if p.MaxBytes > 1<<30 {
		return nil, fmt.Errorf("hockney: max size %d bytes is above 1 GiB", p.MaxBytes)
	}
	l := &pairLink{c: c, peer: peer, clk: time.Duration(p.ClockOverheadS * 1e9)}
	defer l.release()
	l.ensure(p.MaxBytes)
	res := &HockneyResult{}
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
		hs := HockneySize{Bytes: m, Time: Summarize(half)}
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

// BandwidthPair measures from the calling rank to peer, which must be in
// PLogPServe(ctx, c, me).
func BandwidthPair(ctx context.Context, c comm.Comm, peer int, p BandwidthParams) (*BandwidthResult, error) {
	p = p.WithDefaults()
	if p.Bytes > 1<<30 {
		return nil, fmt.Errorf("bandwidth: %d bytes is above 1 GiB", p.Bytes)
	}
	fail := func(err error) (*BandwidthResult, error) {
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
	if err := l.start(ctx, opBulk, p.Bytes, p.Reps); err != nil {
		return fail(err)
	}
	var bws []float64
	for i := 0; i < p.Reps; i++ {
		start := c.Now()
		if err := c.Send(ctx, peer, tagData, l.buf[:p.Bytes]); err != nil {
			return fail(err)
		}
		if _, err := c.Recv(ctx, peer, tagReply, nil); err != nil {
			return fail(err)
		}
		t := (c.Now() - start - l.clk).Seconds() - rtt0
		if t <= 0 {
			t = math.SmallestNonzeroFloat64
		}
		bws = append(bws, float64(p.Bytes)/t)
	}
	if err := l.start(ctx, opDone, 0, 0); err != nil {
		return fail(err)
	}
	s := Summarize(bws)
	return &BandwidthResult{BandwidthBps: s.Mean, Bandwidth: s, RTT0S: rtt0, Bytes: p.Bytes}, nil
}
