//go:build mpi && mpich

package mpi

// #cgo pkg-config: mpich
import "C"

import (
	"cmp"
	"errors"
	"fmt"
	"sync"

	"netaware/comm"
)

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

func prepareEnv() {}

// bcastAlgVar is MPICH's choice of broadcast algorithm, read at every
// MPI_Bcast, and bcastChoices its values in order (MPICH 4.0's
// src/mpi/coll/cvars.txt: the variable registers no MPI_T enumeration).
const bcastAlgVar = "MPIR_CVAR_BCAST_INTRA_ALGORITHM"

var bcastChoices = []string{"auto", "binomial", "nb", "smp", "scatter_recursive_doubling_allgather", "scatter_ring_allgather"}

// forced tells whether a chosen broadcast holds bcastAlgVar (forcing held
// to read or write it).
var forced bool

// forceBcast sets bcastAlgVar to a.Name until free: MPICH reads it at
// every call, so unlike Open MPI no communicator keeps the choice, and one
// chosen broadcast at a time can be in use. (With the ch4 device a
// composition of node-level algorithms may come first; ch3, which
// scripts/mpich-ch3.sh builds, runs the chosen MPIR algorithm.)
func forceBcast(c *Comm, a comm.LibraryAlgorithm) (func(buf []byte, root int) error, func(), error) {
	if a.ID != 0 || a.SegBytes != 0 || a.FanOut != 0 {
		return nil, nil, fmt.Errorf("mpi: MPICH's broadcast algorithms are chosen by name (%s), not by id, segment size or fan-out", bcastAlgVar)
	}
	if forced {
		return nil, nil, errors.New("mpi: another chosen MPICH broadcast is in use: free it first")
	}
	v, err := choiceValue(bcastAlgVar, cmp.Or(a.Name, "auto"), bcastChoices)
	if err != nil {
		return nil, nil, err
	}
	restore, err := setVars([]forcedVar{{bcastAlgVar, v}})
	if err != nil {
		return nil, nil, err
	}
	forced = true
	var once sync.Once
	free := func() {
		once.Do(func() {
			forcing.Lock()
			defer forcing.Unlock()
			restore()
			forced = false
		})
	}
	return c.bcastOn(c.user), free, nil
}
