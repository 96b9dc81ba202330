package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"netaware/cluster"
	"netaware/comm"
	"netaware/comm/tcp"
	"netaware/dataset"
	"netaware/discover"
	"netaware/internal/atomicfile"
	"netaware/model"
	"netaware/order"
	"netaware/platform"
	"netaware/probe"
	"netaware/report"
	"netaware/topo"
	"netaware/units"
)

func init() { register(newDiscoverCmd) }

// defaultPlatform is the world 'netaware discover' runs on when nothing
// else is given: a built-in simulated grid of four sites.
const defaultPlatform = "grid5000-4sites"

// discoverOptions are 'netaware discover”s options.
type discoverOptions struct {
	streams
	world                 *worldFlags
	outDir, level, method string
	swSize, swFrag        string
	swSeed                uint64
	swIter                int
	blind, asJSON, resume bool
	// from the flags
	opt discover.Options
}

func newDiscoverOptions() *discoverOptions {
	sw := discover.DiscoverSwarmParams()
	return &discoverOptions{outDir: "netaware-out", level: string(discover.DefaultOptions().Level), method: "auto",
		swSize: units.FormatSize(int64(sw.Bytes)), swFrag: units.FormatSize(int64(sw.Swarm.Fragment)), swSeed: 1, swIter: sw.MaxIterations}
}

func newDiscoverCmd() *cobra.Command {
	o := newDiscoverOptions()
	cmd := &cobra.Command{
		Use:   "discover",
		Short: "Find out how the ranks are connected and write topology, model and report",
		Long: `discover is netaware's main job. Every rank measures the network, the ranks
infer the topology together, and rank 0 writes into --out:

  dataset.json   every measurement, with the parameters used
  topology.json  levels (socket, host, switch, site, ...) and the latency tree
  topology.dot   the tree for Graphviz
  topology.conf  a Slurm topology.conf (when ranks reported host names)
  order.hostfile the ranks' hosts in depth-first order of the tree, one a
                 rank, for srun, mpirun --hostfile, mpiexec -f ('netaware order')
  model.json     PLogP per group pair, Hockney fitted to it (alpha, beta and
                 their standard errors), the NIC bandwidth and rank bindings
                 of the contention model (standard, thorough)
  report.html    a self-contained report, plus its plots as PNG/SVG

The steps: identity exchange; RTT tree inference (seed 002: O(N d) pair
measurements, the tree handed from rank to rank); at --level standard, PLogP
between representatives of every group and group pair (seed 004), at
thorough between all pairs (with a bound on its duration printed before it
starts); levels cut from the tree's latency dendrogram. On a real network
(not --platform), or a simulated one with --noise realistic, 4 ranks first
measure the noise; where it is a real
network's, swarm broadcasts group the ranks by bandwidth first and the RTT
tree is inferred within each group and between one rank per group, which
measures far fewer pairs (docs/emu.md).

Without --blind, ranks reporting one host name are one host (and one socket
when they report it), and one rank per host joins the inference; with
--blind every level must come from measurement.

Rank 0 checkpoints dataset.json during the PLogP phase (every 5 s). After an
interruption (Ctrl-C, a failed rank), the same command plus --resume keeps
the PLogP pairs in --out's dataset.json and measures only the missing ones;
the identities, the RTT inference and the bandwidth map run again (seconds;
the dataset does not hold the tree), and must give the same PLogP schedule.

With no --platform and no launcher environment, discover runs on the
built-in simulated platform ` + defaultPlatform + ` and says so.`,
		Example: `  netaware discover                                  # simulated 4-site grid
  netaware discover --platform fram-like --blind --out fram
  netaware discover --platform fram-like --blind --out fram --resume   # after Ctrl-C
  netaware discover --platform bordeaux-2013 --method swarm --out bdx   # bandwidth levels by swarm broadcasts
  netaware launch -n 8 -- netaware discover --out /tmp/x
  mpirun -n 64 -x NETAWARE_COORDINATOR=node01:7777 -x NETAWARE_TOKEN=s3cret netaware discover`,
		Args: cobra.NoArgs,
		RunE: runOptions(o),
	}
	o.world = addWorldFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.outDir, "out", o.outDir, "directory to write the results into (created if missing)")
	f.StringVar(&o.level, "level", o.level, "effort: fast (RTT tree only), standard (+ PLogP per group pair) or thorough (+ PLogP all pairs)")
	f.BoolVar(&o.blind, "blind", false, "ignore host names and core ids: every level from measurement")
	f.StringVar(&o.method, "method", o.method, "rtt-tree (latency tree), swarm (bandwidth tomography by swarm broadcasts, docs/swarm.md) or auto (the tree, plus the swarm's bandwidth levels at thorough or where the tree finds no level above the hosts)")
	f.StringVar(&o.swSize, "swarm-size", o.swSize, "swarm method: message size of every broadcast")
	f.StringVar(&o.swFrag, "swarm-fragment", o.swFrag, "swarm method: fragment size")
	f.Uint64Var(&o.swSeed, "swarm-seed", o.swSeed, "swarm method: seed of the peer sets, roots and choices")
	f.IntVar(&o.swIter, "swarm-iterations", o.swIter, "swarm method: broadcasts at most (fewer once successive hierarchies agree)")
	f.BoolVar(&o.asJSON, "json", false, "print the summary as JSON (the notices go to stderr)")
	f.BoolVar(&o.resume, "resume", false, "continue an interrupted discovery: keep the PLogP pairs of --out's dataset.json, measure the rest (the RTT inference runs again)")
	return cmd
}

func (o *discoverOptions) validate() error {
	opt := discover.DefaultOptions()
	lv, err := discover.ParseLevel(o.level)
	if err != nil {
		return usagef("--level: %v", err)
	}
	opt.Level, opt.Blind = lv, o.blind
	if opt.Method, err = discover.ParseMethod(o.method); err != nil {
		return usagef("--method: %v", err)
	}
	opt.Swarm = discover.DiscoverSwarmParams()
	if opt.Swarm.Bytes, err = parseSize("swarm-size", o.swSize); err != nil {
		return err
	}
	if opt.Swarm.Swarm.Fragment, err = parseSize("swarm-fragment", o.swFrag); err != nil {
		return err
	}
	opt.Swarm.Swarm.Seed, opt.Swarm.MaxIterations = o.swSeed, o.swIter
	if err := probe.CheckSwarmParams(opt.Swarm); err != nil {
		return usagef("%v", err)
	}
	o.opt = opt
	return nil
}

func (o *discoverOptions) run(ctx context.Context) error {
	wf, out, opt := o.world, o.outDir, o.opt
	stdout, stderr := o.out, o.errOut
	notices := stdout
	if o.asJSON {
		notices = stderr
	}
	if wf.platform == "" && wf.local == 0 {
		if _, live := tcp.Detect(); !live && wf.coordinator == "" {
			wf.platform = defaultPlatform
			fmt.Fprintf(notices, "netaware discover: no --platform and no launcher: running on the built-in simulated platform %s\n", defaultPlatform)
		}
	}
	// On a real network, and on a simulated one with the noise fitted to
	// real networks, the noise check decides whether the swarm's bandwidth
	// groups come first (discover.Options.Staged): the simulator then
	// runs what a real cluster would (issue 17's simulator campaign).
	opt.Staged = wf.platform == "" || realisticNoise(wf)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var result *discover.Outcome
	start := time.Now()
	// Rank 0 checkpoints the measurements during the PLogP phase, so
	// that an interrupted discovery leaves them in OUT/dataset.json.
	ck := &checkpointer{path: filepath.Join(out, "dataset.json"), interval: 5 * time.Second, last: start}
	kept := false
	opt.Checkpoint = func(ds *dataset.Dataset, final bool) error {
		w := (&campaignFlags{wf: wf}).worldDesc(ds.World.Size)
		ds.World.Kind, ds.World.Platform, ds.World.Noise, ds.World.NoiseSeed = w.Kind, w.Platform, w.Noise, w.NoiseSeed
		saved := ck.last
		if err := ck.save(ds, final); err != nil {
			return err
		}
		kept = kept || ck.last != saved
		return nil
	}
	pp := &phaseProgress{w: stderr, quiet: o.quiet, start: start}
	defer pp.finish()
	opt.Progress, opt.Advance = pp.phase, pp.advance
	info, err := runWorld(ctx, wf, func(ctx context.Context, c comm.Comm) error {
		opt := opt
		if wf.oneRankPerProcess() && c.Rank() != 0 {
			opt.Advance = nil // rank 0's process shows the progress
		}
		if o.resume && c.Rank() == 0 {
			cf := &campaignFlags{wf: wf, out: ck.path, resume: true}
			w := cf.worldDesc(c.Size())
			d, err := cf.openDataset(w)
			if p, perr := platform.Load(wf.platform); err != nil && w.Kind == "sim" && perr == nil && p.Name != w.Platform {
				// A checkpoint records --platform as given, a
				// finished discovery the platform's name.
				w.Platform = p.Name
				d, err = cf.openDataset(w)
			}
			if err != nil {
				return err
			}
			opt.Resume = d
		}
		r, err := discover.Run(ctx, c, opt)
		if c.Rank() == 0 {
			result = r
		}
		return err
	})
	pp.finish()
	if err != nil {
		if kept && ctx.Err() != nil {
			fmt.Fprintf(stderr, "interrupted: the measurements finished so far are in %s (the same command with --resume continues from them)\n", ck.path)
		}
		return err
	}
	if result == nil {
		return nil // not rank 0 of a TCP world
	}
	wall := time.Since(start)
	result.Topology.Measurements.WallTimeS = wall.Seconds()
	if info.Kind == "sim" {
		result.Topology.Measurements.VirtualTimeS = info.VirtualTime.Seconds()
	}
	result.Dataset.World.Kind, result.Dataset.World.Platform = info.Kind, info.Platform
	for _, w := range result.Warnings {
		fmt.Fprintln(stderr, "netaware: warning:", w)
	}
	warnImplausible(stderr, result.Dataset, filepath.Join(out, "dataset.json"))
	// The report's plots take seconds at hundreds of ranks.
	pp.phase("writing the results into " + out)
	written, err := writeDiscovery(out, result, wf, info, start)
	pp.finish()
	if err != nil {
		return err
	}
	if o.asJSON {
		sum := summarizeDiscovery(result, info, wall, out, written)
		if o.resume {
			sum.PairsKept = &result.Kept
		}
		return probeWriteJSON(stdout, sum)
	}
	printSummary(stdout, result, info, wall)
	if o.resume {
		fmt.Fprintf(stdout, "resumed: %d PLogP pairs kept from %s, %d measured now\n", result.Kept, ck.path, plogpPairs(result)-result.Kept)
	}
	fmt.Fprintf(stdout, "\nwrote into %s: %s\n", out, strings.Join(written, ", "))
	return nil
}

// plogpPairs counts the PLogP pairs of a discovery's dataset.
func plogpPairs(o *discover.Outcome) int {
	if o.Dataset.PLogP == nil {
		return 0
	}
	return len(o.Dataset.PLogP.Pairs)
}

// writeDiscovery writes every output file into dir and returns their names.
func writeDiscovery(dir string, o *discover.Outcome, wf *worldFlags, info worldInfo, start time.Time) ([]string, error) {
	var written []string
	path := func(name string) string { written = append(written, name); return filepath.Join(dir, name) }
	if err := o.Dataset.Save(path("dataset.json")); err != nil {
		return nil, err
	}
	if err := o.Topology.WriteFile(path("topology.json")); err != nil {
		return nil, err
	}
	var dot bytes.Buffer
	if err := o.Topology.WriteDOT(&dot); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(path("topology.dot"), dot.Bytes()); err != nil {
		return nil, err
	}
	var slurm bytes.Buffer
	if err := o.Topology.WriteSlurm(&slurm); err == nil {
		if err := atomicfile.WriteFile(path("topology.conf"), slurm.Bytes()); err != nil {
			return nil, err
		}
	}
	var hostfile bytes.Buffer
	if p, err := order.DepthFirst(o.Topology); err == nil && p.Write(&hostfile, "slurm-hostfile") == nil {
		if err := atomicfile.WriteFile(path(order.FileName("slurm-hostfile")), hostfile.Bytes()); err != nil {
			return nil, err
		}
	}
	var m *model.File
	if o.Dataset.PLogP != nil {
		var err error
		if m, err = model.FromDiscovery(o.Dataset, o.Topology); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		if err := m.WriteFile(path("model.json")); err != nil {
			return nil, err
		}
	}
	in := report.Input{Title: describeWorld(info), Date: start.UTC().Format("2006-01-02 15:04 UTC"), Topology: o.Topology, Dataset: o.Dataset, Model: m, Seed: report.DefaultSeed}
	// Above report.MaxMatrixRanks no dense matrix is built: the report
	// says so in its notes instead of the heatmap and dendrogram, and the
	// other files are written all the same (a 16,384-rank discovery
	// failed here after 14 minutes).
	if len(o.Clustered) == o.Topology.Size && o.Dendrogram != nil && o.Topology.Size <= report.MaxMatrixRanks {
		// Every rank was clustered (blind, or one rank per host): show the
		// dendrogram and cuts the levels came from, over the matrix they
		// clustered, rebuilt from the files as 'netaware report DIR'
		// rebuilds it (hierarchy.json keeps the dendrogram). Otherwise the
		// report builds its rank-by-rank matrix from the dataset and the
		// tree.
		var err error
		if in.Distance, err = report.TreeDistance(o.Dataset, o.Topology); err != nil {
			return nil, err
		}
		in.Hierarchy = &report.Hierarchy{Dendrogram: o.Dendrogram, Cuts: o.Cuts, Linkage: cluster.AverageLinkage}
	}
	if info.Kind == "sim" {
		if p, err := platform.Load(wf.platform); err == nil {
			in.Platform = p
			in.TruthName = p.Name
		}
	}
	paths, _, err := report.WriteDir(dir, in)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		written = append(written, filepath.Base(p))
	}
	return written, nil
}

func describeWorld(info worldInfo) string {
	if info.Kind == "mpi" && info.Library != "" {
		return fmt.Sprintf("%d ranks over MPI (%s)", info.Size, info.Library)
	}
	return report.WorldTitle(dataset.World{Kind: info.Kind, Platform: info.Platform, Size: info.Size})
}

// printSummary prints the levels with group counts and sizes, typical
// latencies, and what discovery cost.
func printSummary(w io.Writer, o *discover.Outcome, info worldInfo, wall time.Duration) {
	t := o.Topology
	fmt.Fprintf(w, "\n%s: %d levels\n", describeWorld(info), len(t.Levels))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LEVEL\tGROUPS\tSIZES (min/median/max)\tLATENCY WITHIN\tLATENCY BETWEEN")
	lat := o.LevelLatencies(maxSummaryPairs)
	for i, l := range t.Levels {
		ls := summarizeLevel(l)
		within, between := "-", "-"
		if lat != nil {
			within, between = secondsOrDash(lat[i].Within), secondsOrDash(lat[i].Between)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d/%d/%d\t%s\t%s\n", l.Name, ls.Groups, ls.MinSize, ls.MedianSize, ls.MaxSize, within, between)
	}
	tw.Flush()
	m := t.Measurements
	fmt.Fprintf(w, "\npairs measured: %d of %d (%.1f%%)\n", m.PairsMeasured, m.PairsTotal, 100*float64(m.PairsMeasured)/float64(max(1, m.PairsTotal)))
	for _, p := range o.Phases {
		fmt.Fprintf(w, "  %-10s %10s on rank 0's clock, %d pairs\n", p.Name, fmtDuration(p.Clock), p.Pairs)
	}
	if info.Kind == "sim" {
		fmt.Fprintf(w, "virtual time %s, wall time %s\n", fmtDuration(info.VirtualTime), fmtDuration(wall))
	} else {
		fmt.Fprintf(w, "wall time %s\n", fmtDuration(wall))
	}
}

// discoverSummary is 'discover --json': the printed summary.
type discoverSummary struct {
	World         string                 `json:"world"`
	Ranks         int                    `json:"ranks"`
	Levels        []discoverLevelSummary `json:"levels"`
	PairsMeasured int                    `json:"pairs_measured"`
	PairsTotal    int                    `json:"pairs_total"`
	// PairsKept is, under --resume, the PLogP pairs kept from the
	// interrupted discovery.
	PairsKept    *int            `json:"plogp_pairs_kept,omitempty"`
	Phases       []discoverPhase `json:"phases"`
	VirtualTimeS float64         `json:"virtual_time_s,omitempty"`
	WallTimeS    float64         `json:"wall_time_s"`
	Dir          string          `json:"dir"`
	Files        []string        `json:"files"`
}

type discoverLevelSummary struct {
	levelSummary
	// Median one-way latencies on the tree (absent when not computed).
	WithinS  *float64 `json:"latency_within_s,omitempty"`
	BetweenS *float64 `json:"latency_between_s,omitempty"`
}

type discoverPhase struct {
	Name   string  `json:"name"`
	ClockS float64 `json:"clock_s"`
	Pairs  int     `json:"pairs"`
}

func summarizeDiscovery(o *discover.Outcome, info worldInfo, wall time.Duration, dir string, files []string) discoverSummary {
	t := o.Topology
	s := discoverSummary{World: describeWorld(info), Ranks: t.Size, WallTimeS: wall.Seconds(), Dir: dir, Files: files}
	if info.Kind == "sim" {
		s.VirtualTimeS = info.VirtualTime.Seconds()
	}
	lat := o.LevelLatencies(maxSummaryPairs)
	for i, l := range t.Levels {
		ls := discoverLevelSummary{levelSummary: summarizeLevel(l)}
		if lat != nil && lat[i].PairsWithin > 0 {
			ls.WithinS = &lat[i].Within
		}
		if lat != nil && lat[i].PairsBetween > 0 {
			ls.BetweenS = &lat[i].Between
		}
		s.Levels = append(s.Levels, ls)
	}
	if m := t.Measurements; m != nil {
		s.PairsMeasured, s.PairsTotal = m.PairsMeasured, m.PairsTotal
	}
	for _, p := range o.Phases {
		s.Phases = append(s.Phases, discoverPhase{p.Name, p.Clock.Seconds(), p.Pairs})
	}
	return s
}

// maxSummaryPairs bounds the pairs behind the summary table's medians.
const maxSummaryPairs = 1 << 20

// secondsOrDash prints a median, "-" when there were no pairs.
func secondsOrDash(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return topo.FormatSeconds(v)
}

func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(time.Microsecond).String()
	}
	return d.String()
}

// realisticNoise tells whether the simulated world runs with the noise
// profile fitted to real networks (--noise, or the platform file's).
func realisticNoise(wf *worldFlags) bool {
	if wf.noNoise {
		return false
	}
	if wf.noise != "" {
		return wf.noise == platform.NoiseRealistic
	}
	p, err := platform.Load(wf.platform)
	return err == nil && p.Noise().Profile == platform.NoiseRealistic
}
