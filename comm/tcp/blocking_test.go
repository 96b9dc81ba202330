package tcp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"netaware/comm"
)

// Tests of the blocking receive without a request object (Comm.Recv ->
// Endpoint.RecvBlocking; the conformance suite in tcp_test.go runs every
// Recv through it), of the lock-free hand-over
// of a connection between drivers (peer.turn), and of interrupts absorbed
// inside a frame (frameReader).

// seqMsg is (source, sequence number) in 16 bytes plus filler of the
// given length, so that payloads of several sizes go through both the
// small-copy and the large write paths.
func seqMsg(src, seq, filler int) []byte {
	b := make([]byte, 16+filler)
	binary.LittleEndian.PutUint64(b[0:], uint64(src))
	binary.LittleEndian.PutUint64(b[8:], uint64(seq))
	for i := 16; i < len(b); i++ {
		b[i] = byte(src + seq + i)
	}
	return b
}

func checkSeqMsg(b []byte, st comm.Status) (src, seq int, err error) {
	if st.Count < 16 {
		return 0, 0, fmt.Errorf("short message of %d bytes", st.Count)
	}
	src, seq = int(binary.LittleEndian.Uint64(b[0:])), int(binary.LittleEndian.Uint64(b[8:]))
	if src != st.Source {
		return 0, 0, fmt.Errorf("status says source %d, payload says %d", st.Source, src)
	}
	if !bytes.Equal(b[:st.Count], seqMsg(src, seq, st.Count-16)) {
		return 0, 0, fmt.Errorf("corrupted payload from %d, message %d", src, seq)
	}
	return src, seq, nil
}

// TestRecvBlockingAnySourceConcurrentSenders: four ranks send to rank 0 at
// once, each in order; rank 0 receives everything with AnySource through
// the fast path (alternating with receives from one source and with
// posted Irecvs, so that the slot, the engine and the unexpected queue
// all take part). Every message arrives once, intact, and in order per
// source (MPI's non-overtaking rule).
func TestRecvBlockingAnySourceConcurrentSenders(t *testing.T) {
	bothPaths(t, testRecvBlockingAnySourceConcurrentSenders)
}

func testRecvBlockingAnySourceConcurrentSenders(t *testing.T) {
	checkNoLeak(t)
	const n, per = 5, 400
	err := runLoopback(Config{})(context.Background(), n, func(ctx context.Context, c comm.Comm) error {
		me := c.Rank()
		if me != 0 {
			for i := 0; i < per; i++ {
				filler := (i * 37) % 3000
				if i%50 == 7 {
					filler = 20 << 10 // beyond smallCopy: the two-buffer writev
				}
				if err := c.Send(ctx, 0, 3, seqMsg(me, i, filler)); err != nil {
					return err
				}
			}
			return nil
		}
		next := make([]int, n)
		buf := make([]byte, 32<<10)
		got := 0
		take := func(b []byte, st comm.Status) error {
			src, seq, err := checkSeqMsg(b, st)
			if err != nil {
				return err
			}
			if seq != next[src] {
				return fmt.Errorf("from rank %d: message %d arrived when %d was due", src, seq, next[src])
			}
			next[src]++
			got++
			return nil
		}
		for got < (n-1)*per {
			switch {
			case got%7 == 3 && next[2] < per:
				// A receive for one source in between.
				st, err := c.Recv(ctx, 2, 3, buf)
				if err != nil {
					return err
				}
				if err := take(buf, st); err != nil {
					return err
				}
			case got%11 == 5 && got+2 <= (n-1)*per:
				// Two receives posted at once (the first may take the
				// slot, the second goes to the engine behind it): they
				// match in post order.
				b1, b2 := make([]byte, len(buf)), make([]byte, len(buf))
				r1 := c.Irecv(comm.AnySource, 3, b1)
				r2 := c.Irecv(comm.AnySource, 3, b2)
				for _, rb := range []struct {
					r comm.Request
					b []byte
				}{{r1, b1}, {r2, b2}} {
					st, err := rb.r.Wait(ctx)
					if err != nil {
						return err
					}
					if err := take(rb.b, st); err != nil {
						return err
					}
				}
			default:
				st, err := c.Recv(ctx, comm.AnySource, 3, buf)
				if err != nil {
					return err
				}
				if err := take(buf, st); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRecvBlockingConcurrentReceivers: several goroutines of rank 0
// receive with AnySource through the fast path at once, while the other
// ranks send: each message is received exactly once and intact (the
// reused request objects never mix two receives).
func TestRecvBlockingConcurrentReceivers(t *testing.T) {
	checkNoLeak(t)
	const n, per, receivers = 4, 300, 4
	err := runLoopback(Config{})(context.Background(), n, func(ctx context.Context, c comm.Comm) error {
		me := c.Rank()
		if me != 0 {
			for i := 0; i < per; i++ {
				if err := c.Send(ctx, 0, 1, seqMsg(me, i, i%200)); err != nil {
					return err
				}
			}
			return nil
		}
		var mu sync.Mutex
		seen := map[[2]int]bool{}
		total := (n - 1) * per
		errc := make(chan error, receivers)
		for g := 0; g < receivers; g++ {
			go func() {
				buf := make([]byte, 256)
				for k := 0; k < total/receivers; k++ {
					st, err := c.Recv(ctx, comm.AnySource, 1, buf)
					if err != nil {
						errc <- err
						return
					}
					src, seq, err := checkSeqMsg(buf, st)
					if err != nil {
						errc <- err
						return
					}
					mu.Lock()
					dup := seen[[2]int{src, seq}]
					seen[[2]int{src, seq}] = true
					mu.Unlock()
					if dup {
						errc <- fmt.Errorf("message %d from rank %d received twice", seq, src)
						return
					}
				}
				errc <- nil
			}()
		}
		for g := 0; g < receivers; g++ {
			if err := <-errc; err != nil {
				return err
			}
		}
		if len(seen) != total {
			return fmt.Errorf("received %d distinct messages, want %d", len(seen), total)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRecvBlockingSubSource: on a sub-communicator, the fast path reports
// sources in the sub-communicator's numbering, and stays inside its
// matching context.
func TestRecvBlockingSubSource(t *testing.T) {
	checkNoLeak(t)
	err := runLoopback(Config{})(context.Background(), 4, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 0 {
			return nil
		}
		sub, err := c.Sub([]int{3, 2, 1}) // world 3 is sub 0, world 1 is sub 2
		if err != nil {
			return err
		}
		me := sub.Rank()
		if me != 0 {
			// A world message with the same tag must not match the sub's receive.
			if err := c.Send(ctx, 3, 9, []byte{0xee}); err != nil {
				return err
			}
			return sub.Send(ctx, 0, 9, []byte{byte(me)})
		}
		b := make([]byte, 1)
		seen := map[int]bool{}
		for i := 0; i < 2; i++ {
			st, err := sub.Recv(ctx, comm.AnySource, 9, b)
			if err != nil {
				return err
			}
			if int(b[0]) != st.Source || st.Source < 1 || st.Source > 2 {
				return fmt.Errorf("sub receive: source %d, payload %d", st.Source, b[0])
			}
			seen[st.Source] = true
		}
		if len(seen) != 2 {
			return fmt.Errorf("sub sources seen: %v", seen)
		}
		for _, src := range []int{1, 2} {
			st, err := c.Recv(ctx, src, 9, b)
			if err != nil || b[0] != 0xee || st.Source != src {
				return fmt.Errorf("world receive from %d: %v %v %x", src, st, err, b[0])
			}
		}
		if _, err := sub.Recv(ctx, 5, 9, b); err == nil {
			return errors.New("receive from an out-of-range rank succeeded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRecvBlockingCancelled: a blocking receive whose context ends returns
// the context's error without swallowing the message that comes later,
// and the connection it drove keeps working.
func TestRecvBlockingCancelled(t *testing.T) { bothPaths(t, testRecvBlockingCancelled) }

func testRecvBlockingCancelled(t *testing.T) {
	checkNoLeak(t)
	ctx, eps := twoRanks(t, 20*time.Second)
	c0, c1 := comm.NewWorld(eps[0]), comm.NewWorld(eps[1])
	b := make([]byte, 4)
	for i := 0; i < 3; i++ {
		short, stop := context.WithTimeout(ctx, 30*time.Millisecond)
		start := time.Now()
		_, err := c1.Recv(short, 0, 4, b)
		stop()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("round %d: got %v, want the context's deadline", i, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("round %d: cancellation took %v", i, d)
		}
		if err := c0.Send(ctx, 1, 4, []byte{'m', 's', 'g', byte('0' + i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := c1.Recv(ctx, 0, 4, b); err != nil || string(b) != fmt.Sprintf("msg%d", i) {
			t.Fatalf("round %d: message after a cancelled receive: %v %q", i, err, b)
		}
	}
}

// TestRecvBlockingCrashedPeer: blocking receives pending on the fast path
// fail with an error naming a rank that dies without a goodbye.
func TestRecvBlockingCrashedPeer(t *testing.T) { bothPaths(t, testRecvBlockingCrashedPeer) }

func testRecvBlockingCrashedPeer(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n, dead = 3, 2
	eps := joinLoopback(t, ctx, n, Config{})
	errs := make(chan error, 2)
	// Warm the fast path up first: a few exchanges leave the connections
	// to rank 1 in grace, so that the pending receives take them lock-free.
	for i := 0; i < 5; i++ {
		if err := comm.NewWorld(eps[0]).Send(ctx, 1, 0, []byte{1}); err != nil {
			t.Fatal(err)
		}
		if _, err := comm.NewWorld(eps[1]).Recv(ctx, 0, 0, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		_, err := comm.NewWorld(eps[1]).Recv(ctx, 0, 0, make([]byte, 1))
		errs <- err
	}()
	go func() {
		_, err := comm.NewWorld(eps[0]).Recv(ctx, comm.AnySource, 0, make([]byte, 1))
		errs <- err
	}()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	eps[dead].closing.Store(true)
	for _, p := range eps[dead].peers {
		if p != nil {
			p.conn.Close()
		}
	}
	for i := 0; i < 2; i++ {
		err := <-errs
		var re *comm.RankError
		if !errors.As(err, &re) || re.Rank != dead {
			t.Errorf("pending blocking receive failed with %v, want a RankError naming rank %d", err, dead)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("detection took %v", d)
	}
	for _, e := range eps {
		e.Close()
	}
}

// TestInterruptInsideFrameAbsorbed: interrupts (past read deadlines) that
// hit a reader in the middle of a frame must not break the stream: a large
// message read by a driver while interrupts rain arrives intact, and the
// next one too.
func TestInterruptInsideFrameAbsorbed(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Interrupts every few microseconds slow reading down a lot under the
	// race detector: no false death from a heartbeat timeout.
	eps := joinLoopback(t, ctx, 2, Config{HeartbeatTimeout: 30 * time.Second})
	defer eps[0].Close()
	defer eps[1].Close()
	c0, c1 := comm.NewWorld(eps[0]), comm.NewWorld(eps[1])
	const size = 4 << 20
	out := make([]byte, size)
	for i := range out {
		out[i] = byte(i*7 + i>>12)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	wg.Add(1)
	go func() {
		defer wg.Done()
		p := eps[1].peers[0]
		for {
			select {
			case <-stop:
				return
			default:
			}
			p.interrupt()
			time.Sleep(50 * time.Microsecond)
		}
	}()
	sendErr := make(chan error, 1)
	go func() {
		for i := 0; i < 3; i++ {
			if err := c0.Send(ctx, 1, 2, out); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- nil
	}()
	in := make([]byte, size)
	for i := 0; i < 3; i++ {
		clear(in)
		st, err := c1.Recv(ctx, 0, 2, in)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if st.Count != size || !bytes.Equal(in, out) {
			t.Fatalf("message %d corrupted (%d bytes)", i, st.Count)
		}
	}
	if err := <-sendErr; err != nil {
		t.Fatal(err)
	}
}

// TestRequestManyWaiters: several goroutines waiting on one request (and
// one polling it) all see the same completion, however completion and
// waiting interleave.
func TestRequestManyWaiters(t *testing.T) {
	for round := 0; round < 200; round++ {
		r := newRequest(nil)
		const waiters = 4
		res := make(chan comm.Status, waiters)
		var ready sync.WaitGroup
		ready.Add(waiters)
		for w := 0; w < waiters; w++ {
			go func() {
				ready.Done()
				<-r.doneCh()
				res <- r.st
			}()
		}
		if round%2 == 0 {
			ready.Wait()
		}
		want := comm.Status{Source: round, Tag: 1, Count: 2}
		r.complete(want, nil)
		r.complete(comm.Status{Source: -5}, errors.New("second completion must be ignored"))
		for w := 0; w < waiters; w++ {
			select {
			case st := <-res:
				if st != want {
					t.Fatalf("round %d: waiter saw %+v, want %+v", round, st, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: a waiter was never woken", round)
			}
		}
		if !r.isDone() || r.err != nil {
			t.Fatalf("round %d: state %d err %v", round, r.state.Load(), r.err)
		}
	}
}

// TestPingPongDrivesConnection: a ping-pong through RecvBlocking gets
// every echo right, its receives drive the connection (turn counts the
// drives; a loaded machine may let the reader goroutine read some
// messages first), and the connection is left in grace.
func TestPingPongDrivesConnection(t *testing.T) { bothPaths(t, testPingPongDrivesConnection) }

func testPingPongDrivesConnection(t *testing.T) {
	checkNoLeak(t)
	ctx, eps := twoRanks(t, 20*time.Second)
	c0, c1 := comm.NewWorld(eps[0]), comm.NewWorld(eps[1])
	const iters = 300
	errc := make(chan error, 1)
	go func() {
		b := make([]byte, 8)
		for i := 0; i < iters; i++ {
			if _, err := c1.Recv(ctx, 0, 0, b); err != nil {
				errc <- err
				return
			}
			if err := c1.Send(ctx, 0, 0, b); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	b := make([]byte, 8)
	for i := 0; i < iters; i++ {
		binary.LittleEndian.PutUint64(b, uint64(i))
		if err := c0.Send(ctx, 1, 0, b); err != nil {
			t.Fatal(err)
		}
		if _, err := c0.Recv(ctx, 1, 0, b); err != nil {
			t.Fatal(err)
		}
		if got := binary.LittleEndian.Uint64(b); got != uint64(i) {
			t.Fatalf("round %d: echo of %d", i, got)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	turn := eps[0].peers[1].turn.Load()
	if turn&turnMask != turnGrace {
		t.Errorf("after the loop the connection is in state %d, want grace", turn&turnMask)
	}
	if drives := turn >> turnShift; drives == 0 {
		t.Errorf("none of %d receives drove the connection", iters)
	}
}

// TestDriveTakesGraceWithoutLock: a drive that finds the connection in
// grace takes it with no lock (here dmu is held by the test throughout),
// and leaves it in grace with one more drive counted.
func TestDriveTakesGraceWithoutLock(t *testing.T) {
	checkNoLeak(t)
	ctx, eps := twoRanks(t, 20*time.Second)
	p := eps[0].peers[1]
	doneReq := func() *request {
		r := newRequest(eps[0])
		r.complete(comm.Status{}, nil)
		return r
	}
	// The watchdog may hand a grace back to the reader goroutine after a
	// tick or two (tens of ms); a stalled machine gets a few attempts.
	for attempt := 0; attempt < 5; attempt++ {
		p.drive(ctx, doneReq()) // from free or grace: ends in grace
		before := p.turn.Load()
		if before&turnMask != turnGrace {
			t.Fatalf("after a drive the connection is in state %d, want grace", before&turnMask)
		}
		p.dmu.Lock()
		finished := make(chan struct{})
		go func() {
			p.drive(ctx, doneReq())
			close(finished)
		}()
		select {
		case <-finished:
			p.dmu.Unlock()
			if after := p.turn.Load(); after != before+1<<turnShift {
				t.Fatalf("turn went from %#x to %#x, want one more drive in grace", before, after)
			}
			return
		case <-time.After(500 * time.Millisecond):
			p.dmu.Unlock() // the grace ended meanwhile: the drive took the locked way
			<-finished
		}
	}
	t.Fatal("a drive from grace waited for dmu in every attempt")
}

// TestReaderHandOverUnderPauses: receives separated by pauses of 0 to 40
// ms, so that connections go back and forth between the reader goroutine
// (after the watchdog's hand-back) and receiving drivers at every phase of
// the hand-over, while the sender keeps the stream busy. Every message
// must arrive whole and in order; a second reader on the connection
// desynchronizes the frame stream (and -race reports the shared buffer).
// The reader goroutine used to re-enter its read section after a driver
// had taken the connection and left it in grace, racing the next driver.
func TestReaderHandOverUnderPauses(t *testing.T) {
	checkNoLeak(t)
	ctx, eps := twoRanks(t, 60*time.Second)
	c0, c1 := comm.NewWorld(eps[0]), comm.NewWorld(eps[1])
	const cycles, burst = 300, 4
	errc := make(chan error, 1)
	go func() {
		for i := 0; i < cycles*burst; i++ {
			if err := c0.Send(ctx, 1, 7, seqMsg(0, i, i%700)); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	rng := rand.New(rand.NewPCG(5, 5))
	buf := make([]byte, 1024)
	for i := 0; i < cycles*burst; i++ {
		var st comm.Status
		var err error
		switch k := rng.IntN(8); {
		case k == 0:
			time.Sleep(time.Duration(rng.IntN(40_000)) * time.Microsecond)
			st, err = c1.Recv(ctx, 0, 7, buf)
		case k < 4:
			// Test hands the connection back to the reader goroutine at
			// once, and Wait takes it again right away.
			r := c1.Irecv(0, 7, buf)
			if _, _, err = r.Test(); err == nil {
				st, err = r.Wait(ctx)
			}
		default:
			st, err = c1.Recv(ctx, 0, 7, buf)
		}
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if _, seq, err := checkSeqMsg(buf, st); err != nil || seq != i {
			t.Fatalf("message %d: sequence %d, %v", i, seq, err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// TestReaderYieldsToGraceAfterLostRace: a driver slips in between the
// reader goroutine's turn and its read lock, reads its message and leaves
// the connection in grace. The reader goroutine must then stay out of the
// connection: the next driver takes a grace without the lock, so a reader
// goroutine blocked in a read there shares the stream with it (frames
// split between two readers: seen as "reserved header bytes set" under
// load before the fix).
func TestReaderYieldsToGraceAfterLostRace(t *testing.T) {
	checkNoLeak(t)
	ctx, eps := twoRanks(t, 20*time.Second)
	c0, c1 := comm.NewWorld(eps[0]), comm.NewWorld(eps[1])
	target := eps[1].peers[0]
	slipIn := make(chan struct{})
	slipped := make(chan struct{})
	var once sync.Once
	hook := func(p *peer) {
		if p != target {
			return
		}
		once.Do(func() {
			close(slipIn)
			<-slipped
		})
	}
	testHookReaderTurn.Store(&hook)
	defer testHookReaderTurn.Store(nil)
	buf := make([]byte, 64)
	// Message 0 makes the reader goroutine finish a frame and come back
	// to its turn, where the hook holds it.
	if err := c0.Send(ctx, 1, 7, []byte("m0")); err != nil {
		t.Fatal(err)
	}
	<-slipIn
	go func() {
		time.Sleep(50 * time.Millisecond) // let the driver below start reading
		c0.Send(ctx, 1, 7, []byte("m1"))
	}()
	for _, want := range []string{"m0", "m1"} {
		st, err := c1.Recv(ctx, 0, 7, buf)
		if err != nil || string(buf[:st.Count]) != want {
			t.Fatalf("got %q, %v; want %q", buf[:st.Count], err, want)
		}
	}
	if target.turn.Load()&turnMask != turnGrace {
		t.Fatalf("turn %d after the driver, want grace", target.turn.Load()&turnMask)
	}
	close(slipped)
	// The reader goroutine noted itself as reading at its turn; it must
	// drop that at once. The watchdog hands the grace back no sooner than
	// one tick (20 ms) after the drive, so 10 ms see the grace unchanged.
	deadline := time.Now().Add(10 * time.Millisecond)
	for {
		target.dmu.Lock()
		reading, turn := target.bgReading, target.turn.Load()&turnMask
		target.dmu.Unlock()
		if !reading || turn != turnGrace {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reader goroutine reads a connection left in grace")
		}
		time.Sleep(100 * time.Microsecond)
	}
	if err := c0.Send(ctx, 1, 7, []byte("m2")); err != nil {
		t.Fatal(err)
	}
	if st, err := c1.Recv(ctx, 0, 7, buf); err != nil || string(buf[:st.Count]) != "m2" {
		t.Fatalf("after the race: %q, %v", buf[:st.Count], err)
	}
}

// twoRanks joins two endpoints over loopback for a test, closed (and the
// context cancelled) when it ends.
func twoRanks(t *testing.T, timeout time.Duration) (context.Context, []*Endpoint) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	eps := joinLoopback(t, ctx, 2, Config{})
	t.Cleanup(func() {
		eps[1].Close()
		eps[0].Close()
	})
	return ctx, eps
}
