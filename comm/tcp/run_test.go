package tcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"netaware/comm"
)

// runProcesses runs tcp.Run for every rank of a loopback world of n, each
// rank as it would run in a process of its own, and returns each rank's
// error.
func runProcesses(t *testing.T, n int, body func(ctx context.Context, c comm.Comm) error) []error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			env := Env{Rank: r, Size: n, Coordinator: ln.Addr().String(), Token: testToken, Listen: "127.0.0.1"}
			opt := Options{Config: Config{Logger: quietLogger()}}
			if r == 0 {
				opt.Listener = ln
			}
			errs[r] = Run(ctx, env, opt, body)
		}(r)
	}
	wg.Wait()
	return errs
}

func TestRunExchanges(t *testing.T) {
	checkNoLeak(t)
	errs := runProcesses(t, 3, func(ctx context.Context, c comm.Comm) error {
		// Every rank sends its rank to the next one and checks what the
		// previous one sent.
		next, prev := (c.Rank()+1)%c.Size(), (c.Rank()+c.Size()-1)%c.Size()
		got := make([]byte, 1)
		rq := c.Irecv(prev, 5, got)
		if err := c.Send(ctx, next, 5, []byte{byte(c.Rank())}); err != nil {
			return err
		}
		if _, err := rq.Wait(ctx); err != nil {
			return err
		}
		if int(got[0]) != prev {
			return fmt.Errorf("rank %d got %d from %d", c.Rank(), got[0], prev)
		}
		return nil
	})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

func TestRunAbortsFailedRank(t *testing.T) {
	checkNoLeak(t)
	boom := errors.New("boom")
	errs := runProcesses(t, 3, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 2 {
			return boom
		}
		// Without the abort this receive would wait for rank 2 until
		// the heartbeat gives up; with it, it fails at once naming rank 2.
		_, err := c.Recv(ctx, 2, 0, make([]byte, 1))
		var re *comm.RankError
		if !errors.As(err, &re) || re.Rank != 2 || !strings.Contains(err.Error(), "boom") {
			return fmt.Errorf("receive from the failed rank: %v, want an error naming rank 2 and its cause", err)
		}
		return nil
	})
	if errs[0] != nil || errs[1] != nil {
		t.Errorf("surviving ranks: %v, %v", errs[0], errs[1])
	}
	if !errors.Is(errs[2], boom) || !strings.HasPrefix(errs[2].Error(), "rank 2 of 3: ") {
		t.Errorf("failed rank returned %v, want rank 2 of 3: boom", errs[2])
	}
}
