package tcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/commtest"
)

const testToken = "test-token-0123456789"

// quietLogger drops logs unless a test wants to see them.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// joinLoopback joins n endpoints over 127.0.0.1 in this process.
func joinLoopback(t testing.TB, ctx context.Context, n int, cfg Config) []*Endpoint {
	t.Helper()
	eps, err := tryJoinLoopback(ctx, n, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

func tryJoinLoopback(ctx context.Context, n int, cfg Config) ([]*Endpoint, error) {
	cfg.NoShm = cfg.NoShm || testTCPOnly
	return JoinLoopback(ctx, n, cfg)
}

// testTCPOnly makes the test helpers join worlds with the intra-host path
// off (set by bothPaths; no test here runs in parallel).
var testTCPOnly bool

// bothPaths runs f on the default world of this process (ranks of one
// machine: the intra-host path) and on loopback TCP.
func bothPaths(t *testing.T, f func(t *testing.T)) {
	t.Run("shm", f)
	t.Run("tcp", func(t *testing.T) {
		testTCPOnly = true
		defer func() { testTCPOnly = false }()
		f(t)
	})
}

// runLoopback is a commtest.Runner over real TCP on loopback.
func runLoopback(cfg Config) commtest.Runner {
	return func(ctx context.Context, n int, body func(ctx context.Context, c comm.Comm) error) error {
		cfg.NoShm = cfg.NoShm || testTCPOnly
		return RunLoopback(ctx, n, cfg, body)
	}
}

// checkNoLeak fails the test if goroutines started during it are still
// running shortly after it ends.
func checkNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("goroutine leak: %d before, %d after\n%s", before, n, buf)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

func TestConformance(t *testing.T) { bothPaths(t, testConformance) }

func testConformance(t *testing.T) {
	checkNoLeak(t)
	// 32 ranks with ~3000 goroutines on a shared CI machine (or under the
	// race detector) can starve a connection for seconds: the heartbeat
	// timeout is raised so that this semantic suite never fails on a
	// false death (fault detection has its own tests).
	commtest.Run(t, runLoopback(Config{HeartbeatTimeout: 30 * time.Second}), 1, 2, 5, 32)
}

func TestLargeMessagesBothPaths(t *testing.T) { bothPaths(t, testLargeMessagesBothPaths) }

func testLargeMessagesBothPaths(t *testing.T) {
	checkNoLeak(t)
	// 3 MiB messages: one received into a posted buffer, one arriving
	// unexpected and claimed late, one truncated; data must be intact.
	const size = 3<<20 + 17
	pattern := func(seed byte) []byte {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(i*7) ^ seed
		}
		return b
	}
	err := runLoopback(Config{})(context.Background(), 2, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 0 {
			for i := byte(0); i < 3; i++ {
				if err := c.Send(ctx, 1, int(i), pattern(i)); err != nil {
					return err
				}
			}
			return c.Ssend(ctx, 1, 9, pattern(9))
		}
		buf := make([]byte, size)
		if st, err := c.Recv(ctx, 0, 0, buf); err != nil || st.Count != size || !bytes.Equal(buf, pattern(0)) {
			return fmt.Errorf("posted receive: %v %+v", err, st)
		}
		time.Sleep(50 * time.Millisecond) // let message 1 arrive unexpected
		if st, err := c.Recv(ctx, 0, 1, buf); err != nil || st.Count != size || !bytes.Equal(buf, pattern(1)) {
			return fmt.Errorf("unexpected receive: %v %+v", err, st)
		}
		if _, err := c.Recv(ctx, 0, 2, buf[:1000]); !errors.Is(err, comm.ErrTruncate) {
			return fmt.Errorf("truncated receive: %v", err)
		}
		if st, err := c.Recv(ctx, 0, 9, buf); err != nil || !bytes.Equal(buf[:st.Count], pattern(9)) {
			return fmt.Errorf("ssend receive: %v %+v", err, st)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestWrongTokenRefused(t *testing.T) {
	checkNoLeak(t)
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := Config{Logger: logger, BootstrapTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	var ep0, ep1 *Endpoint
	var err0, err1, errBad error
	wg.Add(2)
	go func() {
		defer wg.Done()
		ep0, err0 = JoinWith(ctx, Env{Rank: 0, Size: 2, Token: testToken}, Options{Config: cfg, Listener: ln})
	}()
	// An intruder with a wrong token is refused; the real rank 1 gets in.
	_, errBad = JoinWith(ctx, Env{Rank: 1, Size: 2, Coordinator: ln.Addr().String(), Token: "wrong", Listen: "127.0.0.1"}, Options{Config: cfg})
	go func() {
		defer wg.Done()
		ep1, err1 = JoinWith(ctx, Env{Rank: 1, Size: 2, Coordinator: ln.Addr().String(), Token: testToken, Listen: "127.0.0.1"}, Options{Config: cfg})
	}()
	wg.Wait()
	if !errors.Is(errBad, ErrAuth) {
		t.Errorf("intruder got %v, want ErrAuth", errBad)
	}
	if err0 != nil || err1 != nil {
		t.Fatalf("legitimate ranks failed: %v / %v", err0, err1)
	}
	defer ep0.Close()
	defer ep1.Close()
	c0, c1 := comm.NewWorld(ep0), comm.NewWorld(ep1)
	go c0.Send(ctx, 1, 0, []byte("hi"))
	b := make([]byte, 2)
	if _, err := c1.Recv(ctx, 0, 0, b); err != nil || string(b) != "hi" {
		t.Fatalf("after refusal: %v %q", err, b)
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	if !strings.Contains(out, "refused connection") || !strings.Contains(out, "127.0.0.1:") {
		t.Errorf("refusal not logged with the peer's address:\n%s", out)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestCrashedRankFailsEveryone: a rank whose sockets vanish without a
// goodbye (as when its process is killed) fails every other rank's
// pending and future calls with an error naming it.
func TestCrashedRankFailsEveryone(t *testing.T) { bothPaths(t, testCrashedRankFailsEveryone) }

func testCrashedRankFailsEveryone(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n, dead = 4, 2
	eps := joinLoopback(t, ctx, n, Config{})
	errs := make(chan error, n)
	for r := 0; r < n; r++ {
		if r == dead {
			continue
		}
		go func(r int) {
			// A receive from some other live rank that never sends: only
			// the failure can end it.
			_, err := comm.NewWorld(eps[r]).Recv(ctx, (r+1)%n, 0, make([]byte, 8))
			errs <- err
		}(r)
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	eps[dead].closing.Store(true) // as if killed: its own readers say nothing
	for _, p := range eps[dead].peers {
		if p != nil {
			p.conn.Close() // no goodbye
		}
	}
	for i := 0; i < n-1; i++ {
		err := <-errs
		var re *comm.RankError
		if !errors.As(err, &re) || re.Rank != dead {
			t.Errorf("pending call failed with %v, want a RankError naming rank %d", err, dead)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("detection took %v", d)
	}
	for r := 0; r < n; r++ {
		if r == dead {
			continue
		}
		err := comm.NewWorld(eps[r]).Send(ctx, (r+1)%n, 0, []byte{1})
		var re *comm.RankError
		if !errors.As(err, &re) || re.Rank != dead {
			t.Errorf("rank %d: later send failed with %v, want a RankError naming rank %d", r, err, dead)
		}
	}
	for _, e := range eps {
		e.Close()
	}
}

// TestSilentRankDetected: a rank that stops sending anything (a hung
// process: no FIN, no RST, its kernel still acknowledges) is declared dead
// by the heartbeat watchdog once the hung timeout has passed.
func TestSilentRankDetected(t *testing.T) { bothPaths(t, testSilentRankDetected) }

func testSilentRankDetected(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := Config{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 500 * time.Millisecond, HungTimeout: 1500 * time.Millisecond, CloseTimeout: time.Second}
	eps := joinLoopback(t, ctx, 3, cfg)
	// Rank 1 goes mute: holding its write locks stops its heartbeats.
	for _, p := range eps[1].peers {
		if p != nil {
			p.wmu.Lock()
		}
	}
	start := time.Now()
	_, err := comm.NewWorld(eps[0]).Recv(ctx, 2, 0, make([]byte, 1))
	var re *comm.RankError
	if !errors.As(err, &re) || re.Rank != 1 || !strings.Contains(err.Error(), "hung") {
		t.Errorf("got %v, want a RankError naming silent rank 1, hung", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("silence detected after %v", d)
	}
	for _, p := range eps[1].peers {
		if p != nil {
			p.wmu.Unlock()
		}
	}
	for _, e := range eps {
		e.Close()
	}
}

// TestStalledRankIsNotDeclaredDead: a rank silent for five times the
// heartbeat timeout while its host still acknowledges (a process stopped
// or starved of CPU on a loaded machine, as under three emu campaigns at
// once) is waited for: after the stall its message arrives and nobody has
// aborted. Killed afterwards (its sockets close without a goodbye), it is
// still detected within a second.
func TestStalledRankIsNotDeclaredDead(t *testing.T) { bothPaths(t, testStalledRankIsNotDeclaredDead) }

func testStalledRankIsNotDeclaredDead(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := Config{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 300 * time.Millisecond, HungTimeout: 20 * time.Second, CloseTimeout: time.Second}
	eps := joinLoopback(t, ctx, 3, cfg)
	defer func() {
		for _, e := range eps {
			e.Close()
		}
	}()
	// Rank 1 stalls: holding its write locks stops everything it sends,
	// heartbeats included.
	for _, p := range eps[1].peers {
		if p != nil {
			p.wmu.Lock()
		}
	}
	got := make(chan error, 1)
	go func() {
		b := make([]byte, 5)
		_, err := comm.NewWorld(eps[0]).Recv(ctx, 1, 0, b)
		if err == nil && string(b) != "awake" {
			err = fmt.Errorf("received %q", b)
		}
		got <- err
	}()
	time.Sleep(5 * cfg.HeartbeatTimeout)
	for _, p := range eps[1].peers {
		if p != nil {
			p.wmu.Unlock()
		}
	}
	if err := comm.NewWorld(eps[1]).Send(ctx, 0, 0, []byte("awake")); err != nil {
		t.Fatalf("rank 1 after its stall: %v", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("rank 0's receive from the stalled rank: %v", err)
	}
	for r, e := range eps {
		if err := e.err(); err != nil {
			t.Errorf("rank %d aborted: %v", r, err)
		}
	}
	pending := make(chan error, 1)
	go func() {
		_, err := comm.NewWorld(eps[0]).Recv(ctx, 2, 0, make([]byte, 1))
		pending <- err
	}()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	eps[1].closing.Store(true) // as if killed: its own readers say nothing
	for _, p := range eps[1].peers {
		if p != nil {
			p.conn.Close() // no goodbye
		}
	}
	err := <-pending
	var re *comm.RankError
	if !errors.As(err, &re) || re.Rank != 1 {
		t.Errorf("after rank 1 was killed: %v, want a RankError naming rank 1", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("killed rank detected after %v", d)
	}
}

func TestAbortNamesFailedRank(t *testing.T) { bothPaths(t, testAbortNamesFailedRank) }

func testAbortNamesFailedRank(t *testing.T) {
	checkNoLeak(t)
	boom := errors.New("boom")
	err := runLoopback(Config{})(context.Background(), 4, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 3 {
			return boom
		}
		_, err := c.Recv(ctx, comm.AnySource, 0, make([]byte, 1))
		var re *comm.RankError
		if !errors.As(err, &re) || re.Rank != 3 || !strings.Contains(err.Error(), "boom") {
			return fmt.Errorf("pending receive failed with %v, want an error naming rank 3 and its cause", err)
		}
		return nil
	})
	if !errors.Is(err, boom) || strings.Count(err.Error(), "rank") != 1 {
		t.Fatalf("got %v, want only rank 3's error", err)
	}
}

func TestFinishedRankFailsReceivesFromIt(t *testing.T) {
	bothPaths(t, testFinishedRankFailsReceivesFromIt)
}

func testFinishedRankFailsReceivesFromIt(t *testing.T) {
	checkNoLeak(t)
	err := runLoopback(Config{})(context.Background(), 2, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 0 {
			return c.Send(ctx, 1, 0, []byte("last"))
		}
		b := make([]byte, 4)
		if _, err := c.Recv(ctx, 0, 0, b); err != nil || string(b) != "last" {
			return fmt.Errorf("message sent before goodbye: %v %q", err, b)
		}
		_, err := c.Recv(ctx, 0, 0, b)
		var re *comm.RankError
		if !errors.As(err, &re) || re.Rank != 0 || !errors.Is(err, errFinished) {
			return fmt.Errorf("receive from a finished rank: got %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMaxMessageEnforced(t *testing.T) { bothPaths(t, testMaxMessageEnforced) }

func testMaxMessageEnforced(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eps := joinLoopback(t, ctx, 2, Config{MaxMessage: 1000})
	defer func() {
		for _, e := range eps {
			e.Close()
		}
	}()
	c0 := comm.NewWorld(eps[0])
	if err := c0.Send(ctx, 1, 0, make([]byte, 1001)); err == nil || !strings.Contains(err.Error(), "maximum message size") {
		t.Errorf("oversized send: %v", err)
	}
	// A peer announcing more than the limit is a protocol error naming it.
	p := eps[0].peers[1]
	h := header{kind: kindData, tag: 0, length: 1 << 40, cid: comm.WorldContext}
	p.wmu.Lock()
	h.encode(p.hbuf[:])
	p.conn.Write(p.hbuf[:])
	p.wmu.Unlock()
	_, err := comm.NewWorld(eps[1]).Recv(ctx, 0, 0, make([]byte, 10))
	var re *comm.RankError
	if !errors.As(err, &re) || re.Rank != 0 || !errors.Is(err, errProtocol) {
		t.Errorf("got %v, want a protocol error naming rank 0", err)
	}
}

func TestDetect(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want Env
		ok   bool
	}{
		{map[string]string{"NETAWARE_RANK": "3", "NETAWARE_SIZE": "8", "NETAWARE_COORDINATOR": "h:1", "NETAWARE_TOKEN": "t"},
			Env{Rank: 3, Size: 8, Coordinator: "h:1", Token: "t", Source: "netaware"}, true},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4", "PMIX_RANK": "1"},
			Env{Rank: 1, Size: 4, Source: "openmpi"}, true},
		{map[string]string{"PMIX_RANK": "2", "SLURM_NTASKS": "3"}, Env{Rank: 2, Size: 3, Source: "pmix"}, true},
		{map[string]string{"PMI_RANK": "0", "PMI_SIZE": "2"}, Env{Rank: 0, Size: 2, Source: "pmi"}, true},
		{map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "6", "NETAWARE_LISTEN": "10.0.0.5"}, Env{Rank: 5, Size: 6, Listen: "10.0.0.5", Source: "slurm"}, true},
		{map[string]string{"SLURM_PROCID": "6", "SLURM_NTASKS": "6"}, Env{}, false},
		{map[string]string{"NETAWARE_RANK": "x", "NETAWARE_SIZE": "2"}, Env{}, false},
		{map[string]string{}, Env{}, false},
	}
	for i, c := range cases {
		got, ok := detect(func(k string) string { return c.env[k] })
		if ok != c.ok || got != c.want {
			t.Errorf("case %d: got %+v %v, want %+v %v", i, got, ok, c.want, c.ok)
		}
	}
}

func TestListenRefusesMissingHost(t *testing.T) {
	if _, err := listenExact(":0"); err == nil {
		t.Fatal("listening on \":0\" (every interface) was accepted silently")
	}
	ln, err := listenExact("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if !strings.HasPrefix(ln.Addr().String(), "127.0.0.1:") {
		t.Errorf("bound %s", ln.Addr())
	}
}

func TestJoinNeedsToken(t *testing.T) {
	_, _, err := Join(context.Background(), Env{Rank: 1, Size: 2, Coordinator: "127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), EnvToken) {
		t.Fatalf("got %v, want an error naming %s", err, EnvToken)
	}
}

// TestPollingHandsConnectionBack: after a receive drove the connection
// (read it in the waiting goroutine), the connection is left unread for a
// moment; a poll with Test must hand it back to the reader goroutine at
// once, or a polling loop would wait for the watchdog's next tick.
func TestPollingHandsConnectionBack(t *testing.T) { bothPaths(t, testPollingHandsConnectionBack) }

func testPollingHandsConnectionBack(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eps := joinLoopback(t, ctx, 2, Config{})
	defer func() {
		for _, e := range eps {
			e.Close()
		}
	}()
	c0, c1 := comm.NewWorld(eps[0]), comm.NewWorld(eps[1])
	go c0.Send(ctx, 1, 0, []byte("x"))
	if _, err := c1.Recv(ctx, 0, 0, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	p := eps[1].peers[0]
	if p.turn.Load()&turnMask != turnGrace {
		t.Skip("the message arrived before the receive was posted: no drive took place")
	}
	r := c1.Irecv(0, 1, make([]byte, 1))
	if done, _, _ := r.Test(); done {
		t.Fatal("receive of a message never sent completed")
	}
	if p.turn.Load()&turnMask == turnGrace {
		t.Fatal("Test left the connection unread")
	}
	go c0.Send(ctx, 1, 1, []byte("y"))
	if _, err := r.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestPairwiseLargeExchange: two ranks that just drove each other's
// connection (a small receive) both send a message far larger than the
// socket buffers before receiving: each write blocks until the other side
// reads, which must happen although both are busy writing.
func TestPairwiseLargeExchange(t *testing.T) { bothPaths(t, testPairwiseLargeExchange) }

func testPairwiseLargeExchange(t *testing.T) {
	checkNoLeak(t)
	const size = 24 << 20
	err := runLoopback(Config{})(context.Background(), 2, func(ctx context.Context, c comm.Comm) error {
		peer := 1 - c.Rank()
		small := make([]byte, 1)
		if _, err := comm.Sendrecv(ctx, c, peer, 0, small, peer, 0, small); err != nil {
			return err
		}
		out := bytes.Repeat([]byte{byte(c.Rank() + 1)}, size)
		in := make([]byte, size)
		for round := 0; round < 2; round++ {
			if _, err := comm.Sendrecv(ctx, c, peer, 1, out, peer, 1, in); err != nil {
				return err
			}
			if in[0] != byte(peer+1) || in[size-1] != byte(peer+1) {
				return fmt.Errorf("round %d: corrupted payload", round)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWaitNamesMissingRank: a rank that never starts holds the world up;
// rank 0 reports it while waiting and names it when the wait times out.
func TestWaitNamesMissingRank(t *testing.T) {
	checkNoLeak(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := Config{BootstrapTimeout: 1500 * time.Millisecond}
	var mu sync.Mutex
	var seen [][]int
	waiting := func(registered int, missing []int) {
		mu.Lock()
		defer mu.Unlock()
		if registered+len(missing) != 3 {
			t.Errorf("waiting(%d, %v): registered and missing are not the world of 3", registered, missing)
		}
		seen = append(seen, append([]int(nil), missing...))
	}
	var wg sync.WaitGroup
	var err0, err1 error
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, err0 = JoinWith(ctx, Env{Rank: 0, Size: 3, Token: testToken}, Options{Config: cfg, Listener: ln, Waiting: waiting})
	}()
	go func() {
		defer wg.Done()
		_, err1 = JoinWith(ctx, Env{Rank: 1, Size: 3, Coordinator: ln.Addr().String(), Token: testToken, Listen: "127.0.0.1"}, Options{Config: cfg})
	}()
	wg.Wait() // rank 2 never starts
	if err0 == nil || err1 == nil {
		t.Fatalf("a world missing rank 2 joined: rank 0 %v, rank 1 %v", err0, err1)
	}
	if !strings.Contains(err0.Error(), "missing: 2)") || !errors.Is(err0, context.DeadlineExceeded) {
		t.Errorf("rank 0's error does not name the missing rank 2: %v", err0)
	}
	mu.Lock()
	defer mu.Unlock()
	// Called at the start (1 and 2 missing), then with only 2 once rank 1
	// registered, and again every second while it stays missing.
	if len(seen) < 2 || !slices.Equal(seen[len(seen)-1], []int{2}) {
		t.Errorf("waiting saw %v, want at last [2]", seen)
	}
	for i := 1; i < len(seen); i++ {
		if len(seen[i]) > len(seen[i-1]) {
			t.Errorf("missing ranks grew: %v", seen)
		}
	}
}

func TestRankNames(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{2}, "2"},
		{[]int{1, 5}, "1, 5"},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, "1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more"},
	} {
		if got := rankNames(c.in); got != c.want {
			t.Errorf("rankNames(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
