package probe

import (
	"encoding/json"
	"fmt"
	"sync"

	"netaware/dataset"
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
}

// SharedPlanOf is PlanOf, built once per process for equal specs.
func SharedPlanOf(s dataset.ScheduleSpec) (Plan, error) {
	key, err := json.Marshal(s)
	if err != nil {
		return Plan{}, err
	}
	planCache.Lock()
	defer planCache.Unlock()
	if p, ok := planCache.plans[string(key)]; ok {
		return p, nil
	}
	p, err := PlanOf(s)
	if err != nil {
		return Plan{}, err
	}
	if planCache.plans == nil {
		planCache.plans, planCache.shared = map[string]Plan{}, map[*Phase]bool{}
	}
	planCache.plans[string(key)] = p
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
