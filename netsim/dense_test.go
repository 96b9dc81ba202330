package netsim

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"
)

// The dense pattern of issue 16: 256 hosts on 32 leaf switches of 8 (the
// leaves on one core switch), every host running 16 lanes of back-to-back
// flows, so that 4,096 flows are in flight and share the leaf uplinks:
// one connected component that every event re-solves. Lane k of host i
// sends its j-th flow to host (i + 1 + k + 16 j) mod 256.
type densePattern struct {
	res            []Resource
	hosts, leafOf  int
	up, down       []int // per host
	leafUp, leafDn []int // per leaf
}

func newDense() *densePattern {
	d := &densePattern{hosts: 256, leafOf: 8}
	for range d.hosts {
		d.up = append(d.up, len(d.res))
		d.down = append(d.down, len(d.res)+1)
		d.res = append(d.res, Resource{"nic-up", 125e6}, Resource{"nic-down", 125e6})
	}
	for range d.hosts / d.leafOf {
		d.leafUp = append(d.leafUp, len(d.res))
		d.leafDn = append(d.leafDn, len(d.res)+1)
		d.res = append(d.res, Resource{"leaf-up", 1.25e9}, Resource{"leaf-down", 1.25e9})
	}
	return d
}

func (d *densePattern) route(s, t int) (fwd []int, lat float64) {
	ls, lt := s/d.leafOf, t/d.leafOf
	if ls == lt {
		return []int{d.up[s], d.down[t]}, 10e-6
	}
	return []int{d.up[s], d.leafUp[ls], d.leafDn[lt], d.down[t]}, 14e-6
}

func (d *densePattern) spec(s, t int, bytes int64, lane int) FlowSpec {
	fwd, lat := d.route(s, t)
	rev, _ := d.route(t, s)
	return FlowSpec{Bytes: bytes, LatencyS: lat, Forward: fwd, Reverse: rev, Data: lane}
}

// runDense runs lanes x seq flows per host (seq <= 0: until stop says so)
// and returns the completion times in completion order, hashed, the
// events delivered and the network's work counters. solved, if not nil,
// sees the network after each solve.
func runDense(tb testing.TB, seq int, stop func(events int) bool, solved func(*Network)) (uint64, int, Stats) {
	d := newDense()
	n := mustNet(tb, Config{Resources: d.res, CrossTraffic: 0.05, Weighting: RTTWeighted, WindowBytes: 4 << 20})
	rng := rand.New(rand.NewPCG(16, 4))
	const lanes = 16
	sent := make([]int, d.hosts*lanes)
	start := func(l int) {
		i, k := l/lanes, l%lanes
		t := (i + 1 + k + lanes*sent[l]) % d.hosts
		sent[l]++
		size := int64(math.Exp(math.Log(1e5) + rng.Float64()*(math.Log(2e6)-math.Log(1e5))))
		mustStart(tb, n, d.spec(i, t, size, l))
	}
	for l := range sent {
		start(l)
	}
	h := fnv.New64a()
	var buf [8]byte
	events := 0
	for n.Pending() > 0 && (stop == nil || !stop(events)) {
		if solved != nil {
			before := n.stats.Solves
			n.Flush()
			if n.stats.Solves > before {
				solved(n)
			}
		}
		for _, e := range n.Step() {
			events++
			if e.Kind != Done {
				continue
			}
			bits := math.Float64bits(e.Time)
			for i := range buf {
				buf[i] = byte(bits >> (8 * i))
			}
			h.Write(buf[:])
			id := uint64(e.Flow.ID())
			for i := range buf {
				buf[i] = byte(id >> (8 * i))
			}
			h.Write(buf[:])
			if l := e.Flow.Data().(int); seq <= 0 || sent[l] < seq {
				start(l)
			}
		}
	}
	return h.Sum64(), events, n.Stats()
}

// TestDenseGolden pins the simulated results of the dense pattern (4,096
// flows in flight, one flow per lane): the hash of every
// completion time and flow id, in completion order, bit for bit. The
// solver's optimisations must not change a single bit; a change of the
// model must update the golden value and say why.
func TestDenseGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("4,096 flows in one component")
	}
	const golden = 0x5201e0c16c2b76b4
	got, events, _ := runDense(t, 1, nil, nil)
	if events != 2*4096 {
		t.Errorf("%d events, want %d (a latency end and a completion per flow)", events, 2*4096)
	}
	if got != golden {
		t.Fatalf("dense pattern hash %#x, want %#x", got, uint64(golden))
	}
}

// BenchmarkFlowEventsAlltoall: the dense pattern, lanes refilled forever,
// events per second. The 4,096 first latency ends come in two solves (every
// lane starts at time 0), later events one solve each: solves/s is the
// steady-state rate, flows/solve how many flows each solve recomputes. Run:
// go test -run X -bench FlowEventsAlltoall -benchtime 20000x ./netsim
func BenchmarkFlowEventsAlltoall(b *testing.B) {
	b.ReportAllocs()
	_, events, st := runDense(b, 0, func(events int) bool { return events >= b.N }, nil)
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(st.Solves)/b.Elapsed().Seconds(), "solves/s")
	b.ReportMetric(float64(st.SolvedFlow)/float64(max(st.Solves, 1)), "flows/solve")
	b.ReportMetric(float64(st.RateChanges)/float64(max(st.Solves, 1)), "rate-changes/solve")
}

// BenchmarkFlowEventsAlltoallReach counts, over the dense pattern's steady
// state, what a solver that keeps the results bit for bit must redo at
// each event: the flows whose rate changed, the resources they load, and
// those resources' flow entries. Each entry's usage is subtracted in the
// filling's order, so once one subtraction on a resource changes, every
// later one must be redone. Only the counts are meant (the counting is
// timed too). It also counts what a solver exact only in real arithmetic
// would refill: flows fixed at a share below the least share (rate x
// penalty, before or after) of a changed flow keep their rates, since the
// filling reaches the same resources in the same order up to that level;
// every flow at or above it, and its entries, is filled again.
// Run: go test -run X -bench AlltoallReach -benchtime 12000x ./netsim
func BenchmarkFlowEventsAlltoallReach(b *testing.B) {
	var solves, changed, reached, entries, all, above, aboveEntries int
	mark := map[int32]bool{}
	runDense(b, 0, func(events int) bool { return events >= b.N }, func(n *Network) {
		if n.stats.Solves <= 2 { // every lane's first latency end: not the steady state
			return
		}
		solves++
		clear(mark)
		for k, j := range n.compFlows {
			if n.s.st[j].rate == n.compRates[k] {
				continue
			}
			changed++
			for _, e := range n.s.elems(j) {
				if !mark[e.r] {
					mark[e.r] = true
					reached++
					entries += len(n.res[e.r].ef)
				}
			}
		}
		for r := range n.res {
			all += len(n.res[r].ef)
		}
		level := math.Inf(1)
		for k, j := range n.compFlows {
			if x := n.s.st[j]; x.rate != n.compRates[k] {
				level = min(level, x.rate*x.penalty, n.compRates[k]*x.penalty)
			}
		}
		for k, j := range n.compFlows {
			if x := n.s.st[j]; max(x.rate, n.compRates[k])*x.penalty >= level {
				above++
				aboveEntries += int(x.cnt)
			}
		}
	})
	per := func(x int) float64 { return float64(x) / float64(max(solves, 1)) }
	b.ReportMetric(per(changed), "changed-flows/solve")
	b.ReportMetric(per(reached), "reached-resources/solve")
	b.ReportMetric(per(entries), "reached-entries/solve")
	b.ReportMetric(per(all), "entries/solve")
	b.ReportMetric(per(above), "refilled-flows/solve")
	b.ReportMetric(per(aboveEntries), "refilled-entries/solve")
}
