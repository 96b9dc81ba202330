package probe

import (
	"context"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/local"
	"netaware/dataset"
)

func withTimeout(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Functional: the PLogP protocol completes in-process and fills every size.
func TestPLogPLocalProtocol(t *testing.T) {
	p := dataset.PLogPParams{MaxBytes: 4096, Reps: 3, SatMax: 80, MaxExtra: 4}
	var res *dataset.PLogPResult
	err := local.Run(withTimeout(t), 2, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 0 {
			r, err := PLogPPair(ctx, c, 1, p)
			res = r
			return err
		}
		return PLogPServe(ctx, c, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	base := len(p.WithDefaults().Sizes())
	if len(res.Sizes) < base || len(res.Sizes) > base+4 {
		t.Fatalf("%d sizes, want %d base + at most 4 extra", len(res.Sizes), base)
	}
	for i, s := range res.Sizes {
		if s.RTT.N != 3 || s.Os.N != 3 || s.Or.N != 3 {
			t.Errorf("size %d: sample counts %d %d %d", s.Bytes, s.RTT.N, s.Os.N, s.Or.N)
		}
		if i > 0 && s.Bytes <= res.Sizes[i-1].Bytes {
			t.Errorf("sizes not ascending at %d", i)
		}
		if s.GMethod != "saturation" || s.SatMessages < 10 || s.SatMessages > 80 {
			t.Errorf("size %d: g by %q with %d messages", s.Bytes, s.GMethod, s.SatMessages)
		}
		if s.RTT.Min <= 0 {
			t.Errorf("size %d: rtt %v", s.Bytes, s.RTT)
		}
	}
}

// Functional: RTTInitiate against RTTServe, then the server is stopped.
func TestRTTServeAnyInitiator(t *testing.T) {
	got := make([]dataset.RTTResult, 3)
	err := local.Run(withTimeout(t), 3, func(ctx context.Context, c comm.Comm) error {
		switch c.Rank() {
		case 0:
			return RTTServe(ctx, c)
		case 1:
			r, err := RTTInitiate(ctx, c, 0, dataset.RTTParams{})
			got[1] = r
			if err != nil {
				return err
			}
			// rank 2 waits for rank 1 before it measures and stops the server
			return c.Send(ctx, 2, 0, nil)
		default:
			if _, err := c.Recv(ctx, 1, 0, nil); err != nil {
				return err
			}
			r, err := RTTInitiate(ctx, c, 0, dataset.RTTParams{Bytes: 64})
			got[2] = r
			if err != nil {
				return err
			}
			return RTTStopServer(ctx, c, 0)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got[1:] {
		if len(r.RoundsS) != 3 || r.MinS <= 0 || r.MinS > r.MaxS {
			t.Errorf("bad result %+v", r)
		}
		for _, n := range r.Exchanges {
			if n < 10 || n > 30 {
				t.Errorf("round of %d exchanges, want 10..30", n)
			}
		}
	}
}

func TestHockneyAndBandwidthLocal(t *testing.T) {
	var h *dataset.HockneyResult
	var b *dataset.BandwidthResult
	err := local.Run(withTimeout(t), 2, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 0 {
			var err error
			if h, err = HockneyPair(ctx, c, 1, dataset.HockneyParams{MaxBytes: 1 << 16, Reps: 4}); err != nil {
				return err
			}
			b, err = BandwidthPair(ctx, c, 1, dataset.BandwidthParams{Bytes: 1 << 20, Reps: 2})
			return err
		}
		if err := PLogPServe(ctx, c, 0); err != nil {
			return err
		}
		return PLogPServe(ctx, c, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	if h.Observations != 4*len(dataset.HockneyParams{MaxBytes: 1 << 16}.WithDefaults().Sizes()) || len(h.Sizes) != 18 {
		t.Errorf("hockney: %d observations, %d sizes", h.Observations, len(h.Sizes))
	}
	if b.Bandwidth.N != 2 || b.BandwidthBps <= 0 {
		t.Errorf("bandwidth %+v", b)
	}
}
