package netsim

import (
	"math"
	"testing"
)

const mbps = 1e6 / 8 // bytes per second in one Mbit/s

func mustNet(t testing.TB, cfg Config) *Network {
	t.Helper()
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustStart(t testing.TB, n *Network, s FlowSpec) *Flow {
	t.Helper()
	f, err := n.Start(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// runToEnd steps the network until every flow is done and returns the
// completion time of each flow by id.
func runToEnd(t testing.TB, n *Network) map[int64]float64 {
	t.Helper()
	done := map[int64]float64{}
	for n.Pending() > 0 {
		evs := n.Step()
		if len(evs) == 0 {
			t.Fatalf("no progress with %d flows pending", n.Pending())
		}
		for _, e := range evs {
			if e.Kind == Done {
				done[e.Flow.ID()] = e.Time
			}
		}
	}
	return done
}

// activateAll crosses the latency events at the start, so rates are live.
func activateAll(t testing.TB, n *Network, flows ...*Flow) {
	t.Helper()
	for _, f := range flows {
		for f.state == stateLatency {
			if len(n.Step()) == 0 {
				t.Fatal("stuck")
			}
		}
	}
	n.Flush()
}

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

// nic is a host's full-duplex network card: one resource per direction.
type nic struct{ up, down int }

// star builds hosts with a NIC each on one non-blocking switch.
func star(hosts int, bps float64) ([]Resource, []nic) {
	var res []Resource
	var nics []nic
	for i := 0; i < hosts; i++ {
		nics = append(nics, nic{up: len(res), down: len(res) + 1})
		res = append(res, Resource{"up", bps}, Resource{"down", bps})
	}
	return res, nics
}

func hostFlow(nics []nic, src, dst int, bytes int64, lat float64) FlowSpec {
	return FlowSpec{
		Bytes:    bytes,
		LatencyS: lat,
		Forward:  []int{nics[src].up, nics[dst].down},
		Reverse:  []int{nics[dst].up, nics[src].down},
	}
}

// Seed 001, Sect. 5.1: k flows into one NIC share it fairly, B/k each.
func TestZhuFairnessOneWay(t *testing.T) {
	for _, k := range []int{1, 2, 3, 5, 12} {
		res, nics := star(k+1, 940*mbps)
		n := mustNet(t, Config{Resources: res, CrossTraffic: 0.05})
		var fs []*Flow
		for i := 1; i <= k; i++ {
			fs = append(fs, mustStart(t, n, hostFlow(nics, i, 0, 1<<30, 50e-6)))
		}
		activateAll(t, n, fs...)
		for _, f := range fs {
			if !near(f.Rate(), 940*mbps/float64(k), 1e-12) {
				t.Errorf("k=%d: rate %.6g Mbps, want %.6g", k, f.Rate()/mbps, 940/float64(k))
			}
		}
	}
	// Experiment A: all senders on one node, all receivers on another.
	res, nics := star(2, 940*mbps)
	n := mustNet(t, Config{Resources: res, CrossTraffic: 0.05})
	var fs []*Flow
	for i := 0; i < 4; i++ {
		fs = append(fs, mustStart(t, n, hostFlow(nics, 0, 1, 1<<30, 50e-6)))
	}
	activateAll(t, n, fs...)
	for _, f := range fs {
		if !near(f.Rate(), 235*mbps, 1e-12) {
			t.Errorf("one node to one node, 4 flows: %.6g Mbps, want 235", f.Rate()/mbps)
		}
	}
}

// asymmetric starts `in` flows into host 0 and `out` flows out of it, each
// with its own peer host, and returns the flows' rates once all are active.
func asymmetric(t *testing.T, in, out int, crosstraffic float64) (ins, outs []float64) {
	res, nics := star(1+in+out, 940*mbps)
	n := mustNet(t, Config{Resources: res, CrossTraffic: crosstraffic})
	var fin, fout []*Flow
	for i := 0; i < in; i++ {
		fin = append(fin, mustStart(t, n, hostFlow(nics, 1+i, 0, 1<<30, 50e-6)))
	}
	for i := 0; i < out; i++ {
		fout = append(fout, mustStart(t, n, hostFlow(nics, 0, 1+in+i, 1<<30, 50e-6)))
	}
	activateAll(t, n, append(fin, fout...)...)
	for _, f := range fin {
		ins = append(ins, f.Rate())
	}
	for _, f := range fout {
		outs = append(outs, f.Rate())
	}
	return ins, outs
}

// Seed 001, Sect. 5.2: with 2 flows in and 1 out on a full-duplex 940 Mbps
// NIC, all three get about 470 Mbps, not 470/470/940. The 940 Mbps is the
// TCP goodput of a 1 Gbps Ethernet NIC as the paper measured it; we model
// the link at that payload rate.
func TestZhuAsymmetricTwoInOneOut(t *testing.T) {
	ins, outs := asymmetric(t, 2, 1, 0.05)
	for _, r := range append(ins, outs...) {
		if !near(r, 470*mbps, 0.05) {
			t.Errorf("rate %.1f Mbps, want within 5%% of 470", r/mbps)
		}
	}
	// The exact lmm value: the NIC's incoming direction carries 2 flows at
	// weight 1 and the outgoing flow's ACKs at 0.05: B / 2.05 each.
	for _, r := range append(ins, outs...) {
		if !near(r, 940*mbps/2.05, 1e-12) {
			t.Errorf("rate %.6f Mbps, want B/2.05 = %.6f", r/mbps, 940/2.05)
		}
	}
}

// Seed 001, Sect. 5.2: 12 in + 1 out: every flow about B/12, so the total
// bidirectional bandwidth is about 13/12 B instead of 2B.
func TestZhuAsymmetricTwelveInOneOut(t *testing.T) {
	ins, outs := asymmetric(t, 12, 1, 0.05)
	total := 0.0
	for _, r := range append(ins, outs...) {
		total += r
		if !near(r, 940*mbps/12, 0.05) {
			t.Errorf("rate %.2f Mbps, want within 5%% of %.2f", r/mbps, 940.0/12)
		}
	}
	if !near(total, 13.0/12*940*mbps, 0.05) {
		t.Errorf("total %.1f Mbps, want about 13/12 * 940 = %.1f", total/mbps, 13.0/12*940)
	}
}

// Without crosstraffic the two directions of a full-duplex NIC are
// independent: 2 in + 1 out get 470, 470 and 940 Mbps.
func TestCrossTrafficZeroGivesClassicFullDuplex(t *testing.T) {
	ins, outs := asymmetric(t, 2, 1, 0)
	for _, r := range ins {
		if !near(r, 470*mbps, 1e-12) {
			t.Errorf("incoming %.6f Mbps, want 470", r/mbps)
		}
	}
	if !near(outs[0], 940*mbps, 1e-12) {
		t.Errorf("outgoing %.6f Mbps, want 940", outs[0]/mbps)
	}
}

func TestSingleFlowTimeIsLatencyPlusSizeOverBottleneck(t *testing.T) {
	res := []Resource{{"a", 125e6}, {"b", 1.25e9}, {"c", 100e6}, {"d", 125e6}}
	for _, w := range []Weighting{MaxMin, RTTWeighted} {
		n := mustNet(t, Config{Resources: res, CrossTraffic: 0.05, Weighting: w})
		const size, lat = 10_000_000, 23e-6
		mustStart(t, n, FlowSpec{Bytes: size, LatencyS: lat, Forward: []int{0, 1, 2}, Reverse: []int{3}})
		done := runToEnd(t, n)
		want := lat + size/100e6
		if !near(done[0], want, 1e-14) {
			t.Errorf("%v: done at %.15g, want %.15g", w, done[0], want)
		}
	}
}

// A textbook max-min case worked by hand: link 0 (10 B/s) carries a and b,
// link 1 (20 B/s) carries a and c: a = b = 5, c = 15.
func TestMaxMinTextbook(t *testing.T) {
	n := mustNet(t, Config{Resources: []Resource{{"l0", 10}, {"l1", 20}}})
	a := mustStart(t, n, FlowSpec{Bytes: 1000, Forward: []int{0, 1}})
	b := mustStart(t, n, FlowSpec{Bytes: 1000, Forward: []int{0}})
	c := mustStart(t, n, FlowSpec{Bytes: 1000, Forward: []int{1}})
	activateAll(t, n, a, b, c)
	for _, x := range []struct {
		f    *Flow
		want float64
	}{{a, 5}, {b, 5}, {c, 15}} {
		if !near(x.f.Rate(), x.want, 1e-12) {
			t.Errorf("flow %d: rate %v, want %v", x.f.ID(), x.f.Rate(), x.want)
		}
	}
}

// CM02 weighting: on a common bottleneck, shares are inversely proportional
// to path latency (1 ms vs 3 ms: 3/4 and 1/4 of the link).
func TestRTTWeightingSharesInverseToLatency(t *testing.T) {
	n := mustNet(t, Config{Resources: []Resource{{"l", 100}, {"x", 1e9}, {"y", 1e9}}, Weighting: RTTWeighted})
	f1 := mustStart(t, n, FlowSpec{Bytes: 1e6, LatencyS: 1e-3, Forward: []int{0, 1}})
	f3 := mustStart(t, n, FlowSpec{Bytes: 1e6, LatencyS: 3e-3, Forward: []int{0, 2}})
	activateAll(t, n, f1, f3)
	if !near(f1.Rate(), 75, 1e-12) || !near(f3.Rate(), 25, 1e-12) {
		t.Errorf("rates %v, %v; want 75, 25", f1.Rate(), f3.Rate())
	}
	// Plain max-min ignores latency.
	n = mustNet(t, Config{Resources: []Resource{{"l", 100}, {"x", 1e9}, {"y", 1e9}}})
	f1 = mustStart(t, n, FlowSpec{Bytes: 1e6, LatencyS: 1e-3, Forward: []int{0, 1}})
	f3 = mustStart(t, n, FlowSpec{Bytes: 1e6, LatencyS: 3e-3, Forward: []int{0, 2}})
	activateAll(t, n, f1, f3)
	if !near(f1.Rate(), 50, 1e-12) || !near(f3.Rate(), 50, 1e-12) {
		t.Errorf("maxmin rates %v, %v; want 50, 50", f1.Rate(), f3.Rate())
	}
}

// A flow's RTT-weighted share and window bound come from its route's
// latency (PathLatencyS), not from how long it waits before its bytes move:
// a message pipelined behind another on its connection waits nothing, yet
// its round trip is the route's.
func TestPathLatencySetsShareAndBound(t *testing.T) {
	n := mustNet(t, Config{Resources: []Resource{{"l", 100}, {"x", 1e9}, {"y", 1e9}}, Weighting: RTTWeighted})
	queued := mustStart(t, n, FlowSpec{Bytes: 1e6, LatencyS: 0, PathLatencyS: 1e-3, Forward: []int{0, 1}})
	far := mustStart(t, n, FlowSpec{Bytes: 1e6, LatencyS: 3e-3, Forward: []int{0, 2}})
	activateAll(t, n, queued, far)
	if !near(queued.Rate(), 75, 1e-12) || !near(far.Rate(), 25, 1e-12) {
		t.Errorf("rates %v, %v; want 75, 25 (the route latencies 1 and 3 ms)", queued.Rate(), far.Rate())
	}
	n = mustNet(t, Config{Resources: []Resource{{"l", 125e6}}, WindowBytes: 65536})
	f := mustStart(t, n, FlowSpec{Bytes: 1e9, LatencyS: 0, PathLatencyS: 1e-3, Forward: []int{0}})
	activateAll(t, n, f)
	if want := 65536 / 2e-3; !near(f.Rate(), want, 1e-12) {
		t.Errorf("window bound with no wait: %v, want %v", f.Rate(), want)
	}
}

// The TCP window caps a flow at window / (2 latency); the other flow on the
// link takes what is left.
func TestWindowBound(t *testing.T) {
	n := mustNet(t, Config{Resources: []Resource{{"l", 125e6}}, WindowBytes: 65536})
	f := mustStart(t, n, FlowSpec{Bytes: 1e9, LatencyS: 1e-3, Forward: []int{0}})
	g := mustStart(t, n, FlowSpec{Bytes: 1e9, LatencyS: 1e-5, Forward: []int{0}})
	activateAll(t, n, f, g)
	wantF := 65536 / 2e-3
	if !near(f.Rate(), wantF, 1e-12) {
		t.Errorf("window-bound flow: %v, want %v", f.Rate(), wantF)
	}
	if !near(g.Rate(), 125e6-wantF, 1e-12) {
		t.Errorf("other flow: %v, want %v", g.Rate(), 125e6-wantF)
	}
}

// A half-duplex link is one resource for both directions: two opposite flows
// share it, each also putting its crosstraffic weight on it.
func TestHalfDuplexSharesBothDirections(t *testing.T) {
	n := mustNet(t, Config{Resources: []Resource{{"hub", 100}}, CrossTraffic: 0.05})
	a := mustStart(t, n, FlowSpec{Bytes: 1000, Forward: []int{0}, Reverse: []int{0}})
	b := mustStart(t, n, FlowSpec{Bytes: 1000, Forward: []int{0}, Reverse: []int{0}})
	activateAll(t, n, a, b)
	if !near(a.Rate(), 100/2.1, 1e-12) || !near(b.Rate(), 100/2.1, 1e-12) {
		t.Errorf("rates %v %v, want %v", a.Rate(), b.Rate(), 100/2.1)
	}
}

// Worked by hand: sizes S and 2S share B from t=L: the small one ends at
// L + 2S/B, the large one then runs alone and ends at L + 3S/B.
func TestFlowsSpeedUpWhenOthersFinish(t *testing.T) {
	n := mustNet(t, Config{Resources: []Resource{{"l", 1e6}}})
	const S, L = 1e6, 1e-3
	mustStart(t, n, FlowSpec{Bytes: S, LatencyS: L, Forward: []int{0}})
	mustStart(t, n, FlowSpec{Bytes: 2 * S, LatencyS: L, Forward: []int{0}})
	done := runToEnd(t, n)
	if !near(done[0], L+2, 1e-13) || !near(done[1], L+3, 1e-13) {
		t.Errorf("done %v, want %v and %v", done, L+2, L+3)
	}
}

// A flow's bytes move only after its latency: a flow started later with a
// long latency does not slow an earlier flow during that latency.
func TestLatencyPaidBeforeTransfer(t *testing.T) {
	n := mustNet(t, Config{Resources: []Resource{{"l", 1000}}})
	mustStart(t, n, FlowSpec{Bytes: 1000, LatencyS: 0, Forward: []int{0}})
	mustStart(t, n, FlowSpec{Bytes: 1000, LatencyS: 2, Forward: []int{0}})
	done := runToEnd(t, n)
	if !near(done[0], 1, 1e-13) || !near(done[1], 3, 1e-13) {
		t.Errorf("done %v, want 1 and 3", done)
	}
}

func TestZeroByteAndUnroutedFlows(t *testing.T) {
	n := mustNet(t, Config{Resources: []Resource{{"l", 1000}}, WindowBytes: 1000})
	mustStart(t, n, FlowSpec{Bytes: 0, LatencyS: 0.5, Forward: []int{0}})
	mustStart(t, n, FlowSpec{Bytes: 100, LatencyS: 0.25}) // no resources: only the window bounds it
	mustStart(t, n, FlowSpec{Bytes: 100, LatencyS: 0})    // no resources, no latency: instant
	done := runToEnd(t, n)
	want := map[int64]float64{0: 0.5, 1: 0.25 + 100/(1000/(2*0.25)), 2: 0}
	for id, w := range want {
		if !near(done[id], w, 1e-13) && !(w == 0 && done[id] == 0) {
			t.Errorf("flow %d done at %v, want %v", id, done[id], w)
		}
	}
}

func TestBadInputIsAnError(t *testing.T) {
	if _, err := New(Config{Resources: []Resource{{"l", 0}}}); err == nil {
		t.Error("zero capacity accepted")
	}
	if _, err := New(Config{Resources: []Resource{{"l", math.NaN()}}}); err == nil {
		t.Error("NaN capacity accepted")
	}
	if _, err := New(Config{CrossTraffic: -1}); err == nil {
		t.Error("negative crosstraffic accepted")
	}
	if _, err := New(Config{BandwidthJitter: math.Inf(1)}); err == nil {
		t.Error("infinite jitter accepted")
	}
	n := mustNet(t, Config{Resources: []Resource{{"l", 1}}})
	for _, s := range []FlowSpec{
		{Bytes: -1}, {LatencyS: -1}, {LatencyS: math.NaN()}, {PathLatencyS: -1}, {PathLatencyS: math.Inf(1)},
		{Forward: []int{1}}, {Reverse: []int{-1}},
	} {
		if _, err := n.Start(s); err == nil {
			t.Errorf("spec %+v accepted", s)
		}
	}
	if err := n.SetNow(-1); err == nil {
		t.Error("clock moved backwards")
	}
}

// Seed 001, Sect. 5.1, Eq. 5: inter-rack flows from distinct nodes over a
// 9.4 Gbps backbone keep their NIC rate (940 Mbps) up to 10 flows, and share
// the backbone fairly (9.4 Gbps / |E|) beyond.
func TestZhuBackboneFairAboveTenFlows(t *testing.T) {
	for _, k := range []int{1, 5, 10, 11, 12, 15} {
		// Hosts 0..k-1 in rack X send to hosts k..2k-1 in rack Y.
		res, nics := star(2*k, 940*mbps)
		bbXY, bbYX := len(res), len(res)+1
		res = append(res, Resource{"backbone X->Y", 9400 * mbps}, Resource{"backbone Y->X", 9400 * mbps})
		n := mustNet(t, Config{Resources: res, CrossTraffic: 0.05})
		var fs []*Flow
		for i := 0; i < k; i++ {
			s, d := i, k+i
			fs = append(fs, mustStart(t, n, FlowSpec{
				Bytes: 1 << 30, LatencyS: 225e-6,
				Forward: []int{nics[s].up, bbXY, nics[d].down},
				Reverse: []int{nics[d].up, bbYX, nics[s].down},
			}))
		}
		activateAll(t, n, fs...)
		want := math.Min(940, 9400/float64(k))
		for _, f := range fs {
			if !near(f.Rate()/mbps, want, 1e-12) {
				t.Errorf("%d flows: %.4f Mbps each, want %.4f", k, f.Rate()/mbps, want)
			}
		}
	}
}

// Latency jitter only delays: factors are at least 1, with the half-normal
// mean 1 + sd*sqrt(2/pi) and root-mean-square excess sd. Bandwidth factors
// have mean 1 and are truncated to [1/4, 4]. Both repeat with the seed.
func TestNoiseStatisticsAndSeed(t *testing.T) {
	z, err := NewNoise(42, 0.02, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	var sum, sq, bsum float64
	for i := 0; i < n; i++ {
		l := z.Latency(1)
		if l < 1 {
			t.Fatalf("latency factor %v below 1: jitter made a message faster than its path", l)
		}
		sum += l
		sq += (l - 1) * (l - 1)
		b := z.BandwidthFactor()
		if b < 0.25 || b > 4 {
			t.Fatalf("factor %v outside [1/4, 4]", b)
		}
		bsum += b
	}
	if mean, want := sum/n, 1+0.02*math.Sqrt(2/math.Pi); math.Abs(mean-want) > 0.0005 {
		t.Errorf("latency factor mean %v, want %v", mean, want)
	}
	if rms := math.Sqrt(sq / n); math.Abs(rms-0.02) > 0.001 {
		t.Errorf("latency excess rms %v, want 0.02", rms)
	}
	if mean := bsum / n; math.Abs(mean-1) > 0.01 {
		t.Errorf("bandwidth factor mean %v, want 1", mean)
	}
	a, _ := NewNoise(7, 0.1, 0.1)
	b, _ := NewNoise(7, 0.1, 0.1)
	for i := 0; i < 100; i++ {
		if a.Latency(1) != b.Latency(1) || a.BandwidthFactor() != b.BandwidthFactor() {
			t.Fatal("same seed, different draws")
		}
	}
	quiet, _ := NewNoise(7, 0, 0)
	if quiet.Latency(3) != 3 || quiet.BandwidthFactor() != 1 {
		t.Error("zero jitter is not exact")
	}
}

// RateChanges counts the flows whose rate a solve changed, not the flows
// it solved: on one link of 10 B/s, b's end doubles a's rate (one
// change); in the textbook case above, c's end changes no rate (a is held
// at 5 by link 0), though the solve covers a and b.
func TestRateChangesCountsChangedRates(t *testing.T) {
	untilDone := func(n *Network, f *Flow) {
		t.Helper()
		for {
			evs := n.Step()
			if len(evs) == 0 {
				t.Fatal("no progress")
			}
			for _, e := range evs {
				if e.Kind == Done && e.Flow == f {
					n.Flush()
					return
				}
			}
		}
	}
	n := mustNet(t, Config{Resources: []Resource{{"l0", 10}}})
	a := mustStart(t, n, FlowSpec{Bytes: 1000, Forward: []int{0}})
	b := mustStart(t, n, FlowSpec{Bytes: 100, Forward: []int{0}})
	activateAll(t, n, a, b)
	before := n.Stats()
	untilDone(n, b)
	if got := n.Stats().RateChanges - before.RateChanges; got != 1 || a.Rate() != 10 {
		t.Fatalf("b's end: %d rate changes, a at %v B/s; want 1 and 10", got, a.Rate())
	}

	n = mustNet(t, Config{Resources: []Resource{{"l0", 10}, {"l1", 20}}})
	a = mustStart(t, n, FlowSpec{Bytes: 1000, Forward: []int{0, 1}})
	b = mustStart(t, n, FlowSpec{Bytes: 1000, Forward: []int{0}})
	c := mustStart(t, n, FlowSpec{Bytes: 1000, Forward: []int{1}})
	activateAll(t, n, a, b, c)
	before = n.Stats()
	untilDone(n, c)
	after := n.Stats()
	if got := after.RateChanges - before.RateChanges; got != 0 || after.Solves == before.Solves || a.Rate() != 5 || b.Rate() != 5 {
		t.Fatalf("c's end: %d rate changes in %d solves, a %v b %v; want 0 in at least one, 5 and 5", got, after.Solves-before.Solves, a.Rate(), b.Rate())
	}
}
