package coll

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Performance-aware builders (seed 000 Sect. 2.2.1 and 6.2.5-6.2.7): they
// take a prediction of point-to-point time, so that a performance model
// (Hockney, PLogP, ... from package model) plugs in without the builders
// knowing which.

// CostFunc predicts the time in seconds to send bytes from rank i to rank j.
type CostFunc func(i, j, bytes int) float64

// Traversal is the order in which ModelBinomial fills the template tree.
type Traversal int

const (
	DepthFirst   Traversal = iota // lowest-order subtrees first, depth first
	BreadthFirst                  // level by level
)

// Pick says which free rank ModelBinomial maps to the next tree node.
type Pick int

const (
	MinFirst Pick = iota // the free rank cheapest to reach from the parent
	MaxFirst             // the most expensive one
)

func checkCost(name string, p, root int, cost CostFunc, sizes []int) error {
	if err := checkPR(name, p, root); err != nil {
		return err
	}
	if cost == nil {
		return fmt.Errorf("%s: needs a cost function", name)
	}
	if sizes != nil && len(sizes) != p {
		return fmt.Errorf("%s: %d message sizes for %d ranks", name, len(sizes), p)
	}
	return nil
}

func sizeOf(sizes []int, i int) int {
	if sizes == nil {
		return 0
	}
	return sizes[i]
}

// ModelBinomial is the model-based binomial tree of seed 000 Sect. 6.2.5
// (CPM's DFS/BFS binomial builders): the shape is a binomial tree (the
// subtree of position v is [v, v+lowbit(v))); its positions are filled in
// depth-first order starting with the lowest-order subtrees (or breadth
// first), and each new position gets, among the free ranks, the one with the
// minimal (MinFirst) or maximal (MaxFirst) predicted time
// cost(parent, i, sizes[i]) from the rank already placed at its parent.
// sizes[i] is the message size of rank i (its block for scatterv/gatherv,
// the whole message for a broadcast); nil means 0 bytes (latency only).
// Children are sent to largest subtree first.
func ModelBinomial(p, root int, cost CostFunc, sizes []int, trav Traversal, pick Pick) (*Schedule, error) {
	if err := checkCost("model-binomial", p, root, cost, sizes); err != nil {
		return nil, err
	}
	shape := scatterBinomial("model-binomial", p, 0) // positions, root at 0
	// Visiting order of positions.
	var order []int
	if trav == BreadthFirst {
		queue := []int{0}
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			order = append(order, v)
			ch := slices.Clone(shape.Children[v])
			slices.Reverse(ch) // lowest-order subtrees first
			queue = append(queue, ch...)
		}
	} else {
		var visit func(v int)
		visit = func(v int) {
			order = append(order, v)
			ch := slices.Clone(shape.Children[v])
			slices.Reverse(ch)
			for _, c := range ch {
				visit(c)
			}
		}
		visit(0)
	}
	rankAt := make([]int, p)
	rankAt[0] = root
	free := make([]bool, p)
	for r := range free {
		free[r] = r != root
	}
	for _, v := range order[1:] {
		parent := rankAt[shape.Parent[v]]
		best, bestCost := -1, 0.0
		for i := range p {
			if !free[i] {
				continue
			}
			c := cost(parent, i, sizeOf(sizes, i))
			if best < 0 || (pick == MinFirst && c < bestCost) || (pick == MaxFirst && c > bestCost) {
				best, bestCost = i, c
			}
		}
		rankAt[v] = best
		free[best] = false
	}
	children := make([][]int, p)
	for v := range p {
		for _, c := range shape.Children[v] {
			children[rankAt[v]] = append(children[rankAt[v]], rankAt[c])
		}
	}
	s := newTree("model-binomial", p, root, children)
	return s, s.Validate()
}

// Traff is the modified Träff builder for irregular scatter and gather
// (seed 000 Sect. 6.2.6, Alg. 1): starting from the set of all non-root
// ranks under the root, each set is sorted by decreasing predicted time to
// its parent, cut into the fewest subsets such that every subset costs at
// least as much as all earlier ones together (t(S) = sum over S of
// cost(parent, i, sizes[i])), and each subset gets as root the member that
// its parent reaches fastest; the subsets are then handled the same way.
// Expensive ranks end up in small subtrees near the parent, cheap ones in
// large subtrees. A parent sends to its costliest subtree first.
func Traff(p, root int, cost CostFunc, sizes []int) (*Schedule, error) {
	if err := checkCost("traff", p, root, cost, sizes); err != nil {
		return nil, err
	}
	type set struct {
		parent  int
		members []int
	}
	children := make([][]int, p)
	var rest []int
	for r := range p {
		if r != root {
			rest = append(rest, r)
		}
	}
	stack := []set{{root, rest}}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if len(cur.members) == 0 {
			continue
		}
		t := func(i int) float64 { return cost(cur.parent, i, sizeOf(sizes, i)) }
		m := slices.Clone(cur.members)
		slices.SortStableFunc(m, func(a, b int) int { return cmp.Or(cmp.Compare(t(b), t(a)), cmp.Compare(a, b)) })
		// Greedy minimal subsets: each must cost at least the sum of all before it.
		var subsets [][]int
		var costs []float64
		prior := 0.0
		var curSet []int
		curCost := 0.0
		for _, i := range m {
			curSet = append(curSet, i)
			curCost += t(i)
			if curCost >= prior {
				subsets, costs = append(subsets, curSet), append(costs, curCost)
				prior += curCost
				curSet, curCost = nil, 0
			}
		}
		if len(curSet) > 0 {
			// The cheapest ranks left over cannot outweigh the rest: they
			// form a last, smaller subset (merging them into the one before
			// would deepen the tree beyond the binomial's).
			subsets, costs = append(subsets, curSet), append(costs, curCost)
		}
		var roots []int
		var rootCost []float64
		for k, sub := range subsets {
			best := sub[0]
			for _, i := range sub[1:] {
				if t(i) < t(best) || (t(i) == t(best) && i < best) {
					best = i
				}
			}
			roots = append(roots, best)
			rootCost = append(rootCost, costs[k])
			var remain []int
			for _, i := range sub {
				if i != best {
					remain = append(remain, i)
				}
			}
			stack = append(stack, set{best, remain})
		}
		idx := make([]int, len(roots))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(rootCost[b], rootCost[a]) })
		for _, k := range idx {
			children[cur.parent] = append(children[cur.parent], roots[k])
		}
	}
	s := newTree("traff", p, root, children)
	return s, s.Validate()
}

// PrimVariant selects the edge cost of the Prim builder (seed 000 Sect.
// 2.2.1, after Bhat et al.).
type PrimVariant int

const (
	// PrimPlain: edge cost alpha_ij + m beta_ij = cost(i, j, m), a minimum
	// spanning tree.
	PrimPlain PrimVariant = iota
	// PrimReady adds the ready time R_i of the sender: when it has the
	// message and has finished its earlier sends.
	PrimReady
	// PrimLookahead also adds L_j, the cheapest send from j to any rank
	// not yet in the tree, so that good forwarders are reached early.
	PrimLookahead
)

// Prim grows a broadcast tree of a bytes-long message from the root,
// adding at each step the (in-tree i, out-of-tree j) edge of least cost
// according to variant; a parent sends to its children in the order they
// were added. Ties go to the lower sender, then the lower receiver.
func Prim(p, root int, cost CostFunc, bytes int, variant PrimVariant) (*Schedule, error) {
	if err := checkCost("prim", p, root, cost, nil); err != nil {
		return nil, err
	}
	in := make([]bool, p)
	in[root] = true
	ready := make([]float64, p) // time sender i becomes free (PrimReady, PrimLookahead)
	look := make([]float64, p)  // L_j
	lookOf := make([]int, p)    // argmin of L_j
	computeLook := func(j int) {
		look[j], lookOf[j] = 0, -1
		best := math.Inf(1)
		for k := range p {
			if k != j && !in[k] {
				if c := cost(j, k, bytes); c < best {
					best, lookOf[j] = c, k
				}
			}
		}
		if lookOf[j] >= 0 {
			look[j] = best
		}
	}
	// via[j], base[j]: best in-tree sender for j and R_via + cost(via, j).
	via := make([]int, p)
	base := make([]float64, p)
	edge := func(i, j int) float64 {
		c := cost(i, j, bytes)
		if variant != PrimPlain {
			c += ready[i]
		}
		return c
	}
	rescan := func(j int) {
		via[j], base[j] = -1, math.Inf(1)
		for i := range p {
			if in[i] {
				if c := edge(i, j); c < base[j] {
					via[j], base[j] = i, c
				}
			}
		}
	}
	for j := range p {
		if !in[j] {
			rescan(j)
			if variant == PrimLookahead {
				computeLook(j)
			}
		}
	}
	children := make([][]int, p)
	for added := 1; added < p; added++ {
		pick, pickCost := -1, math.Inf(1)
		for j := range p {
			if in[j] {
				continue
			}
			c := base[j]
			if variant == PrimLookahead {
				c += look[j]
			}
			if pick < 0 || c < pickCost || (c == pickCost && via[j] < via[pick]) {
				pick, pickCost = j, c
			}
		}
		i := via[pick]
		children[i] = append(children[i], pick)
		in[pick] = true
		if variant != PrimPlain {
			t := cost(i, pick, bytes)
			ready[pick] = ready[i] + t // pick can forward once it has the message
			ready[i] += t              // i is busy sending meanwhile
		}
		for j := range p {
			if in[j] {
				continue
			}
			if variant != PrimPlain && via[j] == i {
				rescan(j) // i's ready time grew
			} else if c := edge(pick, j); c < base[j] || (c == base[j] && pick < via[j]) {
				via[j], base[j] = pick, c
			}
			if variant == PrimLookahead && lookOf[j] == pick {
				computeLook(j)
			}
		}
	}
	s := newTree("prim", p, root, children)
	return s, s.Validate()
}
