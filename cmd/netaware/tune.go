package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	"netaware/units"
)

func init() { register(newTuneCmd) }

func newTuneCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Benchmark collectives and write decision tables and MPI rule files",
		Long: `tune benchmarks collective algorithms (bcast, scatter, gather, reduce,
allgather, allreduce, reduce_scatter) in the simulator or live, picks the
fastest per message size, and writes the choice for netaware's own collectives
(decision.json, decision-COLL.json) and for MPI libraries (Open MPI coll/tuned
rules, MPICH collective selection JSON). 'tune all' tunes several collectives
in one run and writes them into one rules file per library.

Example:
  netaware tune allreduce --platform zhu-2racks --sizes 64KiB,1MiB --out tuned/`,
	}
	for _, k := range tune.Collectives {
		cmd.AddCommand(newTuneCollCmd(k))
	}
	cmd.AddCommand(newTuneCollCmd(""))
	return cmd
}

// collFlags are the flags 'tune COLL' and 'bench COLL' share.
type collFlags struct {
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
	library    bool
}

func (f *collFlags) register(cmd *cobra.Command, defaultSizes string) {
	f.world = addWorldFlags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.topology, "topology", "", "topology.json for topology-aware algorithms (default: the simulated platform's ground-truth levels; live: none, topology-blind algorithms only)")
	fl.StringVar(&f.sizes, "sizes", defaultSizes, "message sizes, comma-separated (units: 4KiB, 1MiB): the whole vector, all ranks' blocks together for scatter, gather, allgather and reduce_scatter")
	fl.StringVar(&f.algorithms, "algorithms", "", "algorithms to try, comma-separated (default: all that run the collective; see 'netaware tune bcast --help')")
	fl.StringVar(&f.segs, "segs", "8KiB,32KiB,128KiB", "segment sizes for every algorithm that takes one (Open MPI bcast and reduce: pipeline, chain, binary, binomial, ...)")
	fl.StringVar(&f.bases, "bases", "binomial,pipeline", "algorithms used inside sub-communicators by magpie2, hierarchical and levels-allreduce")
	fl.IntVar(&f.reps, "reps", 5, "timed repetitions N per algorithm and size (seed 003 used 1000 on real machines)")
	fl.IntVar(&f.warmup, "warmup", 1, "warm-up repetitions W, discarded (seed 003: 50-100 on real machines)")
	fl.StringVar(&f.model, "model", "", "model.json (per-pair Hockney) for the performance-aware builders model-binomial, prim, traff (bcast)")
	fl.StringVar(&f.commSizes, "comm-sizes", "", "communicator sizes to tune, ascending, each measured on ranks 0..q-1 (default: all ranks)")
	fl.BoolVar(&f.library, "library", false, "bcast in the MPI world (Open MPI or MPICH): time the library's own MPI_Bcast with each algorithm's equivalent in it forced, instead of netaware's schedule of it")
	fl.IntVar(&f.perHost, "per-host", 0, "simulator: ranks per host (0: the platform's placement)")
	fl.StringVar(&f.order, "order", "", "simulator: rank placement over hosts: block or cyclic (with --per-host)")
}

// collPlan is one collective's measurement plan: its candidates and its
// message sizes (normalized, see tune.Collective.Normalize).
type collPlan struct {
	coll  tune.Collective
	algs  []coll.Algorithm
	sizes []int
}

// collSetup is what the shared flags resolve to, once the world's size
// is known.
type collSetup struct {
	world      string // the platform's name, or the live world's kind
	ranks      int
	t          *topo.Topology
	topoSource string
	topoNote   string // what rank 0 says about the topology
	commSizes  []int
	plans      []collPlan
	cost       coll.CostFunc
}

// configurations is the number of algorithm x size measurements.
func (s *collSetup) configurations() (algs, total int) {
	for _, p := range s.plans {
		algs += len(p.algs)
		total += len(p.algs) * len(p.sizes) * max(len(s.commSizes), 1)
	}
	return algs, total
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
func (f *collFlags) check() error {
	if f.reps < 1 || f.warmup < 0 {
		return usagef("--reps must be >= 1 and --warmup >= 0")
	}
	if _, err := parseByteList("sizes", f.sizes); err != nil {
		return err
	}
	if _, err := parseByteList("segs", f.segs); err != nil {
		return err
	}
	if f.library && f.world.platform != "" {
		return usagef("--library times the MPI library itself: it needs the MPI world (netaware built with -tags mpi, started by mpirun), not --platform")
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

// runCollWorld runs body on every rank of the world the flags select:
// the simulated --platform (with --per-host/--order), or the live world
// this process was started in (netaware launch, mpirun, srun, netaware emu
// run), or --local goroutines. body gets the setup of the collectives for
// the world's size.
func (f *collFlags) runCollWorld(ctx context.Context, colls []tune.Collective, body func(ctx context.Context, c comm.Comm, s *collSetup) error) error {
	if err := f.check(); err != nil {
		return err
	}
	if f.world.platform == "" {
		info := ""
		_, err := runWorld(ctx, f.world, func(ctx context.Context, c comm.Comm) error {
			if info == "" {
				info = worldKindOf(f.world)
			}
			s, err := f.setup(c.Size(), nil, info, colls)
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
	s, err := f.setup(p.NumRanks(), p, p.Name, colls)
	if err != nil {
		return err
	}
	_, err = simRun(ctx, p, sim.Options{NoNoise: f.world.noNoise, Noise: f.world.noise, Seed: f.world.seed},
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

// setup resolves the flags for a world of n ranks and the collectives to
// measure; p is the simulated platform (nil in a live world).
func (f *collFlags) setup(n int, p *platform.Platform, world string, colls []tune.Collective) (*collSetup, error) {
	s := &collSetup{world: world, ranks: n}
	sizes, err := parseByteList("sizes", f.sizes)
	if err != nil {
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
	used := map[string]bool{}
	for _, k := range colls {
		// With several collectives, a name that does not run one of them
		// is left out of that one only.
		var kn []string
		for _, a := range names {
			if len(colls) == 1 || k.Runs(a) {
				kn = append(kn, a)
				used[a] = true
			}
		}
		if names != nil && kn == nil {
			continue
		}
		algs, err := tune.Candidates(n, s.t, tune.CandidateOptions{Collective: k, SegSizes: segs, Names: kn, Bases: bases, Cost: s.cost})
		if err != nil {
			return nil, usagef("--algorithms: %v", err)
		}
		if k == tune.Bcast {
			// Open MPI's fixed decision is the broadcast's baseline.
			algs = append([]coll.Algorithm{tune.Baseline}, algs...)
		}
		if f.library {
			if k != tune.Bcast {
				return nil, usagef("--library: timing the library's own algorithms is implemented for bcast, not %s", k)
			}
			// Only what the linked library can be told to run (without
			// one, tune.Run refuses: no MPI world).
			lib := cmp.Or(mpiLibrary(), "openmpi")
			algs = slices.DeleteFunc(algs, func(a coll.Algorithm) bool {
				_, ok := tune.LibraryEquivalent(lib, a)
				return !ok
			})
		}
		if len(algs) == 0 {
			continue
		}
		plan := collPlan{coll: k, algs: algs}
		for _, b := range sizes {
			if b = k.Normalize(n, b); !slices.Contains(plan.sizes, b) {
				plan.sizes = append(plan.sizes, b)
			}
		}
		s.plans = append(s.plans, plan)
	}
	for _, a := range names {
		if !used[a] {
			return nil, usagef("--algorithms: %s runs none of %v", a, colls)
		}
	}
	if len(s.plans) == 0 {
		return nil, usagef("--algorithms: nothing to measure")
	}
	return s, nil
}

func (f *collFlags) config(s *collSetup, p collPlan) tune.BenchConfig {
	cfg := tune.BenchConfig{Collective: p.coll, Topology: s.t, Sizes: p.sizes, Reps: f.reps, Warmup: f.warmup, CommSizes: s.commSizes, Cost: s.cost, Library: f.library}
	if f.warmup == 0 {
		cfg.Warmup = -1 // explicit zero: no warm-up
	}
	return cfg
}

// measure runs every plan of s on c, one collective after the other, with
// one progress count over all of them. It returns rank 0's measurements
// (also those finished before an error).
func (f *collFlags) measure(ctx context.Context, c comm.Comm, s *collSetup, progress func(done, total int, a coll.Algorithm, bytes int), decision *coll.Decision, extra []coll.Algorithm) ([]tune.Measurement, error) {
	var all []tune.Measurement
	done := 0
	_, total := s.configurations()
	total += len(extra) * len(s.plans) * 8 // a bound; only the bar's length
	for _, p := range s.plans {
		cfg := f.config(s, p)
		cfg.Decision = decision
		base := done
		if progress != nil {
			cfg.Progress = func(d, _ int, a coll.Algorithm, bytes int) {
				done = base + d
				progress(done, total, a, bytes)
			}
		}
		algs := p.algs
		if len(extra) > 0 {
			algs = append(slices.Clone(algs), extra...)
		}
		ms, err := tune.Run(ctx, c, cfg, algs)
		all = append(all, ms...)
		if err != nil {
			return all, err
		}
	}
	return all, nil
}

// progress reports on w after each algorithm and size (rank 0 only).
func progress(w io.Writer, total int) func(done, total int, a coll.Algorithm, bytes int) {
	bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("benchmarking"),
		progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
	return func(done, _ int, a coll.Algorithm, bytes int) {
		bar.Describe(a.String() + " " + units.FormatSize(int64(bytes)))
		_ = bar.Set(done)
	}
}

// algorithmList is the --algorithms help: every algorithm tune can try.
func algorithmList() string {
	var blind, aware, perf, exch []string
	for _, in := range append(coll.Algorithms(), coll.ReductionAlgorithms()...) {
		switch {
		case in.Name == "auto" || in.Name == "ompi-fixed":
		case in.Exchange:
			exch = append(exch, in.Name)
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
		"; allreduce and reduce_scatter only " + strings.Join(exch, ", ") +
		"; performance-aware (bcast, with --model) " + strings.Join(perf, ", ") + "."
}

// tuneOptions are 'tune COLL' and 'tune all'.
type tuneOptions struct {
	streams
	flags  collFlags
	colls  []tune.Collective
	only   string // --collectives of 'tune all'
	out    string
	from   string
	asJSON bool
	all    bool
}

func (o *tuneOptions) complete(cmd *cobra.Command, _ []string) error {
	o.completeStreams(cmd)
	if o.all {
		o.colls = nil
		for _, x := range strings.Split(o.only, ",") {
			if x = strings.TrimSpace(x); x == "" {
				continue
			}
			k, err := tune.ParseCollective(x)
			if err != nil {
				return usagef("--collectives: %v", err)
			}
			if !slices.Contains(o.colls, k) {
				o.colls = append(o.colls, k)
			}
		}
	}
	return nil
}

func (o *tuneOptions) validate() error {
	if o.out == "" {
		return usagef("--out DIR is required")
	}
	if len(o.colls) == 0 {
		return usagef("--collectives: none given")
	}
	if o.from != "" {
		return nil
	}
	return o.flags.check()
}

// info is where the lines around the table go: stdout, stderr under --json.
func (o *tuneOptions) info() io.Writer {
	if o.asJSON {
		return o.errOut
	}
	return o.streams.out
}

func (o *tuneOptions) run(ctx context.Context) error {
	if o.from != "" {
		return decideFrom(o.from, o.flags.topology, o.colls, o.write)
	}
	return o.flags.runCollWorld(ctx, o.colls, func(ctx context.Context, c comm.Comm, s *collSetup) error {
		root := c.Rank() == 0
		var prog func(done, total int, a coll.Algorithm, bytes int)
		if root {
			fmt.Fprintln(o.info(), s.topoNote)
			algs, total := s.configurations()
			if !o.quiet {
				prog = progress(o.errOut, total)
			}
			var what []string
			for _, p := range s.plans {
				what = append(what, fmt.Sprintf("%s %d x %d sizes", p.coll, len(p.algs), len(p.sizes)))
			}
			fmt.Fprintf(o.info(), "%s: %d ranks; %d algorithm configurations (%s), %d+%d repetitions each\n",
				s.world, s.ranks, algs, strings.Join(what, ", "), o.flags.warmup, o.flags.reps)
			if o.flags.library {
				fmt.Fprintln(o.info(), "timing the MPI library's own MPI_Bcast, each algorithm forced (--library)")
			}
		}
		ms, err := o.flags.measure(ctx, c, s, prog, nil, nil)
		if !root {
			return err
		}
		var sizes []int
		for _, p := range s.plans {
			for _, b := range p.sizes {
				if !slices.Contains(sizes, b) {
					sizes = append(sizes, b)
				}
			}
		}
		slices.Sort(sizes)
		rep := &tune.Report{Version: tune.ReportVersion, Platform: s.world, Ranks: s.ranks, TopologySource: s.topoSource,
			Reps: o.flags.reps, Warmup: o.flags.warmup, SizesBytes: sizes, Measurements: ms}
		if err != nil {
			if ctx.Err() != nil && len(ms) > 0 {
				keepPartialTune(o.info(), o.out, rep)
			}
			return err
		}
		if err := o.write(rep, s.t); err != nil {
			// The measurements took long: keep them for --from.
			keepPartialTune(o.info(), o.out, rep)
			return err
		}
		return nil
	})
}

// write decides from the measurements and writes every file.
func (o *tuneOptions) write(rep *tune.Report, t *topo.Topology) error {
	var names []string
	for _, k := range o.colls {
		names = append(names, string(k))
	}
	header := []string{
		fmt.Sprintf("netaware tune %s: %s, %d ranks, topology: %s", strings.Join(names, ","), rep.Platform, rep.Ranks, rep.TopologySource),
		"use: mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename THIS_FILE",
	}
	res, err := tune.Decide(rep, t, header)
	if err != nil {
		return err
	}
	files, err := res.WriteAll(o.out)
	if err != nil {
		return err
	}
	w := o.streams.out
	if o.asJSON {
		return probeWriteJSON(w, tuneSummary{Platform: rep.Platform, Ranks: rep.Ranks, TopologySource: rep.TopologySource,
			Choices: rep.Choices, Files: files})
	}
	printChoices(w, rep)
	for _, f := range files {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
	return nil
}

// newTuneCollCmd is 'tune COLL' for collective k, or 'tune all' for "".
func newTuneCollCmd(k tune.Collective) *cobra.Command {
	o := &tuneOptions{colls: []tune.Collective{k}, all: k == ""}
	name, short := string(k), ""
	if !o.all {
		short = fmt.Sprintf("Tune MPI_%s: best algorithm per message size, as decision table and MPI rule files", mpiName(k))
	}
	if o.all {
		name, short = "all", "Tune several collectives in one run, into one rules file per library"
	}
	cmd := &cobra.Command{
		Use:   name,
		Short: short,
		Long:  tuneLong(k),
		Args:  cobra.NoArgs,
		RunE:  runOptions(o),
	}
	o.flags.register(cmd, "1,1KiB,16KiB,64KiB,256KiB,1MiB,4MiB")
	fl := cmd.Flags()
	fl.StringVar(&o.out, "out", "", "directory for the decision tables, rule files and bench.json (required)")
	fl.StringVar(&o.from, "from", "", "decide from this bench.json (of an earlier run) instead of measuring")
	fl.BoolVar(&o.asJSON, "json", false, "print the choices and the files written as JSON (bench.json has every measurement)")
	if o.all {
		var all []string
		for _, c := range tune.Collectives {
			all = append(all, string(c))
		}
		fl.StringVar(&o.only, "collectives", strings.Join(all, ","), "collectives to tune, comma-separated")
	}
	return cmd
}

// mpiName is the collective's MPI function name after "MPI_".
func mpiName(k tune.Collective) string {
	s := k.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

func tuneLong(k tune.Collective) string {
	what := fmt.Sprintf("tune %s measures every applicable %s algorithm", k, k)
	ex := fmt.Sprintf(`  netaware tune %s --platform zhu-2racks --per-host 2 --out tuned/ \
      --sizes 64KiB,1MiB --reps 3 --algorithms binomial,pipeline,hierarchical --segs 64KiB --bases binomial
  netaware launch -n 4 -- netaware tune %s --out tuned/ --sizes 1KiB,64KiB \
      --algorithms binomial,pipeline --reps 3`, k, k)
	switch k {
	case "":
		what = "tune all measures every applicable algorithm of each collective of --collectives"
		ex = `  netaware tune all --collectives allreduce,reduce --platform zhu-2racks --out tuned/ \
      --sizes 64KiB,1MiB --reps 2 --algorithms binomial,ring,rabenseifner,dfs-ring`
	case tune.Bcast:
		ex = `  netaware tune bcast --platform zhu-2racks --per-host 2 --out tuned/ \
      --sizes 1,64KiB,1MiB --reps 3
  netaware launch -n 4 -- netaware tune bcast --out tuned/ --sizes 1KiB,64KiB \
      --algorithms binomial,pipeline --reps 3`
	case tune.Allreduce, tune.ReduceScatter:
		ex = fmt.Sprintf(`  netaware tune %s --platform zhu-2racks --per-host 2 --order cyclic --out tuned/ \
      --sizes 64KiB,1MiB --reps 2 --algorithms ring,rabenseifner,dfs-ring,levels-allreduce --bases binomial
  netaware tune %s --local 4 --out tuned/ --sizes 64KiB --algorithms ring,recursive-doubling`, k, k)
	}
	return fmt.Sprintf(`%s (topology-blind ones, and
topology-aware ones at every topology level) times segment size at every
message size, in the simulator (--platform) or live on the processes it was
started in (netaware launch, mpirun, srun, netaware emu run; without a
--topology only topology-blind algorithms). Each of W warm-up and N timed
repetitions starts after a barrier; a repetition's time is the slowest
rank's, as OSU and IMB measure; the values within the 90th percentile are
kept (seed 003 Sect. 6.5). A message size is the whole vector (for scatter,
gather, allgather and reduce_scatter all ranks' blocks together, rounded up
to equal blocks; reductions sum 4-byte floats), the size Open MPI's and
MPICH's rules compare. It then picks the fastest per message size and
writes into --out:

  decision.json     for netaware's coll.Bcast(..., coll.Auto) (bcast)
  decision-COLL.json  the same for the other collectives (netaware.Comm.SetDecision)
  ompi-rules.conf   Open MPI coll/tuned dynamic rules (classic format), every collective tuned
  ompi-rules.json   the same as Open MPI 6's JSON rules file
  mpich-coll.json   MPICH collective selection (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE)
  bench.json        every measured time and every choice

--comm-sizes 16,64,360 tunes several communicator sizes (each on ranks
0..q-1 of the platform, with the topology cut to them); the files then hold
one block per size. Ctrl-C stops within seconds and keeps the finished
measurements in DIR/bench.partial.json; --from decides from a bench.json
again without measuring.

Where the fastest algorithm has no equivalent in a library (topology-aware
ones), that library's file gets the fastest algorithm it can run, and the
table says how much slower it is. For bcast, Open MPI's fixed decision (what
MPI_Bcast runs by default) is always measured as the baseline.

%s

Use the files with:
  mpirun --mca coll_tuned_use_dynamic_rules 1 \
         --mca coll_tuned_dynamic_rules_filename DIR/ompi-rules.conf ./app
  MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=DIR/mpich-coll.json mpiexec ./app

Examples:
%s`, what, algorithmList(), ex)
}

// tuneSummary is 'tune COLL --json': the table of choices and the files.
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
func decideFrom(path, topoFile string, colls []tune.Collective, write func(*tune.Report, *topo.Topology) error) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return usagef("--from: %v", err)
	}
	var rep tune.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return usagef("--from %s: %v", path, err)
	}
	// Only the collectives of the command: 'tune allreduce --from' on a
	// bench.json of 'tune all' decides allreduce alone.
	var ms []tune.Measurement
	for _, m := range rep.Measurements {
		if slices.Contains(colls, tune.Collective(m.Collective.String())) {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return usagef("--from %s: no measurements of %v", path, colls)
	}
	rep.Measurements = ms
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

// keepPartialTune writes the measurements of an interrupted (or failed)
// 'tune COLL' to DIR/bench.partial.json, apart from the files of a
// finished run (which it leaves alone): no decision is made from a part of
// the algorithms.
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
	fmt.Fprintf(w, "kept the %d measurements finished in %s (no decision made; decide with --from)\n", len(rep.Measurements), path)
}

// printChoices prints the per-size choices for people.
func printChoices(w io.Writer, rep *tune.Report) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "collective\tranks\tsize\tbest\ttime\tbaseline\tspeed-up\tbest blind\tOpen MPI file\tMPICH file")
	for _, c := range rep.Choices {
		blind := "-"
		if c.BestBlind != nil {
			blind = fmt.Sprintf("%s %s", c.BestBlind.Label, units.FormatTime(c.BestBlind.MeanS))
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
		base, speed := "-", "-"
		if c.Baseline.Label != "" {
			base, speed = c.Baseline.Label+" "+units.FormatTime(c.Baseline.MeanS), fmt.Sprintf("%.2fx", c.Speedup)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Collective, c.Ranks, units.FormatSize(int64(c.Bytes)), c.Best.Label, units.FormatTime(c.Best.MeanS),
			base, speed, blind, lib(c.OMPI), lib(c.MPICH))
	}
	tw.Flush()
}
