package discover

import (
	"fmt"

	"netaware/infer"
	"netaware/infer/live"
	"netaware/topo"
)

// BandwidthClusterRatio is the smallest gap between fast and slow edge
// bandwidths (fast/slow) that makes a "bandwidth-cluster" level of an
// inferred tree (netaware infer --slow-ratio).
const BandwidthClusterRatio = 2.0

// InferredTopology is the topology.json of an RTT tree inference (seed
// 002) among n ranks: the tree (with its edges' bandwidths when m, the
// bandwidth map, is given), the levels cut from its latencies as discover
// --blind cuts them, and, with m, the tree cut at its slow edges (a gap of
// at least slowRatio) as a "bandwidth-cluster" level where it nests.
func InferredTopology(res live.Result, m *infer.BandwidthMap, n int, slowRatio float64) (*topo.Topology, error) {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	levels := []topo.Level{{Name: "all", Groups: [][]int{all}}}
	if n > 1 {
		var err error
		if levels, _, _, err = TreeLevels(res.Tree, n, TreeGap()); err != nil {
			return nil, err
		}
	}
	tree := res.Tree.Topo()
	params := map[string]any{"linkage": "average", "gap_min_jump": TreeGap().MinJump, "close_samples": infer.DefaultCloseSamples, "newcomer_samples": infer.DefaultNewcomerSamples, "confirm": infer.DefaultConfirm, "noise_factor": infer.DefaultNoiseFactor}
	if m != nil {
		tree = m.Topo()
		groups, thr := m.SlowGroups(slowRatio)
		params["bandwidth_measurements"] = m.Measurements
		params["bandwidth_rounds"] = len(m.Rounds)
		if len(groups) > 1 && len(groups) < n {
			params["slow_threshold_Bps"] = thr
			levels = topo.InsertLevel(levels, topo.Level{Name: "bandwidth-cluster", Groups: groups}, n)
		}
	}
	ranks := make([]topo.Rank, n)
	for i := range ranks {
		ranks[i] = topo.Rank{Rank: i}
	}
	t := &topo.Topology{
		Version: topo.Version, Size: n, Ranks: ranks, Levels: levels, Tree: tree,
		Method:       &topo.Method{Name: "rtt-tree", Params: params},
		Measurements: &topo.Measurements{PairsMeasured: res.Pairs, PairsTotal: n * (n - 1) / 2},
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("infer: topology: %w", err)
	}
	return t, nil
}
