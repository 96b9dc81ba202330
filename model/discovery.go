package model

import (
	"fmt"
	"math"
	"sort"

	"netaware/dataset"
	"netaware/probe"
	"netaware/topo"
)

// FromDiscovery builds the model.json that 'netaware discover' writes from
// its dataset and topology: the PLogP parameters per group pair of the
// PLogP schedule (FromDataset); Hockney beside them, fitted by least
// squares to the PLogP one-way times L + g(m) of the measured sizes (all
// pairs of a group pair pooled: seed 000 Eq. 2.1 with the standard errors
// of the fit); and the NIC's inverse bandwidth of seed 001's contention
// model with the ranks' bindings to hosts and racks, when the topology's
// tree carries measured bandwidths (not the backbone's: see
// contentionFromTopology).
func FromDiscovery(d *dataset.Dataset, t *topo.Topology) (*File, error) {
	if d == nil || d.PLogP == nil {
		return nil, fmt.Errorf("model from discovery: the dataset has no plogp section (discover --level fast measures none)")
	}
	groups := d.PLogP.Schedule.Groups
	f, err := FromDataset(d, groups)
	if err != nil {
		return nil, err
	}
	if f.Hockney == nil {
		if f.Hockney, err = hockneyFromPLogP(f, d); err != nil {
			return nil, err
		}
	}
	if t != nil {
		if c := contentionFromTopology(t); c != nil && c.check(f.Size) == nil {
			f.Contention = c
		}
	}
	return f, f.Check()
}

// hockneyFromPLogP fits alpha + beta m to L + g(m) over the measured sizes
// of every pair (no groups) or of all pairs of each ordered group pair,
// keeping the group pairs FromDataset kept (stand-ins included).
func hockneyFromPLogP(f *File, d *dataset.Dataset) (*HockneySection, error) {
	type pts struct{ x, y []float64 }
	by := map[[2]int]*pts{}
	var keys [][2]int
	g := f.groupOf()
	for _, p := range d.PLogP.Pairs {
		k := [2]int{p.A, p.B}
		if f.Groups != nil {
			var ok bool
			if k, ok = groupKey(g, p.A, p.B); !ok {
				continue
			}
		}
		q := by[k]
		if q == nil {
			q = &pts{}
			by[k] = q
			keys = append(keys, k)
		}
		l := max(p.Result.LS, 0)
		for _, s := range p.Result.Sizes {
			q.x = append(q.x, float64(s.Bytes))
			q.y = append(q.y, l+max(s.GS, 0))
		}
	}
	fits := map[[2]int]HockneyEntry{}
	for _, k := range keys {
		q := by[k]
		fit, ok := probe.FitLine(q.x, q.y)
		if !ok {
			return nil, fmt.Errorf("model from discovery: hockney %d->%d: the plogp sizes do not fit a line (fewer than two distinct sizes)", k[0], k[1])
		}
		// A negative intercept is noise around a latency too small to
		// resolve at these sizes; Hockney's alpha is a time.
		fits[k] = HockneyEntry{A: k[0], B: k[1], Hockney: Hockney{AlphaS: max(fit.Intercept, 0), BetaSPerByte: max(fit.Slope, 0)}, AlphaSES: fit.InterceptSE, BetaSES: fit.SlopeSE}
	}
	sec := &HockneySection{}
	if f.Groups == nil {
		for _, k := range keys {
			sec.Pairs = append(sec.Pairs, fits[k])
		}
		return sec, nil
	}
	// The group pairs PLogP has, stand-ins included, get the fit of the
	// pair they copy: the same measurement stands for them.
	for _, e := range f.PLogP.GroupPairs {
		k := [2]int{e.A, e.B}
		h, ok := fits[k]
		if !ok {
			h, ok = standInFit(fits, f.PLogP.GroupPairs, e)
		}
		if !ok {
			return nil, fmt.Errorf("model from discovery: hockney: no fit for group pair %d->%d", e.A, e.B)
		}
		h.A, h.B = e.A, e.B
		sec.GroupPairs = append(sec.GroupPairs, h)
	}
	return sec, nil
}

// standInFit finds the fit of the measured group pair whose PLogP entry a
// stand-in copied (standIns copies the entry, so the parameters match).
func standInFit(fits map[[2]int]HockneyEntry, es []PLogPEntry, e PLogPEntry) (HockneyEntry, bool) {
	for _, m := range es {
		k := [2]int{m.A, m.B}
		if h, ok := fits[k]; ok && samePLogP(m.PLogP, e.PLogP) {
			return h, true
		}
		if h, ok := fits[[2]int{m.B, m.A}]; ok && samePLogP(m.PLogP, e.PLogP) {
			return h, true
		}
	}
	return HockneyEntry{}, false
}

func samePLogP(a, b PLogP) bool {
	if a.LS != b.LS || len(a.Points) != len(b.Points) {
		return false
	}
	for i := range a.Points {
		if a.Points[i] != b.Points[i] {
			return false
		}
	}
	return true
}

// contentionFromTopology reads the NIC's bandwidth off the tree's measured
// edges between a host and its switch (their median; a host is a rank, or
// the inner node that joins all ranks of one host and nothing else below
// it); nil without measured bandwidths. The backbone is left out: what one
// pair achieves across it is its NICs' rate, or a per-flow limit such as a
// TCP window over a long round trip (424 Mbit/s on grid5000-4sites' 10
// Gbit/s WAN), never the capacity concurrent flows share, which seed 001's
// experiment B ('netaware predict check') measures.
func contentionFromTopology(t *topo.Topology) *ContentionSection {
	if t.Tree == nil {
		return nil
	}
	nodeOf, rackOf, err := Bindings(t)
	if err != nil {
		return nil
	}
	rankOf := map[string]int{}
	for _, n := range t.Tree.Nodes {
		if n.Rank != nil {
			rankOf[n.ID] = *n.Rank
		}
	}
	hostSize := map[int]int{}
	for _, h := range nodeOf {
		hostSize[h]++
	}
	// An inner node is a host when its rank neighbours are exactly the
	// ranks of one host.
	ranksNext := map[string][]int{}
	for _, e := range t.Tree.Edges {
		if r, ok := rankOf[e.A]; ok {
			ranksNext[e.B] = append(ranksNext[e.B], r)
		}
		if r, ok := rankOf[e.B]; ok {
			ranksNext[e.A] = append(ranksNext[e.A], r)
		}
	}
	isHost := map[string]bool{}
	for id := range rankOf {
		isHost[id] = true
	}
	for id, rs := range ranksNext {
		if _, rank := rankOf[id]; rank || len(rs) == 0 {
			continue
		}
		h := nodeOf[rs[0]]
		same := len(rs) == hostSize[h]
		for _, r := range rs {
			same = same && r >= 0 && r < len(nodeOf) && nodeOf[r] == h
		}
		if same && hostSize[h] > 1 {
			isHost[id] = true
		}
	}
	var nic []float64
	for _, e := range t.Tree.Edges {
		if e.Bandwidth == nil || !(*e.Bandwidth > 0) || math.IsInf(*e.Bandwidth, 0) {
			continue
		}
		_, ra := rankOf[e.A]
		_, rb := rankOf[e.B]
		switch {
		case ra && rb:
		case isHost[e.A] != isHost[e.B]:
			nic = append(nic, *e.Bandwidth)
		}
	}
	if len(nic) == 0 {
		return nil
	}
	sort.Float64s(nic)
	bw := nic[len(nic)/2]
	return &ContentionSection{BetaNICSPerByte: 1 / bw, NodeOf: nodeOf, RackOf: rackOf, Source: "discover: bandwidth map (median of the host edges)"}
}
