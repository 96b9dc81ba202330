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

	"netaware/coll"
	"netaware/comm"
	"netaware/internal/atomicfile"
	"netaware/tune"
)

func init() { registerBench(newBenchBcastCmd) }

// bcastBench is the --json output of 'bench bcast'.
type bcastBench struct {
	Platform       string             `json:"platform"`
	Ranks          int                `json:"ranks"`
	TopologySource string             `json:"topology_source"`
	SizesBytes     []int              `json:"sizes_bytes"`
	Series         []bcastSeries      `json:"series"`
	Tuned          []bcastTunedChoice `json:"tuned"`
}

type bcastSeries struct {
	Label string `json:"label"`
	// MeanS[i] is the mean time at SizesBytes[i] (0: failed).
	MeanS []float64 `json:"mean_s"`
}

type bcastTunedChoice struct {
	Bytes     int     `json:"size_bytes"`
	Tuned     string  `json:"tuned"`
	TunedS    float64 `json:"tuned_s"`
	BaselineS float64 `json:"ompi_fixed_s"`
	Speedup   float64 `json:"speedup"`
}

func newBenchBcastCmd() *cobra.Command {
	var f bcastFlags
	var asJSON bool
	var plotFile, decisionFile string
	cmd := &cobra.Command{
		Use:   "bcast",
		Short: "Broadcast time vs message size per algorithm, and the tuned speed-up over Open MPI's default",
		Long: `bench bcast measures broadcast algorithms at every message size, on a
simulated platform (--platform) or live on the processes it was started in
(netaware launch, mpirun, srun, netaware emu run: netaware's own algorithms
over its TCP transport, to compare with an MPI library's). Same harness as
'netaware tune bcast': W warm-up and N timed repetitions, each after a
barrier and timed by its slowest rank, values within the 90th percentile. It
prints
the mean time per algorithm and size, then the tuned choice per size and its
speed-up over Open MPI's fixed decision (what MPI_Bcast runs by default).

The tuned choice is the fastest measured algorithm at that size; with
--decision it is instead what that decision table (from 'netaware tune bcast')
selects, measured as the "auto" series.

--plot FILE writes FILE.png and FILE.svg: time vs message size per algorithm,
log-log.

Examples:
  netaware bench bcast --platform zhu-2racks --sizes 1KiB,64KiB,1MiB,4MiB \
      --algorithms binomial,pipeline,hierarchical,dfs-pipeline --plot zhu-bcast
  netaware launch -n 4 -- netaware bench bcast --sizes 1KiB,1MiB --algorithms binomial,knomial`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			info := w
			if asJSON {
				info = cmd.ErrOrStderr()
			}
			var d *coll.Decision
			if decisionFile != "" {
				var err error
				if d, err = coll.ReadDecisionFile(decisionFile); err != nil {
					return usagef("--decision: %v", err)
				}
			}
			return f.runBcastWorld(cmd.Context(), func(ctx context.Context, c comm.Comm, s *bcastSetup) error {
				if len(s.commSizes) > 1 {
					return usagef("--comm-sizes: bench bcast measures one communicator size (tune bcast takes several)")
				}
				cfg := f.config(s)
				algs := s.algs // shared by the simulated ranks: not appended to
				if d != nil {
					cfg.Decision = d
					algs = append(slices.Clone(algs), coll.Auto)
				}
				root := c.Rank() == 0
				if root {
					fmt.Fprintln(info, s.topoNote)
					if !quietFlag(cmd) {
						cfg.Progress = progress(cmd.ErrOrStderr(), len(algs)*len(s.sizes))
					}
				}
				ms, err := tune.Run(ctx, c, cfg, algs)
				if !root {
					return err
				}
				if err != nil {
					if ctx.Err() != nil && len(ms) > 0 {
						// Interrupted: print what finished, without a tuned
						// choice made from a part of the algorithms.
						res := summarizeBench(s, ms, false)
						res.Tuned = nil
						fmt.Fprintf(info, "interrupted: the %d of %d algorithm configurations that started:\n", len(res.Series), len(algs))
						if asJSON {
							enc := json.NewEncoder(w)
							enc.SetIndent("", " ")
							enc.Encode(res)
						} else {
							printBench(w, res)
						}
					}
					return err
				}
				res := summarizeBench(s, ms, d != nil)
				if plotFile != "" {
					if err := plotBench(res, plotFile); err != nil {
						return err
					}
				}
				if asJSON {
					enc := json.NewEncoder(w)
					enc.SetIndent("", " ")
					return enc.Encode(res)
				}
				printBench(w, res)
				if plotFile != "" {
					base := strings.TrimSuffix(plotFile, filepath.Ext(plotFile))
					fmt.Fprintf(w, "wrote %s.png and %s.svg\n", base, base)
				}
				return nil
			})
		},
	}
	f.register(cmd, "1,1KiB,16KiB,64KiB,256KiB,1MiB,4MiB")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of tables")
	cmd.Flags().StringVar(&plotFile, "plot", "", "write a log-log plot to FILE.png and FILE.svg")
	cmd.Flags().StringVar(&decisionFile, "decision", "", "decision.json from 'tune bcast': measure its choices as the tuned series")
	return cmd
}

func summarizeBench(s *bcastSetup, ms []tune.Measurement, withAuto bool) *bcastBench {
	res := &bcastBench{Platform: s.world, Ranks: s.ranks, TopologySource: s.topoSource, SizesBytes: s.sizes}
	idx := map[int]int{}
	for i, n := range s.sizes {
		idx[n] = i
	}
	series := map[string]*bcastSeries{}
	var order []string
	for _, m := range ms {
		sr := series[m.Label]
		if sr == nil {
			sr = &bcastSeries{Label: m.Label, MeanS: make([]float64, len(s.sizes))}
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
		tuned = tune.Best(ms, nil)
	}
	for _, t := range tuned {
		c := bcastTunedChoice{Bytes: t.Bytes, Tuned: t.Label, TunedS: t.MeanS}
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

func printBench(w io.Writer, res *bcastBench) {
	world := "platform " + res.Platform
	if res.Platform == "live" || res.Platform == "local" {
		world = res.Platform + " world" // no platform: measured on the processes themselves
	}
	fmt.Fprintf(w, "%s, %d ranks, topology: %s\n\n", world, res.Ranks, res.TopologySource)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	hdr := []string{"algorithm"}
	for _, n := range res.SizesBytes {
		hdr = append(hdr, fmtBytes(n))
	}
	fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
	for _, s := range res.Series {
		row := []string{s.Label}
		for _, v := range s.MeanS {
			if v == 0 {
				row = append(row, "-")
			} else {
				row = append(row, fmtSec(v))
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
	fmt.Fprintln(tw, "size\ttuned\ttime\tompi-fixed\tspeed-up")
	for _, c := range res.Tuned {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2fx\n", fmtBytes(c.Bytes), c.Tuned, fmtSec(c.TunedS), fmtSec(c.BaselineS), c.Speedup)
	}
	tw.Flush()
}

// plotBench draws time vs message size per algorithm on log-log axes.
func plotBench(res *bcastBench, file string) error {
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("broadcast on %s (%d ranks)", res.Platform, res.Ranks)
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
