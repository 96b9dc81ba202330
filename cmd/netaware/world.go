package main

import (
	"context"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"netaware/comm"
	"netaware/comm/local"
	"netaware/comm/sim"
	"netaware/platform"
)

// worldFlags select the world a command runs on: a simulated platform, the
// live processes it was started in (netaware launch, mpirun, srun, a
// coordinator), or goroutines of this process.
type worldFlags struct {
	platform string
	noNoise  bool
	noise    string
	seed     int64
	local    int
	// coordinator overrides NETAWARE_COORDINATOR for ranks started by a
	// launcher (see world_tcp.go).
	coordinator string
	// cmd is the command the flags belong to (its --quiet and stderr
	// for the wait for ranks).
	cmd *cobra.Command
}

func addWorldFlags(cmd *cobra.Command) *worldFlags {
	wf := &worldFlags{cmd: cmd}
	f := cmd.Flags()
	f.StringVar(&wf.platform, "platform", "", "run on this simulated platform: a built-in name (see 'netaware platform list') or a platform.yaml file")
	f.BoolVar(&wf.noNoise, "no-noise", false, "simulator: switch the platform's noise off")
	f.StringVar(&wf.noise, "noise", "", "simulator: replace the platform's noise by a profile fitted to real networks: realistic (docs/noise.md)")
	f.Int64Var(&wf.seed, "seed", 0, "simulator: noise seed (0 = the platform's)")
	f.IntVar(&wf.local, "local", 0, "run N ranks as goroutines of this process (real clock, no network)")
	f.StringVar(&wf.coordinator, "coordinator", "", "TCP world: host:port where rank 0 listens and every rank registers (default $NETAWARE_COORDINATOR)")
	return wf
}

// oneRankPerProcess tells whether the world is a TCP world, where this
// process runs one rank (the simulator and --local run them all).
func (wf *worldFlags) oneRankPerProcess() bool { return wf.platform == "" && wf.local == 0 }

// worldInfo says what a command ran on, for its first line of output and
// for the dataset.
type worldInfo struct {
	Kind        string // "sim", "tcp", "mpi" or "local"
	Platform    string
	Library     string // the MPI library's version line (mpi only)
	Size        int
	VirtualTime time.Duration // simulator only
}

// runWorld runs body on every rank of the selected world. In the simulator
// and the local world all ranks run in this process; over TCP this process
// is one rank. Commands are written SPMD-style: rank 0 prints and writes.
func runWorld(ctx context.Context, wf *worldFlags, body func(ctx context.Context, c comm.Comm) error) (worldInfo, error) {
	switch {
	case wf.local < 0:
		return worldInfo{}, usagef("--local %d: want a number of ranks", wf.local)
	case wf.platform != "" && wf.local > 0:
		return worldInfo{}, usagef("--platform and --local are exclusive")
	case wf.local > 0:
		return worldInfo{Kind: "local", Size: wf.local}, local.Run(ctx, wf.local, body)
	case wf.platform != "":
		return runSimWorld(ctx, wf, body)
	}
	if info, ok, err := runMPIWorld(ctx, wf, body); ok {
		return info, err
	}
	if info, ok, err := runTCPWorld(ctx, wf, body); ok {
		return info, err
	}
	return worldInfo{}, usagef("no world: give --platform NAME|FILE (simulated) or --local N, or start under 'netaware launch'")
}

// runSimWorld runs body on every rank of the simulated platform, in virtual
// time, in this process.
func runSimWorld(ctx context.Context, wf *worldFlags, body func(ctx context.Context, c comm.Comm) error) (worldInfo, error) {
	p, err := platform.Load(wf.platform)
	if err != nil {
		return worldInfo{}, usagef("--platform: %v", err)
	}
	if _, err := platform.ParseNoiseProfile(wf.noise); err != nil {
		return worldInfo{}, usagef("--noise: %v", err)
	}
	if wf.noise != "" && wf.noNoise {
		return worldInfo{}, usagef("--noise and --no-noise are exclusive")
	}
	info := worldInfo{Kind: "sim", Platform: p.Name, Size: p.NumRanks()}
	res, err := simRun(ctx, p, sim.Options{NoNoise: wf.noNoise, Noise: wf.noise, Seed: wf.seed}, body)
	info.VirtualTime = res.VirtualTime
	return info, err
}

// simRun is sim.Run on one P. The simulator runs one rank at a time,
// handing control from goroutine to goroutine; with a second P every
// hand-off may wake another thread (a futex each way) and move the
// ranks' state between cores. On one P the same runs take the same wall
// time and less CPU: blind discovery of 4,096 ranks 65 s instead of 82 s
// (docs/scaling.md).
func simRun(ctx context.Context, p *platform.Platform, opts sim.Options, body func(ctx context.Context, c comm.Comm) error) (sim.Result, error) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	return sim.Run(ctx, p, opts, body)
}
