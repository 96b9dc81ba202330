package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"netaware/coll"
	"netaware/comm"
	"netaware/metrics"
	"netaware/units"
)

func init() { registerBench(newBenchSwarmCmd) }

// swarmBench is the --json output of 'bench swarm'.
type swarmBench struct {
	World  string           `json:"world"`
	Ranks  int              `json:"ranks"`
	Bytes  int              `json:"bytes"`
	Rounds int              `json:"rounds"`
	Series []swarmBenchAlgo `json:"series"`
}

type swarmBenchAlgo struct {
	Algorithm string    `json:"algorithm"`
	TimesS    []float64 `json:"times_s"`
	MedianS   float64   `json:"median_s"`
}

// swarmOptions are 'bench swarm'.
type swarmOptions struct {
	streams
	wf         *worldFlags
	size, algs string
	reps, root int
	asJSON     bool
	bytes      int
	list       []coll.Algorithm
}

func (o *swarmOptions) validate() error {
	m, err := parseSize("size", o.size)
	if err != nil {
		return err
	}
	if o.reps < 1 || m < 1 {
		return usagef("bench swarm: want --rounds >= 1 and --size >= 1")
	}
	o.bytes, o.list = m, nil
	for _, a := range strings.Split(o.algs, ",") {
		name, seg, _ := strings.Cut(strings.TrimSpace(a), ":")
		alg := coll.Algorithm{Name: name}
		if seg != "" {
			if alg.SegSize, err = parseSize("algorithms", seg); err != nil {
				return err
			}
		}
		if name != coll.Swarm.Name {
			if _, err := alg.Build(2, 0, nil); err != nil {
				return usagef("--algorithms: %v", err)
			}
		}
		o.list = append(o.list, alg)
	}
	return nil
}

func (o *swarmOptions) run(ctx context.Context) error {
	m, list := o.bytes, o.list
	// In-process worlds share one buffer: ranks of the simulator run
	// one at a time, and 512 copies of 16 MiB would not fit.
	var shared []byte
	if o.wf.platform != "" {
		shared = make([]byte, m)
	}
	var times [][]float64
	info, err := runWorld(ctx, o.wf, func(ctx context.Context, c comm.Comm) error {
		if o.root < 0 || o.root >= c.Size() {
			return usagef("--root %d: the world has %d ranks", o.root, c.Size())
		}
		buf := shared
		if buf == nil {
			buf = make([]byte, m)
		}
		t, err := coll.BcastTimes(ctx, c, o.root, buf, list, o.reps)
		if c.Rank() == 0 {
			times = t
		}
		return err
	})
	if err != nil {
		return err
	}
	if times == nil {
		return nil // not rank 0 of a TCP world
	}
	out := swarmBench{World: describeWorld(info), Ranks: info.Size, Bytes: m, Rounds: o.reps}
	for i, a := range list {
		out.Series = append(out.Series, swarmBenchAlgo{Algorithm: a.String(), TimesS: times[i], MedianS: metrics.Median(times[i])})
	}
	w := o.out
	if o.asJSON {
		return probeWriteJSON(w, out)
	}
	fmt.Fprintf(w, "bench swarm: %s broadcasts on %s, %d rounds, median of the slowest rank's time\n", units.FormatSize(int64(m)), out.World, o.reps)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "algorithm\tmedian\tvs %s\t\n", out.Series[0].Algorithm)
	base := out.Series[0].MedianS
	for _, s := range out.Series {
		fmt.Fprintf(tw, "%s\t%.4f s\t%.2fx\t\n", s.Algorithm, s.MedianS, s.MedianS/base)
	}
	return tw.Flush()
}

func newBenchSwarmCmd() *cobra.Command {
	o := &swarmOptions{}
	cmd := &cobra.Command{
		Use:   "swarm",
		Short: "The swarm broadcast against tree broadcasts on any world (simulated, TCP, emulated)",
		Long: `bench swarm times broadcasts of --size bytes with each algorithm of
--algorithms, --rounds rounds in which every algorithm runs once in turn,
a barrier before each; a broadcast's time is its slowest rank's. It runs on
a simulated platform (--platform), on goroutines (--local) or on the ranks
'netaware launch', mpirun or 'netaware emu run' started, which is how the
swarm broadcast (seed 000 Sect. 4.2) is compared with the tree broadcasts
on a real kernel's TCP (docs/collectives.md).

Algorithms are coll's names (binomial, pipeline, chain, ...) and swarm;
"pipeline:65536" gives a segment size (swarm: the fragment size).

Examples:
  netaware bench swarm --platform bordeaux-2013 --size 4MiB --rounds 1
  netaware bench swarm --platform bordeaux-2013 --size 1MiB --algorithms swarm:65536,binomial --json`,
		Args: cobra.NoArgs,
		RunE: runOptions(o),
	}
	o.wf = addWorldFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.size, "size", "16MiB", "message size")
	f.StringVar(&o.algs, "algorithms", "swarm,binomial,pipeline", "algorithms to compare, comma separated; name[:segment bytes]")
	f.IntVar(&o.reps, "rounds", 3, "rounds (every algorithm once per round)")
	f.IntVar(&o.root, "root", 0, "root rank")
	f.BoolVar(&o.asJSON, "json", false, "print the times as JSON")
	return cmd
}
