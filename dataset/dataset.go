// Package dataset is the dataset.json format: what a measurement campaign
// measured, on which world, with which parameters, one section per probe
// (RTT, PLogP, Hockney, bandwidth, patterns). It is data only — reading,
// writing, checking and turning sections into matrices — so that the
// model, the report and the CLI read a dataset without importing the
// measurement engine (package probe), which fills it.
package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"

	"netaware/comm"
	"netaware/internal/atomicfile"
)

// Version is the dataset.json format version this package writes.
const Version = 1

// Dataset is one dataset.json document: what was measured, on which world,
// with which parameters. Units are in field names (_s seconds, _Bps bytes
// per second, _bytes bytes). Every section is optional; a campaign fills
// one section and keeps the others, so one file can collect RTT, PLogP,
// Hockney, bandwidth and pattern measurements of the same world.
type Dataset struct {
	Version int   `json:"version"`
	World   World `json:"world"`
	// Ranks is every rank's identity, indexed by rank.
	Ranks []comm.Identity `json:"ranks,omitempty"`
	// ClockOverheadS is every rank's clock-read cost (seed 003 Fig. 3.7),
	// already subtracted from the measurements; indexed by rank.
	ClockOverheadS []float64 `json:"clock_overhead_s,omitempty"`

	RTT       *RTTSection       `json:"rtt,omitempty"`
	PLogP     *PLogPSection     `json:"plogp,omitempty"`
	Hockney   *HockneySection   `json:"hockney,omitempty"`
	Bandwidth *BandwidthSection `json:"bandwidth,omitempty"`
	Patterns  *PatternSection   `json:"patterns,omitempty"`
}

// World describes where the measurements were taken.
type World struct {
	Kind     string `json:"kind"` // "sim", "tcp" or "local"
	Platform string `json:"platform,omitempty"`
	Size     int    `json:"size"`
	// NoiseSeed and Noise describe the simulator's noise (sim only).
	Noise     bool  `json:"noise,omitempty"`
	NoiseSeed int64 `json:"noise_seed,omitempty"`
}

// Section holds one probe's campaign: its parameters, its schedule and a
// result per measured pair. P is the parameter type, R the result type.
type Section[P, R any] struct {
	Params   P            `json:"params"`
	Schedule ScheduleSpec `json:"schedule"`
	// PairsTotal is the number of pairs the schedule measures; Complete
	// is set when all of them are in Pairs.
	PairsTotal int  `json:"pairs_total"`
	Complete   bool `json:"complete"`
	// ClockS is the campaign's duration on rank 0's clock (virtual seconds
	// in the simulator), summed over resumed runs.
	ClockS float64 `json:"clock_s"`
	// Runs counts the runs that contributed (1 + resumes).
	Runs  int             `json:"runs"`
	Pairs []PairResult[R] `json:"pairs"`
}

// PairResult is one pair's result: A initiated (sender), B responded.
type PairResult[R any] struct {
	A      int `json:"a"`
	B      int `json:"b"`
	Result R   `json:"result"`
	// Warnings name the result's implausible values (Dataset.Check).
	Warnings []string `json:"warnings,omitempty"`
}

// Section types of the dataset.
type (
	RTTSection       = Section[RTTParams, RTTResult]
	PLogPSection     = Section[PLogPParams, PLogPResult]
	HockneySection   = Section[HockneyParams, HockneyResult]
	BandwidthSection = Section[BandwidthParams, BandwidthResult]
)

// Lookup returns the result of pair {a, b} in either orientation.
func (s *Section[P, R]) Lookup(a, b int) (*R, bool) {
	if s == nil {
		return nil, false
	}
	for i := range s.Pairs {
		p := &s.Pairs[i]
		if (p.A == a && p.B == b) || (p.A == b && p.B == a) {
			return &p.Result, true
		}
	}
	return nil, false
}

// Matrix returns an n x n symmetric matrix of f(result) per pair, NaN where
// no pair was measured and 0 on the diagonal (a pair measured twice keeps
// its last result). It is the one conversion of a section to a matrix:
// one pass over the pairs, where a lookup per pair costs a minute at 512
// ranks.
func (s *Section[P, R]) Matrix(n int, f func(*R) float64) [][]float64 {
	return s.matrix(n, f, false)
}

// matrix is Matrix; with keepMin a pair measured more than once keeps its
// smallest value.
func (s *Section[P, R]) matrix(n int, f func(*R) float64, keepMin bool) [][]float64 {
	m := make([][]float64, n)
	cells := make([]float64, n*n) // one block: n rows cost one allocation
	for i := range m {
		m[i] = cells[i*n : (i+1)*n : (i+1)*n]
		for j := range m[i] {
			if i != j {
				m[i][j] = math.NaN()
			}
		}
	}
	if s == nil {
		return m
	}
	for i := range s.Pairs {
		p := &s.Pairs[i]
		if p.A < 0 || p.B < 0 || p.A >= n || p.B >= n || p.A == p.B {
			continue
		}
		v := f(&p.Result)
		if keepMin && (math.IsNaN(v) || v >= m[p.A][p.B]) {
			continue // an unset cell is NaN: v >= NaN is false, v goes in
		}
		m[p.A][p.B], m[p.B][p.A] = v, v
	}
	return m
}

// RTTMin is the minimum RTT matrix (seconds) of the RTT section (cluster
// distances): a pair measured more than once (a resumed campaign, both
// directions) keeps its smallest minimum.
func (d *Dataset) RTTMin() [][]float64 {
	return d.RTT.matrix(d.World.Size, func(r *RTTResult) float64 { return r.MinS }, true)
}

// BandwidthMatrix is the bulk bandwidth matrix (bytes/s).
func (d *Dataset) BandwidthMatrix() [][]float64 {
	return d.Bandwidth.Matrix(d.World.Size, func(r *BandwidthResult) float64 { return r.BandwidthBps })
}

// PLogPMatrix is the matrix of one PLogP quantity at m bytes, e.g.
// func(s PLogPSize) float64 { return s.GS } for g(m); NaN where m was not
// measured.
func (d *Dataset) PLogPMatrix(m int, f func(PLogPSize) float64) [][]float64 {
	return d.PLogP.Matrix(d.World.Size, func(r *PLogPResult) float64 {
		s, ok := r.At(m)
		if !ok {
			return math.NaN()
		}
		return f(s)
	})
}

// ScheduleSpec is everything a schedule is built from, so that a resumed
// campaign rebuilds exactly the same plan.
type ScheduleSpec struct {
	// Mode: "serial", "hierarchical", "fast" or "representative".
	Mode     string   `json:"mode"`
	Join     JoinMode `json:"join,omitempty"`
	Ranks    []int    `json:"ranks"`
	Tree     *Group   `json:"tree,omitempty"`
	Fraction float64  `json:"fraction,omitempty"`
	Seed     uint64   `json:"seed,omitempty"`
	// Groups are the groups of the representative mode.
	Groups [][]int `json:"groups,omitempty"`
	// Levels are coarser partitions nested above Groups, finest first,
	// that bound the representative mode to one pair per two sibling
	// groups of a level (RepresentativePlanLevels).
	Levels [][][]int `json:"levels,omitempty"`
	// Parallel runs representative measurements of disjoint pairs together.
	Parallel bool `json:"parallel,omitempty"`
}

// Save writes d to path atomically (atomicfile), so a reader (or a crash,
// or an interrupt between checkpoints) never sees a half-written dataset.
func (d *Dataset) Save(path string) error {
	d.Version = Version
	b, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		return fmt.Errorf("dataset %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, append(b, '\n'))
}

// Load reads and checks a dataset file.
func Load(path string) (*Dataset, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	return d, nil
}

// Parse decodes and checks a dataset: known version, ranks and pairs within
// the world's size.
func Parse(b []byte) (*Dataset, error) {
	var d Dataset
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	if d.Version != Version {
		return nil, fmt.Errorf("version %d: this netaware reads version %d", d.Version, Version)
	}
	if d.World.Size < 0 || d.World.Size > 1<<24 {
		return nil, fmt.Errorf("world.size %d out of range", d.World.Size)
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	return &d, nil
}

var errPairRange = errors.New("pair rank out of range")

func checkPairs[P, R any](name string, s *Section[P, R], n int) error {
	if s == nil {
		return nil
	}
	for i, p := range s.Pairs {
		if p.A < 0 || p.B < 0 || p.A >= n || p.B >= n || p.A == p.B {
			return fmt.Errorf("%s.pairs[%d]: %d-%d: %w (size %d)", name, i, p.A, p.B, errPairRange, n)
		}
	}
	return nil
}

func (d *Dataset) check() error {
	n := d.World.Size
	if len(d.Ranks) > n {
		return fmt.Errorf("ranks: %d identities for %d ranks", len(d.Ranks), n)
	}
	for i, id := range d.Ranks {
		if id.Rank != i {
			return fmt.Errorf("ranks[%d]: rank %d", i, id.Rank)
		}
	}
	if err := checkPairs("rtt", d.RTT, n); err != nil {
		return err
	}
	if err := checkPairs("plogp", d.PLogP, n); err != nil {
		return err
	}
	if err := checkPairs("hockney", d.Hockney, n); err != nil {
		return err
	}
	if err := checkPairs("bandwidth", d.Bandwidth, n); err != nil {
		return err
	}
	if d.Patterns != nil {
		for i, p := range d.Patterns.Patterns {
			for j, l := range p.Links {
				if l.Src < 0 || l.Dst < 0 || l.Src >= n || l.Dst >= n || l.Src == l.Dst {
					return fmt.Errorf("patterns[%d].links[%d]: %d->%d out of range (size %d)", i, j, l.Src, l.Dst, n)
				}
			}
		}
	}
	return nil
}
