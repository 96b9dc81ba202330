// Package modelcheck checks seed 001's contention model against the network
// it runs on, as the seed's Sect. 7 does: it measures random concurrent
// point-to-point patterns (Sect. 7.1) with probe.RunPattern, predicts every
// link's time with the asymmetric model and with the fairness-only one
// (model.Contention), and reports the error epsilon per link, the share of
// links within 10% per setting (Table II) and an irregular alltoallv (Sect.
// 7.3, Fig. 8). It runs on any world: every rank calls Run.
package modelcheck

import (
	"context"
	"fmt"
	"math"
	"slices"

	"netaware/comm"
	"netaware/dataset"
	"netaware/model"
	"netaware/probe"
)

// Setting is one of Table II's experiments: |N| nodes, half in each of
// two racks, and d draws per node.
type Setting struct {
	Nodes int `json:"nodes"`
	D     int `json:"d"`
}

// ZhuSettings are Table II's nine settings.
var ZhuSettings = []Setting{{10, 1}, {20, 1}, {30, 1}, {10, 2}, {20, 2}, {30, 2}, {10, 3}, {20, 3}, {30, 3}}

// Options of a check.
type Options struct {
	Settings []Setting
	// Links is the least number of links measured per setting (seed: >
	// 500); patterns are drawn until it is reached.
	Links int
	// P is the inclusion probability of a drawn link (seed: 0.5).
	P float64
	// Seed of the first pattern; pattern i of setting s uses
	// Seed + 1000003*s + i.
	Seed uint64
	// Pattern: message size and stopping rule of every measurement.
	Pattern dataset.PatternParams
	// NodeOf and RackOf bind ranks to nodes and racks (model.Bindings);
	// the check uses the first rank of every node.
	NodeOf, RackOf []int
	// BetaNIC and BetaBackbone (s/byte); 0: measured first by seed 001's
	// experiments A and B (Sect. 5.1).
	BetaNIC, BetaBackbone float64
	// Alltoallv holds bytes from i to j among the first len(Alltoallv)
	// nodes of the first rack (nil: no alltoallv).
	Alltoallv [][]float64
	// Progress, if set, is called on rank 0 after every pattern.
	Progress func(done, total int)
}

// Calibration is how the model's parameters were obtained.
type Calibration struct {
	BetaNICSPerByte      float64 `json:"beta_nic_s_per_byte"`
	BetaBackboneSPerByte float64 `json:"beta_backbone_s_per_byte"`
	// Measured says whether experiments A and B ran; BackboneAtLeast is
	// set when experiment B's flows did not fill the backbone, which is
	// then known only to be at least that fast.
	Measured        bool `json:"measured"`
	BackboneFlows   int  `json:"backbone_flows,omitempty"`
	BackboneAtLeast bool `json:"backbone_at_least,omitempty"`
}

// Link is one measured link with both predictions.
type Link struct {
	Setting int     `json:"setting"`
	Pattern int     `json:"pattern"`
	Src     int     `json:"src"`
	Dst     int     `json:"dst"`
	Bytes   float64 `json:"bytes"`
	MeasS   float64 `json:"measured_s"`
	AsymS   float64 `json:"asymmetric_s"`
	FairS   float64 `json:"fairness_s"`
	// Epsilon is (predicted - measured) / measured, signed.
	EpsAsym float64 `json:"eps_asymmetric"`
	EpsFair float64 `json:"eps_fairness"`
	// Bidirectional: the link's pattern has incoming and outgoing links
	// on one NIC or backbone (Table II's "asymmetric communication").
	Bidirectional bool `json:"bidirectional"`
}

// Row is one line of Table II.
type Row struct {
	Setting
	Patterns int `json:"patterns"`
	Links    int `json:"links"`
	// Steps is the mean number of Algorithm 2 steps per pattern.
	Steps float64 `json:"steps"`
	// Within10 is the share of links with |epsilon| <= 10%; MeanAbs the
	// mean |epsilon|; ...Bidir over the links of bidirectional patterns
	// only (Table II's epsilon' and epsilon'').
	Within10Asym     float64 `json:"within10_asymmetric"`
	Within10Fair     float64 `json:"within10_fairness"`
	MeanAbsAsym      float64 `json:"mean_abs_eps_asymmetric"`
	MeanAbsFair      float64 `json:"mean_abs_eps_fairness"`
	BidirLinks       int     `json:"bidirectional_links"`
	MeanAbsAsymBidir float64 `json:"mean_abs_eps_asymmetric_bidirectional"`
	MeanAbsFairBidir float64 `json:"mean_abs_eps_fairness_bidirectional"`
}

// Alltoallv is the collective comparison of Sect. 7.3: the operation's
// time is its slowest link.
type Alltoallv struct {
	Ranks   []int   `json:"ranks"`
	MeasS   float64 `json:"measured_s"`
	AsymS   float64 `json:"asymmetric_s"`
	FairS   float64 `json:"fairness_s"`
	EpsAsym float64 `json:"eps_asymmetric"`
	EpsFair float64 `json:"eps_fairness"`
	Links   []Link  `json:"links"`
}

// Report is what rank 0 gets back.
type Report struct {
	Calibration Calibration `json:"calibration"`
	Bytes       int         `json:"bytes"`
	Rows        []Row       `json:"rows"`
	// Total is the row over every setting.
	Total     Row        `json:"total"`
	Alltoallv *Alltoallv `json:"alltoallv,omitempty"`
	Links     []Link     `json:"links"`
}

// racks lists, per rack in order of first appearance, the first rank of
// each of its nodes.
func racks(nodeOf, rackOf []int) [][]int {
	var order []int
	by := map[int][]int{}
	seen := map[int]bool{}
	for r := range nodeOf {
		if seen[nodeOf[r]] {
			continue
		}
		seen[nodeOf[r]] = true
		k := rackOf[r]
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], r)
	}
	out := make([][]int, len(order))
	for i, k := range order {
		out[i] = by[k]
	}
	return out
}

// DefaultOptions are the check 'netaware predict check' runs: Table II's
// nine settings with 500 links each, links kept with probability 0.5, 8 MiB
// messages (the seed's are >= 10 MB) measured at most 50 times (the seed:
// 2000) or until their 95% confidence interval is within 2%, and Fig. 8's
// kind of alltoallv. Bindings are the caller's.
func DefaultOptions() Options {
	return Options{Settings: slices.Clone(ZhuSettings), Links: 500, P: 0.5, Seed: 1,
		Pattern: dataset.PatternParams{Bytes: 8 << 20, MaxIter: 50, CIWidth: 0.02}, Alltoallv: ExampleAlltoallv()}
}

// Validate checks the options against a world of size ranks before
// anything runs: bindings, settings the racks can hold, the alltoallv.
func (o Options) Validate(size int) error {
	if len(o.NodeOf) != size || len(o.RackOf) != size {
		return fmt.Errorf("modelcheck: bindings for %d and %d ranks, the world has %d", len(o.NodeOf), len(o.RackOf), size)
	}
	if o.Links < 1 || !(o.P > 0 && o.P <= 1) {
		return fmt.Errorf("modelcheck: links %d, p %g: want >= 1 and 0 < p <= 1", o.Links, o.P)
	}
	rk := racks(o.NodeOf, o.RackOf)
	for i, s := range o.Settings {
		if s.Nodes < 2 || s.D < 1 {
			return fmt.Errorf("modelcheck: setting %d: |N| = %d, d = %d: want |N| >= 2, d >= 1", i, s.Nodes, s.D)
		}
		if _, err := settingNodes(rk, s.Nodes); err != nil {
			return fmt.Errorf("modelcheck: setting %d (|N| = %d): %w", i, s.Nodes, err)
		}
	}
	if n := len(o.Alltoallv); n > 0 {
		if len(rk[0]) < n {
			return fmt.Errorf("modelcheck: alltoallv over %d nodes, the first rack has %d", n, len(rk[0]))
		}
		if _, err := model.AlltoallvTransfers(o.Alltoallv); err != nil {
			return fmt.Errorf("modelcheck: %w", err)
		}
	}
	if !finiteNonNeg(o.BetaNIC) || !finiteNonNeg(o.BetaBackbone) {
		return fmt.Errorf("modelcheck: inverse bandwidths %g, %g: want finite and >= 0", o.BetaNIC, o.BetaBackbone)
	}
	return nil
}

func finiteNonNeg(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }

// settingNodes takes |N|/2 nodes from each of the first two racks (the
// seed's "same number of nodes in both racks"; an odd |N| gives the first
// rack one more), or |N| nodes of a world with one rack.
func settingNodes(rk [][]int, n int) ([]int, error) {
	if len(rk) == 1 {
		if len(rk[0]) < n {
			return nil, fmt.Errorf("want %d nodes, the world has %d", n, len(rk[0]))
		}
		return rk[0][:n], nil
	}
	a, b := (n+1)/2, n/2
	if len(rk[0]) < a || len(rk[1]) < b {
		return nil, fmt.Errorf("want %d and %d nodes in the first two racks, they have %d and %d", a, b, len(rk[0]), len(rk[1]))
	}
	return append(slices.Clone(rk[0][:a]), rk[1][:b]...), nil
}

// Run performs the check; every rank of c calls it with the same options.
// Rank 0 returns the report, the others nil.
func Run(ctx context.Context, c comm.Comm, o Options) (*Report, error) {
	o.Pattern = o.Pattern.WithDefaults()
	if err := o.Validate(c.Size()); err != nil {
		return nil, err
	}
	rk := racks(o.NodeOf, o.RackOf)
	// Every rank draws the same patterns, so they agree on what to run.
	type drawn struct {
		setting int
		links   []dataset.Link
	}
	var plan []drawn
	for si, s := range o.Settings {
		nodes, _ := settingNodes(rk, s.Nodes)
		total := 0
		for i := 0; total < o.Links; i++ {
			if i > 100*o.Links {
				return nil, fmt.Errorf("modelcheck: setting %d: too few links drawn (p = %g)", si, o.P)
			}
			l, err := probe.RandomPattern(dataset.PatternGenerator{Nodes: nodes, D: s.D, P: o.P, Seed: o.Seed + 1000003*uint64(si) + uint64(i)})
			if err != nil {
				return nil, err
			}
			if l = dedupe(l); len(l) == 0 {
				continue
			}
			plan = append(plan, drawn{si, l})
			total += len(l)
		}
	}
	rep := &Report{Bytes: o.Pattern.Bytes}
	cal, err := calibrate(ctx, c, o, rk)
	if err != nil {
		return nil, err
	}
	rep.Calibration = cal
	asym := &model.Contention{NodeOf: o.NodeOf, RackOf: o.RackOf, BetaNIC: cal.BetaNICSPerByte, BetaBackbone: cal.BetaBackboneSPerByte}
	fair := *asym
	fair.FairnessOnly = true
	steps := make([]int, len(o.Settings))
	patterns := make([]int, len(o.Settings))
	for pi, d := range plan {
		res, err := probe.RunPattern(ctx, c, d.links, o.Pattern)
		if err != nil {
			return nil, fmt.Errorf("modelcheck: setting %d pattern %d: %w", d.setting, pi, err)
		}
		if c.Rank() != 0 {
			continue
		}
		links, st, err := compare(d.links, res, o.Pattern.Bytes, asym, &fair)
		if err != nil {
			return nil, fmt.Errorf("modelcheck: setting %d pattern %d: %w", d.setting, pi, err)
		}
		for i := range links {
			links[i].Setting, links[i].Pattern = d.setting, pi
		}
		rep.Links = append(rep.Links, links...)
		steps[d.setting] += st
		patterns[d.setting]++
		if o.Progress != nil {
			o.Progress(pi+1, len(plan))
		}
	}
	if len(o.Alltoallv) > 0 {
		a, err := alltoallv(ctx, c, o, rk[0][:len(o.Alltoallv)], asym, &fair)
		if err != nil {
			return nil, err
		}
		rep.Alltoallv = a
	}
	if c.Rank() != 0 {
		return nil, nil
	}
	totalSteps, totalPatterns := 0, 0
	for si, s := range o.Settings {
		var ls []Link
		for _, l := range rep.Links {
			if l.Setting == si {
				ls = append(ls, l)
			}
		}
		row := Summarize(ls)
		row.Setting, row.Patterns = s, patterns[si]
		if patterns[si] > 0 {
			row.Steps = float64(steps[si]) / float64(patterns[si])
		}
		rep.Rows = append(rep.Rows, row)
		totalSteps += steps[si]
		totalPatterns += patterns[si]
	}
	rep.Total = Summarize(rep.Links)
	rep.Total.Patterns = totalPatterns
	if totalPatterns > 0 {
		rep.Total.Steps = float64(totalSteps) / float64(totalPatterns)
	}
	return rep, nil
}

// dedupe keeps the first of links drawn twice. The seed runs each link
// between its own pair of processes; with one rank per node, the two
// messages of a link drawn twice would share one connection and queue
// behind each other, which neither model describes.
func dedupe(ls []dataset.Link) []dataset.Link {
	seen := map[dataset.Link]bool{}
	out := ls[:0:0]
	for _, l := range ls {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// compare predicts one measured pattern with both models.
func compare(links []dataset.Link, res *dataset.PatternResult, bytes int, asym, fair *model.Contention) ([]Link, int, error) {
	flows := make([]model.Flow, len(links))
	for i, l := range links {
		b := l.Bytes
		if b <= 0 {
			b = bytes
		}
		flows[i] = model.Flow{Src: l.Src, Dst: l.Dst, Bytes: float64(b)}
	}
	ta, steps, err := asym.Times(flows)
	if err != nil {
		return nil, 0, err
	}
	tf, _, err := fair.Times(flows)
	if err != nil {
		return nil, 0, err
	}
	bidir := Bidirectional(flows, asym.NodeOf, asym.RackOf)
	out := make([]Link, len(links))
	for i, l := range links {
		m := res.Times[i].Mean
		if !(m > 0) {
			return nil, 0, fmt.Errorf("link %d->%d: no measured time", l.Src, l.Dst)
		}
		out[i] = Link{Src: l.Src, Dst: l.Dst, Bytes: flows[i].Bytes, MeasS: m, AsymS: ta[i], FairS: tf[i],
			EpsAsym: (ta[i] - m) / m, EpsFair: (tf[i] - m) / m, Bidirectional: bidir}
	}
	return out, steps, nil
}

// Bidirectional tells whether some NIC or rack backbone carries flows in
// both directions: Table II's "patterns with asymmetric communication",
// where the two models differ.
func Bidirectional(flows []model.Flow, nodeOf, rackOf []int) bool {
	nodeIn, nodeOut := map[int]bool{}, map[int]bool{}
	rackIn, rackOut := map[int]bool{}, map[int]bool{}
	for _, f := range flows {
		if ns, nd := nodeOf[f.Src], nodeOf[f.Dst]; ns != nd {
			nodeOut[ns], nodeIn[nd] = true, true
		}
		if rs, rd := rackOf[f.Src], rackOf[f.Dst]; rs != rd {
			rackOut[rs], rackIn[rd] = true, true
		}
	}
	for n := range nodeIn {
		if nodeOut[n] {
			return true
		}
	}
	for r := range rackIn {
		if rackOut[r] {
			return true
		}
	}
	return false
}

// Summarize computes a Table II row's error columns over links.
func Summarize(ls []Link) Row {
	row := Row{Links: len(ls)}
	if len(ls) == 0 {
		return row
	}
	inA, inF := 0, 0
	for _, l := range ls {
		a, f := math.Abs(l.EpsAsym), math.Abs(l.EpsFair)
		if a <= 0.1 {
			inA++
		}
		if f <= 0.1 {
			inF++
		}
		row.MeanAbsAsym += a
		row.MeanAbsFair += f
		if l.Bidirectional {
			row.BidirLinks++
			row.MeanAbsAsymBidir += a
			row.MeanAbsFairBidir += f
		}
	}
	n := float64(len(ls))
	row.Within10Asym, row.Within10Fair = float64(inA)/n, float64(inF)/n
	row.MeanAbsAsym /= n
	row.MeanAbsFair /= n
	if row.BidirLinks > 0 {
		row.MeanAbsAsymBidir /= float64(row.BidirLinks)
		row.MeanAbsFairBidir /= float64(row.BidirLinks)
	}
	return row
}

// calibrate measures the NIC and backbone inverse bandwidths as seed 001
// Sect. 5.1 does, unless given: experiment A times one link between two
// nodes of one rack; experiment B times one link from each node of the
// first rack to a distinct node of the second at once. When B's flows run
// below 90% of a NIC's rate they filled the backbone, whose inverse
// bandwidth is then T/(k m); otherwise the backbone is only known to carry
// k NICs (beta_N / k, flagged "at least").
func calibrate(ctx context.Context, c comm.Comm, o Options, rk [][]int) (Calibration, error) {
	cal := Calibration{BetaNICSPerByte: o.BetaNIC, BetaBackboneSPerByte: o.BetaBackbone}
	m := float64(o.Pattern.Bytes)
	if cal.BetaNICSPerByte == 0 {
		a, b := -1, -1
		switch {
		case len(rk[0]) >= 2:
			a, b = rk[0][0], rk[0][1]
		case len(rk) >= 2:
			a, b = rk[0][0], rk[1][0]
		default:
			return cal, fmt.Errorf("modelcheck: one node: no link to calibrate a NIC on")
		}
		res, err := probe.RunPattern(ctx, c, []dataset.Link{{Src: a, Dst: b}}, o.Pattern)
		if err != nil {
			return cal, fmt.Errorf("modelcheck: experiment A: %w", err)
		}
		if c.Rank() == 0 {
			cal.BetaNICSPerByte = res.Times[0].Mean / m
		}
		cal.Measured = true
	}
	if cal.BetaBackboneSPerByte == 0 {
		if len(rk) < 2 {
			cal.BetaBackboneSPerByte = cal.BetaNICSPerByte // no backbone is crossed
		} else {
			k := min(len(rk[0]), len(rk[1]))
			var links []dataset.Link
			for i := range k {
				links = append(links, dataset.Link{Src: rk[0][i], Dst: rk[1][i]})
			}
			res, err := probe.RunPattern(ctx, c, links, o.Pattern)
			if err != nil {
				return cal, fmt.Errorf("modelcheck: experiment B: %w", err)
			}
			cal.Measured, cal.BackboneFlows = true, k
			if c.Rank() == 0 {
				t := 0.0
				for _, s := range res.Times {
					t += s.Mean
				}
				t /= float64(k)
				if t*0.9 > cal.BetaNICSPerByte*m {
					cal.BetaBackboneSPerByte = t / (float64(k) * m)
				} else {
					cal.BetaBackboneSPerByte = cal.BetaNICSPerByte / float64(k)
					cal.BackboneAtLeast = true
				}
			}
		}
	}
	return cal, nil
}

// alltoallv measures the alltoallv as one pattern with per-link sizes and
// predicts it with both models.
func alltoallv(ctx context.Context, c comm.Comm, o Options, ranks []int, asym, fair *model.Contention) (*Alltoallv, error) {
	var links []dataset.Link
	for i, row := range o.Alltoallv {
		for j, b := range row {
			if i != j && b > 0 {
				links = append(links, dataset.Link{Src: ranks[i], Dst: ranks[j], Bytes: int(math.Round(b))})
			}
		}
	}
	if len(links) == 0 {
		return nil, fmt.Errorf("modelcheck: the alltoallv moves no bytes")
	}
	res, err := probe.RunPattern(ctx, c, links, o.Pattern)
	if err != nil {
		return nil, fmt.Errorf("modelcheck: alltoallv: %w", err)
	}
	if c.Rank() != 0 {
		return nil, nil
	}
	ls, _, err := compare(links, res, o.Pattern.Bytes, asym, fair)
	if err != nil {
		return nil, fmt.Errorf("modelcheck: alltoallv: %w", err)
	}
	a := &Alltoallv{Ranks: ranks, Links: ls}
	for _, l := range ls {
		a.MeasS = math.Max(a.MeasS, l.MeasS)
		a.AsymS = math.Max(a.AsymS, l.AsymS)
		a.FairS = math.Max(a.FairS, l.FairS)
	}
	a.EpsAsym = (a.AsymS - a.MeasS) / a.MeasS
	a.EpsFair = (a.FairS - a.MeasS) / a.MeasS
	return a, nil
}

// ExampleAlltoallv is an irregular alltoallv over four nodes of one rack in
// the spirit of seed 001 Fig. 8 (whose weights the text does not give),
// bytes in MB (10^6): node 0 receives 10 MB from each of the three others
// while it sends 30 MB to node 1, the case where the asymmetric property
// slows the outgoing transfer to the incoming ones' share and the fairness
// model does not.
func ExampleAlltoallv() [][]float64 {
	mb := [][]float64{
		{0, 30, 0, 0},
		{10, 0, 10, 0},
		{10, 0, 0, 20},
		{10, 10, 0, 0},
	}
	for _, row := range mb {
		for j := range row {
			row[j] *= 1e6
		}
	}
	return mb
}
