package sim

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"netaware/comm"
	"netaware/netsim"
	"netaware/platform"
)

// benchPlatform loads a built-in platform, or, while it is not there yet,
// a generated one of the same size (say which in the benchmark name).
func benchPlatform(b *testing.B, name string, ranks int) *platform.Platform {
	if p, err := platform.Load(name); err == nil {
		return p
	}
	return twoLevel(b, ranks)
}

// twoLevel is racks of 32 single-core hosts (1 Gbps) under one core switch
// (10 Gbps uplinks).
func twoLevel(tb testing.TB, ranks int) *platform.Platform {
	racks := (ranks + 31) / 32
	y := "version: 1\nname: racks\nswitches: [core"
	for r := 0; r < racks; r++ {
		y += fmt.Sprintf(", r%d", r)
	}
	y += "]\nlinks:\n"
	for r := 0; r < racks; r++ {
		y += fmt.Sprintf("  - {between: [r%d, core], bandwidth: 10Gbps, latency: 2us}\n", r)
	}
	y += "host_types:\n  one: {cores_per_socket: 1, overhead: {send: 1us, recv: 1us}}\nhosts:\n"
	for r := 0; r < racks; r++ {
		y += fmt.Sprintf("  - {names: \"n%d_[00-31]\", switch: r%d, type: one, link: {bandwidth: 1Gbps, latency: 20us}}\n", r, r)
	}
	p, err := platform.Parse("racks.yaml", []byte(y))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkBcast64MiB simulates a 64 MiB binomial broadcast over 512 ranks.
// All ranks share one buffer (the simulator skips a copy onto itself), so
// the figure is the simulator's cost, not memcpy's.
func BenchmarkBcast64MiB(b *testing.B) {
	p := benchPlatform(b, "dichev-n1", 512)
	buf := make([]byte, 64<<20)
	var res Result
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var err error
		res, err = Run(context.Background(), p, Options{}, func(ctx context.Context, c comm.Comm) error {
			return BinomialBcast(ctx, c, buf)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(p.NumRanks()), "ranks")
	b.ReportMetric(res.VirtualTime.Seconds(), "virtual-s")
	b.ReportMetric(float64(res.Events), "events")
}

// BenchmarkPairwiseExchange: every rank exchanges 1 MiB with rank xor k for
// k = 1..16 (a dense pattern: many concurrent flows per switch link).
func BenchmarkPairwiseExchange(b *testing.B) {
	p := twoLevel(b, 512)
	buf := make([]byte, 1<<20) // shared: the simulator skips copies onto itself
	var res Result
	for i := 0; i < b.N; i++ {
		var err error
		res, err = Run(context.Background(), p, Options{Weighting: netsim.RTTWeighted}, func(ctx context.Context, c comm.Comm) error {
			for k := 1; k <= 16; k++ {
				peer := c.Rank() ^ k
				if peer >= c.Size() {
					continue
				}
				if _, err := comm.Sendrecv(ctx, c, peer, k, buf, peer, k, buf); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.Events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(res.VirtualTime.Seconds(), "virtual-s")
}

// BenchmarkMemoryPerRank reports the heap and stacks held per simulated
// rank while all ranks are alive (each blocked in a receive), at two world
// sizes: the difference separates the per-rank constant from the part that
// grows with the world (comm.NewWorld's rank maps).
func BenchmarkMemoryPerRank(b *testing.B) {
	for _, n := range []int{1024, 4096} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchMemory(b, n) })
	}
}

func benchMemory(b *testing.B, n int) {
	p := twoLevel(b, n)
	var perRank float64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Run(context.Background(), p, Options{}, func(ctx context.Context, c comm.Comm) error {
			me := c.Rank()
			b8 := make([]byte, 8)
			if _, err := comm.Sendrecv(ctx, c, (me+1)%n, 0, b8, (me+n-1)%n, 0, b8); err != nil {
				return err
			}
			if me != n-1 {
				// Stay alive until the last rank has measured.
				_, err := c.Recv(ctx, n-1, 1, nil)
				return err
			}
			c.Spin(time.Millisecond)
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			perRank = float64(after.HeapInuse+after.StackInuse-before.HeapInuse-before.StackInuse) / float64(n)
			for r := 0; r < n-1; r++ {
				if err := c.Send(ctx, r, 1, nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(perRank, "B/rank")
}
