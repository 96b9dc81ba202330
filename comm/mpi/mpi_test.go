//go:build mpi

package mpi

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/commtest"
)

// The tests run in two roles. Started by go test (no MPI launcher in the
// environment), TestUnderMPIRun re-executes this test binary under the
// library's own launcher and fails with the ranks' output if they fail;
// the TestRank* tests then skip. Under the launcher, TestMain initializes
// MPI and the TestRank* tests run on every rank.

// ranks is the world the launcher starts: commtest's largest check
// (sub-communicator isolation) needs 6.
const ranks = 6

var world *Comm

func TestMain(m *testing.M) {
	if !Launched() {
		os.Exit(m.Run())
	}
	w, err := Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	world = w
	flag.Parse()
	if w.Rank() != 0 && os.Getenv("NETAWARE_MPI_TEST_ALL_OUTPUT") == "" {
		// Every rank runs every test and the runner makes them agree on
		// each outcome, so rank 0's report is everyone's; the others'
		// stderr (panics, MPI's messages) still shows.
		os.Stdout, _ = os.Open(os.DevNull)
	}
	code := m.Run()
	if err := Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// mpirun runs this test binary on n ranks with the given -test.run
// pattern, bounded by timeout, and returns its output and error.
func mpirun(t *testing.T, n int, run string, timeout time.Duration, env ...string) (string, error) {
	t.Helper()
	path := launcher
	if p := os.Getenv("NETAWARE_MPIRUN"); p != "" {
		path = p
	}
	if _, err := exec.LookPath(path); err != nil {
		t.Skipf("%s not found (install %s's launcher, or set NETAWARE_MPIRUN): %v", path, library, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append(launcherArgs(n), os.Args[0], "-test.run", run, "-test.v")
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(append(append(os.Environ(), launcherEnv...), env...), "NETAWARE_MPI_TEST_CHILD=1")
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s did not finish within %v: %w", path, timeout, ctx.Err())
	}
	return out.String(), err
}

func TestUnderMPIRun(t *testing.T) {
	if Launched() {
		t.Skip("already under an MPI launcher")
	}
	out, err := mpirun(t, ranks, "^TestRank", 4*time.Minute)
	if err != nil || !strings.Contains(out, "\nPASS") {
		t.Fatalf("%s -n %d (%s): %v\n%s", launcher, ranks, library, err, out)
	}
	t.Logf("%s -n %d:\n%s", launcher, ranks, out)
}

// TestFailedRankEndsJob: a rank that fails ends the job through
// MPI_Abort, with a line naming it, while the other ranks wait for it.
func TestFailedRankEndsJob(t *testing.T) {
	if Launched() {
		t.Skip("already under an MPI launcher")
	}
	start := time.Now()
	out, err := mpirun(t, 3, "^TestRankFailure$", 2*time.Minute, "NETAWARE_MPI_TEST_FAIL=1")
	if err == nil {
		t.Fatalf("the job with a failed rank exited 0:\n%s", out)
	}
	if !strings.Contains(out, "netaware: rank 2 of 3 (MPI world, "+library+") failed: boom") {
		t.Fatalf("no line naming the failed rank 2 (%v):\n%s", err, out)
	}
	if el := time.Since(start); el > 90*time.Second {
		t.Errorf("the job took %v to end: the other ranks were not stopped", el)
	}
}

func TestRankFailure(t *testing.T) {
	if !Launched() || os.Getenv("NETAWARE_MPI_TEST_FAIL") == "" {
		t.Skip("run by TestFailedRankEndsJob")
	}
	if world.Rank() == 2 {
		time.Sleep(200 * time.Millisecond)
		Abort(errors.New("boom"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := world.Recv(ctx, 2, 0, make([]byte, 1))
	t.Fatalf("rank %d: receive from the failed rank returned %v instead of the job ending", world.Rank(), err)
}

// runner is a commtest.Runner over the MPI world: the first n ranks get a
// fresh communicator (Sub of 0..n-1), the others sit the check out, and
// every rank then learns every rank's error, so that all ranks agree on
// the outcome and go on to the same next test.
func runner(ctx context.Context, n int, body func(ctx context.Context, c comm.Comm) error) error {
	if n > world.Size() {
		return fmt.Errorf("check wants %d ranks, the MPI world has %d", n, world.Size())
	}
	var err error
	if world.Rank() < n {
		members := make([]int, n)
		for i := range members {
			members[i] = i
		}
		var sub comm.Comm
		if sub, err = world.Sub(members); err == nil {
			// A failing rank makes the others' receives time out
			// instead of hanging the job.
			bctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			err = body(bctx, sub)
			cancel()
		}
	}
	var msg []byte
	if err != nil {
		msg = []byte(err.Error())
	}
	all, gerr := world.allgather(msg)
	if gerr != nil {
		return fmt.Errorf("gathering the ranks' outcomes: %w", gerr)
	}
	for r, m := range all {
		if len(m) > 0 {
			return fmt.Errorf("rank %d: %s", r, m)
		}
	}
	return nil
}

func requireMPI(t *testing.T) {
	t.Helper()
	if !Launched() {
		t.Skip("runs on every rank under mpirun: TestUnderMPIRun starts it")
	}
}

func TestRankConformance(t *testing.T) {
	requireMPI(t)
	commtest.Run(t, runner, 1, 2, 5, ranks)
}

// TestRankTagsAndIdentity: system tags never match AnyTag receives, tags
// beyond MPI_TAG_UB are refused, and the identity carries MPI's processor
// name and this process's pid.
func TestRankTagsAndIdentity(t *testing.T) {
	requireMPI(t)
	err := runner(context.Background(), 2, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 0 {
			if err := c.Send(ctx, 1, comm.SystemTag(3), []byte("sys")); err != nil {
				return err
			}
			if err := c.Send(ctx, 1, 5, []byte("user")); err != nil {
				return err
			}
		} else {
			b := make([]byte, 8)
			st, err := c.Recv(ctx, comm.AnySource, comm.AnyTag, b)
			if err != nil || string(b[:st.Count]) != "user" || st.Tag != 5 || st.Source != 0 {
				return fmt.Errorf("AnyTag receive: %v %q %+v, want the user message", err, b[:st.Count], st)
			}
			st, err = c.Recv(ctx, 0, comm.SystemTag(3), b)
			if err != nil || string(b[:st.Count]) != "sys" || st.Tag != comm.SystemTag(3) {
				return fmt.Errorf("system receive: %v %q %+v", err, b[:st.Count], st)
			}
		}
		// A buffer inside an object that also holds Go pointers (cgo
		// refuses such an object as a pointer argument).
		h := &holder{c: c, next: &holder{}}
		heldOnHeap = h
		if _, err := comm.Sendrecv(ctx, c, 1-c.Rank(), 9, []byte{byte(c.Rank() + 1)}, 1-c.Rank(), 9, h.buf[:]); err != nil || h.buf[0] != byte(2-c.Rank()) {
			return fmt.Errorf("receive into a struct field: %v, got %d", err, h.buf[0])
		}
		if err := c.Send(ctx, 1-c.Rank(), state.tagUB+1, nil); err == nil {
			return fmt.Errorf("tag %d beyond MPI_TAG_UB accepted", state.tagUB+1)
		}
		id := c.Identity()
		if id.PID != os.Getpid() || id.Host == "" || id.Rank != c.Rank() {
			return fmt.Errorf("identity %+v", id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

type holder struct {
	c    comm.Comm
	next *holder
	buf  [16]byte
}

var heldOnHeap *holder

// TestRankCancel: a receive nobody sends to ends with the context's error
// when it is cancelled, and the communicator works afterwards (the
// cancelled receive does not take the next message).
func TestRankCancel(t *testing.T) {
	requireMPI(t)
	err := runner(context.Background(), 2, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 1 {
			cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			_, err := c.Recv(cctx, 0, 7, make([]byte, 4))
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("cancelled receive: %v, want DeadlineExceeded", err)
			}
			r := c.Irecv(0, 7, make([]byte, 4))
			if done, _, _ := r.Test(); done {
				return fmt.Errorf("receive completed before anything was sent")
			}
			if err := c.Send(ctx, 0, 1, []byte{1}); err != nil {
				return err
			}
			st, err := r.Wait(ctx)
			if err != nil || st.Count != 3 {
				return fmt.Errorf("receive after a cancelled one: %v %+v", err, st)
			}
			return nil
		}
		if _, err := c.Recv(ctx, 1, 1, make([]byte, 1)); err != nil {
			return err
		}
		return c.Send(ctx, 1, 7, []byte{1, 2, 3})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRankConcurrent: goroutines of every rank send and receive at once
// on the world and on a sub-communicator (MPI_THREAD_MULTIPLE).
func TestRankConcurrent(t *testing.T) {
	requireMPI(t)
	err := runner(context.Background(), 4, func(ctx context.Context, c comm.Comm) error {
		sub, err := c.Sub([]int{3, 2, 1, 0})
		if err != nil {
			return err
		}
		const per = 50
		errs := make(chan error, 2*c.Size())
		for g, cc := range []comm.Comm{c, sub} {
			for peer := 0; peer < cc.Size(); peer++ {
				go func() {
					sb, b := make([]byte, 1024), make([]byte, 1024)
					for i := 0; i < per; i++ {
						sb[0], sb[1] = byte(i), byte(g)
						if _, err := comm.Sendrecv(ctx, cc, peer, 10+g, sb, peer, 10+g, b); err != nil {
							errs <- err
							return
						}
						if b[0] != byte(i) || b[1] != byte(g) {
							errs <- fmt.Errorf("exchange %d with %d on comm %d: got %d/%d", i, peer, g, b[0], b[1])
							return
						}
					}
					errs <- nil
				}()
			}
		}
		for i := 0; i < 2*c.Size(); i++ {
			if err := <-errs; err != nil {
				return err
			}
		}
		return comm.Barrier(ctx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRankManySubs: code that makes a sub-communicator per operation (as
// the collectives do) and drops it does not run out of MPI context ids
// (MPICH has 2,048, each Sub takes two, so 1,100 Subs kept would exhaust
// them): dropped ones are freed.
func TestRankManySubs(t *testing.T) {
	requireMPI(t)
	err := runner(context.Background(), 3, func(ctx context.Context, c comm.Comm) error {
		in := make([]byte, 1)
		for i := 0; i < 1100; i++ {
			s, err := c.Sub([]int{2, 1, 0})
			if err != nil {
				return fmt.Errorf("sub %d: %w", i, err)
			}
			next, prev := (s.Rank()+1)%3, (s.Rank()+2)%3
			if _, err := comm.Sendrecv(ctx, s, next, 0, []byte{byte(i)}, prev, 0, in); err != nil || in[0] != byte(i) {
				return fmt.Errorf("sub %d: %v, got %d", i, err, in[0])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
