package netsim

import "math"

// The solver's state lives in dense arrays indexed by a flow's slot and a
// resource's index rather than in the Flow structs: a solve of the dense
// pattern visits 4,000 flows and 33,000 flow-resource elements, and
// reaching each through a pointer to a 200-byte struct cost more than the
// arithmetic (docs/benchmarks.md, simulator under dense contention). A
// slot is held from Start until the flow is done, then reused (last freed,
// first reused, so the layout is as deterministic as the rest).
type slots struct {
	flow  []*Flow
	id    []int64
	mark  []uint32 // component search epoch
	fixed []bool   // solver scratch
	hidx  []int32  // position in the event heap, -1 if absent
	st    []slotState

	el   []elem // the arena of the flows' elements
	free []int32
}

// slotState is what a solve reads and writes of a flow, in one cache line.
// (The component search marks and the solver's fixed flags, read for
// every entry of a resource, stay in arrays of their own.)
type slotState struct {
	penalty float64
	bound   float64 // 0 = none
	rate    float64
	rem     float64 // bytes left at last
	last    float64 // time rem was last settled
	event   float64 // time of the pending event
	// The flow's elements (one per distinct resource) are
	// el[off:off+cnt]; the slot owns el[off:off+cap].
	off, cnt, cap int32
	anyW          bool // loads some resource with a positive weight
	joined        bool // has entries in its resources (active, bytes left)
}

// alloc takes a slot for f with room for k elements.
func (s *slots) alloc(f *Flow, k int) int32 {
	var i int32
	if len(s.free) > 0 {
		i = s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
	} else {
		i = int32(len(s.flow))
		s.flow = append(s.flow, nil)
		s.id = append(s.id, 0)
		s.mark = append(s.mark, 0)
		s.fixed = append(s.fixed, false)
		s.hidx = append(s.hidx, -1)
		s.st = append(s.st, slotState{})
	}
	x := &s.st[i]
	if int(x.cap) < k {
		// A slot's room only grows, to the longest path it has held.
		x.off = int32(len(s.el))
		x.cap = int32(k)
		s.el = append(s.el, make([]elem, k)...)
	}
	*x = slotState{off: x.off, cap: x.cap, cnt: int32(k)}
	s.flow[i] = f
	s.mark[i] = 0
	s.fixed[i] = false
	s.hidx[i] = -1
	return i
}

func (s *slots) release(i int32) {
	s.flow[i] = nil
	s.free = append(s.free, i)
}

// elem is one of a flow's elements: 16 bytes, so that a flow's usual
// handful fits in one or two cache lines.
type elem struct {
	w   float64 // weight consumed per unit of rate
	r   int32
	pos int32 // index of the flow's entry in r's entries, while joined
}

// elems is the arena range of slot i's elements.
func (s *slots) elems(i int32) []elem {
	x := &s.st[i]
	return s.el[x.off : x.off+x.cnt]
}

type resource struct {
	// What a solve reads of every resource of the component comes first.
	bps float64
	// Sums over the entries, taken when they change (a changed resource
	// is dirty, and Flush sums every dirty one): a solve of a component
	// starts every resource from them, and most resources of a large
	// component did not change since the last solve.
	usage0 float64 // sum of the terms of entries with ew > 0, in entry order
	// minBound0 is the least bound x penalty of those entries, +Inf if
	// none has a bound: a share below it needs no search for flows held
	// back by their bound.
	minBound0 float64
	unfixed0  int32 // entries with ew > 0
	dirty     bool

	// The flows loading the resource, one entry per element, in the order
	// the flows joined (a leaving flow's entry is replaced by the last):
	// the order in which the usage is summed.
	// What the filling's scans read is apart from the rest.
	ef []int32   // slot
	ew []float64 // weight
	ex []entryX
}

// entryX is the rest of a resource's entry for a flow.
type entryX struct {
	term float64 // usage term, weight / penalty
	bp   float64 // bound x penalty, +Inf without a bound
	k    int32   // index of this resource among the flow's elements
}

func (rs *resource) sum() {
	usage, unfixed, minBound := 0.0, int32(0), math.Inf(1)
	for i, w := range rs.ew {
		if w > 0 {
			usage += rs.ex[i].term
			unfixed++
			minBound = min(minBound, rs.ex[i].bp)
		}
	}
	rs.usage0, rs.unfixed0, rs.minBound0 = usage, unfixed, minBound
}

// scratch is a resource's state during one filling, apart from the
// resources so that the filling's updates stay in a few kilobytes, one
// cache line holding all a fixed flow changes on a resource.
type scratch struct {
	remaining, usage, minBound float64
	unfixed                    int32
}

// share is the rate per unit of 1/penalty the resource can still give its
// unfixed flows: the key of the solver heap.
func (c *scratch) share() float64 {
	if c.remaining <= 0 {
		return 0
	}
	return c.remaining / c.usage
}
