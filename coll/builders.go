package coll

import "fmt"

// Topology-blind builders (seed 003 Table 6.1 and Open MPI's coll/base
// trees). Every builder works for any size P >= 1 and any root; virtual rank
// v = (rank - root) mod P, so the root is virtual rank 0.

// DefaultSegSize is the segment size of segmented builders (pipeline,
// interpipe, dfs-pipeline) when none is given.
const DefaultSegSize = 64 << 10

func checkPR(name string, p, root int) error {
	if p < 1 {
		return fmt.Errorf("%s: communicator size %d < 1", name, p)
	}
	if root < 0 || root >= p {
		return fmt.Errorf("%s: root %d out of range [0,%d)", name, root, p)
	}
	return nil
}

// Linear is the flat tree: the root sends to every other rank, in rank
// order (Open MPI basic_linear).
func Linear(p, root int) (*Schedule, error) {
	if err := checkPR("linear", p, root); err != nil {
		return nil, err
	}
	children := make([][]int, p)
	for r := range p {
		if r != root {
			children[root] = append(children[root], r)
		}
	}
	return newTree("linear", p, root, children), nil
}

// Chain passes the message along virtual ranks 0 -> 1 -> ... -> P-1,
// unsegmented.
func Chain(p, root int) (*Schedule, error) {
	return KChain(p, root, 1)
}

// Pipeline is the chain cut into segments of seg bytes (DefaultSegSize when
// seg <= 0), so every link of the chain is busy at once.
func Pipeline(p, root, seg int) (*Schedule, error) {
	s, err := KChain(p, root, 1)
	if err != nil {
		return nil, err
	}
	if seg <= 0 {
		seg = DefaultSegSize
	}
	s.Name, s.SegSize = "pipeline", seg
	return s, nil
}

// KChain makes k chains of consecutive virtual ranks, the root feeding the
// head of each (Open MPI build_chain): the P-1 non-root virtual ranks are
// cut into k contiguous chains, the first (P-1) mod k one longer. k is
// clamped to [1, P-1].
func KChain(p, root, k int) (*Schedule, error) {
	if err := checkPR("k-chain", p, root); err != nil {
		return nil, err
	}
	k = max(1, min(k, p-1))
	name := "k-chain"
	if k == 1 {
		name = "chain"
	}
	n := p - 1
	return vtree(name, p, root, func(v int) []int {
		if n == 0 {
			return nil
		}
		if v == 0 {
			heads := make([]int, 0, k)
			h := 1
			for c := range k {
				heads = append(heads, h)
				h += chainLen(n, k, c)
			}
			return heads
		}
		// v is followed by v+1 unless it ends its chain.
		h := 1
		for c := range k {
			l := chainLen(n, k, c)
			if v < h+l {
				if v+1 < h+l {
					return []int{v + 1}
				}
				return nil
			}
			h += l
		}
		return nil
	}), nil
}

func chainLen(n, k, c int) int {
	l := n / k
	if c < n%k {
		l++
	}
	return l
}

// Binary is Open MPI's binary tree (build_tree with fanout 2): virtual ranks
// are numbered level by level, and a node of level l has children v+2^l and
// v+2^(l+1). The subtree of virtual rank 1 holds the odd virtual ranks, that
// of 2 the even ones, which is what split-binary relies on.
func Binary(p, root int) (*Schedule, error) {
	return kary("binary", p, root, 2)
}

// kary builds Open MPI's k-ary tree (build_tree with fanout k).
func kary(name string, p, root, k int) (*Schedule, error) {
	if err := checkPR(name, p, root); err != nil {
		return nil, err
	}
	return vtree(name, p, root, func(v int) []int {
		// level of v: levels hold 1, k, k^2, ... nodes.
		delta, upto := 1, 1
		for upto <= v {
			delta *= k
			upto += delta
		}
		var ch []int
		for i := 1; i <= k; i++ {
			if c := v + delta*i; c < p {
				ch = append(ch, c)
			} else {
				break
			}
		}
		return ch
	}), nil
}

// Binomial is Open MPI's binomial tree (build_bmtree): the parent of virtual
// rank v clears v's highest set bit; v's children are v+2^j for every 2^j
// above that bit, nearest first.
func Binomial(p, root int) (*Schedule, error) {
	if err := checkPR("binomial", p, root); err != nil {
		return nil, err
	}
	return vtree("binomial", p, root, func(v int) []int {
		mask := 1
		for mask <= v {
			mask <<= 1
		}
		var ch []int
		for ; mask < p; mask <<= 1 {
			if c := v | mask; c < p {
				ch = append(ch, c)
			} else {
				break
			}
		}
		return ch
	}), nil
}

// BinomialInOrder is MPICH's binomial tree (MPIR_Bcast_intra_binomial):
// the parent of virtual rank v is v minus its lowest set bit, so v's
// subtree is the run [v, v+lowbit(v)), and children get the largest
// subtree first (the root of 8 sends to 4, 2, 1). Open MPI's tree
// (Binomial) has the same shape but other ranks in it: the root's first
// child there leads the odd ranks. On two switches with the ranks placed
// round-robin, MPICH's tree sends every last-round message (0->1, 2->3,
// ...) over the trunk at once, Open MPI's crosses it once (0->1).
func BinomialInOrder(p, root int) (*Schedule, error) {
	if err := checkPR("binomial-inorder", p, root); err != nil {
		return nil, err
	}
	return scatterBinomial("binomial-inorder", p, root), nil
}

// scatterBinomial is the in-order binomial tree the scatter phase uses: the
// parent of v is v minus its lowest set bit, so the subtree of v is the
// contiguous run [v, v+lowbit(v)); children are sent largest subtree first.
func scatterBinomial(name string, p, root int) *Schedule {
	return vtree(name, p, root, func(v int) []int {
		top := 1
		for top < p {
			top <<= 1
		}
		limit := top
		if v != 0 {
			limit = v & -v
		}
		var ch []int
		for m := limit >> 1; m >= 1; m >>= 1 {
			if v+m < p {
				ch = append(ch, v+m)
			}
		}
		return ch
	})
}

// KNomial is Open MPI's k-nomial tree (build_kmtree) of the given radix:
// the parent of v clears v's lowest non-zero base-radix digit; children are
// v + r*radix^j (r = 1..radix-1) for every digit position j below it,
// highest position first. Radix 2 is a binomial tree.
func KNomial(p, root, radix int) (*Schedule, error) {
	if err := checkPR("knomial", p, root); err != nil {
		return nil, err
	}
	if radix < 2 {
		return nil, fmt.Errorf("knomial: radix %d < 2", radix)
	}
	return vtree("knomial", p, root, func(v int) []int {
		mask := 1
		for mask < p {
			if v%(radix*mask) != 0 {
				break
			}
			mask *= radix
		}
		var ch []int
		for mask /= radix; mask > 0; mask /= radix {
			for r := 1; r < radix; r++ {
				if c := v + mask*r; c < p {
					ch = append(ch, c)
				}
			}
		}
		return ch
	}), nil
}

// SplitBinary is Open MPI's split binary tree: the message is cut in two
// halves (the first ceil(n/2) bytes, then the rest); the left subtree of
// the binary tree (odd virtual ranks) receives the first half, the right
// subtree (even virtual ranks) the second, pipelined in segments of seg
// bytes (0: unsegmented); then every rank swaps halves with its pair (the
// odd virtual rank v with v+1). For an even P, virtual rank P-1 has no pair
// and gets the second half from the root. Messages shorter than 2 bytes, or
// shorter than two segments, fall back to the chain, as in Open MPI.
func SplitBinary(p, root, seg int) (*Schedule, error) {
	s, err := Binary(p, root)
	if err != nil {
		return nil, err
	}
	s.Name, s.Kind, s.SegSize, s.NParts = "split-binary", KindSplit, max(seg, 0), 2
	s.Span = make([]PartRange, p)
	for r := range p {
		v := (r - root + p) % p
		switch {
		case v == 0:
			s.Span[r] = PartRange{0, 2}
		case v%2 == 1:
			s.Span[r] = PartRange{0, 1}
		default:
			s.Span[r] = PartRange{1, 2}
		}
	}
	half := func(v int) PartRange {
		if v%2 == 1 {
			return PartRange{0, 1}
		}
		return PartRange{1, 2}
	}
	s.StepsOf = func(r int) []Step {
		v := (r - root + p) % p
		rank := func(v int) int { return (v + root) % p }
		if p == 1 {
			return nil
		}
		if p%2 == 0 {
			last := p - 1
			switch v {
			case 0:
				return []Step{{Peer: rank(last), Send: true, Parts: PartRange{1, 2}}}
			case last:
				return []Step{{Peer: rank(0), Parts: PartRange{1, 2}}}
			}
		} else if v == 0 {
			return nil
		}
		pair := v + 1
		if v%2 == 0 {
			pair = v - 1
		}
		other := half(pair)
		return []Step{
			{Peer: rank(pair), Parts: other},
			{Peer: rank(pair), Send: true, Parts: half(v)},
		}
	}
	fb, err := Chain(p, root)
	if err != nil {
		return nil, err
	}
	fb.SegSize = s.SegSize
	s.Small, s.SmallBelow = fb, max(2, 2*s.SegSize)
	return s, nil
}

// BinarySwap is the binary tree with swap of seed 003 (Table 6.1), built on
// the heap-numbered binary tree (children of virtual rank v are 2v+1 and
// 2v+2): the root sends the first half of the message down the subtree of
// virtual rank 1 and the second half down that of virtual rank 2; then the
// i-th rank of the left subtree in breadth-first order swaps halves with
// the i-th of the right subtree, and left ranks without a partner get the
// second half from the root. Unlike SplitBinary it has no fallback: with
// fewer than two bytes the empty half is simply not sent.
func BinarySwap(p, root, seg int) (*Schedule, error) {
	if err := checkPR("binary-swap", p, root); err != nil {
		return nil, err
	}
	s := vtree("binary-swap", p, root, func(v int) []int {
		var ch []int
		for _, c := range []int{2*v + 1, 2*v + 2} {
			if c < p {
				ch = append(ch, c)
			}
		}
		return ch
	})
	s.Kind, s.SegSize, s.NParts = KindSplit, max(seg, 0), 2
	s.Span = make([]PartRange, p)
	side := func(v int) int { // 1 = left subtree, 2 = right subtree
		for v > 2 {
			v = (v - 1) / 2
		}
		return v
	}
	var left, right []int // breadth-first = increasing heap index
	for v := 1; v < p; v++ {
		if side(v) == 1 {
			left = append(left, v)
		} else {
			right = append(right, v)
		}
	}
	for v := range p {
		r := (v + root) % p
		switch {
		case v == 0:
			s.Span[r] = PartRange{0, 2}
		case side(v) == 1:
			s.Span[r] = PartRange{0, 1}
		default:
			s.Span[r] = PartRange{1, 2}
		}
	}
	rank := func(v int) int { return (v + root) % p }
	steps := make([][]Step, p)
	for i, lv := range left {
		if i < len(right) {
			rv := right[i]
			steps[rank(lv)] = []Step{{Peer: rank(rv), Parts: PartRange{1, 2}}, {Peer: rank(rv), Send: true, Parts: PartRange{0, 1}}}
			steps[rank(rv)] = []Step{{Peer: rank(lv), Parts: PartRange{0, 1}}, {Peer: rank(lv), Send: true, Parts: PartRange{1, 2}}}
		} else {
			steps[rank(lv)] = []Step{{Peer: rank(0), Parts: PartRange{1, 2}}}
			steps[rank(0)] = append(steps[rank(0)], Step{Peer: rank(lv), Send: true, Parts: PartRange{1, 2}})
		}
	}
	s.StepsOf = func(r int) []Step { return steps[r] }
	return s, nil
}

// scatterPhase makes the binomial scatter of P parts: virtual rank v
// receives parts [v, v+lowbit(v)) from v-lowbit(v).
func scatterPhase(name string, p, root int) *Schedule {
	s := scatterBinomial(name, p, root)
	s.Kind, s.NParts = KindScatterAllgather, p
	s.Span = make([]PartRange, p)
	for v := range p {
		sp := PartRange{0, p}
		if v != 0 {
			sp = PartRange{v, min(v+(v&-v), p)}
		}
		s.Span[(v+root)%p] = sp
	}
	return s
}

// linearFallback attaches Open MPI's fallback of the scatter-allgather
// broadcasts: with fewer bytes than ranks, the linear broadcast.
func linearFallback(s *Schedule) error {
	fb, err := Linear(s.Size, s.Root)
	if err != nil {
		return err
	}
	s.Small, s.SmallBelow = fb, s.Size
	return nil
}

// ScatterAllgather is the broadcast of Open MPI's scatter_allgather: a
// binomial scatter of P blocks of ceil(n/P) bytes, then a recursive-doubling
// allgather. In round `mask` virtual rank v swaps with v^mask the blocks of
// their aligned subtrees; for a P that is not a power of two, the ranks
// whose partner does not exist get the missing blocks by recursive halving
// inside their subtree, from a rank that has them.
func ScatterAllgather(p, root int) (*Schedule, error) {
	if err := checkPR("scatter-allgather", p, root); err != nil {
		return nil, err
	}
	s := scatterPhase("scatter-allgather", p, root)
	s.StepsOf = func(r int) []Step { return recursiveDoublingSteps(p, root, r) }
	return s, linearFallback(s)
}

func recursiveDoublingSteps(p, root, r int) []Step {
	v := (r - root + p) % p
	rank := func(v int) int { return (v + root) % p }
	var out []Step
	round := 0
	for mask := 1; mask < p; mask <<= 1 {
		vr := v ^ mask
		tr := v &^ (mask - 1)   // my subtree root
		rtr := vr &^ (mask - 1) // partner subtree root
		if vr < p {
			out = append(out,
				Step{Round: round, Peer: rank(vr), Parts: PartRange{rtr, min(rtr+mask, p)}},
				Step{Round: round, Peer: rank(vr), Send: true, Parts: PartRange{tr, min(tr+mask, p)}})
		}
		round++
		if rtr+mask > p {
			// Part of my subtree had no partner: those ranks get the blocks
			// [tr+mask, p) from one that has them, halving the distance.
			have := p - tr - mask // ranks of my subtree that swapped
			missing := PartRange{tr + mask, p}
			for h := mask >> 1; h > 0; h >>= 1 {
				w := v ^ h
				sub := v &^ (2*h - 1)
				switch {
				case w > v && v < sub+have && w >= sub+have && w < p:
					out = append(out, Step{Round: round, Peer: rank(w), Send: true, Parts: missing})
				case w < v && w < sub+have && v >= sub+have:
					out = append(out, Step{Round: round, Peer: rank(w), Parts: missing})
				}
				round++
			}
		} else {
			round += bitsBelow(mask)
		}
	}
	return out
}

// bitsBelow is the number of halving rounds of step mask (log2 mask), so
// that every rank numbers rounds alike.
func bitsBelow(mask int) int {
	n := 0
	for h := mask >> 1; h > 0; h >>= 1 {
		n++
	}
	return n
}

// ScatterAllgatherRing is Open MPI's scatter_allgather_ring: the binomial
// scatter, then P-1 ring rounds in which virtual rank v sends to v+1 the
// block it got in the round before (its own first) and receives block
// v-1-i from v-1.
func ScatterAllgatherRing(p, root int) (*Schedule, error) {
	if err := checkPR("scatter-allgather-ring", p, root); err != nil {
		return nil, err
	}
	s := scatterPhase("scatter-allgather-ring", p, root)
	s.StepsOf = func(r int) []Step {
		if p == 1 {
			return nil
		}
		v := (r - root + p) % p
		left, right := (r-1+p)%p, (r+1)%p
		out := make([]Step, 0, 2*(p-1))
		sb, rb := v, (v-1+p)%p
		for i := 1; i < p; i++ {
			out = append(out,
				Step{Round: i, Peer: left, Parts: PartRange{rb, rb + 1}},
				Step{Round: i, Peer: right, Send: true, Parts: PartRange{sb, sb + 1}})
			sb, rb = rb, (rb-1+p)%p
		}
		return out
	}
	return s, linearFallback(s)
}
