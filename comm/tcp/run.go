package tcp

import (
	"context"
	"fmt"

	"netaware/comm"
)

// Run runs body once, as this process's rank of the TCP world env describes
// (Detect reads it from what a launcher set), beside sim.Run and local.Run:
// it joins, runs body on the world communicator, and says goodbye. When
// body fails, the rank is aborted before it leaves, so that the other ranks'
// pending and future calls fail with a *comm.RankError naming it instead of
// waiting for it; the error returned names the rank. Callers need no
// Endpoint and no Abort of their own.
func Run(ctx context.Context, env Env, opt Options, body func(ctx context.Context, c comm.Comm) error) error {
	ep, err := JoinWith(ctx, env, opt)
	if err != nil {
		return err
	}
	err = body(ctx, comm.NewWorld(ep))
	if err != nil {
		ep.Abort(err)
	}
	ep.Close()
	if err != nil {
		return fmt.Errorf("rank %d of %d: %w", env.Rank, env.Size, err)
	}
	return nil
}
