package discover

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"netaware/cluster"
	"netaware/comm"
	"netaware/comm/sim"
	"netaware/dataset"
	"netaware/metrics"
	"netaware/platform"
	"netaware/topo"
)

// runOnSim runs Run with opt on every rank of p in the simulator and
// returns rank 0's outcome.
func runOnSim(ctx context.Context, p *platform.Platform, so sim.Options, opt Options) (*Outcome, sim.Result, error) {
	var out *Outcome
	res, err := sim.Run(ctx, p, so, func(ctx context.Context, c comm.Comm) error {
		o, err := Run(ctx, c, opt)
		if c.Rank() == 0 {
			out = o
		}
		return err
	})
	return out, res, err
}

func discoverOn(t *testing.T, name string, opt Options) (*Outcome, *platform.Platform, sim.Result) {
	t.Helper()
	p, err := platform.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	out, res, err := runOnSim(context.Background(), p, sim.Options{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Topology.Validate(); err != nil {
		t.Fatalf("topology invalid: %v", err)
	}
	return out, p, res
}

// bestNMI is the best NMI of any found level against the truth level.
func bestNMI(found []topo.Level, truth topo.Level, n int) float64 {
	best := 0.0
	for _, l := range found {
		if v, err := metrics.NMIGroups(l.Groups, truth.Groups, n); err == nil && v > best {
			best = v
		}
	}
	return best
}

func truthLevel(t *testing.T, p *platform.Platform, name string) topo.Level {
	t.Helper()
	for _, l := range p.Truth() {
		if l.Name == name {
			return topo.Level{Name: l.Name, Groups: l.Groups}
		}
	}
	t.Fatalf("platform %s has no truth level %q", p.Name, name)
	return topo.Level{}
}

func TestDiscoverGrid5000FindsFourSites(t *testing.T) {
	out, p, res := discoverOn(t, "grid5000-4sites", DefaultOptions())
	for _, l := range out.Topology.Levels {
		t.Logf("level %s: %d groups", l.Name, len(l.Groups))
	}
	t.Logf("virtual %v, pairs %d/%d", res.VirtualTime, out.Topology.Measurements.PairsMeasured, out.Topology.Measurements.PairsTotal)
	sites := truthLevel(t, p, "switch")
	if len(sites.Groups) != 4 {
		t.Fatalf("truth has %d sites", len(sites.Groups))
	}
	if v := bestNMI(out.Topology.Levels, sites, p.NumRanks()); v < 1-1e-12 {
		t.Errorf("sites: best NMI %.4f, want 1", v)
	}
	if l := out.Topology.Levels; l[0].Name != "host" || len(l[0].Groups) != 64 || l[1].Name != "site" || len(l[1].Groups) != 4 {
		t.Errorf("levels %s (%d groups), %s (%d groups): want the 64 hosts (one rank each, from identities), then the 4 sites",
			l[0].Name, len(l[0].Groups), l[1].Name, len(l[1].Groups))
	}
	withBW := 0
	for _, e := range out.Topology.Tree.Edges {
		if e.Bandwidth != nil && *e.Bandwidth > 0 {
			withBW++
		}
	}
	if withBW == 0 {
		t.Errorf("standard level: no tree edge carries a bandwidth (seed 002 Sect. 6.1 map)")
	}
	// One PLogP pair inside each site and one per two sibling groups of
	// each level above the sites (seed 004's C(C+1)/2 = 10 for the 4
	// sites, bounded by the hierarchy).
	if want := representativePairs(out.Topology.Levels[1:]); out.Dataset.PLogP == nil || len(out.Dataset.PLogP.Pairs) != want || want > 4*5/2 {
		t.Errorf("standard level: %d PLogP pairs, want %d (at most C(C+1)/2 = 10 for 4 sites, seed 004)", len(out.Dataset.PLogP.Pairs), want)
	}
}

// TestDiscoverFramBlindFindsSocketsAndNodes: with host names and core ids
// ignored, the socket and node levels come from measurement alone (seed
// 003's setting), each exactly (NMI = 1).
func TestDiscoverFramBlindFindsSocketsAndNodes(t *testing.T) {
	opt := DefaultOptions()
	opt.Level, opt.Blind = Fast, true
	out, p, _ := discoverOn(t, "testdata/fram-4nodes.yaml", opt)
	n := p.NumRanks()
	for _, l := range out.Topology.Levels {
		t.Logf("level %s: %d groups", l.Name, len(l.Groups))
	}
	for _, name := range []string{"socket", "host"} {
		if v := bestNMI(out.Topology.Levels, truthLevel(t, p, name), n); v < 1-1e-12 {
			t.Errorf("truth level %s: best NMI %.4f, want 1", name, v)
		}
	}
}

// TestDiscoverFramLikeSocketsHostsFromIdentityIslandsMeasured: without
// --blind, sockets and hosts come from what ranks report (seed 004 Sect.
// 4.2) and one rank per host joins the inference, which finds the two
// InfiniBand islands.
func TestDiscoverFramLikeSocketsHostsFromIdentityIslandsMeasured(t *testing.T) {
	opt := DefaultOptions()
	opt.Level = Fast
	out, p, _ := discoverOn(t, "fram-like", opt)
	n := p.NumRanks()
	if len(out.Clustered) != 16 {
		t.Errorf("%d ranks took part in the inference, want one per host (16)", len(out.Clustered))
	}
	for _, name := range []string{"socket", "host", "switch"} {
		if v := bestNMI(out.Topology.Levels, truthLevel(t, p, name), n); v < 1-1e-12 {
			t.Errorf("truth level %s: best NMI %.4f, want 1", name, v)
		}
	}
	if got := out.Topology.Levels[0].Name; got != "socket" {
		t.Errorf("finest level %q, want socket", got)
	}
}

// TestFinishLevelsDropsNoiseLevels: a measured level that pairs two ranks
// and leaves the others alone is dropped; identity levels are kept; equal
// consecutive levels merge under the coarser name; "all" ends the list.
func TestFinishLevelsDropsNoiseLevels(t *testing.T) {
	host := topo.Level{Name: "host", Groups: [][]int{{0}, {1}, {2}, {3}}}
	noise := topo.Level{Name: "level", Groups: [][]int{{0, 1}, {2}, {3}}}
	halves := topo.Level{Name: "level", Groups: [][]int{{0, 1}, {2, 3}}}
	same := topo.Level{Name: "level", Groups: [][]int{{0, 1}, {2, 3}}}
	m := cluster.NewMatrix(4)
	for i := 0; i < 4; i++ {
		for j := i + 1; j < 4; j++ {
			if i/2 == j/2 {
				m.Set(i, j, 1e-5)
			} else {
				m.Set(i, j, 5e-4)
			}
		}
	}
	got := finishLevels(4, []topo.Level{host, noise, halves, same}, m, [][]int{{0}, {1}, {2}, {3}}, false)
	var names []string
	for _, l := range got {
		names = append(names, fmt.Sprintf("%s/%d", l.Name, len(l.Groups)))
	}
	if want := "host/4 switch/2 all/1"; strings.Join(names, " ") != want {
		t.Fatalf("levels %v, want %s", names, want)
	}
}

// TestDiscoverAnyEagerLimit: the whole standard discovery (identities, the
// tree, the bandwidth map, the PLogP campaign, the broadcasts) completes
// whatever the eager limit (everything by rendezvous, 1 byte, 512 bytes)
// and still finds fram-4nodes' sockets and hosts blind (noise off, so
// that the answer does not hang on the seed).
func TestDiscoverAnyEagerLimit(t *testing.T) {
	p, err := platform.Load("testdata/fram-4nodes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, eager := range []int{-1, 1, 512} {
		opt := DefaultOptions()
		opt.Blind = true
		out, _, err := runOnSim(context.Background(), p, sim.Options{EagerLimit: eager, NoNoise: true}, opt)
		if err != nil {
			t.Fatalf("eager limit %d: %v", eager, err)
		}
		for _, name := range []string{"socket", "host"} {
			if v := bestNMI(out.Topology.Levels, truthLevel(t, p, name), p.NumRanks()); v < 1-1e-12 {
				t.Errorf("eager limit %d: truth level %s found with NMI %.4f, want 1", eager, name, v)
			}
		}
		if out.Dataset.PLogP == nil || len(out.Dataset.PLogP.Pairs) == 0 {
			t.Errorf("eager limit %d: no PLogP measured", eager)
		}
	}
}

// representativePairs counts the standard level's PLogP pairs over nested
// levels (finest first, ending with one group): one inside each finest
// group of two ranks or more, one per two sibling groups of every level
// above.
func representativePairs(levels []topo.Level) int {
	n := 0
	for _, g := range levels[0].Groups {
		if len(g) >= 2 {
			n++
		}
	}
	for k := 1; k < len(levels); k++ {
		for _, parent := range levels[k].Groups {
			kids := 0
			for _, c := range levels[k-1].Groups {
				if slices.Contains(parent, c[0]) {
					kids++
				}
			}
			n += kids * (kids - 1) / 2
		}
	}
	return n
}

// Two NIC generations on each of two switches (5 us and 40 us host links,
// emu/testdata): by path length the fast hosts of both switches are closer
// to each other than to their slow switch-mates, so a cut of the path
// lengths groups NIC speeds; the hosts hanging from each switch of the tree
// give the switches (issue 17).
func TestTwoNICGenerationsGiveTheSwitches(t *testing.T) {
	for _, blind := range []bool{false, true} {
		opt := DefaultOptions()
		opt.Blind = blind
		out, p, _ := discoverOn(t, "../emu/testdata/two-nic-generations.yaml", opt)
		if nmi := bestNMI(out.Topology.Levels, truthLevel(t, p, "switch"), p.NumRanks()); nmi < 0.99 {
			t.Errorf("blind %v: switch level best NMI %.3f, want >= 0.99; levels %v", blind, nmi, out.Topology.Levels)
		}
	}
}

// renamed is a rank that reports another host name than its own.
type renamed struct {
	comm.Comm
	host string
}

func (r renamed) Identity() comm.Identity {
	id := r.Comm.Identity()
	id.Host = r.host
	return id
}

// Ranks 0 and 1 of a 2 x 6 star report the same host name although they
// are two machines on a switch: the round trip between them is a network's,
// so discovery says so and measures every level instead of trusting the
// names (issue 17); with true names it says nothing.
func TestSameHostNameOverANetworkIsMeasured(t *testing.T) {
	p, err := platform.Load("../emu/testdata/star-2x6.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, lie := range []bool{false, true} {
		var out *Outcome
		_, err := sim.Run(context.Background(), p, sim.Options{}, func(ctx context.Context, c comm.Comm) error {
			if lie && c.Rank() <= 1 {
				c = renamed{c, "a0"}
			}
			o, err := Run(ctx, c, DefaultOptions())
			if c.Rank() == 0 {
				out = o
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(out.Warnings); lie != (got > 0) {
			t.Fatalf("names lie %v: warnings %q", lie, out.Warnings)
		}
		if lie && !strings.Contains(out.Warnings[0], "ranks 0 and 1 report the same host name") {
			t.Errorf("warning %q does not name ranks 0 and 1", out.Warnings[0])
		}
		if nmi := bestNMI(out.Topology.Levels, truthLevel(t, p, "switch"), p.NumRanks()); nmi < 0.99 {
			t.Errorf("names lie %v: switch level NMI %.3f; levels %v", lie, nmi, out.Topology.Levels)
		}
	}
}

// One host name on two machines (kernels, or network namespaces of one
// kernel: containers, emulated hosts) is two hosts.
func TestHostGroupsSplitMachines(t *testing.T) {
	ids := []comm.Identity{
		{Rank: 0, Host: "n", Machine: "k1/net:[1]"},
		{Rank: 1, Host: "n", Machine: "k1/net:[1]"},
		{Rank: 2, Host: "n", Machine: "k1/net:[2]"},
		{Rank: 3, Host: "m", Machine: "k1/net:[2]"},
	}
	if got, want := fmt.Sprint(hostGroups(ids, false)), "[[0 1] [2] [3]]"; got != want {
		t.Errorf("host groups %s, want %s", got, want)
	}
}

// TestAdvanceCountsUpToTheTotal: the inference reports every rank joining
// the tree in order and the PLogP campaign its pairs, each phase counting
// up to its total, under the phase rank 0 announced.
func TestAdvanceCountsUpToTheTotal(t *testing.T) {
	opt := DefaultOptions()
	opt.Blind = true
	var mu sync.Mutex
	phase := ""
	counts := map[string][][2]int{}
	opt.Progress = func(s string) {
		mu.Lock()
		defer mu.Unlock()
		phase = s
	}
	opt.Advance = func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		counts[phase] = append(counts[phase], [2]int{done, total})
	}
	out, p, _ := discoverOn(t, "testdata/fram-4nodes.yaml", opt)
	n := p.NumRanks()
	infer := counts[fmt.Sprintf("rtt tree inference over %d ranks", n)]
	if len(infer) != n {
		t.Fatalf("inference: %d calls %v, want one per rank (%d)", len(infer), infer, n)
	}
	for i, c := range infer {
		if c != [2]int{i + 1, n} {
			t.Fatalf("inference: call %d is %v, want %v", i, c, [2]int{i + 1, n})
		}
	}
	plogp := counts["plogp (representative schedule)"]
	pairs := len(out.Dataset.PLogP.Pairs)
	if len(plogp) < 2 || plogp[len(plogp)-1] != [2]int{pairs, pairs} {
		t.Fatalf("plogp: calls %v, want them to end at %d of %d", plogp, pairs, pairs)
	}
	for i := 1; i < len(plogp); i++ {
		if plogp[i][0] < plogp[i-1][0] || plogp[i][1] != pairs {
			t.Fatalf("plogp: calls %v do not count up to %d", plogp, pairs)
		}
	}
	if len(counts) != 2 {
		t.Errorf("advance called under phases %v, want the inference's and the campaign's", counts)
	}
}

// TestResumeKeepsCheckpointedPairs: a discovery interrupted during its
// PLogP phase (the context cancelled once the checkpoint hook saw a few
// pairs) continues from the checkpointed dataset: the pairs measured
// before are kept byte for byte, the others measured, and the campaign
// starts where the checkpoint left off.
func TestResumeKeepsCheckpointedPairs(t *testing.T) {
	p, err := platform.Load("testdata/fram-4nodes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, opt Options) (*Outcome, error) {
		out, _, err := runOnSim(ctx, p, sim.Options{}, opt)
		return out, err
	}
	const stopAfter = 3
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt := DefaultOptions()
	opt.Blind = true
	var saved []byte
	opt.Checkpoint = func(ds *dataset.Dataset, final bool) error {
		if saved == nil && !final && ds.PLogP != nil && len(ds.PLogP.Pairs) == stopAfter {
			var err error
			if saved, err = json.Marshal(ds); err != nil {
				return err
			}
			cancel()
		}
		return nil
	}
	if _, err := run(ctx, opt); err == nil {
		t.Fatal("the interrupted discovery succeeded")
	}
	if saved == nil {
		t.Fatal("the checkpoint hook never saw the PLogP pairs")
	}
	var resume dataset.Dataset
	if err := json.Unmarshal(saved, &resume); err != nil {
		t.Fatal(err)
	}
	opt = DefaultOptions()
	opt.Blind = true
	opt.Resume = &resume
	var mu sync.Mutex
	var phases []string
	campaign := -1 // the campaign's first count
	opt.Progress = func(s string) { mu.Lock(); phases = append(phases, s); mu.Unlock() }
	opt.Advance = func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if campaign < 0 && strings.HasPrefix(phases[len(phases)-1], "plogp") {
			campaign = done
		}
	}
	out, err := run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	sec := out.Dataset.PLogP
	if !sec.Complete || len(sec.Pairs) != sec.PairsTotal || sec.PairsTotal <= stopAfter {
		t.Fatalf("resumed section: %d of %d pairs, complete %v", len(sec.Pairs), sec.PairsTotal, sec.Complete)
	}
	if out.Kept != stopAfter || sec.Runs != 2 {
		t.Errorf("kept %d pairs in run %d, want %d in run 2", out.Kept, sec.Runs, stopAfter)
	}
	for i := 0; i < stopAfter; i++ {
		a, _ := json.Marshal(resume.PLogP.Pairs[i])
		b, _ := json.Marshal(sec.Pairs[i])
		if string(a) != string(b) {
			t.Errorf("kept pair %d changed:\n%s\n%s", i, a, b)
		}
	}
	seen := map[[2]int]bool{}
	for _, pr := range sec.Pairs {
		if seen[[2]int{pr.A, pr.B}] {
			t.Errorf("pair %d-%d measured twice", pr.A, pr.B)
		}
		seen[[2]int{pr.A, pr.B}] = true
	}
	if !slices.ContainsFunc(phases, func(s string) bool { return strings.Contains(s, "3 pairs kept") }) {
		t.Errorf("no phase says what was kept: %q", phases)
	}
	if campaign != stopAfter {
		t.Errorf("the resumed campaign started at %d pairs, want %d", campaign, stopAfter)
	}
	// A schedule of another level cannot be continued.
	opt.Level = Thorough
	opt.Advance, opt.Progress = nil, nil
	if _, err := run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "resume") {
		t.Errorf("resuming a standard discovery at thorough: %v", err)
	}
}

// TestDefaultDemoAcrossNoiseSeeds: the demo a new user runs first
// (discover on grid5000-4sites) is right whatever the noise draws: over
// noise seeds 1-12 the tree predicts at least 95% of the 2016 host pairs'
// one-way latencies within 5%, finds the four sites exactly, and labels
// each WAN link (an edge of a millisecond or more) within 15% of the 1
// Gbit/s that bulk transfers across it achieve (the hosts' NICs are the
// bottleneck; the WAN links carry 10 Gbit/s).
func TestDefaultDemoAcrossNoiseSeeds(t *testing.T) {
	p, err := platform.Load("grid5000-4sites")
	if err != nil {
		t.Fatal(err)
	}
	n := p.NumRanks()
	sites := truthLevel(t, p, "switch")
	var pairs [][2]int
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			pairs = append(pairs, [2]int{a, b})
		}
	}
	const nic = 1e9 / 8
	for seed := int64(1); seed <= 12; seed++ {
		out, _, err := runOnSim(context.Background(), p, sim.Options{Seed: seed}, DefaultOptions())
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		paths, err := out.Topology.Paths()
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		_, s, err := metrics.LatencyRatios(pairs, paths.PathLatency, func(a, b int) (float64, error) { return p.Route(a, b).LatencyS, nil })
		if err != nil {
			t.Fatal(err)
		}
		if s.Within5 < 0.95 {
			t.Errorf("seed %d: %.1f%% of host pairs within 5%% of their latency, want >= 95%%", seed, 100*s.Within5)
		}
		if v := bestNMI(out.Topology.Levels, sites, n); v < 1-1e-9 {
			t.Errorf("seed %d: sites found at NMI %.4f, want 1", seed, v)
		}
		wan := 0
		for _, e := range out.Topology.Tree.Edges {
			if e.LatencyS < 1e-3 {
				continue
			}
			wan++
			if e.Bandwidth == nil || math.Abs(*e.Bandwidth/nic-1) > 0.15 {
				got := 0.0
				if e.Bandwidth != nil {
					got = *e.Bandwidth
				}
				t.Errorf("seed %d: WAN edge %s-%s labelled %.1f MB/s, want within 15%% of %.0f MB/s", seed, e.A, e.B, got/1e6, nic/1e6)
			}
		}
		if wan != 3 {
			t.Errorf("seed %d: %d WAN edges (>= 1 ms) in the tree, want 3 (Bordeaux, Grenoble, Toulouse to Lyon)", seed, wan)
		}
	}
}

// TestScaleBlindAcrossNoiseSeeds: blind discovery on the generated
// two-level cluster of 256 ranks (16 hosts of 2 sockets x 8 cores, 8 hosts
// per leaf switch, 2% jitter) gives every truth level (sockets, hosts,
// switches) at NMI >= 0.99 on noise seeds 1-10 (issue 18; seed 1 hung a
// host inside its neighbour before Adder.refit). The same at 1,024 ranks
// runs with NETAWARE_SCALE=1 (about 15 s of CPU a seed).
func TestScaleBlindAcrossNoiseSeeds(t *testing.T) {
	sizes := []int{256}
	if os.Getenv("NETAWARE_SCALE") != "" {
		sizes = append(sizes, 1024)
	}
	for _, n := range sizes {
		p, err := platform.Load(fmt.Sprintf("../platform/testdata/scale/two-level-%d.yaml", n))
		if err != nil {
			t.Fatal(err)
		}
		for seed := int64(1); seed <= 10; seed++ {
			opt := DefaultOptions()
			opt.Blind, opt.Level = true, Fast
			out, _, err := runOnSim(context.Background(), p, sim.Options{Seed: seed}, opt)
			if err != nil {
				t.Fatalf("%d ranks, seed %d: %v", n, seed, err)
			}
			for _, l := range p.TruthLevels() {
				if v := bestNMI(out.Topology.Levels, l, n); v < 0.99 {
					t.Errorf("%d ranks, seed %d: truth level %s (%d groups) found at NMI %.3f at best", n, seed, l.Name, len(l.Groups), v)
				}
			}
		}
	}
}

// The same 256 ranks with the levels clustered by the tree's clean parts
// (as above 1,024 ranks), not on the whole matrix: the same levels as the
// matrix gives, every truth level at NMI >= 0.99.
func TestScaleBlindByTreeParts(t *testing.T) {
	p, err := platform.Load("../platform/testdata/scale/two-level-256.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer func(v int) { denseLevelRanks = v }(denseLevelRanks)
	for seed := int64(1); seed <= 3; seed++ {
		var levels [2][]topo.Level
		for k, dense := range []int{1024, 32} {
			denseLevelRanks = dense
			opt := DefaultOptions()
			opt.Blind, opt.Level = true, Fast
			out, _, err := runOnSim(context.Background(), p, sim.Options{Seed: seed}, opt)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			levels[k] = out.Topology.Levels
		}
		for _, l := range p.TruthLevels() {
			if v := bestNMI(levels[1], l, 256); v < 0.99 {
				t.Errorf("seed %d: truth level %s found at NMI %.3f at best by parts", seed, l.Name, v)
			}
		}
		if len(levels[0]) != len(levels[1]) {
			t.Fatalf("seed %d: %d levels by parts, %d on the matrix", seed, len(levels[1]), len(levels[0]))
		}
		for k := range levels[0] {
			if !slices.EqualFunc(levels[0][k].Groups, levels[1][k].Groups, slices.Equal) {
				t.Errorf("seed %d: level %d (%s) by parts differs from the matrix's", seed, k, levels[0][k].Name)
			}
		}
	}
}

// TestRacksOfSlowNICsBlindAcrossNoiseSeeds: issue 17's ordinary cluster,
// 16 hosts of 2 x 8 cores on 1 GbE with 20 us NICs in 2 racks
// (testdata/racks-16x2x8-1gbe.yaml), blind with 2% jitter, noise seeds
// 1-10: sockets, hosts and racks each found at NMI >= 0.99, and no level
// beyond them. Path lengths put the racks 40 and 44 us apart (a 10%
// step); the rack level comes from where the hosts hang in the tree
// (withAttachmentLevels). Seeds 4 and 7 left the first ranks of a socket
// hung from their host's other socket, never measured with their own
// socket-mates, a spurious level of singletons, until the pairs
// infer.Unseen names were measured (settleUnseen).
func TestRacksOfSlowNICsBlindAcrossNoiseSeeds(t *testing.T) {
	p, err := platform.Load("testdata/racks-16x2x8-1gbe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seeds := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	n, truth := p.NumRanks(), p.TruthLevels()
	spurious := 0
	for _, seed := range seeds {
		opt := DefaultOptions()
		opt.Blind, opt.Level = true, Fast
		out, _, err := runOnSim(context.Background(), p, sim.Options{Seed: seed}, opt)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, l := range truth {
			if v := bestNMI(out.Topology.Levels, l, n); v < 0.99 {
				t.Errorf("seed %d: truth level %s (%d groups) found at NMI %.3f at best", seed, l.Name, len(l.Groups), v)
			}
		}
		if len(out.Topology.Levels) != len(truth) {
			spurious++
			var got []int
			for _, l := range out.Topology.Levels {
				got = append(got, len(l.Groups))
			}
			t.Logf("seed %d: levels of %v groups, truth %d levels", seed, got, len(truth))
		}
	}
	if spurious > 0 {
		t.Errorf("spurious levels in %d of %d seeds, want none", spurious, len(seeds))
	}
}
