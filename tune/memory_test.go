package tune

import (
	"runtime"
	"testing"

	"netaware/coll"
	"netaware/comm/sim"
	"netaware/platform"
)

// In the simulator every rank shares the process, so what each rank keeps
// per measurement is multiplied by the ranks: only rank 0 keeps the
// measurements. The live heap after 20 and after 140 measurements of a
// 64-rank world differs by less than the 64 x 120 measurements (2.9 MB
// measured) that every rank holding them added.
func TestRunKeepsMeasurementsOnRankZeroOnly(t *testing.T) {
	y, err := platform.TwoLevelCluster(4).YAML()
	if err != nil {
		t.Fatal(err)
	}
	p, err := platform.Parse("two-level-64.yaml", y)
	if err != nil {
		t.Fatal(err)
	}
	algs, err := Candidates(p.NumRanks(), nil, CandidateOptions{Names: []string{"binomial", "linear", "chain", "knomial"}})
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	var at20, at140 uint64
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	cfg := BenchConfig{Sizes: sizes, Reps: 1, Warmup: -1}
	cfg.Progress = func(done, total int, _ coll.Algorithm, _ int) {
		switch done {
		case 20:
			at20 = heap()
		case 140:
			at140 = heap()
		}
	}
	ms, err := simRun(p, sim.Options{NoNoise: true}, cfg, algs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 140 {
		t.Fatalf("%d measurements, want at least 140 (%d algorithms x %d sizes)", len(ms), len(algs), len(sizes))
	}
	grew := int64(at140) - int64(at20)
	t.Logf("%d algorithms, %d measurements; live heap %d B after 20, %d B after 140: %+d B", len(algs), len(ms), at20, at140, grew)
	if grew > 1<<20 {
		t.Errorf("live heap grew by %d B over 120 measurements of 64 ranks: want under 1 MiB", grew)
	}
}
