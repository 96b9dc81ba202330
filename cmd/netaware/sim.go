package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/netsim"
	"netaware/platform"
)

func init() { register(newSimCmd) }

func newSimCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Inspect the network simulator",
		Long: `Commands about the flow-level simulator that runs netaware's algorithms in
virtual time (see docs/simulator.md).

  run    run any netaware command on a simulated platform
  stats  run a communication pattern on a platform and report what the
         simulator did (virtual time, events, flows, max-min solves) and how
         fast it did it`,
		Example: `  netaware sim stats --platform dichev-n1 --pattern bcast --bytes 64MiB`,
	}
	cmd.AddCommand(newSimStatsCmd(), newSimRunCmd())
	return cmd
}

type simStats struct {
	Platform     string  `json:"platform"`
	Ranks        int     `json:"ranks"`
	Resources    int     `json:"resources"`
	Pattern      string  `json:"pattern"`
	Bytes        int64   `json:"bytes"`
	Weighting    string  `json:"weighting"`
	VirtualS     float64 `json:"virtual_time_s"`
	Events       int64   `json:"events"`
	Flows        int64   `json:"flows"`
	Messages     int64   `json:"messages"`
	Solves       int64   `json:"solves"`
	WallS        float64 `json:"wall_s"`
	EventsPerSec float64 `json:"events_per_s"`
}

var simPatterns = []string{"bcast", "ring", "pairs"}

func newSimStatsCmd() *cobra.Command {
	var (
		plat, pattern, bytesStr, weighting string
		noNoise, asJSON                    bool
		seed                               int64
		eager                              int
	)
	cmd := &cobra.Command{
		Use:   "stats --platform NAME|FILE [--pattern bcast|ring|pairs] [--bytes SIZE]",
		Short: "Run a pattern in the simulator and report its work and speed",
		Long: `Stats runs one communication pattern on every rank of a simulated platform and
prints the virtual time it took and the simulator's work: kernel events,
network flows, point-to-point messages, max-min solves, wall time and events
per second of wall time.

Patterns:
  bcast  binomial-tree broadcast of --bytes from rank 0 (MPICH's algorithm)
  ring   every rank sends --bytes to the next rank and receives from the
         previous one, at the same time
  pairs  for k = 1, 2, 4, ...: every rank exchanges --bytes with rank XOR k

All ranks share one buffer (the simulator skips copies onto itself), so large
sizes cost no memory per rank.`,
		Example: `  netaware sim stats --platform zhu-2racks
  netaware sim stats --platform dichev-n1 --pattern pairs --bytes 1MiB --weighting rtt --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if plat == "" {
				return usagef("sim stats: --platform is required (a built-in name or a platform.yaml)")
			}
			size, err := platform.ParseSize(bytesStr)
			if err != nil {
				return usagef("sim stats: --bytes: %v", err)
			}
			w, err := netsim.ParseWeighting(weighting)
			if err != nil {
				return usagef("sim stats: --weighting: %v", err)
			}
			body, ok := simPattern(pattern, make([]byte, size))
			if !ok {
				return usagef("sim stats: unknown pattern %q (want one of %v)", pattern, simPatterns)
			}
			p, err := platform.Load(plat)
			if err != nil {
				return err
			}
			opts := sim.Options{EagerLimit: eager, Weighting: w, NoNoise: noNoise, Seed: seed}
			start := time.Now()
			res, err := sim.Run(cmd.Context(), p, opts, body)
			wall := time.Since(start)
			if err != nil {
				return fmt.Errorf("sim stats on %s: %w", plat, err)
			}
			st := simStats{
				Platform: p.Name, Ranks: p.NumRanks(), Resources: len(p.Resources()),
				Pattern: pattern, Bytes: size, Weighting: w.String(),
				VirtualS: res.VirtualTime.Seconds(), Events: res.Events, Flows: res.Flows,
				Messages: res.Messages, Solves: res.Solves, WallS: wall.Seconds(),
			}
			if wall > 0 {
				st.EventsPerSec = float64(res.Events) / wall.Seconds()
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "platform\t%s (%d ranks, %d resources)\n", st.Platform, st.Ranks, st.Resources)
			fmt.Fprintf(tw, "pattern\t%s of %d bytes, %s sharing\n", st.Pattern, st.Bytes, st.Weighting)
			fmt.Fprintf(tw, "virtual time\t%v\n", res.VirtualTime)
			fmt.Fprintf(tw, "events\t%d\n", st.Events)
			fmt.Fprintf(tw, "flows\t%d\n", st.Flows)
			fmt.Fprintf(tw, "messages\t%d\n", st.Messages)
			fmt.Fprintf(tw, "max-min solves\t%d\n", st.Solves)
			fmt.Fprintf(tw, "wall time\t%v\n", wall.Round(time.Microsecond))
			fmt.Fprintf(tw, "events per second\t%.0f\n", st.EventsPerSec)
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&plat, "platform", "", "built-in platform name (see 'netaware platform list') or platform.yaml file")
	f.StringVar(&pattern, "pattern", "bcast", "communication pattern: bcast, ring or pairs")
	f.StringVar(&bytesStr, "bytes", "1MiB", "message size (e.g. 64KiB, 64MiB, 1000000)")
	f.StringVar(&weighting, "weighting", "maxmin", "bandwidth sharing: maxmin, or rtt (SimGrid CM02: shares inverse to latency)")
	f.BoolVar(&noNoise, "no-noise", false, "ignore the platform's noise section")
	f.Int64Var(&seed, "seed", 0, "noise seed (0 = the platform's)")
	f.IntVar(&eager, "eager-limit", 0, "largest eager message in bytes (0 = 64 KiB; negative = always rendezvous)")
	f.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

// simPattern returns the body of a pattern; every rank uses buf.
func simPattern(name string, buf []byte) (func(ctx context.Context, c comm.Comm) error, bool) {
	switch name {
	case "bcast":
		return func(ctx context.Context, c comm.Comm) error {
			return sim.BinomialBcast(ctx, c, buf)
		}, true
	case "ring":
		return func(ctx context.Context, c comm.Comm) error {
			n, me := c.Size(), c.Rank()
			_, err := comm.Sendrecv(ctx, c, (me+1)%n, 0, buf, (me+n-1)%n, 0, buf)
			return err
		}, true
	case "pairs":
		return func(ctx context.Context, c comm.Comm) error {
			n, me := c.Size(), c.Rank()
			for k := 1; k < n; k <<= 1 {
				peer := me ^ k
				if peer >= n {
					continue
				}
				if _, err := comm.Sendrecv(ctx, c, peer, k, buf, peer, k, buf); err != nil {
					return err
				}
			}
			return nil
		}, true
	}
	return nil, false
}
