package tune

import (
	"math"
	"testing"

	"netaware/coll"
	"netaware/model"
)

// coll's binomial tree (Open MPI's build_bmtree) sends nearest child first,
// which is its largest subtree: under Hockney with blocking sends it takes
// exactly the ceil(log p) rounds of seed 000 Eq. 2.2.
func TestDichevEq22OnCollBinomial(t *testing.T) {
	h := model.Hockney{AlphaS: 20e-6, BetaSPerByte: 1e-9}
	for p := 1; p <= 64; p++ {
		for _, root := range []int{0, p / 2} {
			s, err := coll.Binomial(p, root)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := ScheduleTree(s)
			if err != nil {
				t.Fatal(err)
			}
			pr, err := model.PredictBcast(tr, 4096, model.HockneyModel{Hockney: h})
			if err != nil {
				t.Fatal(err)
			}
			if want := model.BinomialHockney(p, 4096, h); math.Abs(pr.TimeS-want) > 1e-15 {
				t.Fatalf("p=%d root %d: %g, Eq. 2.2 %g", p, root, pr.TimeS, want)
			}
		}
	}
	sag, _ := coll.ScatterAllgather(8, 0)
	if _, err := ScheduleTree(sag); err == nil {
		t.Errorf("scatter-allgather accepted as a tree")
	}
}
