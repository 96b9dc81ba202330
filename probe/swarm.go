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
	"netaware/dataset"
	"netaware/metrics"
	"netaware/swarm"
	"netaware/topo"
)

// Swarm tomography (seed 000 Ch. 4): synchronised swarm broadcasts whose
// per-peer fragment counts, summed both ways (Eq. 4.1) and averaged over
// iterations (Eq. 4.2), measure the achievable bandwidth between peers.

// SwarmHierarchy is the bandwidth hierarchy of the first k iterations'
// graph (cluster.BandwidthHierarchy), seeded by the probe's seed.
func SwarmHierarchy(s *dataset.SwarmSection, n, k int) ([]cluster.Labels, error) {
	return cluster.BandwidthHierarchy(s.Graph(n, k), s.Params.Swarm.Seed+1, cluster.DefaultSplitRatio)
}

// SwarmTruthCurve scores the hierarchy of the first k iterations, for every
// k, against true levels (a platform's ground truth): for each true level,
// the NMI of the found level that matches it best (metrics.Compare). An
// iteration whose graph gives no level scores nil. It is how the swarm's
// convergence over iterations is judged on a platform whose truth is known
// (docs/swarm.md).
func SwarmTruthCurve(s *dataset.SwarmSection, n int, truth []topo.Level) ([][]metrics.LevelScore, error) {
	out := make([][]metrics.LevelScore, len(s.Iterations))
	for k := 1; k <= len(s.Iterations); k++ {
		h, err := SwarmHierarchy(s, n, k)
		if err != nil {
			return nil, err
		}
		var found []topo.Level
		for i, l := range h {
			found = append(found, topo.Level{Name: fmt.Sprintf("bandwidth-%d", i+1), Groups: cluster.Groups(l)})
		}
		if len(found) == 0 {
			continue
		}
		if out[k-1], err = metrics.Compare(found, truth); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DefaultSwarmParams: 4 MiB broadcasts of 16 KiB fragments, at most 10
// iterations, stop after two successive iterations agree with NMI >= 0.99.
func DefaultSwarmParams() dataset.SwarmParams {
	return dataset.SwarmParams{Bytes: 4 << 20, Swarm: swarm.Params{}.WithDefaults(), MaxIterations: 10, StableNMI: 0.99, StableIterations: 2}
}

func checkSwarm(p dataset.SwarmParams) error {
	switch {
	case p.Bytes < 1:
		return fmt.Errorf("swarm probe: %d bytes, want >= 1", p.Bytes)
	case p.MaxIterations < 1:
		return fmt.Errorf("swarm probe: max iterations %d, want >= 1", p.MaxIterations)
	case !(p.StableNMI >= 0 && p.StableNMI <= 1):
		return fmt.Errorf("swarm probe: stable NMI %v, want within [0,1]", p.StableNMI)
	case p.StableIterations < 1:
		return fmt.Errorf("swarm probe: stable iterations %d, want >= 1", p.StableIterations)
	case p.Weight != "" && p.Weight != dataset.WeightRate && p.Weight != dataset.WeightFragments:
		return fmt.Errorf("swarm probe: weight %q, want rate or fragments", p.Weight)
	}
	return p.Swarm.WithDefaults().Validate()
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
func RunSwarm(ctx context.Context, c comm.Comm, ds *dataset.Dataset, p dataset.SwarmParams, hooks RunHooks) error {
	p.Swarm = p.Swarm.WithDefaults()
	if err := checkSwarm(p); err != nil {
		return err
	}
	n, me := c.Size(), c.Rank()
	if me == 0 && ds == nil {
		return errors.New("swarm probe: rank 0 needs a dataset")
	}
	// Rank 0 decides where to start (resume) and, after every iteration,
	// whether to go on; one small message per rank carries each decision.
	var sec *dataset.SwarmSection
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
				h, err := SwarmHierarchy(sec, n, i)
				if err != nil {
					return err
				}
				if havePrev {
					stableRun = nextStable(stableRun, h, prev, p)
				}
				prev, havePrev = h, true
			}
		} else {
			sec = &dataset.SwarmSection{Params: p}
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
			h, err := SwarmHierarchy(sec, n, len(sec.Iterations))
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
func nextStable(run int, h, prev []cluster.Labels, p dataset.SwarmParams) int {
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
func gatherSwarm(ctx context.Context, c comm.Comm, st *swarm.Stats) (*dataset.SwarmIteration, error) {
	const rec = 28 // from, fragments, busy, stalled, stalled fragments
	enc := func(st *swarm.Stats) []byte {
		b := make([]byte, 8+rec*len(st.Received))
		binary.LittleEndian.PutUint64(b, math.Float64bits(st.Complete.Seconds()))
		for k, r := range st.Received {
			o := 8 + rec*k
			binary.LittleEndian.PutUint32(b[o:], uint32(r.From))
			binary.LittleEndian.PutUint32(b[o+4:], uint32(r.Fragments))
			binary.LittleEndian.PutUint64(b[o+8:], math.Float64bits(r.Busy.Seconds()))
			binary.LittleEndian.PutUint64(b[o+16:], math.Float64bits(r.Stalled.Seconds()))
			binary.LittleEndian.PutUint32(b[o+24:], uint32(r.StalledFragments))
		}
		return b
	}
	if c.Rank() != 0 {
		return nil, c.Send(ctx, 0, tagSwarmRes, enc(st))
	}
	it := &dataset.SwarmIteration{}
	add := func(to int, b []byte) error {
		if len(b) < 8 || (len(b)-8)%rec != 0 {
			return fmt.Errorf("rank %d: swarm result of %d bytes", to, len(b))
		}
		t := math.Float64frombits(binary.LittleEndian.Uint64(b))
		if math.IsNaN(t) || t < 0 {
			return fmt.Errorf("rank %d: completion time %v", to, t)
		}
		it.TimeS = max(it.TimeS, t)
		for k := 8; k < len(b); k += rec {
			from := int(binary.LittleEndian.Uint32(b[k:]))
			frags := int(binary.LittleEndian.Uint32(b[k+4:]))
			busy := math.Float64frombits(binary.LittleEndian.Uint64(b[k+8:]))
			stall := math.Float64frombits(binary.LittleEndian.Uint64(b[k+16:]))
			stallFrags := int(binary.LittleEndian.Uint32(b[k+24:]))
			if from >= c.Size() || from == to {
				return fmt.Errorf("rank %d: fragments from rank %d", to, from)
			}
			if math.IsNaN(busy) || busy < 0 || math.IsNaN(stall) || stall < 0 || stall > busy || stallFrags > frags {
				return fmt.Errorf("rank %d: busy time %v, stalled %v (%d of %d fragments) with rank %d", to, busy, stall, stallFrags, frags, from)
			}
			it.Counts = append(it.Counts, dataset.SwarmCount{From: from, To: to, Fragments: frags, BusyS: busy, StallS: stall, StallFragments: stallFrags})
		}
		return nil
	}
	if err := add(0, enc(st)); err != nil {
		return nil, err
	}
	// A rank receives from at most its peer set, but the set's size is a
	// parameter: the buffer takes the largest possible world.
	buf := make([]byte, 8+rec*c.Size())
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
func CheckSwarmParams(p dataset.SwarmParams) error {
	p.Swarm = p.Swarm.WithDefaults()
	return checkSwarm(p)
}
