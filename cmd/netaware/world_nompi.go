//go:build !mpi

package main

import (
	"context"

	"netaware/comm"
)

// Without -tags mpi there is no MPI world: a process started by mpirun or
// srun joins the TCP world (world_tcp.go).

func liveWorldKind(*worldFlags) string { return "tcp" }

// mpiLibrary names the MPI library the binary links ("": none).
func mpiLibrary() string { return "" }

func runMPIWorld(context.Context, *worldFlags, func(ctx context.Context, c comm.Comm) error) (worldInfo, bool, error) {
	return worldInfo{}, false, nil
}
