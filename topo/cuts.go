package topo

// treeCuts answers "which tree edge separates this set of ranks from the
// others?", the question behind a link speed per switch: a group of ranks
// hangs off the rest of the tree by one edge exactly when it is the set of
// ranks on one side of that edge.
type treeCuts struct {
	p       *Paths
	tree    *Tree
	in, out []int // preorder interval of every node (tree rooted at node 0)
	under   []int // ranks in the subtree of every node
	size    int
}

func newTreeCuts(tr *Tree, size int) *treeCuts {
	p := newPaths(tr, size)
	n := len(tr.Nodes)
	c := &treeCuts{p: p, tree: tr, in: make([]int, n), out: make([]int, n), under: make([]int, n), size: size}
	kids := make([][]int, n)
	for v := 1; v < n; v++ {
		if p.parent[v] >= 0 {
			kids[p.parent[v]] = append(kids[p.parent[v]], v)
		}
	}
	isRank := make([]bool, n)
	for _, v := range p.rankNode {
		isRank[v] = true
	}
	// Iterative preorder, so that deep chains cannot overflow the stack.
	type frame struct{ v, next int }
	stack := []frame{{0, 0}}
	clock := 1
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < len(kids[f.v]) {
			k := kids[f.v][f.next]
			f.next++
			c.in[k] = clock
			clock++
			stack = append(stack, frame{k, 0})
			continue
		}
		v := f.v
		stack = stack[:len(stack)-1]
		c.out[v] = clock
		if isRank[v] {
			c.under[v]++
		}
		if pv := p.parent[v]; pv >= 0 {
			c.under[pv] += c.under[v]
		}
	}
	return c
}

// contains tells whether node v lies in the subtree of node u.
func (c *treeCuts) contains(u, v int) bool { return c.in[u] <= c.in[v] && c.in[v] < c.out[u] }

// edges returns the indices of the edges that cut ranks off the rest of
// the tree: the side of each edge away from the root holds exactly ranks
// or exactly the others. Several edges do when the cut runs along a path
// of switches that branch nowhere else. Empty when no edge cuts the set
// (or the set is all ranks).
func (c *treeCuts) edges(ranks []int) []int {
	if len(ranks) == 0 || len(ranks) >= c.size {
		return nil
	}
	var out []int
	for w, e := range c.p.upEdge {
		// Counting first keeps this linear in the tree for all but the
		// few edges whose sides have the right sizes.
		if e < 0 || (c.under[w] != len(ranks) && c.under[w] != c.size-len(ranks)) {
			continue
		}
		inside := 0
		for _, r := range ranks {
			if r >= 0 && r < c.size && c.contains(w, c.p.rankNode[r]) {
				inside++
			}
		}
		if (inside == len(ranks) && c.under[w] == len(ranks)) || (inside == 0 && c.under[w] == c.size-len(ranks)) {
			out = append(out, e)
		}
	}
	return out
}

// bandwidth is the measured bandwidth (bytes/s) of the link cutting ranks
// off the rest (the slowest edge when several in a row do); false when no
// edge cuts the set or one of its edges was not measured.
func (c *treeCuts) bandwidth(ranks []int) (float64, bool) {
	es := c.edges(ranks)
	if len(es) == 0 {
		return 0, false
	}
	bw := 0.0
	for i, e := range es {
		b := c.tree.Edges[e].Bandwidth
		if b == nil {
			return 0, false
		}
		if i == 0 || *b < bw {
			bw = *b
		}
	}
	return bw, true
}
