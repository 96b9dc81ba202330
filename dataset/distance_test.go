package dataset

import (
	"errors"
	"math"
	"testing"
)

// Distances by hand: the minimum RTT either way, 1/bandwidth, holes NaN, and
// a missing section is told apart from other failures.
func TestDistance(t *testing.T) {
	d := &Dataset{World: World{Kind: "local", Size: 3},
		RTT: &RTTSection{Pairs: []PairResult[RTTResult]{
			{A: 0, B: 1, Result: RTTResult{MinS: 4e-6, MaxS: 9e-6}},
			{A: 1, B: 0, Result: RTTResult{MinS: 3e-6, MaxS: 9e-6}},
			{A: 2, B: 1, Result: RTTResult{MinS: 8e-6, MaxS: 9e-6}},
		}},
		Bandwidth: &BandwidthSection{Pairs: []PairResult[BandwidthResult]{
			{A: 0, B: 2, Result: BandwidthResult{BandwidthBps: 1e9}},
		}},
	}
	dist, sim, err := d.Distance("rtt", 0)
	if err != nil {
		t.Fatal(err)
	}
	if dist.At(0, 1) != 3e-6 || dist.At(1, 0) != 3e-6 || dist.At(1, 2) != 8e-6 || !math.IsNaN(dist.At(0, 2)) || dist.At(0, 0) != 0 {
		t.Errorf("rtt distance %v", dist.Data)
	}
	if sim == nil || sim.N != 3 {
		t.Errorf("rtt similarity %v", sim)
	}
	dist, sim, err = d.Distance("bandwidth", 0)
	if err != nil {
		t.Fatal(err)
	}
	if dist.At(0, 2) != 1e-9 || sim.At(2, 0) != 1e9 || !math.IsNaN(dist.At(0, 1)) {
		t.Errorf("bandwidth: distance %v, similarity %v", dist.Data, sim.Data)
	}
	for _, kind := range []string{"plogp", "features"} {
		var ms *MissingSectionError
		if _, _, err := d.Distance(kind, 0); !errors.As(err, &ms) || ms.Section != "plogp" || err.Error() != "the dataset has no plogp section" {
			t.Errorf("%s without a plogp section: %v", kind, err)
		}
	}
	var ms *MissingSectionError
	if _, _, err := d.Distance("hops", 0); err == nil || errors.As(err, &ms) {
		t.Errorf("unknown kind: %v", err)
	}
}
