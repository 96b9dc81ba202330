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
// in a heap, and a flow's remaining bytes are advanced only when its
// component is solved again. Everything is deterministic: no map iteration,
// no wall clock, and noise comes from a generator seeded by the caller.
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
	// PathLatencyS is the one-way latency of the flow's route, which sets
	// its RTT-weighted share and its window bound; 0 means LatencyS. A
	// caller whose flow waits less or more than its route's latency before
	// its bytes move (a message pipelined behind another on the same
	// connection, or held in a queue) states the route's latency here:
	// TCP's share and window follow the round trip, not the wait.
	PathLatencyS float64
	Forward      []int // resources loaded with weight 1 (times the jitter factor)
	Reverse      []int // resources loaded with the crosstraffic weight
	Data         any   // returned with the flow's events
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
	n     *Network
	slot  int32 // solver state in n.s while the flow is not done
	state flowState
	id    int64

	penalty float64 // sharing penalty: the solver gives rate = share / penalty
	bound   float64 // upper bound on the rate; 0 = none
	doneAt  float64 // the time of the flow's last event, once done

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
	return f.n.s.st[f.slot].rate
}

// EventTime is the time of the flow's next event (latency end or
// completion), or of its last one once it is done.
func (f *Flow) EventTime() float64 {
	if f.state == stateDone {
		return f.doneAt
	}
	return f.n.s.st[f.slot].event
}

// Network is the flow-level model. It is not safe for concurrent use.
type Network struct {
	cfg    Config
	res    []resource
	rs     []scratch
	s      slots
	now    float64
	nextID int64
	heap   eventHeap
	bres   []int32   // buildElements' result, reused
	bw     []float64 // weights of bres
	noise  *Noise

	dirty    []int32 // resources whose flow set changed since the last solve
	nonEmpty int     // resources with entries
	joined   int     // flows with entries
	epoch    uint32
	rmark    []uint32 // per resource: the component search epoch

	// scratch for component search and solving, reused across solves
	compRes   []int32
	compFlows []int32   // slots
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
	nr := len(cfg.Resources)
	n := &Network{cfg: cfg, res: make([]resource, nr), rmark: make([]uint32, nr),
		rs: make([]scratch, nr)}
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
	n.heap.s = &n.s
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
	if !(spec.PathLatencyS >= 0) || math.IsInf(spec.PathLatencyS, 0) {
		return nil, fmt.Errorf("netsim: flow path latency %v must be finite and >= 0", spec.PathLatencyS)
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
	f := &Flow{n: n, id: n.nextID, spec: spec, start: n.now}
	n.nextID++
	n.stats.Flows++
	f.factor = n.noise.BandwidthFactor()
	f.penalty = 1
	rtt := spec.LatencyS
	if spec.PathLatencyS > 0 {
		rtt = spec.PathLatencyS
	}
	if n.cfg.Weighting == RTTWeighted && rtt > 0 {
		f.penalty = rtt
	}
	if n.cfg.WindowBytes > 0 && rtt > 0 {
		f.bound = float64(n.cfg.WindowBytes) / (2 * rtt)
	}
	n.buildElements(spec, f.factor)
	s := &n.s
	i := s.alloc(f, len(n.bres))
	f.slot = i
	s.id[i] = f.id
	x := &s.st[i]
	x.penalty = f.penalty
	x.bound = f.bound
	x.rem = float64(spec.Bytes)
	x.last = n.now
	x.event = n.now + spec.LatencyS
	el := s.elems(i)
	for k, r := range n.bres {
		w := n.bw[k]
		el[k] = elem{w: w, r: r}
		if w > 0 {
			x.anyW = true
		}
	}
	f.state = stateLatency
	n.heap.push(i)
	return f, nil
}

// buildElements merges the forward and reverse paths into one weight per
// distinct resource (a half-duplex link appears in both), in n.bres and
// n.bw.
func (n *Network) buildElements(spec FlowSpec, factor float64) {
	n.bres, n.bw = n.bres[:0], n.bw[:0]
	add := func(r int, w float64) {
		for k, x := range n.bres {
			if int(x) == r {
				n.bw[k] += w
				return
			}
		}
		n.bres = append(n.bres, int32(r))
		n.bw = append(n.bw, w)
	}
	for _, r := range spec.Forward {
		add(r, factor)
	}
	if ct := n.cfg.CrossTraffic; ct > 0 {
		for _, r := range spec.Reverse {
			add(r, ct*factor)
		}
	}
}

// NextTime is the time of the earliest pending event.
func (n *Network) NextTime() (float64, bool) {
	n.Flush()
	if len(n.heap.h) == 0 {
		return 0, false
	}
	if _, t := n.heap.top(); !math.IsInf(t, 1) {
		return t, true
	}
	return 0, false
}

// Pending is the number of flows not yet done.
func (n *Network) Pending() int { return len(n.heap.h) }

// Step advances the clock to the earliest pending event and delivers every
// event at that time, in (time, flow id) order. The returned slice is reused
// by the next call.
func (n *Network) Step() []Event {
	n.out = n.out[:0]
	t, ok := n.NextTime() // flushes
	if !ok {
		return n.out
	}
	if t > n.now {
		n.now = t
	}
	for len(n.heap.h) > 0 && n.heap.h[0].t <= t {
		f := n.s.flow[n.heap.pop()]
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
	s, i := &n.s, f.slot
	x := &s.st[i]
	f.state = stateActive
	x.last = n.now
	if x.rem <= 0 {
		n.done(f)
		return
	}
	if x.cnt == 0 {
		// Nothing is shared: only the window bound limits it.
		if f.bound > 0 {
			x.rate = f.bound / f.factor
			x.event = n.now + x.rem/x.rate
			n.heap.push(i)
		} else {
			n.done(f)
		}
		return
	}
	ebp := math.Inf(1)
	if f.bound > 0 {
		ebp = f.bound * f.penalty
	}
	el := s.elems(i)
	for k := range el {
		e := &el[k]
		rs := &n.res[e.r]
		if len(rs.ef) == 0 {
			n.nonEmpty++
		}
		e.pos = int32(len(rs.ef))
		rs.ef = append(rs.ef, i)
		rs.ew = append(rs.ew, e.w)
		rs.ex = append(rs.ex, entryX{term: e.w / f.penalty, bp: ebp, k: int32(k)})
		n.markDirty(e.r)
	}
	x.joined = true
	n.joined++
	x.rate = 0
	x.event = math.Inf(1)
	n.heap.push(i)
}

// finish removes a completed flow from its resources.
func (n *Network) finish(f *Flow) {
	s := &n.s
	for _, e := range s.elems(f.slot) {
		r := e.r
		rs := &n.res[r]
		i := e.pos
		last := int32(len(rs.ef) - 1)
		if i != last {
			rs.ef[i], rs.ew[i], rs.ex[i] = rs.ef[last], rs.ew[last], rs.ex[last]
			s.elems(rs.ef[i])[rs.ex[i].k].pos = i
		}
		rs.ef, rs.ew, rs.ex = rs.ef[:last], rs.ew[:last], rs.ex[:last]
		if last == 0 {
			n.nonEmpty--
		}
		n.markDirty(r)
	}
	s.st[f.slot].joined = false
	n.joined--
	n.done(f)
}

// done ends a flow that holds no resource entry: its slot goes back.
func (n *Network) done(f *Flow) {
	f.state = stateDone
	f.doneAt = n.s.st[f.slot].event
	n.s.release(f.slot)
}

func (n *Network) markDirty(r int32) {
	rs := &n.res[r]
	if !rs.dirty {
		rs.dirty = true
		n.dirty = append(n.dirty, r)
	}
}

// Flush recomputes the rates of the flows connected to resources changed
// since the last solve. NextTime and Step call it; callers need it only to
// read up-to-date rates.
//
// A search over resources and their flows finds the component; once it
// holds every resource with entries it holds every joined flow, and the
// rest are taken by slot without visiting their elements (the common case
// under dense contention). Each flow's remaining bytes are settled at its
// old rate; each resource starts the filling from the usage summed over its
// entries (in entry order, kept from earlier solves while the entries did
// not change, so the sums are the same to the bit). The order in which
// flows and resources are found changes nothing: the filling pops
// resources in the total order of (share, index) and settling is per flow.
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
	marked := 0 // resources with entries in compRes
	for _, r := range n.dirty {
		n.res[r].dirty = false
		n.res[r].sum()
		if rmark[r] != ep {
			rmark[r] = ep
			n.compRes = append(n.compRes, r)
			if len(n.res[r].ef) > 0 {
				marked++
			}
		}
	}
	n.dirty = n.dirty[:0]
	n.unfixed = 0
	s := &n.s
	// Once every resource with entries is in, a flow's elements need no
	// visit; and when the flows still to take are many, a pass over the
	// slots is shorter than over the resources' entries.
	all := marked == n.nonEmpty
	i := 0
	for ; i < len(n.compRes) && !all; i++ {
		for _, j := range n.res[n.compRes[i]].ef {
			if s.mark[j] == ep {
				continue
			}
			n.take(j, ep)
			for _, e := range s.elems(j) {
				if r2 := e.r; rmark[r2] != ep {
					rmark[r2] = ep
					n.compRes = append(n.compRes, r2)
					marked++ // j is on it
				}
			}
			all = marked == n.nonEmpty
		}
	}
	if left := n.joined - len(n.compFlows); !all || left == 0 {
		// The search is complete.
	} else if 2*left >= len(s.st) {
		for j := range s.st {
			if s.st[j].joined && s.mark[j] != ep {
				n.take(int32(j), ep)
			}
		}
	} else {
		for ; i < len(n.compRes); i++ {
			for _, j := range n.res[n.compRes[i]].ef {
				if s.mark[j] != ep {
					n.take(j, ep)
				}
			}
		}
	}
	h := &n.sheap
	h.items = h.items[:0]
	for _, r := range n.compRes {
		rs := &n.res[r]
		c := &n.rs[r]
		*c = scratch{remaining: rs.bps, usage: rs.usage0, minBound: rs.minBound0, unfixed: rs.unfixed0}
		if rs.unfixed0 > 0 {
			h.items = append(h.items, resEntry{c.share(), r})
		}
	}
	n.stats.Solves++
	n.stats.SolvedRes += int64(len(n.compRes))
	n.stats.SolvedFlow += int64(len(n.compFlows))
	n.solve()
	now := n.now
	for k, j := range n.compFlows {
		x := &s.st[j]
		rate := x.rate
		if rate != n.compRates[k] {
			n.stats.RateChanges++
		}
		t := math.Inf(1)
		if rate > 0 {
			t = now + x.rem/rate
		}
		if t != x.event {
			x.event = t
			n.heap.fix(j)
		}
	}
}

// take adds flow slot j to the component: its remaining bytes are settled
// at the old rate before the rate changes.
func (n *Network) take(j int32, ep uint32) {
	s := &n.s
	x := &s.st[j]
	s.mark[j] = ep
	n.compFlows = append(n.compFlows, j)
	n.compRates = append(n.compRates, x.rate)
	if dt := n.now - x.last; dt > 0 && x.rate > 0 {
		x.rem -= x.rate * dt
		if x.rem < 0 {
			x.rem = 0
		}
	}
	x.last = n.now
	s.fixed[j] = false
	x.rate = 0
	if x.anyW {
		n.unfixed++
	}
}

// resources lists the distinct resources the flow loads, and weights the
// weight on each, while it is not done (for tests and tools).
func (f *Flow) resources() []int {
	var out []int
	for _, e := range f.n.s.elems(f.slot) {
		out = append(out, int(e.r))
	}
	return out
}

func (f *Flow) weights() []float64 {
	var out []float64
	for _, e := range f.n.s.elems(f.slot) {
		out = append(out, e.w)
	}
	return out
}
