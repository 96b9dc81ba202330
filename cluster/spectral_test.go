package cluster

import (
	"math"
	"testing"
)

func TestKMeansLineByHand(t *testing.T) {
	pts := [][]float64{{0}, {1}, {2}, {10}, {11}, {12}}
	r, err := KMeans(pts, 2, KMeansOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := samePartition(r.Labels, []int{0, 0, 0, 1, 1, 1}); err != nil {
		t.Errorf("labels %v: %v", r.Labels, err)
	}
	if r.Inertia != 4 {
		t.Errorf("inertia %g, want 4", r.Inertia)
	}
	for i, l := range r.Labels {
		want := 1.0
		if i >= 3 {
			want = 11
		}
		if r.Centers[l][0] != want {
			t.Errorf("centre of point %d = %g, want %g", i, r.Centers[l][0], want)
		}
	}
}

func TestGoldenKMeansMatchesSklearn(t *testing.T) {
	cases := 0
	for _, f := range loadAGolden(t) {
		if f.KMeans == nil {
			continue
		}
		cases++
		r, err := KMeans(f.Points, f.KMeans.K, KMeansOptions{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if err := samePartition(r.Labels, f.KMeans.Labels); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
		if math.Abs(r.Inertia-f.KMeans.Inertia) > 1e-9*f.KMeans.Inertia {
			t.Errorf("%s: inertia %g, sklearn %g", f.Name, r.Inertia, f.KMeans.Inertia)
		}
	}
	if cases == 0 {
		t.Fatal("no k-means fixtures")
	}
}

func TestGoldenSpectralMatchesSklearn(t *testing.T) {
	cases := 0
	for _, f := range loadAGolden(t) {
		if f.Spectral == nil {
			continue
		}
		cases++
		got, err := Spectral(f.matrix(t), f.Spectral.K, SpectralOptions{Sigma: f.Spectral.Sigma, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := samePartition(got, f.Spectral.Labels); err != nil {
			t.Errorf("%s: %v\n got %v\nwant %v", f.Name, err, got, f.Spectral.Labels)
		}
	}
	if cases == 0 {
		t.Fatal("no spectral fixtures")
	}
}

// Two tight groups far apart: the embedding separates them exactly.
func TestSpectralByHand(t *testing.T) {
	m := lineMatrix(0, 0.5, 1, 20, 20.5, 21)
	got, err := Spectral(m, 2, SpectralOptions{Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Labels{0, 0, 0, 1, 1, 1}); !equalLabels(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Three groups, sigma 2.
	m = lineMatrix(0, 0.2, 0.4, 30, 30.2, 30.4, 60, 60.2, 60.4)
	got, err = Spectral(m, 3, SpectralOptions{Sigma: 2})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Labels{0, 0, 0, 1, 1, 1, 2, 2, 2}); !equalLabels(got, want) {
		t.Errorf("three groups: got %v, want %v", got, want)
	}
}

func TestSpectralAndKMeansPropertiesSeeded(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		pts, m := randomPoints(seed, 60, 3, 4)
		a, err := Spectral(m, 4, SpectralOptions{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Spectral(m, 4, SpectralOptions{Seed: seed})
		if !equalLabels(a, b) {
			t.Errorf("seed %d: spectral not deterministic", seed)
		}
		if c := aNumClusters(a); c < 1 || c > 4 {
			t.Errorf("seed %d: %d spectral clusters", seed, c)
		}
		km, err := KMeans(pts, 4, KMeansOptions{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		// Lloyd fixed point: every point is at its nearest centre and every
		// centre is the mean of its points.
		sum := make([][]float64, 4)
		cnt := make([]int, 4)
		for i, p := range pts {
			for c := range km.Centers {
				if sqDist(p, km.Centers[c]) < sqDist(p, km.Centers[km.Labels[i]])-1e-12 {
					t.Fatalf("seed %d: point %d not at its nearest centre", seed, i)
				}
			}
			l := km.Labels[i]
			if sum[l] == nil {
				sum[l] = make([]float64, len(p))
			}
			for j := range p {
				sum[l][j] += p[j]
			}
			cnt[l]++
		}
		for c := range km.Centers {
			if cnt[c] == 0 {
				t.Fatalf("seed %d: empty cluster %d", seed, c)
			}
			for j := range km.Centers[c] {
				if math.Abs(sum[c][j]/float64(cnt[c])-km.Centers[c][j]) > 1e-9 {
					t.Fatalf("seed %d: centre %d is not its cluster mean", seed, c)
				}
			}
		}
	}
}

func TestSpectralKMeansDegenerate(t *testing.T) {
	if l, err := Spectral(NewMatrix(0), 0, SpectralOptions{}); err != nil || len(l) != 0 {
		t.Errorf("spectral n=0: %v", err)
	}
	if l, err := Spectral(NewMatrix(1), 1, SpectralOptions{}); err != nil || len(l) != 1 {
		t.Errorf("spectral n=1: %v", err)
	}
	if l, err := Spectral(NewMatrix(2), 2, SpectralOptions{}); err != nil || len(l) != 2 {
		t.Errorf("spectral n=2 identical points: %v %v", l, err)
	}
	eq := NewMatrix(5)
	for i := 0; i < 5; i++ {
		for j := i + 1; j < 5; j++ {
			eq.Set(i, j, 1)
		}
	}
	if l, err := Spectral(eq, 2, SpectralOptions{}); err != nil || len(l) != 5 {
		t.Errorf("spectral all-equal: %v %v", l, err)
	}
	far := lineMatrix(0, 1e6, 2e6) // zero affinity everywhere
	if l, err := Spectral(far, 2, SpectralOptions{Sigma: 1}); err != nil || len(l) != 3 {
		t.Errorf("spectral isolated points: %v %v", l, err)
	}
	for _, k := range []int{0, 6} {
		if _, err := Spectral(eq, k, SpectralOptions{}); err == nil {
			t.Errorf("spectral k=%d accepted", k)
		}
	}
	if _, err := Spectral(eq, 2, SpectralOptions{Sigma: -1}); err == nil {
		t.Error("negative sigma accepted")
	}
	bad := NewMatrix(2)
	bad.Data[1] = math.NaN()
	if _, err := Spectral(bad, 1, SpectralOptions{}); err == nil {
		t.Error("spectral: NaN accepted")
	}
	if r, err := KMeans(nil, 0, KMeansOptions{}); err != nil || len(r.Labels) != 0 {
		t.Errorf("k-means n=0: %v", err)
	}
	same := [][]float64{{1, 1}, {1, 1}, {1, 1}}
	r, err := KMeans(same, 2, KMeansOptions{})
	if err != nil || r.Inertia != 0 {
		t.Errorf("k-means duplicates: %+v %v", r, err)
	}
	for _, pts := range [][][]float64{{{1}, {1, 2}}, {{math.NaN()}}, {{math.Inf(1)}}} {
		if _, err := KMeans(pts, 1, KMeansOptions{}); err == nil {
			t.Errorf("k-means accepted %v", pts)
		}
	}
	if _, err := KMeans(same, 4, KMeansOptions{}); err == nil {
		t.Error("k-means k > n accepted")
	}
}

func BenchmarkSpectral(b *testing.B) {
	_, m := randomPoints(13, 512, 3, 8)
	for b.Loop() {
		if _, err := Spectral(m, 8, SpectralOptions{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSpectralEmbeddingReuseMatchesSpectral(t *testing.T) {
	_, m := randomPoints(8, 50, 2, 5)
	e, err := NewSpectralEmbedding(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= 6; k++ {
		a, err := e.Cluster(k, 5, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Spectral(m, k, SpectralOptions{Seed: 5})
		if !equalLabels(a, b) {
			t.Errorf("k=%d: embedding %v, Spectral %v", k, a, b)
		}
	}
	if _, err := e.Cluster(51, 1, 0); err == nil {
		t.Error("k > n accepted")
	}
}

// The default kernel width is the median positive distance (the project's
// one median, metrics.Median: the lower middle of an even count).
func TestSpectralDefaultSigmaIsTheMedianDistance(t *testing.T) {
	for _, tc := range []struct {
		d    [][3]float64 // i, j, distance; other pairs 0
		n    int
		want float64
	}{
		{[][3]float64{{0, 2, 1}, {0, 3, 2}, {1, 2, 1}, {1, 3, 2}, {2, 3, 3}}, 4, 2}, // 1 1 2 2 3; 0-1 coincide
		{[][3]float64{{0, 2, 1}, {1, 2, 3}}, 3, 1},                                  // 1 3
		{nil, 3, 1}, // every point coincides: width 1
	} {
		m := NewMatrix(tc.n)
		for _, e := range tc.d {
			m.Set(int(e[0]), int(e[1]), e[2])
		}
		e, err := NewSpectralEmbedding(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		if e.Sigma != tc.want {
			t.Errorf("%v: sigma %g, want %g", tc.d, e.Sigma, tc.want)
		}
	}
}
