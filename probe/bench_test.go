package probe

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/dataset"
	"netaware/platform"
	"netaware/topo"
)

// benchCampaign runs an all-pairs PLogP campaign up to 2 MiB on fram-like
// (noise off) with the given schedule and reports its virtual time.
func benchCampaign(b *testing.B, p *platform.Platform, spec dataset.ScheduleSpec, sync Sync) {
	params := dataset.PLogPParams{MaxBytes: 2 << 20, Reps: 1, SatStart: 10, SatMax: 20, SatMaxBytes: -1, MaxExtra: -2}
	for i := 0; i < b.N; i++ {
		plan, err := SharedPlanOf(spec)
		if err != nil {
			b.Fatal(err)
		}
		done := 0
		wall := time.Now()
		// RunCampaign directly: rank 0 receives every result but does not
		// keep 130816 of them in memory.
		res, err := sim.Run(context.Background(), p, sim.Options{NoNoise: true}, func(ctx context.Context, c comm.Comm) error {
			return RunCampaign(ctx, c, plan, PLogPTest(params), CampaignOptions{Sync: sync, OnProgress: func(d, n int) { done = d }})
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.VirtualTime.Seconds(), "virtual-s")
		b.ReportMetric(float64(done), "pairs")
		b.ReportMetric(float64(res.Messages), "messages")
		b.Logf("%s/%s: %d ranks, %d pairs, virtual %v, wall %v, %d messages", spec.Mode, sync, p.NumRanks(), done, res.VirtualTime, time.Since(wall), res.Messages)
	}
}

// BenchmarkLGateCampaignFramLike compares LGate's serial schedule with its
// hierarchical one (sockets, hosts, islands of the platform's ground truth)
// on fram-like. NETAWARE_BENCH_PER_HOST sets ranks per host (default 32:
// P = 512; smaller values give a quicker run of the same shape).
//
//	go test -run '^$' -bench LGateCampaignFramLike -benchtime 1x -timeout 2h ./probe
func BenchmarkLGateCampaignFramLike(b *testing.B) {
	p, ranks, levels, tree := framLikeTruth(b)
	var hostLevels []topo.Level // the truth without the islands and above
	for _, l := range levels {
		if l.Name == "socket" || l.Name == "host" {
			hostLevels = append(hostLevels, l)
		}
	}
	hostOnly, err := TreeFromLevels(hostLevels, ranks)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("serial", func(b *testing.B) { benchCampaign(b, p, dataset.ScheduleSpec{Mode: "serial", Ranks: ranks}, SyncToken) })
	b.Run("hierarchical-truth", func(b *testing.B) {
		benchCampaign(b, p, dataset.ScheduleSpec{Mode: "hierarchical", Ranks: ranks, Tree: tree, Join: dataset.JoinOne}, SyncToken)
	})
	b.Run("hierarchical-hosts", func(b *testing.B) {
		benchCampaign(b, p, dataset.ScheduleSpec{Mode: "hierarchical", Ranks: ranks, Tree: hostOnly, Join: dataset.JoinOne}, SyncToken)
	})
	b.Run("hierarchical-hosts-zip", func(b *testing.B) {
		benchCampaign(b, p, dataset.ScheduleSpec{Mode: "hierarchical", Ranks: ranks, Tree: hostOnly, Join: dataset.JoinZip}, SyncToken)
	})
}

// BenchmarkLGateCampaignModel predicts the campaign times of
// BenchmarkLGateCampaignFramLike from solo pair durations, for when the
// full P = 512 simulation is too long: every pair's duration is measured
// alone (noise off) for each pair class, a serial plan costs the sum over
// its pairs, and a hierarchical plan the sum over its phases of the
// longest lane. Validate it against the measured runs at small
// NETAWARE_BENCH_PER_HOST before trusting it at 32.
func BenchmarkLGateCampaignModel(b *testing.B) {
	p, ranks, _, tree := framLikeTruth(b)
	params := dataset.PLogPParams{MaxBytes: 2 << 20, Reps: 1, SatStart: 10, SatMax: 20, SatMaxBytes: -1, MaxExtra: -2}
	// pair classes by route: latency and bottleneck identify them
	type class struct{ lat, bw float64 }
	classOf := func(a, b int) class {
		r := p.Route(a, b)
		bw := 1e300
		for _, i := range r.Forward {
			bw = min(bw, p.Resources()[i].BandwidthBps)
		}
		return class{r.LatencyS, bw}
	}
	dur := map[class]float64{}
	bench := b
	duration := func(x, y int) float64 {
		c := classOf(x, y)
		if d, ok := dur[c]; ok {
			return d
		}
		var d time.Duration
		simPair(bench, p, sim.Options{NoNoise: true}, x, y, func(ctx context.Context, cm comm.Comm) error {
			if cm.Rank() == x {
				start := cm.Now()
				_, err := PLogPPair(ctx, cm, y, params)
				d = cm.Now() - start
				return err
			}
			return PLogPServe(ctx, cm, x)
		})
		dur[c] = d.Seconds()
		return dur[c]
	}
	n := len(ranks)
	cost := func(plan Plan) float64 {
		total := 0.0
		for _, ph := range plan.Phases {
			longest := 0.0
			for _, l := range ph.Lanes {
				t := 0.0
				for _, st := range l.Steps {
					step := 0.0
					for _, pr := range st {
						step = max(step, duration(pr.A, pr.B))
					}
					t += step
				}
				longest = max(longest, t)
			}
			total += longest
		}
		return total
	}
	for i := 0; i < b.N; i++ {
		s := cost(SerialPlan(ranks))
		h := cost(HierarchicalPlan(tree, dataset.JoinOne))
		b.ReportMetric(s, "serial-virtual-s")
		b.ReportMetric(h, "hier-virtual-s")
		b.Logf("P=%d: predicted serial %.4gs, hierarchical (truth, join one) %.4gs, ratio %.2fx; classes %v", n, s, h, s/h, dur)
	}
}

// framLikeTruth places NETAWARE_BENCH_PER_HOST ranks per host (default 32:
// P = 512) on fram-like and returns its ranks, its ground-truth levels and
// their group tree.
func framLikeTruth(b *testing.B) (*platform.Platform, []int, []topo.Level, *dataset.Group) {
	b.Helper()
	perHost := 32
	if v, err := strconv.Atoi(os.Getenv("NETAWARE_BENCH_PER_HOST")); err == nil && v > 0 {
		perHost = v
	}
	base, err := platform.Load("fram-like")
	if err != nil {
		b.Fatal(err)
	}
	p, err := base.Place(perHost, platform.OrderBlock)
	if err != nil {
		b.Fatal(err)
	}
	ranks := make([]int, p.NumRanks())
	for i := range ranks {
		ranks[i] = i
	}
	levels := p.TruthLevels()
	tree, err := TreeFromLevels(levels, ranks)
	if err != nil {
		b.Fatal(err)
	}
	return p, ranks, levels, tree
}
