package topo

import (
	"strings"
	"testing"
)

func TestBandwidthTreeValidate(t *testing.T) {
	ok := &BandwidthTree{Level: "bw", Groups: [][]int{{0, 1}, {2}, {3}}, Edges: []BandwidthEdge{{0, 1, 5}, {1, 2, 3}}}
	if err := ok.Validate(4); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*BandwidthTree{
		"cycle":   {Groups: [][]int{{0}, {1}, {2, 3}}, Edges: []BandwidthEdge{{0, 1, 1}, {1, 0, 1}}},
		"range":   {Groups: [][]int{{0, 1}, {2, 3}}, Edges: []BandwidthEdge{{0, 2, 1}}},
		"weight":  {Groups: [][]int{{0, 1}, {2, 3}}, Edges: []BandwidthEdge{{0, 1, -1}}},
		"missing": {Groups: [][]int{{0, 1}, {2}}},
	} {
		if err := b.Validate(4); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	top := &Topology{Version: Version, Size: 2, Ranks: []Rank{{Rank: 0}, {Rank: 1}},
		Levels:        []Level{{Name: "all", Groups: [][]int{{0, 1}}}},
		BandwidthTree: &BandwidthTree{Groups: [][]int{{0}, {1}}, Edges: []BandwidthEdge{{0, 0, 1}}}}
	if err := top.Validate(); err == nil || !strings.Contains(err.Error(), "bandwidth_tree") {
		t.Errorf("topology with a bad bandwidth tree: %v", err)
	}
}
