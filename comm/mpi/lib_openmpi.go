//go:build mpi && !mpich

package mpi

// #cgo pkg-config: ompi-c
import "C"

import "os"

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

// Open MPI's coll/tuned switch for forced algorithms and rule files, read
// at MPI_Init only.
const (
	dynamicRulesVar = "coll_tuned_use_dynamic_rules"
	dynamicRulesEnv = "OMPI_MCA_coll_tuned_use_dynamic_rules"
)

// prepareEnv turns coll/tuned's dynamic rules on unless the environment
// sets them: LibraryBcast needs them, and without a forced algorithm or a
// rule file Open MPI then decides as it does without them (its fixed
// decision).
func prepareEnv() {
	if os.Getenv(dynamicRulesEnv) == "" {
		os.Setenv(dynamicRulesEnv, "1")
	}
}

// bcastVars are coll/tuned's forced-algorithm variables for MPI_Bcast
// (zero segment size and fan-outs: coll/tuned's defaults).
func bcastVars(alg, seg, fanout int) []forcedVar {
	vs := []forcedVar{{"coll_tuned_bcast_algorithm", alg}, {"coll_tuned_bcast_algorithm_segmentsize", seg}}
	if fanout > 0 {
		vs = append(vs, forcedVar{"coll_tuned_bcast_algorithm_tree_fanout", fanout}, forcedVar{"coll_tuned_bcast_algorithm_chain_fanout", fanout})
	}
	return vs
}
