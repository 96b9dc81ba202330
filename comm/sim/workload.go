package sim

import (
	"context"

	"netaware/comm"
)

// BinomialBcast is MPICH's binomial-tree broadcast of buf from rank 0,
// written against comm.Comm: the reference workload of the simulator's
// benchmarks, of 'netaware sim stats' and of the SimGrid comparison, kept
// in one place so that all three time the same thing. (Package coll has
// the tuned collectives.)
func BinomialBcast(ctx context.Context, c comm.Comm, buf []byte) error {
	n, me := c.Size(), c.Rank()
	mask := 1
	for mask < n {
		if me&mask != 0 {
			if _, err := c.Recv(ctx, me-mask, 0, buf); err != nil {
				return err
			}
			break
		}
		mask <<= 1
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if me+mask < n {
			if err := c.Send(ctx, me+mask, 0, buf); err != nil {
				return err
			}
		}
	}
	return nil
}
