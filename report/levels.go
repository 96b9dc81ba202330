package report

import (
	"netaware/dataset"
	"netaware/metrics"
	"netaware/topo"
)

// LevelStats is a level's statistics (metrics.LevelStatistics: the one
// definition, shared with the CLI's discover summary).
type LevelStats = metrics.LevelStats

type pairValue = metrics.PairValue

func levelStats(levels []topo.Level, n int, rtt, bw []pairValue) []LevelStats {
	return metrics.LevelStatistics(levels, n, rtt, bw)
}

func median(v []float64) float64 { return metrics.Median(v) }

// rttPairs lists the minimum RTT of every measured pair.
func rttPairs(ds *dataset.Dataset) []pairValue {
	if ds == nil || ds.RTT == nil {
		return nil
	}
	out := make([]pairValue, 0, len(ds.RTT.Pairs))
	for _, p := range ds.RTT.Pairs {
		out = append(out, pairValue{A: p.A, B: p.B, V: p.Result.MinS})
	}
	return out
}

// bandwidthPairs lists the bulk bandwidth of every measured pair, or, when
// no bulk bandwidth was measured, the Hockney fit's bandwidth.
func bandwidthPairs(ds *dataset.Dataset) []pairValue {
	if ds == nil {
		return nil
	}
	var out []pairValue
	if ds.Bandwidth != nil {
		for _, p := range ds.Bandwidth.Pairs {
			out = append(out, pairValue{A: p.A, B: p.B, V: p.Result.BandwidthBps})
		}
	}
	if len(out) == 0 && ds.Hockney != nil {
		for _, p := range ds.Hockney.Pairs {
			if p.Result.BandwidthBps > 0 {
				out = append(out, pairValue{A: p.A, B: p.B, V: p.Result.BandwidthBps})
			}
		}
	}
	return out
}
