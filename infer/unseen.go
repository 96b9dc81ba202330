package infer

import (
	"math"
	"slices"
)

// Unseen lists the pairs that would tell where a leaf of t belongs when
// the measurements cannot: for every leaf h hanging from switch x by a
// leaf of length l, and every other branch at x that holds no host
// measured with h and is a leaf or starts with a switch within l of x,
// the pair of h and
// the branch's host nearest to x (ties to the lower rank). Pairs come
// once each, the lower rank first, in the order of the leaves' ranks.
//
// Hanging h anywhere inside such a branch, up to l from x, keeps every
// distance from h to the hosts it was measured with: the path to each of
// them leaves through x all the same. Without noise, procedure add never
// leaves such a branch behind (every branch at the switch a host hangs
// from was pruned by a step through it, so holds A or B of that step).
// Under noise it does: a host placed a fraction of a microsecond off its
// socket puts that point on the path of a later step, the branching point
// snaps to it, and its branch — the host's other socket — is pruned
// although the later host belongs in it. That host then hangs from the
// other socket's switch by a leaf as long as the way between the sockets,
// its own socket-mates form their switch without ever measuring it, and
// neither Refine nor the levels can tell it is not a socket of its own
// (racks-16x2x8-1gbe, 2% jitter, noise seeds 4 and 7: a spurious level of
// singletons). One measurement per such branch tells, and Refine then
// moves the leaf.
func Unseen(t *Tree, ms []Measurement) [][2]int {
	peers := map[int][]int{} // by rank: the nodes measured with it
	for _, m := range ms {
		a, okA := t.byRank.get(m.A)
		b, okB := t.byRank.get(m.B)
		if okA && okB && m.A != m.B {
			peers[m.A] = append(peers[m.A], b)
			peers[m.B] = append(peers[m.B], a)
		}
	}
	adj := t.adjacency()
	in, out := t.spans()
	within := func(v, n int) bool { return in[v] <= in[n] && in[n] < out[v] }
	// inBranch tells whether node n lies in the branch at s that holds
	// s's neighbour nb.
	inBranch := func(s, nb, n int) bool {
		if t.nodes[s].parent == nb {
			return !within(s, n)
		}
		return within(nb, n)
	}
	type hop struct {
		v, from int
		d       float64
	}
	// nearest is the rank in the branch at s holding nb nearest to s.
	nearest := func(s, nb int) int {
		best, bestD := -1, math.Inf(1)
		stack := []hop{{nb, s, adj.length(s, nb)}}
		for len(stack) > 0 {
			c := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if r := t.nodes[c.v].rank; r >= 0 && (c.d < bestD || c.d == bestD && r < best) {
				best, bestD = r, c.d
			}
			adj.each(c.v, func(nb int) {
				if nb != c.from {
					stack = append(stack, hop{nb, c.v, c.d + adj.length(c.v, nb)})
				}
			})
		}
		return best
	}
	seen := map[[2]int]bool{}
	var pairs [][2]int
	for _, h := range t.Ranks() {
		hn := t.byRank.at(h)
		var x int // the one node h hangs from (the root rank hangs from its child)
		n := 0
		adj.each(hn, func(nb int) { x = nb; n++ })
		if n != 1 {
			continue
		}
		leaf := adj.length(hn, x)
		adj.each(x, func(nb int) {
			if nb == hn || adj.length(x, nb) >= leaf && t.nodes[nb].rank < 0 || slices.ContainsFunc(peers[h], func(p int) bool { return inBranch(x, nb, p) }) {
				return
			}
			j := nearest(x, nb)
			k := [2]int{min(h, j), max(h, j)}
			if j >= 0 && !seen[k] {
				seen[k] = true
				pairs = append(pairs, k)
			}
		})
	}
	return pairs
}
