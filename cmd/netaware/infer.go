package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"netaware/comm"
	"netaware/discover"
	"netaware/infer"
	"netaware/infer/live"
	"netaware/topo"
)

func init() { register(newInferCmd) }

// inferOptions are 'netaware infer”s options.
type inferOptions struct {
	streams
	world     *worldFlags
	outFile   string
	bandwidth bool
	bwBytes   int
	slowRatio float64
	asJSON    bool
}

func newInferOptions() *inferOptions {
	return &inferOptions{outFile: "topology.json", bwBytes: live.DefaultBandwidthParams().Bytes, slowRatio: discover.BandwidthClusterRatio}
}

func newInferCmd() *cobra.Command {
	o := newInferOptions()
	cmd := &cobra.Command{
		Use:   "infer",
		Short: "Infer the network as a latency tree from RTTs (seed 002), optionally with a bandwidth map",
		Long: `infer runs Shirai, Saito and Taura's RTT tree inference among the ranks of a
world: the tree under construction is handed from rank to rank, each rank adds
itself by measuring RTTs to a few ranks already in it (find_close_host, then
procedure add with Eq. (1) branching points), so only O(N d) of the N(N-1)/2
pairs are measured. Every rank is a leaf; inner nodes are inferred switches;
edge lengths are one-way latencies.

Rank 0 writes a topology.json (docs/topology-format.md) holding the tree and levels cut
from it: tree distances, average-linkage dendrogram, cut where the merge
height jumps (the same rule as 'netaware discover --blind').

With --bandwidth the ranks then build seed 002's bandwidth map (Sect. 6.1):
stage by stage from the leaves up, hosts elected under each child of a switch
measure end-to-end bandwidth in disjoint pairs, in parallel, and the results
label the tree's edges (bandwidth_Bps). The tree cut at its slow edges (the
largest gap of the edge bandwidths, at least --slow-ratio) is added as a
"bandwidth-cluster" level when it nests with the latency levels.

See docs/inference.md.`,
		Example: `  netaware infer --platform shirai-4clusters --out shirai.json
  netaware infer --platform dichev-n1 --bandwidth --out dichev.json
  netaware launch -n 16 -- netaware infer --out topology.json`,
		Args: cobra.NoArgs,
		RunE: runOptions(o),
	}
	o.world = addWorldFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.outFile, "out", o.outFile, "topology file to write")
	f.BoolVar(&o.bandwidth, "bandwidth", o.bandwidth, "also build the bandwidth map over the tree")
	f.IntVar(&o.bwBytes, "bandwidth-bytes", o.bwBytes, "bytes of each bulk transfer of the bandwidth map")
	f.BoolVar(&o.asJSON, "json", o.asJSON, "print the summary as JSON")
	f.Float64Var(&o.slowRatio, "slow-ratio", o.slowRatio, "smallest bandwidth gap (fast/slow) that makes edges slow for the bandwidth-cluster level")
	return cmd
}

func (o *inferOptions) validate() error {
	if o.bwBytes <= 0 || o.bwBytes > 1<<30 {
		return usagef("--bandwidth-bytes %d: want 1 to 2^30", o.bwBytes)
	}
	if !(o.slowRatio > 1) {
		return usagef("--slow-ratio %g: want a ratio above 1", o.slowRatio)
	}
	return nil
}

func (o *inferOptions) run(ctx context.Context) error {
	var (
		res  live.Result
		bmap *infer.BandwidthMap
		vt   time.Duration
	)
	start := time.Now()
	pr := &progressReporter{w: o.errOut, quiet: o.quiet, start: start, desc: "rtt tree inference"}
	defer pr.finish()
	info, err := runWorld(ctx, o.world, func(ctx context.Context, c comm.Comm) error {
		t0 := c.Now()
		prm := live.DefaultParams()
		if !o.world.oneRankPerProcess() || c.Rank() == 0 {
			prm.Joined = pr.update // ranks in the tree so far
		}
		r, err := live.Infer(ctx, c, prm)
		if err != nil {
			return err
		}
		var m *infer.BandwidthMap
		if o.bandwidth && c.Size() > 1 {
			p := live.DefaultBandwidthParams()
			p.Bytes = o.bwBytes
			if m, err = live.BandwidthMap(ctx, c, r.Tree, p); err != nil {
				return err
			}
		}
		if c.Rank() == 0 {
			res, bmap, vt = r, m, c.Now()-t0
		}
		return nil
	})
	pr.finish()
	if err != nil {
		return err
	}
	if res.Tree == nil {
		return nil // not rank 0 of a TCP world
	}
	wall := time.Since(start)
	t, err := discover.InferredTopology(res, bmap, info.Size, o.slowRatio)
	if err != nil {
		return err
	}
	t.Measurements.WallTimeS = wall.Seconds()
	t.Measurements.VirtualTimeS = vt.Seconds()
	if err := t.WriteFile(o.outFile); err != nil {
		return err
	}
	sum := summarizeInfer(t, res, bmap, info, vt, wall, o.outFile)
	if o.asJSON {
		return probeWriteJSON(o.streams.out, sum)
	}
	printInferSummary(o.streams.out, sum)
	return nil
}

// inferSummary is what 'infer' prints (its --json output).
type inferSummary struct {
	World                 string         `json:"world"`
	Ranks                 int            `json:"ranks"`
	TreeSwitches          int            `json:"tree_switches"`
	PairsMeasured         int            `json:"pairs_measured"`
	PairsTotal            int            `json:"pairs_total"`
	AddMeasurements       int            `json:"add_measurements"`
	PingPongs             int            `json:"ping_pongs"`
	BandwidthMeasurements int            `json:"bandwidth_measurements,omitempty"`
	BandwidthRounds       int            `json:"bandwidth_rounds,omitempty"`
	Levels                []levelSummary `json:"levels"`
	VirtualTimeS          float64        `json:"virtual_time_s,omitempty"`
	WallTimeS             float64        `json:"wall_time_s"`
	TopologyFile          string         `json:"topology_file"`
}

func summarizeInfer(t *topo.Topology, res live.Result, m *infer.BandwidthMap, info worldInfo, vt, wall time.Duration, out string) inferSummary {
	s := inferSummary{World: describeWorld(info), Ranks: info.Size, TreeSwitches: res.Tree.Switches(), PairsMeasured: res.Pairs,
		PairsTotal: t.Measurements.PairsTotal, AddMeasurements: res.AddMeasurements, PingPongs: res.Exchanges,
		WallTimeS: wall.Seconds(), TopologyFile: out}
	if m != nil {
		s.BandwidthMeasurements, s.BandwidthRounds = m.Measurements, len(m.Rounds)
	}
	for _, l := range t.Levels {
		s.Levels = append(s.Levels, summarizeLevel(l))
	}
	if info.Kind == "sim" {
		s.VirtualTimeS = vt.Seconds()
	}
	return s
}

func printInferSummary(w io.Writer, s inferSummary) {
	fmt.Fprintf(w, "%s: %d ranks\n", s.World, s.Ranks)
	fmt.Fprintf(w, "rtt tree: %d switches, %d pairs measured of %d (%.1f%%), %d by procedure add, %d ping-pongs\n",
		s.TreeSwitches, s.PairsMeasured, s.PairsTotal, 100*float64(s.PairsMeasured)/float64(max(1, s.PairsTotal)), s.AddMeasurements, s.PingPongs)
	if s.BandwidthRounds > 0 {
		fmt.Fprintf(w, "bandwidth map: %d pair measurements in %d parallel rounds\n", s.BandwidthMeasurements, s.BandwidthRounds)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LEVEL\tGROUPS\tSIZES (min/median/max)")
	for _, l := range s.Levels {
		fmt.Fprintf(tw, "%s\t%d\t%d/%d/%d\n", l.Name, l.Groups, l.MinSize, l.MedianSize, l.MaxSize)
	}
	tw.Flush()
	wall := time.Duration(s.WallTimeS * float64(time.Second))
	if s.VirtualTimeS > 0 {
		fmt.Fprintf(w, "virtual time %s, wall time %s\n", fmtDuration(time.Duration(s.VirtualTimeS*float64(time.Second))), fmtDuration(wall))
	} else {
		fmt.Fprintf(w, "time %s\n", fmtDuration(wall))
	}
	fmt.Fprintf(w, "wrote %s\n", s.TopologyFile)
}
