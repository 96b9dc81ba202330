package infer

// rankIndex maps ranks to node ids. The ranks of a tree are a world's, 0
// to N-1, so a slice indexed by rank holds them: every rank of a blind
// inference decodes two trees of N ranks, and filling a hash map for each
// was a quarter of the decoding and 1.2 GB of garbage at 4,096 ranks. A
// rank far beyond the entries (a sub-communicator's tree in world ranks,
// or a hostile tree message) goes to a map, so that nothing is allocated
// for ranks that are not there.
type rankIndex struct {
	dense  []int32 // node id + 1 by rank; 0: absent
	sparse map[int]int
	n      int
}

// denseLimit is how far the slice may reach for n entries.
func denseLimit(n int) int { return 4*n + 1024 }

// reserve sizes the slice for ranks below max when that is within the
// limit for n entries.
func (x *rankIndex) reserve(max, n int) {
	if max <= denseLimit(n) && max > len(x.dense) && len(x.sparse) == 0 {
		x.dense = append(x.dense, make([]int32, max-len(x.dense))...)
	}
}

func (x *rankIndex) get(r int) (int, bool) {
	if r >= 0 && r < len(x.dense) {
		id := x.dense[r]
		return int(id) - 1, id != 0
	}
	id, ok := x.sparse[r]
	return id, ok
}

// at is get's id, 0 for a rank not there (as a map's zero value).
func (x *rankIndex) at(r int) int {
	id, _ := x.get(r)
	return max(id, 0)
}

func (x *rankIndex) set(r, id int) {
	if _, ok := x.get(r); !ok {
		x.n++
	}
	if limit := denseLimit(x.n); r >= len(x.dense) && r < limit {
		x.reserve(min(max(r+1, 2*len(x.dense)), limit), x.n)
	}
	if r >= 0 && r < len(x.dense) {
		x.dense[r] = int32(id) + 1
		return
	}
	if x.sparse == nil {
		x.sparse = map[int]int{}
	}
	x.sparse[r] = id
}

func (x *rankIndex) len() int { return x.n }

// each calls f for every rank and its node, dense ranks in increasing
// order first.
func (x *rankIndex) each(f func(r, id int)) {
	for r, id := range x.dense {
		if id != 0 {
			f(r, int(id)-1)
		}
	}
	for r, id := range x.sparse {
		f(r, id)
	}
}

func (x *rankIndex) clone() rankIndex {
	c := rankIndex{dense: append([]int32(nil), x.dense...), n: x.n}
	if len(x.sparse) > 0 {
		c.sparse = make(map[int]int, len(x.sparse))
		for r, id := range x.sparse {
			c.sparse[r] = id
		}
	}
	return c
}
