package tune

import (
	"netaware/coll"
	"netaware/model"
)

// CollectiveTree is the tree the collective op of coll runs on s, in the
// model's view: a broadcast needs a tree schedule (ScheduleTree); scatter,
// gather and reduce run on every schedule's tree (coll's Scatterv, Gatherv
// and Reduce do), whatever its phases.
func CollectiveTree(s *coll.Schedule, op string) (model.Tree, error) {
	if op == "bcast" || s.Kind == coll.KindTree {
		return ScheduleTree(s)
	}
	t := model.Tree{Root: s.Root, Parent: append([]int(nil), s.Parent...), SegBytes: s.SegSize}
	for _, ch := range s.Children {
		t.Children = append(t.Children, append([]int(nil), ch...))
	}
	return t, t.Check()
}
