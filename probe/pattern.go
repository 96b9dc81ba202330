package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"

	"netaware/comm"
	"netaware/dataset"
)

// linkSize is l's message size under p: its own when it has one (an
// irregular pattern such as an alltoallv, seed 001 Sect. 7.3), else the
// pattern's.
func linkSize(l dataset.Link, p dataset.PatternParams) int {
	if l.Bytes > 0 {
		return l.Bytes
	}
	return p.Bytes
}

// RandomPattern draws a pattern as seed 001 Sect. 7.1 does (|N| = the
// number of nodes, d draws per node, inclusion probability p, 0.5 in the
// seed), with a PCG generator seeded with seed. The same link may be drawn
// twice; it is then two concurrent messages between the same ranks.
func RandomPattern(g dataset.PatternGenerator) ([]dataset.Link, error) {
	if len(g.Nodes) < 2 {
		return nil, fmt.Errorf("random pattern: need at least two nodes, have %d", len(g.Nodes))
	}
	if g.D < 1 || !(g.P >= 0 && g.P <= 1) {
		return nil, fmt.Errorf("random pattern: d = %d, p = %g: want d >= 1, 0 <= p <= 1", g.D, g.P)
	}
	rng := rand.New(rand.NewPCG(g.Seed, g.Seed^0x5851f42d4c957f2d))
	var links []dataset.Link
	for i, src := range g.Nodes {
		for k := 0; k < g.D; k++ {
			j := rng.IntN(len(g.Nodes) - 1)
			if j >= i {
				j++
			}
			if rng.Float64() < g.P {
				links = append(links, dataset.Link{Src: src, Dst: g.Nodes[j]})
			}
		}
	}
	return links, nil
}

// RunPattern measures a concurrent pattern; every rank of c calls it with
// the same links. In each iteration every receiver pre-posts its receives,
// the participants synchronize (subset barrier), every sender starts all its
// sends at once, and each receiver records, per incoming link, the time from
// the barrier to the completion of that receive (seed 001 Fig. 2). A
// receiver with several incoming links times one of them per iteration, in
// turn (waiting for one receive also waits for those waited before it). It
// stops when every link has MinIter times and a 95% CI narrow enough, or
// after MaxIter iterations (at least twice the largest in-degree).
// Rank 0 returns the result; other ranks return nil.
func RunPattern(ctx context.Context, c comm.Comm, links []dataset.Link, p dataset.PatternParams) (*dataset.PatternResult, error) {
	p = p.WithDefaults()
	if p.Bytes > 1<<30 {
		return nil, fmt.Errorf("pattern: %d bytes is above 1 GiB", p.Bytes)
	}
	memberSet := map[int]bool{}
	for i, l := range links {
		if l.Src < 0 || l.Dst < 0 || l.Src >= c.Size() || l.Dst >= c.Size() || l.Src == l.Dst {
			return nil, fmt.Errorf("pattern link %d: %d->%d invalid on %d ranks", i, l.Src, l.Dst, c.Size())
		}
		if l.Bytes < 0 || l.Bytes > 1<<30 {
			return nil, fmt.Errorf("pattern link %d: %d->%d: %d bytes outside [0, 1 GiB]", i, l.Src, l.Dst, l.Bytes)
		}
		memberSet[l.Src], memberSet[l.Dst] = true, true
	}
	var members []int
	for r := range memberSet {
		members = append(members, r)
	}
	sort.Ints(members)
	me := c.Rank()
	var in, out []int // link indices
	for i, l := range links {
		if l.Dst == me {
			in = append(in, i)
		}
		if l.Src == me {
			out = append(out, i)
		}
	}
	times := map[int][]float64{}
	iters := 0
	converged := false
	if memberSet[me] {
		leader := members[0]
		sbuf, rbufs := patternBuffers(c, links, in, out, p)
		// Every link needs iterations in which its receive is waited
		// first (below): at least two each at the busiest receiver.
		maxIn := map[int]int{}
		for _, l := range links {
			maxIn[l.Dst]++
		}
		iterCap := p.MaxIter
		for _, k := range maxIn {
			iterCap = max(iterCap, 2*k)
		}
		for it := 0; it < iterCap; it++ {
			if len(sbuf) > 0 {
				sbuf[0] = byte(it) // a fresh message each iteration, as the seed does
			}
			recvs := make([]comm.Request, len(in))
			for k, li := range in {
				recvs[k] = c.Irecv(links[li].Src, tagPatData, rbufs[k])
			}
			if err := comm.SubsetBarrier(ctx, c, members); err != nil {
				return nil, fmt.Errorf("pattern iteration %d: %w", it, err)
			}
			t0 := c.Now()
			sends := make([]comm.Request, len(out))
			for k, li := range out {
				sends[k] = c.Isend(links[li].Dst, tagPatData, sbuf[:linkSize(links[li], p)])
			}
			// A wait returns when its receive and every receive waited
			// before it have completed, so only the first wait of an
			// iteration times its link alone; which link that is
			// rotates over the iterations.
			for j := range in {
				k := (it + j) % len(in)
				li := in[k]
				if _, err := recvs[k].Wait(ctx); err != nil {
					return nil, fmt.Errorf("pattern link %d->%d: %w", links[li].Src, me, err)
				}
				if j == 0 {
					times[li] = append(times[li], (c.Now() - t0).Seconds())
				}
			}
			if err := comm.Wait(ctx, sends...); err != nil {
				return nil, fmt.Errorf("pattern: sending from %d: %w", me, err)
			}
			iters = it + 1
			mine := true
			for _, li := range in {
				if len(times[li]) < p.MinIter {
					mine = false
					continue
				}
				s := Summarize(times[li])
				if CI95HalfWidth(times[li])*2 > p.CIWidth*s.Mean {
					mine = false
				}
			}
			stop, err := voteAll(ctx, c, members, leader, mine)
			if err != nil {
				return nil, fmt.Errorf("pattern iteration %d: %w", it, err)
			}
			if stop {
				converged = true
				break
			}
		}
	}
	return gatherPattern(ctx, c, links, in, times, iters, converged)
}

// patternBuffers returns the send buffer of a rank with outgoing links out
// and a receive buffer for each of its incoming links in. The pattern
// times messages and never reads them, so on a transport whose ranks share
// memory serially (the simulator, comm.SerialMemory) every buffer of every
// rank is a slice of the one scratch buffer of the process, sized for the
// pattern's largest message: a buffer per link made the memory of a
// simulated pattern grow with its links (112 MB for 15 links of 10 MiB).
// Elsewhere a rank holds one send buffer and one per incoming link, since
// receives in flight together may not share memory.
func patternBuffers(c comm.Comm, links []dataset.Link, in, out []int, p dataset.PatternParams) ([]byte, [][]byte) {
	rbufs := make([][]byte, len(in))
	if s, ok := c.(comm.SerialMemory); ok && s.SerialMemory() {
		// Sized once for every link of the pattern, so that no rank's
		// later request grows the scratch buffer and leaves another rank
		// holding the old one.
		largest := 0
		for _, l := range links {
			largest = max(largest, linkSize(l, p))
		}
		shared := comm.Scratch(c, largest)
		for k, li := range in {
			rbufs[k] = shared[:linkSize(links[li], p)]
		}
		return shared, rbufs
	}
	n := 0
	for _, li := range out {
		n = max(n, linkSize(links[li], p))
	}
	var sbuf []byte
	if n > 0 {
		sbuf = make([]byte, n)
	}
	for k, li := range in {
		rbufs[k] = make([]byte, linkSize(links[li], p))
	}
	return sbuf, rbufs
}

// voteAll returns true on every member when every member voted true.
func voteAll(ctx context.Context, c comm.Comm, members []int, leader int, mine bool) (bool, error) {
	b := []byte{0}
	if mine {
		b[0] = 1
	}
	if c.Rank() != leader {
		if err := c.Send(ctx, leader, tagPatVote, b); err != nil {
			return false, err
		}
		if _, err := c.Recv(ctx, leader, tagPatGo, b); err != nil {
			return false, err
		}
		return b[0] == 1, nil
	}
	all := mine
	v := []byte{0}
	for _, r := range members {
		if r == leader {
			continue
		}
		if _, err := c.Recv(ctx, r, tagPatVote, v); err != nil {
			return false, err
		}
		all = all && v[0] == 1
	}
	if all {
		b[0] = 1
	} else {
		b[0] = 0
	}
	for _, r := range members {
		if r != leader {
			if err := c.Send(ctx, r, tagPatGo, b); err != nil {
				return false, err
			}
		}
	}
	return all, nil
}

type linkStats struct {
	Link  int             `json:"link"`
	Times dataset.Summary `json:"times"`
	Half  float64         `json:"half"`
	Iters int             `json:"iters"`
	Conv  bool            `json:"conv"`
}

// gatherPattern brings every receiver's link statistics to rank 0.
func gatherPattern(ctx context.Context, c comm.Comm, links []dataset.Link, in []int, times map[int][]float64, iters int, conv bool) (*dataset.PatternResult, error) {
	var mine []linkStats
	for _, li := range in {
		mine = append(mine, linkStats{Link: li, Times: Summarize(times[li]), Half: CI95HalfWidth(times[li]), Iters: iters, Conv: conv})
	}
	receivers := map[int]bool{}
	for _, l := range links {
		receivers[l.Dst] = true
	}
	if c.Rank() != 0 {
		if receivers[c.Rank()] {
			b, err := json.Marshal(mine)
			if err != nil {
				return nil, err
			}
			if err := c.Send(ctx, 0, tagPatRes, b); err != nil {
				return nil, fmt.Errorf("pattern: results to rank 0: %w", err)
			}
		}
		return nil, nil
	}
	res := &dataset.PatternResult{Links: links, Times: make([]dataset.Summary, len(links)), CI95HalfS: make([]float64, len(links))}
	collect := func(ls []linkStats) error {
		for _, s := range ls {
			if s.Link < 0 || s.Link >= len(links) {
				return fmt.Errorf("pattern: bad link index %d", s.Link)
			}
			res.Times[s.Link] = s.Times
			res.CI95HalfS[s.Link] = s.Half
			res.Iterations, res.Converged = s.Iters, s.Conv
		}
		return nil
	}
	if err := collect(mine); err != nil {
		return nil, err
	}
	ranks := make([]int, 0, len(receivers))
	for r := range receivers {
		ranks = append(ranks, r)
	}
	sort.Ints(ranks)
	buf := make([]byte, 1<<20)
	for _, r := range ranks {
		if r == 0 {
			continue
		}
		st, err := c.Recv(ctx, r, tagPatRes, buf)
		if err != nil {
			return nil, fmt.Errorf("pattern: results from rank %d: %w", r, err)
		}
		var ls []linkStats
		if err := json.Unmarshal(buf[:st.Count], &ls); err != nil {
			return nil, fmt.Errorf("pattern: results from rank %d: %w", r, err)
		}
		if err := collect(ls); err != nil {
			return nil, err
		}
	}
	return res, nil
}
