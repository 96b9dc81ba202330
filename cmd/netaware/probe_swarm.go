package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"netaware/comm"
	"netaware/probe"
	"netaware/swarm"
)

func newSwarmProbeCmd() *cobra.Command {
	var (
		size, fragment             string
		conns, peers, pipeline, hb int
		maxIter, stableIter        int
		stableNMI                  float64
		choke, adaptive            bool
		chokeInterval              time.Duration
		seed                       uint64
		weight, out                string
		resume, jsonOut            bool
		checkpoint                 time.Duration
	)
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
kept); --resume continues an interrupted run. See docs/swarm.md.

Examples:
  netaware probe swarm --platform bordeaux-2013 --size 2MiB --iterations 2 --out swarm.json
  netaware launch -n 8 -- netaware probe swarm --size 8MiB --out swarm.json`,
		Args: cobra.NoArgs,
	}
	wf := addWorldFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&size, "size", "4MiB", "message size M of every broadcast")
	f.StringVar(&fragment, "fragment", "16KiB", "fragment size")
	f.IntVar(&conns, "connections", swarm.DefaultConnections, "upload slots per peer (active connections)")
	f.IntVar(&peers, "peer-set", swarm.DefaultPeerSet, "peers a rank knows at most")
	f.IntVar(&pipeline, "pipeline", swarm.DefaultPipeline, "requests outstanding per connection (with --adaptive-pipeline, at least)")
	f.BoolVar(&adaptive, "adaptive-pipeline", false, "size every connection's requests to twice its bandwidth-delay product, and leave round-trip stalls out of its rate (long round trips; docs/swarm.md)")
	f.IntVar(&hb, "have-batch", 0, "fragments per announcement (0: a sixteenth of the message, at least 8)")
	f.BoolVar(&choke, "choke", false, "tit-for-tat choking (seed 000 Sect. 4.8.1: off measures better)")
	f.DurationVar(&chokeInterval, "choke-interval", swarm.DefaultChokeInterval, "rechoke period with --choke")
	f.IntVar(&maxIter, "iterations", 10, "broadcasts at most")
	f.Float64Var(&stableNMI, "stable-nmi", 0.99, "successive hierarchies agree when their NMI reaches this")
	f.IntVar(&stableIter, "stable-iterations", 2, "stop after this many successive agreements")
	f.Uint64Var(&seed, "swarm-seed", 1, "seed of the peer sets, the roots and the random choices")
	f.StringVar(&weight, "weight", probe.WeightRate, "edge weight clustered: rate (fragments per second of waiting) or fragments (Eq. 4.2)")
	f.StringVar(&out, "out", "dataset.json", "dataset file to write (other probes' sections in it are kept)")
	f.BoolVar(&resume, "resume", false, "continue the interrupted swarm probe of --out")
	f.BoolVar(&jsonOut, "json", false, "print the swarm section as JSON instead of a table")
	f.DurationVar(&checkpoint, "checkpoint", 5*time.Second, "rank 0 rewrites --out at most this often")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		m, err := parseSize("size", size)
		if err != nil {
			return err
		}
		fr, err := parseSize("fragment", fragment)
		if err != nil {
			return err
		}
		p := probe.SwarmParams{Bytes: m, MaxIterations: maxIter, StableNMI: stableNMI, StableIterations: stableIter, Weight: weight,
			Swarm: swarm.Params{Fragment: fr, Connections: conns, PeerSet: peers, Pipeline: pipeline, Adaptive: adaptive, HaveBatch: hb,
				Choke: choke, ChokeInterval: chokeInterval, Seed: seed}.WithDefaults()}
		if err := probe.CheckSwarmParams(p); err != nil {
			return usagef("%v", err)
		}
		cf := &campaignFlags{wf: wf, out: out, resume: resume}
		var ds *probe.Dataset
		wallStart := time.Now()
		info, err := runWorld(cmd.Context(), wf, func(ctx context.Context, c comm.Comm) error {
			if c.Rank() != 0 {
				return probe.RunSwarm(ctx, c, nil, p, probe.RunHooks{})
			}
			d, err := cf.openDataset(cf.worldDesc(c.Size()))
			if err != nil {
				return err
			}
			if resume && (d.Swarm == nil || d.Swarm.Params != p) {
				return fmt.Errorf("--resume: %s holds no swarm probe with these parameters", out)
			}
			if !resume && d.Swarm != nil && !d.Swarm.Complete {
				d.Swarm = nil // a fresh run, not a continuation
			}
			ds = d
			pr := &progressReporter{w: cmd.ErrOrStderr(), quiet: quietFlag(cmd), start: time.Now(), desc: "probe swarm"}
			defer pr.finish()
			ck := &checkpointer{path: out, interval: checkpoint, last: time.Now()}
			return probe.RunSwarm(ctx, c, ds, p, probe.RunHooks{Checkpoint: ck.save, Progress: pr.update})
		})
		if err != nil {
			return err
		}
		if ds == nil {
			return nil // not rank 0 of a TCP world
		}
		if jsonOut {
			return probeWriteJSON(cmd.OutOrStdout(), ds.Swarm)
		}
		return printSwarm(cmd, ds, info, out, time.Since(wallStart))
	}
	return cmd
}

func printSwarm(cmd *cobra.Command, ds *probe.Dataset, info worldInfo, out string, wall time.Duration) error {
	w := cmd.OutOrStdout()
	s := ds.Swarm
	state := "stopped at --iterations"
	if s.Stable {
		state = "stable"
	}
	fmt.Fprintf(w, "probe swarm: %d iterations of %s on %s (%d ranks), %s; %.3f s on rank 0's clock, %s wall\n",
		len(s.Iterations), fmtBytes(s.Params.Bytes), info.Kind, ds.World.Size, state, s.ClockS, wall.Round(time.Millisecond))
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
	fmt.Fprintf(w, "wrote %s\n", out)
	return nil
}
