package swarm

import (
	"bytes"
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/local"
)

// Every rank ends with the root's bytes, and the fragments counted by the
// receivers add up to one copy of the message per non-root rank.
func TestBroadcastDeliversEveryByte(t *testing.T) {
	for _, tc := range []struct {
		n, m, root int
		p          Params
	}{
		{2, 1000, 0, Params{Fragment: 64}},
		{8, 100_000, 3, Params{Fragment: 1024, PeerSet: 3}},
		{13, 50_001, 12, Params{Fragment: 512, Connections: 2, Pipeline: 1}},
		{9, 40_000, 0, Params{Fragment: 256, Choke: true, ChokeInterval: 100 * time.Microsecond}},
	} {
		src := make([]byte, tc.m)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		var mu sync.Mutex
		total := 0
		err := local.Run(context.Background(), tc.n, func(ctx context.Context, c comm.Comm) error {
			buf := make([]byte, tc.m)
			if c.Rank() == tc.root {
				copy(buf, src)
			}
			st, err := Broadcast(ctx, c, tc.root, buf, tc.p)
			if err != nil {
				return err
			}
			if !bytes.Equal(buf, src) {
				t.Errorf("n=%d rank %d: wrong bytes", tc.n, c.Rank())
			}
			mu.Lock()
			for _, r := range st.Received {
				total += r.Fragments
			}
			mu.Unlock()
			return nil
		})
		if err != nil {
			t.Fatalf("n=%d: %v", tc.n, err)
		}
		frag := tc.p.WithDefaults().Fragment
		if want := (tc.n - 1) * ((tc.m + frag - 1) / frag); total != want {
			t.Errorf("n=%d: %d fragments received, want %d", tc.n, total, want)
		}
	}
}
