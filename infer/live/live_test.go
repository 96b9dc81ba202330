package live

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/local"
)

// TestProtocolCompletesOnEveryRank: the tree circulates, every rank ends
// with the same tree holding every rank (real clock: the shape is not
// checked here, only the protocol).
func TestProtocolCompletesOnEveryRank(t *testing.T) {
	for _, n := range []int{1, 2, 3, 12, 25} {
		trees := make([][]byte, n)
		err := local.Run(context.Background(), n, func(ctx context.Context, c comm.Comm) error {
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			p := DefaultParams()
			p.Rounds, p.MaxExchanges = 1, 3
			res, err := Infer(ctx, c, p)
			if err != nil {
				return err
			}
			if got := len(res.Tree.Ranks()); got != n {
				return fmt.Errorf("tree has %d ranks, want %d", got, n)
			}
			trees[c.Rank()], _ = res.Tree.MarshalBinary()
			return comm.Barrier(ctx, c)
		})
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		for r := 1; r < n; r++ {
			if string(trees[r]) != string(trees[0]) {
				t.Fatalf("n=%d: rank %d got a different tree", n, r)
			}
		}
	}
}

// TestShiraiPingPongStopsAfterTenStale: a round ends after ten exchanges
// without a new best, or after thirty; three rounds; min and max of the
// rounds' bests (Fig. 6).
func TestShiraiPingPongStopsAfterTenStale(t *testing.T) {
	// Round 1 improves at exchanges 1..5, then stalls: 5 + 10 = 15 exchanges.
	// Round 2 keeps improving: 30 exchanges. Round 3 never improves after
	// its first: 11 exchanges.
	var seq []time.Duration
	for i := 0; i < 5; i++ {
		seq = append(seq, time.Duration(100-i)*time.Microsecond)
	}
	for i := 0; i < 10; i++ {
		seq = append(seq, 200*time.Microsecond)
	}
	for i := 0; i < 30; i++ {
		seq = append(seq, time.Duration(300-i)*time.Microsecond)
	}
	for i := 0; i < 11; i++ {
		seq = append(seq, 50*time.Microsecond)
	}
	k := 0
	seed := Params{Rounds: 3, MaxExchanges: 30, Stale: 10} // Fig. 6's values
	res, err := MeasurePair(seed, func() (time.Duration, error) {
		if k >= len(seq) {
			return 0, fmt.Errorf("exchange %d beyond the protocol's", k)
		}
		k++
		return seq[k-1], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if k != len(seq) {
		t.Fatalf("%d exchanges, want %d", k, len(seq))
	}
	if res.Min != 50e-6 || res.Max != 271e-6 || res.Next != 96e-6 {
		t.Fatalf("min %g max %g next %g, want 50us, 271us and 96us", res.Min, res.Max, res.Next)
	}
}

// TestJoinedCountsAlongTheChain: every rank reports itself once it is in
// the tree, in rank order, up to the world size.
func TestJoinedCountsAlongTheChain(t *testing.T) {
	const n = 12
	var mu sync.Mutex
	var got []int
	err := local.Run(context.Background(), n, func(ctx context.Context, c comm.Comm) error {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		p := DefaultParams()
		p.Rounds, p.MaxExchanges = 1, 3
		p.Joined = func(inTree, total int) {
			mu.Lock()
			defer mu.Unlock()
			if total != n {
				t.Errorf("Joined(%d, %d): total is not the world size %d", inTree, total, n)
			}
			got = append(got, inTree)
		}
		_, err := Infer(ctx, c, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range got {
		if k != i+1 {
			t.Fatalf("Joined counts %v, want 1 to %d in order", got, n)
		}
	}
	if len(got) != n {
		t.Fatalf("Joined counts %v, want 1 to %d", got, n)
	}
}
