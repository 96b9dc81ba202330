package report

import (
	"fmt"
	"math"
	"slices"

	"netaware/metrics"
	"netaware/platform"
	"netaware/probe"
	"netaware/topo"
)

// Accuracy is how the found topology compares with the platform's truth.
type Accuracy struct {
	Levels []metrics.LevelScore
	// Links is the shared-link query result (seed 002 Sect. 5): nil
	// without a tree, a platform, or four hosts.
	Links *metrics.LinkQueryResult
	// LinkEndpoints is the number of hosts queries were drawn from.
	LinkEndpoints int
	// Latency compares the tree's path latency with the measured one-way
	// latency (RTT/2) of every measured pair; nil without tree or RTTs.
	Latency *metrics.LatencySummary
	// LatencySampled is the number of measured pairs when Latency covers
	// an evenly spaced subset of them (0 when it covers all).
	LatencySampled int
	// TruthLatency compares the tree's path latency with the platform's
	// route latency for every host pair, measured or not: the measured
	// pairs alone hide a misplaced site, since the inference measured the
	// misplaced hosts against the ones they were placed by. Nil without a
	// platform.
	TruthLatency *metrics.LatencySummary
	// TruthLatencySampled is the number of host pairs when TruthLatency
	// covers an evenly spaced subset of them (0 when it covers all).
	TruthLatencySampled int
}

// maxRatioPairs bounds the pairs of the latency-ratio summary.
const maxRatioPairs = 100000

// linkQueries is the number of random shared-link queries (seed 002 asks
// thousands; 2000 keeps the report fast at 4096 ranks).
const linkQueries = 2000

// accuracy scores found against the truth (levels always; link queries and
// latency ratios when the pieces they need are there).
func accuracy(t *topo.Topology, truth []topo.Level, plat *platform.Platform, ds *probe.Dataset, seed uint64) (*Accuracy, error) {
	a := &Accuracy{}
	var err error
	if len(truth) > 0 {
		if a.Levels, err = metrics.Compare(t.Levels, truth); err != nil {
			return nil, fmt.Errorf("accuracy: %w", err)
		}
	}
	if t.Tree == nil {
		return a, nil
	}
	paths, err := t.Paths()
	if err != nil {
		return nil, fmt.Errorf("accuracy: tree paths: %w", err)
	}
	if plat != nil && plat.NumRanks() == t.Size {
		var ends []int
		for h := range plat.Hosts() {
			if rs := plat.HostRanks(h); len(rs) > 0 {
				ends = append(ends, rs[0])
			}
		}
		if len(ends) >= 4 {
			truthOracle := func(a, b, c, d int) (bool, error) {
				r1, r2 := plat.Route(a, b), plat.Route(c, d)
				for _, x := range r1.Forward {
					if slices.Contains(r2.Forward, x) {
						return true, nil
					}
				}
				return false, nil
			}
			res, err := metrics.SharedLinkQueries(ends, linkQueries, seed, paths.SharesLinkDirected, truthOracle)
			if err != nil {
				return nil, fmt.Errorf("accuracy: shared-link queries: %w", err)
			}
			a.Links, a.LinkEndpoints = &res, len(ends)
		}
		pairs := metrics.AllPairs(ends)
		if len(pairs) > maxRatioPairs {
			a.TruthLatencySampled = len(pairs)
			step := (len(pairs) + maxRatioPairs - 1) / maxRatioPairs
			var kept [][2]int
			for i := 0; i < len(pairs); i += step {
				kept = append(kept, pairs[i])
			}
			pairs = kept
		}
		if len(pairs) > 0 {
			_, sum, err := metrics.LatencyRatios(pairs, paths.PathLatency, func(a, b int) (float64, error) {
				return plat.Route(a, b).LatencyS, nil
			})
			if err != nil {
				return nil, fmt.Errorf("accuracy: latency against the platform: %w", err)
			}
			a.TruthLatency = &sum
		}
	}
	if ds != nil && ds.RTT != nil && len(ds.RTT.Pairs) > 0 && t.Size <= MaxMatrixRanks && ds.World.Size <= MaxMatrixRanks {
		best := ds.RTTMin()
		n := min(t.Size, len(best))
		measured := 0
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if !math.IsNaN(best[i][j]) {
					measured++
				}
			}
		}
		// Above maxRatioPairs an evenly spaced subset: the summary of
		// 100 000 ratios is as good as that of 8 million, at a fraction of
		// the time.
		step := 1
		if measured > maxRatioPairs {
			step = (measured + maxRatioPairs - 1) / maxRatioPairs
			a.LatencySampled = measured
		}
		var pairs [][2]int
		seen := 0
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if math.IsNaN(best[i][j]) {
					continue
				}
				if seen%step == 0 {
					pairs = append(pairs, [2]int{i, j})
				}
				seen++
			}
		}
		_, sum, err := metrics.LatencyRatios(pairs, paths.PathLatency, func(a, b int) (float64, error) {
			return best[a][b] / 2, nil
		})
		if err != nil {
			return nil, fmt.Errorf("accuracy: latency ratios: %w", err)
		}
		a.Latency = &sum
	}
	return a, nil
}
