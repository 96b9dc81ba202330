//go:build mpi && !mpich

package mpi

// #cgo pkg-config: ompi-c
import "C"

// library is the MPI implementation this build links, and launcher the
// command that starts its ranks (the test re-executes itself under it).
const (
	library  = "openmpi"
	launcher = "mpirun.openmpi"
)

// launcherArgs are the arguments that start n ranks on this machine: as
// root Open MPI wants the two OMPI_ALLOW_RUN_AS_ROOT variables (launcherEnv)
// and more ranks than cores want --oversubscribe.
func launcherArgs(n int) []string {
	return []string{"--oversubscribe", "-n", itoa(n)}
}

var launcherEnv = []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"}
