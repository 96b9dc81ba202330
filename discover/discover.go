// Package discover is netaware's main job: find out how the ranks of a
// communicator are connected and how fast they talk, from measurements the
// ranks take themselves. It chains identity exchange, RTT tree inference
// (seed 002), targeted PLogP measurements (seeds 003 and 004) and
// clustering into topology levels, and returns everything a user saves:
// dataset, topology, model inputs.
package discover

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"netaware/cluster"
	"netaware/comm"
	"netaware/dataset"
	"netaware/infer"
	"netaware/infer/live"
	"netaware/intern"
	"netaware/probe"
	"netaware/topo"
)

// Level of effort.
type Level string

// Levels of effort: fast measures RTTs along the inference only; standard
// adds PLogP between representatives of every group and group pair (seed
// 004 Sect. 5.2); thorough measures PLogP between all pairs.
const (
	Fast     Level = "fast"
	Standard Level = "standard"
	Thorough Level = "thorough"
)

// ParseLevel checks a --level value.
func ParseLevel(s string) (Level, error) {
	switch Level(s) {
	case Fast, Standard, Thorough:
		return Level(s), nil
	}
	return "", fmt.Errorf("level %q: want fast, standard or thorough", s)
}

// Options of a discovery.
type Options struct {
	Level Level
	// Blind ignores host names and core ids: every level must come from
	// measurement (seed 003's setting). Otherwise ranks that report the
	// same host name are one host (seed 004 Sect. 4.2), ranks that also
	// report the same socket one socket, and only one rank per host takes
	// part in the RTT inference.
	Blind bool
	// RTT is seed 002's pair protocol.
	RTT live.Params
	// PLogP parameterizes the PLogP measurements of the standard and
	// thorough levels (zero fields: the seed's values).
	PLogP dataset.PLogPParams
	// Gap is the rule that cuts the dendrogram into levels.
	Gap cluster.GapOptions
	// Progress, if set, is called on rank 0 with a phase name as each
	// phase starts.
	Progress func(phase string)
	// Advance, if set, reports how far the current long phase is, as a
	// count of its total: in the RTT inference the ranks in the tree so
	// far (called by each rank as it joins, see live.Params.Joined: every
	// rank of a world held in this process calls it, a rank of a TCP
	// world only for itself, so a caller gates it per process), in the
	// PLogP campaign the pairs finished (on rank 0). The counts of a phase
	// increase up to its total. It must not block; the discover package
	// never reads the wall clock, so an ETA is the caller's.
	Advance func(done, total int)
	// Checkpoint, if set, is called on rank 0 during the PLogP campaign
	// with the dataset so far (the RTT section and the PLogP pairs
	// measured), as probe.RunHooks.Checkpoint is, so that an interrupted
	// discovery can keep them.
	Checkpoint func(ds *dataset.Dataset, final bool) error
	// Resume, on rank 0, is the dataset an interrupted discovery of the
	// same world checkpointed: its PLogP pairs are kept and only the
	// missing ones measured (probe.Campaign.Resume). The identities, the
	// RTT inference and the bandwidth map run again (the dataset does not
	// hold the tree, and they are seconds against the PLogP phase's
	// minutes to days); the PLogP schedule they give must be the one the
	// dataset was measured with, or Run fails saying so.
	Resume *dataset.Dataset
	// Method is MethodAuto (""), MethodRTTTree or MethodSwarm.
	Method string
	// Swarm parameterizes the swarm probe (zero: DiscoverSwarmParams).
	Swarm dataset.SwarmParams
	// Staged, at the standard and thorough levels with the automatic
	// method and 8 ranks or more in the inference, first lets 4 of them measure the
	// noise; where it is a real network's (infer.Additive), the swarm
	// runs first and the tree is inferred within its bandwidth groups and
	// between one rank per group (staged.go), which measures far fewer
	// pairs there. The CLI sets it on real networks; the simulator's
	// discoveries leave it off, so that their measurements are the ones
	// their tests know.
	Staged bool
}

// DefaultOptions are the standard discovery.
func DefaultOptions() Options {
	return Options{Level: Standard, RTT: live.DefaultParams(), PLogP: StandardPLogP(), Gap: TreeGap()}
}

// TreeGap is the level-cut rule for latencies read off the inferred tree.
// They are much less noisy than single measurements (every edge comes
// from minima over many round trips), so a 10% jump between merge heights
// separates two levels where the clustering default asks for 25%; it is
// what separates a node's two sockets (0.4 us apart) from the nodes of an
// InfiniBand island (0.45 us) on fram-like.
func TreeGap() cluster.GapOptions {
	g := cluster.DefaultGapOptions()
	g.MinJump = 0.1
	return g
}

// StandardPLogP is the PLogP measurement of the standard level: seed 003's
// protocol up to 1 MiB with 2 repetitions, saturation batches of at most
// 320 messages and no midpoint refinement. A pair then costs about 35 ms of
// simulation (against 630 ms with 4 repetitions and batches of 1280), so
// that the C(C+1)/2 pairs of a 512-rank world take seconds. The thorough
// level uses the seed's values.
func StandardPLogP() dataset.PLogPParams {
	return dataset.PLogPParams{MaxBytes: 1 << 20, Reps: 2, SatMax: 320, MaxExtra: -2}
}

// Outcome is what rank 0 gets back (other ranks get nil).
type Outcome struct {
	Identities []comm.Identity
	Topology   *topo.Topology
	Dataset    *dataset.Dataset
	// Distance is the one-way latency (seconds) between the clustered
	// ranks (Clustered[i] is its point i) that the levels were cut from:
	// half the best round trip of a measured pair, the inferred tree's
	// path elsewhere. It is answered from the tree, not stored as a
	// matrix (cluster.Dense makes one).
	Distance cluster.Distances
	// Dendrogram over the clustered ranks (all ranks when blind, one per
	// host otherwise: see Clustered) and the heights where it was cut.
	Dendrogram *cluster.Dendrogram
	Cuts       []float64
	Clustered  []int
	Phases     []Phase
	// Kept is how many PLogP pairs came from Options.Resume.
	Kept int
	// Warnings are what the measurements contradicted (a host name shared
	// by ranks that talk over a network), for the user to see.
	Warnings []string
	// Estimate is the PLogP phase of a thorough discovery over its
	// EstimatePairs pairs by the protocol's steps (plogpEstimate), known
	// before it starts: a bound where the machine is not loaded (on 12
	// emulated hosts at load 30-52, 8m12s against 8m17s measured).
	Estimate      time.Duration
	EstimatePairs int
}

// Phase is one step's cost on rank 0's clock.
type Phase struct {
	Name  string
	Clock time.Duration
	Pairs int
}

// Run discovers the topology of c. Every rank calls it.
func Run(ctx context.Context, c comm.Comm, opt Options) (*Outcome, error) {
	if opt.Level == "" {
		opt.Level = Standard
	}
	if opt.RTT.Rounds == 0 {
		opt.RTT = live.DefaultParams()
	}
	if opt.Gap == (cluster.GapOptions{}) {
		opt.Gap = TreeGap()
	}
	method, err := ParseMethod(opt.Method)
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	if method == MethodSwarm {
		return runSwarmMethod(ctx, c, opt)
	}
	me := c.Rank()
	progress := func(s string) {
		if me == 0 && opt.Progress != nil {
			opt.Progress(s)
		}
	}
	out := &Outcome{}
	clock := c.Now()
	phase := func(name string, pairs int) {
		now := c.Now()
		out.Phases = append(out.Phases, Phase{Name: name, Clock: now - clock, Pairs: pairs})
		clock = now
	}

	progress("identities")
	// Rank 0 keeps the identities; the other ranks need only to know who
	// represents a host, so that no rank but rank 0 holds O(N) of them.
	ids, err := comm.GatherIdentitiesRoot(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("discover: identities: %w", err)
	}
	// The ranks start the inference together, once the identities'
	// traffic is gone, as they did when every rank received the table:
	// the contention the first measurements see decides between trees
	// that the noise-free 1,024-rank cluster has told apart (a start
	// staggered by the identities' arrival gave it 12 spurious levels).
	if err := comm.Barrier(ctx, c); err != nil {
		return nil, err
	}
	phase("identities", 0)

	var hosts [][]int
	var reps []int // nil when blind: every rank represents itself
	if me == 0 {
		hosts = hostGroups(ids, opt.Blind)
	}
	if !opt.Blind {
		if me == 0 {
			for _, h := range hosts {
				reps = append(reps, h[0])
			}
		}
		if reps, err = shareInts(ctx, c, reps); err != nil {
			return nil, fmt.Errorf("discover: host representatives: %w", err)
		}
	}
	swarmReps := reps // as every rank has them (nil when blind)
	inferred := c.Size()
	if reps != nil {
		inferred = len(reps)
	}
	var (
		tree   live.Result
		bmap   *infer.BandwidthMap
		staged stagedResult
		sec    *dataset.SwarmSection
	)
	if opt.Staged && method == MethodAuto && opt.Level != Fast && inferred >= stagedMinRanks {
		members := reps
		if members == nil {
			members = make([]int, c.Size())
			for i := range members {
				members[i] = i
			}
		}
		if staged, err = stagedInference(ctx, c, members, opt, phase, progress); err != nil {
			return nil, err
		}
		tree, sec = staged.tree, staged.sec
		if staged.noisy && opt.Level == Standard {
			// On a real network no saturation batch settles within 1%,
			// so every one runs to its largest: 13 s of a standard
			// pair across a 50 Mbit trunk, 15-42 s of a 12-host
			// discovery's PLogP (netaware emu's star-3x4, load 40).
			// Up to 4 KiB, and g(m) by Eq. 3.1 above, as thorough.
			opt.PLogP.SatMaxBytes = min(opt.PLogP.WithDefaults().SatMaxBytes, stagedSatMaxBytes)
		}
	}
	if !staged.noisy {
		progress(fmt.Sprintf("rtt tree inference over %d ranks", inferred))
	}
	if reps == nil || slices.Contains(reps, me) {
		sub := c
		if reps != nil {
			if sub, err = c.Sub(reps); err != nil {
				return nil, err
			}
		}
		if !staged.noisy {
			rtt := opt.RTT
			if opt.Advance != nil {
				rtt.Joined = opt.Advance
			}
			if tree, err = live.Infer(ctx, sub, rtt); err != nil {
				return nil, fmt.Errorf("discover: rtt tree: %w", err)
			}
			if sub.Rank() == 0 {
				// Only the first rank holds every measurement of the
				// inference, and only it uses the tree from here on (the
				// bandwidth map's schedule, the levels).
				tree.Tree, _ = infer.Refine(tree.Tree, tree.Measured)
			}
			if err := settleUnseen(ctx, sub, &tree, opt.RTT); err != nil {
				return nil, fmt.Errorf("discover: rtt tree: %w", err)
			}
			phase("rtt-tree", tree.Pairs)
		}
		if opt.Level != Fast && inferred > 1 {
			progress("bandwidth map over the tree")
			bw := live.DefaultBandwidthParams()
			if staged.noisy {
				// The rate is the difference of a short and a long
				// transfer: across a 100 Mbit trunk 1 MiB leaves 63 ms
				// between them, and a rank descheduled for 10 ms moves
				// the rate by a fifth (trunks of netaware emu's chains
				// labelled up to 178 Mbit/s in 6 of 40 runs); 4 MiB
				// leaves 250 ms.
				bw.Bytes = stagedBandwidthBytes
				bw.MinTimes = true
			}
			if bmap, err = live.BandwidthMap(ctx, sub, tree.Tree, bw); err != nil {
				return nil, fmt.Errorf("discover: bandwidth map: %w", err)
			}
			phase("bandwidth-map", 0)
		}
	}
	if err := comm.Barrier(ctx, c); err != nil {
		return nil, err
	}
	if !opt.Blind {
		var warning string
		if warning, err = checkHostNames(ctx, c, hosts, tree.Measured); err != nil {
			return nil, fmt.Errorf("discover: host names: %w", err)
		}
		if warning != "" {
			// The names lie: measure every level instead, as blind.
			progress(warning)
			opt.Blind = true
			o, err := Run(ctx, c, opt)
			if o != nil {
				o.Warnings = append([]string{warning}, o.Warnings...)
			}
			return o, err
		}
	}

	// Rank 0 derives the levels and, unless fast, the PLogP schedule every
	// rank needs.
	var levels []topo.Level
	var btree *topo.BandwidthTree
	var spec *dataset.ScheduleSpec
	plogp := opt.Level != Fast && c.Size() > 1
	useSwarm := 0
	if me == 0 {
		if reps == nil {
			reps = make([]int, c.Size())
			for i := range reps {
				reps[i] = i
			}
		}
		out.Identities = ids
		out.Clustered = reps
		levels, err = out.levelsFromTree(c.Size(), ids, hosts, reps, tree, bmap, opt)
		if err != nil {
			return nil, err
		}
		if staged.noisy && sec != nil {
			// The swarm ran first: its levels shape the PLogP schedule.
			if levels, btree, err = withSwarmLevels(c.Size(), levels, sec, reps, hosts); err != nil {
				return nil, err
			}
			levels = dropNoiseSplits(levels, out.Distance, reps)
		}
		// The swarm runs when latency cannot be trusted to find the
		// switches: no level between hosts and all, or the inference's
		// round trips spread like a real network's (CPU delays, infer.Additive),
		// where the tree grows spurious levels and bandwidth is the strong
		// signal (on netaware emu's star-2x6, chain-3x4 and chain-4x3 the
		// latency levels found the switches in 2 of 5 runs, the swarm in
		// 9 of 9).
		if method == MethodAuto && !staged.noisy && len(hosts) >= minSwarmHosts && (opt.Level == Thorough || !hasMiddleLevel(levels, len(hosts)) || infer.Additive(tree.Measured)) {
			useSwarm = 1
		}
		if plogp {
			s := plogpSchedule(c.Size(), levels, opt.Level)
			spec = &s
			if opt.Level == Thorough {
				out.Estimate, out.EstimatePairs = plogpEstimate(s, plogpParams(opt), hosts, reps, out.Distance, bmap)
				progress(fmt.Sprintf("plogp at thorough: %d pairs, about %s (the protocol's steps over the measured round trips and bandwidths, without the machine's load)", out.EstimatePairs, out.Estimate.Round(time.Second)))
			}
		}
		if opt.Resume != nil && opt.Resume.PLogP != nil {
			if out.Kept, err = resumable(opt.Resume.PLogP, plogpParams(opt), spec); err != nil {
				return nil, err
			}
		}
	}
	if plogp {
		if spec, err = shareSpec(ctx, c, spec); err != nil {
			return nil, fmt.Errorf("discover: plogp schedule: %w", err)
		}
	}

	ds := &dataset.Dataset{World: dataset.World{Size: c.Size()}}
	if me == 0 {
		ds.Ranks = ids
		ds.RTT = rttSection(reps, tree)
	}
	if plogp {
		if out.Kept > 0 {
			progress(fmt.Sprintf("plogp (%s schedule): %d pairs kept from the interrupted discovery", spec.Mode, out.Kept))
		} else {
			progress(fmt.Sprintf("plogp (%s schedule)", spec.Mode))
		}
		cp := &probe.Campaign{Kind: "plogp", Schedule: *spec, PLogP: plogpParams(opt)}
		var dsArg *dataset.Dataset
		if me == 0 {
			dsArg = ds
			if opt.Resume != nil && opt.Resume.PLogP != nil {
				cp.Resume, ds.PLogP = true, opt.Resume.PLogP
			}
		}
		hooks := probe.RunHooks{Checkpoint: func(*dataset.Dataset, bool) error { return nil }, Progress: opt.Advance}
		if opt.Checkpoint != nil {
			hooks.Checkpoint = opt.Checkpoint
		}
		if err := cp.Run(ctx, c, dsArg, hooks); err != nil {
			return nil, fmt.Errorf("discover: plogp: %w", err)
		}
		pairs := 0
		if me == 0 && ds.PLogP != nil {
			pairs = len(ds.PLogP.Pairs)
		}
		phase("plogp", pairs)
	}
	flag, err := shareInts(ctx, c, []int{useSwarm})
	if err != nil {
		return nil, fmt.Errorf("discover: swarm decision: %w", err)
	}
	if len(flag) == 1 && flag[0] == 1 {
		progress("swarm broadcasts: latency alone cannot be trusted here (no level between hosts and all, real-network noise, or thorough)")
		if sec, err = swarmPhase(ctx, c, swarmReps, opt); err != nil {
			return nil, err
		}
		phase("swarm", 0)
	}
	if me != 0 {
		return nil, nil
	}
	if sec != nil {
		if !staged.noisy {
			if levels, btree, err = withSwarmLevels(c.Size(), levels, sec, reps, hosts); err != nil {
				return nil, err
			}
		}
		ds.Swarm = sec
		if len(reps) != c.Size() {
			ds.Swarm = remapSwarm(sec, reps)
		}
	}
	out.Dataset = ds
	total := c.Size() * (c.Size() - 1) / 2
	measured := map[[2]int]bool{}
	for _, m := range ds.RTT.Pairs {
		measured[[2]int{min(m.A, m.B), max(m.A, m.B)}] = true
	}
	if ds.PLogP != nil {
		for _, m := range ds.PLogP.Pairs {
			measured[[2]int{min(m.A, m.B), max(m.A, m.B)}] = true
		}
	}
	// The bandwidth map's transfers and the noise check's round trips are
	// pair measurements too (the swarm's broadcasts are not: no pair is
	// measured by them, every rank only counts what it received).
	if bmap != nil {
		for _, round := range bmap.Rounds {
			for _, p := range round {
				a, b := reps[p.A], reps[p.B]
				measured[[2]int{min(a, b), max(a, b)}] = true
			}
		}
	}
	for _, m := range staged.probe {
		a, b := reps[m.A], reps[m.B]
		measured[[2]int{min(a, b), max(a, b)}] = true
	}
	var clk time.Duration
	for _, p := range out.Phases {
		clk += p.Clock
	}
	out.Topology = &topo.Topology{
		Version:       topo.Version,
		Size:          c.Size(),
		Ranks:         topoRanks(ids, opt.Blind),
		Levels:        levels,
		Tree:          worldTree(treeWithBandwidth(tree.Tree, bmap), reps, hosts),
		BandwidthTree: btree,
		Method: &topo.Method{Name: methodName(sec), Params: map[string]any{
			"linkage": "average", "level": string(opt.Level), "blind": opt.Blind,
			"gap_min_jump": opt.Gap.MinJump, "gap_spread_factor": opt.Gap.SpreadFactor,
		}},
		Measurements: &topo.Measurements{PairsMeasured: len(measured), PairsTotal: total, VirtualTimeS: clk.Seconds()},
	}
	return out, nil
}

// plogpParams are the PLogP parameters of opt's level.
func plogpParams(opt Options) dataset.PLogPParams {
	if opt.Level == Thorough {
		// The seed's protocol (every size to 1 MiB, midpoints) but for
		// its costs on a real network, where the time per message never
		// settles within 1% and every saturation runs to its largest
		// batch: 37,500 messages cost 400 s for one 64 KiB size on a
		// 100 Mbit link, and the 66 pairs of 12 hosts took hours. Batches
		// up to 1,280 messages, g(m) by saturation up to 4 KiB and by
		// Eq. 3.1 above (as the seed does above its own limit), 8
		// repetitions: 11 s a pair across a 100 Mbit trunk, 7 minutes for
		// netaware emu's star-2x6 at most (probe.PLogPCost).
		return dataset.PLogPParams{MaxBytes: opt.PLogP.MaxBytes, SatMax: ThoroughSatMax, SatMaxBytes: stagedSatMaxBytes, Reps: 8}
	}
	return opt.PLogP
}

// resumable checks that an interrupted discovery's PLogP section can be
// continued under this run's schedule (nil: no PLogP at this level) and
// returns how many of its pairs are kept.
func resumable(sec *dataset.PLogPSection, params dataset.PLogPParams, spec *dataset.ScheduleSpec) (int, error) {
	if spec == nil {
		return 0, fmt.Errorf("discover: resume: the interrupted discovery measured PLogP and this level measures none")
	}
	plan, err := probe.PlanOf(*spec)
	if err != nil {
		return 0, err
	}
	// As the campaign stores them: defaults filled in.
	done, err := probe.ResumeState(sec, params.WithDefaults(), *spec, plan)
	if err != nil {
		return 0, fmt.Errorf("discover: %w (the RTT inference ran again and gave other levels, or the level of effort differs: discover again without resuming)", err)
	}
	kept := 0
	for _, d := range done {
		if d {
			kept++
		}
	}
	return kept, nil
}

// checkHostNames measures, from each host's first rank, a round trip to
// every other rank that reports the same host name, and compares it with
// the shortest round trip between two hosts that the inference measured
// (on the first rank, which alone holds them). Ranks of one host talk
// through memory, faster than any network; a rank whose round trip to its
// host-mate is at least 90% of the shortest one between hosts (noise
// spares the floor by a few per cent; fram-like's sockets, whose send and
// receive overheads dominate, are at 80%) is on another machine that
// reports the same name (containers, cloned images, a launcher's
// placeholder). It returns a
// warning naming the first such rank, or "" (on every rank).
func checkHostNames(ctx context.Context, c comm.Comm, hosts [][]int, measured []live.Measurement) (string, error) {
	dup, err := comm.Dup(c)
	if err != nil {
		return "", err
	}
	// Rank 0 tells every rank its part (a scatter, so that no rank holds
	// the whole plan and rank 0 does not send N messages at once): a
	// host's first rank gets its host-mates, a mate gets its first rank, a
	// rank alone on its host nothing.
	var pairs []int // on rank 0: rep, mate, rep, mate, ...
	var parts [][]byte
	if dup.Rank() == 0 {
		parts = make([][]byte, dup.Size())
		for _, h := range hosts {
			for _, m := range h[1:] {
				pairs = append(pairs, h[0], m)
				parts[h[0]] = binary.LittleEndian.AppendUint32(parts[h[0]], uint32(m))
				parts[m] = binary.LittleEndian.AppendUint32(nil, uint32(h[0]))
			}
		}
	}
	b, err := comm.ScatterBytes(ctx, dup, parts, 4*dup.Size())
	if err != nil {
		return "", err
	}
	var peers []int // this rank's part
	for k := 0; k+4 <= len(b); k += 4 {
		peers = append(peers, int(binary.LittleEndian.Uint32(b[k:])))
	}
	me := dup.Rank()
	prm := dataset.RTTParams{Rounds: 2, MaxExchanges: 10, Stale: 5}
	var mine []byte // mate, rtt for the pairs this rank initiated
	// A host's first rank is its lowest: it measures its mates in turn,
	// each mate answers it.
	if len(peers) > 0 && peers[0] > me {
		for _, m := range peers {
			r, err := probe.RTTInitiate(ctx, dup, m, prm)
			if err != nil {
				return "", err
			}
			mine = binary.LittleEndian.AppendUint32(mine, uint32(m))
			mine = binary.LittleEndian.AppendUint64(mine, math.Float64bits(r.MinS))
		}
	} else if len(peers) == 1 {
		if err := probe.RTTRespond(ctx, dup, peers[0], prm); err != nil {
			return "", err
		}
	}
	// The first ranks send their results to rank 0, which decides for
	// everyone.
	var verdict []byte
	results, err := comm.GatherBytesRoot(ctx, dup, mine, 12*dup.Size())
	if err != nil {
		return "", err
	}
	if me == 0 {
		got := map[int]float64{} // mate -> RTT to its rep
		for _, b := range results {
			for ; len(b) >= 12; b = b[12:] {
				got[int(binary.LittleEndian.Uint32(b))] = math.Float64frombits(binary.LittleEndian.Uint64(b[4:]))
			}
		}
		network := math.Inf(1)
		for _, m := range measured {
			network = math.Min(network, m.RTT.Min)
		}
		for k := 0; k+1 < len(pairs); k += 2 {
			if rtt := got[pairs[k+1]]; !math.IsInf(network, 1) && rtt >= 0.9*network {
				verdict = []byte(fmt.Sprintf("ranks %d and %d report the same host name but their round trip (%s) is as long as one between hosts (shortest %s): measuring every level instead, as --blind does",
					pairs[k], pairs[k+1], fmtSeconds(rtt), fmtSeconds(network)))
				break
			}
		}
	}
	verdict, err = comm.BcastBytes(ctx, dup, verdict)
	return string(verdict), err
}

// fmtSeconds prints a duration of seconds the way Go prints durations.
func fmtSeconds(s float64) string { return time.Duration(s * 1e9).String() }

// hostGroups groups ranks by reported host name and machine (each group
// sorted, groups ordered by first rank), or one group per rank when blind.
func hostGroups(ids []comm.Identity, blind bool) [][]int {
	if blind {
		g := make([][]int, len(ids))
		for i := range ids {
			g[i] = []int{i}
		}
		return g
	}
	index := map[string]int{}
	var groups [][]int
	for i, id := range ids {
		key := id.Host + "\x00" + id.Machine
		k, ok := index[key]
		if !ok || id.Host == "" {
			k = len(groups)
			index[key] = k
			groups = append(groups, nil)
		}
		groups[k] = append(groups[k], i)
	}
	return groups
}

// levelsFromTree cuts the tree's latency matrix over the representatives
// into levels and expands them to every rank, under the socket and host
// levels that identities give (unless blind).
func (out *Outcome) levelsFromTree(n int, ids []comm.Identity, hosts [][]int, reps []int, tree live.Result, bmap *infer.BandwidthMap, opt Options) ([]topo.Level, error) {
	m := newTreeDistance(tree.Tree, len(reps), tree.Measured)
	out.Distance = m
	// Under CPU noise (infer.Additive) levels are cut from the distances
	// between the points where ranks hang in the tree, d(i,j) - a(i) -
	// a(j) with a the leaf edges: a host's own access latency (a slower
	// NIC, a kernel path measured a microsecond longer) says nothing
	// about the switches it shares, and there leaf edges vary by more than
	// a hop. Under path jitter the tree's leaf edges are exact enough, and
	// the cut works on whole paths, whose ratios separate the levels of
	// deep hierarchies (sites, islands) that the difference would squash
	// towards zero.
	between := m
	if infer.Additive(tree.Measured) {
		between = m.leafless()
	}
	var upper []topo.Level
	if len(reps) > 1 {
		d, err := averageLinkage(between, denseLevelRanks)
		if err != nil {
			return nil, err
		}
		out.Dendrogram = d
		if out.Cuts, err = cluster.LevelCuts(d, opt.Gap); err != nil {
			return nil, err
		}
		if upper, err = cluster.LevelsFromDendrogram(d, opt.Gap); err != nil {
			return nil, err
		}
	}
	if sib := tree.Tree.Siblings(); len(sib) > 1 && len(sib) < len(reps) && !hasSingle(sib) {
		// The ranks hanging from one switch of the tree are a level in
		// their own right where every switch holds two or more: the tree
		// says so whatever the latencies of their links (two NIC
		// generations on one switch, 5 and 40 us, put the fast hosts of
		// both switches closer to each other than to their own slow
		// neighbours by path length).
		upper = imposeLevel(upper, topo.Level{Name: "siblings", Groups: sib})
	}
	if infer.Additive(tree.Measured) && m.pairs == len(reps)*(len(reps)-1)/2 {
		// After the tree's siblings: the profile distances ignore what
		// CPU noise does to single pairs and to a rank's own latency,
		// the tree does not (profile.go). They need every pair measured
		// (the staged discovery's sweeps measure them in small groups).
		// Every pair measured: the matrix is no larger than the
		// measurements were.
		dense := cluster.Dense(m)
		if prof := profileLevels(dense, opt.Gap); len(prof) > 0 {
			for _, l := range prof {
				upper = imposeLevel(upper, l)
			}
			upper = dropFlatSplits(upper, prof[0].Groups, dense)
		}
	}
	if len(reps) > 2 && !infer.Additive(tree.Measured) {
		// Under CPU noise the cut above already works on attachment
		// points (of single ranks).
		upper = withAttachmentLevels(tree.Tree, m, infer.RelativeSpread(tree.Measured), upper)
	}
	if bmap != nil {
		// Where links differ in speed by SlowEdgeRatio or more, the slow
		// edges of the bandwidth map cut the network into parts that
		// latency may not separate at all (a trunk of zero latency) or only
		// by a microsecond that real noise blurs; bandwidth is then the
		// stronger signal and its parts take precedence over latency
		// levels that cross them.
		if parts, _ := bmap.SlowGroups(SlowEdgeRatio); len(parts) > 1 {
			upper = imposeLevel(upper, topo.Level{Name: "bandwidth", Groups: parts})
		}
	}
	var levels []topo.Level
	if !opt.Blind {
		if l, ok := socketLevel(ids, hosts); ok {
			levels = append(levels, l)
		}
		levels = append(levels, topo.Level{Name: "host", Groups: hosts})
	}
	for _, l := range upper {
		var groups [][]int
		for _, g := range l.Groups {
			var ranks []int
			for _, i := range g {
				ranks = append(ranks, hosts[i]...)
			}
			sort.Ints(ranks)
			groups = append(groups, ranks)
		}
		sort.Slice(groups, func(a, b int) bool { return groups[a][0] < groups[b][0] })
		levels = append(levels, topo.Level{Name: l.Name, Groups: groups})
	}
	return finishLevels(n, levels, m, hosts, opt.Blind), nil
}

// withAttachmentLevels adds to levels (over the tree's ranks, finest
// first) the levels of the tree's structure that path lengths miss. For
// each level, the groups whose attachment points
// (see infer.Tree.GroupAttachments) are one switch form a coarser level:
// path lengths cannot tell racks of slow NICs apart (1 GbE with 20 us
// NICs: 40 us within a rack, 44 us across, a 10% step that the rounds'
// jitter blurs), the attachment points can (0 within a rack, 4 us
// across). Two attachment points closer than noise explains count as one
// (a switch the inference split into near copies): d(i,j) - a(i) - a(j)
// is floored at NoiseFactor times the rounds' relative spread (rel) of
// d(i,j), and groups join below the widest jump, of minJoinJump at
// least, between these distances. A level found so is added only where
// it nests with every level.
func withAttachmentLevels(t *infer.Tree, m cluster.Distances, rel float64, levels []topo.Level) []topo.Level {
	n := m.Len()
	tol := math.Max(5e-3, infer.DefaultNoiseFactor*rel)
	// Not from every rank alone: the first rank of a host is placed
	// from network round trips, hundreds of nanoseconds off at 20 us
	// NICs, and its host-mates branch around it, so that it hangs apart
	// from its socket at the right distances; its socket as a whole
	// joins the other at the host's switch.
	todo := groupsOf(levels)
	for k := 0; k < len(todo) && k < 64; k++ {
		from := todo[k]
		count := len(from)
		if count < 2 {
			continue
		}
		groupOf := make([]int, n)
		for g, rs := range from {
			for _, r := range rs {
				groupOf[r] = g
			}
		}
		a := t.GroupAttachments(groupOf)
		// Per two groups, the median of z = d(i,j) - a(i) - a(j) over
		// (a sample of) their pairs, floored at noise: the first rank of
		// a host hangs a little apart from its host-mates, the median
		// does not see it.
		sample := func(g int) []int { return from[g][:min(len(from[g]), 8)] }
		type gp struct {
			g, h int
			v    float64
		}
		var gps []gp
		for g := 0; g < count; g++ {
			for h := g + 1; h < count; h++ {
				var zs, ds []float64
				for _, i := range sample(g) {
					for _, j := range sample(h) {
						d := m.At(i, j)
						zs, ds = append(zs, d-a[i]-a[j]), append(ds, d)
					}
				}
				sort.Float64s(zs)
				sort.Float64s(ds)
				gps = append(gps, gp{g, h, math.Max(zs[len(zs)/2], tol*ds[len(ds)/2])})
			}
		}
		// The widest jump between consecutive values separates the
		// groups that meet at one switch from those that do not; it
		// must be a factor minJoinJump at least.
		sort.Slice(gps, func(x, y int) bool { return gps[x].v < gps[y].v })
		cut, best := -1.0, float64(minJoinJump)
		for k := 0; k+1 < len(gps); k++ {
			if lo := gps[k].v; lo > 0 && gps[k+1].v/lo >= best {
				cut, best = lo, gps[k+1].v/lo
			}
		}
		if cut < 0 {
			continue
		}
		sets := make([]int, count) // union-find over the groups
		for g := range sets {
			sets[g] = g
		}
		find := func(g int) int {
			for sets[g] != g {
				sets[g] = sets[sets[g]]
				g = sets[g]
			}
			return g
		}
		for _, q := range gps {
			if q.v > cut {
				break
			}
			if x, y := find(q.g), find(q.h); x != y {
				sets[max(x, y)] = min(x, y)
			}
		}
		index := map[int]int{}
		var joined [][]int
		for g, rs := range from {
			root := find(g)
			if _, ok := index[root]; !ok {
				index[root] = len(joined)
				joined = append(joined, nil)
			}
			joined[index[root]] = append(joined[index[root]], rs...)
		}
		if len(joined) == count || len(joined) == 1 {
			continue
		}
		for _, g := range joined {
			sort.Ints(g)
		}
		sort.Slice(joined, func(a, b int) bool { return joined[a][0] < joined[b][0] })
		before := len(levels)
		levels = insertNested(levels, topo.Level{Name: "attachment", Groups: joined})
		if len(levels) > before {
			todo = append(todo, joined)
		}
	}
	return levels
}

// minJoinJump is the smallest factor between the attachment distances of
// groups that meet at one switch and those of groups that do not: a switch
// split into near copies puts its groups a little beyond noise, another
// switch many times beyond it (racks of 20 us NICs: within noise, 1.2 us,
// against 4.4 us).
const minJoinJump = 2.0

// groupsOf lists the levels' groups.
func groupsOf(levels []topo.Level) [][][]int {
	out := make([][][]int, len(levels))
	for i, l := range levels {
		out[i] = l.Groups
	}
	return out
}

// insertNested adds l to levels (finest first) where it nests with every
// level, unless one has the same groups or it nests nowhere.
func insertNested(levels []topo.Level, l topo.Level) []topo.Level {
	for _, x := range levels {
		if topo.EqualGroups(x.Groups, l.Groups) {
			return levels
		}
	}
	for i := 0; i <= len(levels); i++ {
		if (i == 0 || refines(levels[i-1].Groups, l.Groups)) && (i == len(levels) || refines(l.Groups, levels[i].Groups)) {
			ok := true
			for _, x := range levels[:i] {
				ok = ok && refines(x.Groups, l.Groups)
			}
			for _, x := range levels[i:] {
				ok = ok && refines(l.Groups, x.Groups)
			}
			if ok {
				return append(append(append([]topo.Level{}, levels[:i]...), l), levels[i:]...)
			}
		}
	}
	return levels
}

// hasSingle tells whether a group holds a single rank.
func hasSingle(groups [][]int) bool {
	for _, g := range groups {
		if len(g) == 1 {
			return true
		}
	}
	return false
}

// SlowEdgeRatio is how much slower than the next faster edge an edge of
// the bandwidth map must be to cut the network into a level: well above
// the few per cent measured bandwidths vary by, well below the 4-10x
// between a host link and a trunk.
const SlowEdgeRatio = 3

// imposeLevel adds l to levels (finest first) between the levels that
// refine it and those that coarsen it, dropping the ones that do neither
// (topo.InsertLevel instead keeps the levels and drops l).
func imposeLevel(levels []topo.Level, l topo.Level) []topo.Level {
	var below, above []topo.Level
	for _, x := range levels {
		switch {
		case refines(x.Groups, l.Groups):
			below = append(below, x)
		case refines(l.Groups, x.Groups):
			above = append(above, x)
		}
	}
	return append(append(below, l), above...)
}

// refines tells whether every group of a lies inside one group of b.
func refines(a, b [][]int) bool {
	of := map[int]int{}
	for i, g := range b {
		for _, r := range g {
			of[r] = i
		}
	}
	for _, g := range a {
		for _, r := range g[1:] {
			if of[r] != of[g[0]] {
				return false
			}
		}
	}
	return true
}

// socketLevel groups the ranks of each host by reported socket, when every
// rank reported one and some host has two sockets or more.
func socketLevel(ids []comm.Identity, hosts [][]int) (topo.Level, bool) {
	var groups [][]int
	multi := false
	for _, h := range hosts {
		bySocket := map[int][]int{}
		var order []int
		for _, r := range h {
			s := ids[r].Socket
			if s < 0 {
				return topo.Level{}, false
			}
			if _, ok := bySocket[s]; !ok {
				order = append(order, s)
			}
			bySocket[s] = append(bySocket[s], r)
		}
		if len(order) > 1 {
			multi = true
		}
		for _, s := range order {
			groups = append(groups, bySocket[s])
		}
	}
	sort.Slice(groups, func(a, b int) bool { return groups[a][0] < groups[b][0] })
	return topo.Level{Name: "socket", Groups: groups}, multi
}

// finishLevels drops measured levels that leave half the ranks or more alone (every
// rank alone says nothing, and a cut that pairs a few ranks while most stay
// single is a noise artefact, not a layer of the network; a host level from
// identities is kept, as a fact), merges a level equal to the one below
// into it under the coarser name, names the measured levels, and ends with
// "all".
func finishLevels(n int, levels []topo.Level, m cluster.Distances, hosts [][]int, blind bool) []topo.Level {
	var out []topo.Level
	for _, l := range levels {
		if l.Name != "host" && l.Name != "socket" && 2*singletons(l) >= n {
			continue
		}
		if len(out) > 0 && topo.EqualGroups(out[len(out)-1].Groups, l.Groups) {
			out[len(out)-1].Name = l.Name
			continue
		}
		out = append(out, l)
	}
	if len(out) == 0 || len(out[len(out)-1].Groups) != 1 {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		out = append(out, topo.Level{Name: "all", Groups: [][]int{all}})
	}
	out[len(out)-1].Name = "all"
	var measured []topo.Level
	for _, l := range out[:len(out)-1] {
		if l.Name != "socket" && l.Name != "host" {
			measured = append(measured, l)
		}
	}
	gaps := groupGaps(measured, m, hosts)
	k, site := 0, false
	for i := range out[:len(out)-1] {
		if out[i].Name == "socket" || out[i].Name == "host" {
			continue
		}
		out[i].Name = nameByLatency(gaps[k], k+1, site, blind)
		k++
		site = site || out[i].Name == "site"
	}
	return out
}

// nameByLatency names the k-th measured level after the one-way latency
// that separates its groups (between, see groupGaps): "site" for the
// first level whose groups are a
// millisecond or more apart (wide area), "switch" for the first measured
// level above hosts below that (not when blind: there the first level may
// as well be sockets), and "level-k" for the others.
func nameByLatency(between float64, k int, siteSeen, blind bool) string {
	switch {
	case between >= 1e-3 && !siteSeen:
		return "site"
	case between < 1e-3 && k == 1 && !blind:
		return "switch"
	}
	return "level-" + strconv.Itoa(k)
}

// groupGaps is, for each level, the smallest distance in m between two
// of its groups (m's point i is host i), from one pass over m's pairs
// for all levels: at 16,384 ranks a pass is seconds.
func groupGaps(levels []topo.Level, m cluster.Distances, hosts [][]int) []float64 {
	size := 0
	for _, h := range hosts {
		for _, r := range h {
			size = max(size, r+1)
		}
	}
	hostOf := make([]int, size)
	for i, h := range hosts {
		for _, r := range h {
			hostOf[r] = i
		}
	}
	// groupOf[i*L+l]: host i's group at level l. Slices, not maps: the
	// pass visits every pair of hosts.
	L := len(levels)
	groupOf := make([]int, max(len(hosts), m.Len())*L)
	for l, lv := range levels {
		for gi, g := range lv.Groups {
			for _, r := range g {
				if r >= 0 && r < size { // every rank of a level is in a host
					groupOf[hostOf[r]*L+l] = gi
				}
			}
		}
	}
	gaps := make([]float64, L)
	for l := range gaps {
		gaps[l] = math.Inf(1)
	}
	if L == 0 {
		return gaps
	}
	m.EachPair(func(i, j int, d float64) {
		gi, gj := groupOf[i*L:(i+1)*L], groupOf[j*L:(j+1)*L]
		for l := range gaps {
			if gi[l] != gj[l] && d < gaps[l] {
				gaps[l] = d
			}
		}
	})
	return gaps
}

// singletons counts the ranks that are alone in their group.
func singletons(l topo.Level) int {
	k := 0
	for _, g := range l.Groups {
		if len(g) == 1 {
			k++
		}
	}
	return k
}

func topoRanks(ids []comm.Identity, blind bool) []topo.Rank {
	out := make([]topo.Rank, len(ids))
	for i, id := range ids {
		out[i] = topo.Rank{Rank: i}
		if blind {
			continue
		}
		out[i].Host = id.Host
		if id.Core >= 0 {
			c := id.Core
			out[i].Core = &c
		}
		if id.Socket >= 0 {
			s := id.Socket
			out[i].Socket = &s
		}
	}
	return out
}

// rttSection records the inference's measurements in world ranks.
func rttSection(reps []int, tree live.Result) *dataset.RTTSection {
	sec := &dataset.RTTSection{
		Schedule:   dataset.ScheduleSpec{Mode: "rtt-tree", Ranks: reps},
		PairsTotal: len(tree.Measured),
		Complete:   true,
		Runs:       1,
	}
	for _, m := range tree.Measured {
		sec.Pairs = append(sec.Pairs, dataset.PairResult[dataset.RTTResult]{
			A: reps[m.A], B: reps[m.B],
			Result: dataset.RTTResult{MinS: m.RTT.Min, MaxS: m.RTT.Max},
		})
	}
	return sec
}

// worldTree turns the inferred tree over representatives into a tree over
// all ranks: a representative standing for a host of several ranks becomes
// a host node with every rank of the host below it (zero-length edges: the
// inference did not measure inside hosts).
func worldTree(tt *topo.Tree, reps []int, hosts [][]int) *topo.Tree {
	if tt == nil {
		return nil
	}
	for i := range tt.Nodes {
		if tt.Nodes[i].Rank != nil {
			r := reps[*tt.Nodes[i].Rank]
			tt.Nodes[i].Rank = &r
			tt.Nodes[i].ID = "r" + strconv.Itoa(r)
		}
	}
	for i := range tt.Edges {
		tt.Edges[i].A = renameRank(tt.Edges[i].A, reps)
		tt.Edges[i].B = renameRank(tt.Edges[i].B, reps)
	}
	for hi, h := range hosts {
		if len(h) < 2 {
			continue
		}
		hostID := "h" + strconv.Itoa(hi)
		repID := "r" + strconv.Itoa(h[0])
		for i := range tt.Nodes {
			if tt.Nodes[i].ID == repID {
				tt.Nodes[i] = topo.Node{ID: hostID}
			}
		}
		for i := range tt.Edges {
			if tt.Edges[i].A == repID {
				tt.Edges[i].A = hostID
			}
			if tt.Edges[i].B == repID {
				tt.Edges[i].B = hostID
			}
		}
		for _, r := range h {
			rr := r
			id := "r" + strconv.Itoa(r)
			tt.Nodes = append(tt.Nodes, topo.Node{ID: id, Rank: &rr})
			tt.Edges = append(tt.Edges, topo.Edge{A: id, B: hostID})
		}
	}
	return tt
}

// treeWithBandwidth is the inferred tree in topology.json form, with the
// bandwidth map's measured bandwidth on its edges when there is a map.
func treeWithBandwidth(t *infer.Tree, m *infer.BandwidthMap) *topo.Tree {
	switch {
	case m != nil:
		return m.Topo()
	case t != nil:
		return t.Topo()
	}
	return nil
}

func renameRank(id string, reps []int) string {
	if len(id) > 1 && id[0] == 'r' {
		if k, err := strconv.Atoi(id[1:]); err == nil && k < len(reps) {
			return "r" + strconv.Itoa(reps[k])
		}
	}
	return id
}

// plogpSchedule chooses whom PLogP measures: at thorough, every pair
// (hierarchically along the levels, so independent groups run in
// parallel); at standard, one pair inside each group of the finest level
// and, between groups, one pair per two sibling groups of each coarser
// level (seed 004 Sect. 5.2 bounded by the hierarchy: the C(C+1)/2 pairs
// of C sockets were 10 minutes of a 2,048-rank discovery; the model
// gives every socket pair the measurement of the pair standing for it).
func plogpSchedule(n int, levels []topo.Level, l Level) dataset.ScheduleSpec {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	if l == Thorough {
		return dataset.ScheduleSpec{Mode: "serial", Ranks: all}
	}
	// The finest level whose groups are not all single ranks: the logical
	// subnets of seed 004 (a host level of one rank per host is a fact,
	// not a group to measure within).
	fi := len(levels) - 1
	for i, l := range levels {
		if len(l.Groups) < n {
			fi = i
			break
		}
	}
	spec := dataset.ScheduleSpec{Mode: "representative", Ranks: all, Groups: levels[fi].Groups, Parallel: true}
	for _, l := range levels[fi+1:] {
		spec.Levels = append(spec.Levels, l.Groups)
	}
	if _, err := probe.PlanOf(spec); err != nil {
		// Levels that do not nest cannot bound the pairs: every group
		// pair is measured.
		spec.Levels = nil
	}
	return spec
}

// specs holds the PLogP schedule once per process: every rank needs it,
// and it lists every rank in its groups and levels (O(N) each).
var specs intern.Table[dataset.ScheduleSpec]

// shareSpec broadcasts rank 0's schedule to every rank; ranks of one
// process share one read-only copy.
func shareSpec(ctx context.Context, c comm.Comm, spec *dataset.ScheduleSpec) (*dataset.ScheduleSpec, error) {
	var b []byte
	if c.Rank() == 0 {
		var err error
		if b, err = json.Marshal(spec); err != nil {
			return nil, err
		}
	}
	b, err := comm.BcastBytes(ctx, c, b)
	if err != nil {
		return nil, err
	}
	return specs.Get(b, func(b []byte) (*dataset.ScheduleSpec, error) {
		var s dataset.ScheduleSpec
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		return &s, nil
	})
}

// shareInts broadcasts rank 0's list of ranks (uint32 each) to every rank.
func shareInts(ctx context.Context, c comm.Comm, v []int) ([]int, error) {
	var b []byte
	if c.Rank() == 0 {
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		}
	}
	b, err := comm.BcastBytes(ctx, c, b)
	if err != nil {
		return nil, err
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("list of %d bytes from rank 0", len(b))
	}
	out := make([]int, len(b)/4)
	for i := range out {
		if out[i] = int(binary.LittleEndian.Uint32(b[4*i:])); out[i] >= c.Size() {
			return nil, fmt.Errorf("rank %d in rank 0's list, world of %d", out[i], c.Size())
		}
	}
	return out, nil
}

func methodName(sec *dataset.SwarmSection) string {
	if sec != nil {
		return "rtt-tree+agglomerative+swarm"
	}
	return "rtt-tree+agglomerative"
}

// withSwarmLevels imposes the swarm's bandwidth levels on levels (they
// take precedence over latency levels that cross them, as the bandwidth
// map's do) and returns the swarm's bandwidth tree.
func withSwarmLevels(n int, levels []topo.Level, sec *dataset.SwarmSection, reps []int, hosts [][]int) ([]topo.Level, *topo.BandwidthTree, error) {
	blevels, btree, err := swarmLevels(n, sec, reps, hosts)
	if err != nil {
		return nil, nil, err
	}
	for _, l := range blevels {
		levels = imposeLevel(levels, l)
	}
	return levels, btree, nil
}

// ThoroughSatMax is the largest saturation batch of the thorough level.
const ThoroughSatMax = 1280

// stagedSatMaxBytes is the largest size whose g(m) PLogP measures by
// saturation at thorough, and at standard on a real network.
const stagedSatMaxBytes = 4 << 10

// stagedBandwidthBytes is the long transfer of the bandwidth map on a
// real network.
const stagedBandwidthBytes = 4 << 20

// plogpEstimate bounds the PLogP campaign of spec: the sum over its pairs
// of probe.PLogPCost at the pair's round trip (twice the one-way distance
// the levels were cut from) and bandwidth (the bandwidth map's; 1 Gbit/s
// where the map has none, shared memory's 2 us and 5 GB/s inside a host).
// Pairs run in parallel count in full: it is a bound.
func plogpEstimate(spec dataset.ScheduleSpec, p dataset.PLogPParams, hosts [][]int, reps []int, dist cluster.Distances, bmap *infer.BandwidthMap) (time.Duration, int) {
	plan, err := probe.PlanOf(spec)
	if err != nil {
		return 0, 0
	}
	hostOf := map[int]int{}
	for i, h := range hosts {
		for _, r := range h {
			hostOf[r] = i
		}
	}
	// The clustered index of each host: reps[i] is the i-th clustered rank.
	index := map[int]int{}
	for i, r := range reps {
		index[hostOf[r]] = i
	}
	var total time.Duration
	pairs := plan.Pairs()
	for _, pr := range pairs {
		i, j := index[hostOf[pr.A]], index[hostOf[pr.B]]
		rtt, bw := 2e-6, 5e9
		if i != j {
			rtt, bw = 30e-6, 125e6
			if dist != nil {
				rtt = 2 * dist.At(i, j)
			}
			if bmap != nil {
				if b := bmap.Bandwidth(i, j); b > 0 && !math.IsInf(b, 1) {
					bw = b
				}
			}
		}
		total += probe.PLogPCost(p, rtt, bw)
	}
	return total, len(pairs)
}
