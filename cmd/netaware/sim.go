package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"netaware/comm/sim"
	"netaware/netsim"
	"netaware/platform"
	"netaware/units"
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

// simStatsOptions are 'netaware sim stats”s options.
type simStatsOptions struct {
	streams
	platform, pattern, bytes, weighting string
	noNoise, asJSON                     bool
	seed                                int64
	eager                               int
	// parsed by validate
	size int64
	w    netsim.Weighting
}

func newSimStatsCmd() *cobra.Command {
	o := &simStatsOptions{pattern: sim.Patterns[0], bytes: "1MiB"}
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
		RunE: runOptions(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.platform, "platform", "", "built-in platform name (see 'netaware platform list') or platform.yaml file")
	f.StringVar(&o.pattern, "pattern", o.pattern, "communication pattern: "+strings.Join(sim.Patterns, ", "))
	f.StringVar(&o.bytes, "bytes", o.bytes, "message size (e.g. 64KiB, 64MiB, 1000000)")
	f.StringVar(&o.weighting, "weighting", o.weighting, "bandwidth sharing: maxmin, or rtt (SimGrid CM02: shares inverse to latency) (default: the platform's tcp.sharing, maxmin if it has none)")
	f.BoolVar(&o.noNoise, "no-noise", false, "ignore the platform's noise section")
	f.Int64Var(&o.seed, "seed", 0, "noise seed (0 = the platform's)")
	f.IntVar(&o.eager, "eager-limit", 0, "largest eager message in bytes (0 = 64 KiB; negative = always rendezvous)")
	f.BoolVar(&o.asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

func (o *simStatsOptions) validate() error {
	if o.platform == "" {
		return usagef("sim stats: --platform is required (a built-in name or a platform.yaml)")
	}
	var err error
	if o.size, err = units.ParseSize(o.bytes); err != nil {
		return usagef("sim stats: --bytes: %v", err)
	}
	if o.weighting != "" {
		if o.w, err = netsim.ParseWeighting(o.weighting); err != nil {
			return usagef("sim stats: --weighting: %v", err)
		}
	}
	if _, ok := sim.Pattern(o.pattern, nil); !ok {
		return usagef("sim stats: unknown pattern %q (want one of %v)", o.pattern, sim.Patterns)
	}
	return nil
}

func (o *simStatsOptions) run(ctx context.Context) error {
	p, err := platform.Load(o.platform)
	if err != nil {
		return err
	}
	if w := sim.Weighting(p, o.w); w != o.w {
		if o.weighting != "" {
			return usagef("sim stats: --weighting %s: %s says tcp.sharing: %s, which the simulator follows; remove that key to simulate %s", o.weighting, o.platform, p.TCP().Sharing(), o.weighting)
		}
		o.w = w
	}
	body, _ := sim.Pattern(o.pattern, make([]byte, o.size))
	opts := sim.Options{EagerLimit: o.eager, Weighting: o.w, NoNoise: o.noNoise, Seed: o.seed}
	start := time.Now()
	res, err := simRun(ctx, p, opts, body)
	wall := time.Since(start)
	if err != nil {
		return fmt.Errorf("sim stats on %s: %w", o.platform, err)
	}
	st := simStats{
		Platform: p.Name, Ranks: p.NumRanks(), Resources: len(p.Resources()),
		Pattern: o.pattern, Bytes: o.size, Weighting: o.w.String(),
		VirtualS: res.VirtualTime.Seconds(), Events: res.Events, Flows: res.Flows,
		Messages: res.Messages, Solves: res.Solves, WallS: wall.Seconds(),
	}
	if wall > 0 {
		st.EventsPerSec = float64(res.Events) / wall.Seconds()
	}
	if o.asJSON {
		enc := json.NewEncoder(o.out)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	tw := tabwriter.NewWriter(o.out, 0, 0, 2, ' ', 0)
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
}
