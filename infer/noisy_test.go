package infer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"netaware/metrics"
	"netaware/platform"
)

// noisyPlatform measures like seed 002's protocol (Fig. 6: 3 rounds of up
// to 30 ping-pongs, a round ending after 10 without a new best) over a
// platform's routes with the simulator's one-sided latency jitter: each
// message takes latency x (1 + sd |N(0,1)|) plus the hosts' overheads. It
// stands in for the simulator where the live protocol would take minutes
// of wall time (infer/live runs the real protocol on smaller cases).
type noisyPlatform struct {
	p   *platform.Platform
	sd  float64
	rng *rand.Rand
}

func (np *noisyPlatform) base(a, b int) (la, lb, o float64) {
	oa, ob := np.p.Overhead(a), np.p.Overhead(b)
	return np.p.Route(a, b).LatencyS, np.p.Route(b, a).LatencyS, oa.SendS + ob.RecvS + ob.SendS + oa.RecvS
}

func (np *noisyPlatform) RTT(a, b int) (RTT, error) {
	la, lb, o := np.base(a, b)
	jit := func(l float64) float64 { return l * math.Min(4, 1+np.sd*math.Abs(np.rng.NormFloat64())) }
	res := RTT{Min: math.Inf(1), Max: math.Inf(-1)}
	for round := 0; round < 3; round++ {
		best, stale := math.Inf(1), 0
		for j := 0; j < 30 && stale < 10; j++ {
			if v := jit(la) + jit(lb) + o; v < best {
				best, stale = v, 0
			} else {
				stale++
			}
		}
		res.Min, res.Max = math.Min(res.Min, best), math.Max(res.Max, best)
	}
	return res, nil
}

// Bandwidths answers each pair with the smallest capacity on its route.
func (np *noisyPlatform) Bandwidths(pairs []PairBandwidth) ([]float64, error) {
	out := make([]float64, len(pairs))
	res := np.p.Resources()
	for i, q := range pairs {
		out[i] = math.Inf(1)
		for _, r := range np.p.Route(q.A, q.B).Forward {
			out[i] = math.Min(out[i], res[r].BandwidthBps)
		}
	}
	return out, nil
}

func inferNoisy(t *testing.T, name string) (*platform.Platform, *noisyPlatform, Result) {
	return inferNoisySeeded(t, name, 0)
}

// inferNoisySeeded shifts the noise seed and the inference's own seed by
// seed (0: the platform's seed, as the acceptance runs).
func inferNoisySeeded(t *testing.T, name string, seed uint64) (*platform.Platform, *noisyPlatform, Result) {
	t.Helper()
	p, err := platform.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	np := &noisyPlatform{p: p, sd: p.Noise().LatencyJitter, rng: rand.New(rand.NewPCG(uint64(p.Noise().Seed)+seed, 1))}
	if np.sd == 0 {
		t.Fatalf("%s has no latency jitter", name)
	}
	hosts := make([]int, p.NumRanks())
	for i := range hosts {
		hosts[i] = i
	}
	res, err := Infer(hosts, np, 1+seed)
	if err != nil {
		t.Fatal(err)
	}
	return p, np, res
}

// linkKeys lists the undirected network links a route crosses (seed 002
// counts a shared edge whatever the directions).
func linkKeys(p *platform.Platform, a, b int) map[string]bool {
	out := map[string]bool{}
	res := p.Resources()
	for _, r := range p.Route(a, b).Forward {
		name := res[r].Name
		ends := strings.Split(strings.ReplaceAll(name, "<->", "->"), "->")
		if len(ends) != 2 {
			continue // a host's memory path, not a link
		}
		sort.Strings(ends)
		out[ends[0]+"|"+ends[1]] = true
	}
	return out
}

// treeEdges lists the edges of the inferred path a-b.
func treeEdges(tr *Tree, a, b int) map[[2]int]bool {
	path, _ := tr.path(tr.byRank.at(a), tr.byRank.at(b))
	out := map[[2]int]bool{}
	for i := 0; i+1 < len(path); i++ {
		out[[2]int{min(path[i], path[i+1]), max(path[i], path[i+1])}] = true
	}
	return out
}

// shiraiScore is what seed 002's acceptance looks at in an inferred tree.
type shiraiScore struct {
	pairs, all, add, bound int
	within                 float64 // fraction of pairs within 5% of the true latency
	fn, fp                 float64 // shared-link query error rates
	switches               int
}

// scoreShirai infers shirai-4clusters under the given noise seed and
// scores the tree against the platform.
func scoreShirai(t *testing.T, seed uint64) shiraiScore {
	t.Helper()
	p, np, res := inferNoisySeeded(t, "shirai-4clusters", seed)
	n := p.NumRanks()
	ports := map[string]int{}
	for _, l := range p.Links() {
		ports[l.A]++
		ports[l.B]++
	}
	for _, h := range p.Hosts() {
		ports[h.Switch]++
	}
	maxP, d := 0, 0
	for _, v := range ports {
		maxP = max(maxP, v)
	}
	within := 0
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			d = max(d, p.Route(a, b).Hops)
			la, lb, o := np.base(a, b)
			if math.Abs(res.Tree.Distance(a, b)/((la+lb+o)/2)-1) <= 0.05 {
				within++
			}
		}
	}
	endpoints := make([]int, n)
	for i := range endpoints {
		endpoints[i] = i
	}
	q, err := metrics.SharedLinkQueries(endpoints, 20000, 1,
		func(a, b, c, d int) (bool, error) {
			e := treeEdges(res.Tree, a, b)
			for k := range treeEdges(res.Tree, c, d) {
				if e[k] {
					return true, nil
				}
			}
			return false, nil
		},
		func(a, b, c, d int) (bool, error) {
			e := linkKeys(p, a, b)
			for k := range linkKeys(p, c, d) {
				if e[k] {
					return true, nil
				}
			}
			return false, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	all := n * (n - 1) / 2
	return shiraiScore{pairs: res.Pairs, all: all, add: res.AddMeasurements, bound: (maxP*(d-1)+1)*(n-2) + 1,
		within: float64(within) / float64(all), fn: q.FalseNegativeRate, fp: q.FalsePositiveRate, switches: res.Tree.Switches()}
}

func (s shiraiScore) String() string {
	return fmt.Sprintf("pairs %d of %d (%.1f%%), add %d (bound %d), within 5%% %.2f%%, FN %.4f, FP %.4f, %d switches",
		s.pairs, s.all, 100*float64(s.pairs)/float64(s.all), s.add, s.bound, 100*s.within, s.fn, s.fp, s.switches)
}

// acceptable is the acceptance: measurements within the Sect. 3.3
// bound and below 15% of the pairs, no false negative, under 5% false
// positives, 95% of the latencies within 5%.
func (s shiraiScore) acceptable() bool {
	return s.add <= s.bound && s.pairs <= s.bound && float64(s.pairs) < 0.15*float64(s.all) &&
		s.fn == 0 && s.fp < 0.05 && s.within >= 0.95
}

// TestShiraiNoisyTreeAcceptance: seed 002's acceptance on
// shirai-4clusters (256 ranks) with the platform's 2% latency jitter:
// add's measurements within (p(d-1)+1)(N-2)+1, fewer than 15% of the
// pairs measured, shared-link queries with no false negative and under 5%
// false positives, and 95% of the pairs' latencies within 5% of the truth.
func TestShiraiNoisyTreeAcceptance(t *testing.T) {
	s := scoreShirai(t, 0)
	t.Log(s)
	if !s.acceptable() {
		t.Errorf("acceptance not met: %v", s)
	}
}

// TestShiraiNoisyAcrossSeeds: the same acceptance under eleven other noise
// seeds, so the defaults are not tuned to one draw of the noise. Two miss
// it today (seeds 1 and 8: a switch with no host of its own placed from
// 700 us RTTs, see docs/inference.md); more would be a regression.
func TestShiraiNoisyAcrossSeeds(t *testing.T) {
	failed := 0
	for seed := uint64(1); seed < 12; seed++ {
		if s := scoreShirai(t, seed); !s.acceptable() {
			failed++
			t.Logf("noise seed %d misses the acceptance: %v", seed, s)
		}
	}
	if failed > 2 {
		t.Errorf("%d of 11 noise seeds miss the acceptance, want at most 2", failed)
	}
}

// TestDichevN1RouterTreeAcrossSeeds: dichev-n1's router tree (14
// switches) under eight noise seeds; one (seed 3) gets a spurious switch
// today, more would be a regression.
func TestDichevN1RouterTreeAcrossSeeds(t *testing.T) {
	wrong := 0
	for seed := uint64(0); seed < 8; seed++ {
		if _, _, res := inferNoisySeeded(t, "dichev-n1", seed); res.Tree.Switches() != 14 {
			wrong++
			t.Logf("noise seed %d: %d switches, want 14", seed, res.Tree.Switches())
		}
	}
	if wrong > 1 {
		t.Errorf("%d of 8 noise seeds miss the router tree, want at most 1", wrong)
	}
}

// TestDichevN1NoisyBandwidthMap: on dichev-n1 with its 2% jitter the tree
// reproduces the router tree's latencies, the bandwidth map labels exactly
// the four 100 Mbps links as bottlenecks, and the cut at slow edges gives
// the 4 groups of 128 ranks (NMI 1). Bandwidths are each pair's
// bottleneck capacity (the live measurement is in infer/live).
func TestDichevN1NoisyBandwidthMap(t *testing.T) {
	p, np, res := inferNoisy(t, "dichev-n1")
	n := p.NumRanks()
	bad := 0
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			la, lb, o := np.base(a, b)
			if math.Abs(res.Tree.Distance(a, b)/((la+lb+o)/2)-1) > 0.05 {
				bad++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d pairs' latencies off by more than 5%%", bad)
	}
	// The router tree: 8 leaf switches of 64 hosts, 4 above, then the
	// root pair (R15 has two neighbours, so it is not a visible branching).
	if s := res.Tree.Switches(); s != 14 {
		t.Errorf("%d switches inferred, want 14 (R1-R14)", s)
	}
	m, err := BuildBandwidthMap(res.Tree, np)
	if err != nil {
		t.Fatal(err)
	}
	slow := 0
	for k, e := range m.Edge {
		if m.Parent[k] >= 0 && e < 2e7 && !m.AtLeast[k] {
			slow++
			if e != 12.5e6 {
				t.Errorf("bottleneck labelled %g B/s, want 12.5e6", e)
			}
		}
	}
	if slow != 4 {
		t.Errorf("%d bottleneck edges, want the four 100 Mbps links", slow)
	}
	groups, _ := m.SlowGroups(2)
	quarters := make([][]int, 4)
	for r := 0; r < n; r++ {
		quarters[r/128] = append(quarters[r/128], r)
	}
	v, err := metrics.NMIGroups(groups, quarters, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bandwidth map: %d measurements in %d rounds; slow cut %d groups, NMI %.4f", m.Measurements, len(m.Rounds), len(groups), v)
	if v < 0.95 {
		t.Errorf("slow-edge cut NMI %.4f, want >= 0.95", v)
	}
}

// TestShiraiNoisyGrid5000WideArea: on grid5000-4sites (a 10 Gbps star
// around Lyon, 1.5 to 5 ms per site, 2% jitter) every pair of hosts on
// different sites gets its latency within 5%: the hidden hub is found on
// the long edges although the noise of millisecond RTTs swallows switches
// tens of microseconds apart (extension: pruning beyond the outermost
// switches of the interval, docs/inference.md).
func TestShiraiNoisyGrid5000WideArea(t *testing.T) {
	p, np, res := inferNoisy(t, "grid5000-4sites")
	n := p.NumRanks()
	site := func(r int) string { h, _, _ := p.RankIdentity(r); return strings.SplitN(h, "-", 2)[0] }
	bad, within, all := 0, 0, 0
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			la, lb, o := np.base(a, b)
			ok := math.Abs(res.Tree.Distance(a, b)/((la+lb+o)/2)-1) <= 0.05
			all++
			if ok {
				within++
			} else if site(a) != site(b) {
				bad++
			}
		}
	}
	t.Logf("switches %d; latency within 5%% for %d of %d pairs; %d inter-site pairs off", res.Tree.Switches(), within, all, bad)
	if bad > 0 {
		t.Errorf("%d inter-site pairs' latencies off by more than 5%%", bad)
	}
}
