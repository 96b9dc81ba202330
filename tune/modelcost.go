package tune

import (
	"fmt"

	"netaware/coll"
	"netaware/model"
)

// ModelCost is the edge cost the performance-aware builders (model
// binomial, modified Traeff, Prim) are offered as candidates with, from a
// model.json of ranks ranks: its per-pair Hockney, or, for a model with
// PLogP only (a discovery older than the Hockney fit), the PLogP one-way
// time L + g(m) per pair. The string says which.
func ModelCost(f *model.File, ranks int) (coll.CostFunc, string, error) {
	if f == nil {
		return nil, "", fmt.Errorf("tune: no model")
	}
	if f.Size != ranks {
		return nil, "", fmt.Errorf("tune: the model has %d ranks, the world %d", f.Size, ranks)
	}
	if f.Hockney != nil {
		h, err := f.HeteroHockney()
		if err != nil {
			return nil, "", err
		}
		return h.Time, "hockney", nil
	}
	if f.PLogP != nil {
		p, err := f.HeteroPLogP()
		if err != nil {
			return nil, "", err
		}
		return func(i, j, m int) float64 { return p.Cost(i, j, m).Total() }, "plogp", nil
	}
	return nil, "", fmt.Errorf("tune: the model has neither hockney nor plogp parameters")
}
