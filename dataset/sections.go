package dataset

import (
	"fmt"
	"sort"
)

// Summary condenses repeated samples of one quantity (seconds, or bytes per
// second for bandwidths). Mean is what the seeds report (averages over R
// repetitions); Min is what RTT-based distances use.
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	SD   float64 `json:"sd"` // sample standard deviation (n-1); 0 for n < 2
}

// RTTParams configure Shirai's ping-pong measurement (seed 002, Sect. 4 and
// Fig. 6). The zero value means the seed's parameters.
type RTTParams struct {
	// Bytes is the ping and pong size (small packets; default 1, minimum 1
	// because the first byte carries the continue/stop flag).
	Bytes int `json:"bytes"`
	// MaxExchanges bounds one round (seed: thirty).
	MaxExchanges int `json:"max_exchanges"`
	// Stale ends a round when the best RTT was not improved in this many
	// consecutive exchanges (seed: ten).
	Stale int `json:"stale"`
	// Rounds is the number of rounds (seed: three).
	Rounds int `json:"rounds"`
	// ClockOverheadS is subtracted from every timed interval (seed 003,
	// Fig. 3.7); 0 in the simulator.
	ClockOverheadS float64 `json:"clock_overhead_s"`
	// KeepSamples records every exchange's RTT in the result, not only the
	// rounds' bests: the raw distribution is what a noise model is fitted
	// to (docs/noise.md), and what shows a user how their network jitters.
	KeepSamples bool `json:"keep_samples,omitempty"`
}

// WithDefaults fills zero fields with the seed's values.
func (p RTTParams) WithDefaults() RTTParams {
	if p.Bytes < 1 {
		p.Bytes = 1
	}
	if p.MaxExchanges <= 0 {
		p.MaxExchanges = 30
	}
	if p.Stale <= 0 {
		p.Stale = 10
	}
	if p.Rounds <= 0 {
		p.Rounds = 3
	}
	return p
}

// RTTResult is one pair measurement: the best RTT of each round, and their
// minimum and maximum (what Fig. 6 returns).
type RTTResult struct {
	MinS      float64   `json:"min_s"`
	MaxS      float64   `json:"max_s"`
	RoundsS   []float64 `json:"rounds_s"`  // best RTT of each round
	Exchanges []int     `json:"exchanges"` // ping-pongs of each round
	// SamplesS is every exchange's RTT in order (RTTParams.KeepSamples).
	SamplesS []float64 `json:"samples_s,omitempty"`
}

// PLogPParams configure the PLogP micro-benchmark of seed 003 Sect. 3.1.2.
// The zero value means the seed's parameters (and M = 1 MiB, R = 16).
type PLogPParams struct {
	// MaxBytes is M: sizes m = 2^i for i = 0..floor(log2 M) are measured,
	// plus m = 0.
	MaxBytes int `json:"max_bytes"`
	// Reps is R, the repetitions of each timed operation per size.
	Reps int `json:"reps"`
	// K is the o_r wait factor: the sender spins K*RTT(m) after its send
	// before timing the receive (seed: 1.3).
	K float64 `json:"k"`
	// Eps is the relative saturation threshold: g(m) has saturated when the
	// average time per message moved by at most Eps (seed: 0.01).
	Eps float64 `json:"eps"`
	// SatStart and SatMax bound the messages of one saturation batch (seed:
	// start at 10, stop at 37500); n doubles between batches.
	SatStart int `json:"sat_start"`
	SatMax   int `json:"sat_max"`
	// SatMaxBytes: g(m) by saturation for m <= SatMaxBytes, by Eq. 3.1
	// (g(m) = RTT(m) - RTT(0) + g(0)) above (seed: 2^16; negative: only
	// g(0) by saturation, the seed's cheap mode for P > 256).
	SatMaxBytes int `json:"sat_max_bytes"`
	// MidpointEps: an extra size is measured where linear interpolation of
	// RTT(m) between neighbouring sizes misses the measured RTT by more than
	// MidpointEps (relative; seed: the same epsilon, 0.01); no gap is split
	// below MinGapBytes (seed: 32) and at most MaxExtra extra sizes are
	// measured per pair (a bound the seed does not have, so that noisy
	// platforms cannot multiply the campaign's cost): 0 means 16, -1
	// unbounded, -2 or less none.
	MidpointEps float64 `json:"midpoint_eps"`
	MinGapBytes int     `json:"min_gap_bytes"`
	MaxExtra    int     `json:"max_extra"`
	// Ssend times a synchronous send for o_s(m) (seed 003's text); false
	// times a standard send as its Fig. 3.6 does.
	Ssend bool `json:"ssend"`
	// ClockOverheadS is subtracted once per clock pair (Fig. 3.7).
	ClockOverheadS float64 `json:"clock_overhead_s"`
	// KeepSamples stores every repetition's value in the result.
	KeepSamples bool `json:"keep_samples"`
}

// WithDefaults fills zero fields with the seed's values.
func (p PLogPParams) WithDefaults() PLogPParams {
	if p.MaxBytes <= 0 {
		p.MaxBytes = 1 << 20
	}
	if p.Reps <= 0 {
		p.Reps = 16
	}
	if p.K <= 0 {
		p.K = 1.3
	}
	if p.Eps <= 0 {
		p.Eps = 0.01
	}
	if p.SatStart <= 0 {
		p.SatStart = 10
	}
	if p.SatMax <= 0 {
		p.SatMax = 37500
	}
	if p.SatMaxBytes == 0 {
		p.SatMaxBytes = 1 << 16
	}
	if p.MidpointEps == 0 {
		p.MidpointEps = 0.01
	}
	if p.MinGapBytes <= 0 {
		p.MinGapBytes = 32
	}
	if p.MaxExtra == 0 {
		p.MaxExtra = 16
	}
	return p
}

// Validate rejects parameters no measurement can run with.
func (p PLogPParams) Validate() error {
	switch {
	case p.MaxBytes > 1<<30:
		return fmt.Errorf("plogp: max size %d bytes is above 1 GiB", p.MaxBytes)
	case p.SatMax < p.SatStart:
		return fmt.Errorf("plogp: sat_max %d < sat_start %d", p.SatMax, p.SatStart)
	case p.K < 1:
		return fmt.Errorf("plogp: k = %g must be >= 1", p.K)
	}
	return nil
}

// Sizes are the base message sizes: 0 and 2^i up to MaxBytes.
func (p PLogPParams) Sizes() []int {
	s := []int{0}
	for m := 1; m <= p.MaxBytes; m *= 2 {
		s = append(s, m)
	}
	return s
}

// PLogPSize is the measurement of one message size between one pair.
type PLogPSize struct {
	Bytes int `json:"bytes"`
	// RTT is RTT(m): an m-byte message answered by a zero-byte reply, as
	// in PLogP's timing diagram (seed 003 Fig. 2.1: RTT(m) = L + g(m) +
	// g(0) + L, which Eq. 3.1 relies on).
	RTT Summary `json:"rtt_s"`
	// Os is the send overhead o_s(m): the time of the (synchronous) send.
	Os Summary `json:"os_s"`
	// Or is the receive overhead o_r(m): the time of a receive whose message
	// has already arrived (after a K*RTT(m) spin).
	Or Summary `json:"or_s"`
	// GS is the gap g(m); GMethod says how: "saturation" (SatMessages
	// back-to-back messages) or "eq3.1" (RTT(m) - RTT(0) + g(0)).
	GS          float64 `json:"g_s"`
	GMethod     string  `json:"g_method"`
	SatMessages int     `json:"sat_messages,omitempty"`
	// Extra marks a midpoint measured because interpolation missed.
	Extra bool `json:"extra,omitempty"`
	// Samples holds every repetition (KeepSamples only).
	Samples *PLogPSamples `json:"samples,omitempty"`
}

// PLogPSamples are the raw repetitions of one size.
type PLogPSamples struct {
	RTT []float64 `json:"rtt_s"`
	Os  []float64 `json:"os_s"`
	Or  []float64 `json:"or_s"`
}

// LogGP are the LogP/LogGP parameters derived from PLogP by seed 003
// Table 2.1: L = L + g(1) - o_s(1) - o_r(1), o = (o_s(1)+o_r(1))/2,
// g = g(1), G = g(m)/m at the largest measured m.
type LogGP struct {
	LS         float64 `json:"L_s"`
	OS         float64 `json:"o_s"`
	GS         float64 `json:"g_s"`
	GPerByteS  float64 `json:"G_s_per_byte"`
	GFromBytes int     `json:"G_from_bytes"`
	P          int     `json:"P"`
}

// PLogPResult is the PLogP measurement of one pair, sender A to receiver B.
type PLogPResult struct {
	// LS is the latency L from Eq. 3.2: (RTT(0) - 2 g(0)) / 2.
	LS float64 `json:"L_s"`
	// G0S is g(0), by saturation.
	G0S float64 `json:"g0_s"`
	// Sizes holds every measured size, ascending (midpoints included).
	Sizes []PLogPSize `json:"sizes"`
	LogGP LogGP       `json:"loggp"`
}

// At returns the measurement of exactly m bytes.
func (r *PLogPResult) At(m int) (PLogPSize, bool) {
	i := sort.Search(len(r.Sizes), func(i int) bool { return r.Sizes[i].Bytes >= m })
	if i < len(r.Sizes) && r.Sizes[i].Bytes == m {
		return r.Sizes[i], true
	}
	return PLogPSize{}, false
}

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
// sends Bytes/4 and then Bytes in one message each, both acknowledged by a
// zero-byte message, and rates the pair by the difference of the two
// (probe.DifferenceRate); RTT0S is the smallest zero-byte round trip.
type BandwidthResult struct {
	BandwidthBps float64 `json:"bandwidth_Bps"` // mean over repetitions
	Bandwidth    Summary `json:"bandwidth_Bps_summary"`
	RTT0S        float64 `json:"rtt0_s"`
	Bytes        int     `json:"bytes"`
}

// Link is one directed sender -> receiver communication of a pattern.
type Link struct {
	Src int `json:"src"`
	Dst int `json:"dst"`
}

// PatternParams configure the concurrent-communication micro-benchmark of
// seed 001 Sect. 3.1 (Fig. 2).
type PatternParams struct {
	// Bytes per message (seed 001 used >= 10 MB; default 4 MiB).
	Bytes int `json:"bytes"`
	// MaxIter bounds the repetitions (seed: 2000).
	MaxIter int `json:"max_iter"`
	// CIWidth: stop when, for every link, the width of the 95% confidence
	// interval of the mean time is at most CIWidth times the mean (seed:
	// 0.02).
	CIWidth float64 `json:"ci_width"`
	// MinIter is the least number of repetitions before the interval is
	// trusted (default 5).
	MinIter int `json:"min_iter"`
}

// WithDefaults fills zero fields.
func (p PatternParams) WithDefaults() PatternParams {
	if p.Bytes <= 0 {
		p.Bytes = 4 << 20
	}
	if p.MaxIter <= 0 {
		p.MaxIter = 2000
	}
	if p.CIWidth <= 0 {
		p.CIWidth = 0.02
	}
	if p.MinIter <= 1 {
		p.MinIter = 5
	}
	return p
}

// PatternGenerator records how a random pattern was made (seed 001 Sect.
// 7.1): for each of the Nodes in turn, D times, a different node is drawn
// uniformly and the link node -> drawn is included with probability P.
type PatternGenerator struct {
	Nodes []int   `json:"nodes"`
	D     int     `json:"d"`
	P     float64 `json:"p"`
	Seed  uint64  `json:"seed"`
}

// PatternResult is one pattern's measurement: per link (same order as
// Links) the summary of its message times and the 95% CI half width.
type PatternResult struct {
	Links      []Link            `json:"links"`
	Generator  *PatternGenerator `json:"generator,omitempty"`
	Times      []Summary         `json:"times_s"`
	CI95HalfS  []float64         `json:"ci95_half_s"`
	Iterations int               `json:"iterations"`
	Converged  bool              `json:"converged"`
}

// PatternSection is the dataset's pattern measurements.
type PatternSection struct {
	Params   PatternParams   `json:"params"`
	Patterns []PatternResult `json:"patterns"`
}
