package cluster

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"netaware/topo"
)

// handDendrogram: points 0,1 merge at 1.0, 2,3 at 1.1, 4,5 at 0.95, then
// {0,1}+{2,3} at 10, then +{4,5} at 100.
func handDendrogram() *Dendrogram {
	return &Dendrogram{N: 6, Merges: []Merge{
		{A: 0, B: 1, Height: 1.0, Size: 2},
		{A: 2, B: 3, Height: 1.1, Size: 2},
		{A: 4, B: 5, Height: 0.95, Size: 2},
		{A: 6, B: 7, Height: 10, Size: 4},
		{A: 8, B: 9, Height: 100, Size: 6},
	}}
}

func TestLevelsFromDendrogramHand(t *testing.T) {
	lv, err := LevelsFromDendrogram(handDendrogram(), GapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []topo.Level{
		{Name: "level-1", Groups: [][]int{{0, 1}, {2, 3}, {4, 5}}},
		{Name: "level-2", Groups: [][]int{{0, 1, 2, 3}, {4, 5}}},
		{Name: "all", Groups: [][]int{{0, 1, 2, 3, 4, 5}}},
	}
	if !reflect.DeepEqual(lv, want) {
		t.Fatalf("got %+v\nwant %+v", lv, want)
	}
	cuts, err := LevelCuts(handDendrogram(), GapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cuts, []float64{1.1, 10}) {
		t.Fatalf("cuts %v, want [1.1 10]", cuts)
	}
}

func TestGapBoundariesRule(t *testing.T) {
	o := DefaultGapOptions()
	cases := []struct {
		h    []float64
		want []int
	}{
		{[]float64{1, 1.02, 1.03, 2, 2.05, 20}, []int{2, 4}}, // bands 1, 2, 20
		{[]float64{1, 1.2, 1.44}, nil},                       // 20% steps are below MinJump
		{[]float64{0, 0, 1, 1.01}, []int{1}},                 // identical points are their own band
		{[]float64{1, 1.5, 3}, []int{0, 1}},                  // 1.5x then 2x: both clear jumps
		{[]float64{1, 2, 3}, []int{0, 1}},                    // each band is one height (spread 0), 1.5x >= 1.25x
		{[]float64{5}, nil},
		{nil, nil},
	}
	for _, c := range cases {
		if got := gapBoundaries(c.h, o); !reflect.DeepEqual(got, c.want) {
			t.Errorf("gapBoundaries(%v) = %v, want %v", c.h, got, c.want)
		}
	}
	// A band spread over 1..1.8 in small steps is not cut by a further 1.4x
	// step: log(1.4)=0.34 < 3*log(1.8)=1.76.
	h := []float64{1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 2.52}
	if got := gapBoundaries(h, o); got != nil {
		t.Errorf("spread band cut at %v", got)
	}
}

func TestLevelsNonMonotoneHeights(t *testing.T) {
	// Centroid-like linkage can merge a parent below its child; levels must
	// still be nested, so the parent counts at its child's height.
	d := &Dendrogram{N: 4, Merges: []Merge{{A: 0, B: 1, Height: 2}, {A: 4, B: 2, Height: 1.9}, {A: 5, B: 3, Height: 40}}}
	lv, err := LevelsFromDendrogram(d, GapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []topo.Level{{Name: "level-1", Groups: [][]int{{0, 1, 2}, {3}}}, {Name: "all", Groups: [][]int{{0, 1, 2, 3}}}}
	if !reflect.DeepEqual(lv, want) {
		t.Fatalf("got %+v", lv)
	}
}

func TestValidateDendrogramRejects(t *testing.T) {
	bad := []*Dendrogram{
		nil,
		{N: 3, Merges: []Merge{{A: 0, B: 1}}},
		{N: 3, Merges: []Merge{{A: 0, B: 1}, {A: 0, B: 2}}},
		{N: 3, Merges: []Merge{{A: 0, B: 1}, {A: 3, B: 4}}},
		{N: 3, Merges: []Merge{{A: 0, B: 1}, {A: 3, B: 2, Height: math.NaN()}}},
		{N: 3, Merges: []Merge{{A: 0, B: 1, Height: -1}, {A: 3, B: 2}}},
		{N: 2, Merges: []Merge{{A: 1, B: 1}}},
	}
	for i, d := range bad {
		if _, err := LevelsFromDendrogram(d, GapOptions{}); err == nil {
			t.Errorf("case %d: accepted %+v", i, d)
		}
	}
	if lv, err := LevelsFromDendrogram(&Dendrogram{N: 1}, GapOptions{}); err != nil || len(lv) != 1 || lv[0].Name != "all" {
		t.Errorf("one point: %v %v", lv, err)
	}
	if lv, err := LevelsFromDendrogram(&Dendrogram{N: 0}, GapOptions{}); err != nil || len(lv) != 0 {
		t.Errorf("no points: %v %v", lv, err)
	}
}

func TestLevelsFromPartitions(t *testing.T) {
	lv, err := LevelsFromPartitions(4, []Labels{{0, 1, 2, 3}, {5, 5, 7, 7}, {1, 1, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	want := []topo.Level{{Name: "level-1", Groups: [][]int{{0, 1}, {2, 3}}}, {Name: "all", Groups: [][]int{{0, 1, 2, 3}}}}
	if !reflect.DeepEqual(lv, want) {
		t.Fatalf("got %+v", lv)
	}
	if _, err := LevelsFromPartitions(4, []Labels{{0, 0, 1, 1}, {0, 1, 0, 1}}); err == nil {
		t.Fatal("accepted crossing partitions")
	}
	if _, err := LevelsFromPartitions(3, []Labels{{0, Noise, 1}}); err == nil {
		t.Fatal("accepted noise")
	}
	if _, err := LevelsFromPartitions(3, []Labels{{0, 1}}); err == nil {
		t.Fatal("accepted short labels")
	}
}

// checkLevels asserts the TOPOLOGY.md rules: every level lists every point
// once, groups sorted, each level a coarsening of the one before.
func checkLevels(t *testing.T, n int, lv []topo.Level) {
	t.Helper()
	var prev Labels
	for li, l := range lv {
		lab := make(Labels, n)
		for i := range lab {
			lab[i] = -1
		}
		for g, grp := range l.Groups {
			for k, p := range grp {
				if p < 0 || p >= n || lab[p] >= 0 {
					t.Fatalf("level %d lists point %d twice or out of range", li, p)
				}
				if k > 0 && grp[k-1] >= p {
					t.Fatalf("level %d group %d not sorted", li, g)
				}
				lab[p] = g
			}
		}
		for i, v := range lab {
			if v < 0 {
				t.Fatalf("level %d misses point %d", li, i)
			}
		}
		if prev != nil && !isCoarsening(prev, lab) {
			t.Fatalf("level %d is not a coarsening of level %d", li, li-1)
		}
		prev = lab
	}
}

func TestLevelsFramLikeSingleLinkage(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		m0, socket0, node0 := framLike(4, 16, 0.02, seed)
		m, tr := shuffled(m0, seed, socket0, node0)
		lv, err := LevelsFromDendrogram(singleLinkageForTest(t, m), GapOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkLevels(t, m.N, lv)
		if len(lv) != 3 {
			t.Fatalf("seed %d: %d levels, want socket, node, all: %+v", seed, len(lv), lv)
		}
		sameGroups(t, "socket", lv[0].Groups, tr[0])
		sameGroups(t, "node", lv[1].Groups, tr[1])
	}
}

func TestLevelsGrid5000LikeSingleLinkage(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		m0, site0 := grid5000Like(0.02, seed)
		m, tr := shuffled(m0, seed, site0)
		lv, err := LevelsFromDendrogram(singleLinkageForTest(t, m), GapOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkLevels(t, m.N, lv)
		sameGroups(t, "site", lv[0].Groups, tr[0])
		if lv[len(lv)-1].Name != "all" {
			t.Fatalf("last level %q", lv[len(lv)-1].Name)
		}
	}
}

// Property: on random dendrograms, levels always satisfy the topology rules.
func TestLevelsPropertyRandomDendrograms(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(30)
		m := NewMatrix(n)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				m.Set(i, j, math.Exp(4*rng.Float64()))
			}
		}
		d := singleLinkageForTest(t, m)
		lv, err := LevelsFromDendrogram(d, GapOptions{MinJump: 0.1 + rng.Float64(), SpreadFactor: 0.5 + 3*rng.Float64()})
		if err != nil {
			t.Fatal(err)
		}
		checkLevels(t, n, lv)
		if len(lv) == 0 || len(lv[len(lv)-1].Groups) != 1 {
			t.Fatalf("last level is not all: %+v", lv)
		}
	}
}

// The levels of the product: agglomerative clustering (cluster-A's
// implementation) of a fram-like RTT matrix must give exactly the sockets
// and the nodes, without being told how many there are.
func TestLevelsFramLikeAgglomerative(t *testing.T) {
	for _, link := range []Linkage{SingleLinkage, CompleteLinkage, AverageLinkage, WeightedLinkage, WardLinkage} {
		for seed := uint64(1); seed <= 4; seed++ {
			m0, socket0, node0 := framLike(4, 16, 0.02, seed)
			m, tr := shuffled(m0, seed, socket0, node0)
			d, err := Agglomerative(m, link)
			if err != nil {
				t.Fatal(err)
			}
			lv, err := LevelsFromDendrogram(d, GapOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkLevels(t, m.N, lv)
			if len(lv) != 3 {
				t.Fatalf("%s seed %d: %d levels, want socket, node, all: %+v", link, seed, len(lv), lv)
			}
			sameGroups(t, link.String()+" socket", lv[0].Groups, tr[0])
			sameGroups(t, link.String()+" node", lv[1].Groups, tr[1])
			// Cross-check: cutting at the reported heights with CutHeight
			// gives the same partitions.
			cuts, err := LevelCuts(d, GapOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for k, h := range cuts {
				l, err := CutHeight(d, h)
				if err != nil {
					t.Fatal(err)
				}
				if g := Groups(l); !reflect.DeepEqual(g, lv[k].Groups) {
					t.Errorf("%s: CutHeight(%v) = %v, level %d = %v", link, h, g, k, lv[k].Groups)
				}
			}
		}
	}
}

func TestLevelsGrid5000LikeAgglomerative(t *testing.T) {
	for _, link := range []Linkage{SingleLinkage, CompleteLinkage, AverageLinkage, WeightedLinkage, WardLinkage} {
		for seed := uint64(1); seed <= 4; seed++ {
			m0, site0 := grid5000Like(0.02, seed)
			m, tr := shuffled(m0, seed, site0)
			d, err := Agglomerative(m, link)
			if err != nil {
				t.Fatal(err)
			}
			lv, err := LevelsFromDendrogram(d, GapOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkLevels(t, m.N, lv)
			sameGroups(t, link.String()+" site", lv[0].Groups, tr[0])
			if lv[len(lv)-1].Name != "all" {
				t.Fatalf("last level %q", lv[len(lv)-1].Name)
			}
		}
	}
}

// A larger fram-like platform (16 nodes, 512 ranks) with 5% jitter.
func TestLevelsFramLikeLargeAverage(t *testing.T) {
	m0, socket0, node0 := framLike(16, 16, 0.05, 42)
	m, tr := shuffled(m0, 42, socket0, node0)
	d, err := Agglomerative(m, AverageLinkage)
	if err != nil {
		t.Fatal(err)
	}
	lv, err := LevelsFromDendrogram(d, GapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lv) != 3 {
		t.Fatalf("%d levels: want socket, node, all", len(lv))
	}
	sameGroups(t, "socket", lv[0].Groups, tr[0])
	sameGroups(t, "node", lv[1].Groups, tr[1])
}

// framPLogP gives each ordered pair of a fram-like platform PLogP parameters
// at one message size: latency and gap by level, overheads per rank
// (the receiver's slightly different from the sender's), 2% jitter.
func framPLogP(nodes, cores int, seed uint64) (int, func(i, j int) (PLogPParams, bool), Labels, Labels) {
	per := 2 * cores
	n := nodes * per
	rng := newRand(seed)
	par := make([]PLogPParams, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			l, g := 1.5e-6, 0.9e-6 // different nodes
			switch {
			case i/cores == j/cores:
				l, g = 0.2e-6, 0.1e-6
			case i/per == j/per:
				l, g = 0.4e-6, 0.2e-6
			}
			jit := func(v float64) float64 { return v * (1 + 0.02*(2*rng.Float64()-1)) }
			par[i*n+j] = PLogPParams{L: jit(l), Os: jit(0.1e-6), Or: jit(0.12e-6), G: jit(g)}
		}
	}
	socket, node := make(Labels, n), make(Labels, n)
	for i := range socket {
		socket[i], node[i] = i/cores, i/per
	}
	return n, func(i, j int) (PLogPParams, bool) { return par[i*n+j], true }, socket, node
}

func TestReinfjellPLogPDistanceLevels(t *testing.T) {
	n, at, socket, node := framPLogP(3, 16, 11)
	d, missing, err := PLogPDistance(n, at)
	if err != nil || missing != 0 {
		t.Fatal(err, missing)
	}
	lv, err := LevelsFromDistances(d, AverageLinkage, GapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lv) != 3 {
		t.Fatalf("D(m): %d levels %+v", len(lv), lv)
	}
	sameGroups(t, "D(m) socket", lv[0].Groups, socket)
	sameGroups(t, "D(m) node", lv[1].Groups, node)

	v, err := PLogPFeatures(n, at)
	if err != nil {
		t.Fatal(err)
	}
	a, err := EuclideanDistance(v)
	if err != nil {
		t.Fatal(err)
	}
	lv, err = LevelsFromDistances(a, AverageLinkage, GapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lv) != 3 {
		t.Fatalf("A(m): %d levels %+v", len(lv), lv)
	}
	sameGroups(t, "A(m) socket", lv[0].Groups, socket)
	sameGroups(t, "A(m) node", lv[1].Groups, node)
}

// FuzzLevelsFromDendrogram: arbitrary merge lists never panic, and whatever
// is accepted yields valid levels.
func FuzzLevelsFromDendrogram(f *testing.F) {
	f.Add(uint8(3), []byte{0, 1, 10, 3, 2, 200})
	f.Add(uint8(4), []byte{0, 1, 0, 2, 3, 0, 4, 5, 255})
	f.Add(uint8(2), []byte{1, 1, 1})
	f.Fuzz(func(t *testing.T, n uint8, b []byte) {
		d := &Dendrogram{N: int(n % 40)}
		for k := 0; k+2 < len(b); k += 3 {
			d.Merges = append(d.Merges, Merge{A: int(b[k]), B: int(b[k+1]), Height: float64(b[k+2]) / 8})
		}
		lv, err := LevelsFromDendrogram(d, GapOptions{})
		if err != nil {
			return
		}
		checkLevels(t, d.N, lv)
	})
}

func BenchmarkLevelsFromDendrogram512(b *testing.B) {
	m, _, _ := framLike(16, 16, 0.02, 1)
	d, err := Agglomerative(m, AverageLinkage)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := LevelsFromDendrogram(d, GapOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// Baseline for the above: the agglomerative clustering that produces the
// dendrogram, on the same matrix.
func BenchmarkAgglomerativeAverage512(b *testing.B) {
	m, _, _ := framLike(16, 16, 0.02, 1)
	for i := 0; i < b.N; i++ {
		if _, err := Agglomerative(m, AverageLinkage); err != nil {
			b.Fatal(err)
		}
	}
}

// hierLike builds a three-tier platform with the given ratios: groups of
// size a inside groups of size b*a, c of those; distances 1, r1, r1*r2.
func hierLike(a, b, c int, r1, r2, jitter float64, seed uint64) (*Matrix, Labels, Labels) {
	n := a * b * c
	rng := newRand(seed)
	m := NewMatrix(n)
	l1, l2 := make(Labels, n), make(Labels, n)
	for i := range l1 {
		l1[i], l2[i] = i/a, i/(a*b)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d := r1 * r2
			switch {
			case l1[i] == l1[j]:
				d = 1
			case l2[i] == l2[j]:
				d = r1
			}
			m.Set(i, j, d*(1+jitter*(2*rng.Float64()-1)))
		}
	}
	return m, l1, l2
}

// Property: with level ratios of 1.5x or more and 2% jitter, average
// linkage + the gap rule recovers both levels exactly, whatever the sizes.
func TestLevelsPropertyRandomPlatforms(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		rng := newRand(1000 + seed)
		a, b, c := 2+rng.IntN(8), 2+rng.IntN(3), 2+rng.IntN(5)
		r1, r2 := 1.5+2*rng.Float64(), 1.5+20*rng.Float64()
		m0, l10, l20 := hierLike(a, b, c, r1, r2, 0.02, seed)
		m, tr := shuffled(m0, seed, l10, l20)
		lv, err := LevelsFromDistances(m, AverageLinkage, GapOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkLevels(t, m.N, lv)
		if len(lv) != 3 {
			t.Fatalf("seed %d (%dx%dx%d, ratios %.2f %.2f): %d levels", seed, a, b, c, r1, r2, len(lv))
		}
		sameGroups(t, "inner", lv[0].Groups, tr[0])
		sameGroups(t, "outer", lv[1].Groups, tr[1])
	}
}

func TestLevelsDegeneratePlatforms(t *testing.T) {
	// One fram node: sockets, then all.
	m, socket, _ := framLike(1, 16, 0.02, 9)
	lv, err := LevelsFromDistances(m, AverageLinkage, GapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lv) != 2 || lv[1].Name != "all" {
		t.Fatalf("one node: %+v", lv)
	}
	sameGroups(t, "socket", lv[0].Groups, socket)
	// Eight single-rank nodes on one switch: nothing but all.
	m = NewMatrix(8)
	rng := newRand(3)
	for i := 0; i < 8; i++ {
		for j := i + 1; j < 8; j++ {
			m.Set(i, j, 3e-6*(1+0.02*(2*rng.Float64()-1)))
		}
	}
	lv, err = LevelsFromDistances(m, AverageLinkage, GapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lv) != 1 || lv[0].Name != "all" {
		t.Fatalf("flat: %+v", lv)
	}
}

// tripleSome multiplies a seeded 1% of the pairs by 3 (interference
// outliers that a single measurement round can leave in a matrix).
func tripleSome(m *Matrix, seed uint64) {
	rng := newRand(seed + 500)
	for i := 0; i < m.N; i++ {
		for j := i + 1; j < m.N; j++ {
			if rng.Float64() < 0.01 {
				m.Set(i, j, 3*m.At(i, j))
			}
		}
	}
}

func TestLevelsFramLikeHeavyNoise(t *testing.T) {
	for _, link := range []Linkage{SingleLinkage, AverageLinkage} {
		for seed := uint64(0); seed < 6; seed++ {
			m, socket, node := framLike(4, 16, 0.2, seed)
			tripleSome(m, seed)
			lv, err := LevelsFromDistances(m, link, GapOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(lv) != 3 {
				t.Fatalf("%s seed %d: %d levels", link, seed, len(lv))
			}
			sameGroups(t, "socket", lv[0].Groups, socket)
			sameGroups(t, "node", lv[1].Groups, node)
		}
	}
}

// Complete linkage is left out on purpose: a merge's height is its worst
// pair, so one tripled pair makes a spurious top level (documented).
func TestLevelsFlatNoisyHasNoLevels(t *testing.T) {
	for _, link := range []Linkage{SingleLinkage, AverageLinkage} {
		for seed := uint64(0); seed < 6; seed++ {
			m := NewMatrix(64)
			rng := newRand(seed)
			for i := 0; i < m.N; i++ {
				for j := i + 1; j < m.N; j++ {
					m.Set(i, j, 1+0.2*(2*rng.Float64()-1))
				}
			}
			tripleSome(m, seed)
			lv, err := LevelsFromDistances(m, link, GapOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(lv) != 1 {
				t.Errorf("%s seed %d: flat platform gave %d levels", link, seed, len(lv))
			}
		}
	}
}
