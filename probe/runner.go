package probe

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"netaware/comm"
	"netaware/dataset"
)

// RTTTest, PLogPTest, HockneyTest and BandwidthTest adapt the pair probes to
// a campaign: the initiator measures and returns the JSON result, the
// responder serves.
func RTTTest(p dataset.RTTParams) PairFunc {
	return func(ctx context.Context, c comm.Comm, pr Pair) ([]byte, error) {
		if c.Rank() == pr.A {
			r, err := RTTInitiate(ctx, c, pr.B, p)
			if err != nil {
				return nil, err
			}
			return json.Marshal(r)
		}
		return nil, RTTRespond(ctx, c, pr.A, p)
	}
}

// PLogPTest: see RTTTest.
func PLogPTest(p dataset.PLogPParams) PairFunc {
	return func(ctx context.Context, c comm.Comm, pr Pair) ([]byte, error) {
		if c.Rank() == pr.A {
			r, err := PLogPPair(ctx, c, pr.B, p)
			if err != nil {
				return nil, err
			}
			return json.Marshal(r)
		}
		return nil, PLogPServe(ctx, c, pr.A)
	}
}

// HockneyTest: see RTTTest.
func HockneyTest(p dataset.HockneyParams) PairFunc {
	return func(ctx context.Context, c comm.Comm, pr Pair) ([]byte, error) {
		if c.Rank() == pr.A {
			r, err := HockneyPair(ctx, c, pr.B, p)
			if err != nil {
				return nil, err
			}
			return json.Marshal(r)
		}
		return nil, PLogPServe(ctx, c, pr.A)
	}
}

// BandwidthTest: see RTTTest.
func BandwidthTest(p dataset.BandwidthParams) PairFunc {
	return func(ctx context.Context, c comm.Comm, pr Pair) ([]byte, error) {
		if c.Rank() == pr.A {
			r, err := BandwidthPair(ctx, c, pr.B, p)
			if err != nil {
				return nil, err
			}
			return json.Marshal(r)
		}
		return nil, PLogPServe(ctx, c, pr.A)
	}
}

// Campaign is a pair campaign of one probe, as the CLI runs it: Kind is
// "rtt", "plogp", "hockney" or "bandwidth"; the matching parameter field is
// used.
type Campaign struct {
	Kind      string
	Schedule  dataset.ScheduleSpec
	RTT       dataset.RTTParams
	PLogP     dataset.PLogPParams
	Hockney   dataset.HockneyParams
	Bandwidth dataset.BandwidthParams
	// Resume keeps the finished pairs of the dataset's section (same
	// parameters and schedule required) and measures only the others.
	Resume bool
	// NoClockCorrection skips the clock-overhead measurement (Fig. 3.7).
	NoClockCorrection bool
	// Sync orders the steps of a lane (default SyncBarrier, LGate's).
	Sync Sync
}

// RunHooks are rank 0's callbacks.
type RunHooks struct {
	// Checkpoint is called after every new result and once at the end
	// (final = true) with the dataset holding every result so far; it
	// decides whether to write (e.g. every few seconds) and must write when
	// final is set.
	Checkpoint func(ds *dataset.Dataset, final bool) error
	// Progress: see CampaignOptions.OnProgress.
	Progress func(done, total int)
}

// Run runs the campaign on every rank of c. On rank 0, ds is the dataset to
// fill (an existing one when resuming; its World must describe c); other
// ranks pass nil. Rank 0 also records rank identities and clock overheads.
func (cp *Campaign) Run(ctx context.Context, c comm.Comm, ds *dataset.Dataset, hooks RunHooks) error {
	if c.Rank() == 0 && ds == nil {
		return fmt.Errorf("campaign %s: rank 0 needs a dataset", cp.Kind)
	}
	ids, err := comm.GatherIdentitiesRoot(ctx, c) // the dataset's, on rank 0
	if err != nil {
		return fmt.Errorf("campaign %s: %w", cp.Kind, err)
	}
	var clk time.Duration
	if !cp.NoClockCorrection {
		clk = ClockOverhead(c, 1000, 5)
	}
	clks, err := gatherFloat(ctx, c, clk.Seconds())
	if err != nil {
		return fmt.Errorf("campaign %s: clock overheads: %w", cp.Kind, err)
	}
	if c.Rank() == 0 {
		ds.Ranks, ds.ClockOverheadS = ids, clks
		ds.World.Size = c.Size()
	}
	plan, err := SharedPlanOf(cp.Schedule)
	if err != nil {
		return err
	}
	switch cp.Kind {
	case "rtt":
		p := cp.RTT.WithDefaults()
		stored := p
		stored.ClockOverheadS = 0
		p.ClockOverheadS = clk.Seconds()
		return runSection(ctx, c, plan, cp, ds, func(d *dataset.Dataset) **dataset.RTTSection { return &d.RTT }, stored, RTTTest(p), hooks)
	case "plogp":
		p := cp.PLogP.WithDefaults()
		if err := p.Validate(); err != nil {
			return err
		}
		stored := p
		stored.ClockOverheadS = 0
		p.ClockOverheadS = clk.Seconds()
		return runSection(ctx, c, plan, cp, ds, func(d *dataset.Dataset) **dataset.PLogPSection { return &d.PLogP }, stored, PLogPTest(p), hooks)
	case "hockney":
		p := cp.Hockney.WithDefaults()
		stored := p
		stored.ClockOverheadS = 0
		p.ClockOverheadS = clk.Seconds()
		return runSection(ctx, c, plan, cp, ds, func(d *dataset.Dataset) **dataset.HockneySection { return &d.Hockney }, stored, HockneyTest(p), hooks)
	case "bandwidth":
		p := cp.Bandwidth.WithDefaults()
		stored := p
		stored.ClockOverheadS = 0
		p.ClockOverheadS = clk.Seconds()
		return runSection(ctx, c, plan, cp, ds, func(d *dataset.Dataset) **dataset.BandwidthSection { return &d.Bandwidth }, stored, BandwidthTest(p), hooks)
	}
	return fmt.Errorf("campaign kind %q: want rtt, plogp, hockney or bandwidth", cp.Kind)
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// ResumeState returns which of plan's pairs sec already holds. It fails
// when sec was measured with other parameters or another schedule.
func ResumeState[P, R any](sec *dataset.Section[P, R], params P, spec dataset.ScheduleSpec, plan Plan) ([]bool, error) {
	pairs := plan.Pairs()
	done := make([]bool, len(pairs))
	if sec == nil {
		return done, nil
	}
	if !sameJSON(sec.Params, params) {
		return nil, fmt.Errorf("resume: the dataset was measured with other parameters")
	}
	if !sameJSON(sec.Schedule, spec) {
		return nil, fmt.Errorf("resume: the dataset was measured with another schedule")
	}
	index := make(map[Pair]int, len(pairs))
	for i, p := range pairs {
		index[p] = i
	}
	for _, p := range sec.Pairs {
		i, ok := index[Pair{p.A, p.B}]
		if !ok {
			return nil, fmt.Errorf("resume: pair %d-%d of the dataset is not in the schedule", p.A, p.B)
		}
		done[i] = true
	}
	return done, nil
}

func runSection[P, R any](ctx context.Context, c comm.Comm, plan Plan, cp *Campaign, ds *dataset.Dataset,
	field func(*dataset.Dataset) **dataset.Section[P, R], params P, test PairFunc, hooks RunHooks) error {
	opts := CampaignOptions{Sync: cp.Sync}
	var sec *dataset.Section[P, R]
	if c.Rank() == 0 {
		slot := field(ds)
		var done []bool
		var err error
		if cp.Resume && *slot != nil {
			done, err = ResumeState(*slot, params, cp.Schedule, plan)
			if err != nil {
				return err
			}
			sec = *slot
		} else {
			sec = &dataset.Section[P, R]{Params: params, Schedule: cp.Schedule}
			*slot = sec
		}
		sec.PairsTotal = len(plan.Pairs())
		sec.Runs++
		sec.Complete = false
		opts.Done = done
		opts.OnProgress = hooks.Progress
		opts.OnResult = func(_ int, p Pair, res []byte) error {
			var r R
			if err := json.Unmarshal(res, &r); err != nil {
				return fmt.Errorf("result of pair %d-%d: %w", p.A, p.B, err)
			}
			sec.Pairs = append(sec.Pairs, dataset.PairResult[R]{A: p.A, B: p.B, Result: r})
			if hooks.Checkpoint != nil {
				return hooks.Checkpoint(ds, false)
			}
			return nil
		}
	}
	start := c.Now()
	if err := RunCampaign(ctx, c, plan, test, opts); err != nil {
		return fmt.Errorf("campaign %s: %w", cp.Kind, err)
	}
	if c.Rank() == 0 {
		sec.ClockS += (c.Now() - start).Seconds()
		sec.Complete = len(sec.Pairs) == sec.PairsTotal
		if hooks.Checkpoint != nil {
			return hooks.Checkpoint(ds, true)
		}
	}
	return nil
}

// gatherFloat collects one float per rank on rank 0 (nil elsewhere),
// along a binomial tree: every rank sending to rank 0 at once put N flows
// on its link, which the simulator re-solved at each of their events
// (O(N^2): 16M flow updates at 4,096 ranks).
func gatherFloat(ctx context.Context, c comm.Comm, v float64) ([]float64, error) {
	b := binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))
	parts, err := comm.GatherBytesRoot(ctx, c, b, 8)
	if err != nil || c.Rank() != 0 {
		return nil, err
	}
	out := make([]float64, c.Size())
	for r, p := range parts {
		if len(p) != 8 {
			return nil, fmt.Errorf("clock overhead of rank %d: %d bytes", r, len(p))
		}
		out[r] = math.Float64frombits(binary.LittleEndian.Uint64(p))
	}
	return out, nil
}
