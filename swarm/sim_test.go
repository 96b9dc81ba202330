package swarm

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/platform"
)

// flat is n single-core hosts of 1 Gbps on one switch.
func flat(t *testing.T, n int) *platform.Platform {
	t.Helper()
	y := fmt.Sprintf(`version: 1
name: flat%d
switches: [s0]
host_types:
  node: {cores_per_socket: 1}
hosts:
  - {names: "h[0-%d]", switch: s0, type: node, link: {bandwidth: 1Gbps, latency: 10us}}
`, n, n-1)
	p, err := platform.Parse("flat.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// measure runs one swarm broadcast of m bytes in the simulator and returns
// every rank's stats.
func measure(t *testing.T, p *platform.Platform, root, m int, prm Params) []*Stats {
	t.Helper()
	out := make([]*Stats, p.NumRanks())
	var mu sync.Mutex
	_, err := sim.Run(context.Background(), p, sim.Options{NoNoise: true}, func(ctx context.Context, c comm.Comm) error {
		st, err := Measure(ctx, c, root, m, prm)
		mu.Lock()
		out[c.Rank()] = st
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func broadcastTime(st []*Stats) time.Duration {
	var t time.Duration
	for _, s := range st {
		t = max(t, s.Complete)
	}
	return t
}

// Seed 000 Sect. 4.5: a swarm broadcast takes O(M), nearly constant in
// the number of peers (32, 64 and 128 nodes took about 20 s for 239 MB).
// Here: 8 to 32 peers on one 1 Gbps switch stay within 2x of each other,
// and the time is a start-up cost plus a part linear in M: going from 2M
// to 4M adds 1.5 to 2.5 times what going from M to 2M added.
func TestTimeLinearInMNearlyConstantInPeers(t *testing.T) {
	const m = 1 << 20
	var times []time.Duration
	for _, n := range []int{8, 16, 32} {
		times = append(times, broadcastTime(measure(t, flat(t, n), 0, m, Params{Seed: 1})))
	}
	ideal := time.Duration(float64(m*8) / 1e9 * float64(time.Second))
	for i, d := range times {
		if d < ideal || d > 2*times[0] {
			t.Errorf("%d peers: %v (8 peers: %v, one link: %v)", 8<<i, d, times[0], ideal)
		}
	}
	t2 := broadcastTime(measure(t, flat(t, 16), 0, 2*m, Params{Seed: 1}))
	t4 := broadcastTime(measure(t, flat(t, 16), 0, 4*m, Params{Seed: 1}))
	if r := float64(t4-t2) / float64(t2-times[1]); r < 1.5 || r > 2.5 {
		t.Errorf("16 peers: M %v, 2M %v, 4M %v: increments' ratio %.2f, want about 2", times[1], t2, t4, r)
	}
}

// Seed 000 Sect. 4.6: data flows preferably over fast links. On two
// switches of four 1 Gbps hosts joined by 100 Mbps, the connections inside
// a switch achieve several times the rate of those across.
func TestFragmentsPreferFastLinks(t *testing.T) {
	p, err := platform.Load("../emu/testdata/zero-latency-split.yaml")
	if err != nil {
		t.Fatal(err)
	}
	st := measure(t, p, 0, 2<<20, Params{Seed: 3})
	var in, out, nin, nout float64
	for to, s := range st {
		for _, c := range s.Received {
			r := float64(c.Fragments) / c.Busy.Seconds()
			if (c.From < 4) == (to < 4) {
				in, nin = in+r, nin+1
			} else {
				out, nout = out+r, nout+1
			}
		}
	}
	if nin == 0 || nout == 0 {
		t.Fatalf("connections: %v inside, %v across", nin, nout)
	}
	if in/nin < 4*out/nout {
		t.Errorf("mean rate inside %.0f fragments/s, across %.0f: want inside >= 4x", in/nin, out/nout)
	}
}

// The peer sets are symmetric, connected, bounded by about the limit and
// the same for one seed.
func TestPeerSets(t *testing.T) {
	for _, n := range []int{2, 5, 36, 200} {
		s := PeerSets(n, 35, 7)
		again := PeerSets(n, 35, 7)
		seen := make([]bool, n)
		var visit func(int)
		visit = func(i int) {
			if seen[i] {
				return
			}
			seen[i] = true
			for _, j := range s[i] {
				visit(j)
			}
		}
		visit(0)
		for i := range s {
			if !seen[i] {
				t.Errorf("n=%d: rank %d unreachable", n, i)
			}
			if fmt.Sprint(s[i]) != fmt.Sprint(again[i]) {
				t.Errorf("n=%d: rank %d's peers differ between two draws", n, i)
			}
			if len(s[i]) > 2*35 {
				t.Errorf("n=%d: rank %d has %d peers", n, i, len(s[i]))
			}
			for _, j := range s[i] {
				found := false
				for _, k := range s[j] {
					found = found || k == i
				}
				if !found || j == i {
					t.Errorf("n=%d: %d->%d not symmetric", n, i, j)
				}
			}
		}
		if n <= 36 && len(s[0]) != n-1 {
			t.Errorf("n=%d: %d peers, want all %d", n, len(s[0]), n-1)
		}
	}
}

func TestBadParams(t *testing.T) {
	for _, p := range []Params{{Fragment: 10}, {Connections: -1}, {HaveBatch: -2}, {ChokeInterval: -1}} {
		if err := p.WithDefaults().Validate(); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
}
