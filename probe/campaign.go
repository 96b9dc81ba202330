package probe

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"

	"netaware/comm"
)

// PairFunc runs one pair test on both ranks of p: the initiator (rank p.A)
// returns the encoded result, the responder (p.B) returns nil.
type PairFunc func(ctx context.Context, c comm.Comm, p Pair) ([]byte, error)

// CampaignOptions are rank 0's hooks into a campaign. Only rank 0 reads
// them; every rank must pass the same plan.
type CampaignOptions struct {
	// Sync says how the steps of a lane are ordered; every rank must pass
	// the same value. The zero value is SyncBarrier.
	Sync Sync
	// Done marks pairs (by index in plan.Pairs()) finished in an earlier,
	// interrupted run; they are skipped. Rank 0 broadcasts it.
	Done []bool
	// OnResult receives every new result on rank 0, in arrival order; the
	// caller stores it and checkpoints when it sees fit. An error aborts the
	// campaign.
	OnResult func(index int, p Pair, result []byte) error
	// OnProgress is called on rank 0 after every result with the pairs
	// finished (including Done ones) and the total. It must not block; the
	// probe package never reads the wall clock, so ETAs are the caller's.
	OnProgress func(done, total int)
}

// Sync is how a lane orders its steps.
type Sync string

const (
	// SyncBarrier is LGate's (seed 003 Fig. 3.2): a subset barrier of all
	// lane members before the lane and after every step.
	SyncBarrier Sync = "barrier"
	// SyncToken keeps the lane-start barrier but then passes a token: the
	// ranks of a step, once done, notify the first rank of the next step,
	// which releases its partners. Steps still run one after another, but
	// a step costs a few messages instead of a barrier over the whole lane,
	// which matters for serial campaigns on hundreds of ranks.
	SyncToken Sync = "token"
)

// ParseSync accepts "barrier" or "token".
func ParseSync(s string) (Sync, error) {
	switch Sync(s) {
	case SyncBarrier, SyncToken:
		return Sync(s), nil
	}
	return "", fmt.Errorf("sync %q: want barrier or token", s)
}

// RunCampaign walks plan on every rank of c and runs test on each pair the
// caller's rank belongs to, collecting results on rank 0. Initiators send
// their result to rank 0 as soon as a pair ends (non-blocking); rank 0
// drains arrivals between its own steps and, at the end, until it has them
// all, so checkpoints can be written while the campaign runs. In a phase
// whose lanes are single pairs, the results come to rank 0 along a
// binomial tree at the end of the phase instead (every rank takes part).
func RunCampaign(ctx context.Context, c comm.Comm, plan Plan, test PairFunc, opts CampaignOptions) error {
	pairs, err := checkedPairs(plan, c.Size())
	if err != nil {
		return err
	}
	done, err := bcastDone(ctx, c, opts.Done, len(pairs))
	if err != nil {
		return fmt.Errorf("campaign: sharing the resume state: %w", err)
	}
	me := c.Rank()
	col := &collector{c: c, opts: opts, total: len(pairs)}
	for _, d := range done {
		if d {
			col.finished++
		}
	}
	col.expected = len(pairs) - col.finished
	if me == 0 && opts.OnProgress != nil {
		opts.OnProgress(col.finished, col.total)
	}
	var sends []comm.Request
	var held []byte // results of this rank's pairs in a gathered phase
	gathered := false
	runPair := func(k int, p Pair) error {
		res, err := test(ctx, c, p)
		if err != nil {
			return fmt.Errorf("campaign pair %d-%d: %w", p.A, p.B, err)
		}
		if p.A == me {
			switch {
			case me == 0:
				return col.deliver(k, p, res)
			case gathered:
				held = appendResult(held, k, res)
			default:
				sends = append(sends, sendResult(c, k, res)...)
			}
		}
		return nil
	}
	idx := 0
	for pi, ph := range plan.Phases {
		// In a phase of many one-pair lanes (a parallel representative
		// plan) the pairs end together, and each initiator sending its
		// result to rank 0 at once put hundreds of flows on rank 0's link
		// while rank 0 measured over it: they crept at a share of its
		// NIC, slowed its own pair, and coupled every pair they crossed
		// into one component that the simulator re-solved at each event
		// (255M flow updates in the PLogP phase of a 4,096-rank
		// discovery, 4.4M without them). Those results go to rank 0 along
		// a binomial tree once the phase is over instead.
		gathered = len(ph.Lanes) > 1 && singlePairLanes(ph)
		for li, lane := range ph.Lanes {
			first := idx
			n := 0
			for _, st := range lane.Steps {
				n += len(st)
			}
			idx += n
			if !contains(lane.Members, me) || allDone(done[first:first+n]) {
				continue
			}
			if err := comm.SubsetBarrier(ctx, c, lane.Members); err != nil {
				return fmt.Errorf("campaign phase %d lane %d: %w", pi, li, err)
			}
			var err error
			if opts.Sync == SyncToken {
				err = runLaneToken(ctx, c, lane, first, done, runPair)
			} else {
				err = runLaneBarrier(ctx, c, lane, first, done, runPair, func() error {
					if me == 0 {
						return col.drain(ctx, pairs, false)
					}
					return nil
				})
			}
			if err != nil {
				return fmt.Errorf("campaign phase %d lane %d: %w", pi, li, err)
			}
			if me == 0 {
				if err := col.drain(ctx, pairs, false); err != nil {
					return err
				}
			}
		}
		if gathered {
			if err := col.gather(ctx, held, pairs); err != nil {
				return fmt.Errorf("campaign phase %d: %w", pi, err)
			}
			held = held[:0]
		}
	}
	if me == 0 {
		if err := col.drain(ctx, pairs, true); err != nil {
			return err
		}
	}
	if err := comm.Wait(ctx, sends...); err != nil {
		return fmt.Errorf("campaign: sending results to rank 0: %w", err)
	}
	return comm.Barrier(ctx, c)
}

// runLaneBarrier runs a lane's steps, each followed by a subset barrier of
// the lane (seed 003 Fig. 3.2); between steps rank 0 drains results.
func runLaneBarrier(ctx context.Context, c comm.Comm, lane Lane, first int, done []bool, run func(int, Pair) error, between func() error) error {
	me := c.Rank()
	k := first
	for _, st := range lane.Steps {
		if allDone(done[k : k+len(st)]) {
			k += len(st) // finished in an earlier run: every rank skips it
			continue
		}
		for _, p := range st {
			if !done[k] && (p.A == me || p.B == me) {
				if err := run(k, p); err != nil {
					return err
				}
			}
			k++
		}
		if err := comm.SubsetBarrier(ctx, c, lane.Members); err != nil {
			return err
		}
		if err := between(); err != nil {
			return err
		}
	}
	return nil
}

// tokenStep is a step with its unfinished pairs and their ranks.
type tokenStep struct {
	pairs  []Pair
	index  []int
	parts  []int // ranks of the pairs, ascending
	leader int
}

// tokenStepAt builds step s of a lane whose first pair has index k.
func tokenStepAt(st []Pair, k int, done []bool) tokenStep {
	var ts tokenStep
	for i, p := range st {
		if !done[k+i] {
			ts.pairs = append(ts.pairs, p)
			ts.index = append(ts.index, k+i)
			ts.parts = append(ts.parts, p.A, p.B)
		}
	}
	if len(ts.parts) > 0 {
		sort.Ints(ts.parts)
		ts.leader = ts.parts[0]
	}
	return ts
}

// runLaneToken runs a lane's steps in order with token passing: the ranks
// of step s tell the leader (lowest rank) of the next step with unfinished
// pairs that they are done; the leader then releases the other ranks of its
// step. Steps are built on the fly, so a rank's memory does not grow with
// the lane (a serial lane of 512 ranks has 130816 steps).
func runLaneToken(ctx context.Context, c comm.Comm, lane Lane, first int, done []bool, run func(int, Pair) error) error {
	me := c.Rank()
	var prev []int // ranks of the previous step with unfinished pairs
	k := first
	for si := 0; si < len(lane.Steps); si++ {
		ts := tokenStepAt(lane.Steps[si], k, done)
		k += len(lane.Steps[si])
		if len(ts.pairs) == 0 {
			continue
		}
		if contains(ts.parts, me) {
			if prev != nil {
				if me == ts.leader {
					for _, r := range prev {
						if r != me {
							if _, err := c.Recv(ctx, r, tagToken, nil); err != nil {
								return err
							}
						}
					}
					for _, r := range ts.parts {
						if r != me {
							if err := c.Send(ctx, r, tagGo, nil); err != nil {
								return err
							}
						}
					}
				} else if _, err := c.Recv(ctx, ts.leader, tagGo, nil); err != nil {
					return err
				}
			}
			for i, p := range ts.pairs {
				if p.A == me || p.B == me {
					if err := run(ts.index[i], p); err != nil {
						return err
					}
				}
			}
			// tell the next step's leader
			kk := k
			for sj := si + 1; sj < len(lane.Steps); sj++ {
				next := tokenStepAt(lane.Steps[sj], kk, done)
				kk += len(lane.Steps[sj])
				if len(next.pairs) == 0 {
					continue
				}
				if next.leader != me {
					if err := c.Send(ctx, next.leader, tagToken, nil); err != nil {
						return err
					}
				}
				break
			}
		}
		prev = ts.parts
	}
	return nil
}

func contains(rs []int, r int) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

func allDone(d []bool) bool {
	for _, x := range d {
		if !x {
			return false
		}
	}
	return true
}

// checked remembers validated shared plans (ScheduleSpec.SharedPlan) by
// their phase array, so that the ranks of one process (simulator, local
// world) validate and flatten a plan once.
var checked sync.Map // *Phase -> checkedPlan

type checkedPlan struct {
	size  int
	pairs []Pair
}

func checkedPairs(plan Plan, size int) ([]Pair, error) {
	var key *Phase
	if len(plan.Phases) > 0 && isShared(&plan.Phases[0]) {
		key = &plan.Phases[0]
		if v, ok := checked.Load(key); ok && v.(checkedPlan).size == size {
			return v.(checkedPlan).pairs, nil
		}
	}
	if err := plan.Validate(size); err != nil {
		return nil, err
	}
	pairs := plan.Pairs()
	if key != nil {
		checked.Store(key, checkedPlan{size, pairs})
	}
	return pairs, nil
}

// resultHeader is the size of a result's header: the pair's index and the
// result's length, 8 bytes each.
const resultHeader = 16

// appendResultHeader appends the header of result res of pair index.
func appendResultHeader(b []byte, index int, res []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(index))
	return binary.LittleEndian.AppendUint64(b, uint64(len(res)))
}

// parseResultHeader reads a result header that rank src sent, and checks
// that it names a pair src initiated and a plausible length.
func parseResultHeader(hdr []byte, src int, pairs []Pair) (index int, n uint64, ok bool) {
	i, n := binary.LittleEndian.Uint64(hdr), binary.LittleEndian.Uint64(hdr[8:])
	if i >= uint64(len(pairs)) || n > 1<<30 || pairs[i].A != src {
		return 0, 0, false
	}
	return int(i), n, true
}

// sendResult starts sending one result to rank 0: its header, then the
// body.
func sendResult(c comm.Comm, index int, res []byte) []comm.Request {
	return []comm.Request{c.Isend(0, tagResHdr, appendResultHeader(nil, index, res)), c.Isend(0, tagResBody, res)}
}

// singlePairLanes tells whether every lane of ph measures one pair.
func singlePairLanes(ph Phase) bool {
	for _, l := range ph.Lanes {
		if len(l.Steps) != 1 || len(l.Steps[0]) != 1 {
			return false
		}
	}
	return true
}

// appendResult appends a result record: its header, then the result.
func appendResult(b []byte, index int, res []byte) []byte {
	return append(appendResultHeader(b, index, res), res...)
}

// maxHeld bounds the results one rank holds in a gathered phase.
const maxHeld = 1 << 24

// gather brings every rank's held results (appendResult records) to rank
// 0 along a binomial tree, where they are delivered. Every rank of the
// campaign calls it at the end of each gathered phase.
func (col *collector) gather(ctx context.Context, held []byte, pairs []Pair) error {
	parts, err := comm.GatherBytesRoot(ctx, col.c, held, maxHeld)
	if err != nil {
		return fmt.Errorf("gathering results: %w", err)
	}
	for r, b := range parts {
		for len(b) > 0 {
			if len(b) < resultHeader {
				return fmt.Errorf("campaign: truncated result record from rank %d", r)
			}
			index, n, ok := parseResultHeader(b, r, pairs)
			b = b[resultHeader:]
			if !ok || n > uint64(len(b)) {
				return fmt.Errorf("campaign: bad result record from rank %d", r)
			}
			if err := col.deliver(index, pairs[index], b[:n]); err != nil {
				return err
			}
			b = b[n:]
		}
	}
	return nil
}

// collector receives results on rank 0.
type collector struct {
	c        comm.Comm
	opts     CampaignOptions
	total    int
	finished int
	expected int // results still to come (own ones included)
	hdr      []byte
	pending  comm.Request
}

func (col *collector) deliver(index int, p Pair, res []byte) error {
	col.expected--
	col.finished++
	if col.opts.OnResult != nil {
		if err := col.opts.OnResult(index, p, res); err != nil {
			return fmt.Errorf("campaign: storing result %d: %w", index, err)
		}
	}
	if col.opts.OnProgress != nil {
		col.opts.OnProgress(col.finished, col.total)
	}
	return nil
}

// drain takes every result that has arrived; with all it waits for the
// rest.
func (col *collector) drain(ctx context.Context, pairs []Pair, all bool) error {
	for col.expected > 0 {
		if col.pending == nil {
			col.hdr = make([]byte, resultHeader)
			col.pending = col.c.Irecv(comm.AnySource, tagResHdr, col.hdr)
		}
		var st comm.Status
		var err error
		if all {
			st, err = col.pending.Wait(ctx)
		} else {
			var ok bool
			ok, st, err = col.pending.Test()
			if !ok {
				return nil
			}
		}
		col.pending = nil
		if err != nil {
			return fmt.Errorf("campaign: receiving a result: %w", err)
		}
		index, n, ok := parseResultHeader(col.hdr, st.Source, pairs)
		if !ok {
			return fmt.Errorf("campaign: bad result header from rank %d", st.Source)
		}
		body := make([]byte, n)
		if _, err := col.c.Recv(ctx, st.Source, tagResBody, body); err != nil {
			return fmt.Errorf("campaign: receiving result of pair %d-%d: %w", pairs[index].A, pairs[index].B, err)
		}
		if err := col.deliver(index, pairs[index], body); err != nil {
			return err
		}
	}
	return nil
}

// bcastDone gives every rank rank 0's done set (a bitmap over the plan's
// pairs) along a binomial tree.
func bcastDone(ctx context.Context, c comm.Comm, done []bool, n int) ([]bool, error) {
	bits := make([]byte, (n+7)/8)
	if c.Rank() == 0 {
		if done != nil && len(done) != n {
			return nil, fmt.Errorf("done set has %d entries, plan has %d pairs", len(done), n)
		}
		for i, d := range done {
			if d {
				bits[i/8] |= 1 << (i % 8)
			}
		}
	}
	if err := bcast(ctx, c, bits); err != nil {
		return nil, err
	}
	out := make([]bool, n)
	for i := range out {
		out[i] = bits[i/8]&(1<<(i%8)) != 0
	}
	return out, nil
}

// bcast broadcasts b (same length on every rank) from rank 0 along a
// binomial tree.
func bcast(ctx context.Context, c comm.Comm, b []byte) error {
	n, me := c.Size(), c.Rank()
	mask := 1
	for mask < n {
		if me&mask != 0 {
			if _, err := c.Recv(ctx, me-mask, tagBcast, b); err != nil {
				return err
			}
			break
		}
		mask <<= 1
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if me+mask < n {
			if err := c.Send(ctx, me+mask, tagBcast, b); err != nil {
				return err
			}
		}
	}
	return nil
}
