//go:build mpi

package mpi

/*
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

// Open MPI's handles are pointers and its constants macros over extern
// objects, MPICH's are ints: cgo sees both through these functions.
static MPI_Comm nw_world(void) { return MPI_COMM_WORLD; }
static int nw_any_source(void) { return MPI_ANY_SOURCE; }
static int nw_any_tag(void) { return MPI_ANY_TAG; }
static int nw_thread_multiple(void) { return MPI_THREAD_MULTIPLE; }
static int nw_thread_serialized(void) { return MPI_THREAD_SERIALIZED; }
static int nw_err_truncate(void) { return MPI_ERR_TRUNCATE; }
static int nw_max_name(void) { return MPI_MAX_PROCESSOR_NAME; }
static int nw_max_version(void) { return MPI_MAX_LIBRARY_VERSION_STRING; }

static int nw_initialized(void) {
	int a = 0, b = 0;
	MPI_Initialized(&a);
	MPI_Finalized(&b);
	return a || b;
}

static int nw_init(int *provided) {
	return MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, provided);
}

static int nw_setup(MPI_Comm *user, MPI_Comm *sys, int *rank, int *size, int *tagub) {
	int rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rc != MPI_SUCCESS) return rc;
	if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, user)) != MPI_SUCCESS) return rc;
	if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, sys)) != MPI_SUCCESS) return rc;
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	int *ub = NULL, flag = 0;
	*tagub = 32767; // the least MPI guarantees
	if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag) == MPI_SUCCESS && flag && ub)
		*tagub = *ub;
	return MPI_SUCCESS;
}

// Buffers come as integers: they are pinned (runtime.Pinner) Go memory,
// which may lie inside an object that holds Go pointers too (a field of a
// struct), and cgo refuses such an object as a pointer argument although
// MPI only ever reads or writes the n bytes at b.
//
// Starting a request tests it at once, in the same call: an eager send
// and a receive of a message already there complete there, and the Go
// side then skips the bookkeeping of a pending request.

// nw_test tests one request; on completion (or an error, which completes
// it too) it reports the status's source, tag, byte count and whether the
// request was cancelled.
static int nw_test(MPI_Request *r, int *flag, int *src, int *tag, int *count, int *cancelled) {
	MPI_Status st;
	st.MPI_SOURCE = -1;
	st.MPI_TAG = -1;
	st.MPI_ERROR = MPI_SUCCESS;
	*flag = 0;
	int rc = MPI_Test(r, flag, &st);
	if (rc != MPI_SUCCESS)
		*flag = 1;
	if (*flag) {
		*src = st.MPI_SOURCE;
		*tag = st.MPI_TAG;
		*count = 0;
		*cancelled = 0;
		if (rc == MPI_SUCCESS) {
			MPI_Get_count(&st, MPI_BYTE, count);
			MPI_Test_cancelled(&st, cancelled);
		}
	}
	return rc;
}

// nw_isend and nw_irecv start a request and test it; rc is the start's
// result, *trc the test's.
static int nw_isend(uintptr_t bp, int n, int dst, int tag, MPI_Comm c, int sync, MPI_Request *r,
		int *flag, int *src, int *otag, int *count, int *cancelled, int *trc) {
	void *b = (void *)bp;
	int rc;
	*flag = 0;
	if (sync)
		rc = MPI_Issend(b, n, MPI_BYTE, dst, tag, c, r);
	else
		rc = MPI_Isend(b, n, MPI_BYTE, dst, tag, c, r);
	if (rc == MPI_SUCCESS)
		*trc = nw_test(r, flag, src, otag, count, cancelled);
	return rc;
}

static int nw_irecv(uintptr_t b, int n, int src, int tag, MPI_Comm c, MPI_Request *r,
		int *flag, int *osrc, int *otag, int *count, int *cancelled, int *trc) {
	*flag = 0;
	int rc = MPI_Irecv((void *)b, n, MPI_BYTE, src, tag, c, r);
	if (rc == MPI_SUCCESS)
		*trc = nw_test(r, flag, osrc, otag, count, cancelled);
	return rc;
}

static int nw_cancel(MPI_Request *r) { return MPI_Cancel(r); }

static int nw_create_group(MPI_Comm parent, int n, int *ranks, int tag, MPI_Comm *out) {
	MPI_Group pg, g;
	int rc = MPI_Comm_group(parent, &pg);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Group_incl(pg, n, ranks, &g);
	MPI_Group_free(&pg);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Comm_create_group(parent, g, tag, out);
	MPI_Group_free(&g);
	return rc;
}

static int nw_comm_free(MPI_Comm c) { return MPI_Comm_free(&c); }

static int nw_error_class(int code) {
	int c = code;
	MPI_Error_class(code, &c);
	return c;
}

static void nw_error_string(int code, char *buf, int max) {
	int len = 0;
	buf[0] = 0;
	if (MPI_Error_string(code, buf, &len) == MPI_SUCCESS && len >= 0 && len < max)
		buf[len] = 0;
}

static int nw_ibarrier(MPI_Comm c, MPI_Request *r) { return MPI_Ibarrier(c, r); }

static int nw_allgather_int(int v, int *out, MPI_Comm c) {
	return MPI_Allgather(&v, 1, MPI_INT, out, 1, MPI_INT, c);
}

static int nw_allgatherv(void *b, int n, void *out, int *counts, int *displs, MPI_Comm c) {
	return MPI_Allgatherv(b, n, MPI_BYTE, out, counts, displs, MPI_BYTE, c);
}

// nw_raw_pingpong is the baseline of the ping-pong benchmark: iters round
// trips of n bytes between ranks 0 and 1 of c with blocking MPI_Send and
// MPI_Recv, as an MPI program written in C does them.
static int nw_raw_pingpong(MPI_Comm c, int me, uintptr_t bp, int n, int iters, double *elapsed) {
	void *b = (void *)bp;
	int peer = 1 - me, rc = MPI_SUCCESS;
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters && rc == MPI_SUCCESS; i++) {
		if (me == 0) {
			rc = MPI_Send(b, n, MPI_BYTE, peer, 77, c);
			if (rc == MPI_SUCCESS)
				rc = MPI_Recv(b, n, MPI_BYTE, peer, 77, c, MPI_STATUS_IGNORE);
		} else {
			rc = MPI_Recv(b, n, MPI_BYTE, peer, 77, c, MPI_STATUS_IGNORE);
			if (rc == MPI_SUCCESS)
				rc = MPI_Send(b, n, MPI_BYTE, peer, 77, c);
		}
	}
	*elapsed = MPI_Wtime() - t0;
	return rc;
}

static int nw_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
static int nw_finalize(void) { return MPI_Finalize(); }
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"netaware/comm"
)

func itoa(n int) string { return strconv.Itoa(n) }

// Library names the MPI implementation this binary is linked with:
// "openmpi" or "mpich".
func Library() string { return library }

// state is the process's MPI session. Every MPI call holds lk: shared
// under MPI_THREAD_MULTIPLE (MPI serializes itself), exclusive under
// MPI_THREAD_SERIALIZED; Finalize takes it exclusively, so that no call
// (a cleanup freeing a communicator, a poll of a forgotten request) runs
// after MPI_Finalize.
var state struct {
	lk        sync.RWMutex
	serial    bool
	finalized bool

	once    sync.Once
	world   *Comm
	initErr error

	version string
	start   time.Time
	id      comm.Identity
	tagUB   int

	// pending holds every started request until it completes: its
	// Pinner must stay reachable while MPI holds the buffer, also when
	// the caller drops the request without waiting for it.
	pmu     sync.Mutex
	pending map[*request]struct{}

	// liveSubs counts sub-communicators not yet freed; Sub runs the
	// collector when it exceeds gcAt, which then moves 256 above it.
	liveSubs, gcAt atomic.Int64
}

func enter() bool {
	if state.serial {
		state.lk.Lock()
	} else {
		state.lk.RLock()
	}
	if state.finalized {
		leave()
		return false
	}
	return true
}

func leave() {
	if state.serial {
		state.lk.Unlock()
	} else {
		state.lk.RUnlock()
	}
}

// Launched tells whether this process looks started by an MPI launcher
// (Open MPI's mpirun, a PMI launcher such as Hydra's mpiexec, or srun),
// judged from the environment without initializing MPI.
func Launched() bool {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID"} {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}

// launchedSize is the world size the launcher announced, or 0.
func launchedSize() int {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"} {
		if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv(v))); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

// Init initializes MPI (once per process) and returns the world
// communicator. A process can initialize MPI once: after Finalize, Init
// fails.
func Init() (*Comm, error) {
	state.once.Do(func() { state.world, state.initErr = initWorld() })
	return state.world, state.initErr
}

func initWorld() (*Comm, error) {
	if C.nw_initialized() != 0 {
		return nil, errors.New("mpi: MPI was already initialized (or finalized) in this process")
	}
	// MPI_Init_thread may be called from any thread, but the thread
	// that calls it is MPI's main thread; lock it for the call.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prepareEnv()
	var provided C.int
	if rc := C.nw_init(&provided); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("mpi: MPI_Init_thread: %w", mpiError(rc))
	}
	if provided < C.nw_thread_serialized() {
		C.nw_abort(1)
		return nil, fmt.Errorf("mpi: %s grants thread level %d: netaware needs at least MPI_THREAD_SERIALIZED", library, int(provided))
	}
	state.serial = provided < C.nw_thread_multiple()
	state.start = time.Now()
	state.pending = map[*request]struct{}{}
	state.gcAt.Store(256)
	var user, sys C.MPI_Comm
	var rank, size, tagub C.int
	if rc := C.nw_setup(&user, &sys, &rank, &size, &tagub); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("mpi: setting up the world: %w", mpiError(rc))
	}
	state.tagUB = int(tagub)
	if n := launchedSize(); n > 0 && n != int(size) {
		// An Open MPI binary under MPICH's launcher (or the reverse)
		// starts N singletons of one rank each.
		C.nw_finalize()
		return nil, fmt.Errorf("mpi: the launcher started %d ranks but this %s world has %d: was this binary (built for %s) started by another MPI's launcher?", n, library, int(size), library)
	}
	name := make([]byte, int(C.nw_max_name())+1)
	var nlen C.int
	C.MPI_Get_processor_name((*C.char)(unsafe.Pointer(&name[0])), &nlen)
	ver := make([]byte, int(C.nw_max_version())+1)
	var vlen C.int
	C.MPI_Get_library_version((*C.char)(unsafe.Pointer(&ver[0])), &vlen)
	state.version = firstLine(string(ver[:max(0, min(int(vlen), len(ver)))]))
	state.id = comm.LocalIdentity(int(rank))
	if h := string(name[:max(0, min(int(nlen), len(name)))]); h != "" {
		state.id.Host = h
	}
	return &Comm{user: user, sys: sys, rank: int(rank), size: int(size), subs: map[uint64]int{}}, nil
}

func firstLine(s string) string {
	s = strings.TrimRight(s, "\x00")
	if i := strings.IndexAny(s, "\n\r"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(strings.Join(strings.Fields(s), " "))
}

// Version is the first line of MPI_Get_library_version ("" before Init).
func Version() string { return state.version }

// ThreadLevel says how goroutines share MPI: "multiple" (MPI serializes
// itself) or "serialized" (a process-wide lock around every call).
func ThreadLevel() string {
	if state.serial {
		return "serialized"
	}
	return "multiple"
}

// Finalize ends MPI in this process. Requests still pending are left to
// MPI (a receive is cancelled first), so a program that dropped an Isend
// of a peer that never received it does not hang here.
func Finalize() error {
	if state.world == nil {
		return nil
	}
	state.pmu.Lock()
	left := make([]*request, 0, len(state.pending))
	for r := range state.pending {
		left = append(left, r)
	}
	state.pmu.Unlock()
	for _, r := range left {
		r.mu.Lock()
		if !r.done && r.recv && enter() {
			C.nw_cancel(&r.req)
			leave()
		}
		r.mu.Unlock()
	}
	state.lk.Lock()
	defer state.lk.Unlock()
	if state.finalized {
		return nil
	}
	state.finalized = true
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	endTools()
	if rc := C.nw_finalize(); rc != C.MPI_SUCCESS {
		return fmt.Errorf("mpi: MPI_Finalize: %w", mpiError(rc))
	}
	return nil
}

// Abort ends the whole MPI job because this rank failed: it prints one
// line naming the rank and the error on stderr, then calls MPI_Abort,
// whose launcher stops every other rank (and says so itself). It does not
// return.
func Abort(err error) {
	rank, size := -1, 0
	if state.world != nil {
		rank, size = state.world.rank, state.world.size
	}
	fmt.Fprintf(os.Stderr, "netaware: rank %d of %d (MPI world, %s) failed: %v\n", rank, size, library, err)
	// MPICH's Hydra tears its output forwarding down on MPI_Abort, and
	// a line written just before is sometimes lost: give it a moment.
	time.Sleep(300 * time.Millisecond)
	C.nw_abort(1)
	os.Exit(1) // MPI_Abort returned: not initialized, or the library did not end us
}

// mpiError turns an MPI error code into an error; truncation wraps
// comm.ErrTruncate.
func mpiError(rc C.int) error {
	class := C.nw_error_class(rc)
	buf := make([]byte, int(C.nw_max_version())+1)
	C.nw_error_string(rc, (*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf)))
	msg := firstLine(string(buf[:max(0, strings.IndexByte(string(buf), 0))]))
	if msg == "" {
		msg = fmt.Sprintf("MPI error %d", int(rc))
	}
	if class == C.nw_err_truncate() {
		return fmt.Errorf("%w (%s)", comm.ErrTruncate, msg)
	}
	return errors.New(msg)
}

// Comm is a communicator: a pair of MPI communicators with the same group,
// one for user tags and one for comm's system tags.
type Comm struct {
	user, sys  C.MPI_Comm
	rank, size int

	mu   sync.Mutex
	subs map[uint64]int // hash of a Sub member list -> calls so far
}

var _ comm.Comm = (*Comm)(nil)

func (c *Comm) Rank() int { return c.rank }
func (c *Comm) Size() int { return c.size }

// Now is the time since Init on Go's monotonic clock.
func (c *Comm) Now() time.Duration { return time.Since(state.start) }

// Spin busy-waits for d without calling MPI.
func (c *Comm) Spin(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
	}
}

// Identity is the processor name MPI reports (MPI_Get_processor_name), and
// this process's pid, machine, core and socket (comm.LocalIdentity, read
// at Init).
func (c *Comm) Identity() comm.Identity {
	id := state.id
	id.Rank = c.rank
	return id
}

// route picks the MPI communicator and tag for a comm tag.
func (c *Comm) route(op string, tag int, recv bool) (C.MPI_Comm, C.int, error) {
	switch {
	case tag == comm.AnyTag && recv:
		return c.user, C.nw_any_tag(), nil
	case tag == comm.AnyTag:
		return c.user, 0, fmt.Errorf("%s: AnyTag is only valid in receives", op)
	case tag >= 0 && tag <= state.tagUB:
		return c.user, C.int(tag), nil
	case tag < 0 && -tag <= state.tagUB:
		return c.sys, C.int(-tag), nil
	}
	return c.user, 0, fmt.Errorf("%s: tag %d beyond %s's MPI_TAG_UB %d", op, tag, library, state.tagUB)
}

func (c *Comm) checkPeer(op string, peer int, any bool) error {
	if any && peer == comm.AnySource {
		return nil
	}
	if peer < 0 || peer >= c.size {
		return fmt.Errorf("%s: rank %d out of range [0,%d)", op, peer, c.size)
	}
	return nil
}

func (c *Comm) isend(op string, dst, tag int, b []byte, sync bool) comm.Request {
	if err := c.checkPeer(op, dst, false); err != nil {
		return comm.Failed(err)
	}
	mc, mtag, err := c.route(op, tag, false)
	if err != nil {
		return comm.Failed(err)
	}
	if len(b) > math.MaxInt32 {
		return comm.Failed(fmt.Errorf("%s to rank %d: %d bytes, more than an MPI count holds", op, dst, len(b)))
	}
	r := newRequest(dst, false, b)
	s := C.int(0)
	if sync {
		s = 1
	}
	if !enter() {
		r.unpin()
		return comm.Failed(comm.ErrClosed)
	}
	t := &r.t
	rc := C.nw_isend(C.uintptr_t(uintptr(r.ptr)), C.int(len(b)), C.int(dst), mtag, mc, s, &r.req,
		&t.flag, &t.src, &t.tag, &t.count, &t.cancelled, &t.rc)
	leave()
	return r.started(rc)
}

func (c *Comm) Isend(dst, tag int, b []byte) comm.Request {
	return c.isend("isend", dst, tag, b, false)
}

func (c *Comm) Send(ctx context.Context, dst, tag int, b []byte) error {
	_, err := c.isend("send", dst, tag, b, false).Wait(ctx)
	return err
}

func (c *Comm) Ssend(ctx context.Context, dst, tag int, b []byte) error {
	_, err := c.isend("ssend", dst, tag, b, true).Wait(ctx)
	return err
}

func (c *Comm) Irecv(src, tag int, b []byte) comm.Request {
	if err := c.checkPeer("irecv", src, true); err != nil {
		return comm.Failed(err)
	}
	mc, mtag, err := c.route("irecv", tag, true)
	if err != nil {
		return comm.Failed(err)
	}
	if len(b) > math.MaxInt32 {
		b = b[:math.MaxInt32]
	}
	msrc := C.int(src)
	if src == comm.AnySource {
		msrc = C.nw_any_source()
	}
	r := newRequest(src, true, b)
	r.sysTag = mc == c.sys
	if !enter() {
		r.unpin()
		return comm.Failed(comm.ErrClosed)
	}
	t := &r.t
	rc := C.nw_irecv(C.uintptr_t(uintptr(r.ptr)), C.int(len(b)), msrc, mtag, mc, &r.req,
		&t.flag, &t.src, &t.tag, &t.count, &t.cancelled, &t.rc)
	leave()
	return r.started(rc)
}

func (c *Comm) Recv(ctx context.Context, src, tag int, b []byte) (comm.Status, error) {
	return c.Irecv(src, tag, b).Wait(ctx)
}

// Sub makes a sub-communicator with MPI_Comm_create_group (twice: the user
// and the system communicator), a collective call over the listed ranks
// only. Its tag is derived from the list and how many times this rank
// made a Sub of that list, so that concurrent Subs of different lists,
// and the k-th Subs of one list, pair up across ranks.
func (c *Comm) Sub(ranks []int) (comm.Comm, error) {
	if len(ranks) == 0 {
		return nil, fmt.Errorf("sub: empty rank list")
	}
	seen := make(map[int]bool, len(ranks))
	me := -1
	cr := make([]C.int, len(ranks))
	h := fnv.New64a()
	for i, r := range ranks {
		if r < 0 || r >= c.size {
			return nil, fmt.Errorf("sub: rank %d out of range [0,%d)", r, c.size)
		}
		if seen[r] {
			return nil, fmt.Errorf("sub: rank %d listed twice", r)
		}
		seen[r] = true
		if r == c.rank {
			me = i
		}
		cr[i] = C.int(r)
		fmt.Fprintf(h, "%d,", r)
	}
	if me < 0 {
		return nil, comm.ErrNotMember
	}
	key := h.Sum64()
	c.mu.Lock()
	n := c.subs[key]
	c.subs[key] = n + 1
	c.mu.Unlock()
	fmt.Fprintf(h, "#%d", n)
	tag := C.int(h.Sum64() % uint64(state.tagUB+1))
	// Communicators are freed when their Comm is garbage: MPICH has
	// about two thousand context ids, and code that makes a Sub per
	// collective call would exhaust them before the collector runs.
	if n := state.liveSubs.Load(); n > state.gcAt.Load() {
		runtime.GC()
		state.gcAt.Store(n + 256)
	}
	var user, sys C.MPI_Comm
	if !enter() {
		return nil, comm.ErrClosed
	}
	rc := C.nw_create_group(c.user, C.int(len(cr)), &cr[0], tag, &user)
	if rc == C.MPI_SUCCESS {
		rc = C.nw_create_group(c.sys, C.int(len(cr)), &cr[0], tag, &sys)
		if rc != C.MPI_SUCCESS {
			C.nw_comm_free(user)
		}
	}
	leave()
	if rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("sub %v: MPI_Comm_create_group: %w", ranks, mpiError(rc))
	}
	s := &Comm{user: user, sys: sys, rank: me, size: len(ranks), subs: map[uint64]int{}}
	state.liveSubs.Add(1)
	runtime.AddCleanup(s, freePair, [2]C.MPI_Comm{user, sys})
	return s, nil
}

func freePair(p [2]C.MPI_Comm) {
	if n := state.liveSubs.Add(-1); n+512 < state.gcAt.Load() {
		state.gcAt.Store(max(256, n+256))
	}
	if !enter() {
		return
	}
	C.nw_comm_free(p[0])
	C.nw_comm_free(p[1])
	leave()
}

// allgather gives every rank of c every rank's b (MPI_Allgatherv on the
// system communicator, whose collectives are apart from its messages).
// Every rank must call it, from one goroutine at a time. An MPI_Ibarrier,
// polled like any request, comes first: ranks that arrive early wait
// without spinning in the library (the tests' idle ranks would otherwise
// take the CPU from the working ones).
func (c *Comm) allgather(b []byte) ([][]byte, error) {
	if err := ibarrier(context.Background(), c.sys, waitSpins, waitSpin); err != nil {
		return nil, err
	}
	counts := make([]C.int, c.size)
	if !enter() {
		return nil, comm.ErrClosed
	}
	defer leave()
	if rc := C.nw_allgather_int(C.int(len(b)), &counts[0], c.sys); rc != C.MPI_SUCCESS {
		return nil, mpiError(rc)
	}
	displs := make([]C.int, c.size)
	total := 0
	for i, n := range counts {
		displs[i] = C.int(total)
		total += int(n)
	}
	out := make([]byte, total+1)
	in := make([]byte, len(b)+1)
	copy(in, b)
	if rc := C.nw_allgatherv(unsafe.Pointer(&in[0]), C.int(len(b)), unsafe.Pointer(&out[0]), &counts[0], &displs[0], c.sys); rc != C.MPI_SUCCESS {
		return nil, mpiError(rc)
	}
	res := make([][]byte, c.size)
	for i := range res {
		res[i] = out[displs[i] : int(displs[i])+int(counts[i])]
	}
	return res, nil
}

// Barrier is MPI_Ibarrier on the user communicator, waited for without
// the tight loop: a rank that arrives first would otherwise hold a core
// that a late rank, still in the operation a harness times before the
// barrier, needs (8 ranks on 2 cores: Open MPI's own broadcast of 1 KiB
// timed after netaware's dissemination barrier with the tight loop,
// 239-377 us; after this barrier 208-212 us, near the 130-200 us Open
// MPI's own benchmark measures after MPI_Barrier; docs/tuning.md). A
// barrier abandoned by its context stays pending in MPI, as MPI cannot
// cancel a collective; the next barrier is matched after it.
func (c *Comm) Barrier(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return ibarrier(ctx, c.user, 0, 0)
}

// ibarrier is MPI_Ibarrier on communicator h, polled as wait does with
// the tight loop given.
func ibarrier(ctx context.Context, h C.MPI_Comm, spins int, spin time.Duration) error {
	r := newRequest(-1, false, nil)
	if !enter() {
		return comm.ErrClosed
	}
	rc := C.nw_ibarrier(h, &r.req)
	leave()
	if req := r.started(rc); rc != C.MPI_SUCCESS {
		_, err := req.Wait(ctx) // the start's error
		return err
	}
	_, err := r.wait(ctx, spins, spin)
	return err
}

// rawPingPong times iters round trips of len(b) bytes between ranks 0
// and 1 of c in C (blocking MPI_Send/MPI_Recv on c's user communicator,
// tag 77): the baseline comm/mpi's own ping-pong is compared with.
func (c *Comm) rawPingPong(b []byte, iters int) (time.Duration, error) {
	if c.rank > 1 || c.size < 2 || len(b) == 0 {
		return 0, fmt.Errorf("raw ping-pong: ranks 0 and 1 of at least 2, a non-empty buffer")
	}
	var pin runtime.Pinner
	pin.Pin(&b[0])
	defer pin.Unpin()
	var el C.double
	if !enter() {
		return 0, comm.ErrClosed
	}
	// The blocking loop holds its OS thread; MPI_Wtime is the library's
	// clock, as a C benchmark would read it.
	rc := C.nw_raw_pingpong(c.user, C.int(c.rank), C.uintptr_t(uintptr(unsafe.Pointer(&b[0]))), C.int(len(b)), C.int(iters), &el)
	leave()
	if rc != C.MPI_SUCCESS {
		return 0, mpiError(rc)
	}
	return time.Duration(float64(el) * 1e9), nil
}

// request is a started MPI request. Its buffer is pinned (runtime.Pinner)
// from the start until MPI completes it: MPI keeps the pointer after the
// call that received it returns, which cgo allows only for pinned memory.
type request struct {
	peer   int // destination, or the source asked for (maybe AnySource)
	recv   bool
	sysTag bool
	ptr    unsafe.Pointer
	pin    *runtime.Pinner // from pinners; nil without a buffer

	mu         sync.Mutex
	req        C.MPI_Request
	t          testResult // the last MPI_Test's outputs
	registered bool       // in state.pending
	done       bool
	st         comm.Status
	err        error
}

// testResult is what nw_test reports.
type testResult struct {
	flag, src, tag, count, cancelled, rc C.int
}

// pinners recycles Pinners: a Pinner's first Pin registers a finalizer,
// which costs more than a small message's whole trip through MPI.
var pinners = sync.Pool{New: func() any { return new(runtime.Pinner) }}

func newRequest(peer int, recv bool, b []byte) *request {
	r := &request{peer: peer, recv: recv}
	if len(b) > 0 {
		r.ptr = unsafe.Pointer(&b[0])
		r.pin = pinners.Get().(*runtime.Pinner)
		r.pin.Pin(r.ptr)
	}
	return r
}

func (r *request) unpin() {
	if r.pin != nil {
		r.pin.Unpin()
		pinners.Put(r.pin)
		r.pin = nil
	}
}

// started records a request MPI accepted, or fails it. One that the
// start's test completed is done; a pending one is registered.
func (r *request) started(rc C.int) comm.Request {
	if rc != C.MPI_SUCCESS {
		r.unpin()
		return comm.Failed(r.wrap(mpiError(rc)))
	}
	if r.t.flag != 0 {
		r.completed()
		return r
	}
	r.registered = true
	state.pmu.Lock()
	state.pending[r] = struct{}{}
	state.pmu.Unlock()
	return r
}

func (r *request) wrap(err error) error {
	if r.peer >= 0 {
		return &comm.RankError{Rank: r.peer, Err: err}
	}
	return err
}

// finish records the completion of r (r.mu held).
func (r *request) finish(st comm.Status, err error) {
	r.done, r.st, r.err = true, st, err
	r.unpin()
	if r.registered {
		state.pmu.Lock()
		delete(state.pending, r)
		state.pmu.Unlock()
	}
}

// test polls r once (r.mu held).
func (r *request) test() {
	if r.done {
		return
	}
	if !enter() {
		r.finish(comm.Status{}, r.wrap(comm.ErrClosed))
		return
	}
	t := &r.t
	t.rc = C.nw_test(&r.req, &t.flag, &t.src, &t.tag, &t.count, &t.cancelled)
	leave()
	if t.flag != 0 {
		r.completed()
	}
}

// completed finishes r from the test that found it complete.
func (r *request) completed() {
	t := &r.t
	if t.rc != C.MPI_SUCCESS {
		peer := r.peer
		if r.recv && t.src >= 0 {
			peer = int(t.src)
		}
		err := mpiError(t.rc)
		if peer >= 0 {
			err = &comm.RankError{Rank: peer, Err: err}
		}
		r.finish(comm.Status{}, err)
		return
	}
	if t.cancelled != 0 {
		r.finish(comm.Status{}, context.Canceled)
		return
	}
	if !r.recv {
		r.finish(comm.Status{}, nil)
		return
	}
	tag := int(t.tag)
	if r.sysTag {
		tag = -tag
	}
	r.finish(comm.Status{Source: int(t.src), Tag: tag, Count: int(t.count)}, nil)
}

func (r *request) Test() (bool, comm.Status, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.test()
	return r.done, r.st, r.err
}

// Wait polls until r completes: a tight loop for the first microseconds (a
// message in shared memory arrives within them), then yielding to other
// goroutines and processes, then sleeping with a growing pause of at most 200 us, so
// that ranks waiting long (more ranks than cores) leave the CPU to others.
func (r *request) Wait(ctx context.Context) (comm.Status, error) {
	return r.wait(ctx, waitSpins, waitSpin)
}

// Wait's tight loop: waitSpins tests, then until waitSpin has passed.
const (
	waitSpins = 200
	waitSpin  = 50 * time.Microsecond
)

// wait is Wait with the tight loop's length: spins tests, then until spin
// has passed.
func (r *request) wait(ctx context.Context, spins int, spin time.Duration) (comm.Status, error) {
	var start time.Time
	for i := 0; ; i++ {
		if done, st, err := r.Test(); done {
			return st, err
		}
		select {
		case <-ctx.Done():
			return r.abandon(ctx.Err())
		default:
		}
		if i < spins {
			continue
		}
		if start.IsZero() {
			start = time.Now()
		}
		switch el := time.Since(start); {
		case el < spin:
		case el < time.Millisecond:
			// Let the other goroutines of this process and the
			// other processes of this machine run: with more
			// ranks than cores, the peer may be waiting for the
			// CPU this rank spins on.
			runtime.Gosched()
			C.sched_yield()
		default:
			time.Sleep(min(el/16, 200*time.Microsecond))
		}
	}
}

// abandon ends a Wait whose context is done. A receive is cancelled
// (MPI_Cancel); if the message matched meanwhile, it is returned. A send
// cannot be cancelled portably (MPI 4 deprecates it): it stays pending in
// MPI, its buffer pinned, and the caller gets ctx's error; a later Wait
// or Test can still complete it.
func (r *request) abandon(cause error) (comm.Status, error) {
	if !r.recv {
		return comm.Status{}, cause
	}
	r.mu.Lock()
	if !r.done && enter() {
		C.nw_cancel(&r.req)
		leave()
	}
	r.mu.Unlock()
	for {
		r.mu.Lock()
		r.test()
		done, st, err := r.done, r.st, r.err
		r.mu.Unlock()
		if done {
			if errors.Is(err, context.Canceled) {
				err = cause
			}
			return st, err
		}
		time.Sleep(10 * time.Microsecond)
	}
}
