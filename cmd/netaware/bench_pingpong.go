package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"netaware/comm"
	"netaware/comm/tcp"
)

// benchSubcommands lets other files add 'netaware bench X' commands
// without editing this one.
var benchSubcommands []func() *cobra.Command

func registerBench(f func() *cobra.Command) { benchSubcommands = append(benchSubcommands, f) }

func init() {
	register(newBenchParentCmd)
	registerBench(newBenchPingpongCmd)
}

func newBenchParentCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmarks of the communication layer and of collectives",
		Long: `bench runs benchmarks on a world (a simulated platform, goroutines with
--local, or the live ranks started by 'netaware launch', mpirun or srun).

Example:
  netaware launch -n 2 -- netaware bench pingpong`,
	}
	for _, f := range benchSubcommands {
		cmd.AddCommand(f())
	}
	return cmd
}

type pingpongLatency struct {
	SizeBytes     int     `json:"size_bytes"`
	Iterations    int     `json:"iterations"`
	NetawareS     float64 `json:"netaware_half_rtt_s"`
	RawS          float64 `json:"raw_tcp_half_rtt_s,omitempty"`
	LatencyRatio  float64 `json:"latency_ratio,omitempty"` // netaware / raw: 1.0 is parity
	NetawareBps   float64 `json:"netaware_Bps"`
	RawBps        float64 `json:"raw_tcp_Bps,omitempty"`
	BandwidthRate float64 `json:"bandwidth_ratio,omitempty"` // netaware / raw
}

type pingpongStream struct {
	SizeBytes int     `json:"size_bytes"`
	Messages  int     `json:"messages"`
	Netaware  float64 `json:"netaware_Bps"`
	Raw       float64 `json:"raw_tcp_Bps,omitempty"`
	Ratio     float64 `json:"bandwidth_ratio,omitempty"` // netaware / raw: 1.0 is parity
}

type pingpongReport struct {
	World     string            `json:"world"`
	Ranks     int               `json:"ranks"`
	Hosts     [2]string         `json:"hosts"`
	Rounds    int               `json:"rounds"`
	Latency   []pingpongLatency `json:"pingpong"`
	Streaming []pingpongStream  `json:"streaming"`
}

type pingpongOpts struct {
	sizes       []int
	iters       int
	rounds      int
	streamSize  int
	streamCount int
	raw         bool
	rawHost     string
}

func newBenchPingpongCmd() *cobra.Command {
	var (
		sizes       string
		o           pingpongOpts
		jsonOut     bool
		noRaw       bool
		streamSize  string
		streamCount int
		wf          *worldFlags
	)
	cmd := &cobra.Command{
		Use:   "pingpong",
		Short: "Latency and bandwidth between ranks 0 and 1, next to raw Go TCP",
		Long: `pingpong measures ranks 0 and 1 of the world: half round-trip latency of
ping-pongs for each message size, and the bandwidth of a stream of large
messages (rank 0 sends --stream-count messages, rank 1 acknowledges the
last). The other ranks wait.

Unless --no-raw is given (and except on a simulated platform), ranks 0 and 1
also open a plain Go TCP connection between them (rank 0 listens on its
coordinator host, or 127.0.0.1) and repeat the very same patterns. After
one untimed warm-up round of each, rounds of the two alternate (netaware
first in even rounds, raw first in odd ones); the median round of each is
reported, and the ratio is the median of the per-round ratios (the two
rounds of a pair run back to back, under the same machine load): latency
ratio 1.00 and bandwidth ratio 1.00 mean the transport costs nothing over
the bare socket.

Examples:
  netaware launch -n 2 -- netaware bench pingpong
  netaware launch -n 8 -- netaware bench pingpong --sizes 1,1KiB --json
  netaware bench pingpong --local 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.sizes, err = ppParseSizes(sizes); err != nil {
				return usagef("--sizes: %v", err)
			}
			ss, err := ppParseSizes(streamSize)
			if err != nil || len(ss) != 1 || ss[0] < 1 {
				return usagef("--stream-size %q: want one positive size", streamSize)
			}
			o.streamSize = ss[0]
			o.streamCount = streamCount
			if o.iters < 1 || o.rounds < 1 || o.streamCount < 1 {
				return usagef("--iters, --rounds and --stream-count must be positive")
			}
			o.raw = !noRaw && wfPlatform(cmd) == ""
			o.rawHost = "127.0.0.1"
			if env, ok := tcp.Detect(); ok {
				coord := env.Coordinator
				if c, _ := cmd.Flags().GetString("coordinator"); c != "" {
					coord = c
				}
				if h, _, err := net.SplitHostPort(coord); err == nil && h != "" {
					o.rawHost = h
				}
			}
			var rep *pingpongReport
			info, err := runWorld(cmd.Context(), wf, func(ctx context.Context, c comm.Comm) error {
				r, err := pingpong(ctx, c, o)
				if c.Rank() == 0 {
					rep = r
				}
				return err
			})
			if err != nil {
				return err
			}
			if rep == nil {
				return nil // not rank 0 of a TCP world: rank 0 prints
			}
			rep.World = info.Kind
			if info.Platform != "" {
				rep.World += ":" + info.Platform
			}
			out := cmd.OutOrStdout()
			if jsonOut {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printPingpong(out, rep)
			return nil
		},
	}
	wf = addWorldFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&sizes, "sizes", "1,1KiB,64KiB,1MiB", "ping-pong message sizes (bytes, or with KiB/MiB)")
	f.IntVar(&o.iters, "iters", 1000, "ping-pongs per round for 1-byte messages (fewer for large ones, same bytes)")
	f.IntVar(&o.rounds, "rounds", 5, "alternating rounds of netaware and raw TCP; the median is reported")
	f.StringVar(&streamSize, "stream-size", "1MiB", "message size of the streaming test")
	f.IntVar(&streamCount, "stream-count", 200, "messages per streaming round")
	f.BoolVar(&noRaw, "no-raw", false, "skip the raw Go TCP baseline")
	f.BoolVar(&jsonOut, "json", false, "print JSON instead of a table")
	return cmd
}

func wfPlatform(cmd *cobra.Command) string {
	p, _ := cmd.Flags().GetString("platform")
	return p
}

func ppParseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		mult := 1
		for _, u := range []struct {
			suffix string
			m      int
		}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
			if strings.HasSuffix(f, u.suffix) {
				f, mult = strings.TrimSuffix(f, u.suffix), u.m
				break
			}
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || n > (1<<30)/mult {
			return nil, fmt.Errorf("bad size %q", f)
		}
		out = append(out, n*mult)
	}
	return out, nil
}

const ppTag = 0

// pingpong runs on every rank; ranks 0 and 1 measure, rank 0 returns the report.
func pingpong(ctx context.Context, c comm.Comm, o pingpongOpts) (*pingpongReport, error) {
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
	if o.raw {
		var err error
		if conn, err = rawConnect(ctx, c, o.rawHost); err != nil {
			return nil, fmt.Errorf("raw TCP baseline: %w", err)
		}
		defer conn.Close()
	}
	hb := make([]byte, 256)
	st, err := comm.Sendrecv(ctx, c, peer, ppTag, []byte(ids[me].Host), peer, ppTag, hb)
	if err != nil {
		return nil, err
	}
	ids[peer].Host = string(hb[:st.Count])

	maxSize := o.streamSize
	for _, s := range o.sizes {
		maxSize = max(maxSize, s)
	}
	buf := make([]byte, maxSize)
	rep := &pingpongReport{Ranks: c.Size(), Hosts: [2]string{ids[0].Host, ids[1].Host}, Rounds: o.rounds}
	for i, s := range o.sizes {
		iters := max(10, o.iters*1024/max(s, 1024))
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
		na, raw, ratio, err := ppRounds(o.rounds, i == 0, pingNA, pingRaw)
		if err != nil {
			return nil, err
		}
		l := pingpongLatency{SizeBytes: s, Iterations: iters, NetawareS: na.Seconds() / float64(2*iters)}
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
		d, err := commStream(ctx, c, buf[:o.streamSize], o.streamCount)
		if err != nil {
			return 0, fmt.Errorf("stream: %w", err)
		}
		return d, nil
	}
	var streamRaw func() (time.Duration, error)
	if conn != nil {
		streamRaw = func() (time.Duration, error) {
			d, err := rawStream(c, conn, me, buf[:o.streamSize], o.streamCount)
			if err != nil {
				return 0, fmt.Errorf("raw stream: %w", err)
			}
			return d, nil
		}
	}
	na, raw, ratio, err := ppRounds(o.rounds, true, streamNA, streamRaw)
	if err != nil {
		return nil, err
	}
	bytes := float64(o.streamSize) * float64(o.streamCount)
	sres := pingpongStream{SizeBytes: o.streamSize, Messages: o.streamCount, Netaware: bytes / na.Seconds()}
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

// ppRounds times rounds of netaware (na) and, unless raw is nil, of the
// raw baseline, alternating which goes first (ABBA...) so that a drift of
// the machine's load hits both alike; with warm, one untimed round of each
// comes first (a new process's first thousands of messages are slow: page
// faults, heap growth, the kernel placing the two ranks). It returns the
// median round of each and the median of the per-round time ratios
// na/raw: the two rounds of a pair run back to back, under the same load,
// so their ratio is steadier than the ratio of medians on a shared machine.
func ppRounds(rounds int, warm bool, na, raw func() (time.Duration, error)) (naMed, rawMed time.Duration, ratio float64, err error) {
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
	var nas, raws []time.Duration
	var ratios []float64
	for r := 0; r < rounds; r++ {
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
		nas = append(nas, a)
		if raw != nil {
			raws = append(raws, b)
			if b > 0 {
				ratios = append(ratios, float64(a)/float64(b))
			}
		}
	}
	naMed = ppMedian(nas)
	if raw != nil {
		rawMed = ppMedian(raws)
		if len(ratios) > 0 {
			slices.Sort(ratios)
			ratio = ratios[len(ratios)/2]
		}
	}
	return naMed, rawMed, ratio, nil
}

func ppMedian(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
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
		if err := c.Send(ctx, 1, ppTag, []byte(ln.Addr().String())); err != nil {
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
		if _, err := c.Recv(ctx, 1, ppTag, ok); err != nil {
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
	st, err := c.Recv(ctx, 0, ppTag, b)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 30 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", string(b[:st.Count]))
	if err != nil {
		return nil, err
	}
	conn.(*net.TCPConn).SetNoDelay(true)
	if err := c.Send(ctx, 0, ppTag, []byte{1}); err != nil {
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
			if err := c.Send(ctx, 1, ppTag, b); err != nil {
				return 0, err
			}
			if _, err := c.Recv(ctx, 1, ppTag, b); err != nil {
				return 0, err
			}
		} else {
			if _, err := c.Recv(ctx, 0, ppTag, b); err != nil {
				return 0, err
			}
			if err := c.Send(ctx, 0, ppTag, b); err != nil {
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
			if err := c.Send(ctx, 1, ppTag, b); err != nil {
				return 0, err
			}
		}
		if _, err := c.Recv(ctx, 1, ppTag, ack); err != nil {
			return 0, err
		}
	} else {
		for i := 0; i < count; i++ {
			if _, err := c.Recv(ctx, 0, ppTag, b); err != nil {
				return 0, err
			}
		}
		if err := c.Send(ctx, 0, ppTag, ack); err != nil {
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

func printPingpong(w io.Writer, r *pingpongReport) {
	fmt.Fprintf(w, "pingpong between rank 0 (%s) and rank 1 (%s), world %s of %d ranks, median of %d rounds\n",
		r.Hosts[0], r.Hosts[1], r.World, r.Ranks, r.Rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\titers\tnetaware µs\traw TCP µs\tlatency ratio\tnetaware MB/s\traw TCP MB/s\tbw ratio\t")
	for _, l := range r.Latency {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%s\t%s\t%.1f\t%s\t%s\t\n", fmtBytes(l.SizeBytes), l.Iterations, l.NetawareS*1e6,
			ppOptF(l.RawS*1e6, "%.2f"), ppOptF(l.LatencyRatio, "%.3f"), l.NetawareBps/1e6, ppOptF(l.RawBps/1e6, "%.1f"), ppOptF(l.BandwidthRate, "%.3f"))
	}
	tw.Flush()
	for _, s := range r.Streaming {
		fmt.Fprintf(w, "streaming %d x %s: netaware %.1f MB/s", s.Messages, fmtBytes(s.SizeBytes), s.Netaware/1e6)
		if s.Raw > 0 {
			fmt.Fprintf(w, ", raw TCP %.1f MB/s, ratio %.3f", s.Raw/1e6, s.Ratio)
		}
		fmt.Fprintln(w)
	}
}

func ppOptF(v float64, f string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(f, v)
}
