package probe

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"netaware/cluster"
	"netaware/comm"
	"netaware/swarm"
)

// Swarm tomography (seed 000 Ch. 4): synchronised swarm broadcasts whose
// per-peer fragment counts, summed both ways (Eq. 4.1) and averaged over
// iterations (Eq. 4.2), measure the achievable bandwidth between peers.

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

// DefaultSwarmParams: 4 MiB broadcasts of 16 KiB fragments, at most 10
// iterations, stop after two successive iterations agree with NMI >= 0.99.
func DefaultSwarmParams() SwarmParams {
	return SwarmParams{Bytes: 4 << 20, Swarm: swarm.Params{}.WithDefaults(), MaxIterations: 10, StableNMI: 0.99, StableIterations: 2}
}

func (p SwarmParams) check() error {
	switch {
	case p.Bytes < 1:
		return fmt.Errorf("swarm probe: %d bytes, want >= 1", p.Bytes)
	case p.MaxIterations < 1:
		return fmt.Errorf("swarm probe: max iterations %d, want >= 1", p.MaxIterations)
	case !(p.StableNMI >= 0 && p.StableNMI <= 1):
		return fmt.Errorf("swarm probe: stable NMI %v, want within [0,1]", p.StableNMI)
	case p.StableIterations < 1:
		return fmt.Errorf("swarm probe: stable iterations %d, want >= 1", p.StableIterations)
	case p.Weight != "" && p.Weight != WeightRate && p.Weight != WeightFragments:
		return fmt.Errorf("swarm probe: weight %q, want rate or fragments", p.Weight)
	}
	return p.Swarm.WithDefaults().Validate()
}

// SwarmCount is the number of fragments rank To received from rank From in
// one broadcast (v_From ->_i v_To of Eq. 4.1).
type SwarmCount struct {
	From      int `json:"from"`
	To        int `json:"to"`
	Fragments int `json:"fragments"`
	// BusyS is how long To had requests outstanding with From.
	BusyS float64 `json:"busy_s"`
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
			if c.From < 0 || c.To < 0 || c.From >= n || c.To >= n || c.From == c.To || !(c.BusyS > 0) || c.Fragments <= 0 {
				continue
			}
			r := float64(c.Fragments) / c.BusyS
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

// Hierarchy is the bandwidth hierarchy of the first k iterations' graph
// (cluster.BandwidthHierarchy), seeded by the probe's seed.
func (s *SwarmSection) Hierarchy(n, k int) ([]cluster.Labels, error) {
	return cluster.BandwidthHierarchy(s.Graph(n, k), s.Params.Swarm.Seed+1, cluster.DefaultSplitRatio)
}

func (s *SwarmSection) check(n int) error {
	for i, it := range s.Iterations {
		if it.Root < 0 || it.Root >= n {
			return fmt.Errorf("swarm.iterations[%d]: root %d out of range (size %d)", i, it.Root, n)
		}
		for j, c := range it.Counts {
			if c.From < 0 || c.To < 0 || c.From >= n || c.To >= n || c.From == c.To || c.Fragments < 0 {
				return fmt.Errorf("swarm.iterations[%d].counts[%d]: %d->%d (%d fragments) out of range (size %d)", i, j, c.From, c.To, c.Fragments, n)
			}
		}
	}
	return nil
}

// SwarmRoot is iteration i's root: the ranks in a random order fixed by the
// seed, so that the root moves across the whole machine from one iteration
// to the next (seed 000 Sect. 4.6: a root better connected to some peers
// would bias their counts).
func SwarmRoot(n, i int, seed uint64) int {
	perm := rand.New(rand.NewPCG(seed, 0x726f6f74)).Perm(n) // "root"
	return perm[i%n]
}

// RunSwarm runs the swarm probe on every rank of c. On rank 0, ds is the
// dataset to fill; its Swarm section, when it has the same parameters and
// is not complete, is continued (resume), otherwise replaced. Other ranks
// pass nil. hooks.Progress gets (iterations done, MaxIterations).
func RunSwarm(ctx context.Context, c comm.Comm, ds *Dataset, p SwarmParams, hooks RunHooks) error {
	p.Swarm = p.Swarm.WithDefaults()
	if err := p.check(); err != nil {
		return err
	}
	n, me := c.Size(), c.Rank()
	if me == 0 && ds == nil {
		return errors.New("swarm probe: rank 0 needs a dataset")
	}
	// Rank 0 decides where to start (resume) and, after every iteration,
	// whether to go on; one small message per rank carries each decision.
	var sec *SwarmSection
	var prev []cluster.Labels // the previous iteration's hierarchy (maybe no level)
	havePrev := false
	stableRun := 0
	start := 0
	if me == 0 {
		if ds.Swarm != nil && ds.Swarm.Params == p && !ds.Swarm.Complete {
			sec = ds.Swarm
			start = len(sec.Iterations)
			// Rebuild the stopping rule's state from the kept iterations.
			for i := 1; i <= start; i++ {
				h, err := sec.Hierarchy(n, i)
				if err != nil {
					return err
				}
				if havePrev {
					stableRun = nextStable(stableRun, h, prev, p)
				}
				prev, havePrev = h, true
			}
		} else {
			sec = &SwarmSection{Params: p}
			ds.Swarm = sec
		}
		sec.Runs++
	}
	i := start
	for {
		var err error
		if i, err = shareDecision(ctx, c, i); err != nil {
			return err
		}
		if i < 0 {
			break
		}
		root := SwarmRoot(n, i, p.Swarm.Seed)
		if err := comm.Barrier(ctx, c); err != nil {
			return fmt.Errorf("swarm probe: iteration %d: %w", i+1, err)
		}
		sp := p.Swarm
		sp.Round = uint64(i)
		st, err := swarm.Measure(ctx, c, root, p.Bytes, sp)
		if err != nil {
			return fmt.Errorf("swarm probe: iteration %d: %w", i+1, err)
		}
		it, err := gatherSwarm(ctx, c, st)
		if err != nil {
			return fmt.Errorf("swarm probe: iteration %d: %w", i+1, err)
		}
		next := -1
		if me == 0 {
			it.Root = root
			sec.Iterations = append(sec.Iterations, *it)
			sec.ClockS += it.TimeS
			h, err := sec.Hierarchy(n, len(sec.Iterations))
			if err != nil {
				return err
			}
			last := &sec.Iterations[len(sec.Iterations)-1]
			last.Levels = len(h)
			if havePrev {
				v, err := cluster.HierarchyNMI(h, prev)
				if err != nil {
					return err
				}
				last.NMI = &v
				stableRun = nextStable(stableRun, h, prev, p)
			}
			prev, havePrev = h, true
			sec.Stable = stableRun >= p.StableIterations
			sec.Complete = sec.Stable || len(sec.Iterations) >= p.MaxIterations
			if hooks.Progress != nil {
				hooks.Progress(len(sec.Iterations), p.MaxIterations)
			}
			if hooks.Checkpoint != nil {
				if err := hooks.Checkpoint(ds, false); err != nil {
					return err
				}
			}
			if !sec.Complete {
				next = i + 1
			}
		}
		i = next
	}
	if me == 0 && hooks.Checkpoint != nil {
		return hooks.Checkpoint(ds, true)
	}
	return nil
}

// nextStable counts successive iterations whose hierarchy agrees with the
// previous one. Two iterations that both found no level do not count: the
// first iterations of a large world often hold too few connections for
// any level, and a world without bandwidth structure is measured until
// MaxIterations.
func nextStable(run int, h, prev []cluster.Labels, p SwarmParams) int {
	v, err := cluster.HierarchyNMI(h, prev)
	if err != nil || v < p.StableNMI || len(h) == 0 {
		return 0
	}
	return run + 1
}

// shareDecision sends rank 0's next iteration (-1: stop) to every rank.
func shareDecision(ctx context.Context, c comm.Comm, i int) (int, error) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(int64(i)))
	out, err := comm.BcastBytes(ctx, c, b[:])
	if err != nil {
		return 0, fmt.Errorf("swarm probe: decision: %w", err)
	}
	if len(out) != 8 {
		return 0, fmt.Errorf("swarm probe: decision of %d bytes", len(out))
	}
	return int(int64(binary.LittleEndian.Uint64(out))), nil
}

// gatherSwarm collects every rank's counts and completion time on rank 0.
func gatherSwarm(ctx context.Context, c comm.Comm, st *swarm.Stats) (*SwarmIteration, error) {
	enc := func(st *swarm.Stats) []byte {
		b := make([]byte, 8+16*len(st.Received))
		binary.LittleEndian.PutUint64(b, math.Float64bits(st.Complete.Seconds()))
		for k, r := range st.Received {
			binary.LittleEndian.PutUint32(b[8+16*k:], uint32(r.From))
			binary.LittleEndian.PutUint32(b[12+16*k:], uint32(r.Fragments))
			binary.LittleEndian.PutUint64(b[16+16*k:], math.Float64bits(r.Busy.Seconds()))
		}
		return b
	}
	if c.Rank() != 0 {
		return nil, c.Send(ctx, 0, tagSwarmRes, enc(st))
	}
	it := &SwarmIteration{}
	add := func(to int, b []byte) error {
		if len(b) < 8 || (len(b)-8)%16 != 0 {
			return fmt.Errorf("rank %d: swarm result of %d bytes", to, len(b))
		}
		t := math.Float64frombits(binary.LittleEndian.Uint64(b))
		if math.IsNaN(t) || t < 0 {
			return fmt.Errorf("rank %d: completion time %v", to, t)
		}
		it.TimeS = max(it.TimeS, t)
		for k := 8; k < len(b); k += 16 {
			from := int(binary.LittleEndian.Uint32(b[k:]))
			busy := math.Float64frombits(binary.LittleEndian.Uint64(b[k+8:]))
			if from >= c.Size() || from == to {
				return fmt.Errorf("rank %d: fragments from rank %d", to, from)
			}
			if math.IsNaN(busy) || busy < 0 {
				return fmt.Errorf("rank %d: busy time %v with rank %d", to, busy, from)
			}
			it.Counts = append(it.Counts, SwarmCount{From: from, To: to, Fragments: int(binary.LittleEndian.Uint32(b[k+4:])), BusyS: busy})
		}
		return nil
	}
	if err := add(0, enc(st)); err != nil {
		return nil, err
	}
	// A rank receives from at most its peer set, but the set's size is a
	// parameter: the buffer takes the largest possible world.
	buf := make([]byte, 8+16*c.Size())
	for r := 1; r < c.Size(); r++ {
		got, err := c.Recv(ctx, r, tagSwarmRes, buf)
		if err != nil {
			return nil, err
		}
		if err := add(r, buf[:got.Count]); err != nil {
			return nil, err
		}
	}
	return it, nil
}

// CheckSwarmParams reports what is wrong with p (its Swarm part with
// defaults filled in).
func CheckSwarmParams(p SwarmParams) error {
	p.Swarm = p.Swarm.WithDefaults()
	return p.check()
}
