//go:build mpi

package mpi

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"netaware/comm"
)

// TestPingPongBench compares comm/mpi's ping-pong with the same loop
// written in C against the same library, on 2 ranks of this machine: 1 byte
// and 1 MiB, rounds alternating between the two, medians of the per-round
// half round-trip times. A benchmark, not an assertion: opt in with
// NETAWARE_MPI_BENCH=1 (ROUNDS sets the rounds, default 9).
//
//	NETAWARE_MPI_BENCH=1 go test -tags mpi -run PingPongBench -v ./comm/mpi/
func TestPingPongBench(t *testing.T) {
	if Launched() {
		t.Skip("already under an MPI launcher")
	}
	if os.Getenv("NETAWARE_MPI_BENCH") == "" {
		t.Skip("benchmark: set NETAWARE_MPI_BENCH=1")
	}
	out, err := mpirun(t, 2, "^TestRankPingPong$", 10*time.Minute, "NETAWARE_MPI_BENCH=1")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "pingpong") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

func TestRankPingPong(t *testing.T) {
	requireMPI(t)
	if os.Getenv("NETAWARE_MPI_BENCH") == "" || world.Size() != 2 {
		t.Skip("run by TestPingPongBench")
	}
	rounds := 9
	if n, err := fmt.Sscan(os.Getenv("ROUNDS"), &rounds); n != 1 || err != nil || rounds < 1 {
		rounds = 9
	}
	ctx := context.Background()
	for _, size := range []int{1, 1 << 20} {
		iters := 2000
		if size > 1<<16 {
			iters = 40
		}
		b := make([]byte, size)
		goLoop := func() time.Duration {
			start := time.Now()
			for i := 0; i < iters; i++ {
				if world.Rank() == 0 {
					if err := world.Send(ctx, 1, 77, b); err != nil {
						t.Fatal(err)
					}
					if _, err := world.Recv(ctx, 1, 77, b); err != nil {
						t.Fatal(err)
					}
				} else {
					if _, err := world.Recv(ctx, 0, 77, b); err != nil {
						t.Fatal(err)
					}
					if err := world.Send(ctx, 0, 77, b); err != nil {
						t.Fatal(err)
					}
				}
			}
			return time.Since(start)
		}
		goLoop() // warm-up: connections, registration, page faults
		if _, err := world.rawPingPong(b, iters); err != nil {
			t.Fatal(err)
		}
		var g, c []float64
		for r := 0; r < rounds; r++ {
			if err := comm.Barrier(ctx, world); err != nil {
				t.Fatal(err)
			}
			g = append(g, goLoop().Seconds()/float64(2*iters))
			if err := comm.Barrier(ctx, world); err != nil {
				t.Fatal(err)
			}
			el, err := world.rawPingPong(b, iters)
			if err != nil {
				t.Fatal(err)
			}
			c = append(c, el.Seconds()/float64(2*iters))
		}
		slices.Sort(g)
		slices.Sort(c)
		mg, mc := g[len(g)/2], c[len(c)/2]
		if world.Rank() == 0 {
			fmt.Printf("pingpong %s size=%d iters=%d rounds=%d comm/mpi_half_rtt=%.3gs raw_mpi_half_rtt=%.3gs ratio=%.2f (comm/mpi %.3g B/s, raw %.3g B/s)\n",
				library, size, iters, rounds, mg, mc, mg/mc, float64(size)/mg, float64(size)/mc)
		}
	}
}
