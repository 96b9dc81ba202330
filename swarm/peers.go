package swarm

import (
	"math/rand/v2"
	"slices"
)

// PeerSets is the tracker of seed 000 Sect. 4.2: every rank's bounded set
// of random peers, the same on every rank for one (size, degree, seed), so
// that no tracker process or message is needed. The graph is connected (a
// random tree first) and symmetric (a connection serves both ways); every
// rank then draws peers until it has about degree of them, as a
// BitTorrent client keeps connecting until it holds its peer limit.
func PeerSets(n, degree int, seed uint64) [][]int {
	sets := make([][]int, n)
	if n < 2 {
		return sets
	}
	if degree >= n-1 || degree <= 0 {
		for i := range sets {
			for j := 0; j < n; j++ {
				if j != i {
					sets[i] = append(sets[i], j)
				}
			}
		}
		return sets
	}
	rng := rand.New(rand.NewPCG(seed, 0x5357524d)) // "SWRM"
	linked := make([]map[int]bool, n)
	for i := range linked {
		linked[i] = map[int]bool{}
	}
	link := func(a, b int) {
		if a != b && !linked[a][b] {
			linked[a][b], linked[b][a] = true, true
		}
	}
	perm := rng.Perm(n)
	for k := 1; k < n; k++ {
		link(perm[k], perm[rng.IntN(k)])
	}
	// Each rank opens connections until it holds half its limit: the
	// connections others open to it bring it to about the limit.
	want := (degree + 1) / 2
	for _, a := range perm {
		for tries := 0; len(linked[a]) < want && tries < 4*n; tries++ {
			b := rng.IntN(n)
			if len(linked[b]) < degree {
				link(a, b)
			}
		}
	}
	for i := range sets {
		for j := range linked[i] {
			sets[i] = append(sets[i], j)
		}
		slices.Sort(sets[i])
	}
	return sets
}
