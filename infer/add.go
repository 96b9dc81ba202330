package infer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// RTT is the result of one pair measurement (seed 002 Fig. 6): the best
// and the worst round-trip time over the rounds, in seconds, and the
// second best.
type RTT struct {
	Min, Max float64
	// Next is the second-best round's best (0: not known; Max stands in).
	// On a real network one round in a slow spell (another process on the
	// peer's core) lifts Max by microseconds whatever the pair's distance;
	// the second best is an upper bound of the minimum that one bad round
	// does not move.
	Next float64
}

// Upper is the robust upper end of the pair's minimum: Next when known,
// otherwise Max.
func (r RTT) Upper() float64 {
	if r.Next > 0 {
		return min(r.Next, r.Max)
	}
	return r.Max
}

// Prober measures RTTs on demand. Implementations: recorded matrices, the
// simulator, live processes (package probe's ping-pong).
type Prober interface {
	RTT(a, b int) (RTT, error)
}

// Adder inserts one host into a tree (procedure add of seed 002 Fig. 5 with
// the practical rules of Sect. 4). It remembers every RTT it measured from
// its host, so that find_close_host's measurements are reused by add.
type Adder struct {
	H      int
	Probe  Prober
	Known  map[int]RTT // RTTs measured from H, by peer rank
	Rand   *rand.Rand  // for find_close_host's arbitrary choices
	AddRTT int         // measurements made by add itself (the Sect. 3.3 bound counts these)
	// Tol and RelTol widen the min/max interval within which a branching
	// point coincides with an existing switch: by Tol seconds plus RelTol
	// times the smaller of the one-way distance from H to the nearer of A
	// and B and the tree distance A-B. The first alone would swallow the
	// switches between two close hosts A and B when H is far from both
	// (the first host of a new cluster placing the one before); the
	// second alone would swallow whole switches when A and B are far
	// apart. They absorb what is not noise but not latency either
	// (rounding, a small message's transfer time), which would otherwise
	// split one switch into several a few nanoseconds apart.
	Tol, RelTol float64
	// NoiseFactor raises RelTol to NoiseFactor times the noise H's own
	// measurements show: the median over the hosts measured so far of
	// (Max-Min)/Min, the relative spread of the rounds' best RTTs. The
	// min/max interval of Sect. 4 covers the noise of the two RTTs of a
	// step but not that of the tree distance between A and B, which sums
	// the errors of every edge on the path; under noise a tight interval
	// splits a switch into near copies a microsecond apart, and the next
	// host that snaps to the wrong copy prunes the branch it belongs to.
	NoiseFactor float64
	// CloseSamples caps find_close_host's measurements. Seed 002 says it
	// "measures RTTs to some randomly selected hosts"; without a cap the
	// 3x and x/3 rules never prune the hosts of H's own switch (they are
	// all at the same distance), and H measures every one of them. 0 means
	// no cap. A few samples suffice: add's own choice of B goes by the
	// estimates through every host measured, so a close host missed here
	// is still reached early.
	CloseSamples int
	// NewcomerSamples caps MeasureNewcomers' measurements (0: no cap).
	NewcomerSamples int
	// Confirm is how many times a step that would create a new switch
	// measures its two pairs again before it does (no new pair: the same
	// two peers, more rounds).
	Confirm int
	// Remeasured counts those confirming measurements.
	Remeasured int
	// Refitted counts the times H's place contradicted its own
	// measurements and was refitted.
	Refitted int

	est []float64 // estimates' buffer
}

// The defaults below were chosen on shirai-4clusters, dichev-n1 and
// grid5000-4sites under the simulator's 2% one-sided latency jitter, over
// several noise seeds (docs/inference.md has the table). Against the
// previous defaults (16 close samples, every newcomer in rank order, no
// confirmation, NoiseFactor 5) they measure 10.0% of shirai-4clusters'
// pairs instead of 19% and keep the live trees of both exact on seeds
// 2 to 6.
const (
	// DefaultCloseSamples is the default cap of find_close_host.
	DefaultCloseSamples = 4
	// DefaultNewcomerSamples is the default cap of MeasureNewcomers (0:
	// none; the lower bound already skips the newcomers that cannot be
	// closer, and a cap of 3 or 5 let grid5000-4sites' first Lyon hosts
	// be placed from millisecond RTTs).
	DefaultNewcomerSamples = 0
	// DefaultConfirm is the default number of confirming measurements
	// before add creates a switch.
	DefaultConfirm = 3
)

// AdditiveSpread is the median relative spread of a host's measurements
// beyond which Add takes the noise for CPU delays in absolute time rather
// than jitter proportional to the path: the simulator's relative jitter
// spreads the rounds' bests by 0.3-1%, kernel TCP on busy cores by 10-20%
// (docs/noise.md).
const AdditiveSpread = 0.02

// Additive tells whether measurements show CPU delays rather than jitter
// proportional to the path: their median relative spread (Max-Min)/Min
// exceeds AdditiveSpread.
func Additive(ms []Measurement) bool { return RelativeSpread(ms) > AdditiveSpread }

// RelativeSpread is the median relative spread (Max-Min)/Min of the
// measurements (0 for none).
func RelativeSpread(ms []Measurement) float64 {
	v := make([]float64, 0, len(ms))
	for _, m := range ms {
		if m.RTT.Min > 0 {
			v = append(v, (m.RTT.Max-m.RTT.Min)/m.RTT.Min)
		}
	}
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

// DefaultNoiseFactor is the default NoiseFactor: with the simulator's
// default 2% one-sided latency jitter the rounds' bests of a pair differ by
// 0.33% of the RTT (median) on shirai-4clusters and dichev-n1, where host
// overheads are not jittered, so 6 widens the interval by about 2%. On
// fram-like, whose sub-microsecond latencies are jittered whole, the
// spread is larger and a factor of 10 merges its nodes and islands; 6
// keeps them apart. Without noise the spread is 0 and RelTol alone
// applies.
const DefaultNoiseFactor = 6

// NewAdder returns an Adder for host h.
func NewAdder(h int, p Prober, seed uint64) *Adder {
	return &Adder{H: h, Probe: p, Known: map[int]RTT{}, Rand: rand.New(rand.NewPCG(seed, uint64(h))), Tol: 1e-9, RelTol: 5e-3, NoiseFactor: DefaultNoiseFactor, CloseSamples: DefaultCloseSamples, NewcomerSamples: DefaultNewcomerSamples, Confirm: DefaultConfirm}
}

func (ad *Adder) measure(j int, counted bool) (RTT, error) {
	if r, ok := ad.Known[j]; ok {
		return r, nil
	}
	r, err := ad.Probe.RTT(ad.H, j)
	if err != nil {
		return RTT{}, fmt.Errorf("rtt %d-%d: %w", ad.H, j, err)
	}
	if counted {
		ad.AddRTT++
	}
	ad.Known[j] = r
	return r, nil
}

// remeasure measures H-j again and merges it with the earlier result: the
// best minimum, and the lower of the two maxima. Pooling the maxima as
// well would only widen the interval: the maximum of the rounds' bests
// grows with every round while the minimum converges, and on a far pair
// (700 us RTTs) the wider interval swallows switches 2.5 us apart.
func (ad *Adder) remeasure(j int) (RTT, error) {
	r, err := ad.Probe.RTT(ad.H, j)
	if err != nil {
		return RTT{}, fmt.Errorf("rtt %d-%d: %w", ad.H, j, err)
	}
	old := ad.Known[j]
	lo := math.Min(old.Min, r.Min)
	// The second best of the pooled rounds, from the two best of each.
	b := []float64{old.Min, old.Upper(), r.Min, r.Upper()}
	sort.Float64s(b)
	r = RTT{Min: lo, Max: math.Max(lo, math.Min(old.Max, r.Max)), Next: b[1]}
	ad.Known[j] = r
	ad.Remeasured++
	return r, nil
}

// noise is the median relative spread (Max-Min)/Min of H's measurements,
// and the median absolute spread of their minima, Upper-Min (seconds of
// RTT).
func (ad *Adder) noise() (rel, abs float64) {
	v := make([]float64, 0, len(ad.Known))
	w := make([]float64, 0, len(ad.Known))
	for _, r := range ad.Known {
		if r.Min > 0 {
			v = append(v, (r.Max-r.Min)/r.Min)
			w = append(w, r.Upper()-r.Min)
		}
	}
	if len(v) == 0 {
		return 0, 0
	}
	sort.Float64s(v)
	sort.Float64s(w)
	return v[len(v)/2], w[len(w)/2]
}

// Measured returns the number of distinct peers H has measured.
func (ad *Adder) Measured() int { return len(ad.Known) }

// FindCloseHost is find_close_host of seed 002 Fig. 8: measure RTTs from H
// to arbitrary hosts of t, dropping after each measurement x (one-way) the
// candidates whose tree distance y to the measured host has y > 3x or
// y < x/3, as they are known to be far from H; return the closest host
// measured. The seed leaves the choice of the next host "arbitrary": the
// first is random, each later one the candidate with the smallest lower
// bound on its distance from H (a random one among equals), which goes
// to H's own cluster after one far measurement instead of drawing more
// far hosts (close samples across clusters on shirai-4clusters: 344 -> 211).
func (ad *Adder) FindCloseHost(t *Tree) (int, error) {
	m := t.rankNodes() // node ids, in the order of t.Ranks
	best, bestRTT := -1, math.Inf(1)
	for taken := 0; len(m) > 0 && (ad.CloseSamples <= 0 || taken < ad.CloseSamples); taken++ {
		i := ad.Rand.IntN(len(m))
		if taken > 0 {
			i = ad.lowestBound(t, m, i)
		}
		jn := m[i]
		j := t.nodes[jn].rank
		m[i] = m[len(m)-1]
		m = m[:len(m)-1]
		r, err := ad.measure(j, false)
		if err != nil {
			return -1, err
		}
		if r.Min < bestRTT {
			best, bestRTT = j, r.Min
		}
		x := r.Min / 2
		keep := m[:0]
		for _, k := range m {
			y := t.nodeDistance(k, jn)
			if !(y > 3*x || y < x/3) {
				keep = append(keep, k)
			}
		}
		m = keep
	}
	return best, nil
}

// Closest returns the host of t with the smallest RTT measured from H so
// far (ties to the lower rank), or -1 if none was measured.
func (ad *Adder) Closest(t *Tree) int {
	first, best := -1, math.Inf(1)
	for j, v := range ad.Known {
		if t.Has(j) && (v.Min < best || v.Min == best && j < first) {
			first, best = j, v.Min
		}
	}
	return first
}

// MeasureNewcomers measures H against the hosts of t that were not yet in
// view, the tree find_close_host searched (T_{i-Ahead}): the up to Ahead-1
// hosts added since. Without this, the first hosts of a cluster never see
// each other before add starts, and add then works from far hosts, where
// measurement noise is largest. It takes the newcomers in order of their
// lower bound on the distance from H (max over measured hosts J of
// |x_J - d(J, N)|, the triangle inequality on the tree), skips those that
// cannot be closer than the best host measured, and stops after
// NewcomerSamples measurements (0: no cap).
func (ad *Adder) MeasureNewcomers(t, view *Tree) error {
	var fresh []int
	for _, n := range t.nodes {
		if r := n.rank; r >= 0 && (view == nil || !view.Has(r)) && r != ad.H {
			if _, ok := ad.Known[r]; !ok {
				fresh = append(fresh, r)
			}
		}
	}
	for taken := 0; len(fresh) > 0 && (ad.NewcomerSamples <= 0 || taken < ad.NewcomerSamples); taken++ {
		best := math.Inf(1)
		for j, v := range ad.Known {
			if t.Has(j) {
				best = math.Min(best, v.Min/2)
			}
		}
		pick, pickLB := -1, math.Inf(1)
		for i, n := range fresh {
			if lb := ad.lowerBound(t, n); lb < pickLB {
				pick, pickLB = i, lb
			}
		}
		if pickLB >= best {
			return nil // no newcomer can beat the closest host measured
		}
		n := fresh[pick]
		fresh = append(fresh[:pick], fresh[pick+1:]...)
		if _, err := ad.measure(n, false); err != nil {
			return err
		}
	}
	return nil
}

// lowestBound returns the index in m (node ids) of the host with the
// smallest lower bound on its distance from H, preferring index pref
// among equals.
func (ad *Adder) lowestBound(t *Tree, m []int, pref int) int {
	in := ad.measuredIn(t)
	best, bestLB := pref, lowerBound(t, in, m[pref])
	for i, k := range m {
		if lb := lowerBound(t, in, k); lb < bestLB-1e-9 {
			best, bestLB = i, lb
		}
	}
	return best
}

// lowerBound is the best lower bound on the one-way distance from H to
// host n that H's measurements and the tree give.
func (ad *Adder) lowerBound(t *Tree, n int) float64 {
	return lowerBound(t, ad.measuredIn(t), t.byRank.at(n))
}

// lowerBound is max over the measured hosts J of |x_J - d(J, n)|, for
// node n.
func lowerBound(t *Tree, in []measuredNode, n int) float64 {
	lb := 0.0
	for _, j := range in {
		lb = math.Max(lb, math.Abs(j.half-t.nodeDistance(j.node, n)))
	}
	return lb
}

// measuredNode is a host of the tree that H measured: its node and half
// the best RTT.
type measuredNode struct {
	node int
	half float64
}

// measuredIn lists the hosts of t that H measured.
func (ad *Adder) measuredIn(t *Tree) []measuredNode {
	in := make([]measuredNode, 0, len(ad.Known))
	for j, v := range ad.Known {
		if x, ok := t.byRank.get(j); ok {
			in = append(in, measuredNode{x, v.Min / 2})
		}
	}
	return in
}

// Add inserts H into t (procedure add, seed 002 Fig. 5). first is the host
// to start from (a close host, Sect. 4), or -1 for any.
//
// Each step measures H against one more host B, computes from Eq. (1) where
// the path A-B branches towards H as an interval (from the min and max
// RTTs, Sect. 4) and either finds it strictly inside an edge — H hangs from
// a new switch there — or finds an existing switch X in the interval: H is
// then in neither X's branch towards A nor its branch towards B, whose
// hosts are pruned from the candidates. When no candidate remains, H hangs
// from X.
func (ad *Adder) Add(t *Tree, first int) error {
	if t.Has(ad.H) {
		return fmt.Errorf("infer: rank %d already in the tree", ad.H)
	}
	// The tree stays as it is until H hangs from it: its order from the
	// root and its subtrees' spans serve every step.
	cand := newCandidates(t)
	order := t.topDown()
	a := first
	if x, ok := t.byRank.get(a); a < 0 || !ok || !cand.alive[x] {
		a = ad.closestCandidate(t, cand, order)
	}
	cand.remove(t.byRank.at(a))
	ra, err := ad.measure(a, true)
	if err != nil {
		return err
	}
	if cand.n == 0 { // the tree is a single host: H hangs from it
		t.attach(t.byRank.at(a), ad.H, ra.Min/2)
		return nil
	}
	rel, abs := ad.noise()
	relTol := math.Max(ad.RelTol, ad.NoiseFactor*rel)
	// Two kinds of noise. Where it scales with the path (the simulator's
	// jitter, queues on long routes), the rounds' bests of a pair differ
	// by a fraction of a per cent and the tolerance is relative. Where
	// CPUs add it (a sleeping peer woken by an interrupt, a slow spell
	// while another process holds a core), the same microseconds fall on
	// every path and one round in ten misses the floor by several: the
	// rounds' bests spread by 10-20% on a 25 us path, and a tolerance
	// scaled from that swallows every switch of a real network. Beyond
	// AdditiveSpread the interval and the tolerance come from the second
	// best round, in absolute time (a branching point moves by a quarter
	// of an RTT error).
	additive := rel > AdditiveSpread
	upper := func(r RTT) float64 { return r.Max }
	if additive {
		upper = RTT.Upper
	}
	tolerance := func(dab float64, ra, rb RTT) float64 {
		if additive {
			return ad.Tol + ad.NoiseFactor*abs/4
		}
		return ad.Tol + relTol*math.Min(dab, math.Min(ra.Min, rb.Min)/2)
	}
	var x int // node H hangs from
	var in, out []int32
	for {
		b := ad.closestCandidate(t, cand, order)
		cand.remove(t.byRank.at(b))
		rb, err := ad.measure(b, true)
		if err != nil {
			return err
		}
		na, nb := t.byRank.at(a), t.byRank.at(b)
		path, steps := t.path(na, nb)
		dab := 0.0
		for _, s := range steps {
			dab += s
		}
		// Eq. (1) with RTTs: distance from A to the branching point, and
		// the switch its min/max interval (widened by the tolerance) holds.
		branch := func() (pos float64, sw, at, first, last int) {
			pos = clamp((2*dab+ra.Min-rb.Min)/4, 0, dab)
			lo := (2*dab + ra.Min - upper(rb)) / 4
			hi := (2*dab + upper(ra) - rb.Min) / 4
			tol := tolerance(dab, ra, rb)
			sw, at, _, _ = snap(t, path, steps, pos, lo-tol, hi+tol)
			if sw >= 0 {
				// Pruning goes by a wider interval than the choice of
				// X. The tree's own edges carry the errors of the
				// far measurements that placed them: a host hung
				// from a far host's branching point leaves a copy of
				// its switch microseconds off, and an interval that
				// misses that copy by less than its own width prunes
				// the copy's branch — the rest of the tree beyond
				// it — and H hangs in the wrong site. Widening costs
				// a measurement at most; a wrong prune costs the
				// placement.
				w := (hi - lo) / 2
				_, _, first, last = snap(t, path, steps, pos, lo-tol-w, hi+tol+w)
			}
			return
		}
		pos, sw, at, first, last := branch()
		for k := 0; sw < 0 && k < ad.Confirm; k++ {
			// A new switch is the decision noise fakes most (one minimum
			// still carrying a delay moves the branching point off an
			// existing switch): confirm it with more rounds on the same
			// two pairs.
			if ra, err = ad.remeasure(a); err != nil {
				return err
			}
			if rb, err = ad.remeasure(b); err != nil {
				return err
			}
			pos, sw, at, first, last = branch()
		}
		if sw < 0 {
			// A new branching point strictly inside edge path[at]-path[at+1].
			off := pos
			for i := 0; i < at; i++ {
				off -= steps[i]
			}
			x = t.splitEdge(path[at], path[at+1], off)
			t.attach(x, ad.H, ra.Min/2-pos)
			ad.refit(t, relTol, abs, additive)
			return nil
		}
		x = sw
		// Prune the branches of X towards A and towards B. When several
		// switches lie in the interval, the measurement cannot tell them
		// apart: prune only beyond the outermost ones (A's branch at the
		// one nearest A, B's at the one nearest B), so that the branches
		// hanging between them stay candidates.
		sa, sb := path[first], path[last]
		towardA, towardB := path[first-1], path[last+1]
		if in == nil {
			in, out = t.spans()
		}
		// Whether node n is in the branch of the tree minus node at
		// that holds at's neighbour nb (Tree.inBranch, by spans).
		inBranch := func(at, nb, n int) bool {
			if t.nodes[at].parent == nb {
				return !(in[at] <= in[n] && in[n] < out[at])
			}
			return in[nb] <= in[n] && in[n] < out[nb]
		}
		cand.keep(func(n int) bool { return !inBranch(sa, towardA, n) && !inBranch(sb, towardB, n) })
		// Keep whichever of A and B is closer to H (Sect. 4).
		if rb.Min < ra.Min {
			a, ra = b, rb
		}
		if cand.n == 0 {
			break
		}
	}
	t.attach(x, ad.H, ra.Min/2-t.nodeDistance(t.byRank.at(a), x))
	ad.refit(t, relTol, abs, additive)
	return nil
}

// refit checks H's place against every RTT H measured and, when one of
// them is off by more than noise explains, hangs H where they fit best
// (the placement Refine uses). Procedure add decides from two hosts at a
// time and trusts the tree between them; when that tree is wrong by more
// than the measurement's own error, the decision is too. On a 256-rank
// blind cluster (two-level-256, noise seed 1) a host's uplink had been
// hung from one socket's switch, 0.15 us off the point between its
// sockets; the next host, measuring both sockets at the same distance,
// branched at that point, inside the host, and hung 9.8 us out from it
// although it had measured hosts of its leaf switch at 10.1 us, which the
// tree then put 19.9 us away; every later host of that switch was placed
// from the wrong tree. Refitting puts it at the leaf switch, where all its
// measurements agree.
func (ad *Adder) refit(t *Tree, relTol, abs float64, additive bool) {
	if len(ad.Known) < 3 {
		return
	}
	off := false
	for j, r := range ad.Known {
		if r.Min <= 0 || !t.Has(j) {
			continue
		}
		m := r.Min / 2
		if math.Abs(t.Distance(ad.H, j)-m) > ad.Tol+math.Max(3*relTol*m, ad.NoiseFactor*abs/2) {
			off = true
			break
		}
	}
	if !off {
		return
	}
	peers := make(map[int]RTT, len(ad.Known))
	for j, r := range ad.Known {
		if r.Min > 0 && t.Has(j) {
			peers[j] = r
		}
	}
	if len(peers) < 3 {
		return
	}
	g := newAdjTree(t)
	if g.replace(ad.H, peers, !additive) {
		*t = *g.tree(t.nodes[0].rank)
		ad.Refitted++
	}
}

// candidates are the hosts of a tree that add may still take as B, by
// node id: alive marks them, nodes lists them (with some no longer
// alive until the next keep), n counts them.
type candidates struct {
	alive []bool
	nodes []int
	n     int
}

func newCandidates(t *Tree) *candidates {
	c := &candidates{alive: make([]bool, len(t.nodes)), nodes: t.rankNodes()}
	for _, x := range c.nodes {
		c.alive[x] = true
	}
	c.n = len(c.nodes)
	return c
}

func (c *candidates) remove(x int) {
	if c.alive[x] {
		c.alive[x] = false
		c.n--
	}
}

// keep drops the candidates for which ok is false.
func (c *candidates) keep(ok func(node int) bool) {
	kept := c.nodes[:0]
	for _, x := range c.nodes {
		if c.alive[x] && ok(x) {
			kept = append(kept, x)
		} else {
			c.remove(x)
		}
	}
	c.nodes = kept
}

// closestCandidate picks the candidate believed closest to H (Sect. 4):
// measured, or estimated through any measured host plus tree distance;
// ties go to the lower rank so runs are reproducible. order is t's
// nodes from the root (Tree.topDown).
func (ad *Adder) closestCandidate(t *Tree, cand *candidates, order []int) int {
	est := ad.estimates(t, order)
	// A measured host is at its own measurement, whatever other paths
	// estimate.
	for j, r := range ad.Known {
		if id, ok := t.byRank.get(j); ok {
			est[id] = r.Min / 2
		}
	}
	best, bestD, lowest := -1, math.Inf(1), -1
	for _, x := range cand.nodes {
		if !cand.alive[x] {
			continue
		}
		c, d := t.nodes[x].rank, est[x]
		if lowest < 0 || c < lowest {
			lowest = c
		}
		if d < bestD || d == bestD && best >= 0 && c < best {
			best, bestD = c, d
		}
	}
	if best < 0 { // no finite estimate: the lowest rank
		return lowest
	}
	return best
}

// estimates is, for every node of t, the best known upper bound of its
// one-way distance from H: min over measured hosts j of RTT(H,j)/2 +
// d(j, node). Two passes over the tree in order (leaves up, then root
// down) give it for all nodes at once.
func (ad *Adder) estimates(t *Tree, order []int) []float64 {
	n := len(t.nodes)
	// One buffer for every step: a fresh one per step was 0.9 GB of
	// garbage at 4,096 ranks.
	if cap(ad.est) < n {
		ad.est = make([]float64, n)
	}
	est := ad.est[:n]
	for i := range est {
		est[i] = math.Inf(1)
	}
	for j, r := range ad.Known {
		if id, ok := t.byRank.get(j); ok {
			est[id] = math.Min(est[id], r.Min/2)
		}
	}
	for i := n - 1; i > 0; i-- {
		v := order[i]
		p := t.nodes[v].parent
		est[p] = math.Min(est[p], est[v]+t.nodes[v].up)
	}
	for _, v := range order[1:] {
		p := t.nodes[v].parent
		est[v] = math.Min(est[v], est[p]+t.nodes[v].up)
	}
	return est
}

// snap looks for a switch on the path whose position lies within [lo, hi]
// and returns the one nearest to pos, with the path indices of the first
// and the last switch in the interval. Otherwise it returns -1 and the
// index of the edge that contains pos.
func snap(t *Tree, path []int, steps []float64, pos, lo, hi float64) (sw, edge, first, last int) {
	best, bestD := -1, math.Inf(1)
	first, last = -1, -1
	d := 0.0
	edge = len(steps) - 1
	for i := 0; i < len(path); i++ {
		if i > 0 {
			d += steps[i-1]
		}
		if i > 0 && i < len(path)-1 && t.nodes[path[i]].rank < 0 && d >= lo && d <= hi {
			if first < 0 {
				first = i
			}
			last = i
			if dd := math.Abs(d - pos); dd < bestD {
				best, bestD = path[i], dd
			}
		}
		if i < len(steps) && pos >= d && pos <= d+steps[i] && edge == len(steps)-1 {
			edge = i
		}
	}
	return best, edge, first, last
}

func clamp(v, lo, hi float64) float64 { return math.Min(math.Max(v, lo), hi) }
