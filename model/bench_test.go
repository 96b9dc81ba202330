package model

import "testing"

// BenchmarkPredictBcastBinomial512 times the schedule-level prediction of
// a 512-rank binomial broadcast (unsegmented and in 64 segments) against
// the closed form of Eq. 2.2, reported as a ratio metric.
func BenchmarkPredictBcastBinomial512(b *testing.B) {
	h := HockneyModel{Hockney: Hockney{AlphaS: 50e-6, BetaSPerByte: 8e-9}}
	tr := binomialTree(512)
	seg := tr
	seg.SegBytes = 1 << 14
	var ratio float64
	for b.Loop() {
		p, err := PredictBcast(tr, 1<<20, h)
		if err != nil {
			b.Fatal(err)
		}
		ps, _ := PredictBcast(seg, 1<<20, h)
		ratio = ps.TimeS / p.TimeS
	}
	b.ReportMetric(ratio, "segmented/unsegmented")
}
