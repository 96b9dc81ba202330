package local_test

import (
	"context"
	"errors"
	"testing"

	"netaware/comm"
	"netaware/comm/commtest"
	"netaware/comm/local"
)

func TestConformance(t *testing.T) {
	commtest.Run(t, local.Run, 1, 2, 5, 32)
}

func TestFailingRankAbortsOthers(t *testing.T) {
	boom := errors.New("boom")
	err := local.Run(context.Background(), 4, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 2 {
			return boom
		}
		_, err := c.Recv(ctx, 2, 0, make([]byte, 1))
		var re *comm.RankError
		if !errors.As(err, &re) || re.Rank != 2 {
			t.Errorf("rank %d: pending receive failed with %v, want an error naming rank 2", c.Rank(), err)
		}
		return err
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Run returned %v, want the failing rank's error", err)
	}
}
