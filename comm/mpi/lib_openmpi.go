//go:build mpi && !mpich

package mpi

// #cgo pkg-config: ompi-c
import "C"

import (
	"fmt"
	"os"

	"netaware/comm"
)

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

// forceBcast runs coll/tuned's forced algorithm a.ID with a.SegBytes and
// a.FanOut on a duplicate of c. It needs coll/tuned's dynamic rules, which
// prepareEnv turns on before MPI_Init unless the environment says
// otherwise; without them Open MPI ignores forced algorithms.
func forceBcast(c *Comm, a comm.LibraryAlgorithm) (func(buf []byte, root int) error, func(), error) {
	if a.Name != "" {
		return nil, nil, fmt.Errorf("mpi: Open MPI's broadcast algorithms are chosen by coll/tuned id, not by name (%q)", a.Name)
	}
	on, err := controlVar(dynamicRulesVar)
	if err != nil {
		return nil, nil, err
	}
	if on == 0 {
		return nil, nil, fmt.Errorf("mpi: Open MPI's coll/tuned dynamic rules are off (%s=%q): it ignores a chosen algorithm", dynamicRulesEnv, os.Getenv(dynamicRulesEnv))
	}
	return forceByDup(c, bcastVars(a.ID, a.SegBytes, a.FanOut))
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
