package coll

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/platform"
	"netaware/topo"
)

// truthTopology is the platform's ground-truth levels as a topology (what
// tune uses when no topology.json is given).
func truthTopology(p *platform.Platform) *topo.Topology {
	t := &topo.Topology{Version: topo.Version, Size: p.NumRanks()}
	t.Levels = p.TruthLevels()
	return t
}

// simPlatformBcast is the virtual time of one broadcast of n bytes with s
// on platform p, noise off, from the common start to the last rank's
// return.
func simPlatformBcast(tb testing.TB, p *platform.Platform, s *Schedule, n int) (time.Duration, sim.Result) {
	tb.Helper()
	var end time.Duration
	var mu sync.Mutex
	// Every rank broadcasts into the same buffer: virtual time does not
	// depend on the bytes, 512 ranks x 256 MiB would not fit in memory,
	// and the simulator skips the copy of a rendezvous message whose
	// source and destination are the same memory.
	buf := make([]byte, n)
	res, err := sim.Run(context.Background(), p, sim.Options{NoNoise: true}, func(ctx context.Context, c comm.Comm) error {
		if err := s.Bcast(ctx, c, buf); err != nil {
			return err
		}
		mu.Lock()
		end = max(end, c.Now())
		mu.Unlock()
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return end, res
}

// bottleneckBps is the broadcast's bandwidth bound on a tree platform:
// every link with ranks on both sides must carry the whole message, so no
// broadcast beats M / (the slowest such link). Those links are exactly the
// ones on the routes from rank 0 to the others and back.
func bottleneckBps(p *platform.Platform) float64 {
	res := p.Resources()
	b := math.Inf(1)
	for r := 1; r < p.NumRanks(); r++ {
		for _, rt := range []platform.Route{p.Route(0, r), p.Route(r, 0)} {
			for _, x := range rt.Forward {
				b = min(b, res[x].BandwidthBps)
			}
		}
	}
	return b
}

// linkLoad counts, per directed resource, how many parent -> child edges
// of s send data over it, and returns the largest count among resources
// of bandwidth at most bw.
func linkLoad(p *platform.Platform, s *Schedule, bw float64) (maxLoad int, worst string) {
	res := p.Resources()
	load := make([]int, len(res))
	for parent, ch := range s.Children {
		for _, c := range ch {
			for _, x := range p.Route(parent, c).Forward {
				load[x]++
			}
		}
	}
	for x, l := range load {
		if res[x].BandwidthBps <= bw && l > maxLoad {
			maxLoad, worst = l, res[x].Name
		}
	}
	return maxLoad, worst
}

// dfsEfficiency broadcasts n bytes from rank 0 with a on platform p and
// returns (n / bottleneck bandwidth) / virtual time.
func dfsEfficiency(tb testing.TB, p *platform.Platform, a Algorithm, n int) (eff float64, d time.Duration, res sim.Result) {
	tb.Helper()
	s, err := a.Build(p.NumRanks(), 0, truthTopology(p))
	if err != nil {
		tb.Fatal(err)
	}
	d, res = simPlatformBcast(tb, p, s, n)
	return float64(n) / bottleneckBps(p) / d.Seconds(), d, res
}

// Seed 002 Sect. 6.2: "When the real topology is a tree, optimal bandwidth
// can be obtained by pipelining the message so that each link is used at
// most once in each direction. We create such a pipeline by performing a
// depth-first traversal". On dichev-n1 (seed 000's network N1: 512 hosts
// under 8 leaf routers of a binary router tree, 1 Gbps everywhere except
// four 100 Mbps backbone links), the depth-first order of the ground-truth
// tree must load every directed link at most once.
func TestShiraiDFSOrderUsesEachLinkOncePerDirection(t *testing.T) {
	p, err := platform.Load("dichev-n1")
	if err != nil {
		t.Fatal(err)
	}
	tp := truthTopology(p)
	for _, root := range []int{0, 100, 511} {
		s, err := DFSPipeline(tp, p.NumRanks(), root, 0)
		if err != nil {
			t.Fatal(err)
		}
		if l, name := linkLoad(p, s, math.Inf(1)); l != 1 {
			t.Errorf("root %d: the chain loads %s %d times", root, name, l)
		}
		// With a fan-out inside the leaf switches, host links carry
		// several copies but every backbone link still carries one.
		f, err := DFSPipelineFanout(tp, p.NumRanks(), root, 0, 4)
		if err != nil {
			t.Fatal(err)
		}
		if l, name := linkLoad(p, f, bottleneckBps(p)); l != 1 {
			t.Errorf("root %d: the fan-out pipeline loads bottleneck %s %d times", root, name, l)
		}
		if d, want := f.Depth(), 7+3; d != want {
			t.Errorf("root %d: fan-out 4 pipeline depth %d, want %d (7 leaf switches to cross, log4(64) inside)", root, d, want)
		}
	}
}

// dichevN1Small is dichev-n1's router tree (15 routers, 1 Gbps links
// except the four 100 Mbps bottlenecks, 100 us per router link, 50 us per
// host link) with 8 hosts per leaf router instead of 64: 64 ranks, the
// same bottlenecks and the same depth-first crossings, cheap enough to
// simulate 64 MiB in CI.
func dichevN1Small() (*platform.Platform, error) {
	y := `version: 1
name: dichev-n1-small
switches: ["R[1-15]"]
links:
  - {between: [R1, R9], bandwidth: 1Gbps, latency: 100us}
  - {between: [R2, R9], bandwidth: 1Gbps, latency: 100us}
  - {between: [R3, R10], bandwidth: 1Gbps, latency: 100us}
  - {between: [R4, R10], bandwidth: 1Gbps, latency: 100us}
  - {between: [R5, R13], bandwidth: 1Gbps, latency: 100us}
  - {between: [R6, R13], bandwidth: 1Gbps, latency: 100us}
  - {between: [R7, R14], bandwidth: 1Gbps, latency: 100us}
  - {between: [R8, R14], bandwidth: 1Gbps, latency: 100us}
  - {between: [R9, R11], bandwidth: 100Mbps, latency: 100us}
  - {between: [R10, R11], bandwidth: 100Mbps, latency: 100us}
  - {between: [R13, R12], bandwidth: 100Mbps, latency: 100us}
  - {between: [R14, R12], bandwidth: 100Mbps, latency: 100us}
  - {between: [R11, R15], bandwidth: 1Gbps, latency: 100us}
  - {between: [R12, R15], bandwidth: 1Gbps, latency: 100us}
hosts:
`
	for leaf := 1; leaf <= 8; leaf++ {
		y += fmt.Sprintf("  - {names: \"h%d-[1-8]\", switch: R%d, link: {bandwidth: 1Gbps, latency: 50us}}\n", leaf, leaf)
	}
	y += "tcp: {crosstraffic: 0.05}\n"
	return platform.Parse("dichev-n1-small.yaml", []byte(y))
}

// Seed 002 reached 88% of the optimal pipeline's bandwidth. Our claim,
// issue 7: the depth-first pipeline over the tree reaches >= 95% of the
// bottleneck-bandwidth bound M / B (B = 100 Mbps here) in total broadcast
// time, in virtual time (noise off, so the figure is exact, not a timer).
//
// The bound is not fully reachable: a depth-first chain must cross two of
// the four bottlenecks down and back up, and the simulator's TCP model
// loads a link's reverse direction with 5% of every flow (crosstraffic
// 0.05), so the steady state is at most 1/1.05 = 95.24% of B and the fill
// of the pipeline must stay under 0.25% of the total. The plain chain
// cannot do that at any size we can simulate (its 511 hops cost 51 ms of
// latency alone on dichev-n1); the fan-out pipeline (4 per leaf switch)
// fills in under 6 ms with 8 KiB segments. 32 MiB is the smallest power
// of two where it passes 95% (16 MiB: 94.86%; the latency alone, 2.9 ms,
// leaves no room there). CI runs the 64-rank copy of dichev-n1's tree;
// NETAWARE_FULL_COLL=1 adds dichev-n1 itself (512 ranks, minutes). The
// efficiency table is in docs/collectives.md (TestDFSEfficiencyTable).
func TestShiraiDFSPipelineNearBottleneckBound(t *testing.T) {
	small, err := dichevN1Small()
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		p   *platform.Platform
		mib int
	}
	runs := []run{{small, 32}}
	if os.Getenv("NETAWARE_FULL_COLL") != "" {
		big, err := platform.Load("dichev-n1")
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run{big, 32})
	}
	a := Algorithm{Name: "dfs-pipeline", SegSize: 8 << 10, K: 4}
	for _, r := range runs {
		p := r.p
		if b := bottleneckBps(p); b != 12.5e6 {
			t.Fatalf("%s: bottleneck %v B/s, want 12.5e6 (100 Mbps)", p.Name, b)
		}
		n := r.mib << 20
		eff, d, res := dfsEfficiency(t, p, a, n)
		t.Logf("%s (%d ranks), %d MiB, %s: %v virtual, %.2f%% of the bound (%d messages)", p.Name, p.NumRanks(), r.mib, a, d, 100*eff, res.Messages)
		if eff < 0.95 {
			t.Errorf("%s: efficiency %.2f%% < 95%%", p.Name, 100*eff)
		}
		if eff > 1/1.05+1e-9 {
			t.Errorf("%s: efficiency %.4f above the 1/1.05 the crosstraffic allows: the bound or the simulation is wrong", p.Name, eff)
		}
	}
}

// TestDFSEfficiencyTable prints the efficiency of the depth-first pipeline
// per platform, variant and message size (by hand, it simulates hundreds
// of megabytes):
//
//	NETAWARE_DFS_TABLE=dichev-n1 NETAWARE_DFS_MIB=4,16,64,256 go test -run TestDFSEfficiencyTable -v -timeout 0 ./coll
//
// NETAWARE_DFS_ALGS lists variants as k:seg pairs (k 0 is the chain).
func TestDFSEfficiencyTable(t *testing.T) {
	name := os.Getenv("NETAWARE_DFS_TABLE")
	if name == "" {
		t.Skip("set NETAWARE_DFS_TABLE=platform to print the efficiency table")
	}
	p, err := platform.Load(name)
	if name == "dichev-n1-small" {
		p, err = dichevN1Small()
	}
	if err != nil {
		t.Fatal(err)
	}
	if v := os.Getenv("NETAWARE_DFS_PERHOST"); v != "" {
		k, _ := strconv.Atoi(v)
		if p, err = p.Place(k, os.Getenv("NETAWARE_DFS_ORDER")); err != nil {
			t.Fatal(err)
		}
	}
	mibs := ints(t, os.Getenv("NETAWARE_DFS_MIB"), "4,16,64,256")
	variants := os.Getenv("NETAWARE_DFS_ALGS")
	if variants == "" {
		variants = "0:16384,4:16384"
	}
	t.Logf("%s: %d ranks, bottleneck %.4g MB/s", name, p.NumRanks(), bottleneckBps(p)/1e6)
	for _, v := range strings.Split(variants, ",") {
		var k, seg int
		if _, err := fmt.Sscanf(v, "%d:%d", &k, &seg); err != nil {
			t.Fatalf("variant %q: want k:seg", v)
		}
		a := Algorithm{Name: "dfs-pipeline", K: k, SegSize: seg}
		for _, m := range mibs {
			start := time.Now()
			eff, d, res := dfsEfficiency(t, p, a, m<<20)
			t.Logf("| %s | %d MiB | %.4f s | %.4f s | %.2f%% | %d msgs, wall %v |", a, m, d.Seconds(), float64(m<<20)/bottleneckBps(p), 100*eff, res.Messages, time.Since(start).Round(time.Second))
		}
	}
}

func ints(t *testing.T, s, def string) []int {
	if s == "" {
		s = def
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		out = append(out, v)
	}
	return out
}

// Hand-worked: 12 ranks on 3 switches, root 0, fan-out 2. The runs of
// the depth-first order are {0..3}, {4..7}, {8..11}; each run's first
// rank feeds the next run's first rank, then a binary heap of its run.
func TestDFSPipelineFanoutTree(t *testing.T) {
	tp := &topo.Topology{Version: 1, Size: 12}
	for r := range 12 {
		tp.Ranks = append(tp.Ranks, topo.Rank{Rank: r})
	}
	tp.Levels = []topo.Level{{Name: "switch", Groups: [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}}}}
	s, err := DFSPipelineFanout(tp, 12, 0, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{4, 1, 2}, {3}, {}, {}, {8, 5, 6}, {7}, {}, {}, {9, 10}, {11}, {}, {}}
	for r, ch := range s.Children {
		if !slices.Equal(ch, want[r]) {
			t.Errorf("children of %d: %v, want %v", r, ch, want[r])
		}
	}
	if s.SegSize != 100 || s.Depth() != 4 {
		t.Errorf("segment %d depth %d, want 100 and 4", s.SegSize, s.Depth())
	}
	// Root 6: its run comes first, led by 6.
	s, err = DFSPipelineFanout(tp, 12, 6, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Children[6]; !slices.Equal(got, []int{0, 4, 5}) {
		t.Errorf("root 6 sends to %v, want [0 4 5] (next switch first, then its own heap)", got)
	}
	// Fan-out 1 is the plain chain.
	c, err := DFSPipelineFanout(tp, 12, 0, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Depth() != 11 || c.SegSize != DefaultSegSize {
		t.Errorf("fan-out 1: depth %d segment %d, want the chain (11, %d)", c.Depth(), c.SegSize, DefaultSegSize)
	}
}
