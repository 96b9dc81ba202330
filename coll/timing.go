package coll

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"netaware/comm"
)

var tagTiming = comm.SystemTag(219)

// BcastTimes times broadcasts of buf from root with each algorithm, reps
// rounds in which every algorithm runs once in turn (alternating, so that
// a drift of the machine's load hits all of them alike), a barrier before
// every broadcast. Rank 0 gets times[a][r]: the slowest rank's time of
// algorithm a in round r, in seconds on the ranks' clocks (virtual in the
// simulator); the other ranks get nil. Every rank passes the same
// arguments and a buffer of the same length.
func BcastTimes(ctx context.Context, c comm.Comm, root int, buf []byte, algs []Algorithm, reps int, opts ...Option) ([][]float64, error) {
	if reps < 1 {
		return nil, fmt.Errorf("coll bcast times: %d rounds, want >= 1", reps)
	}
	var times [][]float64
	if c.Rank() == 0 {
		times = make([][]float64, len(algs))
	}
	var b [8]byte
	for r := 0; r < reps; r++ {
		for i, a := range algs {
			if err := comm.Barrier(ctx, c); err != nil {
				return nil, err
			}
			t0 := c.Now()
			if err := Bcast(ctx, c, root, buf, a, opts...); err != nil {
				return nil, fmt.Errorf("%s, round %d: %w", a, r+1, err)
			}
			d := (c.Now() - t0).Seconds()
			if c.Rank() != 0 {
				binary.LittleEndian.PutUint64(b[:], math.Float64bits(d))
				if err := c.Send(ctx, 0, tagTiming, b[:]); err != nil {
					return nil, err
				}
				continue
			}
			for src := 1; src < c.Size(); src++ {
				if _, err := c.Recv(ctx, src, tagTiming, b[:]); err != nil {
					return nil, err
				}
				d = max(d, math.Float64frombits(binary.LittleEndian.Uint64(b[:])))
			}
			times[i] = append(times[i], d)
		}
	}
	return times, nil
}
