package netsim

import "math"

// relEps is the relative precision below which a resource counts as full
// (SimGrid's maxmin precision plays the same role).
const relEps = 1e-9

// solve computes the rates of the flows in the current component by
// progressive filling, as SimGrid's lmm solver does (Flush has reset the
// flows, set each resource's C_r, U_r and count of unfixed flows, and
// listed the resources with unfixed flows in the heap):
//
//   - each resource r has remaining capacity C_r and usage
//     U_r = sum over its unfixed flows f of w_fr / p_f
//     (w_fr: weight f puts on r; p_f: f's sharing penalty);
//   - the most constrained resource is the one with the least C_r / U_r =: m;
//   - every unfixed flow on it gets rate m / p_f (or its bound, if a flow
//     there has bound * p_f < m: then only the flows with the smallest such
//     bound are fixed, at their bound, and the round repeats);
//   - fixed flows are removed: C_r -= w_fr * rate, U_r -= w_fr / p_f on
//     each of their resources.
//
// A flow that only loads a resource through its reverse path (small w) is
// still fixed when that resource saturates: this is what makes an outgoing
// flow slow down to the incoming flows' share on a busy NIC (the asymmetric
// property of Zhu et al.).
func (n *Network) solve() {
	if len(n.compFlows) == 1 {
		n.solveAlone(n.compFlows[0])
		return
	}
	s, sc := &n.s, n.rs
	h := &n.sheap
	h.init()
	// Fixing flows at the current minimum share never lowers another
	// resource's share (R/U >= m implies (R - w m/p)/(U - w/p) >= R/U), so
	// the heap's keys are lower bounds: a popped resource whose share has
	// grown since it was pushed goes back with its new share, and the heap
	// is never updated when flows are fixed. The resource at the top stays
	// there while it is looked at and is then re-keyed or popped: one sift
	// instead of a pop and a push (the set of entries, and so the order in
	// which they come out, is the same).
	for len(h.items) > 0 && n.unfixed > 0 {
		key, r := h.items[0].key, h.items[0].r
		c := &sc[r]
		if c.unfixed == 0 {
			h.pop()
			continue
		}
		rs := &n.res[r]
		if c.usage <= 0 {
			n.recomputeUsage(r)
		}
		m := c.share()
		if m > key {
			h.rekeyTop(m)
			continue
		}
		// Flows whose bound is below their share on this resource take
		// their bound first, the smallest bound first.
		minBound := -1.0
		if m > c.minBound { // else no flow here has bound * penalty < m
			for i, j := range rs.ef {
				if s.fixed[j] || rs.ew[i] <= 0 || s.st[j].bound <= 0 {
					continue
				}
				if b := rs.ex[i].bp; b < m && (minBound < 0 || b < minBound) {
					minBound = b
				}
			}
		}
		if minBound < 0 {
			for i, j := range rs.ef {
				if !s.fixed[j] && rs.ew[i] > 0 {
					n.fix(j, m/s.st[j].penalty)
				}
			}
			h.pop()
			continue
		}
		for i, j := range rs.ef {
			if !s.fixed[j] && rs.ew[i] > 0 && s.st[j].bound > 0 && rs.ex[i].bp <= minBound*(1+relEps) {
				n.fix(j, s.st[j].bound)
			}
		}
		if c.unfixed > 0 {
			h.rekeyTop(c.share())
		} else {
			h.pop()
		}
	}
	// A flow left unfixed would mean all its resources went full through
	// rounding; give it what its tightest resource has left.
	for _, j := range n.compFlows {
		if !s.fixed[j] {
			best := -1.0
			for _, e := range s.elems(j) {
				if w := e.w; w > 0 {
					v := max(0, sc[e.r].remaining) / w
					if best < 0 || v < best {
						best = v
					}
				}
			}
			if best < 0 {
				best = 0
			}
			s.st[j].rate = best
			s.fixed[j] = true
		}
	}
}

// solveAlone is the progressive filling of a component with one flow: its
// tightest resource (capacity over weight) or its bound.
func (n *Network) solveAlone(j int32) {
	s := &n.s
	rate := math.Inf(1)
	for _, e := range s.elems(j) {
		if w := e.w; w > 0 {
			rate = math.Min(rate, n.res[e.r].bps/w)
		}
	}
	if b := s.st[j].bound; b > 0 && b < rate {
		rate = b
	}
	if math.IsInf(rate, 1) {
		rate = 0
	}
	s.st[j].rate = rate
	s.fixed[j] = true
}

// fix sets a flow's rate and removes it from the usage of its resources.
func (n *Network) fix(j int32, rate float64) {
	s, sc := &n.s, n.rs
	s.fixed[j] = true
	x := &s.st[j]
	x.rate = rate
	n.unfixed--
	for _, e := range s.elems(j) {
		if e.w <= 0 {
			continue
		}
		c := &sc[e.r]
		c.remaining -= e.w * rate
		c.usage -= e.w / x.penalty
		c.unfixed--
	}
}

// recomputeUsage rebuilds a resource's usage sum from its unfixed flows,
// when cancellation in the running sum left it non-positive.
func (n *Network) recomputeUsage(r int32) {
	rs := &n.res[r]
	u := 0.0
	for i, j := range rs.ef {
		if !n.s.fixed[j] && rs.ew[i] > 0 {
			u += rs.ex[i].term
		}
	}
	n.rs[r].usage = u
}
