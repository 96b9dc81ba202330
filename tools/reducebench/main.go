// Command reducebench times netaware's Reduce (float64 sum to rank 0) over
// the TCP transport, the counterpart of tools/mpibench/reducebench.c for
// Open MPI's MPI_Reduce. Start it with netaware launch:
//
//	netaware launch -n 8 -- go run ./tools/reducebench -bytes 1048576
//
// or, built: go build -o /tmp/nabench ./tools/reducebench &&
// netaware launch -n 8 -- /tmp/nabench -bytes 8388608 -reps 9.
//
// Every repetition starts after a barrier; its time is the slowest rank's
// (the maximum over ranks, reduced to rank 0), as collbench.c measures.
// The result is checked at the root. Rank 0 prints, like collbench:
//
//	rep 0 0.001234
//	result op=reduce bytes=1048576 ranks=8 reps=9 median_s=... min_s=... max_s=...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"netaware/coll"
	"netaware/comm"
	"netaware/comm/tcp"
)

func main() {
	bytes := flag.Int("bytes", 1<<20, "message size in bytes (a multiple of 8)")
	warmup := flag.Int("warmup", 2, "untimed repetitions")
	reps := flag.Int("reps", 9, "timed repetitions")
	alg := flag.String("alg", "binomial", "tree (a coll algorithm name)")
	seg := flag.Int("seg", 0, "segment size in bytes (0: the algorithm's default)")
	flag.Parse()
	if *bytes < 8 || *bytes%8 != 0 || *reps < 1 || *warmup < 0 {
		fmt.Fprintln(os.Stderr, "reducebench: -bytes must be a positive multiple of 8, -reps >= 1, -warmup >= 0")
		os.Exit(2)
	}
	env, ok := tcp.Detect()
	if !ok {
		fmt.Fprintln(os.Stderr, "reducebench: no rank: start it with netaware launch -n N -- reducebench ...")
		os.Exit(2)
	}
	ctx := context.Background()
	ep, err := tcp.JoinWith(ctx, env, tcp.Options{})
	if err == nil {
		err = run(ctx, comm.NewWorld(ep), coll.Algorithm{Name: *alg, SegSize: *seg}, *bytes, *warmup, *reps)
		if err != nil {
			ep.Abort(err)
		}
		ep.Close()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "reducebench: rank %d: %v\n", env.Rank, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c comm.Comm, alg coll.Algorithm, n, warmup, reps int) error {
	p, me := c.Size(), c.Rank()
	s, err := alg.Build(p, 0, nil)
	if err != nil {
		return err
	}
	small, err := coll.Binomial(p, 0)
	if err != nil {
		return err
	}
	v := make([]float64, n/8)
	for i := range v {
		v[i] = float64(me + 1)
	}
	send, recv := coll.Float64Bytes(v), make([]byte, n)
	want := float64(p * (p + 1) / 2)
	var times []float64
	for it := range warmup + reps {
		if err := comm.Barrier(ctx, c); err != nil {
			return err
		}
		t0 := time.Now()
		if err := s.Reduce(ctx, c, send, recv, coll.SumFloat64); err != nil {
			return err
		}
		t := coll.Float64Bytes([]float64{time.Since(t0).Seconds()})
		tmax := make([]byte, 8)
		if err := small.Reduce(ctx, c, t, tmax, coll.MaxFloat64); err != nil {
			return err
		}
		if me != 0 {
			continue
		}
		got := coll.BytesFloat64(recv)
		if got[0] != want || got[len(got)-1] != want {
			return fmt.Errorf("wrong result %v ... %v, want %v", got[0], got[len(got)-1], want)
		}
		if it >= warmup {
			x := coll.BytesFloat64(tmax)[0]
			times = append(times, x)
			fmt.Printf("rep %d %.6f\n", it-warmup, x)
		}
	}
	if me == 0 {
		slices.Sort(times)
		med := times[len(times)/2]
		if len(times)%2 == 0 {
			med = (times[len(times)/2-1] + med) / 2
		}
		fmt.Printf("result op=reduce bytes=%d ranks=%d reps=%d median_s=%.6f min_s=%.6f max_s=%.6f\n",
			n, p, reps, med, times[0], times[len(times)-1])
	}
	return nil
}
