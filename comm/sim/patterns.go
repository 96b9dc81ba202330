package sim

import (
	"context"

	"netaware/comm"
)

// Patterns are the communication patterns of Pattern, for measuring the
// simulator itself ('netaware sim stats').
var Patterns = []string{"bcast", "ring", "pairs"}

// Pattern returns the rank code of a named pattern, every rank using buf
// (the simulator skips copies onto the same memory, so large sizes cost no
// memory per rank):
//
//	bcast  binomial-tree broadcast of buf from rank 0 (MPICH's algorithm)
//	ring   every rank sends buf to the next rank and receives from the
//	       previous one, at the same time
//	pairs  for k = 1, 2, 4, ...: every rank exchanges buf with rank XOR k
func Pattern(name string, buf []byte) (func(ctx context.Context, c comm.Comm) error, bool) {
	switch name {
	case "bcast":
		return func(ctx context.Context, c comm.Comm) error {
			return BinomialBcast(ctx, c, buf)
		}, true
	case "ring":
		return func(ctx context.Context, c comm.Comm) error {
			n, me := c.Size(), c.Rank()
			_, err := comm.Sendrecv(ctx, c, (me+1)%n, 0, buf, (me+n-1)%n, 0, buf)
			return err
		}, true
	case "pairs":
		return func(ctx context.Context, c comm.Comm) error {
			n, me := c.Size(), c.Rank()
			for k := 1; k < n; k <<= 1 {
				peer := me ^ k
				if peer >= n {
					continue
				}
				if _, err := comm.Sendrecv(ctx, c, peer, k, buf, peer, k, buf); err != nil {
					return err
				}
			}
			return nil
		}, true
	}
	return nil, false
}
