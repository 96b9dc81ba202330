package main

import (
	"context"
	"time"

	"netaware/comm"
	"netaware/comm/tcp"
	"netaware/topo"
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
	var opt tcp.Options
	pr := &progressReporter{quiet: true}
	if env.Rank == 0 && wf.cmd != nil {
		// Rank 0 shows who the world still waits for (a rank whose
		// launcher failed holds everyone up for BootstrapTimeout).
		pr = &progressReporter{w: wf.cmd.ErrOrStderr(), quiet: quietFlag(wf.cmd), start: time.Now(), desc: "waiting for ranks"}
		opt.Waiting = func(registered int, missing []int) {
			pr.describe("waiting for ranks " + topo.FormatRanks(missing))
			pr.update(registered, env.Size)
		}
	}
	err = tcp.Run(ctx, env, opt, func(ctx context.Context, c comm.Comm) error {
		pr.finish() // joined: the wait for ranks is over
		return body(ctx, c)
	})
	pr.finish()
	return info, true, err
}
