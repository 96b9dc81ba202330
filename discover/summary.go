package discover

import "netaware/metrics"

// LevelLatencies is the one-way latency on the inferred tree inside the
// groups and between the groups of every level of the topology
// (metrics.LevelSplits, the definition the report's level table uses),
// over the clustered ranks. Above maxPairs pairs an evenly spaced subset
// is taken: the medians do not need the 8 million pairs of 4,096 ranks.
// Nil when no distance was inferred.
func (o *Outcome) LevelLatencies(maxPairs int) []metrics.Split {
	d, reps := o.Distance, o.Clustered
	if o.Topology == nil || d == nil || len(reps) < 2 || maxPairs < 1 {
		return nil
	}
	n := len(reps)
	step := max(1, (n*(n-1)/2+maxPairs-1)/maxPairs)
	var pairs []metrics.PairValue
	k := 0
	for i := range reps {
		for j := i + 1; j < n; j++ {
			if k++; (k-1)%step == 0 {
				pairs = append(pairs, metrics.PairValue{A: reps[i], B: reps[j], V: d.At(i, j)})
			}
		}
	}
	return metrics.LevelSplits(o.Topology.Levels, o.Topology.Size, pairs)
}
