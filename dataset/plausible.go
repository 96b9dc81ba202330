package dataset

import (
	"fmt"
	"strconv"
)

// What no network can produce, found in the measurements alone: a negative
// latency, a zero or negative time or gap, a negative overhead, and a
// larger message whose fastest round trip beats a smaller one's by more
// than monotoneSlack.
// Such values come from a clock-overhead correction larger than what it
// corrects, a timer that went backwards, or a model fitted through noise;
// they are kept (they are what was measured) but marked.

// monotoneSlack is how much faster than a smaller size's fastest round
// trip a larger message's may be before it is implausible: half. Less is
// not enough: on a loaded machine even the fastest of 8 repetitions of a
// few-microsecond round trip can be preempted, and 30-40% inversions were
// seen between goroutine ranks on two busy cores; a broken measurement
// (a timer going backwards, a correction larger than what it corrects)
// is off by far more.
const monotoneSlack = 0.5

func secs(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) + " s" }

// Implausible lists what is impossible in a PLogP result.
func (r *PLogPResult) Implausible() []string {
	var w []string
	if r.LS < 0 {
		w = append(w, fmt.Sprintf("L = %s < 0", secs(r.LS)))
	}
	if r.G0S <= 0 {
		w = append(w, fmt.Sprintf("g(0) = %s <= 0", secs(r.G0S)))
	}
	if r.LogGP.GPerByteS < 0 {
		w = append(w, fmt.Sprintf("G = %.4g s/B < 0", r.LogGP.GPerByteS))
	}
	var maxRTT float64
	maxRTTAt := 0
	for _, s := range r.Sizes {
		m := s.Bytes
		if s.RTT.Mean <= 0 {
			w = append(w, fmt.Sprintf("RTT(%d) = %s <= 0", m, secs(s.RTT.Mean)))
		}
		if s.GS <= 0 {
			w = append(w, fmt.Sprintf("g(%d) = %s <= 0", m, secs(s.GS)))
		}
		if s.Os.Mean < 0 {
			w = append(w, fmt.Sprintf("o_s(%d) = %s < 0", m, secs(s.Os.Mean)))
		}
		if s.Or.Mean < 0 {
			w = append(w, fmt.Sprintf("o_r(%d) = %s < 0", m, secs(s.Or.Mean)))
		}
		// The fastest of the repetitions, not their mean: a mean moves
		// with every preemption of a process, the minimum does not.
		if s.RTT.Min > 0 && s.RTT.Min < (1-monotoneSlack)*maxRTT {
			w = append(w, fmt.Sprintf("fastest RTT(%d) = %s, but fastest RTT(%d) = %s", m, secs(s.RTT.Min), maxRTTAt, secs(maxRTT)))
		}
		if s.RTT.Min > maxRTT {
			maxRTT, maxRTTAt = s.RTT.Min, m
		}
	}
	return w
}

// Implausible lists what is impossible in an RTT result.
func (r *RTTResult) Implausible() []string {
	var w []string
	if r.MinS <= 0 {
		w = append(w, fmt.Sprintf("RTT min = %s <= 0", secs(r.MinS)))
	}
	if r.MaxS < r.MinS {
		w = append(w, fmt.Sprintf("RTT max = %s < min = %s", secs(r.MaxS), secs(r.MinS)))
	}
	return w
}

// Implausible lists what is impossible in a Hockney fit: a negative start-up
// time, or a time per byte that is not positive (an infinite or negative
// bandwidth).
func (r *HockneyResult) Implausible() []string {
	var w []string
	if r.AlphaS < 0 {
		w = append(w, fmt.Sprintf("alpha = %s < 0", secs(r.AlphaS)))
	}
	if r.BetaSPerByte <= 0 {
		w = append(w, fmt.Sprintf("beta = %.4g s/B <= 0", r.BetaSPerByte))
	}
	for _, s := range r.Sizes {
		if s.Time.Mean <= 0 {
			w = append(w, fmt.Sprintf("time(%d) = %s <= 0", s.Bytes, secs(s.Time.Mean)))
		}
	}
	return w
}

// Implausible lists what is impossible in a bandwidth result.
func (r *BandwidthResult) Implausible() []string {
	if r.BandwidthBps <= 0 || r.Bandwidth.Min <= 0 {
		return []string{fmt.Sprintf("bandwidth = %.4g B/s (min %.4g) <= 0", r.BandwidthBps, r.Bandwidth.Min)}
	}
	return nil
}

type implausibler interface{ Implausible() []string }

// check sets every pair's Warnings and returns them as lines naming the
// section and the pair.
func (s *Section[P, R]) check(name string) []string {
	if s == nil {
		return nil
	}
	var lines []string
	for i := range s.Pairs {
		p := &s.Pairs[i]
		p.Warnings = nil
		if v, ok := any(&p.Result).(implausibler); ok {
			p.Warnings = v.Implausible()
		}
		for _, w := range p.Warnings {
			lines = append(lines, fmt.Sprintf("%s %d->%d: %s", name, p.A, p.B, w))
		}
	}
	return lines
}

// Check marks the implausible values of every pair (PairResult.Warnings,
// written with the dataset) and returns one line per value found, such as
// "plogp 3->7: L = -2.719e-06 s < 0".
func (d *Dataset) Check() []string {
	var lines []string
	lines = append(lines, d.RTT.check("rtt")...)
	lines = append(lines, d.PLogP.check("plogp")...)
	lines = append(lines, d.Hockney.check("hockney")...)
	lines = append(lines, d.Bandwidth.check("bandwidth")...)
	return lines
}
