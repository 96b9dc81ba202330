//go:build unix

package tcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"netaware/comm"
)

// stallConfig is the transport of TestStoppedProcessIsNotDeclaredDead's
// two processes: silence without acknowledgements would be fatal after
// 500 ms, as 5 s was before on a loaded machine.
var stallConfig = Config{
	HeartbeatInterval: 100 * time.Millisecond,
	HeartbeatTimeout:  500 * time.Millisecond,
	HungTimeout:       30 * time.Second,
	CloseTimeout:      time.Second,
	NoShm:             true,
	Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
}

// TestStoppedProcessIsNotDeclaredDead runs rank 1 as a second process on
// loopback TCP. Stopped (SIGSTOP) for four times the heartbeat timeout,
// it is silent while its kernel still acknowledges: after SIGCONT it
// answers and rank 0 has not aborted. Killed (SIGKILL), its kernel closes
// its socket and rank 0's pending receive fails naming it within 2 s.
func TestStoppedProcessIsNotDeclaredDead(t *testing.T) {
	if os.Getenv("NETAWARE_TEST_STALL_CHILD") == "1" {
		t.Skip("the child's side runs in TestStallChild")
	}
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const token = "f17-stall-test-token"
	child := exec.Command(os.Args[0], "-test.run=^TestStallChild$")
	child.Env = append(os.Environ(), "NETAWARE_TEST_STALL_CHILD=1", EnvRank+"=1", EnvSize+"=2",
		EnvCoordinator+"="+ln.Addr().String(), EnvToken+"="+token, EnvListen+"=127.0.0.1", EnvShm+"=0")
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { child.Wait(); close(exited) }()
	t.Cleanup(func() {
		child.Process.Kill()
		<-exited
	})
	ep, err := JoinWith(ctx, Env{Rank: 0, Size: 2, Coordinator: ln.Addr().String(), Token: token, Listen: "127.0.0.1", NoShm: true}, Options{Config: stallConfig, Listener: ln})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	w := comm.NewWorld(ep)
	ping := func() error {
		if err := w.Send(ctx, 1, 0, []byte{1}); err != nil {
			return err
		}
		b := make([]byte, 1)
		if _, err := w.Recv(ctx, 1, 0, b); err != nil {
			return err
		}
		if b[0] != 2 {
			return errors.New("wrong answer")
		}
		return nil
	}
	if err := ping(); err != nil {
		t.Fatalf("before the stop: %v", err)
	}
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * stallConfig.HeartbeatTimeout)
	if err := child.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := ping(); err != nil {
		t.Fatalf("rank 1 stopped for %v, then continued: %v", 4*stallConfig.HeartbeatTimeout, err)
	}
	if err := ep.err(); err != nil {
		t.Fatalf("rank 0 aborted: %v", err)
	}
	pending := make(chan error, 1)
	go func() {
		_, err := w.Recv(ctx, 1, 0, make([]byte, 1))
		pending <- err
	}()
	start := time.Now()
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err = <-pending
	var re *comm.RankError
	if !errors.As(err, &re) || re.Rank != 1 {
		t.Errorf("after rank 1 was killed: %v, want a RankError naming rank 1", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("killed rank detected after %v", d)
	}
}

// TestStallChild is rank 1 of TestStoppedProcessIsNotDeclaredDead: it
// answers every ping until its world ends.
func TestStallChild(t *testing.T) {
	if os.Getenv("NETAWARE_TEST_STALL_CHILD") != "1" {
		t.Skip("rank 1 of TestStoppedProcessIsNotDeclaredDead, started by it")
	}
	env, ok := Detect()
	if !ok {
		t.Fatal("no rank in the environment")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ep, err := JoinWith(ctx, env, Options{Config: stallConfig})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	w := comm.NewWorld(ep)
	b := make([]byte, 1)
	for {
		if _, err := w.Recv(ctx, 0, 0, b); err != nil {
			return
		}
		if err := w.Send(ctx, 0, 0, []byte{2}); err != nil {
			return
		}
	}
}
