package probe

import (
	"context"
	"fmt"
	"math"
	"time"

	"netaware/comm"
	"netaware/dataset"
)

// RTT control operations.
const (
	rttStart = 1 // an initiator starts a measurement with the receiver
	rttStop  = 2 // RTTServe returns
)

// RTTInitiate measures the round-trip time between the calling rank and
// peer, which must at the same time be in RTTRespond(ctx, c, me, p) or in
// RTTServe(ctx, c). It is the "rank X measures RTT with rank Y now" building
// block for adaptive algorithms (RTT-tree inference): nothing else about the
// two ranks needs to be coordinated beforehand, and both sides must pass
// equal params. Each exchange is timed by the initiator (seed 002: "each RTT
// is measured by the sender"); a round stops when its best has not improved
// for params.Stale exchanges or after params.MaxExchanges; after
// params.Rounds rounds the minimum and maximum of the rounds' bests are
// returned.
func RTTInitiate(ctx context.Context, c comm.Comm, peer int, p dataset.RTTParams) (dataset.RTTResult, error) {
	p = p.WithDefaults()
	fail := func(err error) (dataset.RTTResult, error) {
		return dataset.RTTResult{}, fmt.Errorf("rtt %d->%d: %w", c.Rank(), peer, err)
	}
	if peer == c.Rank() || peer < 0 || peer >= c.Size() {
		return fail(fmt.Errorf("bad peer"))
	}
	if err := c.Send(ctx, peer, tagRTTCtl, ctlMsg{Op: rttStart, A: int64(p.Bytes)}.encode()); err != nil {
		return fail(err)
	}
	ping := make([]byte, p.Bytes)
	pong := make([]byte, p.Bytes)
	clk := time.Duration(p.ClockOverheadS * 1e9)
	res := dataset.RTTResult{MinS: math.Inf(1), MaxS: math.Inf(-1)}
	ping[0] = 1
	for r := 0; r < p.Rounds; r++ {
		best := time.Duration(math.MaxInt64)
		stale, n := 0, 0
		for n < p.MaxExchanges && stale < p.Stale {
			t0 := c.Now()
			if err := c.Send(ctx, peer, tagRTTPing, ping); err != nil {
				return fail(err)
			}
			if _, err := c.Recv(ctx, peer, tagRTTPong, pong); err != nil {
				return fail(err)
			}
			rtt := c.Now() - t0 - clk
			n++
			if p.KeepSamples {
				res.SamplesS = append(res.SamplesS, rtt.Seconds())
			}
			if rtt < best {
				best, stale = rtt, 0
			} else {
				stale++
			}
		}
		b := best.Seconds()
		res.RoundsS = append(res.RoundsS, b)
		res.Exchanges = append(res.Exchanges, n)
		res.MinS = math.Min(res.MinS, b)
		res.MaxS = math.Max(res.MaxS, b)
	}
	ping[0] = 0 // tells the responder the measurement is over
	if err := c.Send(ctx, peer, tagRTTPing, ping); err != nil {
		return fail(err)
	}
	return res, nil
}

// RTTRespond answers one RTTInitiate from peer and returns when the
// initiator is done.
func RTTRespond(ctx context.Context, c comm.Comm, peer int, p dataset.RTTParams) error {
	buf := make([]byte, ctlSize)
	st, err := c.Recv(ctx, peer, tagRTTCtl, buf)
	if err != nil {
		return fmt.Errorf("rtt %d<-%d: %w", c.Rank(), peer, err)
	}
	m := decodeCtl(buf[:st.Count])
	if m.Op != rttStart {
		return fmt.Errorf("rtt %d<-%d: unexpected control message %d", c.Rank(), peer, m.Op)
	}
	return echo(ctx, c, peer, int(m.A))
}

// RTTServe answers RTTInitiate calls from any rank, one at a time, until
// some rank calls RTTStopServer for this rank. It lets a rank lend itself
// as an RTT target while another algorithm chooses pairs on the fly.
func RTTServe(ctx context.Context, c comm.Comm) error {
	buf := make([]byte, ctlSize)
	for {
		st, err := c.Recv(ctx, comm.AnySource, tagRTTCtl, buf)
		if err != nil {
			return fmt.Errorf("rtt server %d: %w", c.Rank(), err)
		}
		m := decodeCtl(buf[:st.Count])
		switch m.Op {
		case rttStop:
			return nil
		case rttStart:
			if err := echo(ctx, c, st.Source, int(m.A)); err != nil {
				return err
			}
		default:
			return fmt.Errorf("rtt server %d: unexpected control message %d from %d", c.Rank(), m.Op, st.Source)
		}
	}
}

// RTTStopServer makes RTTServe on rank server return.
func RTTStopServer(ctx context.Context, c comm.Comm, server int) error {
	if err := c.Send(ctx, server, tagRTTCtl, ctlMsg{Op: rttStop}.encode()); err != nil {
		return fmt.Errorf("rtt stop server %d: %w", server, err)
	}
	return nil
}

// echo answers pings from peer until the stop flag.
func echo(ctx context.Context, c comm.Comm, peer, size int) error {
	if size < 1 || size > 1<<30 {
		return fmt.Errorf("rtt %d<-%d: bad ping size %d", c.Rank(), peer, size)
	}
	buf := make([]byte, size)
	for {
		if _, err := c.Recv(ctx, peer, tagRTTPing, buf); err != nil {
			return fmt.Errorf("rtt %d<-%d: %w", c.Rank(), peer, err)
		}
		if buf[0] == 0 {
			return nil
		}
		if err := c.Send(ctx, peer, tagRTTPong, buf); err != nil {
			return fmt.Errorf("rtt %d<-%d: %w", c.Rank(), peer, err)
		}
	}
}
