package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/commtest"
	"netaware/netsim"
	"netaware/platform"
)

// starPlatform is n single-core hosts on one switch with the given extra
// YAML sections (noise, tcp) and host overheads.
func starPlatform(t testing.TB, n int, overhead, extra string) *platform.Platform {
	t.Helper()
	if overhead == "" {
		overhead = "{send: 0us, recv: 0us}"
	}
	y := fmt.Sprintf(`version: 1
name: star
switches: [sw]
host_types:
  one:
    cores_per_socket: 1
    overhead: %s
hosts:
  - {names: "h[0-%d]", switch: sw, type: one, link: {bandwidth: 1Gbps, latency: 10us}}
%s`, overhead, n-1, extra)
	p, err := platform.Parse("star.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustRun(t testing.TB, p *platform.Platform, opts Options, body func(ctx context.Context, c comm.Comm) error) Result {
	t.Helper()
	res, err := Run(context.Background(), p, opts, body)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The conformance suite every transport passes, here with latency and
// bandwidth noise on so that envelope ordering is exercised.
func TestConformance(t *testing.T) {
	commtest.Run(t, func(ctx context.Context, n int, body func(ctx context.Context, c comm.Comm) error) error {
		p := starPlatform(t, n, "{send: 1us, recv: 1us}", "noise: {seed: 3, latency_jitter: 0.3, bandwidth_jitter: 0.1}\n")
		_, err := Run(ctx, p, Options{EagerLimit: 32}, body)
		return err
	})
}

// The same with a send buffer: rendezvous sends complete before their
// bytes arrive, and buffer reuse, Ssend and cancellation still hold.
func TestConformanceWithSendBuffer(t *testing.T) {
	commtest.Run(t, func(ctx context.Context, n int, body func(ctx context.Context, c comm.Comm) error) error {
		p := starPlatform(t, n, "{send: 1us, recv: 1us}", "noise: {seed: 5, latency_jitter: 0.3, bandwidth_jitter: 0.1}\ntcp: {send_buffer: 4KiB}\n")
		_, err := Run(ctx, p, Options{EagerLimit: 32}, body)
		return err
	})
}

// Seed 001 and SimGrid's model for one message alone: the receive completes
// at o_s + L + S/B + o_r (eager) — latency, then the bytes at the bottleneck
// bandwidth, plus the host overheads with their per-byte parts.
func TestSingleFlowTimeIsLatencyPlusSizeOverBottleneck(t *testing.T) {
	p := starPlatform(t, 2, "{send: 2us, recv: 3us, send_per_byte: 0.5ns, recv_per_byte: 0.25ns}", "")
	const S = 50_000
	B := 1e9 / 8
	L := 20e-6 // two host links of 10 us
	var recvAt, sendAt time.Duration
	mustRun(t, p, Options{EagerLimit: 1 << 20}, func(ctx context.Context, c comm.Comm) error {
		buf := make([]byte, S)
		if c.Rank() == 0 {
			err := c.Send(ctx, 1, 0, buf)
			sendAt = c.Now()
			return err
		}
		_, err := c.Recv(ctx, 0, 0, buf)
		recvAt = c.Now()
		return err
	})
	os := 2e-6 + 0.5e-9*S
	or := 3e-6 + 0.25e-9*S
	want := os + L + S/B + or
	if d := math.Abs(recvAt.Seconds() - want); d > 1e-9 {
		t.Errorf("eager receive done at %v, want %.9fs", recvAt, want)
	}
	if d := math.Abs(sendAt.Seconds() - os); d > 1e-9 {
		t.Errorf("eager send returned at %v, want after its overhead %.9fs", sendAt, os)
	}
}

// A rendezvous costs two more latencies (RTS there, CTS back) than an eager
// send of the same size, and the sender is held until the data has left.
func TestEagerVsRendezvousTiming(t *testing.T) {
	p := starPlatform(t, 2, "{send: 1us, recv: 1us}", "")
	const S = 1 << 20
	L := 20e-6
	run := func(eager int) (send, recv time.Duration) {
		mustRun(t, p, Options{EagerLimit: eager}, func(ctx context.Context, c comm.Comm) error {
			buf := make([]byte, S)
			if c.Rank() == 0 {
				err := c.Send(ctx, 1, 0, buf)
				send = c.Now()
				return err
			}
			_, err := c.Recv(ctx, 0, 0, buf)
			recv = c.Now()
			return err
		})
		return
	}
	es, er := run(2 * S)
	rs, rr := run(S / 2)
	if d := (rr - er).Seconds() - 2*L; math.Abs(d) > 2e-9 {
		t.Errorf("rendezvous receive %v, eager %v: difference should be 2L = %v", rr, er, 2*L)
	}
	if math.Abs(es.Seconds()-1e-6) > 1e-9 {
		t.Errorf("eager send returned at %v, want 1us (its overhead)", es)
	}
	wantRS := 1e-6 + 3*L + S/(1e9/8)
	if math.Abs(rs.Seconds()-wantRS) > 2e-9 {
		t.Errorf("rendezvous send returned at %v, want %.9fs (data delivered)", rs, wantRS)
	}
}

// With a socket send buffer (tcp.send_buffer) a rendezvous send completes
// once the CTS is back and its bytes fit the buffer (o + 2L), not when
// they arrive; the receive is unchanged, and gets the bytes the sender had
// when its send completed, whatever it writes afterwards. A message larger
// than the buffer still completes on arrival.
func TestSendCompletesWhenItsBytesFitTheSendBuffer(t *testing.T) {
	const S = 1 << 20
	L := 20e-6
	arrival := 1e-6 + 3*L + S/(1e9/8)
	for _, tc := range []struct {
		buffer   string
		wantSend float64
	}{
		{"", arrival},
		{"1MiB", 1e-6 + 2*L},
		{"1023KiB", arrival},
	} {
		extra := ""
		if tc.buffer != "" {
			extra = "tcp: {send_buffer: " + tc.buffer + "}\n"
		}
		p := starPlatform(t, 2, "{send: 1us, recv: 1us}", extra)
		var send, recv time.Duration
		var got []byte
		mustRun(t, p, Options{EagerLimit: S / 2}, func(ctx context.Context, c comm.Comm) error {
			buf := bytes.Repeat([]byte{7}, S)
			if c.Rank() == 0 {
				err := c.Send(ctx, 1, 0, buf)
				send = c.Now()
				clear(buf) // the buffer is the sender's again
				return err
			}
			_, err := c.Recv(ctx, 0, 0, buf)
			recv, got = c.Now(), buf
			return err
		})
		if math.Abs(send.Seconds()-tc.wantSend) > 2e-9 {
			t.Errorf("send buffer %q: send returned at %v, want %.9fs", tc.buffer, send, tc.wantSend)
		}
		if want := arrival + 1e-6; math.Abs(recv.Seconds()-want) > 2e-9 {
			t.Errorf("send buffer %q: receive returned at %v, want %.9fs", tc.buffer, recv, want)
		}
		if !bytes.Equal(got, bytes.Repeat([]byte{7}, S)) {
			t.Errorf("send buffer %q: the receiver got what the sender wrote after its send", tc.buffer)
		}
	}
}

// A small Ssend waits for the match: the receiver posts late, the sender
// returns one return latency after that.
func TestSsendWaitsForLateReceiver(t *testing.T) {
	p := starPlatform(t, 2, "", "")
	var sentAt time.Duration
	mustRun(t, p, Options{}, func(ctx context.Context, c comm.Comm) error {
		b := make([]byte, 8)
		if c.Rank() == 0 {
			err := c.Ssend(ctx, 1, 0, b)
			sentAt = c.Now()
			return err
		}
		c.Spin(time.Millisecond)
		_, err := c.Recv(ctx, 0, 0, b)
		return err
	})
	want := time.Millisecond + 20*time.Microsecond
	if sentAt != want {
		t.Errorf("Ssend returned at %v, want %v", sentAt, want)
	}
}

func TestDeadlockReportsEachPendingCall(t *testing.T) {
	p := starPlatform(t, 3, "", "")
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), p, Options{}, func(ctx context.Context, c comm.Comm) error {
			b := make([]byte, 4)
			switch c.Rank() {
			case 0:
				_, err := c.Recv(ctx, 1, 5, b)
				return err
			case 1:
				_, err := c.Recv(ctx, comm.AnySource, 6, b)
				return err
			}
			return c.Ssend(ctx, 0, 9, b) // matched by nobody
		})
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("deadlock not detected: Run hangs")
	}
	var dl *DeadlockError
	if !errors.As(err, &dl) {
		t.Fatalf("got %v, want a DeadlockError", err)
	}
	want := []string{
		"rank 0: Recv from 1, tag 5",
		"rank 1: Recv from any, tag 6",
		"rank 2: Ssend to 0, tag 9",
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("report %q lacks %q", err, w)
		}
	}
	if len(dl.Blocked) != 3 {
		t.Errorf("%d blocked calls, want 3", len(dl.Blocked))
	}
}

func TestFailingRankAbortsOthers(t *testing.T) {
	p := starPlatform(t, 4, "", "")
	boom := errors.New("boom")
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	peerErrs := map[int]error{}
	_, err := Run(context.Background(), p, Options{}, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 2 {
			c.Spin(time.Millisecond)
			return boom
		}
		_, err := c.Recv(ctx, 2, 0, make([]byte, 1))
		<-mu
		peerErrs[c.Rank()] = err
		mu <- struct{}{}
		return err
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "rank 2") {
		t.Fatalf("Run error %v, want rank 2's boom", err)
	}
	for r, e := range peerErrs {
		var re *comm.RankError
		if !errors.As(e, &re) || re.Rank != 2 {
			t.Errorf("rank %d's pending Recv failed with %v, want an error naming rank 2", r, e)
		}
	}
	if len(peerErrs) != 3 {
		t.Errorf("%d ranks saw the failure, want 3", len(peerErrs))
	}
}

func TestPanicInRankIsAnError(t *testing.T) {
	p := starPlatform(t, 2, "", "")
	_, err := Run(context.Background(), p, Options{}, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 1 {
			var m map[int]int
			m[1] = 1
		}
		_, err := c.Recv(ctx, 1, 0, nil)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "rank 1") || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("got %v, want rank 1's panic", err)
	}
}

// Messages from one source reach an AnySource receiver in send order even
// when latency jitter would reorder them.
func TestAnySourceKeepsPerSourceOrderUnderJitter(t *testing.T) {
	p := starPlatform(t, 4, "", "noise: {seed: 11, latency_jitter: 0.9}\n")
	const per = 50
	mustRun(t, p, Options{}, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() != 0 {
			for i := 0; i < per; i++ {
				if err := c.Send(ctx, 0, 1, []byte{byte(i)}); err != nil {
					return err
				}
			}
			return nil
		}
		next := map[int]int{}
		b := make([]byte, 1)
		for i := 0; i < per*(c.Size()-1); i++ {
			st, err := c.Recv(ctx, comm.AnySource, comm.AnyTag, b)
			if err != nil {
				return err
			}
			if int(b[0]) != next[st.Source] {
				return fmt.Errorf("from %d: got message %d, want %d", st.Source, b[0], next[st.Source])
			}
			next[st.Source]++
		}
		return nil
	})
}

// workload exchanges messages of mixed sizes (eager and rendezvous) around
// rings and with AnySource, on every rank.
func workload(ctx context.Context, c comm.Comm) error {
	n, me := c.Size(), c.Rank()
	for round := 0; round < 3; round++ {
		size := []int{100, 200_000, 3000}[round]
		sb := bytes.Repeat([]byte{byte(me)}, size)
		rb := make([]byte, size)
		if _, err := comm.Sendrecv(ctx, c, (me+1+round)%n, round, sb, (me-1-round+2*n)%n, round, rb); err != nil {
			return err
		}
	}
	if me == 0 {
		b := make([]byte, 64)
		for i := 1; i < n; i++ {
			if _, err := c.Recv(ctx, comm.AnySource, 7, b); err != nil {
				return err
			}
		}
		return nil
	}
	c.Spin(time.Duration(me) * time.Microsecond)
	return c.Send(ctx, 0, 7, make([]byte, 64))
}

func TestDeterminismSameSeedSameEventLog(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	logOf := func(seed int64) (string, Result) {
		var buf bytes.Buffer
		res := mustRun(t, p, Options{EventLog: &buf, Seed: seed, Weighting: netsim.RTTWeighted}, workload)
		return buf.String(), res
	}
	a, ra := logOf(5)
	b, rb := logOf(5)
	if a == "" || ra.Events == 0 {
		t.Fatal("empty event log")
	}
	if a != b || ra != rb {
		t.Fatalf("same seed, different runs:\n%v\n%v", ra, rb)
	}
	c, _ := logOf(6)
	if a == c {
		t.Error("a different seed gave the same event log: noise is not applied")
	}
}

// Seed 001 Sect. 5.2 end to end: on zhu-2racks, node a00 receives from two
// nodes and sends to one; all three transfers take about the same time,
// S / (B/2.05) plus latencies.
func TestZhuAsymmetricThroughSim(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithoutNoise()
	const S = 20 << 20
	times := make([]time.Duration, 4)
	mustRun(t, p, Options{}, func(ctx context.Context, c comm.Comm) error {
		switch c.Rank() {
		case 0: // a00: two in, one out
			reqs := []comm.Request{
				c.Irecv(1, 0, make([]byte, S)),
				c.Irecv(2, 0, make([]byte, S)),
				c.Isend(3, 0, make([]byte, S)),
			}
			return comm.Wait(ctx, reqs...)
		case 1, 2:
			err := c.Send(ctx, 0, 0, make([]byte, S))
			times[c.Rank()] = c.Now()
			return err
		case 3:
			_, err := c.Recv(ctx, 0, 0, make([]byte, S))
			times[3] = c.Now()
			return err
		}
		return nil
	})
	B := 1e9 / 8
	want := S / (B / 2.05)
	for _, r := range []int{1, 2, 3} {
		if got := times[r].Seconds(); math.Abs(got-want)/want > 0.01 {
			t.Errorf("rank %d transfer took %v, want about %.4fs (B/2.05 each)", r, times[r], want)
		}
	}
}

// A message longer than the receive buffer fails the receive with
// ErrTruncate naming the sender, leaves the buffer alone, and does not hang
// the sender, for eager and rendezvous sizes alike.
func TestTruncationLeavesBufferAndSender(t *testing.T) {
	p := starPlatform(t, 2, "", "")
	for _, size := range []int{100, 200_000} {
		mustRun(t, p, Options{}, func(ctx context.Context, c comm.Comm) error {
			if c.Rank() == 0 {
				return c.Send(ctx, 1, 0, make([]byte, size))
			}
			b := []byte{7, 7, 7}
			_, err := c.Recv(ctx, 0, 0, b)
			var re *comm.RankError
			if !errors.Is(err, comm.ErrTruncate) || !errors.As(err, &re) || re.Rank != 0 {
				return fmt.Errorf("size %d: got %v, want ErrTruncate from rank 0", size, err)
			}
			c.Spin(time.Second) // let the eager data arrive
			if !bytes.Equal(b, []byte{7, 7, 7}) {
				return fmt.Errorf("size %d: truncated receive wrote %v", size, b)
			}
			return nil
		})
	}
}

// Messages of one pair travel one after the other, as over one TCP
// connection, pipelined: the i-th of n back-to-back eager messages arrives
// at L + (i+1) S/B, not all at L + n S/B as parallel flows would.
func TestBackToBackMessagesQueueFIFO(t *testing.T) {
	p := starPlatform(t, 2, "", "")
	const n, S = 4, 50_000
	B, L := 1e9/8, 20e-6
	var at [n]time.Duration
	mustRun(t, p, Options{EagerLimit: 1 << 20}, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() == 0 {
			var reqs []comm.Request
			for i := 0; i < n; i++ {
				reqs = append(reqs, c.Isend(1, i, make([]byte, S)))
			}
			return comm.Wait(ctx, reqs...)
		}
		var reqs []comm.Request
		for i := 0; i < n; i++ {
			reqs = append(reqs, c.Irecv(0, i, make([]byte, S)))
		}
		for i, q := range reqs {
			if _, err := q.Wait(ctx); err != nil {
				return err
			}
			at[i] = c.Now()
		}
		return nil
	})
	for i := 0; i < n; i++ {
		want := L + float64(i+1)*S/B
		if math.Abs(at[i].Seconds()-want) > 1e-9 {
			t.Errorf("message %d received at %v, want %.9fs", i, at[i], want)
		}
	}
}

// Under RTT-weighted sharing a message that leaves right behind another
// on its connection (no latency left to wait) still shares a bottleneck by
// its route's latency: rank 0's two 50 KB messages and rank 1's 100 KB one
// into rank 2 (routes of 20 us each) split rank 2's link evenly, so all
// three are in by 20 us + 2 x 50 KB / (B/2). Taking the wait as the
// latency gave the second message a 50,000 times smaller share, and rank
// 1's message arrived 0.4 ms early.
func TestPipelinedMessageSharesByRouteLatency(t *testing.T) {
	p := starPlatform(t, 3, "", "")
	opts := Options{EagerLimit: 1 << 20, Weighting: netsim.RTTWeighted}
	const S = 50_000
	B, L := 1e9/8, 20e-6
	var second, other time.Duration
	mustRun(t, p, opts, func(ctx context.Context, c comm.Comm) error {
		switch c.Rank() {
		case 0:
			return comm.Wait(ctx, c.Isend(2, 0, make([]byte, S)), c.Isend(2, 1, make([]byte, S)))
		case 1:
			return c.Send(ctx, 2, 2, make([]byte, 2*S))
		}
		first := c.Irecv(0, 0, make([]byte, S))
		next := c.Irecv(0, 1, make([]byte, S))
		if _, err := c.Recv(ctx, 1, 2, make([]byte, 2*S)); err != nil {
			return err
		}
		other = c.Now()
		if _, err := next.Wait(ctx); err != nil {
			return err
		}
		second = c.Now()
		return comm.Wait(ctx, first)
	})
	want := L + 2*S/(B/2)
	if math.Abs(other.Seconds()-want) > 1e-9 || math.Abs(second.Seconds()-want) > 1e-9 {
		t.Errorf("rank 1's message in at %v, rank 0's second at %v; want both at %.9fs", other, second, want)
	}
}

// A platform's tcp.sharing: rtt makes the simulator share by route
// latency without the caller asking: messages from h0 (route 20 us) and h1
// (40 us) into h2 split h2's link 2:1 once both flow, so h0's 50 KB, alone
// on the link from 20 to 40 us, is in at 40 us + (S - 20 us x B) / (2B/3);
// with equal shares (no key) at 40 us + (S - 20 us x B) / (B/2).
func TestPlatformChoosesRTTSharing(t *testing.T) {
	const S = 50_000
	B := 1e9 / 8
	for sharing, share := range map[string]float64{"rtt": 2 * B / 3, "": B / 2} {
		extra := ""
		if sharing != "" {
			extra = "tcp: {sharing: " + sharing + "}\n"
		}
		p, err := platform.Parse("three.yaml", []byte(`version: 1
name: three
switches: [sw]
host_types:
  one: {cores_per_socket: 1, overhead: {send: 0us, recv: 0us}}
hosts:
  - {names: "h0", switch: sw, type: one, link: {bandwidth: 1Gbps, latency: 10us}}
  - {names: "h1", switch: sw, type: one, link: {bandwidth: 1Gbps, latency: 30us}}
  - {names: "h2", switch: sw, type: one, link: {bandwidth: 1Gbps, latency: 10us}}
`+extra))
		if err != nil {
			t.Fatal(err)
		}
		var at time.Duration
		mustRun(t, p, Options{EagerLimit: 1 << 20}, func(ctx context.Context, c comm.Comm) error {
			switch c.Rank() {
			case 0, 1:
				return c.Send(ctx, 2, c.Rank(), make([]byte, S))
			}
			other := c.Irecv(1, 1, make([]byte, S))
			if _, err := c.Recv(ctx, 0, 0, make([]byte, S)); err != nil {
				return err
			}
			at = c.Now()
			return comm.Wait(ctx, other)
		})
		if want := 40e-6 + (S-20e-6*B)/share; math.Abs(at.Seconds()-want) > 1e-9 {
			t.Errorf("tcp.sharing %q: h0's message in at %v, want %.9fs", sharing, at, want)
		}
	}
}

// LogP's receive overhead is CPU time of the receiver: a root receiving
// n-1 simultaneous zero-byte messages processes them one after the other,
// the last at o_s + L + (n-1) o_r.
func TestReceiveOverheadsSerializeAtRoot(t *testing.T) {
	const n = 6
	p := starPlatform(t, n, "{send: 1us, recv: 10us}", "")
	var doneAt time.Duration
	mustRun(t, p, Options{}, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() != 0 {
			return c.Send(ctx, 0, 0, nil)
		}
		var reqs []comm.Request
		for i := 1; i < n; i++ {
			reqs = append(reqs, c.Irecv(i, 0, nil))
		}
		err := comm.Wait(ctx, reqs...)
		doneAt = c.Now()
		return err
	})
	want := 1e-6 + 20e-6 + (n-1)*10e-6
	if math.Abs(doneAt.Seconds()-want) > 1e-9 {
		t.Errorf("root done at %v, want %.9fs", doneAt, want)
	}
}

// Cancelling Run's context stops a run whose ranks only compute (Spin in
// a loop) instead of hanging.
func TestContextCancelStopsSpinningRanks(t *testing.T) {
	p := starPlatform(t, 2, "", "")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, p, Options{}, func(ctx context.Context, c comm.Comm) error {
			for {
				c.Spin(time.Second)
			}
		})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want the context's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop after its context was cancelled")
	}
}

// The same at 512 ranks with the platform's noise: a broadcast and a ring
// exchange on dichev-n1 twice give the same event log.
func TestDeterminismAtScale(t *testing.T) {
	p, err := platform.Load("dichev-n1")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	run := func() (string, Result) {
		var log bytes.Buffer
		res := mustRun(t, p, Options{EventLog: &log}, func(ctx context.Context, c comm.Comm) error {
			if err := BinomialBcast(ctx, c, buf); err != nil {
				return err
			}
			n, me := c.Size(), c.Rank()
			_, err := comm.Sendrecv(ctx, c, (me+1)%n, 1, buf[:1000], (me+n-1)%n, 1, buf[:1000])
			return err
		})
		return log.String(), res
	}
	a, ra := run()
	b, rb := run()
	if a != b || ra != rb {
		t.Fatalf("two runs differ: %+v vs %+v", ra, rb)
	}
	if ra.Messages != 511+512 {
		t.Errorf("%d messages, want %d", ra.Messages, 511+512)
	}
}

// An eager send copies the buffer when it is sent: back-to-back sends of
// one buffer, changed between some of them, arrive with the bytes each
// had when sent (the simulator shares one copy among unchanged resends),
// including after a truncated receive dropped one of them.
func TestEagerResendsKeepTheirBytes(t *testing.T) {
	p := starPlatform(t, 2, "", "")
	mustRun(t, p, Options{}, func(ctx context.Context, c comm.Comm) error {
		const n = 1000
		if c.Rank() == 0 {
			b := bytes.Repeat([]byte{1}, n)
			var reqs []comm.Request
			for i, v := range []byte{1, 1, 2, 2, 2, 1, 1} {
				if b[0] != v {
					for k := range b {
						b[k] = v
					}
				}
				reqs = append(reqs, c.Isend(1, i, b))
			}
			return comm.Wait(ctx, reqs...)
		}
		c.Spin(time.Second) // every message is in before the receives
		for i, v := range []byte{1, 1, 2, 2, 2, 1, 1} {
			size := n
			if i == 3 {
				size = 10 // truncated: its copy is dropped, the others stay
			}
			b := make([]byte, size)
			_, err := c.Recv(ctx, 0, i, b)
			if i == 3 {
				if !errors.Is(err, comm.ErrTruncate) {
					return fmt.Errorf("message 3: %v, want ErrTruncate", err)
				}
				continue
			}
			if err != nil {
				return err
			}
			if !bytes.Equal(b, bytes.Repeat([]byte{v}, n)) {
				return fmt.Errorf("message %d arrived with %d..., sent with %d", i, b[0], v)
			}
		}
		return nil
	})
}

// With tcp.queue, a message sent across a link that other flows saturate
// waits behind the bytes they still have to send, at most the buffer's
// length; over links with spare capacity it does not wait. Worked by hand:
// 1 Gbit links (B = 125 MB/s), 10 us each; rank 0 sends 1 MB to rank 2 from
// t = 0 (on the wire from 20 us, done at 20 us + 8 ms). At 1 ms rank 1
// sends 1 byte to rank 2: rank 2's link is saturated with 877.5 kB left
// (7.02 ms at B), so the byte arrives at 1 ms + 20 us + min(queue, 7.02
// ms); its send to rank 0 crosses only idle links and arrives at 1.02 ms.
func TestQueueDelaysMessagesBehindSaturatingFlows(t *testing.T) {
	for _, tc := range []struct {
		queue string
		want  float64 // arrival of the byte at rank 2
	}{
		{"0s", 1.02e-3},
		{"2ms", 3.02e-3},
		{"50ms", 8.04e-3},
	} {
		p := starPlatform(t, 3, "", "tcp: {crosstraffic: 0, queue: "+tc.queue+"}\n")
		var at2, at0 time.Duration
		mustRun(t, p, Options{EagerLimit: 2 << 20}, func(ctx context.Context, c comm.Comm) error {
			switch c.Rank() {
			case 0:
				if err := c.Send(ctx, 2, 0, make([]byte, 1_000_000)); err != nil {
					return err
				}
				_, err := c.Recv(ctx, 1, 1, make([]byte, 1))
				at0 = c.Now()
				return err
			case 1:
				c.Spin(time.Millisecond)
				if err := c.Send(ctx, 2, 1, make([]byte, 1)); err != nil {
					return err
				}
				return c.Send(ctx, 0, 1, make([]byte, 1))
			}
			if _, err := c.Recv(ctx, 1, 1, make([]byte, 1)); err != nil {
				return err
			}
			at2 = c.Now()
			_, err := c.Recv(ctx, 0, 0, make([]byte, 1_000_000))
			return err
		})
		if d := at2.Seconds() - tc.want; math.Abs(d) > 0.2e-6 {
			t.Errorf("queue %s: byte reached rank 2 at %v, want %.6fs", tc.queue, at2, tc.want)
		}
		if d := at0.Seconds() - 1.02e-3; math.Abs(d) > 0.2e-6 {
			t.Errorf("queue %s: byte reached rank 0 at %v, want 1.020 ms (idle links)", tc.queue, at0)
		}
	}
}

// TestScratchShared: the simulator's ranks share one scratch buffer (one
// rank runs at a time) of the size each asks, and a communicator of
// another transport gets a buffer per call.
func TestScratchShared(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	size := func(r int) int { return 1 << 20 >> (r % 3) }
	bufs := make([][]byte, 6)
	_, err = Run(context.Background(), p, Options{}, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() < len(bufs) {
			bufs[c.Rank()] = comm.Scratch(c, size(c.Rank()))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, b := range bufs {
		if len(b) != size(r) || &b[0] != &bufs[0][0] {
			t.Fatalf("rank %d: %d bytes at %p, rank 0's at %p", r, len(b), &b[0], &bufs[0][0])
		}
	}
	if !comm.InScratch(bufs[0][10:20]) || comm.InScratch(make([]byte, 10)) || comm.InScratch(nil) {
		t.Fatal("InScratch wrong about a part of the scratch buffer, another buffer or nil")
	}
	// Eager messages from the scratch buffer (not copied) arrive whole.
	_, err = Run(context.Background(), p, Options{}, func(ctx context.Context, c comm.Comm) error {
		b := comm.Scratch(c, 4096)
		switch c.Rank() {
		case 0:
			for k := 1; k <= 3; k++ {
				if err := c.Send(ctx, 1, 0, b[:100*k]); err != nil {
					return err
				}
			}
		case 1:
			for k := 1; k <= 3; k++ {
				st, err := c.Recv(ctx, 0, 0, b[1000:])
				if err != nil {
					return err
				}
				if st.Count != 100*k {
					return fmt.Errorf("message %d: %d bytes, want %d", k, st.Count, 100*k)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
