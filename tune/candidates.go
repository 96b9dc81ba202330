package tune

import (
	"fmt"
	"slices"
	"strings"

	"netaware/coll"
	"netaware/topo"
)

// DefaultSegSizes are the segment sizes tried for segmented algorithms
// (Open MPI's fixed decision uses 1 KiB to 128 KiB segments).
var DefaultSegSizes = []int{8 << 10, 32 << 10, 128 << 10}

// CandidateOptions choose what Candidates enumerates.
type CandidateOptions struct {
	// Collective the candidates are for (zero: the broadcast): it decides
	// which algorithms run it and which take Open MPI segment sizes.
	Collective Collective
	// SegSizes for segmented algorithms (nil: DefaultSegSizes).
	SegSizes []int
	// Names restricts the algorithms (nil: every registered one).
	Names []string
	// Bases for magpie2 and hierarchical (nil: binomial and pipeline).
	Bases []string
	// Cost, when set, admits the performance-aware builders (model-binomial,
	// prim, traff) with their default variants; model.CostFunc makes one
	// from a model.json.
	Cost coll.CostFunc
}

// Candidates enumerates algorithm x topology level x segment size for p
// ranks (segment sizes for every algorithm that takes one, see
// TakesSegment): every topology-blind algorithm, and with a topology every
// topology-aware one at every level that splits the ranks into more than
// one and fewer than p groups. Only configurations that build are kept.
func Candidates(p int, t *topo.Topology, o CandidateOptions) ([]coll.Algorithm, error) {
	segs := o.SegSizes
	if segs == nil {
		segs = DefaultSegSizes
	}
	bases := o.Bases
	if bases == nil {
		bases = []string{"binomial", "pipeline"}
	}
	k := o.Collective
	infos := coll.Algorithms()
	if k == Allreduce || k == ReduceScatter {
		infos = append(infos, coll.ReductionAlgorithms()...)
	}
	known := map[string]coll.Info{}
	for _, in := range infos {
		known[in.Name] = in
	}
	names := o.Names
	if names == nil {
		for _, in := range infos {
			if in.Name != "auto" && in.Name != "ompi-fixed" && k.runs(in) {
				names = append(names, in.Name)
			}
		}
	}
	var levels []int // 1-based level indices worth trying
	if t != nil {
		for i, l := range t.Levels {
			if len(l.Groups) > 1 && len(l.Groups) < p {
				levels = append(levels, i+1)
			}
		}
	}
	var out []coll.Algorithm
	seen := map[string]bool{}
	// Topology-blind algorithms first: on equal times the earlier
	// measurement wins, and blind ones are what MPI libraries can run.
	aware := func(n string) int { return b2i(known[n].TopologyAware || known[n].ModelAware) }
	slices.SortStableFunc(names, func(a, b string) int { return aware(a) - aware(b) })
	add := func(a coll.Algorithm) {
		if seen[a.String()] {
			return
		}
		if _, err := a.BuildEnv(p, 0, coll.Env{Topo: t, Cost: o.Cost, Bytes: 1 << 20}); err != nil {
			return
		}
		seen[a.String()] = true
		out = append(out, a)
	}
	for _, name := range names {
		in, ok := known[name]
		if !ok {
			return nil, fmt.Errorf("tune: unknown algorithm %q (have %s)", name, strings.Join(algNames(infos), ", "))
		}
		if name == "auto" {
			return nil, fmt.Errorf("tune: auto is what tuning produces, not a candidate")
		}
		if !k.runs(in) {
			return nil, fmt.Errorf("tune: %s does not run %s", name, k)
		}
		if (in.TopologyAware && t == nil) || (in.ModelAware && o.Cost == nil) {
			continue
		}
		levelChoices := []int{0}
		if in.UsesLevel {
			levelChoices = levels
		}
		baseChoices := []string{""}
		if in.UsesBase {
			baseChoices = bases
		}
		// Only levels-allreduce's variants are tuned (its allreduce among
		// the leaders); the performance-aware builders keep their default.
		variants := []string{""}
		if name == "levels-allreduce" {
			variants = []string{"ring", "rabenseifner", "recursive-doubling"}
		}
		for _, lv := range levelChoices {
			for _, b := range baseChoices {
				// Segment sizes matter for segmented algorithms, for a
				// pipeline used inside sub-communicators, and for every
				// tree Open MPI segments (binomial, binary, split-binary,
				// knomial, chain: the rules file's 4th column), which
				// are also tried whole as its fixed decision runs them.
				bs := []int{0}
				switch {
				case in.Segmented || b == "pipeline":
					bs = segs
				case takesSegmentFor(k, name):
					bs = append([]int{0}, segs...)
				}
				for _, s := range bs {
					for _, v := range variants {
						a := coll.Algorithm{Name: name, Level: lv, Base: b, SegSize: s, Variant: v}
						if in.UsesK {
							a.K = 4
						}
						add(a)
					}
				}
			}
		}
	}
	return out, nil
}

// TakesSegment tells whether Open MPI's coll/tuned runs the algorithm of
// this name with a segment size (the 4th column of a rules file), so that
// the tuner tries it segmented.
func TakesSegment(name string) bool {
	r, ok := OMPIEquivalent(coll.Algorithm{Name: name, SegSize: 1})
	return ok && r.SegBytes > 0
}

func algNames(infos []coll.Info) []string {
	var out []string
	for _, in := range infos {
		out = append(out, in.Name)
	}
	slices.Sort(out)
	return out
}

// IsTopologyAware tells whether a needs a topology.
func IsTopologyAware(a coll.Algorithm) bool {
	in, ok := info(a.Name)
	return ok && in.TopologyAware
}

// IsBlind tells whether a uses neither a topology nor a performance model:
// what an MPI library without either would run.
func IsBlind(a coll.Algorithm) bool {
	in, ok := info(a.Name)
	return ok && !in.TopologyAware && !in.ModelAware
}

func info(name string) (coll.Info, bool) {
	for _, in := range append(coll.Algorithms(), coll.ReductionAlgorithms()...) {
		if in.Name == name {
			return in, true
		}
	}
	return coll.Info{}, false
}

// TruthTopology is the platform's ground-truth levels (finest first) as a
// topology, what tune uses when no topology.json is given.
func TruthTopology(levels []topo.Level, size int) *topo.Topology {
	t := &topo.Topology{Version: topo.Version, Size: size, Levels: levels}
	t.Method = &topo.Method{Name: "platform-truth"}
	return t
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
