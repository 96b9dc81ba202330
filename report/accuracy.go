package report

import (
	"fmt"
	"math"

	"netaware/dataset"
	"netaware/metrics"
	"netaware/platform"
	"netaware/score"
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
func accuracy(t *topo.Topology, truth []topo.Level, plat *platform.Platform, ds *dataset.Dataset, seed uint64) (*Accuracy, error) {
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
		// The same queries as topo compare's same-direction row (package
		// score), with fewer of them.
		truth := score.FromPlatform(plat.Name, plat)
		if len(truth.Endpoints) >= 4 {
			res, err := metrics.SharedLinkQueries(truth.Endpoints, linkQueries, seed, paths.SharesLinkDirected, truth.SharesDir)
			if err != nil {
				return nil, fmt.Errorf("accuracy: shared-link queries: %w", err)
			}
			a.Links, a.LinkEndpoints = &res, len(truth.Endpoints)
		}
		pairs := metrics.AllPairs(truth.Endpoints)
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
			_, sum, err := metrics.LatencyRatios(pairs, paths.PathLatency, truth.Latency)
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
