//go:build mpi && mpich

package mpi

// #cgo pkg-config: mpich
import "C"

// library is the MPI implementation this build links, and launcher the
// command that starts its ranks (the test re-executes itself under it).
const (
	library  = "mpich"
	launcher = "mpiexec.mpich"
)

// launcherArgs are the arguments that start n ranks on this machine.
func launcherArgs(n int) []string { return []string{"-n", itoa(n)} }

var launcherEnv []string
