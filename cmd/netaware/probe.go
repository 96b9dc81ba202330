package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"netaware/comm"
	"netaware/dataset"
	"netaware/platform"
	"netaware/probe"
	"netaware/topo"
)

func init() { register(newProbeCmd) }

func newProbeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Measure the network: RTT, PLogP, Hockney, bandwidth, concurrent patterns, identities",
		Long: `probe runs netaware's measurements on a world (a simulated platform with
--platform, goroutines with --local, or the live ranks started by
'netaware launch', mpirun or srun) and writes them to a dataset (dataset.json,
see docs/measurements.md), which clustering, modelling and the report read.

Pair probes (rtt, plogp, hockney, bandwidth) measure every pair of the chosen
ranks with LGate's scheduler: one pair at a time by default, or in parallel
within independent groups (--schedule hierarchical --topology FILE|truth).
Rank 0 checkpoints the dataset while the campaign runs; after an interruption
the same command with --resume measures only the pairs still missing.

Examples:
  netaware probe rtt --platform fram-like --ranks 0-63 --out rtt.json
  netaware probe plogp --platform fram-like --schedule hierarchical --topology truth \
      --ranks 0-1,16-17,32-33,48-49 --max-size 64KiB --reps 8 --sat-max 1000 --out plogp.json
  netaware launch -n 8 -- netaware probe plogp --max-size 64KiB --out dataset.json
  netaware launch -n 8 -- netaware probe plogp --max-size 64KiB --out dataset.json --resume   # after Ctrl-C
  netaware probe pattern --platform zhu-2racks --nodes 0-9 --random 3 --count 5 --size 1MiB
  netaware probe identity --local 4`,
	}
	for _, kind := range []string{"rtt", "plogp", "hockney", "bandwidth"} {
		cmd.AddCommand(newPairProbeCmd(kind))
	}
	cmd.AddCommand(newPatternProbeCmd(), newIdentityProbeCmd())
	return cmd
}

// campaignFlags are the flags every pair probe shares.
type campaignFlags struct {
	wf         *worldFlags
	out        string
	resume     bool
	jsonOut    bool
	ranks      string
	schedule   string
	topology   string
	join       string
	sync       string
	fraction   float64
	fastSeed   uint64
	parallel   bool
	checkpoint time.Duration
	noClock    bool
}

func addCampaignFlags(cmd *cobra.Command) *campaignFlags {
	cf := &campaignFlags{wf: addWorldFlags(cmd)}
	f := cmd.Flags()
	f.StringVar(&cf.out, "out", "dataset.json", "dataset file to write (other probes' sections in it are kept)")
	f.BoolVar(&cf.resume, "resume", false, "continue an interrupted campaign of --out: keep its finished pairs, measure the rest")
	f.BoolVar(&cf.jsonOut, "json", false, "print the measured section as JSON instead of a table")
	f.StringVar(&cf.ranks, "ranks", "", "measure only these ranks, e.g. 0-7,12 (default: all)")
	f.StringVar(&cf.schedule, "schedule", "serial", "pair schedule: serial (one pair at a time), hierarchical (LGate groups, needs --topology), fast (a fraction of each group), representative (one pair per group and per group pair)")
	f.StringVar(&cf.topology, "topology", "", "groups for hierarchical/fast/representative: a topology.json file, an LGate group file (*.lgate, seed 003 Fig. 3.4), or 'truth' (the simulated platform's ground truth)")
	f.StringVar(&cf.join, "join", "one", "hierarchical joins: one (a cross pair at a time per group pair) or zip (LGate's zipped pairs at once)")
	f.StringVar(&cf.sync, "sync", "barrier", "step ordering within a group: barrier (LGate's subset barrier) or token (cheaper at scale)")
	f.Float64Var(&cf.fraction, "fraction", 0.25, "fast schedule: fraction of each finest group measured")
	f.Uint64Var(&cf.fastSeed, "fast-seed", 1, "fast schedule: seed of the rank sample")
	f.BoolVar(&cf.parallel, "parallel", false, "representative schedule: run disjoint pairs at the same time")
	f.DurationVar(&cf.checkpoint, "checkpoint", 5*time.Second, "rank 0 rewrites --out at most this often during a campaign")
	f.BoolVar(&cf.noClock, "no-clock-correction", false, "do not measure and subtract the clock-read overhead (seed 003 Fig. 3.7)")
	return cf
}

// parseRankList parses "0-7,12" (nil for "").
func parseRankList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	seen := map[int]bool{}
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("rank list %q: bad rank %q", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("rank list %q: bad range %q", s, part)
			}
		}
		if b-a > 1<<20 {
			return nil, fmt.Errorf("rank list %q: range %q too long", s, part)
		}
		for r := a; r <= b; r++ {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	sort.Ints(out)
	return out, nil
}

func parseSize(flag, s string) (int, error) {
	v, err := platform.ParseSize(s)
	if err != nil || v < 0 || v > 1<<30 {
		return 0, usagef("--%s %q: want a size up to 1GiB like 64KiB, 2MiB or 1000000", flag, s)
	}
	return int(v), nil
}

// levelsFor returns the levels --topology names.
func (cf *campaignFlags) levels() ([]topo.Level, error) {
	switch cf.topology {
	case "":
		return nil, nil
	case "truth":
		if cf.wf.platform == "" {
			return nil, usagef("--topology truth needs --platform")
		}
		p, err := platform.Load(cf.wf.platform)
		if err != nil {
			return nil, err
		}
		return p.TruthLevels(), nil
	}
	var t *topo.Topology
	var err error
	if strings.HasSuffix(cf.topology, ".lgate") {
		// LGate's own group file (seed 003 Fig. 3.4)
		var f *os.File
		if f, err = os.Open(cf.topology); err == nil {
			t, err = topo.ReadLGate(f)
			f.Close()
		}
	} else {
		t, err = topo.ReadFile(cf.topology)
	}
	if err != nil {
		return nil, usagef("--topology: %v", err)
	}
	return t.Levels, nil
}

// spec builds the schedule for a world of size ranks.
func (cf *campaignFlags) spec(size int, levels []topo.Level) (dataset.ScheduleSpec, error) {
	ranks, err := parseRankList(cf.ranks)
	if err != nil {
		return dataset.ScheduleSpec{}, err
	}
	if ranks == nil {
		for r := 0; r < size; r++ {
			ranks = append(ranks, r)
		}
	}
	for _, r := range ranks {
		if r >= size {
			return dataset.ScheduleSpec{}, usagef("--ranks: rank %d, but the world has %d ranks", r, size)
		}
	}
	if len(ranks) < 2 {
		return dataset.ScheduleSpec{}, usagef("%d rank(s) to measure make no pair: a pair probe needs at least two ranks", len(ranks))
	}
	spec := dataset.ScheduleSpec{Mode: cf.schedule, Ranks: ranks}
	switch cf.schedule {
	case "serial":
	case "hierarchical", "fast":
		if levels == nil {
			return spec, fmt.Errorf("--schedule %s needs --topology", cf.schedule)
		}
		tree, err := probe.TreeFromLevels(levels, ranks)
		if err != nil {
			return spec, err
		}
		spec.Tree = tree
		if spec.Join, err = dataset.ParseJoinMode(cf.join); err != nil {
			return spec, err
		}
		if cf.schedule == "fast" {
			spec.Fraction, spec.Seed = cf.fraction, cf.fastSeed
		}
	case "representative":
		if len(levels) == 0 {
			return spec, fmt.Errorf("--schedule representative needs --topology")
		}
		in := map[int]bool{}
		for _, r := range ranks {
			in[r] = true
		}
		for _, g := range levels[0].Groups {
			var keep []int
			for _, r := range g {
				if in[r] {
					keep = append(keep, r)
				}
			}
			if len(keep) > 0 {
				spec.Groups = append(spec.Groups, keep)
			}
		}
		spec.Parallel = cf.parallel
	default:
		return spec, fmt.Errorf("--schedule %q: want serial, hierarchical, fast or representative", cf.schedule)
	}
	_, err = probe.PlanOf(spec)
	return spec, err
}

func (cf *campaignFlags) worldDesc(size int) dataset.World {
	w := dataset.World{Size: size}
	switch {
	case cf.wf.platform != "":
		w.Kind, w.Platform = "sim", cf.wf.platform
		w.Noise, w.NoiseSeed = !cf.wf.noNoise, cf.wf.seed
	case cf.wf.local > 0:
		w.Kind = "local"
	default:
		w.Kind = liveWorldKind(cf.wf)
	}
	return w
}

// openDataset returns the dataset to add to: the existing --out (checked
// to describe this world), or a fresh one.
func (cf *campaignFlags) openDataset(w dataset.World) (*dataset.Dataset, error) {
	ds, err := dataset.Load(cf.out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if cf.resume {
			return nil, fmt.Errorf("--resume: %s does not exist", cf.out)
		}
		return &dataset.Dataset{Version: dataset.Version, World: w}, nil
	case err != nil:
		return nil, fmt.Errorf("%v (remove it or choose another --out)", err)
	}
	if ds.World.Size != w.Size || ds.World.Kind != w.Kind || ds.World.Platform != w.Platform {
		return nil, fmt.Errorf("%s describes another world (%s %s, %d ranks); choose another --out", cf.out, ds.World.Kind, ds.World.Platform, ds.World.Size)
	}
	return ds, nil
}

// checkpointer rewrites the dataset at most every interval (and never more
// often than twice the time a write takes), and always at the end.
type checkpointer struct {
	path     string
	interval time.Duration
	last     time.Time
	cost     time.Duration
}

func (k *checkpointer) save(ds *dataset.Dataset, final bool) error {
	now := time.Now()
	if !final && (now.Sub(k.last) < k.interval || now.Sub(k.last) < 2*k.cost) {
		return nil
	}
	ds.Check() // the file carries its implausible values' warnings
	if err := ds.Save(k.path); err != nil {
		return err
	}
	k.last = time.Now()
	k.cost = k.last.Sub(now)
	return nil
}

func newPairProbeCmd(kind string) *cobra.Command {
	var (
		maxSize, minSize, size        string
		reps, satMax, satStart, extra int
		rttBytes, rttMaxEx, rttStale  int
		rttRounds                     int
		kf, eps, midEps               float64
		satMaxSize                    string
		ssend, keep                   bool
	)
	short := map[string]string{
		"rtt":       "Round-trip times of every pair (Shirai's ping-pong: rounds of <= 30, stop after 10 without a new best, 3 rounds, min and max)",
		"plogp":     "PLogP parameters of every pair: L, g(m), o_s(m), o_r(m) for m = 0, 2^i up to --max-size (seed 003 Sect. 3.1.2)",
		"hockney":   "Hockney alpha and beta of every pair by ping-pong and least squares, with standard errors",
		"bandwidth": "Achievable bandwidth of every pair by bulk transfer",
	}[kind]
	example := map[string]string{
		"rtt": "  netaware probe rtt --platform fram-like --ranks 0-63 --out rtt.json",
		"plogp": "  netaware probe plogp --platform fram-like --schedule hierarchical --topology truth \\\n" +
			"      --ranks 0-1,16-17,32-33,48-49 --max-size 64KiB --reps 8 --sat-max 1000\n" +
			"  netaware launch -n 8 -- netaware probe plogp --max-size 64KiB --out d.json\n" +
			"  netaware launch -n 8 -- netaware probe plogp --max-size 64KiB --out d.json --resume   # after Ctrl-C",
		"hockney":   "  netaware probe hockney --platform zhu-2racks --max-size 64KiB --reps 8",
		"bandwidth": "  netaware probe bandwidth --platform zhu-2racks --ranks 0-3 --size 16MiB",
	}[kind]
	cmd := &cobra.Command{
		Use:   kind,
		Short: short,
		Long: short + `.

Every pair of --ranks is measured with the scheduler chosen by --schedule;
rank 0 collects the results and checkpoints --out while the campaign runs.
A campaign stopped half way (Ctrl-C, kill -9, a failed node) continues with
the same command plus --resume, keeping every pair already in --out.
See docs/measurements.md for the protocol and the dataset fields.

Example:
` + example,
		Args: cobra.NoArgs,
	}
	cf := addCampaignFlags(cmd)
	f := cmd.Flags()
	switch kind {
	case "rtt":
		f.IntVar(&rttBytes, "bytes", 1, "ping and pong size")
		f.IntVar(&rttMaxEx, "max-exchanges", 30, "ping-pongs per round at most")
		f.IntVar(&rttStale, "stale", 10, "end a round after this many ping-pongs without a new best")
		f.IntVar(&rttRounds, "rounds", 3, "rounds per pair")
		f.BoolVar(&keep, "keep-samples", false, "store every ping-pong's RTT in the dataset, not only the rounds' bests")
	case "plogp":
		f.StringVar(&maxSize, "max-size", "1MiB", "largest message size M (sizes 0 and 2^i up to M)")
		f.IntVar(&reps, "reps", 16, "repetitions R of every timed operation")
		f.Float64Var(&kf, "k", 1.3, "o_r: spin k times the expected round trip before the timed receive")
		f.Float64Var(&eps, "eps", 0.01, "saturation: stop when the time per message moves by at most eps (relative)")
		f.IntVar(&satStart, "sat-start", 10, "saturation: first batch size")
		f.IntVar(&satMax, "sat-max", 37500, "saturation: largest batch size")
		f.StringVar(&satMaxSize, "sat-max-size", "64KiB", "g(m) by saturation up to this size, by Eq. 3.1 above ('none': only g(0))")
		f.Float64Var(&midEps, "midpoint-eps", 0.01, "measure midpoints where RTT(m) misses the interpolation by more than this (relative)")
		f.IntVar(&extra, "max-extra", 16, "extra (midpoint) sizes per pair at most (-1: unbounded)")
		f.BoolVar(&ssend, "ssend", false, "time a synchronous send for o_s (default: a standard send, as seed 003 Fig. 3.6)")
		f.BoolVar(&keep, "keep-samples", false, "store every repetition in the dataset")
	case "hockney":
		f.StringVar(&minSize, "min-size", "1", "smallest non-zero size")
		f.StringVar(&maxSize, "max-size", "1MiB", "largest size")
		f.IntVar(&reps, "reps", 16, "ping-pongs per size")
		f.BoolVar(&keep, "keep-samples", false, "store every repetition in the dataset")
	case "bandwidth":
		f.StringVar(&size, "size", "16MiB", "bytes per bulk transfer")
		f.IntVar(&reps, "reps", 5, "transfers per pair")
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cp := &probe.Campaign{Kind: kind, Resume: cf.resume, NoClockCorrection: cf.noClock}
		var err error
		if cp.Sync, err = probe.ParseSync(cf.sync); err != nil {
			return usagef("--sync: %v", err)
		}
		switch kind {
		case "rtt":
			if rttBytes < 1 || rttMaxEx < 1 || rttStale < 1 || rttRounds < 1 {
				return usagef("--bytes, --max-exchanges, --stale and --rounds must be >= 1")
			}
			cp.RTT = dataset.RTTParams{Bytes: rttBytes, MaxExchanges: rttMaxEx, Stale: rttStale, Rounds: rttRounds, KeepSamples: keep}
		case "plogp":
			m, err := parseSize("max-size", maxSize)
			if err != nil {
				return err
			}
			sm := -1
			if satMaxSize != "none" {
				if sm, err = parseSize("sat-max-size", satMaxSize); err != nil {
					return err
				}
				if sm == 0 {
					sm = -1
				}
			}
			if reps < 1 || satStart < 1 || satMax < satStart || kf < 1 || eps <= 0 || midEps <= 0 || m < 1 {
				return usagef("plogp: want --reps >= 1, 1 <= --sat-start <= --sat-max, --k >= 1, --eps > 0, --midpoint-eps > 0, --max-size >= 1")
			}
			if extra == 0 {
				extra = -2 // no extra sizes; -1 means unbounded
			}
			cp.PLogP = dataset.PLogPParams{MaxBytes: m, Reps: reps, K: kf, Eps: eps, SatStart: satStart, SatMax: satMax,
				SatMaxBytes: sm, MidpointEps: midEps, MaxExtra: extra, Ssend: ssend, KeepSamples: keep}
		case "hockney":
			lo, err := parseSize("min-size", minSize)
			if err != nil {
				return err
			}
			hi, err := parseSize("max-size", maxSize)
			if err != nil {
				return err
			}
			if reps < 1 || hi < 1 || lo > hi {
				return usagef("hockney: want --reps >= 1 and 1 <= --min-size <= --max-size")
			}
			cp.Hockney = dataset.HockneyParams{MinBytes: lo, MaxBytes: hi, Reps: reps, KeepSamples: keep}
		case "bandwidth":
			b, err := parseSize("size", size)
			if err != nil {
				return err
			}
			if reps < 1 || b < 1 {
				return usagef("bandwidth: want --reps >= 1 and --size >= 1")
			}
			cp.Bandwidth = dataset.BandwidthParams{Bytes: b, Reps: reps}
		}
		if rs, err := parseRankList(cf.ranks); err != nil {
			return usagef("--ranks: %v", err)
		} else if rs != nil && len(rs) < 2 {
			return usagef("--ranks %q: one rank makes no pair: give at least two", cf.ranks)
		}
		levels, err := cf.levels()
		if err != nil {
			return err
		}
		return runPairCampaign(cmd, cf, cp, levels)
	}
	return cmd
}

func runPairCampaign(cmd *cobra.Command, cf *campaignFlags, cp *probe.Campaign, levels []topo.Level) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	var ds *dataset.Dataset
	wallStart := time.Now()
	info, err := runWorld(cmd.Context(), cf.wf, func(ctx context.Context, c comm.Comm) error {
		spec, err := cf.spec(c.Size(), levels)
		if err != nil {
			return err
		}
		cp := *cp
		cp.Schedule = spec
		if c.Rank() != 0 {
			return cp.Run(ctx, c, nil, probe.RunHooks{})
		}
		d, err := cf.openDataset(cf.worldDesc(c.Size()))
		if err != nil {
			return err
		}
		ds = d
		pr := &progressReporter{w: stderr, quiet: quietFlag(cmd), start: time.Now(), desc: "probe " + cp.Kind}
		defer pr.finish()
		ck := &checkpointer{path: cf.out, interval: cf.checkpoint, last: time.Now()}
		return cp.Run(ctx, c, ds, probe.RunHooks{Checkpoint: ck.save, Progress: pr.update})
	})
	if err != nil {
		return err
	}
	if ds == nil {
		return nil // not rank 0 of a TCP world
	}
	warnImplausible(stderr, ds, cf.out)
	return printCampaign(stdout, cf, cp.Kind, ds, info, time.Since(wallStart))
}

// maxWarnings bounds the implausible values listed on stderr; the dataset
// marks all of them.
const maxWarnings = 10

// warnImplausible marks the dataset's implausible values (see
// dataset.Dataset.Check; --json output and the file carry them as
// "warnings") and lists them on stderr.
func warnImplausible(w io.Writer, ds *dataset.Dataset, file string) {
	lines := ds.Check()
	for i, l := range lines {
		if i == maxWarnings {
			fmt.Fprintf(w, "netaware: warning: %d more implausible values; every one is listed under \"warnings\" in %s\n", len(lines)-maxWarnings, file)
			break
		}
		fmt.Fprintf(w, "netaware: warning: implausible measurement: %s\n", l)
	}
}

func printCampaign(w io.Writer, cf *campaignFlags, kind string, ds *dataset.Dataset, info worldInfo, wall time.Duration) error {
	var section any
	var pairs, total int
	var clock float64
	switch kind {
	case "rtt":
		section, pairs, total, clock = ds.RTT, len(ds.RTT.Pairs), ds.RTT.PairsTotal, ds.RTT.ClockS
	case "plogp":
		section, pairs, total, clock = ds.PLogP, len(ds.PLogP.Pairs), ds.PLogP.PairsTotal, ds.PLogP.ClockS
	case "hockney":
		section, pairs, total, clock = ds.Hockney, len(ds.Hockney.Pairs), ds.Hockney.PairsTotal, ds.Hockney.ClockS
	case "bandwidth":
		section, pairs, total, clock = ds.Bandwidth, len(ds.Bandwidth.Pairs), ds.Bandwidth.PairsTotal, ds.Bandwidth.ClockS
	}
	if cf.jsonOut {
		return probeWriteJSON(w, section)
	}
	where := info.Kind
	if ds.World.Platform != "" {
		where += " " + ds.World.Platform
	}
	fmt.Fprintf(w, "probe %s: %d/%d pairs on %s (%d ranks), campaign clock %s, wall %s; dataset %s\n",
		kind, pairs, total, where, ds.World.Size, platform.FormatTime(clock), wall.Round(time.Millisecond), cf.out)
	const maxRows = 40
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	defer tw.Flush()
	row := 0
	more := func() bool {
		row++
		if row == maxRows+1 {
			fmt.Fprintf(tw, "... (%d more pairs in %s)\n", pairs-maxRows, cf.out)
		}
		return row <= maxRows
	}
	switch kind {
	case "rtt":
		fmt.Fprintln(tw, "a\tb\trtt min\trtt max\t")
		for _, p := range ds.RTT.Pairs {
			if more() {
				fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t\n", p.A, p.B, platform.FormatTime(p.Result.MinS), platform.FormatTime(p.Result.MaxS))
			}
		}
	case "plogp":
		fmt.Fprintln(tw, "a\tb\tL\tg(0)\to_s(1)\to_r(1)\tG\tsizes\t")
		for _, p := range ds.PLogP.Pairs {
			if more() {
				one, _ := p.Result.At(1)
				fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%.4g s/B\t%d\t\n", p.A, p.B, platform.FormatTime(p.Result.LS), platform.FormatTime(p.Result.G0S),
					platform.FormatTime(one.Os.Mean), platform.FormatTime(one.Or.Mean), p.Result.LogGP.GPerByteS, len(p.Result.Sizes))
			}
		}
	case "hockney":
		fmt.Fprintln(tw, "a\tb\talpha\t+-\tbandwidth\tbeta +-\t")
		for _, p := range ds.Hockney.Pairs {
			if more() {
				r := p.Result
				fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%.3g s/B\t\n", p.A, p.B, platform.FormatTime(r.AlphaS), platform.FormatTime(r.AlphaSES),
					platform.FormatBandwidth(r.BandwidthBps), r.BetaSESPerB)
			}
		}
	case "bandwidth":
		fmt.Fprintln(tw, "a\tb\tbandwidth\tmin\tmax\t")
		for _, p := range ds.Bandwidth.Pairs {
			if more() {
				r := p.Result
				fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t\n", p.A, p.B, platform.FormatBandwidth(r.BandwidthBps),
					platform.FormatBandwidth(r.Bandwidth.Min), platform.FormatBandwidth(r.Bandwidth.Max))
			}
		}
	}
	return nil
}

func newPatternProbeCmd() *cobra.Command {
	var (
		links, nodes, size, out string
		random, count, maxIter  int
		prob, ci                float64
		seed                    uint64
		jsonOut                 bool
	)
	cmd := &cobra.Command{
		Use:   "pattern",
		Short: "Time concurrent sender->receiver communications (seed 001 Sect. 3.1 micro-benchmark)",
		Long: `pattern starts a set of point-to-point communications together and times each
at its receiver (receives pre-posted, a subset barrier, then every send at
once), repeating until every link's 95% confidence interval is within
--ci of its mean or --max-iter iterations (seed 001 Sect. 3.1, Fig. 2).

Give the links with --links "0>1,2>1", or draw --count random patterns as
seed 001 Sect. 7.1 does with --random d: for every node of --nodes in turn, d
times, pick another node uniformly and include the link with probability --p.
Patterns are appended to the dataset's pattern section (which is replaced
when it was measured with other --size, --max-iter or --ci).

Example:
  netaware probe pattern --platform zhu-2racks --nodes 0-9 --random 3 --count 4 --size 8MiB`,
		Args: cobra.NoArgs,
	}
	wf := addWorldFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&links, "links", "", "explicit pattern: src>dst pairs, comma separated, e.g. 0>1,2>1")
	f.StringVar(&nodes, "nodes", "", "random patterns: the nodes (ranks), e.g. 0-9 (default: all)")
	f.IntVar(&random, "random", 0, "random patterns: draws d per node")
	f.Float64Var(&prob, "p", 0.5, "random patterns: inclusion probability")
	f.Uint64Var(&seed, "pattern-seed", 1, "random patterns: seed of the first pattern (pattern i uses seed+i)")
	f.IntVar(&count, "count", 1, "random patterns: how many")
	f.StringVar(&size, "size", "4MiB", "bytes per message")
	f.IntVar(&maxIter, "max-iter", 2000, "iterations at most")
	f.Float64Var(&ci, "ci", 0.02, "stop when every link's 95% CI width is within this fraction of its mean")
	f.StringVar(&out, "out", "dataset.json", "dataset file (patterns are appended)")
	f.BoolVar(&jsonOut, "json", false, "print the results as JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		b, err := parseSize("size", size)
		if err != nil {
			return err
		}
		if maxIter < 2 || ci <= 0 || b < 1 {
			return usagef("pattern: want --max-iter >= 2, --ci > 0, --size >= 1")
		}
		explicit, err := parseLinks(links)
		if err != nil {
			return usagef("--links: %v", err)
		}
		if (explicit == nil) == (random == 0) {
			return usagef("pattern: give exactly one of --links and --random")
		}
		nodeList, err := parseRankList(nodes)
		if err != nil {
			return usagef("--nodes: %v", err)
		}
		if nodeList != nil && len(nodeList) < 2 {
			return usagef("--nodes %q: one node has no link to draw: give at least two", nodes)
		}
		params := dataset.PatternParams{Bytes: b, MaxIter: maxIter, CIWidth: ci}
		cf := &campaignFlags{wf: wf, out: out}
		var ds *dataset.Dataset
		pr := &progressReporter{w: cmd.ErrOrStderr(), quiet: quietFlag(cmd), start: time.Now(), desc: "probe pattern"}
		defer pr.finish()
		info, err := runWorld(cmd.Context(), wf, func(ctx context.Context, c comm.Comm) error {
			var patterns [][]dataset.Link
			var gens []*dataset.PatternGenerator
			if explicit != nil {
				patterns, gens = [][]dataset.Link{explicit}, []*dataset.PatternGenerator{nil}
			} else {
				ns := nodeList
				if ns == nil {
					for r := 0; r < c.Size(); r++ {
						ns = append(ns, r)
					}
				}
				for i := 0; i < count; i++ {
					g := &dataset.PatternGenerator{Nodes: ns, D: random, P: prob, Seed: seed + uint64(i)}
					l, err := probe.RandomPattern(*g)
					if err != nil {
						return err
					}
					patterns, gens = append(patterns, l), append(gens, g)
				}
			}
			if c.Rank() == 0 {
				d, err := cf.openDataset(cf.worldDesc(c.Size()))
				if err != nil {
					return err
				}
				ds = d
				if ds.Patterns == nil || !sameParams(ds.Patterns.Params, params) {
					ds.Patterns = &dataset.PatternSection{Params: params}
				}
			}
			for i, l := range patterns {
				if len(l) == 0 {
					continue // a random draw may include no link
				}
				res, err := probe.RunPattern(ctx, c, l, params)
				if err != nil {
					return err
				}
				if res != nil {
					res.Generator = gens[i]
					ds.Patterns.Patterns = append(ds.Patterns.Patterns, *res)
					if err := ds.Save(out); err != nil {
						return err
					}
					pr.update(i+1, len(patterns))
				}
			}
			if c.Rank() == 0 {
				return ds.Save(out)
			}
			return nil
		})
		pr.finish()
		if err != nil || ds == nil {
			return err
		}
		if jsonOut {
			return probeWriteJSON(cmd.OutOrStdout(), ds.Patterns)
		}
		w := cmd.OutOrStdout()
		fmt.Fprintf(w, "probe pattern: %d patterns on %s (%d ranks); dataset %s\n", len(ds.Patterns.Patterns), info.Kind, ds.World.Size, out)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "pattern\tlink\tmean\t95% CI +-\titerations\tconverged\t")
		for i, p := range ds.Patterns.Patterns {
			for j, l := range p.Links {
				fmt.Fprintf(tw, "%d\t%d>%d\t%s\t%s\t%d\t%v\t\n", i, l.Src, l.Dst, platform.FormatTime(p.Times[j].Mean),
					platform.FormatTime(p.CI95HalfS[j]), p.Iterations, p.Converged)
			}
		}
		return tw.Flush()
	}
	return cmd
}

func sameParams(a, b dataset.PatternParams) bool { return a == b }

// parseLinks parses "0>1,2>1" (nil for "").
func parseLinks(s string) ([]dataset.Link, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []dataset.Link
	for _, part := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(part), ">")
		x, err1 := strconv.Atoi(strings.TrimSpace(a))
		y, err2 := strconv.Atoi(strings.TrimSpace(b))
		if !ok || err1 != nil || err2 != nil || x < 0 || y < 0 || x == y {
			return nil, fmt.Errorf("bad link %q (want src>dst)", part)
		}
		out = append(out, dataset.Link{Src: x, Dst: y})
	}
	return out, nil
}

func newIdentityProbeCmd() *cobra.Command {
	var out string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "identity",
		Short: "Host name, core and socket of every rank",
		Long: `identity gathers what every rank knows about where it runs (host, core, socket,
pid) to rank 0, prints it and stores it in the dataset's ranks (with --out).

Example:
  netaware launch -n 4 -- netaware probe identity --out dataset.json`,
		Args: cobra.NoArgs,
	}
	wf := addWorldFlags(cmd)
	cmd.Flags().StringVar(&out, "out", "", "also store the identities in this dataset")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		var ids []comm.Identity
		cf := &campaignFlags{wf: wf, out: out}
		_, err := runWorld(cmd.Context(), wf, func(ctx context.Context, c comm.Comm) error {
			all, err := comm.GatherIdentities(ctx, c)
			if err != nil {
				return err
			}
			if c.Rank() != 0 {
				return nil
			}
			ids = all
			if out == "" {
				return nil
			}
			ds, err := cf.openDataset(cf.worldDesc(c.Size()))
			if err != nil {
				return err
			}
			ds.Ranks = all
			return ds.Save(out)
		})
		if err != nil || ids == nil {
			return err
		}
		if jsonOut {
			return probeWriteJSON(cmd.OutOrStdout(), ids)
		}
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "rank\thost\tsocket\tcore\tpid\t")
		for _, id := range ids {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t\n", id.Rank, id.Host, optInt(id.Socket), optInt(id.Core), id.PID)
		}
		if err := tw.Flush(); err != nil || out == "" {
			return err
		}
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "wrote the identities into %s\n", out)
		return err
	}
	return cmd
}

func optInt(v int) string {
	if v < 0 {
		return "-"
	}
	return strconv.Itoa(v)
}

func probeWriteJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
