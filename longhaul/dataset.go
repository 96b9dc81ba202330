package longhaul

import (
	"fmt"

	"netaware/dataset"
	"netaware/topo"
)

// DatasetPaths lists the measured paths between the groups of t's coarsest
// level with two or more groups (MeasuredPaths over ds's minimum RTTs and
// bandwidths). A group is named by its first rank's host, else by its
// number and first rank.
func DatasetPaths(ds *dataset.Dataset, t *topo.Topology) ([]Path, error) {
	if ds.RTT == nil || ds.Bandwidth == nil {
		return nil, fmt.Errorf("advise needs rtt and bandwidth sections (netaware probe rtt, netaware probe bandwidth)")
	}
	if t.Size != ds.World.Size {
		return nil, fmt.Errorf("the topology has %d ranks, the dataset %d", t.Size, ds.World.Size)
	}
	var groups [][]int
	for i := len(t.Levels) - 1; i >= 0; i-- {
		if len(t.Levels[i].Groups) >= 2 {
			groups = t.Levels[i].Groups
			break
		}
	}
	if groups == nil {
		return nil, fmt.Errorf("the topology has no level with two or more groups")
	}
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = fmt.Sprintf("group %d (rank %d..)", i, g[0])
		if g[0] < len(ds.Ranks) && ds.Ranks[g[0]].Host != "" {
			names[i] = ds.Ranks[g[0]].Host + ".."
		}
	}
	return MeasuredPaths(ds.RTTMin(), ds.BandwidthMatrix(), groups, names), nil
}
