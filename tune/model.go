package tune

import (
	"fmt"

	"netaware/coll"
	"netaware/model"
)

// ScheduleTree turns a tree schedule of coll into the model's view of it,
// so that model.PredictBcast can predict the schedule tune measures.
// Schedules with explicit phases (split, scatter-allgather, hierarchical
// stages) are not trees and are refused.
func ScheduleTree(s *coll.Schedule) (model.Tree, error) {
	if s == nil {
		return model.Tree{}, fmt.Errorf("tune: nil schedule")
	}
	if s.Kind != coll.KindTree {
		return model.Tree{}, fmt.Errorf("tune: schedule %s is %s, not a tree", s.Name, s.Kind)
	}
	t := model.Tree{Root: s.Root, Parent: append([]int(nil), s.Parent...), SegBytes: s.SegSize}
	for _, ch := range s.Children {
		t.Children = append(t.Children, append([]int(nil), ch...))
	}
	return t, t.Check()
}
