//go:build mpi

package main

import (
	"context"
	"fmt"
	"os"

	"netaware/comm"
	"netaware/comm/mpi"
)

// mpiWorld tells whether this process runs its rank over MPI: the binary
// is built with -tags mpi, an MPI launcher (mpirun, mpiexec, srun) started
// it, and neither 'netaware launch' (which sets NETAWARE_RANK and no PMI)
// nor NETAWARE_MPI=off asks for the TCP world.
func mpiWorld(wf *worldFlags) bool {
	return mpi.Launched() && os.Getenv("NETAWARE_RANK") == "" && os.Getenv("NETAWARE_MPI") != "off" && wf.coordinator == ""
}

// mpiLibrary names the MPI library the binary links.
func mpiLibrary() string { return mpi.Library() }

// liveWorldKind is the dataset's world kind of a process started by a
// launcher.
func liveWorldKind(wf *worldFlags) string {
	if mpiWorld(wf) {
		return "mpi"
	}
	return "tcp"
}

// runMPIWorld runs body once, as this process's rank of the MPI world.
// A rank whose body fails ends the job (mpi.Abort: one line naming the
// rank, then MPI_Abort), since MPI offers no way to tell the other ranks
// and let them finish cleanly.
func runMPIWorld(ctx context.Context, wf *worldFlags, body func(ctx context.Context, c comm.Comm) error) (worldInfo, bool, error) {
	if !mpiWorld(wf) {
		return worldInfo{}, false, nil
	}
	c, err := mpi.Init()
	if err != nil {
		return worldInfo{Kind: "mpi"}, true, err
	}
	info := worldInfo{Kind: "mpi", Size: c.Size(), Library: mpi.Version()}
	if c.Rank() == 0 && wf.cmd != nil && !quietFlag(wf.cmd) {
		fmt.Fprintf(wf.cmd.ErrOrStderr(), "netaware: MPI world of %d ranks (%s; threads: %s)\n", c.Size(), mpi.Version(), mpi.ThreadLevel())
	}
	if err := body(ctx, c); err != nil {
		mpi.Abort(err)
	}
	if err := mpi.Finalize(); err != nil {
		return info, true, fmt.Errorf("rank %d of %d: %w", c.Rank(), c.Size(), err)
	}
	return info, true, nil
}
