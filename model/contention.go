package model

import (
	"fmt"
	"math"
)

// Contention is the asymmetric contention model of seed 001 (Zhu et al.)
// for a two-level tree: racks of nodes, one NIC per node, racks joined by
// a backbone (Sect. 4.2). It predicts the bandwidth of simultaneous
// point-to-point transfers (Algorithm 1) and their completion times as
// transfers finish and bandwidth is redistributed (Algorithm 2).
type Contention struct {
	// NodeOf and RackOf map every process to its node and rack (the
	// bindings B^N and B^R of Sect. 4.3).
	NodeOf, RackOf []int
	// BetaNIC and BetaBackbone are the inverse bandwidths (s/byte) of a
	// NIC (beta_N) and of the inter-rack backbone (beta_O or beta_E).
	BetaNIC, BetaBackbone float64
	// FlowCap is Algorithm 1's beta_E floor (line 32): no link is faster
	// than one NIC, which is why a 10 Gbps backbone is not saturated by up
	// to ten 1 Gbps flows (Eq. 5). 0 means BetaNIC.
	FlowCap float64
	// IntraNodeBeta is the inverse bandwidth of a transfer inside one
	// node, which the paper does not model (0: FlowCap).
	IntraNodeBeta float64
	// FairnessOnly drops the asymmetric property (contra-flow congestion),
	// leaving the fairness-only model the paper compares against.
	FairnessOnly bool
}

// Flow is one logical link e_{a,b}: Src sends Bytes to Dst.
type Flow struct {
	Src, Dst int
	Bytes    float64
}

// resource vector index: 0 the sender's rack backbone, 1 the sender's NIC,
// 2 the receiver's NIC (Eq. 1).
const nres = 3

func (c *Contention) check(flows []Flow) error {
	if len(c.NodeOf) != len(c.RackOf) {
		return fmt.Errorf("contention: %d node bindings, %d rack bindings", len(c.NodeOf), len(c.RackOf))
	}
	if !(c.BetaNIC > 0) || !(c.BetaBackbone > 0) || math.IsInf(c.BetaNIC, 0) || math.IsInf(c.BetaBackbone, 0) {
		return fmt.Errorf("contention: inverse bandwidths %g, %g must be finite and > 0", c.BetaNIC, c.BetaBackbone)
	}
	for i, f := range flows {
		if f.Src < 0 || f.Dst < 0 || f.Src >= len(c.NodeOf) || f.Dst >= len(c.NodeOf) || f.Src == f.Dst {
			return fmt.Errorf("contention: flow %d: %d->%d out of range [0,%d) or a self-loop", i, f.Src, f.Dst, len(c.NodeOf))
		}
		if !(f.Bytes >= 0) || math.IsInf(f.Bytes, 0) {
			return fmt.Errorf("contention: flow %d: %g bytes", i, f.Bytes)
		}
	}
	return nil
}

func (c *Contention) flowCap() float64 {
	if c.FlowCap > 0 {
		return c.FlowCap
	}
	return c.BetaNIC
}

// sets builds, for the active flows, the with-flow sets S (Eq. 1) and the
// contra-flow sets S-bar (Eq. 3) as lists of flow indices.
func (c *Contention) sets(flows []Flow, active []int) (s, sbar map[int]*[nres][]int) {
	rackOut, rackIn := map[int][]int{}, map[int][]int{}
	nodeOut, nodeIn := map[int][]int{}, map[int][]int{}
	for _, e := range active {
		f := flows[e]
		ns, nd := c.NodeOf[f.Src], c.NodeOf[f.Dst]
		rs, rd := c.RackOf[f.Src], c.RackOf[f.Dst]
		if rs != rd {
			rackOut[rs] = append(rackOut[rs], e)
			rackIn[rd] = append(rackIn[rd], e)
		}
		if ns != nd {
			nodeOut[ns] = append(nodeOut[ns], e)
			nodeIn[nd] = append(nodeIn[nd], e)
		}
	}
	s, sbar = map[int]*[nres][]int{}, map[int]*[nres][]int{}
	for _, e := range active {
		f := flows[e]
		ns, nd := c.NodeOf[f.Src], c.NodeOf[f.Dst]
		rs, rd := c.RackOf[f.Src], c.RackOf[f.Dst]
		var w, r [nres][]int
		if rs != rd {
			w[0], r[0] = rackOut[rs], rackIn[rs]
		}
		if ns != nd {
			w[1], r[1] = nodeOut[ns], nodeIn[ns]
			w[2], r[2] = nodeIn[nd], nodeOut[nd]
		}
		s[e], sbar[e] = &w, &r
	}
	return s, sbar
}

func (c *Contention) betas() [nres]float64 {
	return [nres]float64{c.BetaBackbone, c.BetaNIC, c.BetaNIC}
}

// factor is Eq. 2 / Eq. 4: max over resources of beta[i] * |set[i]|.
func factor(beta [nres]float64, set *[nres][]int) float64 {
	k := 0.0
	for i := range nres {
		k = math.Max(k, beta[i]*float64(len(set[i])))
	}
	return k
}

func sameF(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// InverseBandwidths is Algorithm 1: the inverse bandwidth (s/byte) of
// every flow when all of them run at once. Flows are analysed most
// congested first (priority key Eq. 7); a flow congested on its own
// direction shares the remaining capacity of its bottleneck fairly with
// the flows not yet analysed (fairness property, Eq. 5); a flow congested
// by contra-flow traffic on a resource those flows saturate gets
// min{beta_xy} over them (asymmetric property, Eq. 6), else that
// contra-flow set is ignored and the flow re-queued.
func (c *Contention) InverseBandwidths(flows []Flow) ([]float64, error) {
	if err := c.check(flows); err != nil {
		return nil, err
	}
	active := make([]int, len(flows))
	for i := range active {
		active[i] = i
	}
	return c.algorithm1(flows, active), nil
}

func (c *Contention) algorithm1(flows []Flow, active []int) []float64 {
	beta := c.betas()
	out := make([]float64, len(flows))
	s, sbar := c.sets(flows, active)
	if c.FairnessOnly {
		for _, e := range active {
			sbar[e] = &[nres][]int{}
		}
	}
	pending := map[int]bool{}
	for _, e := range active {
		pending[e] = true
	}
	done := map[int]bool{}
	intra := c.IntraNodeBeta
	if intra <= 0 {
		intra = c.flowCap()
	}
	for _, e := range active {
		if c.NodeOf[flows[e].Src] == c.NodeOf[flows[e].Dst] {
			out[e] = intra
			delete(pending, e)
			done[e] = true
		}
	}
	// Each pass either computes a flow or empties one of its contra-flow
	// sets, so 4 passes per flow bound the loop.
	for guard := 0; len(pending) > 0 && guard < 4*len(active)+4; guard++ {
		// PQ(E).pop(): the largest key <max(k, kbar), k, kbar>, lowest
		// flow index on ties.
		best, bk := -1, [3]float64{}
		for _, e := range active {
			if !pending[e] {
				continue
			}
			k, kb := factor(beta, s[e]), factor(beta, sbar[e])
			key := [3]float64{math.Max(k, kb), k, kb}
			if best < 0 || key[0] > bk[0] || (key[0] == bk[0] && (key[1] > bk[1] || (key[1] == bk[1] && key[2] > bk[2]))) {
				best, bk = e, key
			}
		}
		e := best
		k, kb := bk[1], bk[2]
		b := 0.0
		if k >= kb {
			for i := range nres {
				if sameF(beta[i]*float64(len(s[e][i])), k) {
					b = math.Max(b, c.inverseBandwidth(beta[i], s[e][i], pending, done, out))
				}
			}
		} else {
			for i := range nres {
				if !sameF(beta[i]*float64(len(sbar[e][i])), kb) {
					continue
				}
				used, least := 0.0, math.Inf(1)
				for _, x := range sbar[e][i] {
					if done[x] {
						used += 1 / out[x]
						least = math.Min(least, out[x])
					}
				}
				// Line 16-17: contra-flow links that saturate the
				// resource give this link min{beta_xy} over them.
				if !math.IsInf(least, 1) && sameF(used, 1/beta[i]) {
					b = least
				} else {
					sbar[e][i] = nil
				}
			}
		}
		if b != 0 {
			out[e] = b
			delete(pending, e)
			done[e] = true
		}
	}
	// Unreachable in practice; keep every flow finite.
	for e := range pending {
		out[e] = c.flowCap()
	}
	return out
}

// inverseBandwidth is Algorithm 1's function of that name: the flows not
// yet analysed share what the analysed ones leave of the resource.
func (c *Contention) inverseBandwidth(bhat float64, set []int, pending, done map[int]bool, out []float64) float64 {
	used := 0.0
	waiting := 0
	for _, x := range set {
		if done[x] {
			used += 1 / out[x]
		} else if pending[x] {
			waiting++
		}
	}
	// A resource the analysed flows already fill keeps a sliver, so that
	// no flow stalls for ever (the paper does not reach this case).
	left := math.Max(1/bhat-used, 1e-6/bhat)
	return math.Max(c.flowCap(), float64(waiting)/left)
}

// Times is Algorithm 2: the completion time (s) of every flow, all started
// at 0; whenever one finishes, the bandwidths of the others are
// recomputed by Algorithm 1. It also returns the number of steps.
func (c *Contention) Times(flows []Flow) ([]float64, int, error) {
	if err := c.check(flows); err != nil {
		return nil, 0, err
	}
	left := make([]float64, len(flows))
	times := make([]float64, len(flows))
	var active []int
	for i, f := range flows {
		left[i] = f.Bytes
		if f.Bytes > 0 {
			active = append(active, i)
		}
	}
	t, steps := 0.0, 0
	for len(active) > 0 {
		steps++
		beta := c.algorithm1(flows, active)
		dt := math.Inf(1)
		for _, e := range active {
			dt = math.Min(dt, left[e]*beta[e])
		}
		t += dt
		var next []int
		for _, e := range active {
			left[e] -= dt / beta[e]
			if left[e] <= 1e-9*flows[e].Bytes {
				times[e] = t
			} else {
				next = append(next, e)
			}
		}
		active = next
	}
	return times, steps, nil
}

// PredictBcastContention predicts an unsegmented broadcast along t when
// transfers share NICs and backbones as Contention says: a rank that holds
// the message starts sending it to all its children at once (non-blocking
// sends, as coll's tree broadcast does); a transfer i -> j waits
// latency(i, j), then moves its bytes at the rate Algorithm 1 gives it
// among all transfers active at that moment, recomputed whenever one
// starts or ends (Schedule). latency may be nil (no latency).
func PredictBcastContention(t Tree, m int, c *Contention, latency func(i, j int) float64) (Prediction, error) {
	if err := t.Check(); err != nil {
		return Prediction{}, err
	}
	if t.SegBytes > 0 && t.SegBytes < m {
		return Prediction{}, fmt.Errorf("predict bcast with contention: segmented trees are not modelled")
	}
	if m < 0 {
		return Prediction{}, fmt.Errorf("predict bcast with contention: message size %d < 0", m)
	}
	n := len(t.Parent)
	if len(c.NodeOf) != n {
		return Prediction{}, fmt.Errorf("predict bcast with contention: tree has %d ranks, bindings %d", n, len(c.NodeOf))
	}
	ts, err := DownTransfers(t, float64(m), nil)
	if err != nil {
		return Prediction{}, err
	}
	tm, err := c.Schedule(ts, latency)
	if err != nil {
		return Prediction{}, err
	}
	p := Prediction{ReadyS: make([]float64, n), TimeS: tm.TimeS}
	for i, tr := range ts {
		p.ReadyS[tr.Dst] = tm.EndS[i]
	}
	return p, nil
}
