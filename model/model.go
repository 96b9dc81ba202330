// Package model holds communication performance models (seed 000 Sect. 2.2:
// Hockney, LogP, LogGP, PLogP, heterogeneous Hockney and the
// sender/transmission/receiver model of Eq. 2.5) and predicts point-to-point
// and collective times from them. It works on data only: parameters come
// from a probe dataset or a model.json file, never from a live comm.Comm.
//
// Times are in seconds, sizes in bytes.
package model

import (
	"fmt"
	"math"
)

// Hockney is the Hockney model (seed 000 Eq. 2.1): T(m) = alpha + beta*m.
// Beta is the inverse bandwidth in seconds per byte.
type Hockney struct {
	AlphaS       float64 `json:"alpha_s"`
	BetaSPerByte float64 `json:"beta_s_per_byte"`
}

// Time is the point-to-point time of an m-byte message (Eq. 2.1).
func (h Hockney) Time(m int) float64 { return h.AlphaS + h.BetaSPerByte*float64(m) }

// BandwidthBps is 1/beta (0 when beta is 0, i.e. unknown or infinite).
func (h Hockney) BandwidthBps() float64 {
	if h.BetaSPerByte <= 0 {
		return 0
	}
	return 1 / h.BetaSPerByte
}

func (h Hockney) check() error {
	if !finiteNonNeg(h.AlphaS) || !finiteNonNeg(h.BetaSPerByte) {
		return fmt.Errorf("hockney: alpha_s %g, beta_s_per_byte %g: want finite and >= 0", h.AlphaS, h.BetaSPerByte)
	}
	return nil
}

// LogP is the LogP model (seed 000 Sect. 2.2.1): latency L, overhead o, gap
// g per message; P is implied by the communicator.
type LogP struct {
	LS float64 `json:"L_s"`
	OS float64 `json:"o_s"`
	GS float64 `json:"g_s"`
}

// Time is the end-to-end time of one small message: o + L + o.
func (l LogP) Time() float64 { return 2*l.OS + l.LS }

// LogGP adds the gap per byte G for long messages (seed 000 Eq. 2.4).
type LogGP struct {
	LogP
	GPerByteS float64 `json:"G_s_per_byte"`
}

// Time is the end-to-end time of an m-byte message: o + (m-1)G + L + o
// (m >= 1; a 0-byte message costs as much as a 1-byte one).
func (l LogGP) Time(m int) float64 {
	return 2*l.OS + l.LS + l.GPerByteS*float64(max(m-1, 0))
}

// SendBusy is how long the sender is occupied by an m-byte message before
// it can start the next one: max(g, o + (m-1)G).
func (l LogGP) SendBusy(m int) float64 {
	return math.Max(l.GS, l.OS+l.GPerByteS*float64(max(m-1, 0)))
}

func finiteNonNeg(x float64) bool { return x >= 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }
