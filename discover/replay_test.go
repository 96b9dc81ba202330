package discover

import (
	"fmt"
	"math"
	"math/rand/v2"
	"netaware/comm"
	"netaware/infer/live"
	"os"
	"testing"

	"netaware/infer"
	"netaware/metrics"
	"netaware/platform"
	"netaware/probe"
)

// replayProber answers seed 002's pair protocol from round trips recorded
// on a real network: a measurement of a pair reads that pair's recorded
// samples from a random place on, in order, round by round, with the
// protocol's stop rules.
type replayProber struct {
	samples map[[2]int][]float64
	rng     *rand.Rand
	prm     probe.RTTParams
}

func (p *replayProber) RTT(a, b int) (infer.RTT, error) {
	s := p.samples[[2]int{min(a, b), max(a, b)}]
	k := p.rng.IntN(len(s))
	res := infer.RTT{Min: math.Inf(1), Max: math.Inf(-1)}
	var bests []float64
	for r := 0; r < p.prm.Rounds; r++ {
		best, stale := math.Inf(1), 0
		for n := 0; n < p.prm.MaxExchanges && stale < p.prm.Stale; n++ {
			v := s[k%len(s)]
			k++
			if v < best {
				best, stale = v, 0
			} else {
				stale++
			}
		}
		bests = append(bests, best)
		res.Min, res.Max = math.Min(res.Min, best), math.Max(res.Max, best)
	}
	if len(bests) > 1 {
		sortFloats(bests)
		res.Next = bests[1]
	}
	return res, nil
}

func TestReplayRecorded(t *testing.T) {
	ds0 := os.Getenv("NETAWARE_REPLAY")
	if ds0 == "" {
		t.Skip("NETAWARE_REPLAY=dataset.json:platform.yaml")
	}
	var dsPath, platPath string
	for i := range ds0 {
		if ds0[i] == ':' {
			dsPath, platPath = ds0[:i], ds0[i+1:]
		}
	}
	ds, err := probe.Load(dsPath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := platform.Load(platPath)
	if err != nil {
		t.Fatal(err)
	}
	samples := map[[2]int][]float64{}
	for _, pr := range ds.RTT.Pairs {
		samples[[2]int{min(pr.A, pr.B), max(pr.A, pr.B)}] = pr.Result.SamplesS
	}
	n := ds.World.Size
	truth := truthLevel(t, p, "switch")
	hosts := make([]int, n)
	for i := range hosts {
		hosts[i] = i
	}
	ok := 0
	for seed := uint64(1); seed <= 20; seed++ {
		pr := &replayProber{samples: samples, rng: rand.New(rand.NewPCG(seed, 9)), prm: probe.RTTParams{Rounds: 3}.WithDefaults()}
		var ms []infer.Measurement
		rec := recordingProber{pr, &ms}
		res, err := infer.Infer(hosts, rec, seed)
		if err != nil {
			t.Fatal(err)
		}
		tree, moved := infer.Refine(res.Tree, ms)
		out := &Outcome{}
		ids := make([]comm.Identity, n)
		for i := range ids {
			ids[i] = comm.Identity{Rank: i, Core: -1, Socket: -1}
		}
		levels, err := out.levelsFromTree(n, ids, hostGroups(ids, true), hosts, live.Result{Tree: tree, Measured: ms}, nil, Options{Blind: true, Gap: TreeGap()})
		if err != nil {
			t.Fatal(err)
		}
		best := 0.0
		for _, l := range levels {
			if v, err := metrics.NMIGroups(l.Groups, truth.Groups, n); err == nil && v > best {
				best = v
			}
		}
		if best >= 0.99 {
			ok++
		}
		par := map[string][]int{}
		tt := tree.Topo()
		for _, e := range tt.Edges {
			a, b := e.A, e.B
			if b[0] == 'r' {
				a, b = b, a
			}
			if a[0] == 'r' {
				var r int
				fmt.Sscanf(a, "r%d", &r)
				par[b] = append(par[b], r)
			}
		}
		var pg [][]int
		for _, g := range par {
			pg = append(pg, g)
		}
		pn, _ := metrics.NMIGroups(pg, truth.Groups, n)
		t.Logf("seed %d: by parent NMI %.3f; switch NMI %.3f, %d switches, %d pairs, moved %d, levels %d", seed, pn, best, tree.Switches(), res.Pairs, moved, len(levels))
	}
	t.Logf("switch NMI >= 0.99 in %d of 20", ok)
}

type recordingProber struct {
	p  infer.Prober
	ms *[]infer.Measurement
}

func (r recordingProber) RTT(a, b int) (infer.RTT, error) {
	v, err := r.p.RTT(a, b)
	*r.ms = append(*r.ms, infer.Measurement{A: a, B: b, RTT: v})
	return v, err
}

func sortFloats(v []float64) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}
