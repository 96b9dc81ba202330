package cluster

import (
	"math/rand/v2"
	"testing"
)

// topoDistances builds a PLogP-like time matrix for hosts x sockets x cores
// ranks: base time by the deepest shared level (socket 0.5, host 0.8,
// network 3.0 time units) times 1 +- jitter, and the ground-truth socket and
// host of every rank.
func topoDistances(seed uint64, hosts, sockets, cores int, jitter float64) (*Matrix, Labels, Labels) {
	n := hosts * sockets * cores
	r := rand.New(rand.NewPCG(seed, 3))
	m := NewMatrix(n)
	sock, host := make(Labels, n), make(Labels, n)
	for i := 0; i < n; i++ {
		sock[i], host[i] = i/cores, i/(cores*sockets)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			base := 3.0
			switch {
			case sock[i] == sock[j]:
				base = 0.5
			case host[i] == host[j]:
				base = 0.8
			}
			m.Set(i, j, base*(1+jitter*(2*r.Float64()-1)))
		}
	}
	return m, sock, host
}

// TestReinfjellSect59MethodsRecoverTopologyLevels: seed 003 Sect. 5.9 / Ch. 7
// finds K-medoids, agglomerative clustering, HDBSCAN and connected
// components suitable for extracting socket and node levels from distance
// matrices. On a noisy 4 hosts x 2 sockets x 8 cores matrix each recovers
// the ground truth exactly (static methods given the counts; HDBSCAN's
// excess of mass the hosts, its leaves the sockets).
func TestReinfjellSect59MethodsRecoverTopologyLevels(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		m, sock, host := topoDistances(seed, 4, 2, 8, 0.1)
		for _, method := range []Linkage{SingleLinkage, CompleteLinkage, AverageLinkage} {
			d, err := Agglomerative(m, method)
			if err != nil {
				t.Fatal(err)
			}
			for _, lv := range []struct {
				k    int
				want Labels
			}{{8, sock}, {4, host}} {
				got, _ := Cut(d, lv.k)
				if err := samePartition(got, lv.want); err != nil {
					t.Errorf("seed %d %s cut %d: %v", seed, method, lv.k, err)
				}
			}
		}
		for _, lv := range []struct {
			k    int
			want Labels
		}{{8, sock}, {4, host}} {
			r, err := KMedoids(m, lv.k, KMedoidsOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := samePartition(r.Labels, lv.want); err != nil {
				t.Errorf("seed %d k-medoids k=%d: %v", seed, lv.k, err)
			}
		}
		cc, _ := ConnectedComponents(m, 0.6) // between socket and host bands
		if err := samePartition(cc, sock); err != nil {
			t.Errorf("seed %d components: %v", seed, err)
		}
		cc, _ = ConnectedComponents(m, 1.0) // between host and network bands
		if err := samePartition(cc, host); err != nil {
			t.Errorf("seed %d components (hosts): %v", seed, err)
		}
		// Excess of mass keeps the long-lived host clusters; the leaves of
		// the condensed tree are the sockets.
		for _, c := range []struct {
			sel  HDBSCANSelection
			want Labels
		}{{ExcessOfMass, host}, {LeafSelection, sock}} {
			h, err := HDBSCAN(m, HDBSCANOptions{MinClusterSize: 4, Selection: c.sel})
			if err != nil {
				t.Fatal(err)
			}
			if err := samePartition(h.Labels, c.want); err != nil {
				t.Errorf("seed %d HDBSCAN selection %d: %v (labels %v)", seed, c.sel, err, h.Labels)
			}
		}
	}
}
