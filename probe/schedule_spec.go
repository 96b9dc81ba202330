package probe

import (
	"encoding/json"
	"fmt"
	"sync"
	"unsafe"

	"netaware/dataset"
	"netaware/topo"
)

// PlanOf builds the plan a schedule spec (stored in a dataset section)
// describes. It is a function of probe, not a method of the spec, because
// the spec is part of the dataset format and the planners are probe's.
func PlanOf(s dataset.ScheduleSpec) (Plan, error) {
	switch s.Mode {
	case "serial", "":
		return SerialPlan(s.Ranks), nil
	case "hierarchical", "fast":
		tree := s.Tree
		if tree == nil {
			tree = &dataset.Group{Ranks: s.Ranks}
		}
		if s.Mode == "fast" {
			var err error
			if tree, err = FastTree(tree, s.Fraction, s.Seed); err != nil {
				return Plan{}, err
			}
		}
		join := s.Join
		if join == "" {
			join = dataset.JoinOne
		}
		return HierarchicalPlan(tree, join), nil
	case "representative":
		return RepresentativePlanLevels(s.Groups, s.Levels, s.Parallel)
	}
	return Plan{}, fmt.Errorf("schedule mode %q: want serial, hierarchical, fast or representative", s.Mode)
}

// planCache shares plans between the ranks of one process: in the simulator
// and the local world every rank builds the same plan from the same spec,
// and a serial plan of 512 ranks (130816 steps) once per rank would cost
// gigabytes. Plans are never modified after construction.
var planCache struct {
	sync.Mutex
	plans  map[string]Plan
	shared map[*Phase]bool
	// same maps specs by the arrays they hold: every rank of a
	// discovery passes the process's one copy of rank 0's spec, whose
	// JSON key (hundreds of kilobytes at 4,096 ranks) took a third of
	// a blind discovery's PLogP phase when every rank encoded it.
	same map[specIdentity]Plan
}

// specIdentity is a spec's scalar fields and the arrays of its slices:
// two specs that share their arrays (and no one wrote into them, as no
// one may write into a spec a campaign runs) are equal. The pointers keep
// the arrays alive, so that an address is never reused by another spec.
type specIdentity struct {
	mode     string
	join     dataset.JoinMode
	fraction float64
	seed     uint64
	parallel bool
	ranks    *int
	nRanks   int
	tree     *dataset.Group
	groups   *[]int
	nGroups  int
	levels   *[][]int
	nLevels  int
}

func identityOf(s dataset.ScheduleSpec) specIdentity {
	return specIdentity{
		mode: s.Mode, join: s.Join, fraction: s.Fraction, seed: s.Seed, parallel: s.Parallel,
		ranks: unsafe.SliceData(s.Ranks), nRanks: len(s.Ranks), tree: s.Tree,
		groups: unsafe.SliceData(s.Groups), nGroups: len(s.Groups),
		levels: unsafe.SliceData(s.Levels), nLevels: len(s.Levels),
	}
}

// SharedPlanOf is PlanOf, built once per process for equal specs. The
// spec must not be modified afterwards (a spec of the same arrays gets
// the same plan).
func SharedPlanOf(s dataset.ScheduleSpec) (Plan, error) {
	id := identityOf(s)
	planCache.Lock()
	if p, ok := planCache.same[id]; ok {
		planCache.Unlock()
		return p, nil
	}
	planCache.Unlock()
	key, err := json.Marshal(s)
	if err != nil {
		return Plan{}, err
	}
	planCache.Lock()
	defer planCache.Unlock()
	if planCache.plans == nil {
		planCache.plans, planCache.shared, planCache.same = map[string]Plan{}, map[*Phase]bool{}, map[specIdentity]Plan{}
	}
	if p, ok := planCache.plans[string(key)]; ok {
		planCache.same[id] = p
		return p, nil
	}
	p, err := PlanOf(s)
	if err != nil {
		return Plan{}, err
	}
	planCache.plans[string(key)] = p
	planCache.same[id] = p
	if len(p.Phases) > 0 {
		planCache.shared[&p.Phases[0]] = true
	}
	return p, nil
}

func isShared(ph *Phase) bool {
	planCache.Lock()
	defer planCache.Unlock()
	return planCache.shared[ph]
}

// ScheduleRequest is a pair campaign's schedule as a user states it: a mode,
// the ranks to measure and, for the modes that need them, the groups.
type ScheduleRequest struct {
	Mode   string // serial, hierarchical, fast or representative
	Ranks  []int  // ascending, at least two
	Levels []topo.Level
	// Join is hierarchical and fast's join mode (dataset.ParseJoinMode).
	Join string
	// Fraction and Seed choose fast's sample of each finest group.
	Fraction float64
	Seed     uint64
	// Parallel runs representative's disjoint pairs at the same time.
	Parallel bool
}

// NewSchedule builds the spec of r and checks that it plans: hierarchical
// and fast over the tree of r.Levels restricted to r.Ranks, representative
// over the finest level's groups restricted to r.Ranks (a group without a
// rank to measure is dropped).
func NewSchedule(r ScheduleRequest) (dataset.ScheduleSpec, error) {
	spec := dataset.ScheduleSpec{Mode: r.Mode, Ranks: r.Ranks}
	switch r.Mode {
	case "serial":
	case "hierarchical", "fast":
		if r.Levels == nil {
			return spec, fmt.Errorf("the %s schedule needs groups (a topology)", r.Mode)
		}
		tree, err := TreeFromLevels(r.Levels, r.Ranks)
		if err != nil {
			return spec, err
		}
		spec.Tree = tree
		if spec.Join, err = dataset.ParseJoinMode(r.Join); err != nil {
			return spec, err
		}
		if r.Mode == "fast" {
			spec.Fraction, spec.Seed = r.Fraction, r.Seed
		}
	case "representative":
		if len(r.Levels) == 0 {
			return spec, fmt.Errorf("the representative schedule needs groups (a topology)")
		}
		in := make(map[int]bool, len(r.Ranks))
		for _, x := range r.Ranks {
			in[x] = true
		}
		for _, g := range r.Levels[0].Groups {
			var keep []int
			for _, x := range g {
				if in[x] {
					keep = append(keep, x)
				}
			}
			if len(keep) > 0 {
				spec.Groups = append(spec.Groups, keep)
			}
		}
		spec.Parallel = r.Parallel
	default:
		return spec, fmt.Errorf("schedule %q: want serial, hierarchical, fast or representative", r.Mode)
	}
	_, err := PlanOf(spec)
	return spec, err
}
