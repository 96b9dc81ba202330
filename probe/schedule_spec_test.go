package probe

import (
	"slices"
	"testing"

	"netaware/dataset"
)

// Specs that share their arrays share a plan without being encoded again;
// equal specs of other arrays find it by their encoding; a spec of other
// contents gets its own.
func TestSharedPlanOfByArrays(t *testing.T) {
	ranks := []int{0, 1, 2, 3, 4}
	a := dataset.ScheduleSpec{Mode: "serial", Ranks: ranks}
	pa, err := SharedPlanOf(a)
	if err != nil {
		t.Fatal(err)
	}
	b := a // the same arrays: another rank's copy of the spec
	pb, err := SharedPlanOf(b)
	if err != nil {
		t.Fatal(err)
	}
	if &pa.Phases[0] != &pb.Phases[0] {
		t.Errorf("a spec of the same arrays got another plan")
	}
	c := dataset.ScheduleSpec{Mode: "serial", Ranks: slices.Clone(ranks)}
	pc, err := SharedPlanOf(c)
	if err != nil {
		t.Fatal(err)
	}
	if &pc.Phases[0] != &pa.Phases[0] {
		t.Errorf("an equal spec of other arrays got another plan")
	}
	d := dataset.ScheduleSpec{Mode: "serial", Ranks: ranks[:3]}
	pd, err := SharedPlanOf(d)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(pd.Pairs()), 3; got != want {
		t.Errorf("spec of 3 ranks: %d pairs, want %d", got, want)
	}
	if got, want := len(pa.Pairs()), 10; got != want {
		t.Errorf("spec of 5 ranks: %d pairs, want %d", got, want)
	}
}
