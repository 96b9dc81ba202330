//go:build linux

// Shared-memory rings. Two ranks of one machine first meet over a Unix
// socket (local.go); the dialer then creates a memory file (memfd) holding
// one ring per direction, maps it and passes it to the acceptor over the
// socket (SCM_RIGHTS). From then on the frames go through the rings, with
// one copy in and one copy out and no system call, and the socket stays
// as the doorbell: a reader that found its ring empty (after spinning a
// while if it is a driver, see spinFor) marks itself asleep and blocks
// reading the socket, and a writer that publishes bytes to a sleeping
// reader writes it one byte. The socket also carries what the engine
// expects of a connection: read deadlines (the interrupts of drive.go)
// act on the doorbell read, and the end of a peer process (its socket
// closes) reaches the reader as the end of the stream, after whatever
// the ring still holds.
//
// shmConn is a net.Conn, so the transport above it is unchanged: framing,
// matching, Ssend acks, heartbeats, goodbyes and faults are the TCP code's.

package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Ring layout: a header of four cache lines, then the data. Positions count
// bytes since the start and only grow; a ring's size is a power of two.
const (
	offTail     = 0   // producer: bytes written (published)
	offHead     = 64  // consumer: bytes read
	offSleeping = 128 // consumer: 1 while it waits on the doorbell
	offWaiting  = 160 // producer: 1 while it waits for room (a futex word)
	offClosed   = 192 // flags: closedWrite (producer is done), closedRead (consumer is gone)
	offCPU      = 224 // consumer: the CPU it last polled on, plus one (0: not known), and cpuPinned
	ringHeader  = 256

	closedWrite = 1
	closedRead  = 2

	cpuPinned = 1 << 31 // the consumer's thread may run on that CPU only
)

// The handshake. Each side that may sleep announces it, then looks once
// more (the reader: sleeping, then tail; the writer waiting for room:
// waiting, then head), and each side that makes progress publishes it,
// then looks for a sleeper (tail, then sleeping; head, then waiting).
// Either the sleeper sees the progress or the other side sees the
// sleeper, but only if neither side's load can pass its own store: each
// of those four stores is a Swap. Go's atomic stores are sequentially
// consistent, and a plain Store would do, but under the race detector
// they are release stores (golang/go#58020), which x86 may hold in its
// store buffer past the next load: the reader then slept on a full ring
// (TestShmSmallRingWrapsAndExchanges under -race, three processes at
// once, hung within a few hundred runs; docs/benchmarks.md). A Swap is
// what a Store compiles to on amd64 anyway.
type ring struct {
	tail, head *atomic.Uint64
	sleeping   *atomic.Uint32
	waiting    *atomic.Uint32
	closed     *atomic.Uint32
	cpu        *atomic.Uint32
	data       []byte
	mask       uint64
}

func mapRing(mem []byte, size int) ring {
	at := func(off int) unsafe.Pointer { return unsafe.Pointer(&mem[off]) }
	return ring{
		tail:     (*atomic.Uint64)(at(offTail)),
		head:     (*atomic.Uint64)(at(offHead)),
		sleeping: (*atomic.Uint32)(at(offSleeping)),
		waiting:  (*atomic.Uint32)(at(offWaiting)),
		closed:   (*atomic.Uint32)(at(offClosed)),
		cpu:      (*atomic.Uint32)(at(offCPU)),
		data:     mem[ringHeader : ringHeader+size],
		mask:     uint64(size - 1),
	}
}

type shmConn struct {
	bell     *net.UnixConn
	in, out  ring
	spin     time.Duration // how long a driver's read spins at most before sleeping
	spinNow  atomic.Int64  // the current budget (see spinFor)
	spinMiss atomic.Uint32 // reads that did not spin since the budget fell to 0
	// polls is how many times a spin polls before its first yield (see
	// spinFor), adapted between minPolls and maxPolls; pollMiss counts the
	// spins at minPolls since the last probe, probeGap how many make one.
	polls    atomic.Int32
	pollMiss atomic.Int32
	probeGap atomic.Int32
	oneP     bool // GOMAXPROCS is 1: spinning must let goroutines run
	// Two ranks sharing a core (see apart): dialer says which side moves;
	// cpuCheck counts the vain polls until the next look at the CPUs;
	// moveAt is when a move may come next (since born), moveGap the
	// time to the one after.
	dialer   bool
	born     time.Time
	cpuCheck atomic.Int32
	moveAt   atomic.Int64
	moveGap  atomic.Int64
	// driving is set while a driver reads (see readFor): only a goroutine
	// that waits for a message spins; the reader goroutine goes to sleep.
	driving atomic.Bool
	// onFull runs when a write finds the ring full (waited false) and
	// again when a short spin brought no room (waited true): the transport
	// hands idle connections back to their readers, as it does when a
	// socket is full (see writev).
	onFull func(waited bool)

	interrupted atomic.Bool // a read deadline in the past is set
	closed      atomic.Bool // Close was called
	peerGone    atomic.Bool // the doorbell ended: the peer closed or died
	bellErr     error       // how it ended (reader only)
	bellBuf     [64]byte    // reader only
	one         [1]byte     // writer only (under the transport's wmu)
}

// offerPopulate, in the dialer's offer, says that it faulted the rings in
// and the acceptor should map them in at once too (see bootstrap.ringSize).
const offerPopulate = 1 << 63

// mapFlags maps shared, and with populate faults every page in now: the
// dialer allocates them (the memory file's pages exist only once touched),
// the acceptor maps them, so that no message pays for first touches.
func mapFlags(populate bool) int {
	if populate {
		return unix.MAP_SHARED | unix.MAP_POPULATE
	}
	return unix.MAP_SHARED
}

// shmDial turns a freshly introduced Unix connection into a ring pair
// (the dialer's side): size 0 keeps the plain socket. The peer learns the
// choice from the 8-byte message sent here.
func shmDial(uc *net.UnixConn, size int, populate bool, spin time.Duration) (net.Conn, error) {
	var msg [8]byte
	plain := func() (net.Conn, error) { // the offer of no rings
		_, err := uc.Write(msg[:])
		return uc, err
	}
	if size == 0 {
		return plain()
	}
	// Without memory to share (memfd_create refused by a sandbox, no
	// memory left), the pair keeps the plain Unix socket: slower, but the
	// world still starts.
	mem, fd, err := makeRings(size, populate)
	if err != nil {
		return plain()
	}
	defer unix.Close(fd)
	offer := uint64(size)
	if populate {
		offer |= offerPopulate
	}
	binary.LittleEndian.PutUint64(msg[:], offer)
	if _, _, err := uc.WriteMsgUnix(msg[:], unix.UnixRights(fd), nil); err != nil {
		unix.Munmap(mem)
		return nil, fmt.Errorf("shared memory: passing the rings: %w", err)
	}
	return newShmConn(uc, mem, size, spin, true), nil
}

// makeRings creates and maps the memory file of a ring pair.
func makeRings(size int, populate bool) (mem []byte, fd int, err error) {
	total := 2 * (ringHeader + size)
	fd, err = unix.MemfdCreate("netaware-shm", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, -1, fmt.Errorf("shared memory: memfd_create: %w", err)
	}
	if err := unix.Ftruncate(fd, int64(total)); err != nil {
		unix.Close(fd)
		return nil, -1, fmt.Errorf("shared memory: ftruncate to %d bytes: %w", total, err)
	}
	mem, err = unix.Mmap(fd, 0, total, unix.PROT_READ|unix.PROT_WRITE, mapFlags(populate))
	if err != nil {
		unix.Close(fd)
		return nil, -1, fmt.Errorf("shared memory: mmap of %d bytes: %w", total, err)
	}
	return mem, fd, nil
}

// shmAccept is the acceptor's side of shmDial.
func shmAccept(uc *net.UnixConn, spin time.Duration) (net.Conn, error) {
	var msg [8]byte
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := uc.ReadMsgUnix(msg[:], oob)
	if err != nil {
		return nil, fmt.Errorf("shared memory: %w", err)
	}
	fd := -1
	if oobn > 0 {
		cms, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err == nil && len(cms) == 1 {
			if fds, err := unix.ParseUnixRights(&cms[0]); err == nil && len(fds) == 1 {
				fd = fds[0]
			}
		}
		if fd < 0 {
			return nil, fmt.Errorf("shared memory: %w: malformed rights message", errProtocol)
		}
		defer unix.Close(fd)
	}
	if n < len(msg) {
		if _, err := io.ReadFull(uc, msg[n:]); err != nil {
			return nil, fmt.Errorf("shared memory: %w", err)
		}
	}
	size := binary.LittleEndian.Uint64(msg[:])
	populate := size&offerPopulate != 0
	size &^= offerPopulate
	if size == 0 && fd < 0 {
		return uc, nil
	}
	if fd < 0 || size < 4096 || size > maxRing || size&(size-1) != 0 {
		return nil, fmt.Errorf("shared memory: %w: ring of %d bytes (a power of two from 4 KiB to 64 MiB) with %v file", errProtocol, size, fd >= 0)
	}
	total := 2 * (ringHeader + int(size))
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Size < int64(total) {
		return nil, fmt.Errorf("shared memory: %w: file of %d bytes for rings of %d", errProtocol, st.Size, size)
	}
	mem, err := unix.Mmap(fd, 0, total, unix.PROT_READ|unix.PROT_WRITE, mapFlags(populate))
	if err != nil {
		return nil, fmt.Errorf("shared memory: mmap of %d bytes: %w", total, err)
	}
	return newShmConn(uc, mem, int(size), spin, false), nil
}

func newShmConn(uc *net.UnixConn, mem []byte, size int, spin time.Duration, dialer bool) *shmConn {
	a, b := mapRing(mem, size), mapRing(mem[ringHeader+size:], size)
	c := &shmConn{bell: uc, spin: spin, oneP: runtime.GOMAXPROCS(0) == 1, dialer: dialer, born: time.Now()}
	c.moveGap.Store(int64(minMoveGap))
	c.spinNow.Store(int64(spin))
	c.polls.Store(maxPolls)
	c.probeGap.Store(minProbeGap)
	if dialer {
		c.out, c.in = a, b
	} else {
		c.out, c.in = b, a
	}
	// The mapping outlives Close: a reader or writer may still be inside
	// it (Close does not wait for them). It goes when nothing refers to c.
	runtime.AddCleanup(c, func(m []byte) { unix.Munmap(m) }, mem)
	return c
}

func (c *shmConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r := &c.in
	spun := false
	for {
		// As a socket with a past read deadline: fail at once.
		if c.interrupted.Load() {
			return 0, os.ErrDeadlineExceeded
		}
		head := r.head.Load()
		if tail := r.tail.Load(); tail != head {
			n := int(min(uint64(len(b)), tail-head))
			pos := int(head & r.mask)
			k := copy(b[:n], r.data[pos:])
			copy(b[k:n], r.data)
			r.head.Swap(head + uint64(n)) // a Swap, not a Store: see handshake
			if r.waiting.Load() != 0 && r.waiting.CompareAndSwap(1, 0) {
				futexWake(r.waiting)
			}
			return n, nil
		}
		switch {
		case c.closed.Load():
			return 0, net.ErrClosed
		case r.closed.Load()&closedWrite != 0:
			return 0, io.EOF // the peer finished writing (goodbye or Close)
		case c.bellErr != nil:
			return 0, c.bellErr // the peer vanished without closing
		}
		if !spun {
			spun = true
			if c.driving.Load() && c.spinFor(func() bool { return r.tail.Load() != head || r.closed.Load() != 0 }) {
				continue
			}
		}
		r.sleeping.Swap(1) // see handshake
		if r.tail.Load() != head || r.closed.Load() != 0 {
			// Woke up before sleeping. If the writer cleared the flag
			// first, its byte is on the way and ends a later sleep early.
			r.sleeping.CompareAndSwap(1, 0)
			continue
		}
		if _, err := c.bell.Read(c.bellBuf[:]); err != nil {
			r.sleeping.CompareAndSwap(1, 0)
			if isTimeout(err) {
				return 0, err
			}
			if c.closed.Load() {
				return 0, net.ErrClosed
			}
			if errors.Is(err, io.EOF) || errors.Is(err, unix.ECONNRESET) {
				err = io.ErrUnexpectedEOF
			}
			c.bellErr = err
			c.peerGone.Store(true)
		}
	}
}

// spinFor polls ready for up to the current spin budget, yielding
// between polls after the first ones: to other goroutines of this process
// and to other processes (the peer may be waiting for this core: on a
// loaded machine a busy spin only delays the answer). True if it became
// ready. The budget adapts, from 0 to c.spin: it doubles after a spin
// that caught its message and halves after one that did not, so that a
// peer that answers slowly (or many ranks sharing few cores) does not
// cost a spin per message.
//
// The polls before the first yield adapt too (pollsBefore): a peer
// running on another core answers a small message within a microsecond
// or two, and a yield then costs more than the wait (a context switch
// when anything else is runnable on this core); a peer sharing this core
// cannot answer before we yield, and polling only delays it.
func (c *shmConn) spinFor(ready func() bool) bool {
	budget := time.Duration(c.spinNow.Load())
	if budget <= 0 {
		if c.spin > 0 && c.spinMiss.Add(1)%16 == 0 {
			// Try again now and then, long enough to catch a reply.
			c.spinNow.Store(int64(max(c.spin/4, minSpin)))
		}
		return false
	}
	polls := c.pollsBefore()
	for i := 0; i < polls; i++ {
		if ready() {
			if polls > minPolls {
				c.polls.Store(maxPolls)
				c.probeGap.Store(minProbeGap)
			}
			c.spinNow.Store(int64(min(c.spin, 2*budget)))
			return true
		}
	}
	start := time.Now()
	if c.in.cpu != nil {
		c.apart(start)
	}
	if polls > minPolls {
		switch p := c.polls.Load(); {
		case p == maxPolls:
			c.polls.Store(maxPolls - 1)
		case p > minPolls:
			// Two misses in a row: the peer does not answer while we poll.
			c.polls.Store(minPolls)
		default:
			// A probe that missed: the peer still shares our core, and
			// each probe delays it; probe half as often.
			c.probeGap.Store(min(2*c.probeGap.Load(), maxProbeGap))
		}
	}
	last := start
	for {
		if ready() {
			c.spinNow.Store(int64(min(c.spin, 2*budget)))
			return true
		}
		// Yield to other processes. With several Ps, runtime.Gosched would
		// hand this goroutine to another thread now and then (a futex wake
		// and wait per message), and other goroutines have other Ps; with
		// one P (a rank pinned to one core), they only run if we let them.
		if c.oneP {
			runtime.Gosched()
		}
		unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		now := time.Now()
		switch {
		case now.Sub(last) > yieldedAway:
			// The yield gave the core away to another process: the machine
			// is oversubscribed, and a sleeper woken by the doorbell gets
			// a core sooner than a process that keeps yielding. Stop
			// spinning (spinFor tries again now and then).
			c.spinNow.Store(0)
			return false
		case now.Sub(start) > budget:
			if budget /= 2; budget < minSpin {
				budget = 0
			}
			c.spinNow.Store(int64(budget))
			return false
		}
		last = now
	}
}

// apart runs after polls that did not catch the peer's answer: the peer
// may share this core. Each side notes in its incoming ring the CPU it
// polls on, every cpuCheckEvery vain polls; when both are on the same CPU
// and the dialer's thread may run on another (the acceptor's if the
// dialer is pinned), it moves there (moveOff) and polls at maxPolls again.
// The kernel would not separate them: two threads that never sleep (they
// poll and yield) are each hot in the cache of their core, and the load
// balancer leaves hot threads where they are, idle core or not; they came
// together while sleeping and waking during start-up (a waker draws the
// woken onto its core). Moves are spaced out (minMoveGap, doubling up to
// maxMoveGap), as where ranks outnumber cores each move only trades one
// core-mate for another. On different CPUs, a side that had dropped to
// minPolls polls at maxPolls again: the peer moved away.
func (c *shmConn) apart(now time.Time) {
	if c.cpuCheck.Add(-1) > 0 {
		return
	}
	c.cpuCheck.Store(cpuCheckEvery)
	cpu, ok := getcpu()
	if !ok {
		return
	}
	mine := uint32(cpu) + 1
	if old := c.in.cpu.Load(); old&^cpuPinned == mine {
		mine |= old & cpuPinned
	}
	c.in.cpu.Store(mine)
	peer := c.out.cpu.Load()
	switch {
	case peer == 0:
		return
	case peer&^cpuPinned != mine&^cpuPinned:
		if c.polls.Load() == minPolls {
			c.polls.Store(maxPolls - 1) // one probe, then minPolls again if it misses
		}
		return
	case mine&peer&cpuPinned != 0:
		c.cpuCheck.Store(cpuCheckPinned) // neither can move: look again much later
		return
	case mine&cpuPinned != 0 || !c.dialer && peer&cpuPinned == 0:
		return // the other side moves
	}
	since := int64(now.Sub(c.born))
	if since < c.moveAt.Load() {
		return
	}
	gap := c.moveGap.Load()
	c.moveAt.Store(since + gap)
	c.moveGap.Store(min(2*gap, int64(maxMoveGap)))
	switch moved, pinned := moveOff(cpu); {
	case pinned:
		c.in.cpu.Store(mine | cpuPinned)
	case moved:
		if cpu, ok := getcpu(); ok {
			c.in.cpu.Store(uint32(cpu) + 1)
		}
		c.polls.Store(maxPolls)
		c.probeGap.Store(minProbeGap)
	}
}

// Every cpuCheckEvery vain polls, apart looks at the CPUs (a system call),
// every cpuCheckPinned when both sides are pinned to the same one;
// moves come minMoveGap apart at first, then twice as far each time up to
// maxMoveGap (a move costs tens of microseconds on a quiet machine, up to
// a millisecond on a loaded one).
const (
	cpuCheckEvery  = 8
	cpuCheckPinned = 1024
	minMoveGap     = 10 * time.Millisecond
	maxMoveGap     = time.Second
)

// getcpu is the CPU the calling thread runs on (it may move at any time).
func getcpu() (int, bool) {
	var cpu uint32
	_, _, errno := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0)
	return int(cpu), errno == 0
}

// moveOff moves the calling thread off cpu to another CPU it may run on,
// then gives it back its affinity: the kernel migrates a running thread
// when its CPU leaves its mask, and leaves it where it is when the mask
// grows again. pinned says the thread may run on cpu only.
func moveOff(cpu int) (moved, pinned bool) {
	runtime.LockOSThread() // the affinity calls are the thread's, not the process's
	defer runtime.UnlockOSThread()
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil || !set.IsSet(cpu) {
		return false, false
	}
	away := set
	away.Clear(cpu)
	if away.Count() == 0 {
		return false, true
	}
	if unix.SchedSetaffinity(0, &away) != nil {
		return false, false
	}
	// Restoring the same mask can only fail if the CPU set of the process
	// changed meanwhile; the thread then keeps the narrower set.
	unix.SchedSetaffinity(0, &set)
	return true, false
}

// pollsBefore is how many polls the next spin makes before yielding:
// maxPolls while polling catches messages, minPolls after two spins in a
// row that polled in vain, with a probe at maxPolls now and then to notice
// a peer that moved to another core: after minProbeGap spins, and twice as
// many after each probe that missed, up to maxProbeGap.
func (c *shmConn) pollsBefore() int {
	if c.polls.Load() > minPolls {
		return maxPolls
	}
	if c.pollMiss.Add(1) >= c.probeGap.Load() {
		c.pollMiss.Store(0)
		return maxPolls
	}
	return minPolls
}

// The polls before the first yield: maxPolls (about 2 to 4 µs of polling
// two atomic words) covers the answer of a peer on another core, the 64
// of minPolls the ring being written while this side came to wait.
const (
	minPolls    = 64
	maxPolls    = 1024
	minProbeGap = 32
	maxProbeGap = 1024
)

// yieldedAway is how long a sched_yield that returns at once can take
// (a system call of a virtual machine, or a short turn of another
// thread); a longer one means another process ran.
const yieldedAway = 50 * time.Microsecond

// minSpin is the smallest spin budget before spinning stops.
const minSpin = 2 * time.Microsecond

var errPeerGone = errors.New("peer closed the shared-memory connection")

func (c *shmConn) Write(b []byte) (int, error) {
	r := &c.out
	done := 0
	for done < len(b) {
		if c.closed.Load() {
			return done, net.ErrClosed
		}
		if c.peerGone.Load() || r.closed.Load()&closedRead != 0 {
			return done, errPeerGone
		}
		tail := r.tail.Load()
		free := uint64(len(r.data)) - (tail - r.head.Load())
		if free == 0 {
			if err := c.waitSpace(tail); err != nil {
				return done, err
			}
			continue
		}
		n := int(min(free, uint64(len(b)-done)))
		pos := int(tail & r.mask)
		k := copy(r.data[pos:], b[done:done+n])
		copy(r.data, b[done+k:done+n])
		r.tail.Swap(tail + uint64(n)) // see handshake
		done += n
		c.wake()
	}
	return done, nil
}

// wake rings the doorbell if the reader sleeps.
func (c *shmConn) wake() {
	r := &c.out
	if r.sleeping.Load() != 0 && r.sleeping.CompareAndSwap(1, 0) {
		c.bell.Write(c.one[:])
	}
}

// waitSpace waits until the reader has taken bytes from a full ring: it
// spins, then sleeps on the ring's waiting word, a futex the reader wakes
// once it has made room. The doorbell socket cannot serve here: its
// reading end belongs to this side's reader. A futex wait holds a thread
// (not a P: the runtime hands the P on), and it wakes every millisecond
// to see whether either side has gone.
func (c *shmConn) waitSpace(tail uint64) error {
	if c.onFull != nil {
		c.onFull(false)
	}
	r := &c.out
	room := func() bool { return tail-r.head.Load() < uint64(len(r.data)) }
	if c.spinFor(room) {
		return nil
	}
	if c.onFull != nil {
		c.onFull(true)
	}
	for !room() {
		if c.closed.Load() {
			return net.ErrClosed
		}
		if c.peerGone.Load() || r.closed.Load()&closedRead != 0 {
			return errPeerGone
		}
		r.waiting.Swap(1) // see handshake
		if room() {
			r.waiting.CompareAndSwap(1, 0)
			break
		}
		futexWait(r.waiting, 1, time.Millisecond)
	}
	return nil
}

// futexWait sleeps while *w == val, at most d (spurious wake-ups are
// fine: the caller checks again). The word is in memory shared between
// processes, hence no FUTEX_PRIVATE_FLAG.
func futexWait(w *atomic.Uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexOpWait, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// The futex operations (linux/futex.h), shared (not private).
const (
	futexOpWait = 0
	futexOpWake = 1
)

func futexWake(w *atomic.Uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexOpWake, 1, 0, 0, 0)
}

// CloseWrite says no more bytes will come (after a goodbye frame).
func (c *shmConn) CloseWrite() error {
	c.out.closed.Or(closedWrite)
	c.wake()
	return nil
}

func (c *shmConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.out.closed.Or(closedWrite)
	c.in.closed.Or(closedRead)
	c.wake()
	return c.bell.Close()
}

func (c *shmConn) LocalAddr() net.Addr  { return c.bell.LocalAddr() }
func (c *shmConn) RemoteAddr() net.Addr { return c.bell.RemoteAddr() }

func (c *shmConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.bell.SetWriteDeadline(t)
}

func (c *shmConn) SetReadDeadline(t time.Time) error {
	c.interrupted.Store(!t.IsZero() && !t.After(time.Now()))
	return c.bell.SetReadDeadline(t)
}

func (c *shmConn) SetWriteDeadline(t time.Time) error { return c.bell.SetWriteDeadline(t) }

func (c *shmConn) setDriving(on bool)     { c.driving.Store(on) }
func (c *shmConn) setOnFull(f func(bool)) { c.onFull = f }

// release punches the pages of the incoming ring's data out of the memory
// file (MADV_REMOVE): the memory goes back to the system now rather than
// when the garbage collector finds the connection. Only whole pages inside
// the data are punched, never the header: a peer still writing (it did not
// say goodbye) finds its positions intact and writes into fresh pages that
// nobody reads.
func (c *shmConn) release() {
	d := c.in.data
	page := uintptr(unix.Getpagesize())
	base := uintptr(unsafe.Pointer(&d[0]))
	start := (base + page - 1) &^ (page - 1)
	end := (base + uintptr(len(d))) &^ (page - 1)
	if end > start {
		unix.Madvise(d[start-base:end-base], unix.MADV_REMOVE)
	}
}
