package model

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// PredictDown predicts a scatterv (counts per rank; nil: a broadcast of m
// bytes) along the unsegmented tree t under a pair model, by seed 000 Eq.
// 2.6-2.7's rule: a rank sends to its children in order once it holds its
// data, the sender busy for each message's send part, and child c holds
// its data the rest of the way after its message's send part ended. The
// message into c carries c's subtree of counts.
func PredictDown(t Tree, m int, counts []float64, pm PairModel) (Prediction, error) {
	if counts == nil {
		tt := t
		tt.SegBytes = 0
		return PredictBcast(tt, m, pm)
	}
	if err := checkCounts("scatterv", t, counts); err != nil {
		return Prediction{}, err
	}
	sub := subtreeBytes(t, counts)
	ready := make([]float64, len(t.Parent))
	for _, r := range t.bfs() {
		free := ready[r]
		for _, c := range t.Children[r] {
			cost := pm.Cost(r, c, roundBytes(sub[c]))
			free += cost.SendS
			ready[c] = free + cost.RestS
		}
	}
	return prediction(ready), nil
}

// PredictUp predicts a gatherv (counts per rank; nil: a reduce of m bytes,
// computation not counted) along the unsegmented tree t under a pair model,
// as the mirror image of PredictDown: a rank takes its children's messages
// one after another in the order they can be there (a child sends when it
// has its whole subtree; the message is there the rest of the way after
// that), each occupying it for the message's send part, and sends up when
// the last has been taken. On a binomial tree this is Eq. 2.2's ceil(log p)
// rounds, on a flat tree (p-1) messages. ReadyS[r] is when r has its whole subtree; TimeS is the root's.
func PredictUp(t Tree, m int, counts []float64, pm PairModel) (Prediction, error) {
	if counts == nil {
		if err := t.Check(); err != nil {
			return Prediction{}, err
		}
		if m < 0 {
			return Prediction{}, fmt.Errorf("predict reduce: message size %d < 0", m)
		}
	} else if err := checkCounts("gatherv", t, counts); err != nil {
		return Prediction{}, err
	}
	var sub []float64
	if counts != nil {
		sub = subtreeBytes(t, counts)
	}
	ready := make([]float64, len(t.Parent))
	order := t.bfs()
	for i := len(order) - 1; i >= 0; i-- {
		r := order[i]
		type msg struct{ there, busy float64 }
		var in []msg
		for _, c := range t.Children[r] {
			b := m
			if sub != nil {
				b = roundBytes(sub[c])
			}
			cost := pm.Cost(c, r, b)
			in = append(in, msg{ready[c] + cost.RestS, cost.SendS})
		}
		slices.SortStableFunc(in, func(a, b msg) int { return cmp.Compare(a.there, b.there) })
		at := 0.0
		for _, x := range in {
			at = math.Max(at, x.there) + x.busy
		}
		ready[r] = at
	}
	p := Prediction{ReadyS: ready, TimeS: ready[t.Root]}
	return p, nil
}

func prediction(ready []float64) Prediction {
	p := Prediction{ReadyS: ready}
	for _, r := range ready {
		p.TimeS = math.Max(p.TimeS, r)
	}
	return p
}

func roundBytes(b float64) int { return int(math.Round(b)) }

// FlowTimes are the per-transfer predictions of one set of transfers.
type FlowTimes struct {
	Src   int     `json:"src"`
	Dst   int     `json:"dst"`
	Bytes float64 `json:"bytes"`
	// StartS and EndS per model name (contention models: when the bytes
	// start to move and when they have arrived).
	StartS map[string]float64 `json:"start_s"`
	EndS   map[string]float64 `json:"end_s"`
}

// ModelTime is one model's prediction of a whole operation.
type ModelTime struct {
	Model string  `json:"model"`
	TimeS float64 `json:"time_s"`
	// Steps is Algorithm 2's number of steps (contention models).
	Steps int    `json:"steps,omitempty"`
	Note  string `json:"note,omitempty"`
}

// Predictors are the models a prediction uses; nil fields are skipped.
type Predictors struct {
	// Pair models for trees by name (hockney, hetero-hockney, loggp,
	// plogp), in the order reported.
	Pair []NamedPair
	// Asymmetric and Fairness are seed 001's model with and without the
	// asymmetric property.
	Asymmetric, Fairness *Contention
	// Latency is added before a transfer moves under the contention
	// models (seed 001 has none; nil: none).
	Latency func(i, j int) float64
}

// NamedPair is a pair model with its report name.
type NamedPair struct {
	Name string
	PairModel
}

// Operation is what to predict: a tree collective (Tree set) or a set of
// concurrent transfers (Transfers set, e.g. a pattern or an alltoallv).
type Operation struct {
	// Op is bcast, scatterv, gatherv or reduce for trees.
	Op     string
	Tree   *Tree
	Bytes  int       // bcast and reduce: the message
	Counts []float64 // scatterv and gatherv: bytes per rank
	// Transfers of a pattern or alltoallv, all started at once.
	Transfers []Transfer
}

// OperationPrediction is every model's prediction of one operation.
type OperationPrediction struct {
	Op     string      `json:"op"`
	Totals []ModelTime `json:"totals"`
	Flows  []FlowTimes `json:"flows"`
}

// Contention model names in reports.
const (
	Asymmetric = "asymmetric"
	Fairness   = "fairness"
)

// Predict runs every predictor on op: the contention models on its
// transfers (trees: DownTransfers or UpTransfers; unsegmented only), the
// pair models on trees (PredictBcast, PredictDown, PredictUp) and, for
// concurrent transfers, on each transfer as if it were alone.
func Predict(op Operation, ps Predictors) (*OperationPrediction, error) {
	ts := op.Transfers
	var err error
	if op.Tree != nil {
		switch op.Op {
		case "bcast":
			ts, err = DownTransfers(*op.Tree, float64(op.Bytes), nil)
		case "scatterv":
			ts, err = DownTransfers(*op.Tree, 0, op.Counts)
		case "reduce":
			ts, err = UpTransfers(*op.Tree, float64(op.Bytes), nil)
		case "gatherv":
			ts, err = UpTransfers(*op.Tree, 0, op.Counts)
		default:
			return nil, fmt.Errorf("predict: operation %q: want bcast, scatterv, gatherv or reduce on a tree", op.Op)
		}
		if err != nil {
			return nil, fmt.Errorf("predict %s: %w", op.Op, err)
		}
		if op.Bytes < 0 {
			return nil, fmt.Errorf("predict %s: message size %d < 0", op.Op, op.Bytes)
		}
	}
	out := &OperationPrediction{Op: op.Op}
	for _, t := range ts {
		out.Flows = append(out.Flows, FlowTimes{Src: t.Src, Dst: t.Dst, Bytes: t.Bytes, StartS: map[string]float64{}, EndS: map[string]float64{}})
	}
	for _, pm := range ps.Pair {
		mt := ModelTime{Model: pm.Name}
		if op.Tree != nil {
			var p Prediction
			switch op.Op {
			case "bcast":
				p, err = PredictBcast(*op.Tree, op.Bytes, pm)
			case "scatterv":
				p, err = PredictDown(*op.Tree, 0, op.Counts, pm)
			case "reduce":
				p, err = PredictUp(*op.Tree, op.Bytes, nil, pm)
			case "gatherv":
				p, err = PredictUp(*op.Tree, 0, op.Counts, pm)
			}
			if err != nil {
				return nil, fmt.Errorf("predict %s with %s: %w", op.Op, pm.Name, err)
			}
			mt.TimeS = p.TimeS
			if op.Tree.SegBytes > 0 && op.Op != "bcast" {
				mt.Note = "unsegmented"
			}
			for i, t := range ts {
				// A tree's per-flow figure under a pair model is when
				// the receiving end is complete.
				r := t.Dst
				out.Flows[i].EndS[pm.Name] = p.ReadyS[r]
			}
		} else {
			mt.Note = "each transfer alone"
			for i, t := range ts {
				e := pm.Cost(t.Src, t.Dst, roundBytes(t.Bytes)).Total()
				out.Flows[i].EndS[pm.Name] = e
				mt.TimeS = math.Max(mt.TimeS, e)
			}
		}
		out.Totals = append(out.Totals, mt)
	}
	for _, cm := range []struct {
		name string
		c    *Contention
	}{{Asymmetric, ps.Asymmetric}, {Fairness, ps.Fairness}} {
		if cm.c == nil {
			continue
		}
		mt := ModelTime{Model: cm.name}
		if op.Tree != nil && op.Tree.SegBytes > 0 {
			mt.Note = "segments not modelled: whole messages"
		}
		tm, err := cm.c.Schedule(ts, ps.Latency)
		if err != nil {
			return nil, fmt.Errorf("predict %s with the %s model: %w", op.Op, cm.name, err)
		}
		mt.TimeS, mt.Steps = tm.TimeS, tm.Steps
		for i := range ts {
			out.Flows[i].StartS[cm.name] = tm.StartS[i]
			out.Flows[i].EndS[cm.name] = tm.EndS[i]
		}
		out.Totals = append(out.Totals, mt)
	}
	return out, nil
}

// ModelNames lists the model names of a prediction in report order.
func (p *OperationPrediction) ModelNames() []string {
	var out []string
	for _, t := range p.Totals {
		if !slices.Contains(out, t.Model) {
			out = append(out, t.Model)
		}
	}
	return out
}

// PairModels are the pair models a model.json supports, for trees:
// "hockney" (homogeneous: the mean alpha and beta over all ordered pairs,
// seed 000 Eq. 2.1-2.2), "hetero-hockney" (per pair, Sect. 2.2.1),
// "loggp" (per pair, translated from PLogP by seed 003 Table 2.1) and
// "plogp" (per pair). Sections the file lacks are skipped.
func PairModels(f *File) ([]NamedPair, error) {
	var out []NamedPair
	if f.Hockney != nil {
		h, err := f.HeteroHockney()
		if err != nil {
			return nil, err
		}
		var mean Hockney
		k := 0
		for i := range h.N {
			for j := range h.N {
				if i != j {
					mean.AlphaS += h.At(i, j).AlphaS
					mean.BetaSPerByte += h.At(i, j).BetaSPerByte
					k++
				}
			}
		}
		if k > 0 {
			mean.AlphaS /= float64(k)
			mean.BetaSPerByte /= float64(k)
		}
		out = append(out, NamedPair{"hockney", HockneyModel{Hockney: mean}}, NamedPair{"hetero-hockney", h})
	}
	if f.PLogP != nil {
		p, err := f.HeteroPLogP()
		if err != nil {
			return nil, err
		}
		loggp := make([]LogGPModel, len(p.P))
		for k, q := range p.P {
			if q != nil {
				loggp[k] = LogGPModel{q.LogGP()}
			}
		}
		n := p.N
		out = append(out, NamedPair{"loggp", PairFunc(func(i, j, m int) Cost { return loggp[i*n+j].Cost(i, j, m) })}, NamedPair{"plogp", p})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("model: neither hockney nor plogp parameters")
	}
	return out, nil
}
