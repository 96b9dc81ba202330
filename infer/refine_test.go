package infer

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// twoSwitches is the truth of the refinement tests: switch X (node 0)
// with hosts 0-2, switch Y 1.25 us away with hosts 3-5, every host link
// 5 us.
func twoSwitches() *trueTree {
	tt := &trueTree{parent: []int{-1, 0}, up: []float64{0, 1.25e-6}}
	for _, sw := range []int{0, 0, 0, 1, 1, 1} {
		tt.parent = append(tt.parent, sw)
		tt.up = append(tt.up, 5e-6)
		tt.host = append(tt.host, len(tt.parent)-1)
	}
	return tt
}

// handTree builds a tree from (rank, parent, up) nodes in order, node 0 the
// root (rank -1 for a switch).
func handTree(nodes ...node) *Tree {
	t := &Tree{byRank: rankIndex{}, nodes: nodes}
	for i, x := range nodes {
		if x.rank >= 0 {
			t.byRank.set(x.rank, i)
		}
	}
	t.computeDepths()
	return t
}

// inferExact infers the truth's tree from exact round trips, hosts in
// rank order.
func inferExact(t *testing.T, tt *trueTree) Result {
	t.Helper()
	hosts := make([]int, len(tt.host))
	for i := range hosts {
		hosts[i] = i
	}
	res, err := Infer(hosts, &exactProber{tt: tt}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// exactPair measures pair a-b of the truth exactly.
func exactPair(tt *trueTree, a, b int) Measurement {
	d := 2 * tt.dist(a, b)
	return Measurement{A: a, B: b, RTT: RTT{Min: d, Max: d}}
}

// exactPairs measures every pair of the truth exactly.
func exactPairs(tt *trueTree, n int) []Measurement {
	var ms []Measurement
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			ms = append(ms, exactPair(tt, a, b))
		}
	}
	return ms
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// checkTruthDistances reports every pair of the first n hosts whose
// distance in got is not the truth's (what is prefixes the message).
func checkTruthDistances(t *testing.T, what string, got *Tree, tt *trueTree, n int) {
	t.Helper()
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			if d, want := got.Distance(a, b), tt.dist(a, b); !near(d, want) {
				t.Errorf("%s distance %d-%d = %.3g us, want %.3g us", what, a, b, d*1e6, want*1e6)
			}
		}
	}
}

// The first host of switch Y was hung from X (right when it was added:
// the tree held only X's hosts), and Y was later created on another
// host's edge: refinement moves it under Y, and every distance of the
// truth comes back.
func TestRefineMovesStrandedFirstHost(t *testing.T) {
	tt := twoSwitches()
	// Build by hand: node 0 host 0; node 1 switch X; hosts 1, 2, 3 on X
	// (3 with 6.25 us: stranded); node 5 switch Y on X (1.25 us), hosts
	// 4 and 5 on Y.
	wrong := handTree(
		node{0, -1, 0},
		node{-1, 0, 5e-6}, // X
		node{1, 1, 5e-6},
		node{2, 1, 5e-6},
		node{3, 1, 6.25e-6},
		node{-1, 1, 1.25e-6}, // Y
		node{4, 5, 5e-6},
		node{5, 5, 5e-6},
	)
	if d := wrong.Distance(3, 4); near(d, 10e-6) {
		t.Fatalf("the stranded tree already has 3-4 at %g", d)
	}
	got, moved := Refine(wrong, exactPairs(tt, 6))
	if moved < 1 {
		t.Errorf("moved %d leaves, want host 3 moved", moved)
	}
	checkTruthDistances(t, "refined", got, tt, 6)
	if got.Switches() != 2 {
		t.Errorf("%d switches, want 2", got.Switches())
	}
}

// Without noise the tree procedure add builds fits exactly and nothing
// moves: random trees, exact probes.
func TestRefineKeepsExactTrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for trial := 0; trial < 20; trial++ {
		tt := randomTrueTree(rng, 2+rng.IntN(6), 6+rng.IntN(20), 6)
		n := len(tt.host)
		res := inferExact(t, tt)
		got, moved := Refine(res.Tree, exactPairs(tt, n))
		if moved != 0 {
			t.Errorf("trial %d: %d leaves moved in an exact tree", trial, moved)
		}
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				if d, want := got.Distance(a, b), tt.dist(a, b); math.Abs(d-want) > 1e-9*want {
					t.Fatalf("trial %d: distance %d-%d %g, want %g", trial, a, b, d, want)
				}
			}
		}
	}
}

// A switch split in two by noise (a 0.2 us edge that puts hosts 1 and 2
// 0.4 us closer than they are) is merged back; the 1.25 us link between
// two real switches, which lengthens every pair across it, stays.
func TestContractUnsupportedMergesNoiseSplits(t *testing.T) {
	tt := twoSwitches()
	split := handTree(
		node{0, -1, 0},
		node{-1, 0, 5e-6},    // X
		node{-1, 1, 0.2e-6},  // X', a noise copy of X
		node{1, 2, 4.8e-6},   // hosts 1 and 2 behind it, 5 us from X, but
		node{2, 2, 4.8e-6},   // 9.6 us apart where they are 10 us
		node{-1, 1, 1.25e-6}, // Y
		node{3, 5, 5e-6},
		node{4, 5, 5e-6},
		node{5, 5, 5e-6},
	)
	got := split.contractUnsupported(exactPairs(tt, 6))
	if got.Switches() != 2 {
		t.Fatalf("%d switches after contraction, want 2 (X and Y)", got.Switches())
	}
	checkTruthDistances(t, "contracted", got, tt, 6)
}

// Siblings groups hosts by the switch they hang from, the root host with
// the switch below it.
func TestSiblings(t *testing.T) {
	tt := handTree(
		node{0, -1, 0},
		node{-1, 0, 5e-6}, // X
		node{1, 1, 5e-6},
		node{-1, 1, 1e-6}, // Y
		node{2, 3, 5e-6},
		node{3, 3, 40e-6},
	)
	if got, want := fmt.Sprint(tt.Siblings()), "[[0 1] [2 3]]"; got != want {
		t.Errorf("siblings %s, want %s", got, want)
	}
}

// Whatever the measurements, refinement leaves every rank a leaf and the
// tree decodable: noisy random measurements on random trees, some host
// links of zero length (where placing "at the end" of an edge and "at its
// start" are the same offset).
func TestRefineKeepsRanksLeaves(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for trial := 0; trial < 300; trial++ {
		tt := randomTrueTree(rng, 2+rng.IntN(5), 6+rng.IntN(14), 5)
		for _, h := range tt.host {
			if rng.IntN(2) == 0 {
				tt.up[h] = 0
			}
		}
		n := len(tt.host)
		res := inferExact(t, tt)
		var ms []Measurement
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				d := 2 * tt.dist(a, b) * (1 + 0.3*rng.Float64())
				ms = append(ms, Measurement{A: a, B: b, RTT: RTT{Min: d, Max: d * 1.2, Next: d * 1.1}})
			}
		}
		got, _ := Refine(res.Tree, ms)
		deg := make([]int, len(got.nodes))
		for _, x := range got.nodes {
			if x.parent >= 0 {
				deg[x.parent]++
			}
		}
		for i, x := range got.nodes {
			if x.parent >= 0 {
				deg[i]++
			}
			if x.rank >= 0 && deg[i] != 1 {
				t.Fatalf("trial %d: rank %d has %d edges", trial, x.rank, deg[i])
			}
			if x.rank < -1 {
				t.Fatalf("trial %d: node %d is a merged switch still in the tree", trial, i)
			}
		}
		b, _ := got.MarshalBinary()
		if _, err := UnmarshalTree(b); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
	}
}

// A rank of a socket (switch S, 150 ns links, the other socket S' 150 ns
// beyond the host's switch Y) has measured its socket-mates at 300 ns, the
// other socket at 600 ns, and four hosts behind a 5 us uplink 250 ns
// closer than the tree has them (the far edges carry the error of far
// measurements). In absolute deviation the four far pairs outvote the
// near ones and pull the rank out of its socket up to Y; weighed by the
// inverse of their distance (relative jitter), the near pairs keep it.
func TestReplaceWeighsNearPairsUnderRelativeJitter(t *testing.T) {
	const ns = 1e-9
	build := func() *adjTree {
		return newAdjTree(handTree(
			node{rank: 0, parent: -1},                // 0
			node{rank: -1, parent: 0, up: 150 * ns},  // 1: S
			node{rank: 1, parent: 1, up: 150 * ns},   // 2
			node{rank: 2, parent: 1, up: 150 * ns},   // 3
			node{rank: 3, parent: 1, up: 150 * ns},   // 4
			node{rank: -1, parent: 1, up: 150 * ns},  // 5: Y
			node{rank: -1, parent: 5, up: 150 * ns},  // 6: S'
			node{rank: 4, parent: 6, up: 150 * ns},   // 7
			node{rank: -1, parent: 5, up: 5000 * ns}, // 8: far switch
			node{rank: 10, parent: 8, up: 5000 * ns},
			node{rank: 11, parent: 8, up: 5000 * ns},
			node{rank: 12, parent: 8, up: 5000 * ns},
			node{rank: 13, parent: 8, up: 5000 * ns},
		))
	}
	rtt := func(oneWay, spread float64) RTT { return RTT{Min: 2 * oneWay * ns, Max: 2 * (oneWay + spread) * ns} }
	peers := map[int]RTT{0: rtt(300, 0.5), 2: rtt(300, 0.5), 3: rtt(300, 0.5), 4: rtt(600, 1)}
	for _, far := range []int{10, 11, 12, 13} {
		peers[far] = rtt(10300-250, 10)
	}
	if !build().replace(1, peers, false) {
		t.Errorf("with equal weights rank 1 stayed in its socket; the test's far pairs no longer outvote the near ones")
	}
	g := build()
	if g.replace(1, peers, true) {
		t.Errorf("weighed by distance, rank 1 left its socket")
	}
	if d := g.tree(0).Distance(1, 2); math.Abs(d-300*ns) > 1e-12 {
		t.Errorf("rank 1 to its socket-mate: %g ns, want 300", d/ns)
	}
}

// The weighted median reused across calls, against the definition (the
// first value in increasing order past half the weight) on values that
// drift a little between calls, as along an edge, and that jump, as from
// one edge to another.
func TestMedianSorterAgainstDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	want := func(x, w []float64) float64 {
		idx := make([]int, len(x))
		total := 0.0
		for k := range idx {
			idx[k] = k
			total += weight(w, k)
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
		acc := 0.0
		for _, k := range idx {
			if acc += weight(w, k); 2*acc > total {
				return x[k]
			}
		}
		return x[idx[len(idx)-1]]
	}
	for c := 0; c < 200; c++ {
		n := 1 + rng.IntN(60)
		var w []float64
		if c%3 != 0 { // every third case equal weights (w nil)
			w = make([]float64, n)
			for k := range w {
				w[k] = 1 / (0.1 + rng.Float64())
			}
		}
		s := newMedianSorter(w, n)
		x := make([]float64, n)
		side := make([]float64, n)
		for step := 0; step < 40; step++ {
			if step%17 == 0 { // a jump: every value anew, some equal
				for k := range x {
					x[k] = float64(rng.IntN(2*n)) * 1e-7
					side[k] = float64(1 - 2*rng.IntN(2))
				}
			} else {
				for k := range x {
					x[k] += side[k] * 1e-8
				}
			}
			if got, exp := s.median(x), want(x, w); got != exp {
				t.Fatalf("case %d step %d: median %g, want %g (x %v)", c, step, got, exp, x)
			}
		}
	}
}
