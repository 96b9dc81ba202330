package netaware

import (
	"context"
	"errors"
	"fmt"

	"netaware/comm"
	"netaware/comm/local"
	"netaware/comm/sim"
	"netaware/comm/tcp"
	"netaware/platform"
)

// Program is the code every rank runs, SPMD style: each rank calls it with
// its own Comm, and the code decides from c.Rank() what to do. Its error
// fails the world: the other ranks' pending calls fail naming the rank.
type Program func(ctx context.Context, c *Comm) error

// SimOptions tune a simulated world (noise, seed, eager limit); the zero
// value simulates the platform as its file states.
type SimOptions = sim.Options

// SimResult says how long a simulated world ran, in virtual time.
type SimResult = sim.Result

// Simulate runs prog on every rank of a simulated platform, in virtual
// time, in this process: platformName is a built-in name (netaware
// platform list) or a platform.yaml file. Nothing is sent over a network
// and nothing reads the wall clock, so a run is repeatable bit for bit.
func Simulate(ctx context.Context, platformName string, opt SimOptions, prog Program) (SimResult, error) {
	p, err := platform.Load(platformName)
	if err != nil {
		return SimResult{}, err
	}
	return SimulatePlatform(ctx, p, opt, prog)
}

// SimulatePlatform is Simulate on a platform already loaded, e.g. with
// its ranks placed otherwise (platform.Platform.Place).
func SimulatePlatform(ctx context.Context, p *platform.Platform, opt SimOptions, prog Program) (SimResult, error) {
	return sim.Run(ctx, p, opt, wrap(prog))
}

// Goroutines runs prog on n ranks that are goroutines of this process
// (real clock, messages copied in memory).
func Goroutines(ctx context.Context, n int, prog Program) error {
	if n < 1 {
		return fmt.Errorf("goroutines: %d ranks, want at least 1", n)
	}
	return local.Run(ctx, n, wrap(prog))
}

// ErrNoLauncher is returned by JoinTCP in a process that no launcher
// started.
var ErrNoLauncher = errors.New("no TCP world: start the program with 'netaware launch', mpirun or srun, or set " + tcp.EnvRank + ", " + tcp.EnvSize + ", " + tcp.EnvCoordinator + " and " + tcp.EnvToken)

// JoinTCP runs prog as this process's rank of the TCP world a launcher
// started ('netaware launch -n 8 -- ./prog', mpirun, srun; the rank, size,
// coordinator and token come from the environment, see docs/runtime.md).
// If prog fails, this rank is aborted, so that the other ranks fail
// naming it instead of waiting for it.
func JoinTCP(ctx context.Context, prog Program) error {
	env, ok := tcp.Detect()
	if !ok {
		return ErrNoLauncher
	}
	return tcp.Run(ctx, env, tcp.Options{}, wrap(prog))
}

// LoopbackTCP runs prog on n ranks of a real TCP world over 127.0.0.1
// inside this process: the transport of JoinTCP without starting
// processes (tests, examples, trying a program out).
func LoopbackTCP(ctx context.Context, n int, prog Program) error {
	if n < 1 {
		return fmt.Errorf("loopback tcp: %d ranks, want at least 1", n)
	}
	return tcp.RunLoopback(ctx, n, tcp.Config{}, wrap(prog))
}

// An MPI world (comm/mpi, built with cgo where an MPI library is found)
// gets its one call here, beside JoinTCP, when that transport lands;
// meanwhile New wraps any comm.Comm, an MPI one included.

func wrap(prog Program) func(ctx context.Context, c comm.Comm) error {
	return func(ctx context.Context, c comm.Comm) error { return prog(ctx, New(c)) }
}
