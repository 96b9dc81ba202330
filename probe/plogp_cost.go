package probe

import (
	"time"

	"netaware/dataset"
)

// PLogPCost bounds the time PLogPPair takes with parameters p (defaults
// filled in) on a pair of round trip rtt0 (seconds, empty messages) and
// bandwidth bw (bytes/s), from the protocol's own steps: per size m, Reps
// round trips of RTT(m) = rtt0 + m/bw, Reps receive-overhead exchanges
// that spin K times 2 RTT(m) - rtt0 each, and, up to SatMaxBytes,
// saturation batches of SatStart, 2 SatStart, ... messages up to SatMax
// (the bound: no batch converges early, as on a noisy network, where
// the time per message rarely settles within Eps), each message
// m/bw, or a microsecond of sending for small ones; then MaxExtra
// midpoint sizes at the mean cost of a size. It is the estimate discover
// --level thorough prints before it starts.
func PLogPCost(p dataset.PLogPParams, rtt0, bw float64) time.Duration {
	p = p.WithDefaults()
	if bw <= 0 {
		return 0
	}
	satMsgs := 0
	for n := p.SatStart; ; n = min(2*n, p.SatMax) {
		satMsgs += n
		if n >= p.SatMax {
			break
		}
	}
	total := 0.0
	sizes := p.Sizes()
	for _, m := range sizes {
		rtt := rtt0 + float64(m)/bw
		cost := float64(p.Reps) * (rtt + p.K*(2*rtt-rtt0))
		if m <= p.SatMaxBytes {
			cost += float64(satMsgs)*max(float64(m)/bw, 1e-6) + rtt0*float64(batches(p))
		}
		total += cost
	}
	if p.MaxExtra > 0 {
		total += total / float64(len(sizes)) * float64(p.MaxExtra)
	}
	return time.Duration(total * 1e9)
}

// batches counts the saturation batches of p when none converges.
func batches(p dataset.PLogPParams) int {
	k := 0
	for n := p.SatStart; ; n = min(2*n, p.SatMax) {
		k++
		if n >= p.SatMax {
			return k
		}
	}
}
