package discover

import (
	"context"
	"fmt"
	"slices"

	"netaware/cluster"
	"netaware/comm"
	"netaware/dataset"
	"netaware/probe"
	"netaware/topo"
)

// Methods of discovery.
const (
	// MethodAuto is the RTT tree, plus the swarm's bandwidth levels at
	// the thorough level or where the tree finds no level between the
	// hosts and the whole world (a bandwidth hierarchy latency cannot
	// see, as a trunk of zero latency).
	MethodAuto = "auto"
	// MethodRTTTree is the RTT tree inference with its clustering only.
	MethodRTTTree = "rtt-tree"
	// MethodSwarm is swarm tomography alone (seed 000 Ch. 4-5).
	MethodSwarm = "swarm"
)

// ParseMethod checks a --method value.
func ParseMethod(s string) (string, error) {
	switch s {
	case "", MethodAuto:
		return MethodAuto, nil
	case MethodRTTTree, MethodSwarm:
		return s, nil
	}
	return "", fmt.Errorf("method %q: want auto, rtt-tree or swarm", s)
}

// minSwarmHosts is the fewest hosts the automatic method runs the swarm
// on: below, a bandwidth level would be a group of one or two hosts.
const minSwarmHosts = 4

// DiscoverSwarmParams are the swarm probe's parameters in discover: 4 MiB
// broadcasts, at most 5 iterations (the acceptance of seed 000's
// platforms is reached within 3).
func DiscoverSwarmParams() dataset.SwarmParams {
	p := probe.DefaultSwarmParams()
	p.MaxIterations = 5
	return p
}

// swarmPhase runs the swarm probe among reps (nil: every rank); rank 0
// returns the section, indexed by position in reps.
func swarmPhase(ctx context.Context, c comm.Comm, reps []int, opt Options) (*dataset.SwarmSection, error) {
	sub := c
	if reps != nil {
		if reps[0] != 0 {
			return nil, fmt.Errorf("discover: swarm: rank 0 does not represent its host")
		}
		s, err := c.Sub(reps)
		switch {
		case err == comm.ErrNotMember:
			sub = nil
		case err != nil:
			return nil, err
		default:
			sub = s
		}
	}
	var ds *dataset.Dataset
	if sub != nil && sub.Rank() == 0 {
		ds = &dataset.Dataset{World: dataset.World{Size: sub.Size()}}
	}
	if sub != nil && sub.Size() > 1 {
		p := opt.Swarm
		if p.Bytes == 0 {
			p = DiscoverSwarmParams()
		}
		hooks := probe.RunHooks{Progress: func(done, total int) {
			if opt.Advance != nil {
				opt.Advance(done, total)
			}
		}}
		if err := probe.RunSwarm(ctx, sub, ds, p, hooks); err != nil {
			return nil, fmt.Errorf("discover: swarm: %w", err)
		}
	}
	if err := comm.Barrier(ctx, c); err != nil {
		return nil, err
	}
	if ds == nil {
		return nil, nil
	}
	return ds.Swarm, nil
}

// swarmLevels turns the swarm's hierarchy over reps into levels of all n
// ranks (the ranks of a host go with their representative), finest first,
// without "all", and the bandwidth tree over the finest level's groups.
func swarmLevels(n int, sec *dataset.SwarmSection, reps []int, hosts [][]int) ([]topo.Level, *topo.BandwidthTree, error) {
	if sec == nil || len(sec.Iterations) == 0 {
		return nil, nil, nil
	}
	k := len(reps)
	h, err := probe.SwarmHierarchy(sec, k, 0)
	if err != nil {
		return nil, nil, err
	}
	expand := func(l cluster.Labels) [][]int {
		var groups [][]int
		for _, g := range cluster.Groups(l) {
			var ranks []int
			for _, i := range g {
				if hosts != nil {
					ranks = append(ranks, hosts[i]...)
				} else {
					ranks = append(ranks, reps[i])
				}
			}
			slices.Sort(ranks)
			groups = append(groups, ranks)
		}
		slices.SortFunc(groups, func(a, b []int) int { return a[0] - b[0] })
		return groups
	}
	var levels []topo.Level
	for i, l := range h {
		name := "bandwidth"
		if len(h) > 1 {
			name = fmt.Sprintf("bandwidth-%d", i+1)
		}
		levels = append(levels, topo.Level{Name: name, Groups: expand(l)})
	}
	if len(h) == 0 {
		return nil, nil, nil
	}
	g := sec.Graph(k, 0)
	edges, err := cluster.BandwidthTree(g, h[0])
	if err != nil {
		return nil, nil, err
	}
	// Tree nodes are the groups in the level's order (by first rank);
	// the labels of h[0] number them by first representative, which is
	// the same order since representatives are their hosts' first ranks.
	unit := "fragments/s"
	if sec.Params.Weight == dataset.WeightFragments {
		unit = "fragments"
	}
	bt := &topo.BandwidthTree{Level: levels[0].Name, Groups: levels[0].Groups, Unit: unit}
	for _, e := range edges {
		bt.Edges = append(bt.Edges, topo.BandwidthEdge{A: e.I, B: e.J, Weight: e.W})
	}
	return levels, bt, nil
}

// hasMiddleLevel tells whether levels hold a partition between the hosts
// and the whole world.
func hasMiddleLevel(levels []topo.Level, hosts int) bool {
	for _, l := range levels {
		if len(l.Groups) > 1 && len(l.Groups) < hosts {
			return true
		}
	}
	return false
}

// runSwarmMethod is MethodSwarm: identities, hosts, the swarm probe over
// one rank per host (every rank when blind), and its levels and tree.
func runSwarmMethod(ctx context.Context, c comm.Comm, opt Options) (*Outcome, error) {
	me := c.Rank()
	out := &Outcome{}
	clock := c.Now()
	progress := func(s string) {
		if me == 0 && opt.Progress != nil {
			opt.Progress(s)
		}
	}
	progress("identities")
	ids, err := comm.GatherIdentitiesRoot(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("discover: identities: %w", err)
	}
	var hosts [][]int
	var reps []int
	if me == 0 {
		hosts = hostGroups(ids, opt.Blind)
		for _, h := range hosts {
			reps = append(reps, h[0])
		}
	}
	if reps, err = shareInts(ctx, c, reps); err != nil {
		return nil, fmt.Errorf("discover: host representatives: %w", err)
	}
	if err := comm.Barrier(ctx, c); err != nil {
		return nil, err
	}
	now := c.Now()
	out.Phases = append(out.Phases, Phase{Name: "identities", Clock: now - clock})
	clock = now
	progress(fmt.Sprintf("swarm broadcasts over %d ranks", len(reps)))
	sec, err := swarmPhase(ctx, c, reps, opt)
	if err != nil {
		return nil, err
	}
	out.Phases = append(out.Phases, Phase{Name: "swarm", Clock: c.Now() - clock})
	if me != 0 {
		return nil, nil
	}
	blevels, btree, err := swarmLevels(c.Size(), sec, reps, hosts)
	if err != nil {
		return nil, err
	}
	var levels []topo.Level
	if !opt.Blind {
		if l, ok := socketLevel(ids, hosts); ok {
			levels = append(levels, l)
		}
		levels = append(levels, topo.Level{Name: "host", Groups: hosts})
	}
	levels = append(levels, blevels...)
	all := make([]int, c.Size())
	for i := range all {
		all[i] = i
	}
	if len(levels) == 0 || len(levels[len(levels)-1].Groups) != 1 {
		levels = append(levels, topo.Level{Name: "all", Groups: [][]int{all}})
	}
	out.Identities = ids
	out.Clustered = reps
	ds := &dataset.Dataset{World: dataset.World{Size: c.Size()}, Ranks: ids, Swarm: sec}
	if sec != nil && len(reps) != c.Size() {
		// The counts are indexed by representative: the dataset's are by
		// world rank.
		ds.Swarm = remapSwarm(sec, reps)
	}
	out.Dataset = ds
	var clk float64
	for _, p := range out.Phases {
		clk += p.Clock.Seconds()
	}
	params := map[string]any{"blind": opt.Blind}
	if sec != nil {
		params["bytes"] = sec.Params.Bytes
		params["iterations"] = len(sec.Iterations)
		params["stable"] = sec.Stable
		params["weight"] = unitWeight(sec)
	}
	out.Topology = &topo.Topology{
		Version:       topo.Version,
		Size:          c.Size(),
		Ranks:         topoRanks(ids, opt.Blind),
		Levels:        levels,
		BandwidthTree: btree,
		Method:        &topo.Method{Name: "swarm+hierarchical-modularity", Params: params},
		Measurements:  &topo.Measurements{PairsMeasured: swarmPairs(sec), PairsTotal: c.Size() * (c.Size() - 1) / 2, VirtualTimeS: clk},
	}
	return out, nil
}

func unitWeight(sec *dataset.SwarmSection) string {
	if sec.Params.Weight == "" {
		return dataset.WeightRate
	}
	return sec.Params.Weight
}

// swarmPairs counts the pairs that exchanged fragments.
func swarmPairs(sec *dataset.SwarmSection) int {
	if sec == nil {
		return 0
	}
	seen := map[[2]int]bool{}
	for _, it := range sec.Iterations {
		for _, c := range it.Counts {
			seen[[2]int{min(c.From, c.To), max(c.From, c.To)}] = true
		}
	}
	return len(seen)
}

// remapSwarm renames a section's ranks from positions in reps to world
// ranks.
func remapSwarm(sec *dataset.SwarmSection, reps []int) *dataset.SwarmSection {
	out := *sec
	out.Iterations = make([]dataset.SwarmIteration, len(sec.Iterations))
	for i, it := range sec.Iterations {
		it.Root = reps[it.Root]
		counts := make([]dataset.SwarmCount, len(it.Counts))
		for j, c := range it.Counts {
			c.From, c.To = reps[c.From], reps[c.To]
			counts[j] = c
		}
		it.Counts = counts
		out.Iterations[i] = it
	}
	return &out
}
