//go:build mpi

package mpi

/*
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

// nw_cvar reads (write 0) or writes an integer control variable of the
// library by name through the tool interface (MPI_T, started on first use
// and ended by nw_tools_end). A boolean variable fills fewer bytes than an
// int: the value read starts at 0.
static int nw_tools_started;
static int nw_cvar(const char *name, int *v, int write) {
	int rc, idx, count;
	MPI_T_cvar_handle h;
	if (!nw_tools_started) {
		int provided;
		if ((rc = MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided)) != MPI_SUCCESS) return rc;
		nw_tools_started = 1;
	}
	if ((rc = MPI_T_cvar_get_index(name, &idx)) != MPI_SUCCESS) return rc;
	if ((rc = MPI_T_cvar_handle_alloc(idx, NULL, &h, &count)) != MPI_SUCCESS) return rc;
	if (write) {
		rc = MPI_T_cvar_write(h, v);
	} else {
		int x = 0;
		rc = MPI_T_cvar_read(h, &x);
		*v = x;
	}
	MPI_T_cvar_handle_free(&h);
	return rc;
}

static void nw_tools_end(void) {
	if (nw_tools_started) {
		MPI_T_finalize();
		nw_tools_started = 0;
	}
}

static int nw_dup(MPI_Comm c, MPI_Comm *out) { return MPI_Comm_dup(c, out); }
static int nw_free(MPI_Comm c) { return MPI_Comm_free(&c); }

static int nw_bcast(MPI_Comm c, uintptr_t b, int n, int root) {
	return MPI_Bcast((void *)b, n, MPI_BYTE, root, c);
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"netaware/comm"
)

var _ comm.LibraryBroadcaster = (*Comm)(nil)

// forcing serializes the writes of the library's global control variables
// and the communicator made while they hold.
var forcing sync.Mutex

// cvar reads or writes one of the library's integer control variables.
func cvar(name string, v *C.int, write bool) error {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	w := C.int(0)
	if write {
		w = 1
	}
	if !enter() {
		return comm.ErrClosed
	}
	rc := C.nw_cvar(cs, v, w)
	leave()
	if rc != C.MPI_SUCCESS {
		op := "reading"
		if write {
			op = "writing"
		}
		return fmt.Errorf("%s %s's control variable %s through MPI_T failed (code %d)", op, library, name, int(rc))
	}
	return nil
}

// LibraryName is Library(): the MPI implementation this build links.
func (c *Comm) LibraryName() string { return library }

// controlVar reads one of the library's integer control variables.
func controlVar(name string) (int, error) {
	var v C.int
	err := cvar(name, &v, false)
	return int(v), err
}

// LibraryBcast makes a duplicate of the communicator while Open MPI's
// coll/tuned forced-algorithm variables name the algorithm: coll/tuned
// reads them when a communicator is made, so the duplicate keeps the
// algorithm after the variables are put back. It needs coll/tuned's
// dynamic rules, which this package turns on before MPI_Init unless the
// environment says otherwise (OMPI_MCA_coll_tuned_use_dynamic_rules);
// without them Open MPI ignores forced algorithms.
func (c *Comm) LibraryBcast(alg, seg, fanout int) (func(buf []byte, root int) error, func(), error) {
	vars := bcastVars(alg, seg, fanout)
	if vars == nil {
		return nil, nil, fmt.Errorf("mpi: choosing MPI_Bcast's algorithm is implemented for Open MPI; this build links %s", library)
	}
	if alg < 0 || seg < 0 || fanout < 0 {
		return nil, nil, fmt.Errorf("mpi: broadcast algorithm %d, segment %d, fan-out %d: want values >= 0", alg, seg, fanout)
	}
	forcing.Lock()
	defer forcing.Unlock()
	on, err := controlVar(dynamicRulesVar)
	if err != nil {
		return nil, nil, err
	}
	if on == 0 {
		return nil, nil, fmt.Errorf("mpi: Open MPI's coll/tuned dynamic rules are off (OMPI_MCA_coll_tuned_use_dynamic_rules=%q): it ignores a chosen algorithm", os.Getenv(dynamicRulesEnv))
	}
	old := make([]C.int, len(vars))
	for i, v := range vars {
		if err := cvar(v.name, &old[i], false); err != nil {
			return nil, nil, err
		}
	}
	restore := func() {
		for i, v := range vars {
			_ = cvar(v.name, &old[i], true)
		}
	}
	for _, v := range vars {
		x := C.int(v.value)
		if err := cvar(v.name, &x, true); err != nil {
			restore()
			return nil, nil, err
		}
	}
	var dup C.MPI_Comm
	if !enter() {
		restore()
		return nil, nil, comm.ErrClosed
	}
	rc := C.nw_dup(c.user, &dup)
	leave()
	restore()
	if rc != C.MPI_SUCCESS {
		return nil, nil, fmt.Errorf("mpi: MPI_Comm_dup for a chosen broadcast: %w", mpiError(rc))
	}
	var once sync.Once
	free := func() {
		once.Do(func() {
			if enter() {
				C.nw_free(dup)
				leave()
			}
		})
	}
	bcast := func(buf []byte, root int) error {
		if root < 0 || root >= c.size {
			return fmt.Errorf("mpi: broadcast root %d out of range [0,%d)", root, c.size)
		}
		var p uintptr
		if len(buf) > 0 {
			var pin runtime.Pinner
			pin.Pin(&buf[0])
			defer pin.Unpin()
			p = uintptr(unsafe.Pointer(&buf[0]))
		}
		if !enter() {
			return comm.ErrClosed
		}
		rc := C.nw_bcast(dup, C.uintptr_t(p), C.int(len(buf)), C.int(root))
		leave()
		if rc != C.MPI_SUCCESS {
			return fmt.Errorf("mpi: MPI_Bcast: %w", mpiError(rc))
		}
		return nil
	}
	return bcast, free, nil
}

// forcedVar is one control variable and the value a forced broadcast
// gives it.
type forcedVar struct {
	name  string
	value int
}

// endTools ends MPI_T if LibraryBcast started it; Finalize calls it before
// MPI_Finalize.
func endTools() { C.nw_tools_end() }
