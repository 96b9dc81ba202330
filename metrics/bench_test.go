package metrics

import (
	"math/rand/v2"
	"testing"
)

// benchPartitions: 1024 ranks in 128 true groups of 8; found is either all
// singletons or the truth with 2% of ranks moved to random groups.
func benchPartitions(moved bool) (found, truth []int) {
	rng := rand.New(rand.NewPCG(1, 1))
	n := 1024
	truth = make([]int, n)
	found = make([]int, n)
	for i := range truth {
		truth[i] = i / 8
		if moved {
			found[i] = truth[i]
			if rng.IntN(50) == 0 {
				found[i] = rng.IntN(128)
			}
		} else {
			found[i] = i
		}
	}
	return found, truth
}

// wholeAssignment is the baseline: one assignment problem over the whole
// contingency table, without splitting it into components.
func wholeAssignment(found, truth []int) int {
	c, _ := newContingency(found, truth)
	rows, cols := len(c.rows), len(c.cols)
	if rows <= cols {
		return maxAssignment(rows, cols, func(i, j int) int { return c.cells[[2]int{i, j}] })
	}
	return maxAssignment(cols, rows, func(i, j int) int { return c.cells[[2]int{j, i}] })
}

func benchAccuracy(b *testing.B, moved, whole bool) {
	found, truth := benchPartitions(moved)
	c, _ := newContingency(found, truth)
	want := c.bestMatching()
	if got := wholeAssignment(found, truth); got != want {
		b.Fatalf("component matching %d != whole matching %d", want, got)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if whole {
			wholeAssignment(found, truth)
		} else {
			c, _ := newContingency(found, truth)
			c.bestMatching()
		}
	}
}

func BenchmarkAccuracySingletonsComponents(b *testing.B) { benchAccuracy(b, false, false) }
func BenchmarkAccuracySingletonsWhole(b *testing.B)      { benchAccuracy(b, false, true) }
func BenchmarkAccuracyNearTruthComponents(b *testing.B)  { benchAccuracy(b, true, false) }
func BenchmarkAccuracyNearTruthWhole(b *testing.B)       { benchAccuracy(b, true, true) }

func BenchmarkNMI1024(b *testing.B) {
	found, truth := benchPartitions(true)
	for i := 0; i < b.N; i++ {
		NMI(found, truth)
	}
}

func BenchmarkARI1024(b *testing.B) {
	found, truth := benchPartitions(true)
	for i := 0; i < b.N; i++ {
		ARI(found, truth)
	}
}
