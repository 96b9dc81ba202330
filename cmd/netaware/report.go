package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"netaware/platform"
	"netaware/report"
	"netaware/score"
)

func init() { register(newReportCmd) }

// reportOptions are 'netaware report”s options.
type reportOptions struct {
	streams
	dir, truth, date, title string
	seed                    uint64
}

func newReportCmd() *cobra.Command {
	o := &reportOptions{seed: score.DefaultOptions().Seed}
	cmd := &cobra.Command{
		Use:   "report DIR [--truth PLATFORM|FILE]",
		Short: "Build the HTML report and plots of a discovery directory",
		Long: `Report (re)builds DIR/report.html and its plots from the files 'netaware discover'
left in DIR: topology.json (required), dataset.json and model.json (optional).

The distance matrix is recomputed from dataset.json (minimum RTT per pair, or
inverse bandwidth when no RTT was measured; pairs a partial campaign skipped are
filled from the topology tree's path latency) and clustered agglomeratively with
the linkage recorded in topology.json, exactly as discover does.

The report is one self-contained page (no network, no JavaScript) with: the
topology tree, per-level latency and bandwidth, the distance matrix as a heat
map in hierarchy order, the dendrogram with its level cuts, the measurement
cost, and, when the truth is known, NMI/ARI/accuracy per true level and
shared-link query errors. It also writes tree.svg, heatmap.png, heatmap.svg,
dendrogram.png and dendrogram.svg into DIR. See docs/report.md.

The truth is --truth (a built-in platform name, a platform.yaml, or a
topology.json of the expected levels); without it, a simulated dataset's own
platform is used when it can be loaded and places as many ranks. --truth none
leaves the accuracy section out.`,
		Example: `  netaware discover --platform zhu-2racks --out run1
  netaware report run1
  netaware report run1 --truth platform.yaml --date 2026-11-21
  netaware platform truth zhu-2racks --json > expected-topology.json
  netaware report run1 --truth expected-topology.json`,
		Args: cobra.ExactArgs(1),
		RunE: runOptions(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.truth, "truth", "", "ground truth: a platform (built-in name or platform.yaml), a topology.json, or none")
	f.StringVar(&o.date, "date", "", "date printed in the header (default: now, UTC)")
	f.StringVar(&o.title, "title", "", "title (default: the dataset's platform, else the directory name)")
	f.Uint64Var(&o.seed, "seed", o.seed, "seed of the random shared-link queries")
	return cmd
}

func (o *reportOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.dir = args[0]
	if o.date == "" {
		o.date = time.Now().UTC().Format("2006-01-02 15:04 UTC")
	}
	return nil
}

func (o *reportOptions) validate() error {
	if st, err := os.Stat(o.dir); err != nil || !st.IsDir() {
		return usagef("report: %s is not a directory", o.dir)
	}
	return nil
}

func (o *reportOptions) run(context.Context) error {
	in, err := report.LoadDir(o.dir)
	if err != nil {
		return err
	}
	if o.title != "" {
		in.Title = o.title
	}
	in.Date, in.Seed = o.date, o.seed
	if err := attachTruth(&in, o.truth, o.errOut); err != nil {
		return err
	}
	paths, out, err := report.WriteDir(o.dir, in)
	if err != nil {
		return err
	}
	for _, n := range out.Notes {
		fmt.Fprintln(o.errOut, "note:", n)
	}
	for _, p := range paths {
		fmt.Fprintln(o.out, p)
	}
	return nil
}

// attachTruth fills the report's truth from --truth, or from the dataset's
// simulated platform when --truth is not given.
func attachTruth(in *report.Input, arg string, notes io.Writer) error {
	switch arg {
	case "none":
		return nil
	case "":
	default:
		t, err := score.LoadTruth(arg)
		if err != nil {
			return fmt.Errorf("--truth: %w", err)
		}
		if t.Size != in.Topology.Size {
			return fmt.Errorf("--truth %s: %d ranks, the topology has %d", arg, t.Size, in.Topology.Size)
		}
		if t.Platform != nil {
			in.Platform = t.Platform
		} else {
			in.Truth = t.Levels
		}
		in.TruthName = arg
		return nil
	}
	ds := in.Dataset
	if ds == nil || ds.World.Kind != "sim" || ds.World.Platform == "" {
		return nil
	}
	p, err := platform.Load(ds.World.Platform)
	if err != nil || p.NumRanks() != in.Topology.Size {
		fmt.Fprintf(notes, "note: no accuracy section: platform %q of the dataset is not usable as truth (use --truth)\n", ds.World.Platform)
		return nil
	}
	in.Platform, in.TruthName = p, ds.World.Platform
	return nil
}
