package cluster

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// framLike builds the distance matrix of nodes x 2 sockets x cores ranks
// (rank = node*2*cores + socket*cores + core): intra-socket 0.4 us,
// inter-socket twice that, node to node 3 us, each entry jittered by up to
// +-jitter (relative) from a seeded source.
func framLike(nodes, cores int, jitter float64, seed uint64) (*Matrix, Labels, Labels) {
	per := 2 * cores
	n := nodes * per
	rng := rand.New(rand.NewPCG(seed, 1))
	m := NewMatrix(n)
	socket := make(Labels, n)
	node := make(Labels, n)
	for i := 0; i < n; i++ {
		socket[i] = i / cores
		node[i] = i / per
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d := 3e-6
			switch {
			case socket[i] == socket[j]:
				d = 0.4e-6
			case node[i] == node[j]:
				d = 0.8e-6
			}
			m.Set(i, j, d*(1+jitter*(2*rng.Float64()-1)))
		}
	}
	return m, socket, node
}

// grid5000Like builds 4 sites x 16 nodes: nodes 60 us apart inside a site,
// sites 2-12 ms apart (a star around the second site, as Renater around
// Lyon), jittered by +-jitter.
func grid5000Like(jitter float64, seed uint64) (*Matrix, Labels) {
	const sites, per = 4, 16
	siteRTT := [sites][sites]float64{
		{0, 5e-3, 9e-3, 11e-3},
		{5e-3, 0, 4e-3, 6e-3},
		{9e-3, 4e-3, 0, 10e-3},
		{11e-3, 6e-3, 10e-3, 0},
	}
	n := sites * per
	rng := rand.New(rand.NewPCG(seed, 2))
	m := NewMatrix(n)
	site := make(Labels, n)
	for i := range site {
		site[i] = i / per
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d := 60e-6
			if site[i] != site[j] {
				d = siteRTT[site[i]][site[j]]
			}
			m.Set(i, j, d*(1+jitter*(2*rng.Float64()-1)))
		}
	}
	return m, site
}

// shuffled permutes the points of m and truth with a seeded permutation so
// that tests do not depend on contiguous rank numbering.
func shuffled(m *Matrix, seed uint64, truths ...Labels) (*Matrix, []Labels) {
	rng := rand.New(rand.NewPCG(seed, 3))
	perm := rng.Perm(m.N)
	out := NewMatrix(m.N)
	for i := 0; i < m.N; i++ {
		for j := i + 1; j < m.N; j++ {
			out.Set(perm[i], perm[j], m.At(i, j))
		}
	}
	var ts []Labels
	for _, t := range truths {
		nt := make(Labels, len(t))
		for i, v := range t {
			nt[perm[i]] = v
		}
		ts = append(ts, nt)
	}
	return out, ts
}

// singleLinkageForTest builds a single-linkage dendrogram from the minimum
// spanning tree (the two are equivalent: processing MST edges by increasing
// weight replays single linkage), so level tests do not depend on the
// agglomerative implementation.
func singleLinkageForTest(t *testing.T, m *Matrix) *Dendrogram {
	t.Helper()
	edges, err := MinimumSpanningTree(m)
	if err != nil {
		t.Fatal(err)
	}
	uf := newPointSets(m.N)
	id := make([]int, m.N) // root point -> current cluster id
	size := make([]int, m.N)
	for i := range id {
		id[i] = i
		size[i] = 1
	}
	d := &Dendrogram{N: m.N}
	for _, e := range edges {
		ra, rb := uf.find(e.I), uf.find(e.J)
		a, b := id[ra], id[rb]
		s := size[ra] + size[rb]
		uf.union(ra, rb)
		r := uf.find(ra)
		if a > b {
			a, b = b, a
		}
		d.Merges = append(d.Merges, Merge{A: a, B: b, Height: e.W, Size: s})
		id[r] = m.N + len(d.Merges) - 1
		size[r] = s
	}
	return d
}

func sameGroups(t *testing.T, what string, got [][]int, want Labels) {
	t.Helper()
	if w := Groups(want); !reflect.DeepEqual(got, w) {
		t.Errorf("%s: groups\n got %v\nwant %v", what, got, w)
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 99)) }
