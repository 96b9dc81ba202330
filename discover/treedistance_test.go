package discover

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"netaware/cluster"
	"netaware/infer"
)

// noisyHierarchy is a tree of ranks 0..n-1 in sockets of 4 under hosts of
// 2 sockets under switches of 4 hosts, every edge jittered by up to jit
// (relative), with rank 0 at the root as inferred trees have it; and
// measurements of random pairs, some twice, off their path by up to
// twice jit.
func noisyHierarchy(seed uint64, n int, jit float64) (*infer.Tree, []infer.Measurement) {
	r := rand.New(rand.NewPCG(seed, 5))
	l := func(v float64) float64 { return v * (1 + jit*(2*r.Float64()-1)) }
	rank := []int{0, -1}
	parent := []int{-1, 0}
	up := []float64{0, l(0.15e-6)}
	node := func(rk, p int, u float64) int {
		rank, parent, up = append(rank, rk), append(parent, p), append(up, u)
		return len(rank) - 1
	}
	var sw, host, sock int
	for i := 1; i < n; i++ {
		if i%32 == 1 || i == 1 {
			sw = node(-1, 1, l(2e-6))
		}
		if i%8 == 1 || i == 1 {
			host = node(-1, sw, l(5e-6))
		}
		if i%4 == 1 || i == 1 {
			sock = node(-1, host, l(0.3e-6))
		}
		node(i, sock, l(0.15e-6))
	}
	t, err := infer.TreeOf(rank, parent, up)
	if err != nil {
		panic(err)
	}
	var ms []infer.Measurement
	for k := 0; k < 3*n; k++ {
		a, b := r.IntN(n), r.IntN(n)
		if a == b {
			continue
		}
		v := 2 * t.Distance(a, b) * (1 + 2*jit*(2*r.Float64()-1))
		ms = append(ms, infer.Measurement{A: a, B: b, RTT: infer.RTT{Min: v, Max: v}})
		if k%5 == 0 {
			ms = append(ms, infer.Measurement{A: b, B: a, RTT: infer.RTT{Min: 1.1 * v, Max: 1.1 * v}})
		}
	}
	return t, ms
}

// matrixOf is the distance as levelsFromTree built it before it was
// answered from the tree: the tree's paths, each measured pair's best
// half round trip over them, and leafless the leaf edges taken off (what
// is left below a billionth of the path is rounding, 0).
func matrixOf(t *infer.Tree, n int, ms []infer.Measurement, leafless bool) *cluster.Matrix {
	m := cluster.NewMatrix(n)
	t.EachDistance(n, m.Set)
	best := map[[2]int]float64{}
	for _, x := range ms {
		k := [2]int{min(x.A, x.B), max(x.A, x.B)}
		if v, ok := best[k]; !ok || x.RTT.Min < v {
			best[k] = x.RTT.Min
		}
	}
	for k, v := range best {
		m.Set(k[0], k[1], v/2)
	}
	if !leafless {
		return m
	}
	out := cluster.NewMatrix(n)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if v := m.At(i, j) - t.LeafLength(i) - t.LeafLength(j); v > 1e-9*m.At(i, j) {
				out.Set(i, j, v)
			}
		}
	}
	return out
}

func TestTreeDistanceIsTheMatrix(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		n := 20 + 13*int(seed)
		tr, ms := noisyHierarchy(seed, n, 0.1)
		for _, leafless := range []bool{false, true} {
			want := matrixOf(tr, n, ms, leafless)
			d := newTreeDistance(tr, n, ms)
			if leafless {
				d = d.leafless()
			}
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					if got := d.At(i, j); got != want.At(i, j) {
						t.Fatalf("seed %d, leafless %v: At(%d, %d) = %v, the matrix %v", seed, leafless, i, j, got, want.At(i, j))
					}
				}
			}
			pairs := 0
			d.EachPair(func(i, j int, v float64) {
				if i >= j || v != want.At(i, j) {
					t.Fatalf("seed %d: EachPair(%d, %d) = %v, the matrix %v", seed, i, j, v, want.At(i, j))
				}
				pairs++
			})
			if pairs != n*(n-1)/2 {
				t.Fatalf("seed %d: EachPair visited %d pairs, want %d", seed, pairs, n*(n-1)/2)
			}
		}
	}
}

// clean reports whether set's largest distance inside is below its
// smallest to a point outside, on the whole matrix.
func clean(m *cluster.Matrix, set []int) bool {
	in, out := 0.0, math.Inf(1)
	for _, i := range set {
		for j := 0; j < m.N; j++ {
			if slices.Contains(set, j) {
				in = math.Max(in, m.At(i, j))
			} else if j != i {
				out = math.Min(out, m.At(i, j))
			}
		}
	}
	return in < out
}

// Every part the tree's bounds find is clean on the whole matrix, the
// parts cover every rank once, and on a tree with little noise most ranks
// are in parts of more than one rank.
func TestTreePartsAreClean(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		n := 40 + 17*int(seed)
		jit := 0.05 * float64(seed%8)
		tr, ms := noisyHierarchy(seed, n, jit)
		for _, leafless := range []bool{false, true} {
			d := newTreeDistance(tr, n, ms)
			if leafless {
				d = d.leafless()
			}
			m := matrixOf(tr, n, ms, leafless)
			for _, limit := range []int{8, 64} {
				parts := d.parts(limit)
				seen := make([]bool, n)
				grouped := 0
				for _, p := range parts {
					for _, r := range p {
						if seen[r] {
							t.Fatalf("seed %d: rank %d in two parts", seed, r)
						}
						seen[r] = true
					}
					if len(p) > limit {
						t.Fatalf("seed %d: a part of %d ranks, limit %d", seed, len(p), limit)
					}
					if len(p) > 1 {
						grouped += len(p)
						if !clean(m, p) {
							t.Fatalf("seed %d, leafless %v: part %v is not clean", seed, leafless, p)
						}
					}
				}
				if !slices.Equal(seen, slices.Repeat([]bool{true}, n)) {
					t.Fatalf("seed %d: the parts miss ranks", seed)
				}
				if jit == 0 && 2*grouped < n {
					t.Errorf("seed %d, leafless %v, limit %d: %d of %d ranks in parts, want half or more", seed, leafless, limit, grouped, n)
				}
			}
		}
	}
}

// A rank at the root with two children: its leaf edge is its first
// child's, which leafless takes off every path from it. Rank 0 hangs
// 1 us from switch a (ranks 1-4) and 5 us from switch b, under which
// switches b1 (ranks 5, 6) and b2 (ranks 7, 8) hang 4.5 us away.
// Leafless, b's ranks are 9 us apart across b1 and b2 but 8.5 us from
// rank 0 (5 + 4.5 less rank 0's 1 us): b is not clean, b1 and b2 are. A
// bound that took the 1 us off a's edge alone would put rank 0 9.5 us
// away and call b clean.
func TestTreePartsRootWithTwoChildren(t *testing.T) {
	rank := []int{0, -1, -1, 1, 2, 3, 4, -1, -1, 5, 6, 7, 8}
	parent := []int{-1, 0, 0, 1, 1, 1, 1, 2, 2, 7, 7, 8, 8}
	up := []float64{0, 1e-6, 5e-6, 1e-7, 1.1e-7, 1.2e-7, 1.3e-7, 4.5e-6, 4.5e-6, 1e-7, 1.1e-7, 1.2e-7, 1.3e-7}
	tr, err := infer.TreeOf(rank, parent, up)
	if err != nil {
		t.Fatal(err)
	}
	d := newTreeDistance(tr, 9, nil).leafless()
	m := matrixOf(tr, 9, nil, true)
	if got := m.At(0, 5); math.Abs(got-8.5e-6) > 1e-15 {
		t.Fatalf("leafless 0-5 is %v, want 8.5 us", got)
	}
	parts := d.parts(8)
	for _, p := range parts {
		if len(p) > 1 && !clean(m, p) {
			t.Fatalf("part %v is not clean", p)
		}
	}
	for _, want := range [][]int{{5, 6}, {7, 8}} {
		if !slices.ContainsFunc(parts, func(p []int) bool { return slices.Equal(p, want) }) {
			t.Fatalf("parts %v, want %v as one", parts, want)
		}
	}
}

// Average linkage by the tree's parts cuts the same levels as on the
// whole matrix, with the same heights to rounding. Every tree has some
// jitter: where distances tie (hosts of one switch on an exact tree),
// average linkage has more than one answer, and the two orders of merging
// may pick different ones. Leafless with every pair measured at its own
// value, for the same reason: the ranks of a socket are 0 apart leafless.
func TestAverageLinkageByPartsIsDense(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		n := 50 + 23*int(seed)
		tr, ms := noisyHierarchy(seed, n, 0.01+0.03*float64(seed%5))
		for _, leafless := range []bool{false, true} {
			if leafless {
				ms = nil
				r := rand.New(rand.NewPCG(seed, 8))
				for a := 0; a < n; a++ {
					for b := a + 1; b < n; b++ {
						v := 2 * tr.Distance(a, b) * (1 + 0.05*r.Float64())
						ms = append(ms, infer.Measurement{A: a, B: b, RTT: infer.RTT{Min: v, Max: v}})
					}
				}
			}
			d := newTreeDistance(tr, n, ms)
			if leafless {
				d = d.leafless()
			}
			want, err := cluster.Agglomerative(matrixOf(tr, n, ms, leafless), cluster.AverageLinkage)
			if err != nil {
				t.Fatal(err)
			}
			got, err := averageLinkage(d, 16)
			if err != nil {
				t.Fatal(err)
			}
			top := want.Merges[len(want.Merges)-1].Height
			for k := range got.Merges {
				if a, b := got.Merges[k].Height, want.Merges[k].Height; math.Abs(a-b) > 1e-12*top {
					t.Fatalf("seed %d, leafless %v: merge %d at %v, on the matrix %v", seed, leafless, k, a, b)
				}
			}
			lg, _ := cluster.LevelsFromDendrogram(got, TreeGap())
			lw, _ := cluster.LevelsFromDendrogram(want, TreeGap())
			if len(lg) != len(lw) {
				t.Fatalf("seed %d: %d levels, on the matrix %d", seed, len(lg), len(lw))
			}
			for k := range lg {
				if !slices.EqualFunc(lg[k].Groups, lw[k].Groups, slices.Equal) {
					t.Fatalf("seed %d: level %d differs from the matrix's", seed, k)
				}
			}
		}
	}
}
