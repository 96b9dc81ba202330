//go:build linux

package tcp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"netaware/comm"
)

// A ring much smaller than the messages: writes wait for room and wrap
// around at every offset; bytes arrive intact and in order, both ways at
// once (each side's full ring hands its connections back to the reader
// goroutines, so two large sends to each other cannot deadlock).
func TestShmSmallRingWrapsAndExchanges(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := RunLoopback(ctx, 2, Config{ShmRing: 4096, Logger: quietLogger()}, func(ctx context.Context, c comm.Comm) error {
		rng := rand.New(rand.NewPCG(7, 0))
		peer := 1 - c.Rank()
		for i := 0; i < 40; i++ {
			n := rng.IntN(20000) // 0 .. ~5 rings
			out := make([]byte, n)
			for j := range out {
				out[j] = byte(j*31 + i + c.Rank())
			}
			in := make([]byte, n)
			st, err := comm.Sendrecv(ctx, c, peer, i, out, peer, i, in)
			if err != nil {
				return err
			}
			for j := range in {
				if in[j] != byte(j*31+i+peer) {
					return fmt.Errorf("message %d (%d bytes): byte %d is %d", i, n, j, in[j])
				}
			}
			if st.Count != n {
				return fmt.Errorf("message %d: %d bytes, want %d", i, st.Count, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestShmRingOptions(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eps, err := JoinLoopback(ctx, 2, Config{ShmRing: -1})
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, ctx, eps, func(i, j int) string { return "unix" })
	for _, e := range eps {
		e.Close()
	}
	for _, n := range []int{1, 4095, 5000, 128 << 20} { // 0 is the default, negative no rings
		if _, err := JoinLoopback(ctx, 2, Config{ShmRing: n}); err == nil {
			t.Errorf("ShmRing %d accepted", n)
		}
	}
}

// shmAccept follows the dialer's offer and refuses a malformed one.
func TestShmAcceptOffers(t *testing.T) {
	pair := func(t *testing.T) (a, b *net.UnixConn) {
		name := fmt.Sprintf("@netaware-test-%d", rand.Uint64())
		ln, err := net.Listen("unix", name)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ch := make(chan net.Conn, 1)
		go func() { c, _ := ln.Accept(); ch <- c }()
		d, err := net.Dial("unix", name)
		if err != nil {
			t.Fatal(err)
		}
		acc := <-ch
		if acc == nil {
			t.Fatal("accept failed")
		}
		t.Cleanup(func() { d.Close(); acc.Close() })
		return d.(*net.UnixConn), acc.(*net.UnixConn)
	}
	t.Run("plain", func(t *testing.T) {
		d, a := pair(t)
		if c, err := shmDial(d, 0, false, 0); err != nil || c != net.Conn(d) {
			t.Fatalf("dial without rings: %v, %T", err, c)
		}
		if c, err := shmAccept(a, 0); err != nil || c != net.Conn(a) {
			t.Fatalf("accept without rings: %v, %T", err, c)
		}
	})
	t.Run("rings", func(t *testing.T) {
		d, a := pair(t)
		cd, err := shmDial(d, 8192, true, 0)
		if err != nil {
			t.Fatal(err)
		}
		ca, err := shmAccept(a, 0)
		if err != nil {
			t.Fatal(err)
		}
		msg := bytes.Repeat([]byte("ring"), 5000) // 20000 bytes: wraps
		go cd.Write(msg)
		got := make([]byte, len(msg))
		ca.SetReadDeadline(time.Now().Add(10 * time.Second))
		for n := 0; n < len(got); {
			k, err := ca.Read(got[n:])
			if err != nil {
				t.Fatal(err)
			}
			n += k
		}
		if !bytes.Equal(got, msg) {
			t.Fatal("data changed on the way")
		}
		// Released pages read as fresh ones: the mapping stays usable.
		ca.(*shmConn).release()
		cd.(*shmConn).release()
		go cd.Write(msg[:5000])
		for n := 0; n < 5000; {
			k, err := ca.Read(got[n:5000])
			if err != nil {
				t.Fatal(err)
			}
			n += k
		}
		if !bytes.Equal(got[:5000], msg[:5000]) {
			t.Fatal("data changed on the way after release")
		}
		// A past deadline interrupts a read of an empty ring, as on a socket.
		ca.SetReadDeadline(longAgo)
		if _, err := ca.Read(got); !isTimeout(err) {
			t.Fatalf("read with a past deadline: %v", err)
		}
		ca.SetReadDeadline(time.Time{})
		// The end of writing reads as the end of the stream.
		cd.(interface{ CloseWrite() error }).CloseWrite()
		if _, err := ca.Read(got); err == nil || err.Error() != "EOF" {
			t.Fatalf("read after CloseWrite: %v", err)
		}
		// After the reader closed, writes fail.
		ca.Close()
		if _, err := cd.Write([]byte("x")); !errors.Is(err, errPeerGone) {
			t.Fatalf("write to a closed reader: %v", err)
		}
	})
	for _, size := range []uint64{5000, 1024, maxRing * 2, offerPopulate | 1024} {
		t.Run(fmt.Sprint("bad size ", size), func(t *testing.T) {
			d, a := pair(t)
			var msg [8]byte
			binary.LittleEndian.PutUint64(msg[:], size)
			d.Write(msg[:])
			if _, err := shmAccept(a, 0); !errors.Is(err, errProtocol) {
				t.Fatalf("offer of %d bytes without memory: %v", size, err)
			}
		})
	}
}

// Two ranks that both send a message larger than the ring before
// receiving (no receive posted): the full rings hand the connections back
// to the reader goroutines after a short wait, and both sends complete.
func TestShmBothSendFirst(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := RunLoopback(ctx, 2, Config{ShmRing: 4096, Logger: quietLogger()}, func(ctx context.Context, c comm.Comm) error {
		peer := 1 - c.Rank()
		out := bytes.Repeat([]byte{byte(c.Rank() + 1)}, 50000)
		for i := 0; i < 3; i++ {
			if err := c.Send(ctx, peer, i, out); err != nil {
				return err
			}
			in := make([]byte, len(out))
			if _, err := c.Recv(ctx, peer, i, in); err != nil {
				return err
			}
			if !bytes.Equal(in, bytes.Repeat([]byte{byte(peer + 1)}, len(out))) {
				return fmt.Errorf("message %d from rank %d changed on the way", i, peer)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The polls before a spin's first yield adapt: maxPolls while polling
// catches the messages, minPolls after two spins in a row that polled in
// vain, then a probe at maxPolls after minProbeGap spins (twice as many
// after a probe that missed), and maxPolls again as soon as a probe
// catches its message while polling.
func TestShmSpinPollsAdapt(t *testing.T) {
	c := &shmConn{spin: time.Millisecond}
	c.polls.Store(maxPolls)
	c.probeGap.Store(minProbeGap)
	calls := 0
	spin := func(readyAt int) bool {
		c.spinNow.Store(int64(minSpin))
		calls = 0
		return c.spinFor(func() bool { calls++; return readyAt > 0 && calls >= readyAt })
	}
	if !spin(maxPolls) || calls != maxPolls || c.polls.Load() != maxPolls {
		t.Fatalf("a message at the last poll: caught %v after %d polls, polls now %d, want %d", calls == maxPolls, calls, c.polls.Load(), maxPolls)
	}
	if spin(0) || calls <= maxPolls || c.polls.Load() != maxPolls-1 {
		t.Fatalf("one vain spin: %d polls, polls now %d, want %d (still polling)", calls, c.polls.Load(), maxPolls-1)
	}
	// A message that comes at the first poll after the first yield: caught,
	// but polling did not catch it, so the second vain poll drops to minPolls.
	if !spin(maxPolls+1) || c.polls.Load() != minPolls {
		t.Fatalf("second vain poll: polls now %d, want %d", c.polls.Load(), minPolls)
	}
	atMin := func(n int) {
		t.Helper()
		for i := 1; i < n; i++ {
			if !spin(minPolls+1) || calls != minPolls+1 || c.polls.Load() != minPolls {
				t.Fatalf("spin %d of %d at minPolls: %d polls, polls now %d, want %d", i, n, calls, c.polls.Load(), minPolls)
			}
		}
	}
	atMin(minProbeGap)
	// The probe polls maxPolls times and misses a message that comes
	// just after: the next probe comes after twice as many spins.
	if !spin(maxPolls+1) || c.polls.Load() != minPolls || c.probeGap.Load() != 2*minProbeGap {
		t.Fatalf("vain probe: polls now %d, gap %d, want %d and %d", c.polls.Load(), c.probeGap.Load(), minPolls, 2*minProbeGap)
	}
	atMin(2 * minProbeGap)
	// This probe catches its message polling: back to maxPolls.
	if !spin(minPolls+1) || c.polls.Load() != maxPolls || c.probeGap.Load() != minProbeGap {
		t.Fatalf("probe: polls now %d, gap %d, want %d and %d", c.polls.Load(), c.probeGap.Load(), maxPolls, minProbeGap)
	}
}

// Two ranks found on one CPU come apart: the dialer's thread moves to
// another CPU it may run on, keeps its affinity and polls at maxPolls
// again; the next move waits its gap; the acceptor moves only if the
// dialer is pinned; a side that finds the peer on another CPU probes.
func TestShmApart(t *testing.T) {
	runtime.LockOSThread() // getcpu and the affinity are this thread's
	defer runtime.UnlockOSThread()
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Skipf("sched_getaffinity: %v", err)
	}
	defer unix.SchedSetaffinity(0, &all)
	pair := func() (d, a *shmConn) {
		const size = 4096
		words := make([]uint64, 2*(ringHeader+size)/8)
		mem := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 8*len(words))
		x, y := mapRing(mem, size), mapRing(mem[ringHeader+size:], size)
		now := time.Now().Add(-time.Hour) // moves allowed at once
		d = &shmConn{in: y, out: x, dialer: true, born: now}
		a = &shmConn{in: x, out: y, born: now}
		for _, c := range []*shmConn{d, a} {
			c.polls.Store(minPolls)
			c.probeGap.Store(maxProbeGap)
			c.moveGap.Store(int64(minMoveGap))
		}
		return d, a
	}
	cpuNow := func() int {
		cpu, ok := getcpu()
		if !ok {
			t.Fatal("getcpu failed")
		}
		return cpu
	}
	affinity := func() unix.CPUSet {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			t.Fatal(err)
		}
		return set
	}
	t.Run("pinned", func(t *testing.T) {
		cpu := cpuNow()
		var one unix.CPUSet
		one.Set(cpu)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			t.Skipf("sched_setaffinity: %v", err)
		}
		defer unix.SchedSetaffinity(0, &all)
		d, a := pair()
		a.in.cpu.Store(uint32(cpu) + 1)
		d.apart(time.Now())
		if got := d.in.cpu.Load(); got != uint32(cpu)+1|cpuPinned || cpuNow() != cpu || affinity() != one {
			t.Fatalf("dialer pinned to CPU %d: published %#x, now on CPU %d", cpu, got, cpuNow())
		}
		// The acceptor, pinned too, cannot move either.
		a.apart(time.Now())
		if got := a.in.cpu.Load(); got != uint32(cpu)+1|cpuPinned || cpuNow() != cpu || a.polls.Load() != minPolls {
			t.Fatalf("acceptor pinned to CPU %d: published %#x, now on CPU %d, polls %d", cpu, got, cpuNow(), a.polls.Load())
		}
		// Both pinned: the next look comes much later.
		a.cpuCheck.Store(0)
		a.apart(time.Now())
		if a.cpuCheck.Load() != cpuCheckPinned {
			t.Fatalf("both pinned: next check in %d vain polls, want %d", a.cpuCheck.Load(), cpuCheckPinned)
		}
	})
	t.Run("moves", func(t *testing.T) {
		if all.Count() < 2 {
			t.Skip("this thread may run on one CPU only")
		}
		d, a := pair()
		cpu := cpuNow()
		// The acceptor does not move for an unpinned dialer.
		d.in.cpu.Store(uint32(cpu) + 1)
		a.apart(time.Now())
		if cpuNow() != cpu || a.in.cpu.Load() != uint32(cpu)+1 || a.moveAt.Load() != 0 {
			t.Fatalf("acceptor beside an unpinned dialer on CPU %d: now on %d, published %#x", cpu, cpuNow(), a.in.cpu.Load())
		}
		d.apart(time.Now())
		moved := cpuNow()
		if moved == cpu || d.in.cpu.Load() != uint32(moved)+1 || affinity() != all || d.polls.Load() != maxPolls {
			t.Fatalf("dialer beside the acceptor on CPU %d: now on %d, published %#x, polls %d, affinity kept %v",
				cpu, moved, d.in.cpu.Load(), d.polls.Load(), affinity() == all)
		}
		if d.moveGap.Load() != int64(2*minMoveGap) {
			t.Fatalf("gap after a move %v, want %v", time.Duration(d.moveGap.Load()), 2*minMoveGap)
		}
		// Found together again at once: the next move waits for its gap.
		a.in.cpu.Store(uint32(moved) + 1)
		d.cpuCheck.Store(0)
		d.apart(d.born.Add(time.Duration(d.moveAt.Load()) - time.Microsecond))
		if cpuNow() != moved {
			t.Fatalf("moved again before the gap: CPU %d -> %d", moved, cpuNow())
		}
		// On different CPUs, a side at minPolls probes with maxPolls once.
		a.in.cpu.Store(uint32(cpu) + 1) // and this dialer on moved
		d.polls.Store(minPolls)
		d.cpuCheck.Store(0)
		d.apart(time.Now())
		if d.polls.Load() != maxPolls-1 || d.pollsBefore() != maxPolls {
			t.Fatalf("peer on another CPU: polls %d, want %d", d.polls.Load(), maxPolls-1)
		}
		// Checks come every cpuCheckEvery vain polls.
		d.polls.Store(minPolls)
		for i := 1; i < cpuCheckEvery; i++ {
			d.apart(time.Now())
		}
		if d.polls.Load() != minPolls {
			t.Fatalf("checked the CPUs before %d vain polls", cpuCheckEvery)
		}
		d.apart(time.Now())
		if d.polls.Load() != maxPolls-1 {
			t.Fatalf("no check after %d vain polls", cpuCheckEvery)
		}
	})
}
