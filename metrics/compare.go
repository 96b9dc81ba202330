package metrics

import (
	"fmt"

	"netaware/topo"
)

// LevelScore is how well one true level was recovered.
type LevelScore struct {
	Truth       string  `json:"truth"`
	TruthGroups int     `json:"truth_groups"`
	Found       string  `json:"found"`       // the found level that matches best
	FoundIndex  int     `json:"found_index"` // its index among the found levels
	FoundGroups int     `json:"found_groups"`
	NMI         float64 `json:"nmi"`
	ARI         float64 `json:"ari"`
	Accuracy    float64 `json:"accuracy"`
}

// Compare matches each true level to the found level with the highest NMI
// (the finest such level on ties) and scores the pair with NMI, ARI and
// seed 003's accuracy. Both sets of levels must partition the same n ranks.
func Compare(found, truth []topo.Level) ([]LevelScore, error) {
	if len(found) == 0 {
		return nil, fmt.Errorf("compare: no found levels")
	}
	if len(truth) == 0 {
		return nil, fmt.Errorf("compare: no true levels")
	}
	n := 0
	for _, g := range truth[0].Groups {
		n += len(g)
	}
	fl := make([][]int, len(found))
	for i, l := range found {
		lab, err := LabelsFromGroups(l.Groups, n)
		if err != nil {
			return nil, fmt.Errorf("compare: found level %d %q over %d ranks: %w", i, l.Name, n, err)
		}
		fl[i] = lab
	}
	var out []LevelScore
	for ti, tl := range truth {
		tlab, err := LabelsFromGroups(tl.Groups, n)
		if err != nil {
			return nil, fmt.Errorf("compare: true level %d %q: %w", ti, tl.Name, err)
		}
		best := LevelScore{Truth: tl.Name, TruthGroups: len(tl.Groups), NMI: -1}
		for fi, lab := range fl {
			nmi, err := NMI(lab, tlab)
			if err != nil {
				return nil, err
			}
			if nmi > best.NMI {
				best.NMI, best.FoundIndex, best.Found, best.FoundGroups = nmi, fi, found[fi].Name, len(found[fi].Groups)
			}
		}
		if best.ARI, err = ARI(fl[best.FoundIndex], tlab); err != nil {
			return nil, err
		}
		if best.Accuracy, err = Accuracy(fl[best.FoundIndex], tlab); err != nil {
			return nil, err
		}
		out = append(out, best)
	}
	return out, nil
}
