package dataset

import (
	"fmt"

	"netaware/cluster"
	"netaware/swarm"
)

// Swarm tomography (seed 000 Ch. 4, docs/swarm.md): the section package
// probe's RunSwarm fills. It holds the swarm protocol's parameters
// (package swarm, which depends on comm only), not the engine.

// SwarmParams parameterize the swarm probe.
type SwarmParams struct {
	// Bytes is the message size M of every broadcast.
	Bytes int `json:"bytes"`
	// Swarm is the broadcast protocol's parameters (fragments, slots,
	// peer set, tit-for-tat; its Seed seeds the peer sets and choices).
	Swarm swarm.Params `json:"swarm"`
	// MaxIterations bounds the broadcasts; the probe stops earlier once
	// StableIterations successive iterations each found the hierarchy
	// of the previous one with an NMI of at least StableNMI.
	MaxIterations    int     `json:"max_iterations"`
	StableNMI        float64 `json:"stable_nmi"`
	StableIterations int     `json:"stable_iterations"`
	// Weight is the edge weight clustered: WeightRate (default) or
	// WeightFragments (Eq. 4.2).
	Weight string `json:"weight,omitempty"`
}

// Edge weights of the swarm graph.
const (
	WeightRate      = "rate"
	WeightFragments = "fragments"
)

// SwarmCount is the number of fragments rank To received from rank From in
// one broadcast (v_From ->_i v_To of Eq. 4.1).
type SwarmCount struct {
	From      int `json:"from"`
	To        int `json:"to"`
	Fragments int `json:"fragments"`
	// BusyS is how long To had requests outstanding with From.
	BusyS float64 `json:"busy_s"`
	// StallFragments did not follow the previous fragment back to back
	// and took StallS of BusyS (swarm.Count.StalledFragments, Stalled; 0
	// in datasets from before they were measured).
	StallFragments int     `json:"stall_fragments,omitempty"`
	StallS         float64 `json:"stall_s,omitempty"`
}

// SwarmIteration is one broadcast.
type SwarmIteration struct {
	Root int `json:"root"`
	// TimeS is the broadcast's time: the last rank's download completion
	// (seed 000 Sect. 4.5's reference), on the ranks' clocks from a common
	// barrier.
	TimeS  float64      `json:"time_s"`
	Counts []SwarmCount `json:"counts"`
	// Levels is the number of levels the hierarchy of w_i (the counts
	// averaged over iterations 1..i) has; NMI is the agreement of that
	// hierarchy with the previous iteration's (cluster.HierarchyNMI;
	// absent on the first iteration).
	Levels int      `json:"levels"`
	NMI    *float64 `json:"nmi,omitempty"`
}

// SwarmSection is the swarm probe's part of a dataset.
type SwarmSection struct {
	Params     SwarmParams      `json:"params"`
	Iterations []SwarmIteration `json:"iterations"`
	// Stable is set when the probe stopped because successive hierarchies
	// agreed; Complete when it stopped (stable or at MaxIterations).
	Stable   bool `json:"stable"`
	Complete bool `json:"complete"`
	// ClockS sums the iterations' times on rank 0's clock, over resumed
	// runs; Runs counts the runs that contributed.
	ClockS float64 `json:"clock_s"`
	Runs   int     `json:"runs"`
}

// Weights is w_k(e) of Eq. 4.2 over the first k iterations (all when k is
// out of range) as a symmetric n x n matrix with a zero diagonal.
func (s *SwarmSection) Weights(n, k int) *cluster.Matrix {
	m := cluster.NewMatrix(n)
	if s == nil {
		return m
	}
	if k <= 0 || k > len(s.Iterations) {
		k = len(s.Iterations)
	}
	for _, it := range s.Iterations[:k] {
		for _, c := range it.Counts {
			if c.From < 0 || c.To < 0 || c.From >= n || c.To >= n || c.From == c.To {
				continue
			}
			m.Data[c.From*n+c.To] += float64(c.Fragments)
			m.Data[c.To*n+c.From] += float64(c.Fragments)
		}
	}
	if k > 0 {
		for i := range m.Data {
			m.Data[i] /= float64(k)
		}
	}
	return m
}

// Rates is the achieved rate of every connection (fragments per second
// of requests outstanding), averaged over both directions and the first k
// iterations (all when k is out of range) in which the pair exchanged
// fragments; 0 for a pair that never did. A pair is a connection in an
// iteration by chance (the peer sets are random, whatever the network),
// so averaging over the iterations that saw it, where Eq. 4.2 divides by
// all of them, leaves that chance out; and where Eq. 4.1's count is the
// rate times how long the connection was busy, which the availability of
// fragments decides as much as the network, the rate is the network's
// share alone (the bandwidth per connection of Eq. 5.3).
//
// With adaptive pipelines (swarm.Params.Adaptive) the rate leaves out the
// fragments a round trip stalled and their waiting (StallFragments,
// StallS): over a long round trip those would dominate a connection of a
// few fragments, and latency would pass for bandwidth, where seed 000's
// truth is the bandwidth per connection (Eq. 5.3). Without, a connection
// waits for a round trip per Pipeline fragments and latency is part of
// its rate.
func (s *SwarmSection) Rates(n, k int) *cluster.Matrix {
	m := cluster.NewMatrix(n)
	if s == nil {
		return m
	}
	if k <= 0 || k > len(s.Iterations) {
		k = len(s.Iterations)
	}
	seen := make([]float64, n*n)
	for _, it := range s.Iterations[:k] {
		for _, c := range it.Counts {
			frags, secs := c.Fragments, c.BusyS
			if s.Params.Swarm.Adaptive {
				frags, secs = frags-c.StallFragments, secs-c.StallS
			}
			if c.From < 0 || c.To < 0 || c.From >= n || c.To >= n || c.From == c.To || !(secs > 0) || frags <= 0 {
				continue
			}
			r := float64(frags) / secs
			m.Data[c.From*n+c.To] += r
			m.Data[c.To*n+c.From] += r
			seen[c.From*n+c.To]++
			seen[c.To*n+c.From]++
		}
	}
	for i, k := range seen {
		if k > 0 {
			m.Data[i] /= k
		}
	}
	return m
}

// Graph is the weighted graph the hierarchy is cut from: Rates, or
// Weights when the parameters ask for Eq. 4.2's fragment counts.
func (s *SwarmSection) Graph(n, k int) *cluster.Matrix {
	if s.Params.Weight == WeightFragments {
		return s.Weights(n, k)
	}
	return s.Rates(n, k)
}

func (s *SwarmSection) check(n int) error {
	for i, it := range s.Iterations {
		if it.Root < 0 || it.Root >= n {
			return fmt.Errorf("swarm.iterations[%d]: root %d out of range (size %d)", i, it.Root, n)
		}
		for j, c := range it.Counts {
			if c.From < 0 || c.To < 0 || c.From >= n || c.To >= n || c.From == c.To || c.Fragments < 0 || c.StallS < 0 || c.StallS > c.BusyS || c.StallFragments < 0 || c.StallFragments > c.Fragments {
				return fmt.Errorf("swarm.iterations[%d].counts[%d]: %d->%d (%d fragments) out of range (size %d)", i, j, c.From, c.To, c.Fragments, n)
			}
		}
	}
	return nil
}
