package infer

import (
	"math/rand/v2"
	"testing"
)

// starOfStars builds a ground truth with a root switch, one child switch
// per entry of ups (its edge length) and perLeaf hosts of 1 us on each
// child: ranks are numbered leaf by leaf.
func starOfStars(ups []float64, perLeaf int) *trueTree {
	tt := &trueTree{parent: []int{-1}, up: []float64{0}, deg: []int{0}}
	for _, u := range ups {
		tt.parent = append(tt.parent, 0)
		tt.up = append(tt.up, u)
	}
	for s := range ups {
		for h := 0; h < perLeaf; h++ {
			tt.parent = append(tt.parent, 1+s)
			tt.up = append(tt.up, 1e-6)
			tt.host = append(tt.host, len(tt.parent)-1)
		}
	}
	return tt
}

func exactTree(t *testing.T, p Prober, ranks []int) *Tree {
	t.Helper()
	res, err := Infer(ranks, p, 1)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tree
}

// TestMeasureNewcomersClosestBoundFirst: H (rank 7, on the second switch)
// has measured one far host; of the newcomers it measures those on its own
// switch, whose lower bound is 0, and never those beside the far host,
// which cannot beat the closest host already measured.
func TestMeasureNewcomersClosestBoundFirst(t *testing.T) {
	p := &exactProber{tt: starOfStars([]float64{50e-6, 50e-6}, 4)} // ranks 0-3 and 4-7
	view := exactTree(t, p, []int{0, 4})
	tr := exactTree(t, p, []int{0, 1, 2, 3, 4, 5, 6})
	for _, c := range []struct {
		cap  int
		want []int
	}{{1, []int{0, 5}}, {0, []int{0, 5, 6}}} {
		ad := NewAdder(7, p, 1)
		ad.NewcomerSamples = c.cap
		if _, err := ad.measure(0, false); err != nil {
			t.Fatal(err)
		}
		if err := ad.MeasureNewcomers(tr, view); err != nil {
			t.Fatal(err)
		}
		if len(ad.Known) != len(c.want) {
			t.Errorf("cap %d: measured %v, want %v", c.cap, keys(ad.Known), c.want)
		}
		for _, w := range c.want {
			if _, ok := ad.Known[w]; !ok {
				t.Errorf("cap %d: measured %v, want %v", c.cap, keys(ad.Known), c.want)
			}
		}
	}
}

func keys(m map[int]RTT) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestFindCloseHostOneFarSample: three clusters; H's own is 80 us from the
// root, the others 50 us. After one far sample the 3x and x/3 rules keep
// the third cluster (its distance to the sample is within [x/3, 3x]), so
// a random next choice could measure far again; choosing by lower bound
// goes to H's cluster. Over 40 seeds, never more than one far host.
func TestFindCloseHostOneFarSample(t *testing.T) {
	p := &exactProber{tt: starOfStars([]float64{50e-6, 50e-6, 80e-6}, 6)} // ranks 0-5, 6-11, 12-17
	tr := exactTree(t, p, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	for seed := uint64(0); seed < 40; seed++ {
		ad := NewAdder(17, p, seed)
		ad.Rand = rand.New(rand.NewPCG(seed, 3))
		best, err := ad.FindCloseHost(tr)
		if err != nil {
			t.Fatal(err)
		}
		far := 0
		for r := range ad.Known {
			if r < 12 {
				far++
			}
		}
		if far > 1 || best < 12 {
			t.Errorf("seed %d: %d far hosts measured (%v), closest %d", seed, far, keys(ad.Known), best)
		}
	}
}

// oneHighProber answers exactly, except that the first measurement of
// one pair comes back too high (a round whose best still carried a
// delay, the only error one-sided jitter makes).
type oneHighProber struct {
	exactProber
	a, b  int
	extra float64
	seen  bool
}

func (p *oneHighProber) RTT(a, b int) (RTT, error) {
	r, err := p.exactProber.RTT(a, b)
	if !p.seen && (a == p.a && b == p.b || a == p.b && b == p.a) {
		p.seen = true
		r = RTT{Min: r.Min + p.extra, Max: r.Max + p.extra}
	}
	return r, err
}

// TestConfirmOutvotesOneHighMinimum: one switch with five hosts; H's first
// RTT to A is 4 us too high, which moves the branching point on A-B 1 us
// past the switch. Without confirmation add creates a switch on B's edge;
// with one confirming measurement it hangs H from the switch.
func TestConfirmOutvotesOneHighMinimum(t *testing.T) {
	tt := starOfStars([]float64{10e-6}, 5) // ranks 0-4 on one switch
	for _, c := range []struct{ confirm, switches int }{{0, 2}, {1, 1}} {
		tr := exactTree(t, &exactProber{tt: tt}, []int{0, 1, 2, 3})
		if tr.Switches() != 1 {
			t.Fatalf("base tree: %d switches", tr.Switches())
		}
		p := &oneHighProber{exactProber: exactProber{tt: tt}, a: 4, b: 0, extra: 4e-6}
		ad := NewAdder(4, p, 1)
		ad.Confirm = c.confirm
		if err := ad.Add(tr, 0); err != nil {
			t.Fatal(err)
		}
		if got := tr.Switches(); got != c.switches {
			t.Errorf("confirm %d: %d switches, want %d", c.confirm, got, c.switches)
		}
		if c.confirm > 0 && ad.Remeasured == 0 {
			t.Errorf("confirm %d: nothing measured again", c.confirm)
		}
	}
}
