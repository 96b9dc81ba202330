package platform

import (
	"fmt"
	"math"

	"netaware/metrics"
)

// RouteStats summarises the routes between hosts: one-way latency, links
// crossed and bottleneck bandwidth (the slowest forward link).
type RouteStats struct {
	// Scope says which host pairs were looked at ("all 435 host pairs",
	// "every 3th of 524800 host pairs", "none: one host").
	Scope                                    string
	LatencyMinS, LatencyMedianS, LatencyMaxS float64
	HopsMin, HopsMax                         int
	BottleneckMinBps, BottleneckMaxBps       float64
}

// maxRoutePairs bounds the host pairs RouteStats routes: above it, an
// evenly spaced, deterministic sample.
const maxRoutePairs = 200000

// RouteStats looks at the route of every host pair, or of an evenly spaced
// sample of them on large platforms; the median is metrics.Median.
func (p *Platform) RouteStats() RouteStats {
	h := len(p.Hosts())
	if h < 2 {
		return RouteStats{Scope: "none: one host"}
	}
	st := RouteStats{HopsMin: math.MaxInt, BottleneckMinBps: math.Inf(1), LatencyMinS: math.Inf(1)}
	stride := 1
	if total := h * (h - 1) / 2; total > maxRoutePairs {
		stride = total/maxRoutePairs + 1
		st.Scope = fmt.Sprintf("every %dth of %d host pairs", stride, total)
	} else {
		st.Scope = fmt.Sprintf("all %d host pairs", total)
	}
	var lats []float64
	k := 0
	for a := 0; a < h; a++ {
		for b := a + 1; b < h; b++ {
			k++
			if k%stride != 0 {
				continue
			}
			r := p.HostRoute(a, b)
			lats = append(lats, r.LatencyS)
			st.LatencyMinS, st.LatencyMaxS = math.Min(st.LatencyMinS, r.LatencyS), math.Max(st.LatencyMaxS, r.LatencyS)
			st.HopsMin, st.HopsMax = min(st.HopsMin, r.Hops), max(st.HopsMax, r.Hops)
			bw := math.Inf(1)
			for _, x := range r.Forward {
				bw = math.Min(bw, p.Resources()[x].BandwidthBps)
			}
			st.BottleneckMinBps, st.BottleneckMaxBps = math.Min(st.BottleneckMinBps, bw), math.Max(st.BottleneckMaxBps, bw)
		}
	}
	st.LatencyMedianS = metrics.Median(lats)
	return st
}
