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

// launcherEnv makes MPICH's busy-waiting ranks yield the core after every
// poll: the tests start more ranks than the machine has cores, and MPICH,
// unlike Open MPI, does not notice. Without it, one CI run (6 ranks under
// -race, 2 cores at load 15) went past the test's 4 minutes.
var launcherEnv = []string{"MPIR_CVAR_POLLS_BEFORE_YIELD=1"}

const (
	dynamicRulesVar = ""
	dynamicRulesEnv = ""
)

func prepareEnv() {}

// bcastVars: MPICH's broadcast is chosen by name (MPIR_CVAR_BCAST_INTRA_ALGORITHM),
// not implemented.
func bcastVars(alg, seg, fanout int) []forcedVar { return nil }
