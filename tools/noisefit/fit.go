package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"

	"netaware/dataset"
	"netaware/netsim"
	"netaware/platform"
)

// Recording is the round trips of one `probe rtt --keep-samples` campaign
// on an emulated cluster, read against the platform file that describes it.
type Recording struct {
	Samples  []float64 // every exchange's RTT minus its pair's floor (s)
	PairMins []float64 // each pair's minimum minus its floor (s)
	RTTs     []float64 // every exchange's RTT (s)
	Params   dataset.RTTParams
}

// Load reads a dataset and its platform. A pair's floor is the smallest
// minimum of its class, the pairs whose routes have the same latency in
// the platform (same switch, one trunk, two trunks...): the network puts
// them at the same distance, so what lies above the class floor is noise.
func Load(datasetPath, platformPath string) (*Recording, error) {
	ds, err := dataset.Load(datasetPath)
	if err != nil {
		return nil, err
	}
	p, err := platform.Load(platformPath)
	if err != nil {
		return nil, err
	}
	if ds.RTT == nil || len(ds.RTT.Pairs) == 0 {
		return nil, fmt.Errorf("%s: no rtt section", datasetPath)
	}
	if ds.World.Size != p.NumRanks() {
		return nil, fmt.Errorf("%s: %d ranks, platform %s has %d", datasetPath, ds.World.Size, platformPath, p.NumRanks())
	}
	class := func(a, b int) int64 { return int64(math.Round(p.Route(a, b).LatencyS * 1e9)) }
	floor := map[int64]float64{}
	for _, pr := range ds.RTT.Pairs {
		if len(pr.Result.SamplesS) == 0 {
			return nil, fmt.Errorf("%s: pair %d-%d has no samples (record with --keep-samples)", datasetPath, pr.A, pr.B)
		}
		k := class(pr.A, pr.B)
		if f, ok := floor[k]; !ok || pr.Result.MinS < f {
			floor[k] = pr.Result.MinS
		}
	}
	rec := &Recording{Params: ds.RTT.Params}
	for _, pr := range ds.RTT.Pairs {
		f := floor[class(pr.A, pr.B)]
		for _, s := range pr.Result.SamplesS {
			rec.Samples = append(rec.Samples, s-f)
			rec.RTTs = append(rec.RTTs, s)
		}
		rec.PairMins = append(rec.PairMins, pr.Result.MinS-f)
	}
	return rec, nil
}

// Merge pools recordings taken with the same protocol.
func Merge(recs []*Recording) *Recording {
	out := &Recording{}
	for _, r := range recs {
		out.Samples = append(out.Samples, r.Samples...)
		out.PairMins = append(out.PairMins, r.PairMins...)
		out.RTTs = append(out.RTTs, r.RTTs...)
		out.Params = r.Params
	}
	return out
}

// Quantiles returns the p-quantiles of x (empirical, as gonum defines it).
func Quantiles(x []float64, ps ...float64) []float64 {
	s := slices.Clone(x)
	sort.Float64s(s)
	q := make([]float64, len(ps))
	for i, p := range ps {
		q[i] = stat.Quantile(p, stat.Empirical, s, nil)
	}
	return q
}

// The quantiles the fit matches: the body and tail of every exchange's
// excess, and the spread of the pairs' minima (the part that spells make).
var (
	sampleQs = []float64{0.1, 0.25, 0.5, 0.75, 0.9, 0.99}
	minQs    = []float64{0.5, 0.75, 0.9, 0.97}
)

// Emulate runs the ping-pong protocol of probe.RTTInitiate with the
// profile's delays on a path whose floor is base: pairs measurements in
// sequence, the clock advancing with every exchange, as a campaign does.
func Emulate(r netsim.Realistic, prm dataset.RTTParams, pairs int, base float64, seed uint64) *Recording {
	prm = prm.WithDefaults()
	rng := rand.New(rand.NewPCG(seed, 7))
	out := &Recording{Params: prm}
	now := 0.0
	for k := 0; k < pairs; k++ {
		a, b := 2*k%12, (2*k+1)%12
		best := math.Inf(1)
		for round := 0; round < prm.Rounds; round++ {
			rb, stale := math.Inf(1), 0
			for n := 0; n < prm.MaxExchanges && stale < prm.Stale; n++ {
				go1 := r.Excess(rng, seed, a, b, now)
				back := r.Excess(rng, seed, b, a, now+base/2+go1)
				rtt := base + go1 + back
				now += rtt
				out.Samples = append(out.Samples, rtt-base)
				out.RTTs = append(out.RTTs, rtt)
				if rtt < rb {
					rb, stale = rtt, 0
				} else {
					stale++
				}
			}
			best = math.Min(best, rb)
		}
		out.PairMins = append(out.PairMins, best-base)
		now += 50e-6 // the campaign's hand-over to the next pair
	}
	return out
}

// distance is the fit's objective: squared log ratios of matched
// quantiles (a small offset keeps near-zero quantiles from dominating).
func distance(rec, sim *Recording) float64 {
	const off = 0.3e-6
	d := 0.0
	for _, pair := range []struct {
		x, y []float64
		qs   []float64
	}{{rec.Samples, sim.Samples, sampleQs}, {rec.PairMins, sim.PairMins, minQs}} {
		a, b := Quantiles(pair.x, pair.qs...), Quantiles(pair.y, pair.qs...)
		for i := range a {
			l := math.Log((math.Max(a[i], 0) + off) / (math.Max(b[i], 0) + off))
			d += l * l
		}
	}
	return d
}

// Fit finds the profile whose emulated measurements match rec best,
// starting from start (Nelder-Mead over log-parameters, with common random
// numbers so that the objective is a deterministic function).
func Fit(rec *Recording, start netsim.Realistic, base float64) (netsim.Realistic, float64, error) {
	pack := func(r netsim.Realistic) []float64 {
		return []float64{logit(r.AwakeProb), math.Log(r.AwakeMeanS), math.Log(r.WakeMedianS), math.Log(r.WakeSigma),
			logit(r.SpellProb), math.Log(r.SpellMedianS), math.Log(r.SpellSigma), math.Log(r.SpellWindowS)}
	}
	unpack := func(x []float64) netsim.Realistic {
		r := start
		r.AwakeProb, r.AwakeMeanS, r.WakeMedianS, r.WakeSigma = expit(x[0]), math.Exp(x[1]), math.Exp(x[2]), math.Exp(x[3])
		r.SpellProb, r.SpellMedianS, r.SpellSigma, r.SpellWindowS = expit(x[4]), math.Exp(x[5]), math.Exp(x[6]), math.Exp(x[7])
		return r
	}
	pairs := max(200, len(rec.PairMins))
	f := func(x []float64) float64 {
		return distance(rec, Emulate(unpack(x), rec.Params, pairs, base, 1))
	}
	set := &optimize.Settings{FuncEvaluations: 2000, Converger: &optimize.FunctionConverge{Absolute: 1e-4, Iterations: 200}}
	res, err := optimize.Minimize(optimize.Problem{Func: f}, pack(start), set, &optimize.NelderMead{SimplexSize: 0.7})
	if err != nil && res == nil {
		return start, 0, err
	}
	return unpack(res.X), res.F, nil
}

func logit(p float64) float64 { return math.Log(p / (1 - p)) }
func expit(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
