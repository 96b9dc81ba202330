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
	h := &n.sheap
	h.init()
	// Fixing flows at the current minimum share never lowers another
	// resource's share (R/U >= m implies (R - w m/p)/(U - w/p) >= R/U), so
	// the heap's keys are lower bounds: a popped resource whose share has
	// grown since it was pushed goes back with its new share, and the heap
	// is never updated when flows are fixed.
	for len(h.items) > 0 && n.unfixed > 0 {
		key, r := h.pop()
		rs := &n.res[r]
		if rs.unfixed == 0 {
			continue
		}
		if rs.usage <= 0 {
			rs.recomputeUsage()
		}
		m := rs.share()
		if m > key {
			h.push(m, r)
			continue
		}
		// Flows whose bound is below their share on this resource take
		// their bound first, the smallest bound first.
		minBound := -1.0
		if m > rs.minBound { // else no flow here has bound * penalty < m
			for _, e := range rs.elems {
				f := e.f
				if f.fixed || e.w <= 0 || f.bound <= 0 {
					continue
				}
				if b := f.bound * f.penalty; b < m && (minBound < 0 || b < minBound) {
					minBound = b
				}
			}
		}
		if minBound < 0 {
			for i := 0; i < len(rs.elems); i++ {
				e := rs.elems[i]
				if !e.f.fixed && e.w > 0 {
					n.fix(e.f, m/e.f.penalty)
				}
			}
			continue
		}
		for i := 0; i < len(rs.elems); i++ {
			f := rs.elems[i].f
			if !f.fixed && rs.elems[i].w > 0 && f.bound > 0 && f.bound*f.penalty <= minBound*(1+relEps) {
				n.fix(f, f.bound)
			}
		}
		if rs.unfixed > 0 {
			h.push(rs.share(), r)
		}
	}
	// A flow left unfixed would mean all its resources went full through
	// rounding; give it what its tightest resource has left.
	for _, f := range n.compFlows {
		if !f.fixed {
			best := -1.0
			for k, r := range f.res {
				if f.w[k] > 0 {
					v := max(0, n.res[r].remaining) / f.w[k]
					if best < 0 || v < best {
						best = v
					}
				}
			}
			if best < 0 {
				best = 0
			}
			f.rate = best
			f.fixed = true
		}
	}
}

// solveAlone is the progressive filling of a component with one flow: its
// tightest resource (capacity over weight) or its bound.
func (n *Network) solveAlone(f *Flow) {
	rate := math.Inf(1)
	for k, r := range f.res {
		if f.w[k] > 0 {
			rate = math.Min(rate, n.res[r].bps/f.w[k])
		}
	}
	if f.bound > 0 && f.bound < rate {
		rate = f.bound
	}
	if math.IsInf(rate, 1) {
		rate = 0
	}
	f.rate = rate
	f.fixed = true
}

// fix sets a flow's rate and removes it from the usage of its resources.
func (n *Network) fix(f *Flow, rate float64) {
	f.fixed = true
	f.rate = rate
	n.unfixed--
	for k, r := range f.res {
		w := f.w[k]
		if w <= 0 {
			continue
		}
		rs := &n.res[r]
		rs.remaining -= w * rate
		rs.usage -= w / f.penalty
		rs.unfixed--
	}
}

// recomputeUsage rebuilds the usage sum from the unfixed flows, when
// cancellation in the running sum left it non-positive.
func (rs *resource) recomputeUsage() {
	rs.usage = 0
	for _, e := range rs.elems {
		if !e.f.fixed && e.w > 0 {
			rs.usage += e.w / e.f.penalty
		}
	}
}

// share is the rate per unit of 1/penalty the resource can still give its
// unfixed flows: the key of the solver heap.
func (rs *resource) share() float64 {
	if rs.remaining <= 0 {
		return 0
	}
	return rs.remaining / rs.usage
}
