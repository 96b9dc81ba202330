package netsim

import (
	"math"
	"math/rand/v2"
)

// Realistic is the latency and bandwidth noise of a real kernel TCP stack
// whose ranks share busy cores, as measured with `netaware emu` clusters
// (docs/noise.md; tools/noisefit fits it to recorded round trips). Three
// things make it unlike the relative jitter:
//   - the delay is additive, in absolute time: it comes from the CPUs
//     (a sleeping receiver woken by an interrupt, a scheduler that runs
//     another process first), not from the wire, so a 5 us hop and a
//     500 us hop get the same few microseconds;
//   - it is heavy-tailed: most messages find the peer asleep and pay a
//     wake-up of tens of microseconds, a few pay hundreds;
//   - it comes in spells: for a while a rank is slow on every message
//     (another process holds its core), so even the minimum of a whole
//     measurement can carry a delay, which no filtering of one pair's
//     samples removes.
type Realistic struct {
	// AwakeProb is the chance that a message finds its receiver awake;
	// it then pays an exponential delay of mean AwakeMeanS.
	AwakeProb  float64
	AwakeMeanS float64
	// Otherwise it pays a wake-up: log-normal with median WakeMedianS and
	// shape WakeSigma.
	WakeMedianS float64
	WakeSigma   float64
	// Spells: virtual time is cut into windows of SpellWindowS per rank;
	// in a window a rank is slow with probability SpellProb, and then
	// every message it sends or receives is delayed by a log-normal amount
	// (median SpellMedianS, shape SpellSigma) drawn once for the window.
	SpellWindowS    float64
	SpellProb       float64
	SpellMedianS    float64
	SpellSigma      float64
	BandwidthJitter float64 // relative standard deviation of a flow's rate
}

// RealisticProfile is the profile fitted to the round trips recorded on
// this project's reference machine (2 cores, 12 ranks in network
// namespaces; netsim/testdata/emu-rtt-*.json). tools/noisefit prints these
// numbers from the recordings.
func RealisticProfile() Realistic {
	return Realistic{
		AwakeProb:       0.449,
		AwakeMeanS:      1.35e-6,
		WakeMedianS:     6.49e-6,
		WakeSigma:       1.55,
		SpellWindowS:    11.7e-3,
		SpellProb:       0.0824,
		SpellMedianS:    7.52e-6,
		SpellSigma:      1.26,
		BandwidthJitter: 0.03,
	}
}

// Excess draws the delay one message from src to dst adds to its path
// latency when it leaves at virtual time now. The per-message part comes
// from rng (the simulator's latency stream); the spells are a pure
// function of (seed, rank, window), so they do not depend on the order in
// which messages draw.
func (r *Realistic) Excess(rng *rand.Rand, seed uint64, src, dst int, now float64) float64 {
	var d float64
	if rng.Float64() < r.AwakeProb {
		d = rng.ExpFloat64() * r.AwakeMeanS
	} else {
		d = r.WakeMedianS * math.Exp(r.WakeSigma*rng.NormFloat64())
	}
	return d + max(r.spell(seed, src, now), r.spell(seed, dst, now))
}

// spell is the delay rank carries in the window holding time now.
func (r *Realistic) spell(seed uint64, rank int, now float64) float64 {
	if r.SpellProb <= 0 || r.SpellWindowS <= 0 {
		return 0
	}
	w := uint64(now / r.SpellWindowS)
	h := mix(seed ^ mix(uint64(rank)+0x9e3779b97f4a7c15*mix(w+1)))
	if unit(h) >= r.SpellProb {
		return 0
	}
	u1, u2 := unit(mix(h^1)), unit(mix(h^2))
	z := math.Sqrt(-2*math.Log(max(u1, 1e-300))) * math.Cos(2*math.Pi*u2)
	return r.SpellMedianS * math.Exp(r.SpellSigma*z)
}

// mix is SplitMix64's finaliser: a counter-based generator, so that a
// window's draw depends on nothing but its coordinates.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unit maps h to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }
