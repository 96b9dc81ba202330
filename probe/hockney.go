package probe

import (
	"context"
	"fmt"
	"math"
	"time"

	"netaware/comm"
)

// HockneyParams configure the Hockney fit (seed 000 Sect. 2.2.1, seed 003
// Sect. 2.2.1): ping-pongs over sizes 0 and 2^i from MinBytes to MaxBytes,
// Reps each; one-way time t = RTT/2; least squares t = alpha + beta*m.
type HockneyParams struct {
	MinBytes       int     `json:"min_bytes"` // default 1
	MaxBytes       int     `json:"max_bytes"` // default 1 MiB
	Reps           int     `json:"reps"`      // default 16
	ClockOverheadS float64 `json:"clock_overhead_s"`
	KeepSamples    bool    `json:"keep_samples"`
}

// WithDefaults fills zero fields.
func (p HockneyParams) WithDefaults() HockneyParams {
	if p.MinBytes <= 0 {
		p.MinBytes = 1
	}
	if p.MaxBytes <= 0 {
		p.MaxBytes = 1 << 20
	}
	if p.Reps <= 0 {
		p.Reps = 16
	}
	return p
}

// Sizes are 0 and the powers of two from MinBytes to MaxBytes.
func (p HockneyParams) Sizes() []int {
	s := []int{0}
	for m := 1; m <= p.MaxBytes; m *= 2 {
		if m >= p.MinBytes {
			s = append(s, m)
		}
	}
	return s
}

// HockneyResult is the fit for one pair. Beta is the inverse bandwidth
// (seconds per byte, seed 000's convention); BandwidthBps = 1/Beta, or 0
// when the fit found no positive slope.
type HockneyResult struct {
	AlphaS       float64       `json:"alpha_s"`
	AlphaSES     float64       `json:"alpha_se_s"`
	BetaSPerByte float64       `json:"beta_s_per_byte"`
	BetaSESPerB  float64       `json:"beta_se_s_per_byte"`
	BandwidthBps float64       `json:"bandwidth_Bps"`
	Observations int           `json:"observations"`
	Sizes        []HockneySize `json:"sizes"`
}

// HockneySize is the one-way time (RTT/2) of one size.
type HockneySize struct {
	Bytes   int       `json:"bytes"`
	Time    Summary   `json:"time_s"`
	Samples []float64 `json:"samples_s,omitempty"`
}

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

// BandwidthParams configure the bulk-transfer bandwidth of one pair.
type BandwidthParams struct {
	Bytes          int     `json:"bytes"` // default 16 MiB
	Reps           int     `json:"reps"`  // default 5
	ClockOverheadS float64 `json:"clock_overhead_s"`
}

// WithDefaults fills zero fields.
func (p BandwidthParams) WithDefaults() BandwidthParams {
	if p.Bytes <= 0 {
		p.Bytes = 16 << 20
	}
	if p.Reps <= 0 {
		p.Reps = 5
	}
	return p
}

// BandwidthResult is the achievable bandwidth of one pair: each repetition
// sends Bytes in one message and waits for a zero-byte acknowledgement;
// bandwidth = Bytes / (T - RTT(0)), RTT(0) being the smallest zero-byte round
// trip, which removes latency and per-message overheads of both directions.
type BandwidthResult struct {
	BandwidthBps float64 `json:"bandwidth_Bps"` // mean over repetitions
	Bandwidth    Summary `json:"bandwidth_Bps_summary"`
	RTT0S        float64 `json:"rtt0_s"`
	Bytes        int     `json:"bytes"`
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
