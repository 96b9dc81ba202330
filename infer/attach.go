package infer

// GroupAttachments returns, for every rank of t (indexed by rank, ranks
// 0..len(groupOf)-1), the distance from the rank to the point where its
// group joins the rest of the tree: walking from the rank towards the
// ranks of other groups, the first node from which ranks of other groups
// lie in two branches or more (or a rank of another group is next). Two
// ranks whose groups join at the same switch are then d(i,j) - a(i) - a(j)
// = 0 apart, whatever the lengths of their own links: on a cluster of 20 us
// NICs, hosts of one rack hang from their leaf switch 40 us apart and 44 us
// from the other rack's (10%, the jitter of a few rounds), but their
// attachment points are 0 and 4 us apart. Groups with no rank of another
// group in the tree get 0. Ranks not in t get 0.
func (t *Tree) GroupAttachments(groupOf []int) []float64 {
	n := len(t.nodes)
	out := make([]float64, len(groupOf))
	if n < 2 {
		return out
	}
	group := func(v int) int {
		if r := t.nodes[v].rank; r >= 0 && r < len(groupOf) {
			return groupOf[r]
		}
		return -1
	}
	adj := t.adjacency()
	order := t.topDown()
	// down[v] sums up v's subtree, up[v] the rest of the tree beyond
	// v's parent edge.
	down := make([]groups, n)
	up := make([]groups, n)
	for i := n - 1; i >= 0; i-- {
		v := order[i]
		s := groups{}.with(group(v))
		for _, c := range adj.childrenOf(v) {
			s = s.join(down[c])
		}
		down[v] = s
	}
	for _, v := range order {
		ch := adj.childrenOf(v)
		// Prefix and suffix sums over the children, so that each child's
		// up summary leaves its own subtree out.
		pre := make([]groups, len(ch)+1)
		base := groups{}.with(group(v))
		if t.nodes[v].parent >= 0 {
			base = base.join(up[v])
		}
		pre[0] = base
		for k, c := range ch {
			pre[k+1] = pre[k].join(down[c])
		}
		suf := groups{}
		for k := len(ch) - 1; k >= 0; k-- {
			up[ch[k]] = pre[k].join(suf)
			suf = suf.join(down[ch[k]])
		}
	}
	// branch is the summary of the part of the tree beyond neighbour y
	// of x.
	branch := func(x, y int) groups {
		if t.nodes[y].parent == x {
			return down[y]
		}
		return up[x]
	}
	for r, g := range groupOf {
		start, ok := t.byRank.get(r)
		if !ok {
			continue
		}
		prev, x, d := -1, start, 0.0
		for steps := 0; steps < n; steps++ {
			count, next := 0, -1
			adj.each(x, func(y int) {
				if y != prev && branch(x, y).other(g) {
					count++
					next = y
				}
			})
			if count == 0 || count >= 2 || (x != start && t.nodes[next].rank >= 0) {
				break
			}
			d += adj.length(x, next)
			prev, x = x, next
		}
		out[r] = d
	}
	return out
}

// groups summarises the groups of the ranks in a part of the tree: none
// (first -1), one (first), or several (mixed).
type groups struct {
	first int
	mixed bool
	some  bool
}

func (s groups) with(g int) groups {
	if g < 0 {
		return s
	}
	if !s.some {
		return groups{first: g, some: true}
	}
	if g != s.first {
		s.mixed = true
	}
	return s
}

func (s groups) join(o groups) groups {
	if !o.some {
		return s
	}
	s = s.with(o.first)
	s.mixed = s.mixed || o.mixed
	return s
}

// other tells whether the part holds a rank of a group other than g.
func (s groups) other(g int) bool { return s.mixed || (s.some && s.first != g) }
