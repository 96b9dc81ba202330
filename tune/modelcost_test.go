package tune

import (
	"math"
	"testing"

	"netaware/model"
)

// ModelCost takes per-pair Hockney when the file has it, else PLogP's one-way
// time L + g(m); a file of another size or without either is refused.
func TestModelCostHockneyOrPLogP(t *testing.T) {
	h := &model.File{Version: model.Version, Size: 2, Hockney: &model.HockneySection{Default: &model.Hockney{AlphaS: 1e-5, BetaSPerByte: 1e-9}}}
	cost, which, err := ModelCost(h, 2)
	if err != nil || which != "hockney" || math.Abs(cost(0, 1, 1000)-11e-6) > 1e-15 {
		t.Errorf("hockney: %v %s %g", err, which, cost(0, 1, 1000))
	}
	p := &model.File{Version: model.Version, Size: 2, PLogP: &model.PLogPSection{Default: &model.PLogP{LS: 2e-5,
		Points: []model.PLogPPoint{{Bytes: 0, GS: 1e-6}, {Bytes: 1000, GS: 3e-6}}}}}
	cost, which, err = ModelCost(p, 2)
	if err != nil || which != "plogp" || math.Abs(cost(1, 0, 500)-22e-6) > 1e-15 {
		t.Errorf("plogp: %v %s %g", err, which, cost(1, 0, 500))
	}
	if _, _, err := ModelCost(h, 3); err == nil {
		t.Error("a 2-rank model for 3 ranks accepted")
	}
	if _, _, err := ModelCost(&model.File{Version: model.Version, Size: 2}, 2); err == nil {
		t.Error("a model without parameters accepted")
	}
}
