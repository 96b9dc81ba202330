package cluster

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// aFixture is one data set of testdata/a_golden.json (see golden.py).
type aFixture struct {
	Name    string      `json:"name"`
	N       int         `json:"n"`
	Dist    [][]float64 `json:"dist"`
	Points  [][]float64 `json:"points"`
	Linkage map[string]struct {
		Z        [][]float64      `json:"Z"`
		Maxclust map[string][]int `json:"maxclust"`
		Distance []struct {
			T      float64 `json:"t"`
			Labels []int   `json:"labels"`
		} `json:"distance"`
	} `json:"linkage"`
	DBSCAN []struct {
		Eps        float64 `json:"eps"`
		MinSamples int     `json:"min_samples"`
		Labels     []int   `json:"labels"`
	} `json:"dbscan"`
	Spectral *struct {
		Sigma  float64 `json:"sigma"`
		K      int     `json:"k"`
		Labels []int   `json:"labels"`
	} `json:"spectral"`
	KMeans *struct {
		K       int     `json:"k"`
		Labels  []int   `json:"labels"`
		Inertia float64 `json:"inertia"`
	} `json:"kmeans"`
	HDBSCANR []struct {
		MinPts int   `json:"min_pts"`
		Labels []int `json:"labels"`
	} `json:"hdbscan_r"`
	HDBSCANMR []struct {
		MinSamples int       `json:"min_samples"`
		Core       []float64 `json:"core"`
		Heights    []float64 `json:"heights"`
	} `json:"hdbscan_mr"`
}

var (
	aGoldenOnce sync.Once
	aGolden     []aFixture
	aGoldenErr  error
)

func loadAGolden(t *testing.T) []aFixture {
	t.Helper()
	aGoldenOnce.Do(func() {
		b, err := os.ReadFile(filepath.Join("testdata", "a_golden.json"))
		if err != nil {
			aGoldenErr = err
			return
		}
		var doc struct {
			Fixtures []aFixture `json:"fixtures"`
		}
		aGoldenErr = json.Unmarshal(b, &doc)
		aGolden = doc.Fixtures
	})
	if aGoldenErr != nil {
		t.Fatalf("golden fixtures: %v", aGoldenErr)
	}
	if len(aGolden) == 0 {
		t.Fatal("golden fixtures: none")
	}
	return aGolden
}

func (f *aFixture) matrix(t *testing.T) *Matrix {
	t.Helper()
	m := NewMatrix(f.N)
	for i := range f.Dist {
		copy(m.Data[i*f.N:(i+1)*f.N], f.Dist[i])
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	return m
}

// sameFloat compares with a relative tolerance: SciPy and Go perform the
// same operations in the same order, so differences are at most rounding.
func sameFloat(a, b float64) bool {
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// samePartition reports whether two labelings induce the same partition
// (equal up to renaming clusters; Noise must match Noise).
func samePartition(a, b []int) error {
	if len(a) != len(b) {
		return fmt.Errorf("lengths %d and %d", len(a), len(b))
	}
	ab, ba := map[int]int{}, map[int]int{}
	for i := range a {
		if (a[i] == Noise) != (b[i] == Noise) {
			return fmt.Errorf("point %d: noise in one labeling only (%d vs %d)", i, a[i], b[i])
		}
		if a[i] == Noise {
			continue
		}
		if v, ok := ab[a[i]]; ok && v != b[i] {
			return fmt.Errorf("point %d: cluster %d maps to both %d and %d", i, a[i], v, b[i])
		}
		if v, ok := ba[b[i]]; ok && v != a[i] {
			return fmt.Errorf("point %d: cluster %d maps to both %d and %d", i, b[i], v, a[i])
		}
		ab[a[i]], ba[b[i]] = b[i], a[i]
	}
	return nil
}

func TestGoldenLinkageMatchesSciPy(t *testing.T) {
	for _, f := range loadAGolden(t) {
		m := f.matrix(t)
		for name, want := range f.Linkage {
			method, err := ParseLinkage(name)
			if err != nil {
				t.Fatal(err)
			}
			d, err := Agglomerative(m, method)
			if err != nil {
				t.Fatalf("%s/%s: %v", f.Name, name, err)
			}
			if len(d.Merges) != len(want.Z) {
				t.Fatalf("%s/%s: %d merges, want %d", f.Name, name, len(d.Merges), len(want.Z))
			}
			for i, z := range want.Z {
				g := d.Merges[i]
				if g.A != int(z[0]) || g.B != int(z[1]) || g.Size != int(z[3]) || !sameFloat(g.Height, z[2]) {
					t.Errorf("%s/%s merge %d: got %v, SciPy %v", f.Name, name, i, g, z)
					break
				}
			}
		}
	}
}

func TestGoldenCutHeightMatchesFcluster(t *testing.T) {
	for _, f := range loadAGolden(t) {
		m := f.matrix(t)
		for name, want := range f.Linkage {
			method, _ := ParseLinkage(name)
			d, err := Agglomerative(m, method)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range want.Distance {
				got, err := CutHeight(d, c.T)
				if err != nil {
					t.Fatal(err)
				}
				if err := samePartition(got, c.Labels); err != nil {
					t.Errorf("%s/%s CutHeight(%g): %v", f.Name, name, c.T, err)
				}
			}
		}
	}
}

// TestGoldenCutMatchesFclusterMaxclust: where merge heights around the cut
// are distinct, Cut(k) equals fcluster(maxclust=k); on a tie fcluster may
// return fewer clusters, and Cut's k clusters must then refine it.
func TestGoldenCutMatchesFclusterMaxclust(t *testing.T) {
	compared, refined := 0, 0
	for _, f := range loadAGolden(t) {
		m := f.matrix(t)
		for name, want := range f.Linkage {
			method, _ := ParseLinkage(name)
			d, err := Agglomerative(m, method)
			if err != nil {
				t.Fatal(err)
			}
			for ks, lab := range want.Maxclust {
				var k int
				fmt.Sscan(ks, &k)
				got, err := Cut(d, k)
				if err != nil {
					t.Fatal(err)
				}
				if c := aNumClusters(got); c != k {
					t.Errorf("%s/%s Cut(%d) gave %d clusters", f.Name, name, k, c)
				}
				last := f.N - k
				if d.Merges[last].Height != d.Merges[last-1].Height {
					compared++
					if err := samePartition(got, lab); err != nil {
						t.Errorf("%s/%s Cut(%d): %v", f.Name, name, k, err)
					}
					continue
				}
				refined++
				if !aRefines(got, lab) {
					t.Errorf("%s/%s Cut(%d) does not refine fcluster's tie-cut", f.Name, name, k)
				}
			}
		}
	}
	if compared == 0 || refined == 0 {
		t.Errorf("fixtures exercised %d exact and %d tie comparisons; want both > 0", compared, refined)
	}
}

func aNumClusters(l Labels) int {
	seen := map[int]bool{}
	for _, v := range l {
		if v != Noise {
			seen[v] = true
		}
	}
	return len(seen)
}

// aRefines reports whether every cluster of fine lies inside one cluster of
// coarse.
func aRefines(fine, coarse []int) bool {
	to := map[int]int{}
	for i := range fine {
		if v, ok := to[fine[i]]; ok && v != coarse[i] {
			return false
		}
		to[fine[i]] = coarse[i]
	}
	return true
}

func TestGoldenDBSCANMatchesSklearn(t *testing.T) {
	cases := 0
	for _, f := range loadAGolden(t) {
		m := f.matrix(t)
		for _, c := range f.DBSCAN {
			got, err := DBSCAN(m, c.Eps, c.MinSamples)
			if err != nil {
				t.Fatal(err)
			}
			cases++
			for i := range got {
				if got[i] != c.Labels[i] {
					t.Errorf("%s DBSCAN(eps=%g, minPts=%d): point %d got %d, sklearn %d\n got %v\nwant %v",
						f.Name, c.Eps, c.MinSamples, i, got[i], c.Labels[i], got, c.Labels)
					break
				}
			}
		}
	}
	if cases < 40 {
		t.Errorf("only %d DBSCAN golden cases", cases)
	}
}

// TestGoldenHDBSCANMutualReachability checks the first HDBSCAN stages
// against SciPy: core distances and the single-linkage heights of the
// mutual-reachability matrix (the full sklearn HDBSCAN is not in Debian's
// scikit-learn 1.2).
func TestGoldenHDBSCANMutualReachability(t *testing.T) {
	for _, f := range loadAGolden(t) {
		m := f.matrix(t)
		for _, c := range f.HDBSCANMR {
			r, err := HDBSCAN(m, HDBSCANOptions{MinClusterSize: 2, MinSamples: c.MinSamples})
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range c.Core {
				if !sameFloat(r.CoreDistances[i], v) {
					t.Fatalf("%s min_samples=%d: core[%d] = %g, want %g", f.Name, c.MinSamples, i, r.CoreDistances[i], v)
				}
			}
			for i, h := range c.Heights {
				if !sameFloat(r.Tree.Merges[i].Height, h) {
					t.Fatalf("%s min_samples=%d: MR single-linkage height %d = %g, SciPy %g", f.Name, c.MinSamples, i, r.Tree.Merges[i].Height, h)
				}
			}
		}
	}
}

// TestGoldenHDBSCANMatchesRDbscan compares labels with R's dbscan::hdbscan
// (minPts = MinClusterSize = MinSamples, excess of mass) up to renaming.
func TestGoldenHDBSCANMatchesRDbscan(t *testing.T) {
	cases, noisy := 0, 0
	for _, f := range loadAGolden(t) {
		m := f.matrix(t)
		for _, c := range f.HDBSCANR {
			r, err := HDBSCAN(m, HDBSCANOptions{MinClusterSize: c.MinPts, MinSamples: c.MinPts})
			if err != nil {
				t.Fatal(err)
			}
			cases++
			for _, l := range c.Labels {
				if l == Noise {
					noisy++
					break
				}
			}
			if err := samePartition(r.Labels, c.Labels); err != nil {
				t.Errorf("%s minPts=%d: %v\n got %v\nwant %v", f.Name, c.MinPts, err, r.Labels, c.Labels)
			}
		}
	}
	if cases < 10 || noisy < 3 {
		t.Errorf("%d HDBSCAN golden cases, %d with noise: fixtures too easy", cases, noisy)
	}
}
