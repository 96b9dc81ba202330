package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"netaware/internal/atomicfile"
)

// Version is the model.json format version this package writes.
const Version = 1

// File is one model.json document: Hockney and PLogP parameters per pair of
// ranks, per pair of groups (seed 004 Sect. 5.2: measured once per subnet
// and once per subnet pair), and a default, in that order of precedence.
// Units are in field names (_s seconds, _bytes bytes, _s_per_byte).
//
//	{"version": 1, "size": 4, "groups": [[0,1],[2,3]],
//	 "hockney": {"default": {"alpha_s": 5e-05, "beta_s_per_byte": 8e-09},
//	             "pairs": [{"a": 0, "b": 1, "alpha_s": 1e-06, "beta_s_per_byte": 1e-10}],
//	             "group_pairs": [{"a": 0, "b": 1, "alpha_s": 1e-04, "beta_s_per_byte": 8e-08}]},
//	 "plogp": {"pairs": [{"a": 0, "b": 1, "L_s": 1e-06,
//	           "points": [{"bytes": 0, "os_s": 1e-07, "or_s": 1e-07, "g_s": 2e-07}]}]}}
//
// Entries are directional (a sends, b receives); a lookup of i->j falls
// back to j->i when only the reverse was measured.
type File struct {
	Version int    `json:"version"`
	Size    int    `json:"size"`
	Source  string `json:"source,omitempty"`
	// Groups partitions (some of) the ranks; group_pairs index into it.
	Groups  [][]int         `json:"groups,omitempty"`
	Hockney *HockneySection `json:"hockney,omitempty"`
	PLogP   *PLogPSection   `json:"plogp,omitempty"`
	// Contention holds seed 001's model parameters, when measured.
	Contention *ContentionSection `json:"contention,omitempty"`
}

// HockneySection holds Hockney parameters.
type HockneySection struct {
	Default    *Hockney       `json:"default,omitempty"`
	Pairs      []HockneyEntry `json:"pairs,omitempty"`
	GroupPairs []HockneyEntry `json:"group_pairs,omitempty"`
}

// HockneyEntry is the Hockney model of messages from A to B (ranks, or
// group indices in group_pairs).
type HockneyEntry struct {
	A int `json:"a"`
	B int `json:"b"`
	Hockney
	// Standard errors of the fit, when it came from one (0: unknown).
	AlphaSES float64 `json:"alpha_se_s,omitempty"`
	BetaSES  float64 `json:"beta_se_s_per_byte,omitempty"`
}

// PLogPSection holds PLogP parameters.
type PLogPSection struct {
	Default    *PLogP       `json:"default,omitempty"`
	Pairs      []PLogPEntry `json:"pairs,omitempty"`
	GroupPairs []PLogPEntry `json:"group_pairs,omitempty"`
}

// PLogPEntry is the PLogP model of messages from A to B.
type PLogPEntry struct {
	A int `json:"a"`
	B int `json:"b"`
	PLogP
}

// Check validates the document: version, ranks and groups in range,
// groups disjoint, parameters sane.
func (f *File) Check() error {
	if f.Version != Version {
		return fmt.Errorf("model: version %d not supported (want %d)", f.Version, Version)
	}
	if f.Size < 1 || f.Size > 1<<20 {
		return fmt.Errorf("model: size %d out of range [1, %d]", f.Size, 1<<20)
	}
	inGroup := map[int]int{}
	for g, ranks := range f.Groups {
		for _, r := range ranks {
			if r < 0 || r >= f.Size {
				return fmt.Errorf("model: groups[%d]: rank %d out of range [0,%d)", g, r, f.Size)
			}
			if h, dup := inGroup[r]; dup {
				return fmt.Errorf("model: rank %d in groups %d and %d", r, h, g)
			}
			inGroup[r] = g
		}
	}
	pair := func(where string, i, a, b, n int, what string) error {
		if a < 0 || b < 0 || a >= n || b >= n {
			return fmt.Errorf("model: %s[%d]: %s %d->%d out of range [0,%d)", where, i, what, a, b, n)
		}
		return nil
	}
	if h := f.Hockney; h != nil {
		if h.Default != nil {
			if err := h.Default.check(); err != nil {
				return fmt.Errorf("model: hockney.default: %w", err)
			}
		}
		for i, e := range h.Pairs {
			if err := pair("hockney.pairs", i, e.A, e.B, f.Size, "ranks"); err != nil {
				return err
			}
			if err := e.check(); err != nil {
				return fmt.Errorf("model: hockney.pairs[%d]: %w", i, err)
			}
		}
		for i, e := range h.GroupPairs {
			if err := pair("hockney.group_pairs", i, e.A, e.B, len(f.Groups), "groups"); err != nil {
				return err
			}
			if err := e.check(); err != nil {
				return fmt.Errorf("model: hockney.group_pairs[%d]: %w", i, err)
			}
		}
	}
	if c := f.Contention; c != nil {
		if err := c.check(f.Size); err != nil {
			return err
		}
	}
	if p := f.PLogP; p != nil {
		if p.Default != nil {
			if err := p.Default.Check(); err != nil {
				return fmt.Errorf("model: plogp.default: %w", err)
			}
		}
		for i, e := range p.Pairs {
			if err := pair("plogp.pairs", i, e.A, e.B, f.Size, "ranks"); err != nil {
				return err
			}
			if err := e.Check(); err != nil {
				return fmt.Errorf("model: plogp.pairs[%d]: %w", i, err)
			}
		}
		for i, e := range p.GroupPairs {
			if err := pair("plogp.group_pairs", i, e.A, e.B, len(f.Groups), "groups"); err != nil {
				return err
			}
			if err := e.Check(); err != nil {
				return fmt.Errorf("model: plogp.group_pairs[%d]: %w", i, err)
			}
		}
	}
	return nil
}

// groupOf maps every grouped rank to its group index (-1: none).
func (f *File) groupOf() []int {
	g := make([]int, f.Size)
	for i := range g {
		g[i] = -1
	}
	for k, ranks := range f.Groups {
		for _, r := range ranks {
			g[r] = k
		}
	}
	return g
}

// MaxDenseRanks bounds the size of the per-pair tables built from a file
// (n*n entries).
const MaxDenseRanks = 4096

// keyed is one directional entry of a section.
type keyed[T any] struct {
	a, b int
	v    T
}

// resolve fills an n x n table by precedence: default, then group pairs,
// then rank pairs (reverse direction first, so a measured direction wins).
func resolve[T any](f *File, def *T, pairs, groupPairs []keyed[T]) ([]*T, error) {
	n := f.Size
	if n > MaxDenseRanks {
		return nil, fmt.Errorf("model: %d ranks: per-pair tables are limited to %d ranks", n, MaxDenseRanks)
	}
	out := make([]*T, n*n)
	if def != nil {
		for i := range out {
			out[i] = def
		}
	}
	g := f.groupOf()
	members := make([][]int, len(f.Groups))
	for r, k := range g {
		if k >= 0 {
			members[k] = append(members[k], r)
		}
	}
	set := func(a, b int, v *T) {
		if a != b {
			out[a*n+b] = v
		}
	}
	for pass := range 2 {
		for i := range groupPairs {
			e := &groupPairs[i]
			ga, gb := e.a, e.b
			if pass == 0 {
				ga, gb = gb, ga
			}
			for _, a := range members[ga] {
				for _, b := range members[gb] {
					set(a, b, &e.v)
				}
			}
		}
	}
	for pass := range 2 {
		for i := range pairs {
			e := &pairs[i]
			if pass == 0 {
				set(e.b, e.a, &e.v)
			} else {
				set(e.a, e.b, &e.v)
			}
		}
	}
	return out, nil
}

// HeteroHockney builds the per-pair Hockney model. Pairs with no
// parameters at any level make it fail, naming the pair.
func (f *File) HeteroHockney() (*HeteroHockney, error) {
	if f.Hockney == nil {
		return nil, fmt.Errorf("model: no hockney section")
	}
	conv := func(es []HockneyEntry) []keyed[Hockney] {
		out := make([]keyed[Hockney], len(es))
		for i, e := range es {
			out[i].a, out[i].b, out[i].v = e.A, e.B, e.Hockney
		}
		return out
	}
	tab, err := resolve(f, f.Hockney.Default, conv(f.Hockney.Pairs), conv(f.Hockney.GroupPairs))
	if err != nil {
		return nil, err
	}
	h := &HeteroHockney{N: f.Size, P: make([]Hockney, len(tab))}
	for k, v := range tab {
		i, j := k/f.Size, k%f.Size
		if i == j {
			continue
		}
		if v == nil {
			return nil, fmt.Errorf("model: hockney: no parameters for pair %d->%d (add a default, a group pair or the pair)", i, j)
		}
		h.P[k] = *v
	}
	return h, nil
}

// HeteroPLogP builds the per-pair PLogP model.
func (f *File) HeteroPLogP() (*HeteroPLogP, error) {
	if f.PLogP == nil {
		return nil, fmt.Errorf("model: no plogp section")
	}
	conv := func(es []PLogPEntry) []keyed[PLogP] {
		out := make([]keyed[PLogP], len(es))
		for i, e := range es {
			out[i].a, out[i].b, out[i].v = e.A, e.B, e.PLogP
		}
		return out
	}
	tab, err := resolve(f, f.PLogP.Default, conv(f.PLogP.Pairs), conv(f.PLogP.GroupPairs))
	if err != nil {
		return nil, err
	}
	h := &HeteroPLogP{N: f.Size, P: tab}
	if err := h.Complete(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return h, nil
}

// Parse decodes and checks a model.json document; unknown fields are
// errors, so a misspelt unit suffix is caught.
func Parse(data []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if err := f.Check(); err != nil {
		return nil, err
	}
	return &f, nil
}

// ReadFile reads and checks a model.json file.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Marshal encodes the document as indented JSON (version set).
func (f *File) Marshal() ([]byte, error) {
	f.Version = Version
	marshal := func(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }
	if f.entries() > compactEntries {
		// Indenting copies the document twice more: 5 GB for the 500,000
		// group pairs of 1,000 groups.
		marshal = json.Marshal
	}
	b, err := marshal(f)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// compactEntries is the number of entries above which Marshal writes
// compact JSON.
const compactEntries = 10000

// entries counts the pair and group pair entries.
func (f *File) entries() int {
	n := 0
	if f.Hockney != nil {
		n += len(f.Hockney.Pairs) + len(f.Hockney.GroupPairs)
	}
	if f.PLogP != nil {
		n += len(f.PLogP.Pairs) + len(f.PLogP.GroupPairs)
	}
	return n
}

// WriteFile checks and writes the document atomically (temporary file and
// rename: a reader never sees half a model).
func (f *File) WriteFile(path string) error {
	b, err := f.Marshal()
	if err != nil {
		return fmt.Errorf("model %s: %w", path, err)
	}
	if err := f.Check(); err != nil {
		return fmt.Errorf("model %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, b)
}
