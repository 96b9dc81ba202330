package report

import "testing"

// benchBuild builds the report of a 512-rank fixture (2 sites x 4 switches
// x 64 ranks, full RTT and bandwidth datasets).
func benchBuild(b *testing.B, svgOnly bool) {
	in := fixture{sites: 2, switches: 4, ranksPer: 64, noise: 0.05, seed: 1}.input()
	in.SVGOnly = svgOnly
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Build(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuild512 is the full report; BenchmarkBuild512SVGOnly its
// baseline without the PNG copies (the ratio is the rasterising cost).
func BenchmarkBuild512(b *testing.B)        { benchBuild(b, false) }
func BenchmarkBuild512SVGOnly(b *testing.B) { benchBuild(b, true) }

// BenchmarkDistanceBandwidth512 is the distance of a bandwidth-only
// dataset of 512 ranks (every pair measured): one pass over the pairs
// (it took a minute with a linear lookup per pair).
func BenchmarkDistanceBandwidth512(b *testing.B) {
	ds := fixture{sites: 2, switches: 4, ranksPer: 64, noise: 0.05, seed: 1}.dataset()
	ds.RTT = nil
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := DistanceFromDataset(ds, nil); err != nil {
			b.Fatal(err)
		}
	}
}
