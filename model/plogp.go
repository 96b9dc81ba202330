package model

import (
	"fmt"
	"slices"
)

// PLogPPoint holds the size-dependent PLogP parameters measured at one
// message size.
type PLogPPoint struct {
	Bytes int     `json:"bytes"`
	OsS   float64 `json:"os_s"`
	OrS   float64 `json:"or_s"`
	GS    float64 `json:"g_s"`
}

// PLogP is the parameterised LogP model (seed 000 Sect. 2.2.1, seed 003
// Sect. 2.2.4): a latency L and the send overhead o_s(m), receive overhead
// o_r(m) and gap g(m) as piecewise-linear functions of the message size,
// given by their values at measured sizes (ascending, distinct).
type PLogP struct {
	LS     float64      `json:"L_s"`
	Points []PLogPPoint `json:"points"`
}

// Check validates the parameters: at least one point, sizes ascending and
// distinct and >= 0, every value finite and >= 0.
func (p PLogP) Check() error {
	if !finiteNonNeg(p.LS) {
		return fmt.Errorf("plogp: L_s %g: want finite and >= 0", p.LS)
	}
	if len(p.Points) == 0 {
		return fmt.Errorf("plogp: no points")
	}
	for i, q := range p.Points {
		if q.Bytes < 0 || (i > 0 && q.Bytes <= p.Points[i-1].Bytes) {
			return fmt.Errorf("plogp: points[%d]: bytes %d not ascending from >= 0", i, q.Bytes)
		}
		if !finiteNonNeg(q.OsS) || !finiteNonNeg(q.OrS) || !finiteNonNeg(q.GS) {
			return fmt.Errorf("plogp: points[%d] (%d bytes): os/or/g %g/%g/%g: want finite and >= 0", i, q.Bytes, q.OsS, q.OrS, q.GS)
		}
	}
	return nil
}

// interp evaluates the piecewise-linear function through the points'
// f-values at m: linear between neighbouring points, extended with the
// slope of the last (first) segment beyond the last (first) point, and
// never below zero. One point gives a constant.
func (p PLogP) interp(m int, f func(PLogPPoint) float64) float64 {
	pts := p.Points
	switch len(pts) {
	case 0:
		return 0
	case 1:
		return f(pts[0])
	}
	i, _ := slices.BinarySearchFunc(pts, m, func(q PLogPPoint, m int) int { return q.Bytes - m })
	// The segment [i-1, i] holds m; clamp to the first or last segment.
	i = min(max(i, 1), len(pts)-1)
	a, b := pts[i-1], pts[i]
	x := float64(m-a.Bytes) / float64(b.Bytes-a.Bytes)
	v := f(a) + x*(f(b)-f(a))
	return max(v, 0)
}

// Os is the send overhead o_s(m).
func (p PLogP) Os(m int) float64 { return p.interp(m, func(q PLogPPoint) float64 { return q.OsS }) }

// Or is the receive overhead o_r(m).
func (p PLogP) Or(m int) float64 { return p.interp(m, func(q PLogPPoint) float64 { return q.OrS }) }

// G is the gap g(m): the minimum time between the starts of two
// consecutive m-byte sends (it includes o_s(m)).
func (p PLogP) G(m int) float64 { return p.interp(m, func(q PLogPPoint) float64 { return q.GS }) }

// Time is the one-way time of an m-byte message, L + g(m): from PLogP's
// timing diagram RTT(m) = L + g(m) + g(0) + L (seed 003 Sect. 3.1.2).
func (p PLogP) Time(m int) float64 { return p.LS + p.G(m) }

// Distance is seed 003 Eq. 3.3, the clustering distance
// t(m) = L + (o_s(m) + o_r(m))/2 + g(m).
func (p PLogP) Distance(m int) float64 { return p.LS + (p.Os(m)+p.Or(m))/2 + p.G(m) }

// LogGP translates the parameters into LogP/LogGP by seed 003 Table 2.1:
// L = L + g(1) - o_s(1) - o_r(1), o = (o_s(1) + o_r(1))/2, g = g(1),
// G = g(m)/m at the largest measured size m (a negative L is clamped to 0).
func (p PLogP) LogGP() LogGP {
	os1, or1, g1 := p.Os(1), p.Or(1), p.G(1)
	out := LogGP{LogP: LogP{LS: max(p.LS+g1-os1-or1, 0), OS: (os1 + or1) / 2, GS: g1}}
	if n := len(p.Points); n > 0 && p.Points[n-1].Bytes > 0 {
		last := p.Points[n-1]
		out.GPerByteS = last.GS / float64(last.Bytes)
	}
	return out
}
