package infer

import (
	"math/rand/v2"
	"testing"
)

// The index against a map, on ranks dense and sparse, in random order,
// with overwrites.
func TestRankIndexAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for c := 0; c < 50; c++ {
		var x rankIndex
		want := map[int]int{}
		if c%2 == 0 {
			x.reserve(rng.IntN(3000), rng.IntN(100))
		}
		for i := 0; i < 500; i++ {
			r := rng.IntN(2000)
			if i%50 == 0 {
				r = rng.IntN(1 << 30) // far beyond the entries: the map
			}
			id := rng.IntN(1 << 20)
			x.set(r, id)
			want[r] = id
			q := rng.IntN(2100)
			got, ok := x.get(q)
			w, wok := want[q]
			if ok != wok || got != w && ok || x.at(q) != w {
				t.Fatalf("case %d: get(%d) = %d, %v; at %d; want %d, %v", c, q, got, ok, x.at(q), w, wok)
			}
		}
		if x.len() != len(want) {
			t.Fatalf("case %d: len %d, want %d", c, x.len(), len(want))
		}
		seen := 0
		y := x.clone()
		y.each(func(r, id int) {
			if want[r] != id {
				t.Fatalf("case %d: each gave %d -> %d, want %d", c, r, id, want[r])
			}
			seen++
		})
		if seen != len(want) {
			t.Fatalf("case %d: each gave %d ranks, want %d", c, seen, len(want))
		}
	}
	if len((&rankIndex{}).dense) != 0 {
		t.Fatal("empty index holds a slice")
	}
	var far rankIndex
	far.set(1<<30, 1)
	if len(far.dense) != 0 {
		t.Fatalf("one rank at 2^30 grew the slice to %d", len(far.dense))
	}
}
