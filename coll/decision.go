package coll

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"netaware/internal/atomicfile"
	"netaware/topo"
)

// DecisionVersion is the decision-table format version this package writes.
const DecisionVersion = 1

// Decision is a broadcast decision table: per range of communicator sizes,
// the algorithm for each range of message sizes. The tuner writes it; Auto
// reads it. JSON:
//
//	{"version": 1, "rules": [
//	  {"min_ranks": 2, "max_ranks": 64, "sizes": [
//	    {"below_bytes": 4096, "algorithm": {"name": "magpie", "level": 2}},
//	    {"algorithm": {"name": "pipeline", "seg_bytes": 65536}}]}]}
type Decision struct {
	Version int            `json:"version"`
	Rules   []DecisionRule `json:"rules"`
}

// DecisionRule applies to communicators of MinRanks..MaxRanks ranks
// (MaxRanks 0: no upper bound). Sizes are tried in order; the first whose
// bound exceeds the message size wins.
type DecisionRule struct {
	MinRanks int        `json:"min_ranks"`
	MaxRanks int        `json:"max_ranks,omitempty"`
	Sizes    []SizeRule `json:"sizes"`
}

// SizeRule picks Algorithm for messages shorter than BelowBytes bytes
// (0: any size).
type SizeRule struct {
	BelowBytes int       `json:"below_bytes,omitempty"`
	Algorithm  Algorithm `json:"algorithm"`
}

// Lookup returns the algorithm of the first rule for p ranks whose size
// range holds n bytes.
func (d *Decision) Lookup(p, n int) (Algorithm, bool) {
	if d == nil {
		return Algorithm{}, false
	}
	for _, r := range d.Rules {
		if p < r.MinRanks || (r.MaxRanks > 0 && p > r.MaxRanks) {
			continue
		}
		for _, s := range r.Sizes {
			if s.BelowBytes == 0 || n < s.BelowBytes {
				return s.Algorithm, true
			}
		}
	}
	return Algorithm{}, false
}

// Validate checks the table: known algorithms, sane ranges, increasing
// size bounds, and that every algorithm builds for its smallest
// communicator (topology-aware ones are checked against t when given).
func (d *Decision) Validate(t *topo.Topology) error {
	if d.Version != DecisionVersion {
		return fmt.Errorf("decision: version %d not supported (want %d)", d.Version, DecisionVersion)
	}
	for i, r := range d.Rules {
		if r.MinRanks < 1 || (r.MaxRanks != 0 && r.MaxRanks < r.MinRanks) {
			return fmt.Errorf("decision: rule %d: rank range %d..%d", i, r.MinRanks, r.MaxRanks)
		}
		if len(r.Sizes) == 0 {
			return fmt.Errorf("decision: rule %d: no size ranges", i)
		}
		last := 0
		for j, s := range r.Sizes {
			where := fmt.Sprintf("decision: rule %d size %d", i, j)
			if s.BelowBytes < 0 || (s.BelowBytes != 0 && s.BelowBytes <= last) {
				return fmt.Errorf("%s: below_bytes %d not above the previous bound %d", where, s.BelowBytes, last)
			}
			if s.BelowBytes == 0 && j != len(r.Sizes)-1 {
				return fmt.Errorf("%s: an unbounded range must come last", where)
			}
			last = s.BelowBytes
			a := s.Algorithm
			if a.Name == "auto" {
				return fmt.Errorf("%s: auto cannot appear in a decision table", where)
			}
			if a.Name == "ompi-fixed" {
				continue
			}
			e, ok := registry[a.Name]
			if !ok {
				return fmt.Errorf("%s: unknown algorithm %q", where, a.Name)
			}
			if e.info.UsesBase {
				if _, err := a.base(); err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
			}
			// A topology-aware builder's variant is checked by the build
			// on t below (it cannot build without one).
			if e.info.UsesVariant && !e.info.TopologyAware {
				if _, err := a.BuildEnv(2, 0, Env{Cost: func(i, j, m int) float64 { return 1 }}); err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
			}
			if a.SegSize < 0 || a.K < 0 || a.Level < 0 {
				return fmt.Errorf("%s: negative parameter in %v", where, a)
			}
			if (e.info.TopologyAware && t == nil) || e.info.ModelAware {
				continue
			}
			p := r.MinRanks
			if t != nil && e.info.TopologyAware {
				if (r.MaxRanks != 0 && t.Size > r.MaxRanks) || t.Size < r.MinRanks {
					continue
				}
				p = t.Size
			}
			if _, err := a.Build(p, 0, t); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	return nil
}

// ParseDecision reads a JSON decision table and checks it (topology-aware
// entries are checked only for their parameters' shape).
func ParseDecision(data []byte) (*Decision, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d Decision
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("decision: %w", err)
	}
	if err := d.Validate(nil); err != nil {
		return nil, err
	}
	return &d, nil
}

// ReadDecisionFile reads a decision table from a file.
func ReadDecisionFile(path string) (*Decision, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := ParseDecision(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// Marshal encodes the table as indented JSON.
func (d *Decision) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// WriteFile writes the table atomically.
func (d *Decision) WriteFile(path string) error {
	b, err := d.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b)
}
