package main

import (
	"context"
	"fmt"

	"netaware/comm"
	"netaware/comm/tcp"
)

// runTCPWorld runs body once, as this process's rank of a TCP world, when
// a launcher (netaware launch, mpirun, srun, Hydra) started the process;
// ok is false when none did.
func runTCPWorld(ctx context.Context, wf *worldFlags, body func(ctx context.Context, c comm.Comm) error) (info worldInfo, ok bool, err error) {
	env, found := tcp.Detect()
	if !found {
		if wf.coordinator != "" {
			return worldInfo{}, true, usagef("--coordinator %s: this process has no rank: start it with 'netaware launch', mpirun or srun, or set %s and %s",
				wf.coordinator, tcp.EnvRank, tcp.EnvSize)
		}
		return worldInfo{}, false, nil
	}
	if wf.coordinator != "" {
		env.Coordinator = wf.coordinator
	}
	info = worldInfo{Kind: "tcp", Size: env.Size}
	c, closer, err := tcp.Join(ctx, env)
	if err != nil {
		return info, true, err
	}
	err = body(ctx, c)
	if err != nil {
		// Tell the other ranks this one failed, so that none of them waits
		// for it; they fail with an error naming this rank.
		if a, isAborter := closer.(interface{ Abort(error) }); isAborter {
			a.Abort(err)
		}
	}
	closer.Close()
	if err != nil {
		return info, true, fmt.Errorf("rank %d of %d: %w", env.Rank, env.Size, err)
	}
	return info, true, nil
}
