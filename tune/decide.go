package tune

import (
	"fmt"
	"math"
	"slices"

	"netaware/coll"
)

// Pick is the algorithm chosen for one message size, with its time.
type Pick struct {
	Bytes     int            `json:"size_bytes"`
	Algorithm coll.Algorithm `json:"algorithm"`
	Label     string         `json:"label"`
	MeanS     float64        `json:"mean_s"`
}

// Range is a run of message sizes [FromBytes, BelowBytes) using one
// algorithm (BelowBytes 0: no upper bound).
type Range struct {
	FromBytes  int            `json:"from_bytes"`
	BelowBytes int            `json:"below_bytes,omitempty"`
	Algorithm  coll.Algorithm `json:"algorithm"`
}

// Best returns, per measured size (ascending), the algorithm with the
// lowest mean among those accept admits (nil: all), skipping failed or
// empty measurements. Ties go to the earlier measurement.
func Best(ms []Measurement, accept func(coll.Algorithm) bool) []Pick {
	by := map[int]*Pick{}
	for i := range ms {
		m := &ms[i]
		if m.Err != "" || m.Stats.Kept == 0 || math.IsNaN(m.Stats.MeanS) {
			continue
		}
		if accept != nil && !accept(m.Algorithm) {
			continue
		}
		if b := by[m.Bytes]; b == nil || m.Stats.MeanS < b.MeanS {
			by[m.Bytes] = &Pick{Bytes: m.Bytes, Algorithm: m.Algorithm, Label: m.Label, MeanS: m.Stats.MeanS}
		}
	}
	out := make([]Pick, 0, len(by))
	for _, p := range by {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Pick) int { return a.Bytes - b.Bytes })
	return out
}

// OMPIEagerLimit is Open MPI's TCP eager limit (btl_tcp_eager_limit, 64
// KiB, header included): a message or segment of that size or larger costs
// a rendezvous round trip first.
const OMPIEagerLimit = 64 << 10

// OMPITie is how close (relative) to the fastest Open MPI-expressible
// measurement another must be to count as a tie for the Open MPI file.
const OMPITie = 0.05

// OMPIPicks is Best for the Open MPI rules file: per size, among the
// measurements accept admits that are within OMPITie of the fastest, the
// one with the fewest per-segment handshakes wins: segments no larger than
// OMPIEagerLimit first, then the fewest segments (a whole message counts as
// one), then the lowest mean.
// Open MPI's segmented trees wait for every child's send of a segment
// before the next, and a segment above the eager limit adds a rendezvous
// round trip; both cost a scheduling delay of the receiving process per
// segment, which a measurement over netaware's transport (eager for every
// size, two segments in flight) does not see. On a loaded machine this
// made 128 KiB segments 1.4-2.2x slower than 32 KiB ones in Open MPI at
// 16 MiB while they measured the same (docs/tuning.md, live proof).
func OMPIPicks(ms []Measurement, accept func(coll.Algorithm) bool) []Pick {
	fastest := Best(ms, accept)
	var out []Pick
	for _, f := range fastest {
		best := f
		bestKey := handshakeKey(f.Algorithm, f.Bytes)
		for i := range ms {
			m := &ms[i]
			if m.Bytes != f.Bytes || m.Err != "" || m.Stats.Kept == 0 || math.IsNaN(m.Stats.MeanS) || !accept(m.Algorithm) {
				continue
			}
			if m.Stats.MeanS > f.MeanS*(1+OMPITie) {
				continue
			}
			k := handshakeKey(m.Algorithm, m.Bytes)
			if k.less(bestKey) || (k == bestKey && m.Stats.MeanS < best.MeanS) {
				best = Pick{Bytes: m.Bytes, Algorithm: m.Algorithm, Label: m.Label, MeanS: m.Stats.MeanS}
				bestKey = k
			}
		}
		out = append(out, best)
	}
	return out
}

// segKey orders configurations by the handshakes Open MPI makes per
// message: rendezvous segments last, then by the number of segments.
type segKey struct {
	rendezvous bool
	segments   int
}

func (a segKey) less(b segKey) bool {
	if a.rendezvous != b.rendezvous {
		return !a.rendezvous
	}
	return a.segments < b.segments
}

// A message of OMPIEagerLimit bytes or more is a rendezvous: ob1 compares
// the payload with the BTL's eager limit minus its own header, so a whole
// 64 KiB message (or a 64 KiB segment) already waits for the receiver.
// Open MPI took 20-32 ms for whole-message binomial and binary trees at 64
// KiB where 32 KiB segments took 6 ms (star-2x4-cyclic, load 40).
func handshakeKey(a coll.Algorithm, bytes int) segKey {
	if a.SegSize <= 0 || a.SegSize >= bytes {
		return segKey{rendezvous: bytes >= OMPIEagerLimit, segments: 1}
	}
	return segKey{rendezvous: a.SegSize >= OMPIEagerLimit, segments: (bytes + a.SegSize - 1) / a.SegSize}
}

// boundary is where the choice for size a gives way to the choice for the
// next measured size b: their geometric mean, since sizes are measured on
// a logarithmic grid (at least a+1).
func boundary(a, b int) int {
	g := int(math.Ceil(math.Sqrt(float64(max(a, 1)) * float64(b))))
	return min(max(g, a+1), b)
}

// Ranges turns per-size picks into size ranges covering [0, inf): the
// first range starts at 0, each later one at the boundary between two
// measured sizes, and neighbouring ranges with the same algorithm merge.
func Ranges(picks []Pick) []Range {
	var out []Range
	for i, p := range picks {
		from := 0
		if i > 0 {
			from = boundary(picks[i-1].Bytes, p.Bytes)
		}
		if n := len(out); n > 0 && out[n-1].Algorithm == p.Algorithm {
			continue
		}
		if n := len(out); n > 0 {
			out[n-1].BelowBytes = from
		}
		out = append(out, Range{FromBytes: from, Algorithm: p.Algorithm})
	}
	return out
}

// SizeRanges are the size ranges chosen for one communicator size.
type SizeRanges struct {
	Ranks  int
	Ranges []Range
}

// Decision makes the coll.Auto decision table from the ranges of each
// tuned communicator size (ascending). Each rule applies to exactly its
// size: topology-aware choices are built for a topology of that size, and
// other sizes are better served by Open MPI's fixed decision, which Auto
// falls back to.
func Decision(blocks []SizeRanges) (*coll.Decision, error) {
	if len(blocks) == 0 {
		return nil, fmt.Errorf("tune: no measurements to decide from")
	}
	d := &coll.Decision{Version: coll.DecisionVersion}
	for i, b := range blocks {
		if len(b.Ranges) == 0 || b.Ranks < 1 || (i > 0 && b.Ranks <= blocks[i-1].Ranks) {
			return nil, fmt.Errorf("tune: communicator size %d: no ranges or not ascending", b.Ranks)
		}
		rule := coll.DecisionRule{MinRanks: b.Ranks, MaxRanks: b.Ranks}
		for _, r := range b.Ranges {
			rule.Sizes = append(rule.Sizes, coll.SizeRule{BelowBytes: r.BelowBytes, Algorithm: r.Algorithm})
		}
		d.Rules = append(d.Rules, rule)
	}
	return d, nil
}
