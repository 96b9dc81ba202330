package tune

import (
	"testing"

	"netaware/coll"
	"netaware/comm/sim"
)

// BenchmarkTunedVsOMPIFixed tunes the test platform and reports, as
// metrics, the speed-up of the tuned choice over Open MPI's fixed decision
// at 64 KiB and 1 MiB (simulated time; the ns/op is the tuner's wall time).
//
//	go test -run x -bench TunedVsOMPIFixed ./tune
func BenchmarkTunedVsOMPIFixed(b *testing.B) {
	p := tinyPlatform(b)
	tp := truthOf(p)
	algs, err := Candidates(p.NumRanks(), tp, CandidateOptions{SegSizes: []int{8192, 65536}})
	if err != nil {
		b.Fatal(err)
	}
	algs = append([]coll.Algorithm{Baseline}, algs...)
	cfg := BenchConfig{Topology: tp, Sizes: []int{65536, 1 << 20}, Reps: 3, Warmup: 1}
	var speed map[int]float64
	for b.Loop() {
		ms, err := simRun(p, sim.Options{}, cfg, algs)
		if err != nil {
			b.Fatal(err)
		}
		rep := &Report{Ranks: p.NumRanks(), Measurements: ms}
		if _, err := Decide(rep, tp, nil); err != nil {
			b.Fatal(err)
		}
		speed = map[int]float64{}
		for _, c := range rep.Choices {
			speed[c.Bytes] = c.Speedup
		}
	}
	b.ReportMetric(speed[65536], "speedup-64KiB")
	b.ReportMetric(speed[1<<20], "speedup-1MiB")
}
