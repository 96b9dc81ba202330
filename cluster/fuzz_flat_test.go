package cluster

import (
	"math"
	"testing"
)

// fuzzMatrix builds a symmetric matrix from bytes: n = b[0] % 10, then one
// byte per pair: 255 -> NaN, 254 -> +Inf, else a small tie-prone value.
func fuzzMatrix(b []byte) (*Matrix, bool) {
	if len(b) == 0 {
		return NewMatrix(0), true
	}
	n := int(b[0] % 10)
	m := NewMatrix(n)
	valid := true
	k := 1
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			v := 1.0
			if k < len(b) {
				switch c := b[k]; c {
				case 255:
					v, valid = math.NaN(), false
				case 254:
					v, valid = math.Inf(1), false
				default:
					v = float64(c%16) / 4
				}
			}
			k++
			m.Set(i, j, v)
		}
	}
	return m, valid
}

// FuzzClusteringA runs every "A" algorithm on arbitrary small matrices: no
// panic, invalid matrices rejected with an error, valid ones give one label
// per point and structurally valid dendrograms.
func FuzzClusteringA(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1})
	f.Add([]byte{2, 0})
	f.Add([]byte{5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4})
	f.Add([]byte{4, 1, 2, 3, 255, 5, 6})
	f.Add([]byte{6, 1, 9, 9, 9, 9, 9, 9, 9, 9, 1, 1, 9, 9, 9, 1})
	f.Add([]byte{9, 0, 0, 0, 0, 0, 0, 0, 0, 254})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, valid := fuzzMatrix(b)
		n := m.N
		check := func(what string, l Labels, err error) {
			if !valid {
				if err == nil {
					t.Fatalf("%s accepted an invalid matrix", what)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if len(l) != n {
				t.Fatalf("%s: %d labels for %d points", what, len(l), n)
			}
		}
		for method := SingleLinkage; method <= WardLinkage; method++ {
			d, err := Agglomerative(m, method)
			if !valid || err != nil {
				if valid && method != WardLinkage {
					t.Fatalf("%s: %v", method, err)
				}
				if !valid && err == nil {
					t.Fatalf("%s accepted an invalid matrix", method)
				}
				continue
			}
			if err := ValidateDendrogram(d); err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			for k := 1; k <= n; k++ {
				l, err := Cut(d, k)
				check("cut", l, err)
				if aNumClusters(l) != k {
					t.Fatalf("%s: Cut(%d) gave %d clusters", method, k, aNumClusters(l))
				}
			}
			l, err := CutHeight(d, 1)
			check("cut height", l, err)
		}
		eps := 1.0
		if len(b) > 1 {
			eps = float64(b[len(b)-1]%16) / 4
		}
		l, err := DBSCAN(m, eps, 2)
		check("dbscan", l, err)
		l, err = ConnectedComponents(m, eps)
		check("components", l, err)
		for mcs := 2; mcs <= max(2, n); mcs++ {
			r, err := HDBSCAN(m, HDBSCANOptions{MinClusterSize: mcs, MinSamples: min(mcs, max(n, 1))})
			var lab Labels
			if r != nil {
				lab = r.Labels
				for _, p := range r.Probabilities {
					if !(p >= 0 && p <= 1) {
						t.Fatalf("hdbscan probability %g", p)
					}
				}
			}
			check("hdbscan", lab, err)
		}
		for k := 1; k <= n; k++ {
			r, err := KMedoids(m, k, KMedoidsOptions{})
			var lab Labels
			if r != nil {
				lab = r.Labels
			}
			check("k-medoids", lab, err)
			l, err := Spectral(m, k, SpectralOptions{Seed: 1})
			check("spectral", l, err)
		}
	})
}
