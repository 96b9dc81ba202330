package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"netaware/comm"
	"netaware/comm/pingpong"
	"netaware/comm/tcp"
	"netaware/units"
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

// pingpongOptions are 'bench pingpong'.
type pingpongOptions struct {
	streams
	sizes      string
	o          pingpong.Options
	jsonOut    bool
	noRaw      bool
	streamSize string
	wf         *worldFlags
}

// validate parses the sizes into the library's options and lets the
// library check them.
func (p *pingpongOptions) validate() error {
	var err error
	p.o.Sizes = nil
	for _, f := range strings.Split(p.sizes, ",") {
		n, err := parseSize("sizes", strings.TrimSpace(f))
		if err != nil {
			return err
		}
		p.o.Sizes = append(p.o.Sizes, n)
	}
	if p.o.StreamSize, err = parseSize("stream-size", p.streamSize); err != nil {
		return err
	}
	p.o.Raw = !p.noRaw && p.wf.platform == ""
	if err := p.o.Validate(); err != nil {
		return usagef("%v", err)
	}
	if env, ok := tcp.Detect(); ok {
		coord := env.Coordinator
		if p.wf.coordinator != "" {
			coord = p.wf.coordinator
		}
		if h, _, err := net.SplitHostPort(coord); err == nil && h != "" {
			p.o.RawHost = h
		}
	}
	return nil
}

func (p *pingpongOptions) run(ctx context.Context) error {
	var rep *pingpong.Report
	info, err := runWorld(ctx, p.wf, func(ctx context.Context, c comm.Comm) error {
		r, err := pingpong.Run(ctx, c, p.o)
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
	if p.jsonOut {
		enc := json.NewEncoder(p.out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printPingpong(p.out, rep)
	return nil
}

func newBenchPingpongCmd() *cobra.Command {
	p := &pingpongOptions{o: pingpong.Defaults()}
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
		RunE: runOptions(p),
	}
	p.wf = addWorldFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&p.sizes, "sizes", "1,1KiB,64KiB,1MiB", "ping-pong message sizes (bytes, or with KiB/MiB)")
	f.IntVar(&p.o.Iters, "iters", p.o.Iters, "ping-pongs per round for 1-byte messages (fewer for large ones, same bytes)")
	f.IntVar(&p.o.Rounds, "rounds", p.o.Rounds, "alternating rounds of netaware and raw TCP; the median is reported")
	f.StringVar(&p.streamSize, "stream-size", "1MiB", "message size of the streaming test")
	f.IntVar(&p.o.StreamCount, "stream-count", p.o.StreamCount, "messages per streaming round")
	f.BoolVar(&p.noRaw, "no-raw", false, "skip the raw Go TCP baseline")
	f.BoolVar(&p.jsonOut, "json", false, "print JSON instead of a table")
	return cmd
}

func printPingpong(w io.Writer, r *pingpong.Report) {
	fmt.Fprintf(w, "pingpong between rank 0 (%s) and rank 1 (%s), world %s of %d ranks, median of %d rounds\n",
		r.Hosts[0], r.Hosts[1], r.World, r.Ranks, r.Rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\titers\tnetaware µs\traw TCP µs\tlatency ratio\tnetaware MB/s\traw TCP MB/s\tbw ratio\t")
	for _, l := range r.Latency {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%s\t%s\t%.1f\t%s\t%s\t\n", units.FormatSize(int64(l.SizeBytes)), l.Iterations, l.NetawareS*1e6,
			ppOptF(l.RawS*1e6, "%.2f"), ppOptF(l.LatencyRatio, "%.3f"), l.NetawareBps/1e6, ppOptF(l.RawBps/1e6, "%.1f"), ppOptF(l.BandwidthRate, "%.3f"))
	}
	tw.Flush()
	for _, s := range r.Streaming {
		fmt.Fprintf(w, "streaming %d x %s: netaware %.1f MB/s", s.Messages, units.FormatSize(int64(s.SizeBytes)), s.Netaware/1e6)
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
