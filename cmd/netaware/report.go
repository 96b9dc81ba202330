package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"netaware/platform"
	"netaware/report"
	"netaware/topo"
)

func init() { register(newReportCmd) }

func newReportCmd() *cobra.Command {
	var truthArg, date, title string
	var seed uint64
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
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return usagef("report: %s is not a directory", dir)
			}
			in, err := report.LoadDir(dir)
			if err != nil {
				return err
			}
			if title != "" {
				in.Title = title
			}
			in.Date = date
			if in.Date == "" {
				in.Date = time.Now().UTC().Format("2006-01-02 15:04 UTC")
			}
			in.Seed = seed
			if err := attachTruth(&in, truthArg, cmd); err != nil {
				return err
			}
			paths, out, err := report.WriteDir(dir, in)
			if err != nil {
				return err
			}
			for _, n := range out.Notes {
				fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
			}
			for _, p := range paths {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&truthArg, "truth", "", "ground truth: a platform (built-in name or platform.yaml), a topology.json, or none")
	f.StringVar(&date, "date", "", "date printed in the header (default: now, UTC)")
	f.StringVar(&title, "title", "", "title (default: the dataset's platform, else the directory name)")
	f.Uint64Var(&seed, "seed", report.DefaultSeed, "seed of the random shared-link queries")
	return cmd
}

// attachTruth fills the report's truth from --truth, or from the dataset's
// simulated platform when --truth is not given.
func attachTruth(in *report.Input, arg string, cmd *cobra.Command) error {
	switch {
	case arg == "none":
		return nil
	case strings.EqualFold(filepath.Ext(arg), ".json"):
		t, err := topo.ReadFile(arg)
		if err != nil {
			return fmt.Errorf("--truth: %w", err)
		}
		if t.Size != in.Topology.Size {
			return fmt.Errorf("--truth %s: %d ranks, the topology has %d", arg, t.Size, in.Topology.Size)
		}
		in.Truth, in.TruthName = t.Levels, arg
		return nil
	case arg != "":
		p, err := platform.Load(arg)
		if err != nil {
			return fmt.Errorf("--truth: %w", err)
		}
		if p.NumRanks() != in.Topology.Size {
			return fmt.Errorf("--truth %s: the platform places %d ranks, the topology has %d", arg, p.NumRanks(), in.Topology.Size)
		}
		in.Platform, in.TruthName = p, arg
		return nil
	}
	ds := in.Dataset
	if ds == nil || ds.World.Kind != "sim" || ds.World.Platform == "" {
		return nil
	}
	p, err := platform.Load(ds.World.Platform)
	if err != nil || p.NumRanks() != in.Topology.Size {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: no accuracy section: platform %q of the dataset is not usable as truth (use --truth)\n", ds.World.Platform)
		return nil
	}
	in.Platform, in.TruthName = p, ds.World.Platform
	return nil
}
