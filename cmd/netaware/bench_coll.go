package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"netaware"
	"netaware/coll"
	"netaware/comm"
	"netaware/internal/atomicfile"
	"netaware/topo"
	"netaware/tune"
	"netaware/units"
)

func init() {
	for _, k := range tune.Collectives {
		registerBench(func() *cobra.Command { return newBenchCollCmd(k) })
	}
}

// collBench is the --json output of 'bench COLL'.
type collBench struct {
	Collective     string             `json:"collective"`
	Platform       string             `json:"platform"`
	Ranks          int                `json:"ranks"`
	TopologySource string             `json:"topology_source"`
	SizesBytes     []int              `json:"sizes_bytes"`
	Series         []benchSeries      `json:"series"`
	Tuned          []benchTunedChoice `json:"tuned"`
}

type benchSeries struct {
	Label string `json:"label"`
	// MeanS[i] is the mean time at SizesBytes[i] (0: failed).
	MeanS []float64 `json:"mean_s"`
}

type benchTunedChoice struct {
	Bytes  int     `json:"size_bytes"`
	Tuned  string  `json:"tuned"`
	TunedS float64 `json:"tuned_s"`
	// BaselineS is Open MPI's fixed decision (bcast only; 0 otherwise).
	BaselineS float64 `json:"ompi_fixed_s,omitempty"`
	Speedup   float64 `json:"speedup,omitempty"`
	// CommDefault is what netaware.Comm runs by default (--comm-default).
	CommDefault  string  `json:"comm_default,omitempty"`
	CommDefaultS float64 `json:"comm_default_s,omitempty"`
}

// benchOptions are 'bench COLL'.
type benchOptions struct {
	streams
	flags        collFlags
	coll         tune.Collective
	asJSON       bool
	plotFile     string
	decisionFile string
	decision     *coll.Decision
	commDefault  bool
}

// rootCollective is tune's collective under the root package's name.
var rootCollective = map[tune.Collective]netaware.Collective{
	tune.Bcast: netaware.Bcast, tune.Scatter: netaware.Scatter, tune.Gather: netaware.Gather, tune.Reduce: netaware.Reduce,
	tune.Allgather: netaware.Allgather, tune.Allreduce: netaware.Allreduce, tune.ReduceScatter: netaware.ReduceScatter,
}

// commDefaultSeries is the label of what netaware.Comm runs by default.
const commDefaultSeries = "netaware.Comm default"

// commDefaultDecision is, as a decision table for exactly c's size, what
// netaware.Comm (the root package) runs for collective k at each measured
// size with topology t: measured as the auto series, it times the
// library's own choice.
func commDefaultDecision(c comm.Comm, k tune.Collective, t *topo.Topology, sizes []int) (*coll.Decision, error) {
	nc := netaware.New(c)
	if err := nc.SetTopology(t); err != nil {
		return nil, err
	}
	rule := coll.DecisionRule{MinRanks: c.Size(), MaxRanks: c.Size()}
	for i, n := range sizes {
		a, err := nc.Algorithm(rootCollective[k], n, tune.ReduceOp)
		if err != nil {
			return nil, err
		}
		sr := coll.SizeRule{Algorithm: a}
		if i+1 < len(sizes) {
			sr.BelowBytes = n + 1
		}
		rule.Sizes = append(rule.Sizes, sr)
	}
	return &coll.Decision{Version: coll.DecisionVersion, Rules: []coll.DecisionRule{rule}}, nil
}

func (o *benchOptions) validate() error {
	if o.commDefault && o.decisionFile != "" {
		return usagef("--comm-default and --decision both measure the auto series: give one")
	}
	if o.decisionFile != "" {
		d, err := coll.ReadDecisionFile(o.decisionFile)
		if err != nil {
			return usagef("--decision: %v", err)
		}
		o.decision = d
	}
	return o.flags.check()
}

func (o *benchOptions) run(ctx context.Context) error {
	w, info := o.out, o.out
	if o.asJSON {
		info = o.errOut
	}
	return o.flags.runCollWorld(ctx, []tune.Collective{o.coll}, func(ctx context.Context, c comm.Comm, s *collSetup) error {
		if len(s.commSizes) > 1 {
			return usagef("--comm-sizes: bench %s measures one communicator size (tune %s takes several)", o.coll, o.coll)
		}
		var extra []coll.Algorithm
		d := o.decision
		if o.commDefault {
			var err error
			if d, err = commDefaultDecision(c, o.coll, s.t, s.plans[0].sizes); err != nil {
				return err
			}
		}
		if d != nil {
			extra = []coll.Algorithm{coll.Auto}
		}
		_, total := s.configurations()
		root := c.Rank() == 0
		var prog func(done, total int, a coll.Algorithm, bytes int)
		if root {
			fmt.Fprintln(info, s.topoNote)
			if !o.quiet {
				prog = progress(o.errOut, total+len(extra)*len(s.plans[0].sizes))
			}
		}
		ms, err := o.flags.measure(ctx, c, s, prog, d, extra)
		if !root {
			return err
		}
		if o.commDefault {
			for i := range ms {
				if ms[i].Algorithm.Name == coll.Auto.Name {
					ms[i].Label = commDefaultSeries
				}
			}
		}
		if err != nil {
			if ctx.Err() != nil && len(ms) > 0 {
				// Interrupted: print what finished, without a tuned
				// choice made from a part of the algorithms.
				res := summarizeBench(o.coll, s, ms, false)
				res.Tuned = nil
				fmt.Fprintf(info, "interrupted: the %d of %d algorithm configurations that started:\n", len(res.Series), len(s.plans[0].algs)+len(extra))
				if o.asJSON {
					enc := json.NewEncoder(w)
					enc.SetIndent("", " ")
					enc.Encode(res)
				} else {
					printBench(w, res)
				}
			}
			return err
		}
		res := summarizeBench(o.coll, s, ms, o.decision != nil)
		if o.commDefault {
			for i, c := range res.Tuned {
				for _, m := range ms {
					if m.Algorithm.Name == coll.Auto.Name && m.Bytes == c.Bytes && m.Stats.Kept > 0 {
						res.Tuned[i].CommDefault = m.Resolved.String()
						res.Tuned[i].CommDefaultS = m.Stats.MeanS
					}
				}
			}
		}
		if o.plotFile != "" {
			if err := plotBench(res, o.plotFile); err != nil {
				return err
			}
		}
		if o.asJSON {
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			return enc.Encode(res)
		}
		printBench(w, res)
		if o.plotFile != "" {
			base := strings.TrimSuffix(o.plotFile, filepath.Ext(o.plotFile))
			fmt.Fprintf(w, "wrote %s.png and %s.svg\n", base, base)
		}
		return nil
	})
}

func newBenchCollCmd(k tune.Collective) *cobra.Command {
	o := &benchOptions{coll: k}
	baseline := ""
	if k == tune.Bcast {
		baseline = " and the tuned speed-up over Open MPI's default"
	}
	ex := fmt.Sprintf(`  netaware bench %s --platform zhu-2racks --sizes 1KiB,64KiB,1MiB \
      --algorithms binomial,pipeline,hierarchical --segs 64KiB --bases binomial --plot zhu-%s
  netaware launch -n 4 -- netaware bench %s --sizes 1KiB,1MiB --algorithms binomial,knomial`, k, k, k)
	switch k {
	case tune.Bcast:
		ex = `  netaware bench bcast --platform zhu-2racks --sizes 1KiB,64KiB,1MiB,4MiB \
      --algorithms binomial,pipeline,hierarchical,dfs-pipeline --plot zhu-bcast
  netaware launch -n 4 -- netaware bench bcast --sizes 1KiB,1MiB --algorithms binomial,knomial`
	case tune.Allreduce, tune.ReduceScatter:
		ex = fmt.Sprintf(`  netaware bench %s --platform zhu-2racks --per-host 2 --order cyclic --comm-default \
      --sizes 64KiB,1MiB --algorithms ring,rabenseifner,dfs-ring,levels-allreduce --bases binomial --reps 2
  netaware bench %s --local 4 --sizes 64KiB --algorithms ring,recursive-doubling`, k, k)
	}
	cmd := &cobra.Command{
		Use:   string(k),
		Short: fmt.Sprintf("%s time vs message size per algorithm%s", mpiName(k), baseline),
		Long: fmt.Sprintf(`bench %s measures %s algorithms at every message size, on a
simulated platform (--platform) or live on the processes it was started in
(netaware launch, mpirun, srun, netaware emu run: netaware's own algorithms
over its transport, to compare with an MPI library's). Same harness and
message sizes as 'netaware tune %s': W warm-up and N timed repetitions, each
after a barrier and timed by its slowest rank, values within the 90th
percentile. It prints the mean time per algorithm and size, then the fastest
per size (for bcast with its speed-up over Open MPI's fixed decision, what
MPI_Bcast runs by default).

With --decision (from 'netaware tune %s') the tuned choice is instead what
that decision table selects, measured as the "auto" series. --comm-default
measures what the Go library's netaware.Comm runs by default for each size
(from the topology: --topology, or a platform's ground truth), as the series
"netaware.Comm default".

--plot FILE writes FILE.png and FILE.svg: time vs message size per algorithm,
log-log.

Examples:
%s`, k, k, k, k, ex),
		Args: cobra.NoArgs,
		RunE: runOptions(o),
	}
	o.flags.register(cmd, "1,1KiB,16KiB,64KiB,256KiB,1MiB,4MiB")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON instead of tables")
	cmd.Flags().StringVar(&o.plotFile, "plot", "", "write a log-log plot to FILE.png and FILE.svg")
	cmd.Flags().BoolVar(&o.commDefault, "comm-default", false, "also measure what netaware.Comm (the Go library's front door) runs by default with the topology, as the series \""+commDefaultSeries+"\"")
	cmd.Flags().StringVar(&o.decisionFile, "decision", "", fmt.Sprintf("%s from 'tune %s': measure its choices as the tuned series", tune.DecisionFile(k), k))
	return cmd
}

func summarizeBench(k tune.Collective, s *collSetup, ms []tune.Measurement, withAuto bool) *collBench {
	sizes := s.plans[0].sizes
	res := &collBench{Collective: string(k), Platform: s.world, Ranks: s.ranks, TopologySource: s.topoSource, SizesBytes: sizes}
	idx := map[int]int{}
	for i, n := range sizes {
		idx[n] = i
	}
	series := map[string]*benchSeries{}
	var order []string
	for _, m := range ms {
		sr := series[m.Label]
		if sr == nil {
			sr = &benchSeries{Label: m.Label, MeanS: make([]float64, len(sizes))}
			series[m.Label] = sr
			order = append(order, m.Label)
		}
		if m.Err == "" && m.Stats.Kept > 0 && !math.IsNaN(m.Stats.MeanS) {
			sr.MeanS[idx[m.Bytes]] = m.Stats.MeanS
		}
	}
	for _, l := range order {
		res.Series = append(res.Series, *series[l])
	}
	base := tune.Best(ms, func(a coll.Algorithm) bool { return a.Name == tune.Baseline.Name })
	var tuned []tune.Pick
	if withAuto {
		tuned = tune.Best(ms, func(a coll.Algorithm) bool { return a.Name == coll.Auto.Name })
	} else {
		// The netaware.Comm series (--comm-default) is compared with, not
		// among, the algorithms.
		tuned = tune.Best(ms, func(a coll.Algorithm) bool { return a.Name != coll.Auto.Name })
	}
	for _, t := range tuned {
		c := benchTunedChoice{Bytes: t.Bytes, Tuned: t.Label, TunedS: t.MeanS}
		for _, b := range base {
			if b.Bytes == t.Bytes {
				c.BaselineS = b.MeanS
				c.Speedup = b.MeanS / t.MeanS
			}
		}
		if withAuto {
			for _, m := range ms {
				if m.Algorithm.Name == coll.Auto.Name && m.Bytes == t.Bytes {
					c.Tuned = "auto -> " + m.Resolved.String()
				}
			}
		}
		res.Tuned = append(res.Tuned, c)
	}
	return res
}

func printBench(w io.Writer, res *collBench) {
	world := "platform " + res.Platform
	if res.Platform == "live" || res.Platform == "local" {
		world = res.Platform + " world" // no platform: measured on the processes themselves
	}
	fmt.Fprintf(w, "%s on %s, %d ranks, topology: %s\n\n", res.Collective, world, res.Ranks, res.TopologySource)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	hdr := []string{"algorithm"}
	for _, n := range res.SizesBytes {
		hdr = append(hdr, units.FormatSize(int64(n)))
	}
	fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
	for _, s := range res.Series {
		row := []string{s.Label}
		for _, v := range s.MeanS {
			if v == 0 {
				row = append(row, "-")
			} else {
				row = append(row, units.FormatTime(v))
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	if len(res.Tuned) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	if res.Collective != string(tune.Bcast) {
		fmt.Fprintln(tw, "size\ttuned\ttime\tnetaware.Comm default\ttime")
		for _, c := range res.Tuned {
			def, defS := "-", "-"
			if c.CommDefault != "" {
				def, defS = c.CommDefault, units.FormatTime(c.CommDefaultS)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", units.FormatSize(int64(c.Bytes)), c.Tuned, units.FormatTime(c.TunedS), def, defS)
		}
		tw.Flush()
		return
	}
	base := tune.Baseline.String()
	for _, s := range res.Series {
		if s.Label == tune.MPICHAutoLabel {
			base = s.Label // --library with MPICH: its own choice
		}
	}
	fmt.Fprintf(tw, "size\ttuned\ttime\t%s\tspeed-up\n", base)
	for _, c := range res.Tuned {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2fx\n", units.FormatSize(int64(c.Bytes)), c.Tuned, units.FormatTime(c.TunedS), units.FormatTime(c.BaselineS), c.Speedup)
	}
	tw.Flush()
}

// plotBench draws time vs message size per algorithm on log-log axes.
func plotBench(res *collBench, file string) error {
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("%s on %s (%d ranks)", res.Collective, res.Platform, res.Ranks)
	pl.X.Label.Text = "message size (bytes)"
	pl.Y.Label.Text = "time (s)"
	pl.X.Scale, pl.Y.Scale = plot.LogScale{}, plot.LogScale{}
	pl.X.Tick.Marker, pl.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	pl.Legend.Top, pl.Legend.Left = true, true
	series := slices.Clone(res.Series)
	for i, s := range series {
		var pts plotter.XYs
		for j, v := range s.MeanS {
			if v > 0 && res.SizesBytes[j] > 0 {
				pts = append(pts, plotter.XY{X: float64(res.SizesBytes[j]), Y: v})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, p, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("plot %s: %w", s.Label, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / 7)
		p.Color = plotutil.Color(i)
		p.Shape = plotutil.Shape(i)
		pl.Add(l, p)
		pl.Legend.Add(s.Label, l, p)
	}
	base := strings.TrimSuffix(file, filepath.Ext(file))
	for _, ext := range []string{"png", "svg"} {
		wt, err := pl.WriterTo(8*vg.Inch, 6*vg.Inch, ext)
		var buf bytes.Buffer
		if err == nil {
			_, err = wt.WriteTo(&buf)
		}
		if err == nil {
			err = atomicfile.WriteFile(base+"."+ext, buf.Bytes())
		}
		if err != nil {
			return fmt.Errorf("plot %s.%s: %w", base, ext, err)
		}
	}
	return nil
}
