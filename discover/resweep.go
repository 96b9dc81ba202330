package discover

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"netaware/comm"
	"netaware/dataset"
	"netaware/infer"
	"netaware/infer/live"
	"netaware/probe"
)

// Sweeps (staged discovery on a real network). A pair's minimum round
// trip on kernel TCP over busy cores is lifted by whatever slow spell its
// measurement fell into: on netaware emu's two-nic-generations at load
// 20-27, 600 consecutive round trips of a pair have minima 3-15 us above
// the pair's floor in most pairs, while the switches are 2-3 us apart in
// round trip; the minimum over four recordings taken minutes apart puts
// every pair of one switch below every pair across (23.9-26.0 against
// 21.2-24.0 us). Spells last tens to hundreds of milliseconds, so the
// pairs are measured again in sweeps, each over every pair in a new random
// order, and each pair keeps its best: its rounds are spread over the
// whole phase instead of a few milliseconds.

// sweepMaxGroup is the largest bandwidth group whose every pair the
// sweeps measure: the profile distances (profile.go) need every pair,
// and C(16,2) = 120 pairs per sweep stay within a second or two.
// Larger groups have only their measured pairs swept.
const sweepMaxGroup = 16

// sweepCount is how many sweeps a relative spread of the rounds' bests
// calls for: one per infer.AdditiveSpread of spread (10-20% on netaware
// emu: 5-8 sweeps), 2 at least and 8 at most. On round trips recorded on
// two-nic-generations and replayed, 2, 4, 6 and 8 sweeps over every pair
// found the switches in 31, 39, 40 and 40 of 40 replays, none in 38 of 40
// (TestTwoNICGenerationsSwitchesFromSweptRecordings).
func sweepCount(spread float64) int {
	k := int(math.Ceil(spread / infer.AdditiveSpread))
	return min(max(k, 2), 8)
}

// sweepPairs lists, on rank 0, the pairs (member indices, a < b) the
// sweeps measure: every pair inside each group of at most sweepMaxGroup
// members, and every pair measured already.
func sweepPairs(groups [][]int, measured []live.Measurement) [][2]int {
	seen := map[[2]int]bool{}
	var out [][2]int
	add := func(a, b int) {
		k := [2]int{min(a, b), max(a, b)}
		if a != b && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, idx := range groups {
		if len(idx) > sweepMaxGroup {
			continue
		}
		for x, a := range idx {
			for _, b := range idx[x+1:] {
				add(a, b)
			}
		}
	}
	for _, m := range measured {
		add(m.A, m.B)
	}
	return out
}

// resweep measures pairs (member indices; rank 0's list counts, the other
// ranks pass nil) sweeps times over, each sweep in its own random order
// (seed), with the inference's pair protocol (rtt's rounds, exchanges and
// staleness), one pair at a time. Every rank of c calls it. Rank 0 gets
// the measurements in member indices, in the order they were taken; the
// others get nil.
func resweep(ctx context.Context, c comm.Comm, members []int, pairs [][2]int, sweeps int, rtt live.Params) ([]live.Measurement, error) {
	var flat []int
	if c.Rank() == 0 {
		rng := rand.New(rand.NewPCG(rtt.Seed, uint64(sweeps)))
		order := slices.Clone(pairs)
		for s := 0; s < sweeps; s++ {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for _, p := range order {
				flat = append(flat, members[p[0]], members[p[1]])
			}
		}
	}
	flat, err := shareInts(ctx, c, flat)
	if err != nil {
		return nil, fmt.Errorf("discover: sweep pairs: %w", err)
	}
	if len(flat) == 0 {
		return nil, nil
	}
	if len(flat)%2 != 0 {
		return nil, fmt.Errorf("discover: %d ranks in the sweep pairs", len(flat))
	}
	lane := probe.Lane{}
	in := map[int]bool{}
	for i := 0; i < len(flat); i += 2 {
		lane.Steps = append(lane.Steps, []probe.Pair{{A: flat[i], B: flat[i+1]}})
		for _, r := range flat[i : i+2] {
			if !in[r] {
				in[r] = true
				lane.Members = append(lane.Members, r)
			}
		}
	}
	slices.Sort(lane.Members)
	plan := probe.Plan{Phases: []probe.Phase{{Lanes: []probe.Lane{lane}}}}
	if err := plan.Validate(c.Size()); err != nil {
		return nil, fmt.Errorf("discover: sweeps: %w", err)
	}
	var out []live.Measurement
	opts := probe.CampaignOptions{Sync: probe.SyncToken}
	if c.Rank() == 0 {
		// Rank 0 alone: built on every rank, the index was O(N^2) in all
		// in the simulator (2.3 s of 106 at 4,096 ranks).
		index := make(map[int]int, len(members))
		for i, r := range members {
			index[r] = i
		}
		opts.OnResult = func(_ int, p probe.Pair, b []byte) error {
			var r dataset.RTTResult
			if err := json.Unmarshal(b, &r); err != nil {
				return fmt.Errorf("sweep %d-%d: %w", p.A, p.B, err)
			}
			m := live.Measurement{A: index[p.A], B: index[p.B], RTT: infer.RTT{Min: r.MinS, Max: r.MaxS}}
			if len(r.RoundsS) > 1 {
				bests := slices.Sorted(slices.Values(r.RoundsS))
				m.RTT.Next = bests[1]
			}
			out = append(out, m)
			return nil
		}
	}
	prm := dataset.RTTParams{Rounds: rtt.Rounds, MaxExchanges: rtt.MaxExchanges, Stale: rtt.Stale}
	if err := probe.RunCampaign(ctx, c, plan, probe.RTTTest(prm), opts); err != nil {
		return nil, fmt.Errorf("discover: sweeps: %w", err)
	}
	return out, nil
}

// unseenRounds bounds settleUnseen's rounds: a leaf moved by one round
// can face an unseen branch at its new switch.
const unseenRounds = 2

// settleUnseen measures the pairs infer.Unseen names in rank 0's refined
// tree (every rank of c calls it; c's ranks are the tree's) and refines
// the leaves of those pairs again, up to unseenRounds times. On
// racks-16x2x8-1gbe (blind, 2% jitter) it takes a few pairs per seed
// (docs/inference.md).
func settleUnseen(ctx context.Context, c comm.Comm, tree *live.Result, rtt live.Params) error {
	members := make([]int, c.Size())
	for i := range members {
		members[i] = i
	}
	for range unseenRounds {
		var pairs [][2]int
		if c.Rank() == 0 {
			pairs = infer.Unseen(tree.Tree, tree.Measured)
		}
		ms, err := resweep(ctx, c, members, pairs, 1, rtt)
		if err != nil {
			return err
		}
		if len(ms) > 0 {
			tree.Measured = append(tree.Measured, ms...)
			tree.Pairs += len(ms)
			var leaves []int
			for _, m := range ms {
				leaves = append(leaves, m.A, m.B)
			}
			tree.Tree, _ = infer.RefineLeaves(tree.Tree, tree.Measured, leaves)
		}
	}
	return nil
}
