package model

import (
	"fmt"
	"math"
	"slices"

	"netaware/dataset"
	"netaware/probe"
)

// FromDataset builds a model from a probe dataset: one Hockney entry per
// pair of its Hockney section and one PLogP entry per pair of its PLogP
// section (o_s and o_r are the mean of the repetitions, g as measured).
//
// With groups (e.g. a topology level), the pairs are instead averaged per
// ordered pair of groups into group_pairs, which is how seed 004 Sect. 5.2
// keeps C(C+1)/2 measurements instead of n(n-1): a dataset measured in
// "representative" mode fills exactly those. When that mode measured one
// pair per two sibling groups of coarser levels (its schedule's Levels),
// every group pair without a measurement of its own takes the entry of
// the measured pair that stands for it (probe.Representatives), so that
// the model still has every group pair.
func FromDataset(d *dataset.Dataset, groups [][]int) (*File, error) {
	if d == nil || d.World.Size < 1 {
		return nil, fmt.Errorf("model from dataset: empty dataset")
	}
	if d.Hockney == nil && d.PLogP == nil {
		return nil, fmt.Errorf("model from dataset: no hockney or plogp section (run 'netaware probe hockney' or 'probe plogp')")
	}
	f := &File{Version: Version, Size: d.World.Size, Source: "dataset:" + d.World.Kind}
	if d.World.Platform != "" {
		f.Source += ":" + d.World.Platform
	}
	if groups != nil {
		f.Groups = groups
		if err := f.Check(); err != nil {
			return nil, err
		}
	}
	if d.Hockney != nil {
		var es []HockneyEntry
		for _, p := range d.Hockney.Pairs {
			es = append(es, HockneyEntry{A: p.A, B: p.B, Hockney: Hockney{AlphaS: max(p.Result.AlphaS, 0), BetaSPerByte: max(p.Result.BetaSPerByte, 0)}})
		}
		f.Hockney = &HockneySection{}
		if groups == nil {
			f.Hockney.Pairs = es
		} else {
			var err error
			avg := averageHockney(f, es)
			if f.Hockney.GroupPairs, err = standIns(avg, d.Hockney.Schedule, groups, func(e HockneyEntry, a, b int) HockneyEntry {
				e.A, e.B = a, b
				return e
			}); err != nil {
				return nil, err
			}
		}
	}
	if d.PLogP != nil {
		var es []PLogPEntry
		for _, p := range d.PLogP.Pairs {
			pl := PLogP{LS: max(p.Result.LS, 0)}
			for _, s := range p.Result.Sizes {
				pl.Points = append(pl.Points, PLogPPoint{Bytes: s.Bytes, OsS: max(s.Os.Mean, 0), OrS: max(s.Or.Mean, 0), GS: max(s.GS, 0)})
			}
			if err := pl.Check(); err != nil {
				return nil, fmt.Errorf("model from dataset: plogp pair %d->%d: %w", p.A, p.B, err)
			}
			es = append(es, PLogPEntry{A: p.A, B: p.B, PLogP: pl})
		}
		f.PLogP = &PLogPSection{}
		if groups == nil {
			f.PLogP.Pairs = es
		} else {
			avg, err := averagePLogP(f, es)
			if err != nil {
				return nil, err
			}
			if f.PLogP.GroupPairs, err = standIns(avg, d.PLogP.Schedule, groups, func(e PLogPEntry, a, b int) PLogPEntry {
				e.A, e.B = a, b
				return e
			}); err != nil {
				return nil, err
			}
		}
	}
	if err := f.Check(); err != nil {
		return nil, err
	}
	return f, nil
}

// groupKey returns the ordered group pair of a rank pair, ok false when a
// rank has no group.
func groupKey(g []int, a, b int) ([2]int, bool) {
	if a < 0 || b < 0 || a >= len(g) || b >= len(g) || g[a] < 0 || g[b] < 0 {
		return [2]int{}, false
	}
	return [2]int{g[a], g[b]}, true
}

func averageHockney(f *File, es []HockneyEntry) []HockneyEntry {
	g := f.groupOf()
	sum := map[[2]int]*[3]float64{}
	var keys [][2]int
	for _, e := range es {
		k, ok := groupKey(g, e.A, e.B)
		if !ok {
			continue
		}
		s := sum[k]
		if s == nil {
			s = &[3]float64{}
			sum[k] = s
			keys = append(keys, k)
		}
		s[0] += e.AlphaS
		s[1] += e.BetaSPerByte
		s[2]++
	}
	out := make([]HockneyEntry, 0, len(keys))
	for _, k := range keys {
		s := sum[k]
		out = append(out, HockneyEntry{A: k[0], B: k[1], Hockney: Hockney{AlphaS: s[0] / s[2], BetaSPerByte: s[1] / s[2]}})
	}
	return out
}

// averagePLogP averages L and every point over the pairs of each ordered
// group pair, on the sizes every one of those pairs measured.
func averagePLogP(f *File, es []PLogPEntry) ([]PLogPEntry, error) {
	g := f.groupOf()
	by := map[[2]int][]PLogP{}
	var keys [][2]int
	for _, e := range es {
		k, ok := groupKey(g, e.A, e.B)
		if !ok {
			continue
		}
		if by[k] == nil {
			keys = append(keys, k)
		}
		by[k] = append(by[k], e.PLogP)
	}
	out := make([]PLogPEntry, 0, len(keys))
	for _, k := range keys {
		ms := by[k]
		avg := PLogP{}
		for _, q := range ms[0].Points {
			pt := PLogPPoint{Bytes: q.Bytes}
			all := true
			for _, m := range ms {
				// Interpolating is exact at measured sizes and fills a
				// midpoint that only some pairs measured.
				if q.Bytes > m.Points[len(m.Points)-1].Bytes {
					all = false
					break
				}
				pt.OsS += m.Os(q.Bytes)
				pt.OrS += m.Or(q.Bytes)
				pt.GS += m.G(q.Bytes)
			}
			if !all {
				continue
			}
			n := float64(len(ms))
			pt.OsS, pt.OrS, pt.GS = pt.OsS/n, pt.OrS/n, pt.GS/n
			avg.Points = append(avg.Points, pt)
		}
		for _, m := range ms {
			avg.LS += m.LS
		}
		avg.LS /= float64(len(ms))
		if math.IsNaN(avg.LS) || len(avg.Points) == 0 {
			return nil, fmt.Errorf("model from dataset: plogp group pair %d->%d: no common sizes", k[0], k[1])
		}
		out = append(out, PLogPEntry{A: k[0], B: k[1], PLogP: avg})
	}
	return out, nil
}

// groupPair is an entry of group_pairs.
type groupPair interface{ groups() (int, int) }

func (e HockneyEntry) groups() (int, int) { return e.A, e.B }
func (e PLogPEntry) groups() (int, int)   { return e.A, e.B }

// standIns adds, when spec is a representative schedule over groups with
// coarser levels, an entry for every ordered group pair that has none in
// either direction: a copy of the entry of the pair standing for it,
// readdressed by at.
func standIns[E groupPair](es []E, spec dataset.ScheduleSpec, groups [][]int, at func(E, int, int) E) ([]E, error) {
	if spec.Mode != "representative" || len(spec.Levels) == 0 || !slices.EqualFunc(spec.Groups, groups, slices.Equal[[]int]) {
		return es, nil
	}
	rep, err := probe.Representatives(groups, spec.Levels)
	if err != nil {
		return nil, fmt.Errorf("model from dataset: %w", err)
	}
	c := len(groups)
	index := make(map[[2]int]int, len(es))
	for i, e := range es {
		a, b := e.groups()
		index[[2]int{a, b}] = i
	}
	has := func(a, b int) bool {
		_, ok := index[[2]int{a, b}]
		return ok
	}
	out := es
	for a := 0; a < c; a++ {
		for b := a + 1; b < c; b++ {
			if has(a, b) || has(b, a) {
				continue
			}
			ra, rb := rep(a, b)
			if i, ok := index[[2]int{ra, rb}]; ok {
				out = append(out, at(es[i], a, b))
			} else if i, ok := index[[2]int{rb, ra}]; ok {
				out = append(out, at(es[i], b, a))
			}
		}
	}
	return out, nil
}
