package netaware

import (
	"context"
	"fmt"

	"netaware/coll"
	"netaware/comm"
	"netaware/model"
	"netaware/topo"
)

// Comm is one rank's view of a group of ranks, with what the program knows
// about how they are connected: a topology, a performance model and
// decision tables, from which every collective picks its algorithm
// (Algorithm). A Comm belongs to one rank's goroutine; it is not safe for
// concurrent use. Every rank calls the same collectives in the same order
// with the same arguments (roots, lengths, operations), as in MPI.
type Comm struct {
	c         comm.Comm
	topo      *topo.Topology
	model     *model.File
	cost      coll.CostFunc
	decisions map[Collective]*coll.Decision
	schedules map[scheduleKey]built
}

// built is a schedule, or why it could not be built.
type built struct {
	s   *coll.Schedule
	err error
}

type scheduleKey struct {
	alg  string
	root int
}

// New wraps a communicator of package comm (any transport: the simulator,
// TCP, goroutines, MPI) with no topology yet: collectives use
// topology-blind algorithms until Discover or SetTopology.
func New(c comm.Comm) *Comm {
	return &Comm{c: c, decisions: map[Collective]*coll.Decision{}, schedules: map[scheduleKey]built{}}
}

// Rank is this rank's number, 0..Size()-1.
func (c *Comm) Rank() int { return c.c.Rank() }

// Size is the number of ranks.
func (c *Comm) Size() int { return c.c.Size() }

// Raw is the underlying communicator, for point-to-point messages and the
// packages that take a comm.Comm (probe, discover, coll).
func (c *Comm) Raw() comm.Comm { return c.c }

// Topology is the topology collectives use (nil: none).
func (c *Comm) Topology() *topo.Topology { return c.topo }

// Model is the performance model collectives use (nil: none).
func (c *Comm) Model() *model.File { return c.model }

// SetTopology makes collectives topology-aware with t (a topology.json of
// this world, e.g. from an earlier discovery); nil makes them blind again.
// Every rank must set the same topology.
func (c *Comm) SetTopology(t *topo.Topology) error {
	if t != nil && t.Size != c.Size() {
		return fmt.Errorf("topology of %d ranks for a communicator of %d", t.Size, c.Size())
	}
	c.topo = t
	clear(c.schedules)
	return nil
}

// SetModel gives the performance-aware builders (prim, traff,
// model-binomial, named by a decision table) their point-to-point costs;
// nil removes it. Every rank must set the same model.
func (c *Comm) SetModel(m *model.File) error {
	if m == nil {
		c.model, c.cost = nil, nil
		clear(c.schedules)
		return nil
	}
	if m.Size != c.Size() {
		return fmt.Errorf("model of %d ranks for a communicator of %d", m.Size, c.Size())
	}
	cost, err := costOf(m)
	if err != nil {
		return err
	}
	c.model, c.cost = m, cost
	clear(c.schedules)
	return nil
}

// costOf is the point-to-point time the model predicts: Hockney where the
// model has it (the edge cost of seed 000's model-based builders), else the
// whole PLogP cost.
func costOf(m *model.File) (coll.CostFunc, error) {
	if m.Hockney != nil {
		h, err := m.HeteroHockney()
		if err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		return h.Time, nil
	}
	if m.PLogP != nil {
		p, err := m.HeteroPLogP()
		if err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		return func(i, j, n int) float64 { return p.Cost(i, j, n).Total() }, nil
	}
	return nil, fmt.Errorf("model: neither Hockney nor PLogP parameters")
}

// SetDecision makes collective k take its algorithm from d (a decision
// table written by netaware tune) for the communicator and message sizes
// d has a rule for; nil removes the table. The table is checked against
// the topology set now.
func (c *Comm) SetDecision(k Collective, d *coll.Decision) error {
	if _, ok := defaults[k]; !ok {
		return fmt.Errorf("decision for %q: not a collective (want one of %s)", k, collectiveNames())
	}
	if d == nil {
		delete(c.decisions, k)
		return nil
	}
	if err := d.Validate(c.topo); err != nil {
		return err
	}
	c.decisions[k] = d
	return nil
}

// schedule builds (once per algorithm and root) the schedule of a; a
// failed build is remembered too, so that a topology-aware choice that does
// not build on this topology costs one attempt, not one per call.
func (c *Comm) schedule(a coll.Algorithm, root, n int) (*coll.Schedule, error) {
	key := scheduleKey{a.String(), root}
	// Performance-aware builders weigh their edges with the message size:
	// their schedules are built per call.
	cacheable := !modelAware[a.Name]
	if b, ok := c.schedules[key]; ok && cacheable {
		return b.s, b.err
	}
	s, err := a.BuildEnv(c.Size(), root, coll.Env{Topo: c.topo, Cost: c.cost, Bytes: n})
	if cacheable {
		c.schedules[key] = built{s, err}
	}
	return s, err
}

// modelAware names the builders that need a cost function.
var modelAware = func() map[string]bool {
	m := map[string]bool{}
	for _, i := range append(coll.Algorithms(), coll.ReductionAlgorithms()...) {
		m[i.Name] = i.ModelAware
	}
	return m
}()

// Bcast sends root's buf to every rank's buf (all of the same length).
func (c *Comm) Bcast(ctx context.Context, root int, buf []byte) error {
	s, err := c.pick(Bcast, root, len(buf), coll.Op{})
	if err != nil {
		return err
	}
	return s.Bcast(ctx, c.c, buf)
}

// Reduce combines every rank's send element-wise with op and leaves the
// result in recv at root (recv is not touched elsewhere and may be nil
// there). An operation that is not commutative is combined in rank order.
func (c *Comm) Reduce(ctx context.Context, root int, send, recv []byte, op coll.Op) error {
	if op.NonCommutative {
		// Trees combine children in send order, not rank order: the
		// rank-order allreduce gives the result MPI requires, and the
		// root keeps it.
		tmp := make([]byte, len(send))
		if err := c.Allreduce(ctx, send, tmp, op); err != nil {
			return err
		}
		if c.Rank() == root {
			copy(recv, tmp)
		}
		return nil
	}
	s, err := c.pick(Reduce, root, len(send), op)
	if err != nil {
		return err
	}
	return s.Reduce(ctx, c.c, send, recv, op)
}

// Allreduce leaves the element-wise combination (op) of every rank's send
// in every rank's recv (of the same length).
func (c *Comm) Allreduce(ctx context.Context, send, recv []byte, op coll.Op) error {
	s, err := c.pick(Allreduce, 0, len(send), op)
	if err != nil {
		return err
	}
	return s.Allreduce(ctx, c.c, send, recv, op)
}

// ReduceScatter combines every rank's send (Size() blocks of len(recv)
// bytes) element-wise with op and leaves block r of the result in rank r's
// recv (MPI_Reduce_scatter_block).
func (c *Comm) ReduceScatter(ctx context.Context, send, recv []byte, op coll.Op) error {
	s, err := c.pick(ReduceScatter, 0, len(send), op)
	if err != nil {
		return err
	}
	return s.ReduceScatter(ctx, c.c, send, recv, op)
}

// Scatter sends block r of root's send (Size() blocks of len(recv) bytes,
// in rank order) to rank r's recv.
func (c *Comm) Scatter(ctx context.Context, root int, send, recv []byte) error {
	s, err := c.pick(Scatter, root, len(recv)*c.Size(), coll.Op{})
	if err != nil {
		return err
	}
	return s.Scatter(ctx, c.c, send, recv)
}

// Scatterv sends counts[r] bytes to rank r's recv; the blocks lie one after
// the other in root's send. Unlike MPI, every rank passes counts.
func (c *Comm) Scatterv(ctx context.Context, root int, send []byte, counts []int, recv []byte) error {
	s, err := c.pick(Scatter, root, sum(counts), coll.Op{})
	if err != nil {
		return err
	}
	return s.Scatterv(ctx, c.c, send, counts, recv)
}

// Gather collects every rank's send (all of the same length) into root's
// recv, in rank order.
func (c *Comm) Gather(ctx context.Context, root int, send, recv []byte) error {
	s, err := c.pick(Gather, root, len(send)*c.Size(), coll.Op{})
	if err != nil {
		return err
	}
	return s.Gather(ctx, c.c, send, recv)
}

// Gatherv collects counts[r] bytes from rank r into root's recv, one block
// after the other in rank order. Unlike MPI, every rank passes counts.
func (c *Comm) Gatherv(ctx context.Context, root int, send []byte, counts []int, recv []byte) error {
	s, err := c.pick(Gather, root, sum(counts), coll.Op{})
	if err != nil {
		return err
	}
	return s.Gatherv(ctx, c.c, send, counts, recv)
}

// Allgather gives every rank's recv the concatenation, in rank order, of
// every rank's send (all of the same length).
func (c *Comm) Allgather(ctx context.Context, send, recv []byte) error {
	s, err := c.pick(Allgather, 0, len(send)*c.Size(), coll.Op{})
	if err != nil {
		return err
	}
	return s.Allgather(ctx, c.c, send, recv)
}

// Alltoallv sends sendcounts[j] bytes at senddispls[j] of send to rank j,
// which receives them at recvdispls[i] of its recv (recvcounts[i] bytes)
// from each rank i. It has one algorithm (pairwise exchange order).
func (c *Comm) Alltoallv(ctx context.Context, send []byte, sendcounts, senddispls []int, recv []byte, recvcounts, recvdispls []int) error {
	return coll.Alltoallv(ctx, c.c, send, sendcounts, senddispls, recv, recvcounts, recvdispls)
}

// Barrier returns once every rank has entered it.
func (c *Comm) Barrier(ctx context.Context) error {
	s, err := c.pick(Barrier, 0, 0, coll.Op{})
	if err != nil {
		return err
	}
	return s.Barrier(ctx, c.c)
}

func sum(v []int) int {
	n := 0
	for _, x := range v {
		n += x
	}
	return n
}
