// Package netsim is a flow-level network model in virtual time: flows cross
// resources (one direction of a full-duplex link, both directions of a
// half-duplex link, a memory path inside a host), share them by max-min
// fairness computed with progressive filling (the algorithm of SimGrid's lmm
// solver), pay their path latency before any byte moves, and load their
// reverse path with a small crosstraffic weight, which reproduces the
// asymmetric property of TCP observed by Zhu et al. (seed 001, Sect. 5.2).
//
// The package knows nothing of platforms or ranks: it works on plain
// capacities and routes (lists of resource indices). comm/sim glues a
// platform to it.
//
// Rates are recomputed only for the connected component of flows that share
// resources with a change (SimGrid's selective update), completion times sit
// in a heap, and a flow's remaining bytes are advanced lazily, only when its
// rate changes. Everything is deterministic: no map iteration, no wall clock,
// and noise comes from a generator seeded by the caller.
package netsim

import (
	"errors"
	"fmt"
	"math"
)

// Weighting selects how the solver shares a bottleneck among its flows.
type Weighting int

const (
	// MaxMin gives every flow the same weight: plain max-min fairness.
	MaxMin Weighting = iota
	// RTTWeighted is SimGrid's CM02 model with weight-S = 0: a flow's
	// sharing penalty is its path latency, so on a common bottleneck its
	// share is inversely proportional to its round-trip time, as with TCP.
	RTTWeighted
)

func (w Weighting) String() string {
	switch w {
	case MaxMin:
		return "maxmin"
	case RTTWeighted:
		return "rtt"
	}
	return fmt.Sprintf("Weighting(%d)", int(w))
}

// ParseWeighting reads "maxmin" or "rtt".
func ParseWeighting(s string) (Weighting, error) {
	switch s {
	case "maxmin", "max-min":
		return MaxMin, nil
	case "rtt", "cm02":
		return RTTWeighted, nil
	}
	return 0, fmt.Errorf("weighting %q: want maxmin or rtt", s)
}

// Resource is one shared capacity.
type Resource struct {
	Name string
	Bps  float64 // capacity in bytes per second
}

// Config describes the network a Network simulates.
type Config struct {
	Resources []Resource
	Weighting Weighting
	// CrossTraffic is the weight a flow puts on each resource of its reverse
	// path (the ACK direction), per byte per second of its own rate. 0
	// disables it; SimGrid and the platform default use 0.05.
	CrossTraffic float64
	// WindowBytes bounds every flow's rate by WindowBytes / (2 * latency),
	// the TCP window limit; 0 disables the bound.
	WindowBytes int64
	// BandwidthJitter is the relative standard deviation of a per-flow
	// efficiency factor: a flow with factor f consumes f bytes of capacity
	// per byte delivered. 0 disables it.
	BandwidthJitter float64
	// Seed seeds the noise generator.
	Seed int64
}

// FlowSpec is one transfer.
type FlowSpec struct {
	Bytes    int64
	LatencyS float64 // paid before the transfer starts
	Forward  []int   // resources loaded with weight 1 (times the jitter factor)
	Reverse  []int   // resources loaded with the crosstraffic weight
	Data     any     // returned with the flow's events
}

// EventKind tells what happened to a flow.
type EventKind uint8

const (
	// LatencyDone: the flow's latency has elapsed and its bytes start moving.
	LatencyDone EventKind = iota + 1
	// Done: the flow's last byte arrived.
	Done
)

func (k EventKind) String() string {
	switch k {
	case LatencyDone:
		return "latency-done"
	case Done:
		return "done"
	}
	return "unknown"
}

// Event is a flow's state change at a time.
type Event struct {
	Time float64
	Kind EventKind
	Flow *Flow
}

type flowState uint8

const (
	stateLatency flowState = iota
	stateActive
	stateDone
)

// Flow is a transfer in the network. Its methods are read-only views.
type Flow struct {
	// What every solve reads and writes comes first, in two cache lines.
	mark      uint32 // component search epoch
	fixed     bool   // solver scratch
	state     flowState
	penalty   float64 // sharing penalty: the solver gives rate = share / penalty
	bound     float64 // upper bound on the rate; 0 = none
	remaining float64 // bytes left at lastUpdate
	rate      float64
	last      float64 // time remaining was last settled
	event     float64 // time of the pending event (latency end or completion)
	hidx      int     // index in the event heap, -1 if absent
	id        int64

	// Elements: one per distinct resource, with the weight consumed per
	// unit of rate and the flow's position in that resource's element list.
	res []int32
	w   []float64
	pos []int32

	factor float64 // bandwidth jitter: capacity consumed per byte
	start  float64
	spec   FlowSpec
}

// ID is the flow's sequence number (0, 1, 2, ... in start order).
func (f *Flow) ID() int64 { return f.id }

// Data is the caller's payload from FlowSpec.
func (f *Flow) Data() any { return f.spec.Data }

// Bytes is the flow's size.
func (f *Flow) Bytes() int64 { return f.spec.Bytes }

// Start is the time the flow was started.
func (f *Flow) Start() float64 { return f.start }

// Rate is the flow's current rate in bytes per second (0 before its latency
// has elapsed). Call after Network.Flush for an up-to-date value.
func (f *Flow) Rate() float64 {
	if f.state != stateActive {
		return 0
	}
	return f.rate
}

// EventTime is the time of the flow's next event (latency end or completion).
func (f *Flow) EventTime() float64 { return f.event }

type element struct {
	f *Flow
	w float64
	k int32 // index of this resource in f.res
}

type resource struct {
	bps   float64
	elems []element
	dirty bool

	// solver scratch
	remaining, usage float64
	unfixed          int
	// minBound is the least bound * penalty of the flows loading the
	// resource (fixed or not), +Inf if none has a bound: a share below it
	// needs no search for flows held back by their bound.
	minBound float64
}

// Network is the flow-level model. It is not safe for concurrent use.
type Network struct {
	cfg    Config
	res    []resource
	now    float64
	nextID int64
	heap   eventHeap
	noise  *Noise

	dirty []int32 // resources whose flow set changed since the last solve
	epoch uint32
	rmark []uint32 // per resource: the component search epoch (apart, to stay in cache)

	// scratch for component search and solving, reused across solves
	compRes   []int32
	compFlows []*Flow
	compRates []float64 // the rates of compFlows before the solve
	sheap     resHeap
	unfixed   int // flows of the component the solver has not fixed yet
	out       []Event

	stats Stats
}

// Stats counts the work done.
type Stats struct {
	Flows      int64 // flows started
	Events     int64 // events delivered
	Solves     int64 // component solves
	SolvedRes  int64 // resources over all solves
	SolvedFlow int64 // flows over all solves
	// RateChanges counts the flows of the solves whose rate changed: what
	// any solver with the same results must recompute, however it finds
	// them (docs/simulator.md, dense contention).
	RateChanges int64
}

// New builds a network. Capacities must be positive and finite.
func New(cfg Config) (*Network, error) {
	if cfg.CrossTraffic < 0 || math.IsNaN(cfg.CrossTraffic) || math.IsInf(cfg.CrossTraffic, 0) {
		return nil, fmt.Errorf("netsim: crosstraffic %v must be finite and >= 0", cfg.CrossTraffic)
	}
	if cfg.WindowBytes < 0 {
		return nil, fmt.Errorf("netsim: window %d bytes must be >= 0", cfg.WindowBytes)
	}
	if cfg.Weighting != MaxMin && cfg.Weighting != RTTWeighted {
		return nil, fmt.Errorf("netsim: unknown weighting %d", int(cfg.Weighting))
	}
	n := &Network{cfg: cfg, res: make([]resource, len(cfg.Resources)), rmark: make([]uint32, len(cfg.Resources))}
	for i, r := range cfg.Resources {
		if !(r.Bps > 0) || math.IsInf(r.Bps, 0) {
			return nil, fmt.Errorf("netsim: resource %d (%s): capacity %v B/s must be positive and finite", i, r.Name, r.Bps)
		}
		n.res[i] = resource{bps: r.Bps}
	}
	noise, err := NewNoise(cfg.Seed, 0, cfg.BandwidthJitter)
	if err != nil {
		return nil, err
	}
	n.noise = noise
	return n, nil
}

// Now is the network's clock in seconds.
func (n *Network) Now() float64 { return n.now }

// Stats returns the work counters.
func (n *Network) Stats() Stats { return n.stats }

// ErrPast is returned when the clock would move backwards.
var ErrPast = errors.New("netsim: time moves backwards")

// SetNow moves the clock to t, which must not be past the next pending
// event (use Step to cross events) nor before the current time.
func (n *Network) SetNow(t float64) error {
	if t < n.now {
		return fmt.Errorf("%w: %v < %v", ErrPast, t, n.now)
	}
	if next, ok := n.NextTime(); ok && t > next {
		return fmt.Errorf("netsim: SetNow(%v) skips the event at %v", t, next)
	}
	n.now = t
	return nil
}

// Start begins a transfer now. The flow pays its latency, then shares its
// resources with the other active flows until its bytes are delivered.
func (n *Network) Start(spec FlowSpec) (*Flow, error) {
	if spec.Bytes < 0 {
		return nil, fmt.Errorf("netsim: flow of %d bytes", spec.Bytes)
	}
	if !(spec.LatencyS >= 0) || math.IsInf(spec.LatencyS, 0) {
		return nil, fmt.Errorf("netsim: flow latency %v must be finite and >= 0", spec.LatencyS)
	}
	for _, r := range spec.Forward {
		if r < 0 || r >= len(n.res) {
			return nil, fmt.Errorf("netsim: forward resource %d out of range [0,%d)", r, len(n.res))
		}
	}
	for _, r := range spec.Reverse {
		if r < 0 || r >= len(n.res) {
			return nil, fmt.Errorf("netsim: reverse resource %d out of range [0,%d)", r, len(n.res))
		}
	}
	f := &Flow{id: n.nextID, spec: spec, remaining: float64(spec.Bytes), start: n.now, last: n.now, hidx: -1}
	n.nextID++
	n.stats.Flows++
	f.factor = n.noise.BandwidthFactor()
	f.penalty = 1
	if n.cfg.Weighting == RTTWeighted && spec.LatencyS > 0 {
		f.penalty = spec.LatencyS
	}
	if n.cfg.WindowBytes > 0 && spec.LatencyS > 0 {
		f.bound = float64(n.cfg.WindowBytes) / (2 * spec.LatencyS)
	}
	n.buildElements(f)
	f.state = stateLatency
	f.event = n.now + spec.LatencyS
	n.heap.push(f)
	return f, nil
}

// buildElements merges the forward and reverse paths into one weight per
// distinct resource (a half-duplex link appears in both).
func (n *Network) buildElements(f *Flow) {
	size := len(f.spec.Forward)
	if n.cfg.CrossTraffic > 0 {
		size += len(f.spec.Reverse)
	}
	f.res = make([]int32, 0, size)
	f.w = make([]float64, 0, size)
	add := func(r int, w float64) {
		for k, x := range f.res {
			if int(x) == r {
				f.w[k] += w
				return
			}
		}
		f.res = append(f.res, int32(r))
		f.w = append(f.w, w)
	}
	for _, r := range f.spec.Forward {
		add(r, f.factor)
	}
	if ct := n.cfg.CrossTraffic; ct > 0 {
		for _, r := range f.spec.Reverse {
			add(r, ct*f.factor)
		}
	}
	f.pos = make([]int32, len(f.res))
}

// NextTime is the time of the earliest pending event.
func (n *Network) NextTime() (float64, bool) {
	n.Flush()
	if len(n.heap) == 0 || math.IsInf(n.heap[0].event, 1) {
		return 0, false
	}
	return n.heap[0].event, true
}

// Pending is the number of flows not yet done.
func (n *Network) Pending() int { return len(n.heap) }

// Step advances the clock to the earliest pending event and delivers every
// event at that time, in (time, flow id) order. The returned slice is reused
// by the next call.
func (n *Network) Step() []Event {
	n.Flush()
	n.out = n.out[:0]
	if len(n.heap) == 0 || math.IsInf(n.heap[0].event, 1) {
		return n.out
	}
	t := n.heap[0].event
	if t > n.now {
		n.now = t
	}
	for len(n.heap) > 0 && n.heap[0].event <= t {
		f := n.heap.pop()
		switch f.state {
		case stateLatency:
			n.activate(f)
			n.out = append(n.out, Event{Time: t, Kind: LatencyDone, Flow: f})
			if f.state == stateDone {
				n.out = append(n.out, Event{Time: t, Kind: Done, Flow: f})
			}
		case stateActive:
			n.finish(f)
			n.out = append(n.out, Event{Time: t, Kind: Done, Flow: f})
		}
	}
	n.stats.Events += int64(len(n.out))
	return n.out
}

// activate ends a flow's latency phase: it joins its resources' sharing.
func (n *Network) activate(f *Flow) {
	f.state = stateActive
	f.last = n.now
	if f.remaining <= 0 {
		f.state = stateDone
		f.rate = 0
		return
	}
	if len(f.res) == 0 {
		// Nothing is shared: only the window bound limits it.
		if f.bound > 0 {
			f.rate = f.bound / f.factor
			f.event = n.now + f.remaining/f.rate
			n.heap.push(f)
		} else {
			f.rate = math.Inf(1)
			f.state = stateDone
			f.remaining = 0
		}
		return
	}
	for k, r := range f.res {
		rs := &n.res[r]
		f.pos[k] = int32(len(rs.elems))
		rs.elems = append(rs.elems, element{f: f, w: f.w[k], k: int32(k)})
		n.markDirty(r)
	}
	f.rate = 0
	f.event = math.Inf(1)
	n.heap.push(f)
}

// finish removes a completed flow from its resources.
func (n *Network) finish(f *Flow) {
	f.state = stateDone
	f.remaining = 0
	f.last = n.now
	for k, r := range f.res {
		rs := &n.res[r]
		i := f.pos[k]
		last := len(rs.elems) - 1
		if int(i) != last {
			moved := rs.elems[last]
			rs.elems[i] = moved
			moved.f.pos[moved.k] = i
		}
		rs.elems[last] = element{}
		rs.elems = rs.elems[:last]
		n.markDirty(r)
	}
}

func (n *Network) markDirty(r int32) {
	if !n.res[r].dirty {
		n.res[r].dirty = true
		n.dirty = append(n.dirty, r)
	}
}

// Flush recomputes the rates of the flows connected to resources changed
// since the last solve. NextTime and Step call it; callers need it only to
// read up-to-date rates.
//
// One pass over the component's elements finds the component, settles its
// flows' remaining bytes at their old rates and sums each resource's usage
// for the solver (in the order of the resource's elements, as the solver's
// own pass did, so the sums are the same to the bit).
func (n *Network) Flush() {
	if len(n.dirty) == 0 {
		return
	}
	n.epoch++
	ep := n.epoch
	n.compRes = n.compRes[:0]
	n.compFlows = n.compFlows[:0]
	n.compRates = n.compRates[:0]
	rmark := n.rmark
	for _, r := range n.dirty {
		n.res[r].dirty = false
		if rmark[r] != ep {
			rmark[r] = ep
			n.compRes = append(n.compRes, r)
		}
	}
	n.dirty = n.dirty[:0]
	h := &n.sheap
	h.items = h.items[:0]
	n.unfixed = 0
	now := n.now
	// Breadth-first over resources and the flows on them: the union of the
	// connected components touched by the changes.
	for i := 0; i < len(n.compRes); i++ {
		r := n.compRes[i]
		rs := &n.res[r]
		usage, unfixed, minBound := 0.0, 0, math.Inf(1)
		for _, e := range rs.elems {
			f := e.f
			if e.w > 0 {
				usage += e.w / f.penalty
				unfixed++
				if f.bound > 0 {
					minBound = min(minBound, f.bound*f.penalty)
				}
			}
			if f.mark == ep {
				continue
			}
			f.mark = ep
			n.compFlows = append(n.compFlows, f)
			n.compRates = append(n.compRates, f.rate)
			for _, r2 := range f.res {
				if rmark[r2] != ep {
					rmark[r2] = ep
					n.compRes = append(n.compRes, r2)
				}
			}
			// Settle remaining bytes at the old rate before it changes.
			if dt := now - f.last; dt > 0 && f.rate > 0 {
				f.remaining -= f.rate * dt
				if f.remaining < 0 {
					f.remaining = 0
				}
			}
			f.last = now
			f.fixed = false
			f.rate = 0
			for _, w := range f.w {
				if w > 0 {
					n.unfixed++
					break
				}
			}
		}
		rs.remaining = rs.bps
		rs.usage = usage
		rs.unfixed = unfixed
		rs.minBound = minBound
		if unfixed > 0 {
			h.items = append(h.items, resEntry{rs.share(), r})
		}
	}
	n.stats.Solves++
	n.stats.SolvedRes += int64(len(n.compRes))
	n.stats.SolvedFlow += int64(len(n.compFlows))
	n.solve()
	for i, f := range n.compFlows {
		if f.rate != n.compRates[i] {
			n.stats.RateChanges++
		}
		t := math.Inf(1)
		if f.rate > 0 {
			t = now + f.remaining/f.rate
		}
		if t != f.event {
			f.event = t
			n.heap.fix(f)
		}
	}
}

// resources lists the distinct resources the flow loads (for tests and
// tools).
func (f *Flow) resources() []int {
	out := make([]int, len(f.res))
	for i, r := range f.res {
		out[i] = int(r)
	}
	return out
}
