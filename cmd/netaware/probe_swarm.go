package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"netaware/comm"
	"netaware/dataset"
	"netaware/metrics"
	"netaware/probe"
	"netaware/score"
	"netaware/units"
)

// swarmProbeOptions are 'netaware probe swarm”s options.
type swarmProbeOptions struct {
	streams
	world          *worldFlags
	size, fragment string
	outFile        string
	resume, asJSON bool
	show           bool
	truth          string
	checkpoint     time.Duration
	params         dataset.SwarmParams
}

func newSwarmProbeOptions() *swarmProbeOptions {
	p := probe.DefaultSwarmParams()
	p.Weight = dataset.WeightRate
	// The command's seed has always been 1: datasets record it, and
	// --resume continues only a probe with the same parameters.
	p.Swarm.Seed = 1
	return &swarmProbeOptions{params: p, size: units.FormatSize(int64(p.Bytes)), fragment: units.FormatSize(int64(p.Swarm.Fragment)),
		outFile: "dataset.json", checkpoint: 5 * time.Second}
}

func newSwarmProbeCmd() *cobra.Command {
	o := newSwarmProbeOptions()
	cmd := &cobra.Command{
		Use:   "swarm",
		Short: "Bandwidth tomography by swarm broadcasts (seed 000 Ch. 4): fragments per peer pair, iterated until the clustering is stable",
		Long: `swarm broadcasts a message of --size bytes from one root to every rank,
BitTorrent-style (seed 000 Ch. 4): the message is cut into --fragment
fragments, every rank requests the fragments it lacks from peers that have
them (rarest first, random among equals), each peer uploads to at most
--connections peers at a time and knows at most --peer-set peers.
Tit-for-tat (--choke) is off by default, as seed 000 Sect. 4.8.1 finds that
it hurts the measurement. Every rank counts the fragments it received from
each peer and how long it waited for them; rank 0 gathers the counts
(w(e), Eq. 4.1), averages them over the iterations (Eq. 4.2), clusters them
into a bandwidth hierarchy after every iteration (Louvain and hierarchical
modularity, Sect. 5.10) and stops once --stable-iterations successive
iterations found the previous hierarchy with an NMI of at least
--stable-nmi, or after --iterations. The root moves between iterations
(Sect. 4.6). Results go to the "swarm" section of --out (other sections are
kept); --resume continues an interrupted run. --truth scores the hierarchy
of iterations 1..k, for every k, against a platform's ground truth (NMI of
the best-matching level per true level); --show prints --out's swarm
section without running anything. See docs/swarm.md.

Examples:
  netaware probe swarm --platform bordeaux-2013 --size 2MiB --iterations 2 --out swarm.json
  netaware probe swarm --show --out swarm.json --truth bordeaux-2013
  netaware launch -n 8 -- netaware probe swarm --size 8MiB --out swarm.json`,
		Args: cobra.NoArgs,
		RunE: runOptions(o),
	}
	o.world = addWorldFlags(cmd)
	f := cmd.Flags()
	p, sw := &o.params, &o.params.Swarm
	f.StringVar(&o.size, "size", o.size, "message size M of every broadcast")
	f.StringVar(&o.fragment, "fragment", o.fragment, "fragment size")
	f.IntVar(&sw.Connections, "connections", sw.Connections, "upload slots per peer (active connections)")
	f.IntVar(&sw.PeerSet, "peer-set", sw.PeerSet, "peers a rank knows at most")
	f.IntVar(&sw.Pipeline, "pipeline", sw.Pipeline, "requests outstanding per connection (with --adaptive-pipeline, at least)")
	f.BoolVar(&sw.Adaptive, "adaptive-pipeline", sw.Adaptive, "size every connection's requests to twice its bandwidth-delay product, and leave round-trip stalls out of its rate (long round trips; docs/swarm.md)")
	f.IntVar(&sw.HaveBatch, "have-batch", sw.HaveBatch, "fragments per announcement (0: a sixteenth of the message, at least 8)")
	f.BoolVar(&sw.Choke, "choke", sw.Choke, "tit-for-tat choking (seed 000 Sect. 4.8.1: off measures better)")
	f.DurationVar(&sw.ChokeInterval, "choke-interval", sw.ChokeInterval, "rechoke period with --choke")
	f.IntVar(&p.MaxIterations, "iterations", p.MaxIterations, "broadcasts at most")
	f.Float64Var(&p.StableNMI, "stable-nmi", p.StableNMI, "successive hierarchies agree when their NMI reaches this")
	f.IntVar(&p.StableIterations, "stable-iterations", p.StableIterations, "stop after this many successive agreements")
	f.Uint64Var(&sw.Seed, "swarm-seed", sw.Seed, "seed of the peer sets, the roots and the random choices")
	f.StringVar(&p.Weight, "weight", p.Weight, "edge weight clustered: rate (fragments per second of waiting) or fragments (Eq. 4.2)")
	f.StringVar(&o.outFile, "out", o.outFile, "dataset file to write (other probes' sections in it are kept)")
	f.BoolVar(&o.resume, "resume", false, "continue the interrupted swarm probe of --out")
	f.BoolVar(&o.asJSON, "json", false, "print the swarm section as JSON instead of a table (with --truth: {\"swarm\": section, \"truth\": scores per iteration})")
	f.BoolVar(&o.show, "show", false, "print the swarm section of --out and run nothing")
	f.StringVar(&o.truth, "truth", "", "score every iteration's hierarchy against this ground truth: a platform (built-in name or platform.yaml) or a topology.json")
	f.DurationVar(&o.checkpoint, "checkpoint", o.checkpoint, "rank 0 rewrites --out at most this often")
	return cmd
}

func (o *swarmProbeOptions) validate() error {
	var err error
	if o.params.Bytes, err = parseSize("size", o.size); err != nil {
		return err
	}
	if o.params.Swarm.Fragment, err = parseSize("fragment", o.fragment); err != nil {
		return err
	}
	o.params.Swarm = o.params.Swarm.WithDefaults()
	if err := probe.CheckSwarmParams(o.params); err != nil {
		return usagef("%v", err)
	}
	return nil
}

func (o *swarmProbeOptions) run(ctx context.Context) error {
	var truth *score.Truth
	if o.truth != "" {
		var err error
		if truth, err = score.LoadTruth(o.truth); err != nil {
			return usagef("--truth: %v", err)
		}
	}
	if o.show {
		ds, err := dataset.Load(o.outFile)
		if err != nil {
			return err
		}
		if ds.Swarm == nil {
			return fmt.Errorf("--show: %s holds no swarm probe", o.outFile)
		}
		return o.print(ds, worldInfo{Kind: "dataset " + o.outFile}, truth, 0)
	}
	p := o.params
	cf := &campaignFlags{wf: o.world, out: o.outFile, resume: o.resume}
	var ds *dataset.Dataset
	wallStart := time.Now()
	info, err := runWorld(ctx, o.world, func(ctx context.Context, c comm.Comm) error {
		if c.Rank() != 0 {
			return probe.RunSwarm(ctx, c, nil, p, probe.RunHooks{})
		}
		d, err := cf.openDataset(cf.worldDesc(c.Size()))
		if err != nil {
			return err
		}
		if o.resume && (d.Swarm == nil || d.Swarm.Params != p) {
			return fmt.Errorf("--resume: %s holds no swarm probe with these parameters", o.outFile)
		}
		if !o.resume && d.Swarm != nil && !d.Swarm.Complete {
			d.Swarm = nil // a fresh run, not a continuation
		}
		ds = d
		pr := &progressReporter{w: o.errOut, quiet: o.quiet, start: time.Now(), desc: "probe swarm"}
		defer pr.finish()
		ck := &checkpointer{path: o.outFile, interval: o.checkpoint, last: time.Now()}
		return probe.RunSwarm(ctx, c, ds, p, probe.RunHooks{Checkpoint: ck.save, Progress: pr.update})
	})
	if err != nil {
		return err
	}
	if ds == nil {
		return nil // not rank 0 of a TCP world
	}
	return o.print(ds, info, truth, time.Since(wallStart))
}

// swarmTruthJSON is --json's output with --truth.
type swarmTruthJSON struct {
	Swarm *dataset.SwarmSection `json:"swarm"`
	// Truth[k-1] scores the hierarchy of iterations 1..k (null: no level).
	Truth [][]metrics.LevelScore `json:"truth"`
}

func (o *swarmProbeOptions) print(ds *dataset.Dataset, info worldInfo, truth *score.Truth, wall time.Duration) error {
	var curve [][]metrics.LevelScore
	if truth != nil {
		if truth.Size != ds.World.Size {
			return usagef("--truth %s has %d ranks, the swarm probe %d", truth.Name, truth.Size, ds.World.Size)
		}
		var err error
		if curve, err = probe.SwarmTruthCurve(ds.Swarm, ds.World.Size, truth.Levels); err != nil {
			return err
		}
	}
	if o.asJSON {
		if truth != nil {
			return probeWriteJSON(o.out, swarmTruthJSON{Swarm: ds.Swarm, Truth: curve})
		}
		return probeWriteJSON(o.out, ds.Swarm)
	}
	if err := printSwarm(o.out, ds, info, o.outFile, wall); err != nil {
		return err
	}
	if truth != nil {
		return printSwarmTruth(o.out, truth, curve)
	}
	return nil
}

// printSwarmTruth prints one row per iteration k: each true level's NMI
// with the best-matching level of the hierarchy of iterations 1..k.
func printSwarmTruth(w io.Writer, truth *score.Truth, curve [][]metrics.LevelScore) error {
	fmt.Fprintf(w, "against %s (NMI of the best-matching level; hierarchy of iterations 1..k):\n", truth.Name)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprint(tw, "k\t")
	for _, l := range truth.Levels {
		fmt.Fprintf(tw, "%s\t", l.Name)
	}
	fmt.Fprintln(tw)
	for k, sc := range curve {
		fmt.Fprintf(tw, "%d\t", k+1)
		for i := range truth.Levels {
			if sc == nil {
				fmt.Fprint(tw, "-\t")
				continue
			}
			fmt.Fprintf(tw, "%.3f\t", sc[i].NMI)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func printSwarm(w io.Writer, ds *dataset.Dataset, info worldInfo, out string, wall time.Duration) error {
	s := ds.Swarm
	state := "stopped at --iterations"
	switch {
	case s.Stable:
		state = "stable"
	case !s.Complete:
		state = "incomplete (--resume continues it)"
	}
	fmt.Fprintf(w, "probe swarm: %d iterations of %s on %s (%d ranks), %s; %.3f s on rank 0's clock",
		len(s.Iterations), units.FormatSize(int64(s.Params.Bytes)), info.Kind, ds.World.Size, state, s.ClockS)
	if wall > 0 {
		fmt.Fprintf(w, ", %s wall", wall.Round(time.Millisecond))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "iteration\troot\ttime\tconnections\tlevels\tNMI with previous\t")
	for i, it := range s.Iterations {
		nmi := "-"
		if it.NMI != nil {
			nmi = fmt.Sprintf("%.3f", *it.NMI)
		}
		fmt.Fprintf(tw, "%d\t%d\t%.3f s\t%d\t%d\t%s\t\n", i+1, it.Root, it.TimeS, len(it.Counts), it.Levels, nmi)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	h, err := probe.SwarmHierarchy(s, ds.World.Size, 0)
	if err != nil {
		return err
	}
	for i, l := range h {
		k := 0
		for _, v := range l {
			k = max(k, v+1)
		}
		fmt.Fprintf(w, "level %d: %d groups\n", i+1, k)
	}
	if wall > 0 {
		fmt.Fprintf(w, "wrote %s\n", out)
	}
	return nil
}
