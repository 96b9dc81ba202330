package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"netaware/comm"
	"netaware/model"
	"netaware/modelcheck"
	"netaware/platform"
	"netaware/topo"
	"netaware/units"
)

// predictCheckOptions are 'netaware predict check”s options.
type predictCheckOptions struct {
	streams
	world                           *worldFlags
	settings, size, topology, truth string
	alltoallv, nicBW, backboneBW    string
	asJSON                          bool
	check                           modelcheck.Options
}

func newPredictCheckOptions() *predictCheckOptions {
	c := modelcheck.DefaultOptions()
	return &predictCheckOptions{check: c, settings: formatSettings(c.Settings), size: units.FormatSize(int64(c.Pattern.Bytes)), alltoallv: "example"}
}

func newPredictCheckCmd() *cobra.Command {
	o := newPredictCheckOptions()
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Measure random patterns and compare them with the contention model (seed 001 Sect. 7, Table II)",
		Long: `check runs seed 001's validation on the current world (simulator, TCP under
'netaware launch' or 'netaware emu run', MPI): it measures the NIC and the
backbone as the seed's experiments A and B do (Sect. 5.1; skipped with
--nic-bw and --backbone-bw), then for every setting |N|x d of --settings
draws random patterns as Sect. 7.1 does (for each of |N| nodes, half in each
of the first two racks, d times a random other node, kept with probability
--p) until --links links, measures each with 'probe pattern', and predicts
each link's time with the asymmetric model and the fairness-only one.

Without --settings and --links it runs Table II's nine settings with 500
links each (3-4 minutes in the simulator on zhu-2racks). It prints Table II: per setting the links, the mean Algorithm 2 steps, the
share of links with |epsilon| <= 10% and the mean |epsilon| for both models,
and the mean |epsilon| over the links of patterns with flows in both
directions on one NIC or backbone (epsilon', epsilon''), where
epsilon = (predicted - measured) / measured. Then the alltoallv of Sect. 7.3
(Fig. 8's kind: four nodes of one rack; --alltoallv FILE for your own
matrix of byte counts, none to skip). --json gives every link.

Ranks are bound to nodes and racks by --topology (a topology.json: its host
level and the level above) or --truth (a platform's hosts and switches, e.g.
the one an emu cluster was built from), by default in the simulator by the
platform.`,
		Example: `  netaware predict check --platform zhu-2racks --settings 10x1,10x3 --links 40 --size 4MiB
  netaware emu up modelcheck/testdata/zhu-small.yaml --prefix pd1
  netaware emu run pd1 -- netaware predict check --truth modelcheck/testdata/zhu-small.yaml --settings 4x1,10x3 --links 20 --size 1MiB`,
		Args: cobra.NoArgs,
		RunE: runOptions(o),
	}
	o.world = addWorldFlags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&o.settings, "settings", o.settings, "settings |N|xd, comma separated (default: Table II's nine)")
	fl.IntVar(&o.check.Links, "links", o.check.Links, "links measured per setting, at least (the seed: > 500)")
	fl.Float64Var(&o.check.P, "p", o.check.P, "inclusion probability of a drawn link")
	fl.Uint64Var(&o.check.Seed, "pattern-seed", o.check.Seed, "seed of the random patterns")
	fl.StringVar(&o.size, "size", o.size, "bytes per message (the seed: >= 10 MB)")
	fl.IntVar(&o.check.Pattern.MaxIter, "max-iter", o.check.Pattern.MaxIter, "iterations per pattern at most (the seed: 2000)")
	fl.Float64Var(&o.check.Pattern.CIWidth, "ci", o.check.Pattern.CIWidth, "stop a pattern when every link's 95% CI width is within this fraction of its mean")
	fl.StringVar(&o.topology, "topology", "", "topology.json binding ranks to hosts and racks (default in the simulator: the platform's)")
	fl.StringVar(&o.truth, "truth", "", "bind ranks by this platform's hosts and switches (the platform an emu cluster was built from)")
	fl.StringVar(&o.alltoallv, "alltoallv", o.alltoallv, "alltoallv: example (4 nodes, 5-20 MB), none, or a file of n rows of n byte counts")
	fl.StringVar(&o.nicBW, "nic-bw", "", "NIC bandwidth instead of experiment A, e.g. 1Gbps")
	fl.StringVar(&o.backboneBW, "backbone-bw", "", "backbone bandwidth instead of experiment B, e.g. 10Gbps")
	fl.BoolVar(&o.asJSON, "json", false, "print the report, every link included, as JSON")
	return cmd
}

func (o *predictCheckOptions) validate() error {
	b, err := parseSize("size", o.size)
	if err != nil {
		return err
	}
	o.check.Pattern.Bytes = b
	if o.check.Settings, err = parseSettings(o.settings); err != nil {
		return usagef("--settings: %v", err)
	}
	for _, bw := range []struct {
		flag, v string
		dst     *float64
	}{{"nic-bw", o.nicBW, &o.check.BetaNIC}, {"backbone-bw", o.backboneBW, &o.check.BetaBackbone}} {
		if bw.v == "" {
			continue
		}
		x, err := platform.ParseBandwidth(bw.v)
		if err != nil || !(x > 0) {
			return usagef("--%s %q: want a bandwidth such as 1Gbps", bw.flag, bw.v)
		}
		*bw.dst = 1 / x
	}
	switch o.alltoallv {
	case "none", "":
		o.check.Alltoallv = nil
	case "example":
	default:
		rows, err := model.ReadCounts(o.alltoallv, 0)
		if err != nil {
			return usagef("--alltoallv: %v", err)
		}
		o.check.Alltoallv = rows
	}
	var t *topo.Topology
	if o.topology != "" {
		if t, err = topo.ReadFile(o.topology); err != nil {
			return usagef("--topology: %v", err)
		}
	} else if o.truth != "" || o.world.platform != "" {
		name := o.truth
		if name == "" {
			name = o.world.platform
		}
		p, err := platform.Load(name)
		if err != nil {
			return usagef("--truth/--platform: %v", err)
		}
		t = &topo.Topology{Version: topo.Version, Size: p.NumRanks(), Levels: p.TruthLevels()}
	} else {
		return usagef("check: give --topology (a topology.json) or --truth (a platform) to bind ranks to hosts and racks")
	}
	if o.check.NodeOf, o.check.RackOf, err = model.Bindings(t); err != nil {
		return usagef("--topology: %v", err)
	}
	if err := o.check.Validate(t.Size); err != nil {
		return usagef("%v", err)
	}
	return nil
}

func (o *predictCheckOptions) run(ctx context.Context) error {
	var rep *modelcheck.Report
	pr := &progressReporter{w: o.errOut, quiet: o.quiet, start: time.Now(), desc: "predict check"}
	defer pr.finish()
	info, err := runWorld(ctx, o.world, func(ctx context.Context, c comm.Comm) error {
		check := o.check
		if c.Rank() == 0 {
			check.Progress = pr.update
		}
		r, err := modelcheck.Run(ctx, c, check)
		if c.Rank() == 0 {
			rep = r
		}
		return err
	})
	pr.finish()
	if err != nil {
		return err
	}
	if rep == nil {
		return nil // not rank 0 of a TCP world
	}
	if o.asJSON {
		return probeWriteJSON(o.out, rep)
	}
	return printCheck(o.out, rep, info)
}

// formatSettings prints "10x1,20x3", what parseSettings reads.
func formatSettings(ss []modelcheck.Setting) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%dx%d", s.Nodes, s.D)
	}
	return strings.Join(out, ",")
}

// parseSettings reads "10x1,20x3".
func parseSettings(s string) ([]modelcheck.Setting, error) {
	var out []modelcheck.Setting
	for _, part := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(part), "x")
		n, e1 := strconv.Atoi(a)
		d, e2 := strconv.Atoi(b)
		if !ok || e1 != nil || e2 != nil || n < 2 || d < 1 {
			return nil, fmt.Errorf("%q: want |N|xd with |N| >= 2, d >= 1, e.g. 10x3", part)
		}
		out = append(out, modelcheck.Setting{Nodes: n, D: d})
	}
	return out, nil
}

func printCheck(w io.Writer, r *modelcheck.Report, info worldInfo) error {
	c := r.Calibration
	how := "given"
	if c.Measured {
		how = "measured (experiments A and B)"
	}
	fmt.Fprintf(w, "%s: %s messages; NIC %s, backbone %s", describeWorld(info), units.FormatSize(int64(r.Bytes)),
		platform.FormatBandwidth(1/c.BetaNICSPerByte), platform.FormatBandwidth(1/c.BetaBackboneSPerByte))
	if c.BackboneAtLeast {
		fmt.Fprintf(w, " or more (%d flows did not fill it)", c.BackboneFlows)
	}
	fmt.Fprintf(w, ", %s\n\n", how)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "|N|\td\tpatterns\tlinks\tsteps\tasym within 10%\tfair within 10%\tasym |eps|\tfair |eps|\tbidir links\tasym |eps'|\tfair |eps''|\t")
	row := func(name string, x modelcheck.Row) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f%%\t%.1f%%\t%.2f%%\t%.2f%%\t%d\t%.2f%%\t%.2f%%\t\n", name, x.Patterns, x.Links, x.Steps,
			100*x.Within10Asym, 100*x.Within10Fair, 100*x.MeanAbsAsym, 100*x.MeanAbsFair, x.BidirLinks, 100*x.MeanAbsAsymBidir, 100*x.MeanAbsFairBidir)
	}
	for _, x := range r.Rows {
		row(fmt.Sprintf("%d\t%d", x.Nodes, x.D), x)
	}
	row("all\t-", r.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	if a := r.Alltoallv; a != nil {
		fmt.Fprintf(w, "\nalltoallv over ranks %v (%d transfers): measured %s, asymmetric %s (%+.1f%%), fairness %s (%+.1f%%)\n",
			a.Ranks, len(a.Links), platform.FormatTime(a.MeasS), platform.FormatTime(a.AsymS), 100*a.EpsAsym, platform.FormatTime(a.FairS), 100*a.EpsFair)
	}
	return nil
}
