// Package pingpong is the point-to-point benchmark of a world: half
// round-trip latency of ping-pongs between ranks 0 and 1 for each message
// size, and the bandwidth of a stream of large messages, each measured next
// to a plain Go TCP connection between the same two processes (the raw
// baseline) in alternating rounds.
//
// It lives under comm because the baseline opens its own socket.
package pingpong

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"

	"netaware/comm"
)

// Options configure Run; Defaults gives the command line's defaults.
type Options struct {
	// Sizes are the ping-pong message sizes in bytes.
	Sizes []int
	// Iters is the number of ping-pongs per round for messages up to 1 KiB;
	// larger messages get proportionally fewer (the same bytes), at least 10.
	Iters int
	// Rounds of netaware and of the raw baseline alternate; medians are reported.
	Rounds int
	// StreamSize and StreamCount describe the streaming test: rank 0 sends
	// StreamCount messages of StreamSize bytes, rank 1 acknowledges the last.
	StreamSize, StreamCount int
	// Raw adds the raw Go TCP baseline; rank 0 listens for it on RawHost.
	Raw     bool
	RawHost string
}

// Defaults are the options of 'netaware bench pingpong' without flags.
func Defaults() Options {
	return Options{Sizes: []int{1, 1 << 10, 64 << 10, 1 << 20}, Iters: 1000, Rounds: 5,
		StreamSize: 1 << 20, StreamCount: 200, Raw: true, RawHost: "127.0.0.1"}
}

// Validate names the first option that cannot be run.
func (o Options) Validate() error {
	if len(o.Sizes) == 0 {
		return fmt.Errorf("pingpong: no message sizes")
	}
	for _, s := range o.Sizes {
		if s < 0 || s > 1<<30 {
			return fmt.Errorf("pingpong: message size %d out of range [0, 1GiB]", s)
		}
	}
	if o.StreamSize < 1 || o.StreamSize > 1<<30 {
		return fmt.Errorf("pingpong: stream size %d out of range [1, 1GiB]", o.StreamSize)
	}
	if o.Iters < 1 || o.Rounds < 1 || o.StreamCount < 1 {
		return fmt.Errorf("pingpong: iterations (%d), rounds (%d) and stream count (%d) must be positive", o.Iters, o.Rounds, o.StreamCount)
	}
	if o.Raw && o.RawHost == "" {
		return fmt.Errorf("pingpong: raw baseline without a host to listen on")
	}
	return nil
}

// Latency is the ping-pong result at one size.
type Latency struct {
	SizeBytes     int     `json:"size_bytes"`
	Iterations    int     `json:"iterations"`
	NetawareS     float64 `json:"netaware_half_rtt_s"`
	RawS          float64 `json:"raw_tcp_half_rtt_s,omitempty"`
	LatencyRatio  float64 `json:"latency_ratio,omitempty"` // netaware / raw: 1.0 is parity
	NetawareBps   float64 `json:"netaware_Bps"`
	RawBps        float64 `json:"raw_tcp_Bps,omitempty"`
	BandwidthRate float64 `json:"bandwidth_ratio,omitempty"` // netaware / raw
}

// Stream is the streaming result.
type Stream struct {
	SizeBytes int     `json:"size_bytes"`
	Messages  int     `json:"messages"`
	Netaware  float64 `json:"netaware_Bps"`
	Raw       float64 `json:"raw_tcp_Bps,omitempty"`
	Ratio     float64 `json:"bandwidth_ratio,omitempty"` // netaware / raw: 1.0 is parity
}

// Report is what rank 0 returns. World is for the caller to fill in.
type Report struct {
	World     string    `json:"world"`
	Ranks     int       `json:"ranks"`
	Hosts     [2]string `json:"hosts"`
	Rounds    int       `json:"rounds"`
	Latency   []Latency `json:"pingpong"`
	Streaming []Stream  `json:"streaming"`
}

const tag = 0

// Run runs on every rank; ranks 0 and 1 measure, rank 0 returns the
// report, the others return nil.
func Run(ctx context.Context, c comm.Comm, o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if c.Size() < 2 {
		return nil, fmt.Errorf("pingpong needs at least 2 ranks, the world has %d", c.Size())
	}
	me := c.Rank()
	if me > 1 {
		return nil, nil
	}
	ids := [2]comm.Identity{}
	ids[me] = c.Identity()
	// Exchange host names (and set up the raw connection) first.
	peer := 1 - me
	var conn net.Conn
	if o.Raw {
		var err error
		if conn, err = rawConnect(ctx, c, o.RawHost); err != nil {
			return nil, fmt.Errorf("raw TCP baseline: %w", err)
		}
		defer conn.Close()
	}
	hb := make([]byte, 256)
	st, err := comm.Sendrecv(ctx, c, peer, tag, []byte(ids[me].Host), peer, tag, hb)
	if err != nil {
		return nil, err
	}
	ids[peer].Host = string(hb[:st.Count])

	maxSize := o.StreamSize
	for _, s := range o.Sizes {
		maxSize = max(maxSize, s)
	}
	buf := make([]byte, maxSize)
	rep := &Report{Ranks: c.Size(), Hosts: [2]string{ids[0].Host, ids[1].Host}, Rounds: o.Rounds}
	for i, s := range o.Sizes {
		iters := max(10, o.Iters*1024/max(s, 1024))
		pingNA := func() (time.Duration, error) {
			d, err := commPingpong(ctx, c, buf[:s], iters)
			if err != nil {
				return 0, fmt.Errorf("pingpong %d bytes: %w", s, err)
			}
			return d, nil
		}
		var pingRaw func() (time.Duration, error)
		if conn != nil {
			pingRaw = func() (time.Duration, error) {
				d, err := rawPingpong(c, conn, me, buf[:s], iters)
				if err != nil {
					return 0, fmt.Errorf("raw pingpong %d bytes: %w", s, err)
				}
				return d, nil
			}
		}
		na, raw, ratio, err := rounds(o.Rounds, i == 0, pingNA, pingRaw)
		if err != nil {
			return nil, err
		}
		l := Latency{SizeBytes: s, Iterations: iters, NetawareS: na.Seconds() / float64(2*iters)}
		if l.NetawareS > 0 {
			l.NetawareBps = float64(s) / l.NetawareS
		}
		if conn != nil {
			l.RawS = raw.Seconds() / float64(2*iters)
			if l.RawS > 0 {
				l.RawBps = float64(s) / l.RawS
			}
			l.LatencyRatio = ratio
			if ratio > 0 {
				l.BandwidthRate = 1 / ratio
			}
		}
		rep.Latency = append(rep.Latency, l)
	}
	streamNA := func() (time.Duration, error) {
		d, err := commStream(ctx, c, buf[:o.StreamSize], o.StreamCount)
		if err != nil {
			return 0, fmt.Errorf("stream: %w", err)
		}
		return d, nil
	}
	var streamRaw func() (time.Duration, error)
	if conn != nil {
		streamRaw = func() (time.Duration, error) {
			d, err := rawStream(c, conn, me, buf[:o.StreamSize], o.StreamCount)
			if err != nil {
				return 0, fmt.Errorf("raw stream: %w", err)
			}
			return d, nil
		}
	}
	na, raw, ratio, err := rounds(o.Rounds, true, streamNA, streamRaw)
	if err != nil {
		return nil, err
	}
	bytes := float64(o.StreamSize) * float64(o.StreamCount)
	sres := Stream{SizeBytes: o.StreamSize, Messages: o.StreamCount, Netaware: bytes / na.Seconds()}
	if conn != nil {
		sres.Raw = bytes / raw.Seconds()
		if ratio > 0 {
			sres.Ratio = 1 / ratio // bandwidth: raw time over netaware time
		}
	}
	rep.Streaming = append(rep.Streaming, sres)
	if me != 0 {
		return nil, nil
	}
	return rep, nil
}

// rounds times rounds of netaware (na) and, unless raw is nil, of the
// raw baseline, alternating which goes first (ABBA...) so that a drift of
// the machine's load hits both alike; with warm, one untimed round of each
// comes first (a new process's first thousands of messages are slow: page
// faults, heap growth, the kernel placing the two ranks). It returns the
// median round of each and the median of the per-round time ratios
// na/raw: the two rounds of a pair run back to back, under the same load,
// so their ratio is steadier than the ratio of medians on a shared machine.
func rounds(n int, warm bool, na, raw func() (time.Duration, error)) (naMed, rawMed time.Duration, ratio float64, err error) {
	if warm {
		if _, err := na(); err != nil {
			return 0, 0, 0, err
		}
		if raw != nil {
			if _, err := raw(); err != nil {
				return 0, 0, 0, err
			}
		}
	}
	var nas, raws, ratios []float64
	for r := 0; r < n; r++ {
		var a, b time.Duration
		if raw != nil && r%2 == 1 {
			if b, err = raw(); err == nil {
				a, err = na()
			}
		} else {
			if a, err = na(); err == nil && raw != nil {
				b, err = raw()
			}
		}
		if err != nil {
			return 0, 0, 0, err
		}
		nas = append(nas, float64(a))
		if raw != nil {
			raws = append(raws, float64(b))
			if b > 0 {
				ratios = append(ratios, float64(a)/float64(b))
			}
		}
	}
	naMed = time.Duration(median(nas))
	if raw != nil {
		rawMed = time.Duration(median(raws))
		ratio = median(ratios)
	}
	return naMed, rawMed, ratio, nil
}

// median is the empirical median (the lower middle one of an even count), 0 of nothing.
func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return stat.Quantile(0.5, stat.Empirical, s, nil)
}

// rawConnect opens a plain TCP connection between ranks 0 and 1: rank 0
// listens on host, tells rank 1 the address over c, and accepts.
func rawConnect(ctx context.Context, c comm.Comm, host string) (net.Conn, error) {
	if c.Rank() == 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		if err := c.Send(ctx, 1, tag, []byte(ln.Addr().String())); err != nil {
			return nil, err
		}
		// Accept while watching rank 1 through the communicator, so that a
		// rank 1 that dies here fails us instead of leaving Accept waiting.
		type acc struct {
			conn net.Conn
			err  error
		}
		ch := make(chan acc, 1)
		go func() {
			conn, err := ln.Accept()
			ch <- acc{conn, err}
		}()
		ok := make([]byte, 1)
		if _, err := c.Recv(ctx, 1, tag, ok); err != nil {
			ln.Close()
			if a := <-ch; a.conn != nil {
				a.conn.Close()
			}
			return nil, err
		}
		if tl, isTCP := ln.(*net.TCPListener); isTCP {
			tl.SetDeadline(time.Now().Add(30 * time.Second))
		}
		a := <-ch
		if a.err != nil {
			return nil, a.err
		}
		a.conn.(*net.TCPConn).SetNoDelay(true)
		return a.conn, nil
	}
	b := make([]byte, 256)
	st, err := c.Recv(ctx, 0, tag, b)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 30 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", string(b[:st.Count]))
	if err != nil {
		return nil, err
	}
	conn.(*net.TCPConn).SetNoDelay(true)
	if err := c.Send(ctx, 0, tag, []byte{1}); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}
func commPingpong(ctx context.Context, c comm.Comm, b []byte, iters int) (time.Duration, error) {
	var start time.Duration
	for i := -iters / 10; i < iters; i++ { // the first tenth warms up
		if i == 0 {
			start = c.Now()
		}
		if c.Rank() == 0 {
			if err := c.Send(ctx, 1, tag, b); err != nil {
				return 0, err
			}
			if _, err := c.Recv(ctx, 1, tag, b); err != nil {
				return 0, err
			}
		} else {
			if _, err := c.Recv(ctx, 0, tag, b); err != nil {
				return 0, err
			}
			if err := c.Send(ctx, 0, tag, b); err != nil {
				return 0, err
			}
		}
	}
	return c.Now() - start, nil
}

func rawPingpong(c comm.Comm, conn net.Conn, me int, b []byte, iters int) (time.Duration, error) {
	var start time.Duration
	for i := -iters / 10; i < iters; i++ {
		if i == 0 {
			start = c.Now()
		}
		if me == 0 {
			if _, err := conn.Write(b); err != nil {
				return 0, err
			}
			if _, err := io.ReadFull(conn, b); err != nil {
				return 0, err
			}
		} else {
			if _, err := io.ReadFull(conn, b); err != nil {
				return 0, err
			}
			if _, err := conn.Write(b); err != nil {
				return 0, err
			}
		}
	}
	return c.Now() - start, nil
}

func commStream(ctx context.Context, c comm.Comm, b []byte, count int) (time.Duration, error) {
	ack := make([]byte, 1)
	// Warm up and line the two ranks up with one ping-pong.
	if _, err := commPingpong(ctx, c, ack, 1); err != nil {
		return 0, err
	}
	start := c.Now()
	if c.Rank() == 0 {
		for i := 0; i < count; i++ {
			if err := c.Send(ctx, 1, tag, b); err != nil {
				return 0, err
			}
		}
		if _, err := c.Recv(ctx, 1, tag, ack); err != nil {
			return 0, err
		}
	} else {
		for i := 0; i < count; i++ {
			if _, err := c.Recv(ctx, 0, tag, b); err != nil {
				return 0, err
			}
		}
		if err := c.Send(ctx, 0, tag, ack); err != nil {
			return 0, err
		}
	}
	return c.Now() - start, nil
}

func rawStream(c comm.Comm, conn net.Conn, me int, b []byte, count int) (time.Duration, error) {
	ack := make([]byte, 1)
	if _, err := rawPingpong(c, conn, me, ack, 1); err != nil {
		return 0, err
	}
	start := c.Now()
	if me == 0 {
		for i := 0; i < count; i++ {
			if _, err := conn.Write(b); err != nil {
				return 0, err
			}
		}
		if _, err := io.ReadFull(conn, ack); err != nil {
			return 0, err
		}
	} else {
		for i := 0; i < count; i++ {
			if _, err := io.ReadFull(conn, b); err != nil {
				return 0, err
			}
		}
		if _, err := conn.Write(ack); err != nil {
			return 0, err
		}
	}
	return c.Now() - start, nil
}
