package netaware

import (
	"fmt"
	"sort"
	"strings"

	"netaware/coll"
)

// Collective names an operation, for decision tables (SetDecision) and for
// asking which algorithm would run (Algorithm).
type Collective string

// The collectives of Comm. Alltoallv has a single algorithm and no entry.
const (
	Bcast         Collective = "bcast"
	Reduce        Collective = "reduce"
	Allreduce     Collective = "allreduce"
	ReduceScatter Collective = "reduce-scatter"
	Scatter       Collective = "scatter"
	Gather        Collective = "gather"
	Allgather     Collective = "allgather"
	Barrier       Collective = "barrier"
)

// Message sizes where the default choice changes. They come from the
// simulator measurements of docs/collectives.md: the topology-aware
// broadcast (dfs-pipeline, 64 KiB segments) is 1.7x to 2.5x faster than
// Open MPI's choice from 1 MiB on four racks, magpie 1.7x at 1 KiB; on
// zhu-2racks with cyclic placement dfs-ring is the fastest allreduce at
// 1 MiB (2.8x the best blind one) and levels-allreduce at 16 MiB (2.0x).
// Below 128 KiB the per-level recursive doubling beats the ring's 2(P-1)
// steps: 7.98 against 14.0 ms at 64 KiB on zhu-2racks cyclic, 31.1
// against 58.2 ms on grid5000-4sites (`netaware bench allreduce
// --comm-default`, docs/tuning.md); at 128 KiB they are even.
const (
	smallBytes     = 64 << 10  // below: latency-bound, fewest rounds
	smallAllreduce = 128 << 10 // allreduce's latency-bound range
	largeBytes     = 8 << 20   // from here: levels-allreduce over dfs-ring
	segBytes       = 64 << 10  // the pipelines' segment
)

// chooser is a collective's default policy: blind without a topology (or
// when the topology-aware choice does not build on it), aware with one.
type chooser struct {
	blind func(p, n int, op coll.Op) coll.Algorithm
	aware func(p, n int, op coll.Op) (coll.Algorithm, bool)
}

var defaults = map[Collective]chooser{
	Bcast: {
		blind: func(p, n int, _ coll.Op) coll.Algorithm { return coll.OMPIFixedBcast(p, n) },
		aware: treeAware,
	},
	Reduce: {
		blind: func(p, n int, _ coll.Op) coll.Algorithm { return coll.Algorithm{Name: "binomial"} },
		aware: treeAware,
	},
	Allreduce: {
		blind: blindAllreduce,
		aware: func(p, n int, op coll.Op) (coll.Algorithm, bool) {
			switch {
			case op.NonCommutative:
				return coll.Algorithm{}, false // no topology-aware one keeps rank order
			case n < smallAllreduce:
				return coll.Algorithm{Name: "levels-allreduce", Variant: "recursive-doubling"}, true
			case n < largeBytes:
				return coll.Algorithm{Name: "dfs-ring"}, true
			}
			return coll.Algorithm{Name: "levels-allreduce"}, true
		},
	},
	ReduceScatter: {
		blind: blindAllreduce,
		aware: func(p, n int, op coll.Op) (coll.Algorithm, bool) {
			if op.NonCommutative || n < smallBytes {
				return coll.Algorithm{}, false
			}
			return coll.Algorithm{Name: "dfs-ring"}, true
		},
	},
	Scatter: {
		blind: func(p, n int, _ coll.Op) coll.Algorithm { return coll.Algorithm{Name: "binomial"} },
		aware: func(p, n int, _ coll.Op) (coll.Algorithm, bool) {
			return coll.Algorithm{Name: "hierarchical"}, true
		},
	},
	Gather: {
		blind: func(p, n int, _ coll.Op) coll.Algorithm { return coll.Algorithm{Name: "binomial"} },
		aware: func(p, n int, _ coll.Op) (coll.Algorithm, bool) {
			return coll.Algorithm{Name: "hierarchical"}, true
		},
	},
	Allgather: {
		blind: func(p, n int, _ coll.Op) coll.Algorithm { return coll.Algorithm{Name: "scatter-allgather"} },
		aware: treeAware,
	},
	Barrier: {
		// The zero Algorithm is comm's dissemination barrier.
		blind: func(p, n int, _ coll.Op) coll.Algorithm { return coll.Algorithm{} },
		aware: func(p, n int, _ coll.Op) (coll.Algorithm, bool) {
			return coll.Algorithm{Name: "hierarchical"}, true
		},
	},
}

// treeAware is the topology-aware tree of the rooted collectives: magpie
// (a binomial tree per level, few slow-link crossings) for short messages,
// the depth-first pipeline of the tree for long ones.
func treeAware(p, n int, _ coll.Op) (coll.Algorithm, bool) {
	if n < smallBytes {
		return coll.Algorithm{Name: "magpie"}, true
	}
	return coll.Algorithm{Name: "dfs-pipeline", SegSize: segBytes}, true
}

// blindAllreduce is MPICH's split: recursive doubling for short vectors;
// for long ones the ring (the best blind one measured) or, for operations
// that are not commutative, Rabenseifner, which keeps rank order.
func blindAllreduce(p, n int, op coll.Op) coll.Algorithm {
	switch {
	case n < smallBytes:
		return coll.Algorithm{Name: "recursive-doubling"}
	case op.NonCommutative:
		return coll.Algorithm{Name: "rabenseifner"}
	}
	return coll.Algorithm{Name: "ring"}
}

func collectiveNames() string {
	var s []string
	for k := range defaults {
		s = append(s, string(k))
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// Algorithm is the algorithm collective k runs with on this communicator
// for a message of n bytes and the operation op (reductions only; the zero
// Op elsewhere): the decision table's when it has a rule for (Size(), n),
// else the topology-aware default when a topology is set and the algorithm
// builds on it, else the topology-blind default. n is the whole vector for
// reductions and broadcasts, the total of all blocks for scatters and
// gathers.
func (c *Comm) Algorithm(k Collective, n int, op coll.Op) (coll.Algorithm, error) {
	a, _, err := c.choose(k, 0, n, op)
	return a, err
}

func (c *Comm) choose(k Collective, root, n int, op coll.Op) (coll.Algorithm, *coll.Schedule, error) {
	ch, ok := defaults[k]
	if !ok {
		return coll.Algorithm{}, nil, fmt.Errorf("collective %q: want one of %s", k, collectiveNames())
	}
	p := c.Size()
	if a, ok := c.decisions[k].Lookup(p, n); ok {
		a = coll.Resolve(a, p, n, c.decisions[k])
		s, err := c.schedule(a, root, n)
		if err != nil {
			return a, nil, fmt.Errorf("%s: decision table's %s: %w", k, a, err)
		}
		return a, s, nil
	}
	if c.topo != nil && p > 1 {
		if a, ok := ch.aware(p, n, op); ok {
			// A topology without the tree or levels an algorithm needs
			// falls back to the blind choice rather than failing.
			if s, err := c.schedule(a, root, n); err == nil {
				return a, s, nil
			}
		}
	}
	a := ch.blind(p, n, op)
	if a.Name == "" {
		return a, nil, nil
	}
	s, err := c.schedule(a, root, n)
	if err != nil {
		return a, nil, fmt.Errorf("%s: %s: %w", k, a, err)
	}
	return a, s, nil
}

func (c *Comm) pick(k Collective, root, n int, op coll.Op) (*coll.Schedule, error) {
	if root < 0 || root >= c.Size() {
		return nil, fmt.Errorf("%s: root %d out of range (size %d)", k, root, c.Size())
	}
	_, s, err := c.choose(k, root, n, op)
	return s, err
}
