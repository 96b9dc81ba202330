package model

import "fmt"

// Cost splits the time of one point-to-point message into the part that
// keeps the sender busy (it cannot start its next send before SendS has
// passed) and the rest of the way to the receiver (RestS): the message is
// at the receiver SendS + RestS after its send started.
type Cost struct {
	SendS float64
	RestS float64
}

// Total is the one-way time SendS + RestS.
func (c Cost) Total() float64 { return c.SendS + c.RestS }

// PairModel predicts the cost of an m-byte message from rank i to rank j.
// Homogeneous models ignore i and j.
type PairModel interface {
	Cost(i, j, m int) Cost
}

// HockneyModel is the homogeneous Hockney model used for schedules. By
// default a blocking send occupies the sender for the whole
// alpha + beta*m, the assumption behind seed 000 Eq. 2.2. With Overlap the
// sender is busy only for beta*m and the latency alpha overlaps its next
// send, as with non-blocking sends of consecutive segments.
type HockneyModel struct {
	Hockney
	Overlap bool
}

// Cost implements PairModel.
func (h HockneyModel) Cost(_, _, m int) Cost { return hockneyCost(h.Hockney, m, h.Overlap) }

func hockneyCost(h Hockney, m int, overlap bool) Cost {
	if overlap {
		return Cost{SendS: h.BetaSPerByte * float64(m), RestS: h.AlphaS}
	}
	return Cost{SendS: h.Time(m)}
}

// LogGPModel uses LogGP (LogP when G is 0): the sender is busy
// max(g, o + (m-1)G); the message arrives o + (m-1)G + L + o after the
// send started.
type LogGPModel struct{ LogGP }

// Cost implements PairModel.
func (l LogGPModel) Cost(_, _, m int) Cost {
	busy := l.SendBusy(m)
	return Cost{SendS: busy, RestS: max(l.Time(m)-busy, 0)}
}

// PairFunc adapts a function to PairModel.
type PairFunc func(i, j, m int) Cost

// Cost implements PairModel.
func (f PairFunc) Cost(i, j, m int) Cost { return f(i, j, m) }

// HeteroHockney is the heterogeneous Hockney model (seed 000 Sect. 2.2.1,
// edge cost alpha_ij + m*beta_ij): one Hockney per ordered pair of ranks.
type HeteroHockney struct {
	N int
	// P[i*N+j] is the model of messages from i to j.
	P []Hockney
	// Overlap: see HockneyModel.
	Overlap bool
}

// NewHeteroHockney makes an n-rank model with every pair set to def.
func NewHeteroHockney(n int, def Hockney) *HeteroHockney {
	h := &HeteroHockney{N: n, P: make([]Hockney, n*n)}
	for i := range h.P {
		h.P[i] = def
	}
	return h
}

// Set sets the model of messages from i to j.
func (h *HeteroHockney) Set(i, j int, m Hockney) error {
	if i < 0 || j < 0 || i >= h.N || j >= h.N {
		return fmt.Errorf("hetero hockney: pair %d->%d outside %d ranks", i, j, h.N)
	}
	h.P[i*h.N+j] = m
	return nil
}

// At returns the model of messages from i to j.
func (h *HeteroHockney) At(i, j int) Hockney { return h.P[i*h.N+j] }

// Cost implements PairModel, blocking or overlapping as HockneyModel.
func (h *HeteroHockney) Cost(i, j, m int) Cost { return hockneyCost(h.At(i, j), m, h.Overlap) }

// Time predicts one m-byte message from i to j (alpha_ij + beta_ij m):
// the edge cost of seed 000 Sect. 2.2.1's Prim variants and of the
// model-based tree builders (coll.CostFunc has this signature).
func (h *HeteroHockney) Time(i, j, m int) float64 { return h.At(i, j).Time(m) }

// HeteroPLogP holds one PLogP per ordered pair. The sender is busy g(m);
// the message is at the receiver L after that (one-way time L + g(m)).
type HeteroPLogP struct {
	N int
	P []*PLogP
}

// NewHeteroPLogP makes an n-rank model with every pair set to def.
func NewHeteroPLogP(n int, def *PLogP) *HeteroPLogP {
	h := &HeteroPLogP{N: n, P: make([]*PLogP, n*n)}
	for i := range h.P {
		h.P[i] = def
	}
	return h
}

// Cost implements PairModel; a pair without parameters costs nothing,
// which Complete reports beforehand.
func (h *HeteroPLogP) Cost(i, j, m int) Cost {
	p := h.P[i*h.N+j]
	if p == nil {
		return Cost{}
	}
	return Cost{SendS: p.G(m), RestS: p.LS}
}

// Complete reports the first ordered pair without parameters.
func (h *HeteroPLogP) Complete() error {
	for k, p := range h.P {
		if p == nil && k/h.N != k%h.N {
			return fmt.Errorf("hetero plogp: no parameters for pair %d->%d", k/h.N, k%h.N)
		}
	}
	return nil
}

// SXR is the heterogeneous model of seed 000 Eq. 2.5 (Bhat et al.):
// T(m) = S_c + S_m m + X_c + X_m m + R_c + R_m m, with sender constants
// per rank, receiver constants per rank and transmission constants X_c,
// X_m shared by all pairs, as Eq. 2.7 uses them.
type SXR struct {
	Sc, Sm []float64 // per sender rank
	Rc, Rm []float64 // per receiver rank
	Xc, Xm float64
}

// Cost implements PairModel: the sender is busy S_c + S_m m, the rest is
// X_c + X_m m + R_c + R_m m (Eq. 2.7).
func (s SXR) Cost(i, j, m int) Cost {
	fm := float64(m)
	return Cost{
		SendS: s.Sc[i] + s.Sm[i]*fm,
		RestS: s.Xc + s.Xm*fm + s.Rc[j] + s.Rm[j]*fm,
	}
}
