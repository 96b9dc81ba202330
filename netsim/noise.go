package netsim

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Noise draws the multiplicative jitter of latencies and bandwidths from a
// generator seeded once, so that the same seed and the same sequence of
// draws give the same numbers on every run and platform.
type Noise struct {
	latency, bandwidth float64
	rng                *rand.Rand
}

// NewNoise returns a noise source; jitters are relative standard deviations
// (0 disables that kind of noise; draws then consume nothing).
func NewNoise(seed int64, latencyJitter, bandwidthJitter float64) (*Noise, error) {
	for _, v := range []float64{latencyJitter, bandwidthJitter} {
		if !(v >= 0) || math.IsInf(v, 0) || v > 1 {
			return nil, fmt.Errorf("netsim: jitter %v must be in [0,1]", v)
		}
	}
	return &Noise{
		latency:   latencyJitter,
		bandwidth: bandwidthJitter,
		rng:       rand.New(rand.NewPCG(uint64(seed), 0x6e657473696d)),
	}, nil
}

// factor is 1 + sd * N(0,1), truncated to [1/4, 4] so that a rare draw
// never makes a time negative or absurd.
func (z *Noise) factor(sd float64) float64 {
	if sd == 0 {
		return 1
	}
	return min(4, max(0.25, 1+sd*z.rng.NormFloat64()))
}

// Latency returns lat scaled by a latency jitter factor.
func (z *Noise) Latency(lat float64) float64 { return lat * z.factor(z.latency) }

// BandwidthFactor returns the capacity a flow consumes per byte delivered:
// 1 without noise, around 1 with it (a larger factor is a slower flow).
func (z *Noise) BandwidthFactor() float64 { return z.factor(z.bandwidth) }
