package cluster

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzAlgorithmsB feeds arbitrary matrices (including NaN, infinities,
// negative and asymmetric entries) and parameters to the B algorithms:
// none may panic, and accepted inputs give labels for every point.
func FuzzAlgorithmsB(f *testing.F) {
	f.Add(uint8(3), 0.3, []byte{0, 0, 0, 0, 0, 0, 240, 63, 0, 0, 0, 0, 0, 0, 0, 64})
	f.Add(uint8(2), -1.0, []byte{0, 0, 0, 0, 0, 0, 248, 127})
	f.Add(uint8(4), 2.0, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Fuzz(func(t *testing.T, n8 uint8, p float64, b []byte) {
		n := int(n8 % 12)
		m := NewMatrix(n)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				k := 8 * (i*n + j)
				v := float64(i + j)
				if k+8 <= len(b) {
					v = math.Float64frombits(binary.LittleEndian.Uint64(b[k : k+8]))
				}
				m.Set(i, j, v)
			}
		}
		if len(b) > 0 && n > 1 && b[0]%7 == 0 {
			m.Data[1] += 1 // asymmetric
		}
		check := func(what string, l Labels, err error) {
			if err == nil && len(l) != n {
				t.Fatalf("%s: %d labels for %d points", what, len(l), n)
			}
		}
		l, err := ECO(m, p)
		check("eco", l, err)
		l, err = SSS(m, p)
		check("sss", l, err)
		if tr, err := SSSTree(m, p, int(n8)%4); err == nil {
			if _, err := tr.Levels(n); err != nil {
				t.Fatalf("ssstree levels: %v", err)
			}
		}
		l, _, err = Louvain(m, p, 1)
		check("louvain", l, err)
		if h, err := HierarchicalModularity(m, p, 1); err == nil {
			if _, err := ModularityLevels(n, h); err != nil {
				t.Fatalf("modularity levels: %v", err)
			}
		}
		if h, err := BandwidthHierarchy(m, 1, p); err == nil {
			// Finest first, each level a refinement of the next.
			for i := range h {
				if len(h[i]) != n {
					t.Fatalf("bandwidth level %d: %d labels for %d points", i, len(h[i]), n)
				}
				for a := 0; i+1 < len(h) && a < n; a++ {
					for b := 0; b < n; b++ {
						if h[i][a] == h[i][b] && h[i+1][a] != h[i+1][b] {
							t.Fatalf("bandwidth level %d is not inside level %d: %v, %v", i, i+1, h[i], h[i+1])
						}
					}
				}
			}
		}
		_, _ = Silhouette(m, make(Labels, n))
		_, _ = CollapseAveraged(m, make(Labels, n))
		_, _ = MaximumSpanningTree(m)
		_, _ = BandwidthDistance(m)
		nonNegative := true
		for _, v := range m.Data {
			nonNegative = nonNegative && v >= 0
		}
		// Negative "distances" give negative heights, which the level cut
		// rejects; any non-negative matrix must be accepted.
		if d, err := Agglomerative(m, AverageLinkage); err == nil && nonNegative {
			if _, err := LevelsFromDendrogram(d, GapOptions{MinJump: p, SpreadFactor: p}); err != nil {
				t.Fatalf("levels of a valid dendrogram: %v", err)
			}
		}
	})
}
