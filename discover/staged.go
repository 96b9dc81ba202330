package discover

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"netaware/cluster"
	"netaware/comm"
	"netaware/dataset"
	"netaware/infer"
	"netaware/infer/live"
	"netaware/probe"
	"netaware/topo"
)

// Staged discovery (Options.Staged). On a real network the inference's
// round trips spread by 10-20% where the switches are a few microseconds
// apart: procedure add cannot prune, and each rank measures nearly every
// rank before it (48-66 of 66 pairs on netaware emu's 12-host clusters),
// while the swarm's bandwidth levels find the switches anyway. So a few
// ranks first infer among themselves to see what the noise is; where it
// is a real network's (infer.Additive), the swarm runs first, and the
// tree is inferred within each of its bandwidth groups (in parallel) and
// between one rank per group, then composed (infer.Tree.Graft): the pairs
// measured are those inside groups plus one per group pair.
const (
	// stagedProbeRanks is how many ranks measure the noise first: the
	// C(4,2) = 6 pairs give the median spread infer.Additive decides on.
	stagedProbeRanks = 4
	// stagedMinRanks is the fewest ranks in the inference for which the
	// staged discovery is tried: below, the swarm has no groups to find
	// (minSwarmHosts) and the inference measures few pairs anyway.
	stagedMinRanks = 8
	// stagedStableIterations is how many successive swarm hierarchies
	// must agree before the staged discovery trusts its groups.
	stagedStableIterations = 3
)

// Tags of the staged inference's gathering on its private communicator.
const (
	tagStagedHead = 8
	tagStagedBody = 9
)

// stagedResult is what the staged inference gives rank 0.
type stagedResult struct {
	noisy bool
	// tree is the composed inference among the members (the clustered
	// ranks), Measured in their indices; valid on rank 0 when noisy.
	tree live.Result
	// sec is the swarm's section, indexed by member, when noisy.
	sec *dataset.SwarmSection
	// probe holds the first ranks' measurements (member indices), also
	// when the noise was not a real network's: they were measured.
	probe []live.Measurement
}

// stagedInference runs the noise check and, where it shows a real
// network, the swarm and the inference by groups. Every rank of c calls
// it; members are the ranks that take part in the inference (the host
// representatives, or every rank when blind), the same list on every
// rank, members[0] = 0. phase records a step on rank 0's clock.
func stagedInference(ctx context.Context, c comm.Comm, members []int, opt Options, phase func(string, int), progress func(string)) (stagedResult, error) {
	var res stagedResult
	me := c.Rank()
	pos := slices.Index(members, me)
	rtt := opt.RTT
	rtt.Joined = nil

	progress(fmt.Sprintf("round trips among the first %d ranks: how noisy is this network?", stagedProbeRanks))
	noisy := 0
	if pos >= 0 && pos < stagedProbeRanks {
		sub, err := c.Sub(members[:stagedProbeRanks])
		if err != nil {
			return res, err
		}
		r, err := live.Infer(ctx, sub, rtt)
		if err != nil {
			return res, fmt.Errorf("discover: noise check: %w", err)
		}
		if me == 0 {
			res.probe = r.Measured
			if infer.Additive(r.Measured) {
				noisy = 1
			}
		}
	}
	flag, err := shareInts(ctx, c, []int{noisy})
	if err != nil {
		return res, fmt.Errorf("discover: noise check: %w", err)
	}
	phase("rtt-noise-check", len(res.probe))
	if len(flag) != 1 || flag[0] != 1 {
		return res, nil
	}
	res.noisy = true

	progress("swarm broadcasts: round trips spread like a real network's, bandwidth groups first")
	var reps []int // swarmPhase's: nil when every rank is a member
	if len(members) != c.Size() {
		reps = members
	}
	// The groups decide every pair measured from here on: the swarm
	// stops only once three successive hierarchies agree, not two (on
	// netaware emu's chain-4x3 at load 35, two agreeing iterations once
	// merged two switches).
	sw := opt
	if sw.Swarm.Bytes == 0 {
		sw.Swarm = DiscoverSwarmParams()
	}
	sw.Swarm.StableIterations = max(sw.Swarm.StableIterations, stagedStableIterations)
	sw.Swarm.MaxIterations = max(sw.Swarm.MaxIterations, stagedStableIterations+3)
	if res.sec, err = swarmPhase(ctx, c, reps, sw); err != nil {
		return res, err
	}
	phase("swarm", 0)
	labels := make([]int, len(members))
	if me == 0 && res.sec != nil && len(res.sec.Iterations) > 0 {
		h, err := probe.SwarmHierarchy(res.sec, len(members), 0)
		if err != nil {
			return res, err
		}
		if len(h) > 0 {
			labels = cluster.Canonical(h[0])
		}
	}
	if labels, err = shareInts(ctx, c, labels); err != nil {
		return res, fmt.Errorf("discover: bandwidth groups: %w", err)
	}
	if len(labels) != len(members) {
		return res, fmt.Errorf("discover: %d bandwidth labels for %d ranks", len(labels), len(members))
	}
	groups := cluster.Groups(labels) // member indices, ordered by first
	leaders := make([]int, len(groups))
	for g, idx := range groups {
		leaders[g] = idx[0]
	}
	progress(fmt.Sprintf("rtt tree inference within %d bandwidth groups and between them", len(groups)))

	// Within my group, then between the groups' first ranks.
	var mine live.Result
	myGroup := -1
	if pos >= 0 {
		myGroup = labelGroup(groups, pos)
		idx := groups[myGroup]
		mine.Tree = infer.NewTree(0)
		if len(idx) > 1 {
			sub, err := c.Sub(worldRanks(members, idx))
			if err != nil {
				return res, err
			}
			if mine, err = live.Infer(ctx, sub, rtt); err != nil {
				return res, fmt.Errorf("discover: rtt tree within bandwidth group %d: %w", myGroup, err)
			}
			if sub.Rank() == 0 {
				mine.Tree, _ = infer.Refine(mine.Tree, mine.Measured)
			}
		}
	}
	var top live.Result
	if len(groups) > 1 && pos >= 0 && slices.Contains(leaders, pos) {
		sub, err := c.Sub(worldRanks(members, leaders))
		if err != nil {
			return res, err
		}
		if top, err = live.Infer(ctx, sub, rtt); err != nil {
			return res, fmt.Errorf("discover: rtt tree between bandwidth groups: %w", err)
		}
		if sub.Rank() == 0 {
			top.Tree, _ = infer.Refine(top.Tree, top.Measured)
		}
	}

	// Each group's first rank sends its group's tree and measurements to
	// rank 0 (the first rank of group 0), which composes them.
	all := make([]int, c.Size())
	for i := range all {
		all[i] = i
	}
	dup, err := c.Sub(all)
	if err != nil {
		return res, err
	}
	if me != 0 {
		if pos >= 0 && groups[myGroup][0] == pos {
			enc, _ := mine.Tree.MarshalBinary()
			ms := encodeMeasurements(mine.Measured)
			var head [16]byte
			binary.LittleEndian.PutUint64(head[:], uint64(len(enc)))
			binary.LittleEndian.PutUint64(head[8:], uint64(len(ms)))
			if err := dup.Send(ctx, 0, tagStagedHead, head[:]); err != nil {
				return res, err
			}
			if err := dup.Send(ctx, 0, tagStagedBody, append(enc, ms...)); err != nil {
				return res, err
			}
		}
		if _, err := resweep(ctx, c, members, nil, 0, rtt); err != nil {
			return res, err
		}
		phase("rtt-tree", 0)
		return res, nil
	}
	trees := make([]*infer.Tree, len(groups))
	meas := make([][]live.Measurement, len(groups))
	trees[0], meas[0] = mine.Tree, mine.Measured
	for g := 1; g < len(groups); g++ {
		src := members[leaders[g]]
		var head [16]byte
		if _, err := dup.Recv(ctx, src, tagStagedHead, head[:]); err != nil {
			return res, err
		}
		nt, nm := binary.LittleEndian.Uint64(head[:]), binary.LittleEndian.Uint64(head[8:])
		if nt > uint64(infer.EncodedSize(2*len(groups[g]))) || nm > uint64(measurementSize*len(groups[g])*len(groups[g])) {
			return res, fmt.Errorf("discover: rank %d announces a group tree of %d bytes and %d bytes of measurements for %d ranks", src, nt, nm, len(groups[g]))
		}
		b := make([]byte, nt+nm)
		if _, err := dup.Recv(ctx, src, tagStagedBody, b); err != nil {
			return res, err
		}
		if trees[g], err = infer.UnmarshalTree(b[:nt]); err != nil {
			return res, fmt.Errorf("discover: group tree from rank %d: %w", src, err)
		}
		if meas[g], err = decodeMeasurements(b[nt:], len(groups[g])); err != nil {
			return res, fmt.Errorf("discover: measurements from rank %d: %w", src, err)
		}
	}
	var tree *infer.Tree
	var measured []live.Measurement
	rename := func(ms []live.Measurement, names []int) {
		for _, m := range ms {
			m.A, m.B = names[m.A], names[m.B]
			measured = append(measured, m)
		}
	}
	if len(groups) == 1 {
		tree = trees[0] // its ranks are the members' indices already
	} else {
		// The groups hang together as the swarm's bandwidth tree says
		// (a chain of switches is a chain): between 4 ranks 3 us
		// apart per hop, latency alone cannot tell a chain from a star
		// under 10 us of noise, and a trunk missing from the tree gets
		// no bandwidth label. The latency tree between the groups' first
		// ranks stands where the swarm gives no tree.
		if tree = bandwidthShape(res.sec, labels, leaders, trees, top); tree == nil {
			if tree, err = top.Tree.Renamed(leaders); err != nil {
				return res, err
			}
		}
		rename(top.Measured, leaders)
		for g, idx := range groups {
			if err := tree.Graft(trees[g], idx); err != nil {
				return res, fmt.Errorf("discover: bandwidth group %d: %w", g, err)
			}
		}
	}
	for g, idx := range groups {
		rename(meas[g], idx)
	}
	// The noise check's pairs count too, and their rounds are as good as
	// any: Refine and the levels may use them.
	measured = append(measured, res.probe...)
	// Every rank takes part in the sweeps (resweep.go), rank 0 with the
	// pairs.
	swept, err := resweep(ctx, c, members, sweepPairs(groups, measured), sweepCount(infer.RelativeSpread(measured)), rtt)
	if err != nil {
		return res, err
	}
	measured = append(measured, swept...)
	res.tree = live.Result{Tree: tree, Measured: measured, Pairs: distinctPairs(measured)}
	phase("rtt-tree", res.tree.Pairs)
	return res, nil
}

// labelGroup is the index of the group holding member index i.
func labelGroup(groups [][]int, i int) int {
	for g, idx := range groups {
		if slices.Contains(idx, i) {
			return g
		}
	}
	return -1
}

// worldRanks maps member indices to world ranks.
func worldRanks(members, idx []int) []int {
	out := make([]int, len(idx))
	for k, i := range idx {
		out[k] = members[i]
	}
	return out
}

// distinctPairs counts the unordered pairs among ms.
func distinctPairs(ms []live.Measurement) int {
	seen := map[[2]int]bool{}
	for _, m := range ms {
		seen[[2]int{min(m.A, m.B), max(m.A, m.B)}] = true
	}
	return len(seen)
}

// measurementSize is an encoded measurement: A, B, and the RTT's Min, Max
// and Next.
const measurementSize = 4 + 4 + 3*8

func encodeMeasurements(ms []live.Measurement) []byte {
	b := make([]byte, 0, measurementSize*len(ms))
	for _, m := range ms {
		b = binary.LittleEndian.AppendUint32(b, uint32(m.A))
		b = binary.LittleEndian.AppendUint32(b, uint32(m.B))
		for _, v := range []float64{m.RTT.Min, m.RTT.Max, m.RTT.Next} {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b
}

// decodeMeasurements reads encodeMeasurements' output among n ranks.
func decodeMeasurements(b []byte, n int) ([]live.Measurement, error) {
	if len(b)%measurementSize != 0 {
		return nil, fmt.Errorf("%d bytes of measurements", len(b))
	}
	var out []live.Measurement
	for ; len(b) > 0; b = b[measurementSize:] {
		m := live.Measurement{A: int(binary.LittleEndian.Uint32(b)), B: int(binary.LittleEndian.Uint32(b[4:]))}
		m.RTT.Min = math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
		m.RTT.Max = math.Float64frombits(binary.LittleEndian.Uint64(b[16:]))
		m.RTT.Next = math.Float64frombits(binary.LittleEndian.Uint64(b[24:]))
		if m.A >= n || m.B >= n || m.A == m.B {
			return nil, fmt.Errorf("measurement %d-%d among %d ranks", m.A, m.B, n)
		}
		out = append(out, m)
	}
	return out, nil
}

// dropNoiseSplits removes, after the swarm ran first, the latency levels
// that split the finest bandwidth level's groups without a clear latency
// contrast: inside a bandwidth group, the pairs a level keeps together
// must be at most half as far apart (mean one-way distance) as those it
// separates. Under a real network's noise the tree splits a switch's
// hosts into groups 0.1 us apart (14.1 against 14.2 us on netaware emu's
// star-3x4), which cost PLogP pairs and name a "switch" that is not one;
// the ranks of one machine (shared memory against a network) stay. A
// latency level with the bandwidth level's groups goes too.
// m is the distance over reps (reps[i] is m's point i).
func dropNoiseSplits(levels []topo.Level, m cluster.Distances, reps []int) []topo.Level {
	var bw *topo.Level
	for i := range levels {
		if strings.HasPrefix(levels[i].Name, "bandwidth") {
			bw = &levels[i]
			break
		}
	}
	if bw == nil || m == nil {
		return levels
	}
	groupOf := func(l topo.Level) map[int]int {
		g := map[int]int{}
		for k, grp := range l.Groups {
			for _, r := range grp {
				g[r] = k
			}
		}
		return g
	}
	bg := groupOf(*bw)
	var out []topo.Level
	for _, l := range levels {
		if l.Name == "host" || l.Name == "socket" || strings.HasPrefix(l.Name, "bandwidth") || !refines(l.Groups, bw.Groups) {
			out = append(out, l)
			continue
		}
		if topo.EqualGroups(l.Groups, bw.Groups) {
			continue // the same groups twice: the bandwidth level says it
		}
		lg := groupOf(l)
		var within, between float64
		var nw, nb int
		m.EachPair(func(i, j int, d float64) {
			a, b := reps[i], reps[j]
			if bg[a] != bg[b] {
				return
			}
			if lg[a] == lg[b] {
				within, nw = within+d, nw+1
			} else {
				between, nb = between+d, nb+1
			}
		})
		if nw > 0 && nb > 0 && within/float64(nw) <= between/float64(nb)/2 {
			out = append(out, l)
		}
	}
	return out
}

// bandwidthShape is the tree between the groups' first ranks (leaders,
// member indices) shaped as the swarm's bandwidth tree over the groups
// of labels: a switch per group, the leader hanging from it by its leaf
// edge in its group's tree, and between the switches of adjacent groups
// what remains of the leaders' measured one-way distance (their tree
// distance where they were not measured). nil when the swarm gives no
// tree over the groups.
func bandwidthShape(sec *dataset.SwarmSection, labels []int, leaders []int, trees []*infer.Tree, top live.Result) *infer.Tree {
	k := len(leaders)
	if sec == nil || top.Tree == nil || len(trees) != k {
		return nil
	}
	oneWay := func(a, b int) float64 {
		for _, m := range top.Measured {
			if m.A == a && m.B == b || m.A == b && m.B == a {
				return m.RTT.Min / 2
			}
		}
		return top.Tree.Distance(a, b)
	}
	// In a chain every pair of groups has one trunk as its bottleneck and
	// the swarm's rates cannot order them (on netaware emu's chain-4x3 the
	// spanning tree read a-b-d-c in 3 of 40 runs): near ties, within the
	// spread of the swarm's own connections, go to the leaders with the
	// shorter round trip, i.e. fewer bridges between them.
	g := sec.Graph(len(labels), 0)
	tol, err := cluster.BetweenGroupSpread(g, labels)
	if err != nil {
		return nil
	}
	edges, err := cluster.BandwidthTreeNearTies(g, labels, tol, oneWay)
	if err != nil || len(edges) != k-1 {
		return nil
	}
	// The leaders' leaf edges: from their group's tree where it has a
	// switch, half way to the other rank of a pair, and the median of
	// the others for a group of one.
	leaf := make([]float64, k)
	var known []float64
	for g, t := range trees {
		switch n := len(t.Ranks()); {
		case n >= 3:
			leaf[g] = t.LeafLength(0)
		case n == 2:
			leaf[g] = t.LeafLength(0) / 2
		default:
			leaf[g] = math.NaN()
			continue
		}
		known = append(known, leaf[g])
	}
	fill := 0.0
	if len(known) > 0 {
		slices.Sort(known)
		fill = known[len(known)/2]
	}
	for g := range leaf {
		if math.IsNaN(leaf[g]) {
			leaf[g] = fill
		}
	}
	adj := make([][]int, k)
	for _, e := range edges {
		adj[e.I] = append(adj[e.I], e.J)
		adj[e.J] = append(adj[e.J], e.I)
	}
	rank := []int{leaders[0], -1}
	parent := []int{-1, 0}
	up := []float64{0, leaf[0]}
	sw := make([]int, k)
	for g := range sw {
		sw[g] = -1
	}
	sw[0] = 1
	queue := []int{0}
	for q := 0; q < len(queue); q++ {
		g := queue[q]
		for _, h := range adj[g] {
			if sw[h] >= 0 {
				continue
			}
			sw[h] = len(rank)
			rank, parent = append(rank, -1), append(parent, sw[g])
			up = append(up, math.Max(0, oneWay(g, h)-leaf[g]-leaf[h]))
			rank, parent, up = append(rank, leaders[h]), append(parent, sw[h]), append(up, leaf[h])
			queue = append(queue, h)
		}
	}
	if len(queue) != k {
		return nil // the edges did not span the groups
	}
	t, err := infer.TreeOf(rank, parent, up)
	if err != nil {
		return nil
	}
	return t
}
