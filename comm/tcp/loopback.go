package tcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"

	"netaware/comm"
)

// JoinLoopback joins n endpoints over 127.0.0.1 inside this process, with a
// fresh random token: a real TCP world for tests and benchmarks that need
// the transport without starting processes. A zero cfg.Logger discards
// the logs.
func JoinLoopback(ctx context.Context, n int, cfg Config) ([]*Endpoint, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var secret [16]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return nil, err
	}
	token := hex.EncodeToString(secret[:])
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	eps := make([]*Endpoint, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			env := Env{Rank: r, Size: n, Coordinator: ln.Addr().String(), Token: token, Listen: "127.0.0.1"}
			opt := Options{Config: cfg}
			if r == 0 {
				opt.Listener = ln
			}
			eps[r], errs[r] = JoinWith(ctx, env, opt)
		}(r)
	}
	wg.Wait()
	ln.Close()
	if err := errors.Join(errs...); err != nil {
		for _, e := range eps {
			if e != nil {
				e.Close()
			}
		}
		return nil, err
	}
	return eps, nil
}

// RunLoopback runs body on n ranks of a loopback TCP world inside this
// process (see JoinLoopback): a failing rank aborts the world, so the
// others' pending calls fail with an error naming it, and every endpoint
// is closed at the end.
func RunLoopback(ctx context.Context, n int, cfg Config, body func(ctx context.Context, c comm.Comm) error) error {
	eps, err := JoinLoopback(ctx, n, cfg)
	if err != nil {
		return err
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, ep := range eps {
		wg.Add(1)
		go func(r int, ep *Endpoint) {
			defer wg.Done()
			if err := body(ctx, comm.NewWorld(ep)); err != nil {
				errs[r] = fmt.Errorf("rank %d: %w", r, err)
				ep.Abort(err)
			}
			ep.Close()
		}(r, ep)
	}
	wg.Wait()
	return errors.Join(errs...)
}
