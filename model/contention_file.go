package model

import (
	"fmt"
	"math"

	"netaware/topo"
)

// ContentionSection is model.json's parameters of seed 001's contention
// model: the inverse bandwidth of a node's NIC and of the backbone between
// racks, and optionally the bindings of ranks to nodes and racks (else a
// topology gives them, see Bindings).
type ContentionSection struct {
	BetaNICSPerByte float64 `json:"beta_nic_s_per_byte"`
	// BetaBackboneSPerByte is 0 when not measured: one pair cannot fill a
	// backbone faster than its NICs (seed 001's experiment B needs many
	// concurrent flows), so the user or 'predict check' supplies it.
	BetaBackboneSPerByte float64 `json:"beta_backbone_s_per_byte,omitempty"`
	NodeOf               []int   `json:"node_of,omitempty"`
	RackOf               []int   `json:"rack_of,omitempty"`
	// Source says what measured the parameters.
	Source string `json:"source,omitempty"`
}

func (s *ContentionSection) check(size int) error {
	if !(s.BetaNICSPerByte > 0) || math.IsInf(s.BetaNICSPerByte, 0) {
		return fmt.Errorf("model: contention.beta_nic_s_per_byte %g: want finite and > 0", s.BetaNICSPerByte)
	}
	if !finiteNonNeg(s.BetaBackboneSPerByte) {
		return fmt.Errorf("model: contention.beta_backbone_s_per_byte %g: want finite and >= 0", s.BetaBackboneSPerByte)
	}
	for _, b := range []struct {
		name string
		v    []int
	}{{"node_of", s.NodeOf}, {"rack_of", s.RackOf}} {
		if b.v == nil {
			continue
		}
		if len(b.v) != size {
			return fmt.Errorf("model: contention.%s has %d entries, want %d", b.name, len(b.v), size)
		}
		for r, x := range b.v {
			if x < 0 || x >= size {
				return fmt.Errorf("model: contention.%s[%d] = %d out of range [0,%d)", b.name, r, x, size)
			}
		}
	}
	if (s.NodeOf == nil) != (s.RackOf == nil) {
		return fmt.Errorf("model: contention: give both node_of and rack_of, or neither")
	}
	return nil
}

// Bindings maps ranks to nodes and racks from a topology: nodes are the
// groups of its "host" level (every rank its own node without one), racks
// the groups of the finest level above it that has more than one group
// and coarsens the nodes (one rack without one).
func Bindings(t *topo.Topology) (nodeOf, rackOf []int, err error) {
	if t == nil || t.Size < 1 {
		return nil, nil, fmt.Errorf("bindings: empty topology")
	}
	n := t.Size
	nodeOf = make([]int, n)
	for r := range nodeOf {
		nodeOf[r] = r
	}
	start := 0
	for i, l := range t.Levels {
		if l.Name == "host" {
			nodeOf = l.Labels(n)
			start = i + 1
			break
		}
	}
	for r, g := range nodeOf {
		if g < 0 {
			return nil, nil, fmt.Errorf("bindings: rank %d is in no group of level host", r)
		}
	}
	rackOf = make([]int, n)
	for _, l := range t.Levels[start:] {
		if len(l.Groups) < 2 {
			continue
		}
		lab := l.Labels(n)
		ok := true
		for r := range lab {
			if lab[r] < 0 {
				ok = false
			}
			for q := range r {
				if nodeOf[q] == nodeOf[r] && lab[q] != lab[r] {
					ok = false
				}
			}
		}
		if ok && len(l.Groups) < n {
			rackOf = lab
			break
		}
	}
	return nodeOf, rackOf, nil
}

// ContentionModel builds seed 001's model from the file's contention
// section; nodeOf and rackOf (e.g. from Bindings) are used when the section
// has no bindings, backbone when it has no backbone (0: an error naming
// what is missing). Transfers inside a node move at the mean Hockney beta
// of the file's same-node pairs (seed 001 has one process per node). The
// FairnessOnly field is left false.
func (f *File) ContentionModel(nodeOf, rackOf []int, backbone float64) (*Contention, error) {
	s := f.Contention
	if s == nil {
		return nil, fmt.Errorf("model: no contention section (measure it with 'netaware predict check', or give the NIC and backbone bandwidths)")
	}
	c := &Contention{NodeOf: s.NodeOf, RackOf: s.RackOf, BetaNIC: s.BetaNICSPerByte, BetaBackbone: s.BetaBackboneSPerByte}
	if c.NodeOf == nil {
		c.NodeOf, c.RackOf = nodeOf, rackOf
	}
	if c.BetaBackbone == 0 {
		c.BetaBackbone = backbone
	}
	if c.NodeOf == nil || len(c.NodeOf) != f.Size || len(c.RackOf) != f.Size {
		return nil, fmt.Errorf("model: contention: no bindings of the %d ranks to nodes and racks (give a topology)", f.Size)
	}
	if c.BetaBackbone <= 0 {
		return nil, fmt.Errorf("model: contention: the backbone's bandwidth was not measured (give it)")
	}
	// Seed 001 has one process per node; transfers inside a node get the
	// mean Hockney beta of the file's same-node pairs when it has them.
	if f.Hockney != nil {
		if h, err := f.HeteroHockney(); err == nil {
			sum, k := 0.0, 0
			for i := range f.Size {
				for j := range f.Size {
					if i != j && c.NodeOf[i] == c.NodeOf[j] {
						sum += h.At(i, j).BetaSPerByte
						k++
					}
				}
			}
			if k > 0 && sum > 0 {
				c.IntraNodeBeta = sum / float64(k)
			}
		}
	}
	return c, c.check(nil)
}
