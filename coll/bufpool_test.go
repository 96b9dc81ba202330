package coll

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"

	"netaware/comm"
	"netaware/comm/local"
)

// TestReduceReusesBuffers: in steady state a Reduce makes no data buffer.
// Four ranks in one process (binomial tree: the root has two children,
// rank 2 one) reduce 1 MiB in 64 KiB segments, with a barrier between
// calls; 20 calls make at most the six buffers one call holds at once
// (made afresh, every call took six), and the result is right. The bytes the process allocates are
// logged: what remains is the local transport's copies of eager messages
// and its requests, which are not the reduction's. The garbage collector
// is off during the measurement so that sync.Pool keeps its buffers, as
// it does between collections in a real run.
func TestReduceReusesBuffers(t *testing.T) {
	const p, n, calls = 4, 1 << 20, 20
	s, err := Algorithm{Name: "binomial", SegSize: 64 << 10}.Build(p, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := local.NewWorld(p)
	sends := make([][]byte, p)
	for r := range sends {
		v := make([]float64, n/8)
		for i := range v {
			v[i] = float64(r*i%7) + 0.5
		}
		sends[r] = Float64Bytes(v)
	}
	recv := make([]byte, n)
	comms := make([]comm.Comm, p)
	for r := range comms {
		comms[r] = w.Comm(r)
	}
	run := func(k int) {
		errs := make([]error, p)
		var wg sync.WaitGroup
		for r := range p {
			wg.Go(func() {
				c := comms[r]
				for range k {
					if err := s.Reduce(context.Background(), c, sends[r], recv, SumFloat64); err != nil {
						errs[r] = err
						return
					}
					if err := comm.Barrier(context.Background(), c); err != nil {
						errs[r] = err
						return
					}
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
	// One P: sync.Pool keeps a per-P cache, which another P cannot take
	// from; with the ranks' goroutines on several Ps a buffer put back on
	// one is sometimes missed on another and a new one made.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	run(2)
	got := BytesFloat64(recv)
	for i := 0; i < n/8; i += 4099 {
		want := 0.0
		for r := range p {
			want += float64(r*i%7) + 0.5
		}
		if got[i] != want {
			t.Fatalf("element %d = %v, want %v", i, got[i], want)
		}
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	made := buffersMade.Load()
	run(calls)
	runtime.ReadMemStats(&after)
	t.Logf("%d bytes, %d objects allocated per Reduce (all %d ranks, transport included)",
		(after.TotalAlloc-before.TotalAlloc)/calls, (after.Mallocs-before.Mallocs)/calls, p)
	// One call holds six buffers at once (an accumulator on ranks 1-3, the
	// root's two operands, rank 2's one); the warm-up made some of them.
	// Made afresh, the calls would take 6 x 20.
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop buffers on purpose")
	}
	if k := buffersMade.Load() - made; k > 6 {
		t.Fatalf("%d buffers made in %d Reduce calls, want at most the 6 one call holds", k, calls)
	}
}
