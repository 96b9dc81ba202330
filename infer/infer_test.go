package infer

import (
	"math"
	"math/rand/v2"
	"testing"
)

// trueTree is a random ground-truth network: switches in a random tree,
// hosts hanging from switches, every edge a random latency.
type trueTree struct {
	parent []int // node -> parent (-1 root)
	up     []float64
	host   []int // rank -> node
	deg    []int
}

func randomTrueTree(rng *rand.Rand, switches, hosts, maxPorts int) *trueTree {
	return randomTrueTreeQ(rng, switches, hosts, maxPorts, false)
}

// randomTrueTreeQ with quantized set makes every latency a whole number of
// microseconds, so that many hosts are equidistant (ties, as real
// switches with identical ports give).
func randomTrueTreeQ(rng *rand.Rand, switches, hosts, maxPorts int, quantized bool) *trueTree {
	tt := &trueTree{}
	lat := func() float64 {
		if quantized {
			return 1e-6 * float64(1+rng.IntN(3))
		}
		return 1e-6 * (1 + rng.Float64()*9)
	}
	add := func(p int, l float64) int {
		tt.parent = append(tt.parent, p)
		tt.up = append(tt.up, l)
		tt.deg = append(tt.deg, 0)
		if p >= 0 {
			tt.deg[p]++
			tt.deg[len(tt.deg)-1]++
		}
		return len(tt.parent) - 1
	}
	add(-1, 0)
	for s := 1; s < switches; s++ {
		var free []int
		for p := 0; p < s; p++ {
			if tt.deg[p] < maxPorts-1 {
				free = append(free, p)
			}
		}
		add(free[rng.IntN(len(free))], lat())
	}
	for h := 0; h < hosts; h++ {
		var free []int
		for s := 0; s < switches; s++ {
			if tt.deg[s] < maxPorts {
				free = append(free, s)
			}
		}
		if len(free) == 0 {
			break // every port taken: fewer hosts than asked
		}
		tt.host = append(tt.host, add(free[rng.IntN(len(free))], lat()))
	}
	return tt
}

func (tt *trueTree) dist(a, b int) float64 {
	depth := func(x int) int {
		d := 0
		for ; tt.parent[x] >= 0; x = tt.parent[x] {
			d++
		}
		return d
	}
	x, y := tt.host[a], tt.host[b]
	dx, dy := depth(x), depth(y)
	s := 0.0
	for dx > dy {
		s += tt.up[x]
		x, dx = tt.parent[x], dx-1
	}
	for dy > dx {
		s += tt.up[y]
		y, dy = tt.parent[y], dy-1
	}
	for x != y {
		s += tt.up[x] + tt.up[y]
		x, y = tt.parent[x], tt.parent[y]
	}
	return s
}

type exactProber struct {
	tt *trueTree
	n  int
}

func (p *exactProber) RTT(a, b int) (RTT, error) {
	p.n++
	d := 2 * p.tt.dist(a, b)
	return RTT{Min: d, Max: d}, nil
}

// TestShiraiReconstructsTreeMetric: with exact RTTs the inferred tree
// reproduces every host-to-host latency (the tree metric is recovered).
func TestShiraiReconstructsTreeMetric(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 60; trial++ {
		tt := randomTrueTreeQ(rng, 2+rng.IntN(8), 3+rng.IntN(40), 3+rng.IntN(10), trial%2 == 1)
		n := len(tt.host)
		hosts := rng.Perm(n)
		res, err := Infer(hosts, &exactProber{tt: tt}, 1)
		if err != nil {
			t.Fatal(err)
		}
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				got, want := res.Tree.Distance(a, b), tt.dist(a, b)
				if math.Abs(got-want) > 1e-12 {
					t.Fatalf("trial %d: distance %d-%d = %g, want %g", trial, a, b, got, want)
				}
			}
		}
	}
}

// TestShiraiProbeBound: procedure add makes at most (p(d-1)+1)(N-2)+1
// measurements (Sect. 3.3), p the maximum ports of a switch and d the
// maximum number of hops between hosts.
func TestShiraiProbeBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for trial := 0; trial < 30; trial++ {
		maxPorts := 3 + rng.IntN(6)
		tt := randomTrueTree(rng, 2+rng.IntN(10), 3+rng.IntN(60), maxPorts)
		n := len(tt.host)
		p, d := 0, 0
		for _, g := range tt.deg[:len(tt.deg)-n] {
			p = max(p, g)
		}
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				d = max(d, tt.hops(a, b))
			}
		}
		res, err := Infer(rng.Perm(n), &exactProber{tt: tt}, 2)
		if err != nil {
			t.Fatal(err)
		}
		bound := (p*(d-1)+1)*(n-2) + 1
		if res.AddMeasurements > bound {
			t.Fatalf("trial %d: add made %d measurements, bound (p(d-1)+1)(N-2)+1 = %d (p=%d d=%d N=%d)", trial, res.AddMeasurements, bound, p, d, n)
		}
	}
}

func (tt *trueTree) hops(a, b int) int {
	anc := map[int]int{}
	h := 0
	for x := tt.host[a]; x >= 0; x = tt.parent[x] {
		anc[x] = h
		h++
	}
	h = 0
	for y := tt.host[b]; ; y = tt.parent[y] {
		if d, ok := anc[y]; ok {
			return d + h
		}
		h++
	}
}

// TestShiraiEq1BranchPoint: the third host hangs from a new switch at the
// distances of Eq. (1): x = (AC+AB-BC)/4 etc. (RTTs, hence /4).
func TestShiraiEq1BranchPoint(t *testing.T) {
	// One-way: A-X 3us, B-X 5us, C-X 2us.
	rtt := map[[2]int]float64{{0, 1}: 16e-6, {0, 2}: 10e-6, {1, 2}: 14e-6}
	p := proberFunc(func(a, b int) (RTT, error) {
		v := rtt[[2]int{min(a, b), max(a, b)}]
		return RTT{Min: v, Max: v}, nil
	})
	res, err := Infer([]int{0, 1, 2}, p, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Tree
	if tr.Switches() != 1 {
		t.Fatalf("%d switches, want 1", tr.Switches())
	}
	x := -1
	for i, n := range tr.nodes {
		if n.rank < 0 {
			x = i
		}
	}
	for rank, want := range map[int]float64{0: 3e-6, 1: 5e-6, 2: 2e-6} {
		if got := tr.nodeDistance(tr.byRank.at(rank), x); math.Abs(got-want) > 1e-15 {
			t.Errorf("host %d to the branching point: %g, want %g", rank, got, want)
		}
	}
}

type proberFunc func(a, b int) (RTT, error)

func (f proberFunc) RTT(a, b int) (RTT, error) { return f(a, b) }

func TestWireRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	tt := randomTrueTree(rng, 5, 20, 6)
	res, err := Infer(rng.Perm(20), &exactProber{tt: tt}, 1)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := res.Tree.MarshalBinary()
	back, err := UnmarshalTree(enc)
	if err != nil {
		t.Fatal(err)
	}
	for a := 0; a < 20; a++ {
		for b := 0; b < 20; b++ {
			if back.Distance(a, b) != res.Tree.Distance(a, b) {
				t.Fatal("distances changed through the wire form")
			}
		}
	}
	bad := append([]byte(nil), enc...)
	bad[16*3+4] = 3 // node 3's parent := 3
	if _, err := UnmarshalTree(bad); err == nil {
		t.Fatal("self-parent accepted")
	}
}

func FuzzUnmarshalTree(f *testing.F) {
	tr := NewTree(0)
	tr.attach(0, 1, 1e-6)
	enc, _ := tr.MarshalBinary()
	f.Add(enc)
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := UnmarshalTree(b)
		if err != nil {
			return
		}
		rs := tr.Ranks()
		for _, a := range rs {
			for _, c := range rs {
				if d := tr.Distance(a, c); d < 0 {
					t.Fatalf("negative distance %g", d)
				}
			}
		}
	})
}

// EachDistance gives Distance's values bit for bit (levels are cut from
// them, and a cut at a tie must not move), on inferred trees of random
// latencies and random insertion orders, so that rank 0 is not always
// the root.
func TestEachDistanceIsDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	for trial := 0; trial < 30; trial++ {
		tt := randomTrueTreeQ(rng, 2+rng.IntN(8), 3+rng.IntN(40), 3+rng.IntN(10), false)
		n := len(tt.host)
		res, err := Infer(rng.Perm(n), &exactProber{tt: tt}, 1)
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		res.Tree.EachDistance(n, func(i, j int, d float64) {
			calls++
			if i >= j {
				t.Fatalf("trial %d: pair %d-%d out of order", trial, i, j)
			}
			if want := res.Tree.Distance(i, j); d != want {
				t.Fatalf("trial %d: %d-%d = %v, Distance %v", trial, i, j, d, want)
			}
		})
		if calls != n*(n-1)/2 {
			t.Fatalf("trial %d: %d pairs, want %d", trial, calls, n*(n-1)/2)
		}
	}
}
