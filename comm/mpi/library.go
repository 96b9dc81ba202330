//go:build mpi

package mpi

/*
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The tool interface (MPI_T) is started on first use and ended by
// nw_tools_end.
static int nw_tools_started;
static int nw_tools_start(void) {
	int provided, rc;
	if (nw_tools_started) return MPI_SUCCESS;
	if ((rc = MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided)) != MPI_SUCCESS) return rc;
	nw_tools_started = 1;
	return MPI_SUCCESS;
}

// nw_cvar reads (write 0) or writes an integer control variable of the
// library by name. A boolean variable fills fewer bytes than an int: the
// value read starts at 0.
static int nw_cvar(const char *name, int *v, int write) {
	int rc, idx, count;
	MPI_T_cvar_handle h;
	if ((rc = nw_tools_start()) != MPI_SUCCESS) return rc;
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

// nw_cvar_enum finds the value of the item named item of the enumeration
// of control variable name (*found 0: no such item). A variable without
// an MPI_T enumeration sets *has_enum to 0 and copies its description
// into desc (dlen bytes) instead.
static int nw_cvar_enum(const char *name, const char *item, int *value, int *found, int *has_enum, char *desc, int dlen) {
	int rc, idx, verb, bind, scope, num, i;
	char vname[256], ename[256], iname[256];
	int vlen = sizeof vname, elen = sizeof ename;
	MPI_Datatype dt;
	MPI_T_enum en;
	*found = 0;
	*has_enum = 0;
	if ((rc = nw_tools_start()) != MPI_SUCCESS) return rc;
	if ((rc = MPI_T_cvar_get_index(name, &idx)) != MPI_SUCCESS) return rc;
	if ((rc = MPI_T_cvar_get_info(idx, vname, &vlen, &verb, &dt, &en, desc, &dlen, &bind, &scope)) != MPI_SUCCESS) return rc;
	if (en == MPI_T_ENUM_NULL) return MPI_SUCCESS;
	*has_enum = 1;
	if ((rc = MPI_T_enum_get_info(en, &num, ename, &elen)) != MPI_SUCCESS) return rc;
	for (i = 0; i < num; i++) {
		int v, ilen = sizeof iname;
		if ((rc = MPI_T_enum_get_item(en, i, &v, iname, &ilen)) != MPI_SUCCESS) return rc;
		if (strcmp(iname, item) == 0) {
			*value = v;
			*found = 1;
			return MPI_SUCCESS;
		}
	}
	return MPI_SUCCESS;
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
	"runtime"
	"slices"
	"strings"
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
		return toolError(op, name, rc)
	}
	return nil
}

// toolError is a failed MPI_T call on control variable name.
func toolError(op, name string, rc C.int) error {
	return fmt.Errorf("%s %s's control variable %s through MPI_T failed (code %d)", op, library, name, int(rc))
}

// LibraryName is Library(): the MPI implementation this build links.
func (c *Comm) LibraryName() string { return library }

// controlVar reads one of the library's integer control variables.
func controlVar(name string) (int, error) {
	var v C.int
	err := cvar(name, &v, false)
	return int(v), err
}

// choiceValue is the value of choice item of control variable name: the
// item's value in the variable's MPI_T enumeration, or, for a variable
// without one whose description lists its choices in the order of their
// values (MPICH 4.0 registers its algorithm choices so), item's position
// in order, once the description is seen to list order's names in that
// order.
func choiceValue(name, item string, order []string) (int, error) {
	cn, ci := C.CString(name), C.CString(item)
	defer C.free(unsafe.Pointer(cn))
	defer C.free(unsafe.Pointer(ci))
	var v, found, hasEnum C.int
	desc := make([]byte, 4096)
	if !enter() {
		return 0, comm.ErrClosed
	}
	rc := C.nw_cvar_enum(cn, ci, &v, &found, &hasEnum, (*C.char)(unsafe.Pointer(&desc[0])), C.int(len(desc)))
	leave()
	if rc != C.MPI_SUCCESS {
		return 0, toolError("reading", name, rc)
	}
	if hasEnum != 0 {
		if found == 0 {
			return 0, fmt.Errorf("%s's control variable %s has no value %q", library, name, item)
		}
		return int(v), nil
	}
	d := C.GoString((*C.char)(unsafe.Pointer(&desc[0])))
	at := 0
	for _, o := range order {
		i := strings.Index(d[at:], o+" ")
		if i < 0 {
			return 0, fmt.Errorf("%s's control variable %s does not list its choices as this build expects (%q missing or out of order in %q)", library, name, o, d)
		}
		at += i + len(o)
	}
	if i := slices.Index(order, item); i >= 0 {
		return i, nil
	}
	return 0, fmt.Errorf("%s's control variable %s has no value %q (it has %s)", library, name, item, strings.Join(order, ", "))
}

// LibraryBcast checks a and lets the library's forceBcast choose the
// algorithm (lib_openmpi.go, lib_mpich.go).
func (c *Comm) LibraryBcast(a comm.LibraryAlgorithm) (func(buf []byte, root int) error, func(), error) {
	if a.ID < 0 || a.SegBytes < 0 || a.FanOut < 0 {
		return nil, nil, fmt.Errorf("mpi: broadcast algorithm %d, segment %d, fan-out %d: want values >= 0", a.ID, a.SegBytes, a.FanOut)
	}
	forcing.Lock()
	defer forcing.Unlock()
	return forceBcast(c, a)
}

// setVars writes the forced variables and returns what puts the old
// values back (forcing held).
func setVars(vars []forcedVar) (restore func(), err error) {
	old := make([]C.int, len(vars))
	for i, v := range vars {
		if err := cvar(v.name, &old[i], false); err != nil {
			return nil, err
		}
	}
	restore = func() {
		for i, v := range vars {
			_ = cvar(v.name, &old[i], true)
		}
	}
	for _, v := range vars {
		x := C.int(v.value)
		if err := cvar(v.name, &x, true); err != nil {
			restore()
			return nil, err
		}
	}
	return restore, nil
}

// bcastOn is MPI_Bcast of bytes on communicator h, whose size is c's.
func (c *Comm) bcastOn(h C.MPI_Comm) func(buf []byte, root int) error {
	return func(buf []byte, root int) error {
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
		rc := C.nw_bcast(h, C.uintptr_t(p), C.int(len(buf)), C.int(root))
		leave()
		if rc != C.MPI_SUCCESS {
			return fmt.Errorf("mpi: MPI_Bcast: %w", mpiError(rc))
		}
		return nil
	}
}

// forceByDup makes a duplicate of c while vars hold (Open MPI's
// coll/tuned reads its forced-algorithm variables when a communicator is
// made, so the duplicate keeps the algorithm after they are put back;
// forcing held).
func forceByDup(c *Comm, vars []forcedVar) (func(buf []byte, root int) error, func(), error) {
	restore, err := setVars(vars)
	if err != nil {
		return nil, nil, err
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
	return c.bcastOn(dup), free, nil
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
