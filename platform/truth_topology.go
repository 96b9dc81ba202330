package platform

import "netaware/topo"

// TruthTopology is the platform's ground truth as a topology.json document:
// every rank's host, socket and core as the platform places it, and the
// ground-truth levels (Truth). It is what 'netaware platform truth'
// writes, and what collectives and the tuner use as the topology of a
// simulated world when none was discovered.
func (p *Platform) TruthTopology() *topo.Topology {
	t := &topo.Topology{Version: topo.Version, Size: p.NumRanks(),
		Method: &topo.Method{Name: "platform-ground-truth", Params: map[string]any{"platform": p.Name}}}
	for r := range p.NumRanks() {
		host, socket, core := p.RankIdentity(r)
		t.Ranks = append(t.Ranks, topo.Rank{Rank: r, Host: host, Socket: &socket, Core: &core})
	}
	t.Levels = p.TruthLevels()
	return t
}
