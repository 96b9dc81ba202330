package model

import (
	"fmt"
	"math"
)

// Transfer is one message of a collective as the contention model sees it:
// Src sends Bytes to Dst as soon as every transfer listed in After has
// arrived (a rank forwards what it received, or sends up what its children
// sent it), plus the latency of the pair.
type Transfer struct {
	Src, Dst int
	Bytes    float64
	After    []int
}

// Timing is the predicted course of a set of transfers: StartS[i] when
// transfer i begins to move bytes (after its latency), EndS[i] when its last
// byte arrives, TimeS the last arrival, Steps the number of times the
// bandwidths were recomputed (Algorithm 2's steps, counting arrivals too).
type Timing struct {
	StartS, EndS []float64
	TimeS        float64
	Steps        int
}

// Schedule extends Algorithm 2 with transfers that start during the run: a
// transfer starts latency(src, dst) after the last of its After transfers
// has ended (at 0 without any), and moves its bytes at the rate Algorithm 1
// gives it among the transfers moving at that moment, recomputed whenever
// one starts or ends. With no After and no latency it is Times. latency may
// be nil (none). Dependencies must point to other transfers and form no
// cycle.
func (c *Contention) Schedule(ts []Transfer, latency func(i, j int) float64) (Timing, error) {
	flows := make([]Flow, len(ts))
	for i, t := range ts {
		flows[i] = Flow{Src: t.Src, Dst: t.Dst, Bytes: t.Bytes}
		for _, d := range t.After {
			if d < 0 || d >= len(ts) || d == i {
				return Timing{}, fmt.Errorf("contention schedule: transfer %d (%d->%d) waits for %d, not another transfer of %d", i, t.Src, t.Dst, d, len(ts))
			}
		}
	}
	if err := c.check(flows); err != nil {
		return Timing{}, err
	}
	if err := acyclic(ts); err != nil {
		return Timing{}, err
	}
	n := len(ts)
	tm := Timing{StartS: make([]float64, n), EndS: make([]float64, n)}
	waiting := make([]int, n) // After transfers not ended yet
	dependents := make([][]int, n)
	for i, t := range ts {
		waiting[i] = len(t.After)
		for _, d := range t.After {
			dependents[d] = append(dependents[d], i)
		}
	}
	left := make([]float64, n)
	const unscheduled = -1.0
	for i := range tm.StartS {
		tm.StartS[i] = unscheduled
		left[i] = ts[i].Bytes
	}
	lat := func(i int) float64 {
		if latency == nil {
			return 0
		}
		return math.Max(latency(ts[i].Src, ts[i].Dst), 0)
	}
	for i := range ts {
		if waiting[i] == 0 {
			tm.StartS[i] = lat(i)
		}
	}
	finished := make([]bool, n)
	done := 0
	now := 0.0
	var finish func(e int)
	finish = func(e int) {
		finished[e] = true
		done++
		tm.EndS[e] = now
		for _, k := range dependents[e] {
			if waiting[k]--; waiting[k] == 0 {
				tm.StartS[k] = now + lat(k)
			}
		}
	}
	for done < n {
		var active []int
		next := math.Inf(1)
		for e := range ts {
			if finished[e] || tm.StartS[e] == unscheduled {
				continue
			}
			if tm.StartS[e] <= now {
				if left[e] <= 0 {
					finish(e) // an empty message arrives after its latency
					continue
				}
				active = append(active, e)
			} else {
				next = math.Min(next, tm.StartS[e])
			}
		}
		if done == n {
			break
		}
		if len(active) == 0 && math.IsInf(next, 1) {
			// Zero-byte transfers finished above may have released
			// others: look again before giving up.
			released := false
			for e := range ts {
				if !finished[e] && tm.StartS[e] != unscheduled {
					released = true
				}
			}
			if !released {
				return Timing{}, fmt.Errorf("contention schedule: %d transfers never start", n-done)
			}
			continue
		}
		var beta []float64
		if len(active) > 0 {
			tm.Steps++
			beta = c.algorithm1(flows, active)
			for _, e := range active {
				next = math.Min(next, now+left[e]*beta[e])
			}
		}
		dt := next - now
		now = next
		for _, e := range active {
			left[e] -= dt / beta[e]
			if left[e] <= 1e-9*ts[e].Bytes {
				left[e] = 0
				finish(e)
			}
		}
	}
	for _, e := range tm.EndS {
		tm.TimeS = math.Max(tm.TimeS, e)
	}
	return tm, nil
}

// acyclic fails when the After lists form a cycle (Kahn's algorithm).
func acyclic(ts []Transfer) error {
	in := make([]int, len(ts))
	out := make([][]int, len(ts))
	for i, t := range ts {
		in[i] = len(t.After)
		for _, d := range t.After {
			out[d] = append(out[d], i)
		}
	}
	var queue []int
	for i, k := range in {
		if k == 0 {
			queue = append(queue, i)
		}
	}
	seen := 0
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		seen++
		for _, k := range out[e] {
			if in[k]--; in[k] == 0 {
				queue = append(queue, k)
			}
		}
	}
	if seen != len(ts) {
		return fmt.Errorf("contention schedule: the transfers' After lists form a cycle")
	}
	return nil
}

// subtreeBytes sums counts over every rank's subtree of t.
func subtreeBytes(t Tree, counts []float64) []float64 {
	sub := append([]float64(nil), counts...)
	order := t.bfs()
	for i := len(order) - 1; i >= 0; i-- {
		r := order[i]
		if p := t.Parent[r]; p >= 0 {
			sub[p] += sub[r]
		}
	}
	return sub
}

func checkCounts(what string, t Tree, counts []float64) error {
	if err := t.Check(); err != nil {
		return err
	}
	if len(counts) != len(t.Parent) {
		return fmt.Errorf("%s: %d counts for %d ranks", what, len(counts), len(t.Parent))
	}
	for r, c := range counts {
		if !(c >= 0) || math.IsInf(c, 0) {
			return fmt.Errorf("%s: rank %d count %g: want finite and >= 0", what, r, c)
		}
	}
	return nil
}

// Uniform is n counts of m bytes.
func Uniform(n int, m float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = m
	}
	return out
}

// DownTransfers are the transfers of a broadcast (carry nil: every edge
// carries m bytes) or a scatterv (carry: counts per rank; the edge into r
// carries the bytes of r's subtree, as coll's Scatterv lays them out) along
// the unsegmented tree t: the transfer into r waits for the one into r's
// parent. Transfer k goes into the k-th rank of t's breadth-first order
// after the root.
func DownTransfers(t Tree, m float64, counts []float64) ([]Transfer, error) {
	if counts == nil {
		if err := t.Check(); err != nil {
			return nil, err
		}
	} else if err := checkCounts("scatterv", t, counts); err != nil {
		return nil, err
	}
	var sub []float64
	if counts != nil {
		sub = subtreeBytes(t, counts)
	}
	into := make([]int, len(t.Parent))
	var ts []Transfer
	for _, r := range t.bfs() {
		for _, ch := range t.Children[r] {
			tr := Transfer{Src: r, Dst: ch, Bytes: m}
			if sub != nil {
				tr.Bytes = sub[ch]
			}
			if r != t.Root {
				tr.After = []int{into[r]}
			}
			into[ch] = len(ts)
			ts = append(ts, tr)
		}
	}
	return ts, nil
}

// UpTransfers are the transfers of a reduce (counts nil: every edge carries
// m bytes) or a gatherv (counts per rank: the edge out of r carries r's
// subtree) along the unsegmented tree t: the transfer out of r waits for
// every transfer into r. Transfer k leaves the k-th rank of t's
// breadth-first order after the root.
func UpTransfers(t Tree, m float64, counts []float64) ([]Transfer, error) {
	if counts == nil {
		if err := t.Check(); err != nil {
			return nil, err
		}
	} else if err := checkCounts("gatherv", t, counts); err != nil {
		return nil, err
	}
	var sub []float64
	if counts != nil {
		sub = subtreeBytes(t, counts)
	}
	out := make([]int, len(t.Parent))
	var ts []Transfer
	for _, r := range t.bfs() {
		if r == t.Root {
			continue
		}
		tr := Transfer{Src: r, Dst: t.Parent[r], Bytes: m}
		if sub != nil {
			tr.Bytes = sub[r]
		}
		out[r] = len(ts)
		ts = append(ts, tr)
	}
	for i := range ts {
		for _, ch := range t.Children[ts[i].Src] {
			ts[i].After = append(ts[i].After, out[ch])
		}
	}
	return ts, nil
}

// AlltoallvTransfers are the concurrent transfers of an alltoallv:
// counts[i][j] bytes from i to j, every one posted at once (coll.Alltoallv),
// as seed 001 Sect. 7.3 measures it. Empty blocks and the diagonal are
// left out.
func AlltoallvTransfers(counts [][]float64) ([]Transfer, error) {
	n := len(counts)
	var ts []Transfer
	for i, row := range counts {
		if len(row) != n {
			return nil, fmt.Errorf("alltoallv: row %d has %d counts, want %d", i, len(row), n)
		}
		for j, c := range row {
			if !(c >= 0) || math.IsInf(c, 0) {
				return nil, fmt.Errorf("alltoallv: count %d->%d is %g: want finite and >= 0", i, j, c)
			}
			if i != j && c > 0 {
				ts = append(ts, Transfer{Src: i, Dst: j, Bytes: c})
			}
		}
	}
	return ts, nil
}
