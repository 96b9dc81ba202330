package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"netaware/coll"
	"netaware/comm"
	"netaware/comm/sim"
	"netaware/model"
	"netaware/platform"
	"netaware/topo"
	"netaware/tune"
)

func init() { register(newTuneCmd) }

func newTuneCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Benchmark collectives and write decision tables and MPI rule files",
		Long: `tune benchmarks collective algorithms on a simulated platform, picks the
fastest per message size, and writes the choice for netaware's own collectives
(decision.json) and for MPI libraries (Open MPI coll/tuned rules, MPICH
collective selection JSON).

Example:
  netaware tune bcast --platform zhu-2racks --sizes 1KiB,1MiB --out tuned/`,
	}
	cmd.AddCommand(newTuneBcastCmd())
	return cmd
}

// bcastFlags are the flags 'tune bcast' and 'bench bcast' share.
type bcastFlags struct {
	world      *worldFlags
	topology   string
	sizes      string
	algorithms string
	segs       string
	bases      string
	reps       int
	warmup     int
	perHost    int
	order      string
	commSizes  string
	model      string
}

func (f *bcastFlags) register(cmd *cobra.Command, defaultSizes string) {
	f.world = addWorldFlags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.topology, "topology", "", "topology.json for topology-aware algorithms (default: the simulated platform's ground-truth levels; live: none, topology-blind algorithms only)")
	fl.StringVar(&f.sizes, "sizes", defaultSizes, "message sizes, comma-separated (units: 4KiB, 1MiB)")
	fl.StringVar(&f.algorithms, "algorithms", "", "algorithms to try, comma-separated (default: all; see 'netaware tune bcast --help')")
	fl.StringVar(&f.segs, "segs", "8KiB,32KiB,128KiB", "segment sizes for every algorithm that takes one (Open MPI: pipeline, chain, binary, split-binary, binomial, knomial)")
	fl.StringVar(&f.bases, "bases", "binomial,pipeline", "algorithms used inside sub-communicators by magpie2 and hierarchical")
	fl.IntVar(&f.reps, "reps", 5, "timed repetitions N per algorithm and size (seed 003 used 1000 on real machines)")
	fl.IntVar(&f.warmup, "warmup", 1, "warm-up repetitions W, discarded (seed 003: 50-100 on real machines)")
	fl.StringVar(&f.model, "model", "", "model.json (per-pair Hockney) for the performance-aware builders model-binomial, prim, traff")
	fl.StringVar(&f.commSizes, "comm-sizes", "", "communicator sizes to tune, ascending, each measured on ranks 0..q-1 (default: all ranks)")
	fl.IntVar(&f.perHost, "per-host", 0, "simulator: ranks per host (0: the platform's placement)")
	fl.StringVar(&f.order, "order", "", "simulator: rank placement over hosts: block or cyclic (with --per-host)")
}

// bcastSetup is what the shared flags resolve to, once the world's size
// is known.
type bcastSetup struct {
	world      string // the platform's name, or the live world's kind
	ranks      int
	t          *topo.Topology
	topoSource string
	topoNote   string // what rank 0 says about the topology
	sizes      []int
	commSizes  []int
	algs       []coll.Algorithm
	cost       coll.CostFunc
}

func parseByteList(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := platform.ParseSize(f)
		if err != nil || v < 0 || v > 1<<31 {
			return nil, usagef("--%s %q: want sizes such as 1,4KiB,1MiB (up to 2 GiB)", flag, f)
		}
		out = append(out, int(v))
	}
	if len(out) == 0 {
		return nil, usagef("--%s: no sizes", flag)
	}
	return out, nil
}

// check validates what can be checked before the world starts, so that a
// wrong command line fails at once and with exit code 2 on every rank.
func (f *bcastFlags) check() error {
	if f.reps < 1 || f.warmup < 0 {
		return usagef("--reps must be >= 1 and --warmup >= 0")
	}
	if _, err := parseByteList("sizes", f.sizes); err != nil {
		return err
	}
	if _, err := parseByteList("segs", f.segs); err != nil {
		return err
	}
	if (f.perHost > 0 || f.order != "") && f.world.platform == "" {
		return usagef("--per-host and --order place the ranks of a simulated platform (--platform)")
	}
	if f.topology != "" {
		if _, err := topo.ReadFile(f.topology); err != nil {
			return usagef("--topology: %v", err)
		}
	}
	if f.model != "" {
		if _, err := model.ReadFile(f.model); err != nil {
			return usagef("--model: %v", err)
		}
	}
	return nil
}

// runBcastWorld runs body on every rank of the world the flags select:
// the simulated --platform (with --per-host/--order), or the live world
// this process was started in (netaware launch, mpirun, srun, netaware emu
// run), or --local goroutines. body gets the setup for the world's size.
func (f *bcastFlags) runBcastWorld(ctx context.Context, body func(ctx context.Context, c comm.Comm, s *bcastSetup) error) error {
	if err := f.check(); err != nil {
		return err
	}
	if f.world.platform == "" {
		info := ""
		_, err := runWorld(ctx, f.world, func(ctx context.Context, c comm.Comm) error {
			if info == "" {
				info = worldKindOf(f.world)
			}
			s, err := f.setup(c.Size(), nil, info)
			if err != nil {
				return err
			}
			return body(ctx, c, s)
		})
		return err
	}
	if _, err := platform.ParseNoiseProfile(f.world.noise); err != nil {
		return usagef("--noise: %v", err)
	}
	if f.world.noise != "" && f.world.noNoise {
		return usagef("--noise and --no-noise are exclusive")
	}
	p, err := platform.Load(f.world.platform)
	if err != nil {
		return usagef("--platform: %v", err)
	}
	if f.perHost > 0 || f.order != "" {
		per, order := p.Placement()
		if f.perHost > 0 {
			per = f.perHost
		}
		if f.order != "" {
			order = f.order
		}
		if p, err = p.Place(per, order); err != nil {
			return usagef("--per-host/--order: %v", err)
		}
	}
	s, err := f.setup(p.NumRanks(), p, p.Name)
	if err != nil {
		return err
	}
	_, err = sim.Run(ctx, p, sim.Options{NoNoise: f.world.noNoise, Noise: f.world.noise, Seed: f.world.seed},
		func(ctx context.Context, c comm.Comm) error { return body(ctx, c, s) })
	return err
}

// worldKindOf names a live world for the first line and bench.json.
func worldKindOf(wf *worldFlags) string {
	if wf.local > 0 {
		return "local"
	}
	return "live"
}

// setup resolves the flags for a world of n ranks; p is the simulated
// platform (nil in a live world).
func (f *bcastFlags) setup(n int, p *platform.Platform, world string) (*bcastSetup, error) {
	s := &bcastSetup{world: world, ranks: n}
	var err error
	if s.sizes, err = parseByteList("sizes", f.sizes); err != nil {
		return nil, err
	}
	switch {
	case f.topology != "":
		t, err := topo.ReadFile(f.topology)
		if err != nil {
			return nil, usagef("--topology: %v", err)
		}
		if t.Size != n {
			return nil, usagef("--topology %s has %d ranks, the world %d", f.topology, t.Size, n)
		}
		s.t, s.topoSource = t, f.topology
	case p != nil:
		lv := p.TruthLevels()
		var names []string
		for _, l := range lv {
			names = append(names, fmt.Sprintf("%s (%d groups)", l.Name, len(l.Groups)))
		}
		s.t = tune.TruthTopology(lv, p.NumRanks())
		s.topoSource = "platform ground truth"
		s.topoNote = "topology: none given, using the platform's ground-truth levels: " + strings.Join(names, ", ")
	default:
		s.topoSource = "none"
		s.topoNote = "topology: none given (--topology topology.json from 'netaware discover'): topology-blind algorithms only"
	}
	if f.commSizes != "" {
		for _, x := range strings.Split(f.commSizes, ",") {
			q, err := strconv.Atoi(strings.TrimSpace(x))
			if err != nil || q < 1 || q > n || (len(s.commSizes) > 0 && q <= s.commSizes[len(s.commSizes)-1]) {
				return nil, usagef("--comm-sizes %q: want ascending sizes between 1 and %d", f.commSizes, n)
			}
			s.commSizes = append(s.commSizes, q)
		}
	}
	segs, err := parseByteList("segs", f.segs)
	if err != nil {
		return nil, err
	}
	var names []string
	if f.algorithms != "" {
		for _, a := range strings.Split(f.algorithms, ",") {
			if a = strings.TrimSpace(a); a != "" && a != tune.Baseline.Name {
				names = append(names, a)
			}
		}
	}
	if f.model != "" {
		mf, err := model.ReadFile(f.model)
		if err != nil {
			return nil, usagef("--model: %v", err)
		}
		if s.cost, _, err = tune.ModelCost(mf, n); err != nil {
			return nil, usagef("--model %s: %v", f.model, err)
		}
	}
	var bases []string
	for _, b := range strings.Split(f.bases, ",") {
		if b = strings.TrimSpace(b); b != "" {
			bases = append(bases, b)
		}
	}
	if s.algs, err = tune.Candidates(n, s.t, tune.CandidateOptions{SegSizes: segs, Names: names, Bases: bases, Cost: s.cost}); err != nil {
		return nil, usagef("--algorithms: %v", err)
	}
	s.algs = append([]coll.Algorithm{tune.Baseline}, s.algs...)
	return s, nil
}

func (f *bcastFlags) config(s *bcastSetup) tune.BenchConfig {
	cfg := tune.BenchConfig{Topology: s.t, Sizes: s.sizes, Reps: f.reps, Warmup: f.warmup, CommSizes: s.commSizes, Cost: s.cost}
	if f.warmup == 0 {
		cfg.Warmup = -1 // explicit zero: no warm-up
	}
	return cfg
}

// progress reports on w after each algorithm and size (rank 0 only).
func progress(w io.Writer, total int) func(done, total int, a coll.Algorithm, bytes int) {
	bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("benchmarking"),
		progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
	return func(done, _ int, a coll.Algorithm, bytes int) {
		bar.Describe(a.String() + " " + fmtBytes(bytes))
		_ = bar.Set(done)
	}
}

// algorithmList is the --algorithms help: every algorithm tune can try.
func algorithmList() string {
	var blind, aware, perf []string
	for _, in := range coll.Algorithms() {
		switch {
		case in.Name == "auto" || in.Name == "ompi-fixed":
		case in.TopologyAware:
			aware = append(aware, in.Name)
		case in.ModelAware:
			perf = append(perf, in.Name)
		default:
			blind = append(blind, in.Name)
		}
	}
	return "Algorithms (--algorithms): topology-blind " + strings.Join(blind, ", ") +
		"; topology-aware " + strings.Join(aware, ", ") +
		"; performance-aware (with --model) " + strings.Join(perf, ", ") + "."
}

func newTuneBcastCmd() *cobra.Command {
	var f bcastFlags
	var out, from string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "bcast",
		Short: "Tune MPI_Bcast: best algorithm per message size, as decision table and MPI rule files",
		Long: fmt.Sprintf(`tune bcast measures every applicable broadcast algorithm (topology-blind ones,
and topology-aware ones at every topology level) times segment size at every
message size, in the simulator (--platform) or live on the processes it was
started in (netaware launch, mpirun, srun, netaware emu run; without a
--topology only topology-blind algorithms). Each of W warm-up and N timed
repetitions starts after a barrier; a repetition's time is the slowest
rank's, as OSU and IMB measure; the values within the 90th percentile are
kept (seed 003 Sect. 6.5). It then picks the fastest per message size and
writes into --out:

  decision.json     for netaware's coll.Bcast(..., coll.Auto)
  ompi-rules.conf   Open MPI coll/tuned dynamic rules (classic format)
  ompi-rules.json   the same as Open MPI 6's JSON rules file
  mpich-coll.json   MPICH collective selection (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE)
  bench.json        every measured time and every choice

--comm-sizes 16,64,360 tunes several communicator sizes (each on ranks
0..q-1 of the platform, with the topology cut to them); the files then hold
one block per size.

Where the fastest algorithm has no equivalent in a library (topology-aware
ones), that library's file gets the fastest algorithm it can run, and the
table says how much slower it is. The Open MPI fixed decision (what MPI_Bcast
runs by default) is always measured as the baseline.

%s

Use the files with:
  mpirun --mca coll_tuned_use_dynamic_rules 1 \
         --mca coll_tuned_dynamic_rules_filename DIR/ompi-rules.conf ./app
  MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=DIR/mpich-coll.json mpiexec ./app

Examples:
  netaware tune bcast --platform zhu-2racks --per-host 2 --out tuned/ \
      --sizes 1,64KiB,1MiB --reps 3
  netaware launch -n 4 -- netaware tune bcast --out tuned/ --sizes 1KiB,64KiB \
      --algorithms binomial,pipeline --reps 3`, algorithmList()),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("--out DIR is required")
			}
			w := cmd.OutOrStdout()
			info := w // lines around the table; on stderr under --json
			if asJSON {
				info = cmd.ErrOrStderr()
			}
			// write decides from the measurements and writes every file.
			write := func(rep *tune.Report, t *topo.Topology) error {
				header := []string{
					fmt.Sprintf("netaware tune bcast: %s, %d ranks, topology: %s", rep.Platform, rep.Ranks, rep.TopologySource),
					"use: mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename THIS_FILE",
				}
				o, err := tune.Decide(rep, t, header)
				if err != nil {
					return err
				}
				files, err := o.WriteAll(out)
				if err != nil {
					return err
				}
				if asJSON {
					return probeWriteJSON(w, tuneSummary{Platform: rep.Platform, Ranks: rep.Ranks, TopologySource: rep.TopologySource,
						Choices: rep.Choices, Files: files})
				}
				printChoices(w, rep)
				for _, f := range files {
					fmt.Fprintf(w, "wrote %s\n", f)
				}
				return nil
			}
			if from != "" {
				return decideFrom(from, f.topology, write)
			}
			return f.runBcastWorld(cmd.Context(), func(ctx context.Context, c comm.Comm, s *bcastSetup) error {
				cfg := f.config(s)
				root := c.Rank() == 0
				if root {
					fmt.Fprintln(info, s.topoNote)
					if !quietFlag(cmd) {
						cfg.Progress = progress(cmd.ErrOrStderr(), len(s.algs)*len(s.sizes)*max(len(s.commSizes), 1))
					}
					fmt.Fprintf(info, "%s: %d ranks; %d algorithm configurations x %d sizes, %d+%d repetitions each\n",
						s.world, s.ranks, len(s.algs), len(s.sizes), f.warmup, f.reps)
				}
				ms, err := tune.Run(ctx, c, cfg, s.algs)
				if !root {
					return err
				}
				rep := &tune.Report{Version: tune.ReportVersion, Platform: s.world, Ranks: s.ranks, TopologySource: s.topoSource,
					Reps: f.reps, Warmup: f.warmup, SizesBytes: s.sizes, Measurements: ms}
				if err != nil {
					if ctx.Err() != nil && len(ms) > 0 {
						keepPartialTune(info, out, rep)
					}
					return err
				}
				return write(rep, s.t)
			})
		},
	}
	f.register(cmd, "1,1KiB,16KiB,64KiB,256KiB,1MiB,4MiB")
	cmd.Flags().StringVar(&out, "out", "", "directory for the decision table, rule files and bench.json (required)")
	cmd.Flags().StringVar(&from, "from", "", "decide from this bench.json (of an earlier run) instead of measuring")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the choices and the files written as JSON (bench.json has every measurement)")
	return cmd
}

// tuneSummary is 'tune bcast --json': the table of choices and the files.
type tuneSummary struct {
	Platform       string        `json:"platform"`
	Ranks          int           `json:"ranks"`
	TopologySource string        `json:"topology_source"`
	Choices        []tune.Choice `json:"choices"`
	Files          []string      `json:"files"`
}

// decideFrom reads the measurements of an earlier run (bench.json or
// bench.partial.json) and writes the files from them, with the topology
// of topoFile (needed when a topology-aware algorithm won).
func decideFrom(path, topoFile string, write func(*tune.Report, *topo.Topology) error) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return usagef("--from: %v", err)
	}
	var rep tune.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return usagef("--from %s: %v", path, err)
	}
	if len(rep.Measurements) == 0 {
		return usagef("--from %s: no measurements", path)
	}
	var t *topo.Topology
	if topoFile != "" {
		if t, err = topo.ReadFile(topoFile); err != nil {
			return usagef("--topology: %v", err)
		}
		if t.Size != rep.Ranks {
			return usagef("--topology %s has %d ranks, %s %d", topoFile, t.Size, path, rep.Ranks)
		}
	}
	return write(&rep, t)
}

// keepPartialTune writes the measurements of an interrupted 'tune bcast'
// to DIR/bench.partial.json, apart from the files of a finished run (which
// it leaves alone): no decision is made from a part of the algorithms.
func keepPartialTune(w io.Writer, dir string, rep *tune.Report) {
	path := filepath.Join(dir, "bench.partial.json")
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		err = rep.WriteFile(path)
	}
	if err != nil {
		fmt.Fprintf(w, "interrupted: could not keep the %d measurements: %v\n", len(rep.Measurements), err)
		return
	}
	fmt.Fprintf(w, "interrupted: kept the %d measurements finished in %s (no decision made)\n", len(rep.Measurements), path)
}

func fmtBytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

func fmtSec(s float64) string { return platform.FormatTime(s) }

// printChoices prints the per-size choices for people.
func printChoices(w io.Writer, rep *tune.Report) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ranks\tsize\tbest\ttime\tompi-fixed\tspeed-up\tbest blind\tOpen MPI file\tMPICH file")
	for _, c := range rep.Choices {
		blind := "-"
		if c.BestBlind != nil {
			blind = fmt.Sprintf("%s %s", c.BestBlind.Label, fmtSec(c.BestBlind.MeanS))
		}
		lib := func(l *tune.LibChoice) string {
			if l == nil {
				return "-"
			}
			if l.SameAsBest {
				return "same"
			}
			if r := l.MeanS / c.Best.MeanS; r > 1.005 {
				return fmt.Sprintf("%s (%.2fx slower)", l.Label, r)
			}
			return l.Label + " (same time)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s %s\t%.2fx\t%s\t%s\t%s\n", c.Ranks, fmtBytes(c.Bytes), c.Best.Label, fmtSec(c.Best.MeanS),
			c.Baseline.Label, fmtSec(c.Baseline.MeanS), c.Speedup, blind, lib(c.OMPI), lib(c.MPICH))
	}
	tw.Flush()
}
