package infer

import "fmt"

// Ahead is how far ahead of the real tree a copy is sent (seed 002 Fig. 8:
// T_i goes to H_{i+1} and to H_{i+10}).
const Ahead = 10

// Result is an inferred tree and what it cost.
type Result struct {
	Tree *Tree
	// AddMeasurements counts the RTT measurements made by procedure add
	// (the quantity bounded by (p(d-1)+1)(N-2)+1 in Sect. 3.3).
	AddMeasurements int
	// Pairs is the number of distinct host pairs measured in all, including
	// find_close_host's.
	Pairs int
}

// Infer runs the inference over hosts in the given order (procedure infer of
// Fig. 5 with the local procedure of Fig. 8), in one process: host i
// searches for a close host in the tree as it stood Ahead hosts earlier,
// then adds itself to the current tree. It is the sequential equivalent of
// the distributed protocol and gives the same tree for the same
// measurements.
func Infer(hosts []int, p Prober, seed uint64) (Result, error) {
	return InferTuned(hosts, p, seed, nil)
}

// InferTuned is Infer with every host's Adder adjusted by tune (when not
// nil) before it measures, e.g. to try another NoiseFactor.
func InferTuned(hosts []int, p Prober, seed uint64, tune func(*Adder)) (Result, error) {
	if len(hosts) == 0 {
		return Result{}, fmt.Errorf("infer: no hosts")
	}
	t := NewTree(hosts[0])
	snapshots := []*Tree{t.Clone()} // snapshots[i] = T_i
	res := Result{}
	pairs := map[[2]int]bool{}
	for i := 1; i < len(hosts); i++ {
		ad := NewAdder(hosts[i], p, seed)
		if tune != nil {
			tune(ad)
		}
		view := snapshots[max(0, i-Ahead)]
		if i < Ahead {
			view = snapshots[i-1]
		}
		if _, err := ad.FindCloseHost(view); err != nil {
			return res, err
		}
		if err := ad.MeasureNewcomers(t, view); err != nil {
			return res, err
		}
		if err := ad.Add(t, ad.Closest(t)); err != nil {
			return res, err
		}
		res.AddMeasurements += ad.AddRTT
		for j := range ad.Known {
			pairs[[2]int{min(j, hosts[i]), max(j, hosts[i])}] = true
		}
		snapshots = append(snapshots, t.Clone())
		if i > Ahead {
			snapshots[i-Ahead-1] = nil // no longer needed
		}
	}
	res.Tree = t
	res.Pairs = len(pairs)
	return res, nil
}

// Clone returns a deep copy of t.
func (t *Tree) Clone() *Tree {
	return &Tree{nodes: append([]node(nil), t.nodes...), byRank: t.byRank.clone(), depths: append([]int32(nil), t.depths...)}
}
