package cluster

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Two pairs, 1 and 2 apart inside, 5 to 8 apart across: the pairs merge
// first, then the parts at the mean of the four cross distances, 6.5.
func TestAverageLinkagePartsByHand(t *testing.T) {
	m := NewMatrix(4)
	m.Set(0, 1, 1)
	m.Set(2, 3, 2)
	m.Set(0, 2, 5)
	m.Set(0, 3, 6)
	m.Set(1, 2, 7)
	m.Set(1, 3, 8)
	parts := [][]int{{0, 1}, {2, 3}}
	between, err := PartMeans(m, parts)
	if err != nil {
		t.Fatal(err)
	}
	if got := between.At(0, 1); got != 6.5 {
		t.Fatalf("mean between the parts %v, want 6.5", got)
	}
	d, err := AverageLinkageParts(4, parts, func(p int) *Matrix { return m.Sub(parts[p]) }, between)
	if err != nil {
		t.Fatal(err)
	}
	want := []Merge{{A: 0, B: 1, Height: 1, Size: 2}, {A: 2, B: 3, Height: 2, Size: 2}, {A: 4, B: 5, Height: 6.5, Size: 4}}
	if !slices.Equal(d.Merges, want) {
		t.Fatalf("merges %v, want %v", d.Merges, want)
	}
}

// hierarchical draws n points in nested groups of 4 (distances about 1
// inside a group, 2 between groups of one supergroup of 16, 4 above),
// with relative jitter j, and the groups of the two lower levels. From 35
// % of jitter on, groups overlap: some are not clean.
func hierarchical(seed uint64, n int, j float64) (*Matrix, [][]int, [][]int) {
	r := rand.New(rand.NewPCG(seed, 3))
	m := NewMatrix(n)
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			base := 4.0
			switch {
			case a/4 == b/4:
				base = 1
			case a/16 == b/16:
				base = 2
			}
			m.Set(a, b, base*(1+j*(2*r.Float64()-1)))
		}
	}
	var small, big [][]int
	for a := 0; a < n; a += 4 {
		small = append(small, seq(a, min(a+4, n)))
	}
	for a := 0; a < n; a += 16 {
		big = append(big, seq(a, min(a+16, n)))
	}
	return m, small, big
}

func seq(a, b int) []int {
	var s []int
	for i := a; i < b; i++ {
		s = append(s, i)
	}
	return s
}

// cleanOrSingles keeps the sets that are clean in m and splits the others
// into points, and counts those.
func cleanOrSingles(m *Matrix, sets [][]int) ([][]int, int) {
	var out [][]int
	dirty := 0
	for _, s := range sets {
		in, outMin := 0.0, math.Inf(1)
		for _, i := range s {
			for j := 0; j < m.N; j++ {
				if slices.Contains(s, j) {
					in = math.Max(in, m.At(i, j))
				} else {
					outMin = math.Min(outMin, m.At(i, j))
				}
			}
		}
		if in < outMin {
			out = append(out, s)
			continue
		}
		dirty++
		for _, i := range s {
			out = append(out, []int{i})
		}
	}
	return out, dirty
}

// Over clean parts, the clustering is Agglomerative's: the same heights
// (to rounding) and the same levels at every gap. Jitter up to 60 % makes
// some groups unclean (their points go alone); the test counts both
// kinds, so that it checks both.
func TestAverageLinkagePartsIsAgglomerative(t *testing.T) {
	clean, unclean := 0, 0
	for seed := uint64(1); seed <= 20; seed++ {
		n := 20 + int(seed)*7
		jit := 0.05 * float64(seed%13)
		m, small, big := hierarchical(seed, n, jit)
		whole, err := Agglomerative(m, AverageLinkage)
		if err != nil {
			t.Fatal(err)
		}
		for _, sets := range [][][]int{small, big} {
			parts, dirty := cleanOrSingles(m, sets)
			clean, unclean = clean+len(sets)-dirty, unclean+dirty
			between, err := PartMeans(m, parts)
			if err != nil {
				t.Fatal(err)
			}
			d, err := AverageLinkageParts(n, parts, func(p int) *Matrix { return m.Sub(parts[p]) }, between)
			if err != nil {
				t.Fatal(err)
			}
			if err := ValidateDendrogram(d); err != nil {
				t.Fatal(err)
			}
			for k := range d.Merges {
				a, b := d.Merges[k].Height, whole.Merges[k].Height
				if math.Abs(a-b) > 1e-12*b {
					t.Fatalf("seed %d, merge %d: height %v, Agglomerative %v", seed, k, a, b)
				}
			}
			got, err := LevelsFromDendrogram(d, GapOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := LevelsFromDendrogram(whole, GapOptions{})
			if len(got) != len(want) {
				t.Fatalf("seed %d: %d levels, Agglomerative %d", seed, len(got), len(want))
			}
			for k := range got {
				if !slices.EqualFunc(got[k].Groups, want[k].Groups, slices.Equal) {
					t.Fatalf("seed %d, level %d: %v, Agglomerative %v", seed, k, got[k].Groups, want[k].Groups)
				}
			}
		}
	}
	if clean < 50 || unclean < 50 {
		t.Fatalf("%d clean and %d unclean groups: the test needs many of both", clean, unclean)
	}
}

func TestAverageLinkagePartsRejectsBadParts(t *testing.T) {
	m := NewMatrix(3)
	within := func(p int) *Matrix { return NewMatrix(1) }
	for _, parts := range [][][]int{
		{{0, 1}},         // point 2 missing
		{{0, 1}, {1, 2}}, // point 1 twice
		{{0, 3}, {1, 2}}, // no point 3
		{{0, 1, 2}, {}},  // an empty part
	} {
		if _, err := PartMeans(m, parts); err == nil {
			t.Errorf("PartMeans accepted parts %v", parts)
		}
		if _, err := AverageLinkageParts(3, parts, within, NewMatrix(len(parts))); err == nil {
			t.Errorf("AverageLinkageParts accepted parts %v", parts)
		}
	}
	// A part's matrix of the wrong size.
	if _, err := AverageLinkageParts(3, [][]int{{0, 1}, {2}}, within, NewMatrix(2)); err == nil {
		t.Error("AverageLinkageParts accepted a 1 x 1 matrix for a part of 2")
	}
}
