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
