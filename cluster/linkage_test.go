package cluster

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
)

// lineMatrix returns |x_i - x_j|.
func lineMatrix(xs ...float64) *Matrix {
	m := NewMatrix(len(xs))
	for i := range xs {
		for j := range xs {
			m.Data[i*len(xs)+j] = math.Abs(xs[i] - xs[j])
		}
	}
	return m
}

// randomPoints returns a seeded Euclidean distance matrix of n points in dim
// dimensions scattered around nc centres.
func randomPoints(seed uint64, n, dim, nc int) ([][]float64, *Matrix) {
	r := rand.New(rand.NewPCG(seed, 1))
	centres := make([][]float64, nc)
	for c := range centres {
		centres[c] = make([]float64, dim)
		for k := range centres[c] {
			centres[c][k] = r.Float64() * 20
		}
	}
	pts := make([][]float64, n)
	for i := range pts {
		c := centres[r.IntN(nc)]
		pts[i] = make([]float64, dim)
		for k := range pts[i] {
			pts[i][k] = c[k] + r.NormFloat64()
		}
	}
	return pts, euclidean(pts)
}

func euclidean(pts [][]float64) *Matrix {
	m := NewMatrix(len(pts))
	for i := range pts {
		for j := i + 1; j < len(pts); j++ {
			s := 0.0
			for k := range pts[i] {
				s += (pts[i][k] - pts[j][k]) * (pts[i][k] - pts[j][k])
			}
			m.Set(i, j, math.Sqrt(s))
		}
	}
	return m
}

// Five points on a line at 0, 1, 3, 7, 15; every height worked by hand
// (Ward: sqrt(2 na nb / (na+nb)) * |centroid gap|).
func TestAgglomerativeLineByHand(t *testing.T) {
	m := lineMatrix(0, 1, 3, 7, 15)
	want := map[Linkage][]Merge{
		SingleLinkage:   {{0, 1, 1, 2}, {2, 5, 2, 3}, {3, 6, 4, 4}, {4, 7, 8, 5}},
		CompleteLinkage: {{0, 1, 1, 2}, {2, 5, 3, 3}, {3, 6, 7, 4}, {4, 7, 15, 5}},
		AverageLinkage:  {{0, 1, 1, 2}, {2, 5, 2.5, 3}, {3, 6, 17.0 / 3, 4}, {4, 7, 49.0 / 4, 5}},
		// d(C5,3)=(7+6)/2=6.5, d(C6,3)=(6.5+4)/2; d(C5,4)=14.5, d(C6,4)=13.25, d(C7,4)=(13.25+8)/2.
		WeightedLinkage: {{0, 1, 1, 2}, {2, 5, 2.5, 3}, {3, 6, 5.25, 4}, {4, 7, 10.625, 5}},
		WardLinkage: {{0, 1, 1, 2}, {2, 5, math.Sqrt(4.0/3) * 2.5, 3}, {3, 6, math.Sqrt(1.5) * 17 / 3, 4},
			{4, 7, math.Sqrt(1.6) * 12.25, 5}},
	}
	for method, w := range want {
		d, err := Agglomerative(m, method)
		if err != nil {
			t.Fatal(err)
		}
		for i := range w {
			g := d.Merges[i]
			if g.A != w[i].A || g.B != w[i].B || g.Size != w[i].Size || math.Abs(g.Height-w[i].Height) > 1e-12 {
				t.Errorf("%s merge %d: got %+v, want %+v", method, i, g, w[i])
			}
		}
	}
}

func TestCutByHand(t *testing.T) {
	d, err := Agglomerative(lineMatrix(0, 1, 3, 7, 15), SingleLinkage)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		k    int
		want Labels
	}{{1, Labels{0, 0, 0, 0, 0}}, {2, Labels{0, 0, 0, 0, 1}}, {3, Labels{0, 0, 0, 1, 2}}, {5, Labels{0, 1, 2, 3, 4}}}
	for _, c := range cases {
		got, err := Cut(d, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if !equalLabels(got, c.want) {
			t.Errorf("Cut(%d) = %v, want %v", c.k, got, c.want)
		}
	}
	hs := []struct {
		h    float64
		want Labels
	}{{2, Labels{0, 0, 0, 1, 2}}, {1.999, Labels{0, 0, 1, 2, 3}}, {0, Labels{0, 1, 2, 3, 4}}, {100, Labels{0, 0, 0, 0, 0}}}
	for _, c := range hs {
		got, err := CutHeight(d, c.h)
		if err != nil {
			t.Fatal(err)
		}
		if !equalLabels(got, c.want) {
			t.Errorf("CutHeight(%g) = %v, want %v", c.h, got, c.want)
		}
	}
	for _, k := range []int{0, 6, -1} {
		if _, err := Cut(d, k); err == nil {
			t.Errorf("Cut(%d) of 5 points: no error", k)
		}
	}
	if _, err := CutHeight(d, math.NaN()); err == nil {
		t.Error("CutHeight(NaN): no error")
	}
}

func equalLabels(a, b Labels) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Properties on seeded random point sets: monotone heights, consistent
// sizes, a valid tree, Cut(k) gives k clusters nested in Cut(k-1), and
// single-linkage heights equal the MST edge weights.
func TestAgglomerativeProperties(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		_, m := randomPoints(seed, 20+int(seed)*7, 3, 4)
		n := m.N
		for method := SingleLinkage; method <= WardLinkage; method++ {
			d, err := Agglomerative(m, method)
			if err != nil {
				t.Fatal(err)
			}
			if err := ValidateDendrogram(d); err != nil {
				t.Fatalf("seed %d %s: %v", seed, method, err)
			}
			size := func(c int) int {
				if c < n {
					return 1
				}
				return d.Merges[c-n].Size
			}
			for i, g := range d.Merges {
				if i > 0 && g.Height < d.Merges[i-1].Height {
					t.Errorf("seed %d %s: height %d decreases", seed, method, i)
				}
				if g.A >= g.B || g.Size != size(g.A)+size(g.B) {
					t.Errorf("seed %d %s: merge %d = %+v malformed", seed, method, i, g)
				}
			}
			var prev Labels
			for k := 1; k <= n; k++ {
				l, err := Cut(d, k)
				if err != nil {
					t.Fatal(err)
				}
				if c := aNumClusters(l); c != k {
					t.Fatalf("seed %d %s: Cut(%d) gave %d clusters", seed, method, k, c)
				}
				if prev != nil && !aRefines(l, prev) {
					t.Fatalf("seed %d %s: Cut(%d) does not refine Cut(%d)", seed, method, k, k-1)
				}
				prev = l
			}
		}
		d, _ := Agglomerative(m, SingleLinkage)
		mst := kruskalWeights(m)
		for i, w := range mst {
			if d.Merges[i].Height != w {
				t.Fatalf("seed %d: single-linkage height %d = %g, MST weight %g", seed, i, d.Merges[i].Height, w)
			}
		}
	}
}

// kruskalWeights returns the sorted MST edge weights (an independent
// construction used to check single linkage).
func kruskalWeights(m *Matrix) []float64 {
	type edge struct {
		i, j int
		w    float64
	}
	var es []edge
	for i := 0; i < m.N; i++ {
		for j := i + 1; j < m.N; j++ {
			es = append(es, edge{i, j, m.At(i, j)})
		}
	}
	sort.Slice(es, func(a, b int) bool { return es[a].w < es[b].w })
	parent := make([]int, m.N)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		if parent[x] != x {
			parent[x] = find(parent[x])
		}
		return parent[x]
	}
	var out []float64
	for _, e := range es {
		a, b := find(e.i), find(e.j)
		if a != b {
			parent[a] = b
			out = append(out, e.w)
		}
	}
	return out
}

func TestAgglomerativeDegenerateInputs(t *testing.T) {
	for method := SingleLinkage; method <= WardLinkage; method++ {
		for n := 0; n <= 2; n++ {
			d, err := Agglomerative(NewMatrix(n), method)
			if err != nil {
				t.Fatalf("%s n=%d: %v", method, n, err)
			}
			if want := max(n-1, 0); len(d.Merges) != want {
				t.Errorf("%s n=%d: %d merges", method, n, len(d.Merges))
			}
			if l, err := Cut(d, n); err != nil || len(l) != n {
				t.Errorf("%s n=%d: Cut(n) = %v, %v", method, n, l, err)
			}
		}
		eq := NewMatrix(6)
		for i := 0; i < 6; i++ {
			for j := i + 1; j < 6; j++ {
				eq.Set(i, j, 3)
			}
		}
		d, err := Agglomerative(eq, method)
		if err != nil {
			t.Fatalf("%s all-equal: %v", method, err)
		}
		if method != WardLinkage {
			for _, g := range d.Merges {
				if g.Height != 3 {
					t.Errorf("%s all-equal: height %g", method, g.Height)
				}
			}
		}
		bad := NewMatrix(3)
		bad.Set(0, 2, math.NaN())
		if _, err := Agglomerative(bad, method); err == nil {
			t.Errorf("%s: NaN accepted", method)
		}
	}
	if _, err := Agglomerative(nil, SingleLinkage); err == nil {
		t.Error("nil matrix accepted")
	}
	if _, err := Agglomerative(NewMatrix(3), Linkage(42)); err == nil {
		t.Error("unknown linkage accepted")
	}
	if _, err := ParseLinkage("centroid"); err == nil {
		t.Error("ParseLinkage(centroid) accepted")
	}
	if _, err := Cut(&Dendrogram{N: 3, Merges: []Merge{{0, 0, 1, 2}, {1, 3, 2, 3}}}, 1); err == nil {
		t.Error("malformed dendrogram accepted")
	}
}

func BenchmarkAgglomerative(b *testing.B) {
	for _, n := range []int{1024, 4096} {
		_, m := randomPoints(7, n, 3, 8)
		for _, method := range []Linkage{SingleLinkage, AverageLinkage, WardLinkage} {
			b.Run(method.String()+"/n="+strconv.Itoa(n), func(b *testing.B) {
				for b.Loop() {
					if _, err := Agglomerative(m, method); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// naiveLinkage is the textbook O(n^3) agglomerative algorithm (scan all
// pairs for the closest, merge, Lance-Williams update): an independent
// construction to check the nearest-neighbour chain, and the benchmark
// baseline.
func naiveLinkage(m *Matrix, method Linkage) []Merge {
	n := m.N
	dist := append([]float64(nil), m.Data...)
	size := make([]int, n)
	for i := range size {
		size[i] = 1
	}
	var out []Merge
	for step := 0; step < n-1; step++ {
		bx, by, bd := -1, -1, math.Inf(1)
		for i := 0; i < n; i++ {
			if size[i] == 0 {
				continue
			}
			for j := i + 1; j < n; j++ {
				if size[j] > 0 && dist[i*n+j] < bd {
					bx, by, bd = i, j, dist[i*n+j]
				}
			}
		}
		nx, ny := size[bx], size[by]
		out = append(out, Merge{A: bx, B: by, Height: bd, Size: nx + ny})
		for i := 0; i < n; i++ {
			if size[i] == 0 || i == bx || i == by {
				continue
			}
			v, _ := lanceWilliams(method, dist[bx*n+i], dist[by*n+i], bd, nx, ny, size[i])
			dist[by*n+i], dist[i*n+by] = v, v
		}
		size[bx], size[by] = 0, nx+ny
	}
	return relabelMerges(out, n)
}

// On tie-free random data the chain and the naive scan build the same tree.
func TestAgglomerativeMatchesNaiveScan(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		_, m := randomPoints(seed, 60, 3, 5)
		for method := SingleLinkage; method <= WardLinkage; method++ {
			d, err := Agglomerative(m, method)
			if err != nil {
				t.Fatal(err)
			}
			want := naiveLinkage(m, method)
			for i := range want {
				g := d.Merges[i]
				if g.A != want[i].A || g.B != want[i].B || g.Size != want[i].Size || math.Abs(g.Height-want[i].Height) > 1e-9*g.Height {
					t.Fatalf("seed %d %s merge %d: chain %+v, naive %+v", seed, method, i, g, want[i])
				}
			}
		}
	}
}

// BenchmarkAgglomerativeVsNaive: NN-chain against the O(n^3) scan at n=512.
func BenchmarkAgglomerativeVsNaive(b *testing.B) {
	_, m := randomPoints(7, 512, 3, 8)
	b.Run("chain", func(b *testing.B) {
		for b.Loop() {
			if _, err := Agglomerative(m, AverageLinkage); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("naive", func(b *testing.B) {
		for b.Loop() {
			naiveLinkage(m, AverageLinkage)
		}
	})
}
