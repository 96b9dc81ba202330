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
	real               *Realistic // additive latency model, when not nil
	seed               uint64
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
		seed:      uint64(seed),
	}, nil
}

// NewRealisticNoise returns a noise source whose message latencies follow
// r (its bandwidth jitter is left to the network's own source).
func NewRealisticNoise(seed int64, r Realistic) *Noise {
	z, _ := NewNoise(seed, 0, 0)
	z.real = &r
	return z
}

// Delay returns the latency of one message from src to dst leaving at
// virtual time now over a path of latency lat: the relative jitter of
// Latency, or the realistic profile's additive delay.
func (z *Noise) Delay(lat float64, src, dst int, now float64) float64 {
	if z.real != nil {
		return lat + z.real.Excess(z.rng, z.seed, src, dst, now)
	}
	return z.Latency(lat)
}

// factor is 1 + sd * N(0,1), truncated to [1/4, 4] so that a rare draw
// never makes a time negative or absurd.
func (z *Noise) factor(sd float64) float64 {
	if sd == 0 {
		return 1
	}
	return min(4, max(0.25, 1+sd*z.rng.NormFloat64()))
}

// Latency returns lat delayed by jitter: lat * (1 + sd*|N(0,1)|). Jitter
// only ever adds: a message cannot beat the propagation and switching
// latency of its path, while queueing and interrupt handling delay it by
// varying amounts, which is why measured RTT distributions have a sharp
// minimum and a tail (seed 002 Fig. 7) and why the protocols of seeds 002
// and 003 keep minima. The relative standard deviation of the delay is
// sd*sqrt(1-2/pi), about 0.6 sd.
func (z *Noise) Latency(lat float64) float64 {
	if z.latency == 0 {
		return lat
	}
	return lat * min(4, 1+z.latency*math.Abs(z.rng.NormFloat64()))
}

// BandwidthFactor returns the capacity a flow consumes per byte delivered:
// 1 without noise, around 1 with it (a larger factor is a slower flow).
func (z *Noise) BandwidthFactor() float64 { return z.factor(z.bandwidth) }
