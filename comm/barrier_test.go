package comm

import (
	"context"
	"errors"
	"testing"
)

// ownBarrier is a communicator with a barrier of its own; its other
// methods are absent (nil), so any message Barrier tried to send would
// panic.
type ownBarrier struct {
	Comm
	calls int
	err   error
}

func (c *ownBarrier) Barrier(ctx context.Context) error {
	c.calls++
	return c.err
}

// TestBarrierUsesTheCommsOwnBarrier: a Barrierer's barrier replaces the
// dissemination barrier, its error included.
func TestBarrierUsesTheCommsOwnBarrier(t *testing.T) {
	c := &ownBarrier{}
	if err := Barrier(context.Background(), c); err != nil || c.calls != 1 {
		t.Fatalf("Barrier: %v after %d calls of the communicator's own, want nil after 1", err, c.calls)
	}
	c.err = errors.New("rank 3 failed")
	if err := Barrier(context.Background(), c); !errors.Is(err, c.err) || c.calls != 2 {
		t.Fatalf("Barrier: %v after %d calls, want the communicator's error after 2", err, c.calls)
	}
}
