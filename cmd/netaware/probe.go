package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
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
	"netaware/units"
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
  netaware probe identity --local 4
  netaware probe swarm --platform bordeaux-2013 --size 2MiB --iterations 2 --out swarm.json`,
	}
	for _, kind := range []string{"rtt", "plogp", "hockney", "bandwidth"} {
		cmd.AddCommand(newPairProbeCmd(kind))
	}
	cmd.AddCommand(newPatternProbeCmd(), newIdentityProbeCmd(), newSwarmProbeCmd())
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

// parseRankList reads a --ranks/--nodes list ("0-7,12"; nil for "") as
// ascending distinct ranks. An empty item (",", "1,,2") is refused, which
// topo.ParseRanks, made for hand-written files, lets pass.
func parseRankList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			return nil, fmt.Errorf("rank list %q: bad rank: an empty item", s)
		}
	}
	out, err := topo.ParseRanks(s)
	if err != nil {
		return nil, fmt.Errorf("rank list %q: %v", s, err)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
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
	spec, err := probe.NewSchedule(probe.ScheduleRequest{Mode: cf.schedule, Ranks: ranks, Levels: levels, Join: cf.join,
		Fraction: cf.fraction, Seed: cf.fastSeed, Parallel: cf.parallel})
	if err != nil {
		return spec, fmt.Errorf("--schedule %s: %w", cf.schedule, err)
	}
	return spec, nil
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
// often than every 20 times what a write takes, so that writing costs at
// most 5% of the run: a 4,096-rank discovery's dataset takes half a second
// to write, and written every 5 s of a loaded machine's wall time it was a
// tenth of the PLogP phase's CPU), and always at the end.
type checkpointer struct {
	path     string
	interval time.Duration
	last     time.Time
	cost     time.Duration
}

func (k *checkpointer) save(ds *dataset.Dataset, final bool) error {
	now := time.Now()
	if !final && (now.Sub(k.last) < k.interval || now.Sub(k.last) < 20*k.cost) {
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

// pairProbeOptions are the options of 'netaware probe rtt', 'plogp',
// 'hockney' and 'bandwidth'; each kind reads its own flags.
type pairProbeOptions struct {
	streams
	kind     string
	campaign *campaignFlags
	// size flags, read in validate
	maxSize, minSize, size, satMaxSize string
	reps, satMax, satStart, extra      int
	rtt                                dataset.RTTParams
	k, eps, midpointEps                float64
	ssend, keep                        bool
	// from the flags
	cp     *probe.Campaign
	levels []topo.Level
}

// newPairProbeOptions takes each kind's defaults from its parameters'
// WithDefaults.
func newPairProbeOptions(kind string) *pairProbeOptions {
	o := &pairProbeOptions{kind: kind, rtt: dataset.RTTParams{}.WithDefaults()}
	switch kind {
	case "plogp":
		p := dataset.PLogPParams{}.WithDefaults()
		o.maxSize, o.reps, o.k, o.eps, o.satStart, o.satMax = units.FormatSize(int64(p.MaxBytes)), p.Reps, p.K, p.Eps, p.SatStart, p.SatMax
		o.satMaxSize, o.midpointEps, o.extra = units.FormatSize(int64(p.SatMaxBytes)), p.MidpointEps, p.MaxExtra
	case "hockney":
		p := dataset.HockneyParams{}.WithDefaults()
		o.minSize, o.maxSize, o.reps = strconv.Itoa(p.MinBytes), units.FormatSize(int64(p.MaxBytes)), p.Reps
	case "bandwidth":
		p := dataset.BandwidthParams{}.WithDefaults()
		o.size, o.reps = units.FormatSize(int64(p.Bytes)), p.Reps
	}
	return o
}

func newPairProbeCmd(kind string) *cobra.Command {
	o := newPairProbeOptions(kind)
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
		RunE: runOptions(o),
	}
	o.campaign = addCampaignFlags(cmd)
	f := cmd.Flags()
	switch kind {
	case "rtt":
		f.IntVar(&o.rtt.Bytes, "bytes", o.rtt.Bytes, "ping and pong size")
		f.IntVar(&o.rtt.MaxExchanges, "max-exchanges", o.rtt.MaxExchanges, "ping-pongs per round at most")
		f.IntVar(&o.rtt.Stale, "stale", o.rtt.Stale, "end a round after this many ping-pongs without a new best")
		f.IntVar(&o.rtt.Rounds, "rounds", o.rtt.Rounds, "rounds per pair")
		f.BoolVar(&o.keep, "keep-samples", false, "store every ping-pong's RTT in the dataset, not only the rounds' bests")
	case "plogp":
		f.StringVar(&o.maxSize, "max-size", o.maxSize, "largest message size M (sizes 0 and 2^i up to M)")
		f.IntVar(&o.reps, "reps", o.reps, "repetitions R of every timed operation")
		f.Float64Var(&o.k, "k", o.k, "o_r: spin k times the expected round trip before the timed receive")
		f.Float64Var(&o.eps, "eps", o.eps, "saturation: stop when the time per message moves by at most eps (relative)")
		f.IntVar(&o.satStart, "sat-start", o.satStart, "saturation: first batch size")
		f.IntVar(&o.satMax, "sat-max", o.satMax, "saturation: largest batch size")
		f.StringVar(&o.satMaxSize, "sat-max-size", o.satMaxSize, "g(m) by saturation up to this size, by Eq. 3.1 above ('none': only g(0))")
		f.Float64Var(&o.midpointEps, "midpoint-eps", o.midpointEps, "measure midpoints where RTT(m) misses the interpolation by more than this (relative)")
		f.IntVar(&o.extra, "max-extra", o.extra, "extra (midpoint) sizes per pair at most (-1: unbounded)")
		f.BoolVar(&o.ssend, "ssend", false, "time a synchronous send for o_s (default: a standard send, as seed 003 Fig. 3.6)")
		f.BoolVar(&o.keep, "keep-samples", false, "store every repetition in the dataset")
	case "hockney":
		f.StringVar(&o.minSize, "min-size", o.minSize, "smallest non-zero size")
		f.StringVar(&o.maxSize, "max-size", o.maxSize, "largest size")
		f.IntVar(&o.reps, "reps", o.reps, "ping-pongs per size")
		f.BoolVar(&o.keep, "keep-samples", false, "store every repetition in the dataset")
	case "bandwidth":
		f.StringVar(&o.size, "size", o.size, "bytes per bulk transfer")
		f.IntVar(&o.reps, "reps", o.reps, "transfers per pair")
	}
	return cmd
}

func (o *pairProbeOptions) validate() error {
	cf := o.campaign
	cp := &probe.Campaign{Kind: o.kind, Resume: cf.resume, NoClockCorrection: cf.noClock}
	var err error
	if cp.Sync, err = probe.ParseSync(cf.sync); err != nil {
		return usagef("--sync: %v", err)
	}
	switch o.kind {
	case "rtt":
		r := o.rtt
		if r.Bytes < 1 || r.MaxExchanges < 1 || r.Stale < 1 || r.Rounds < 1 {
			return usagef("--bytes, --max-exchanges, --stale and --rounds must be >= 1")
		}
		cp.RTT = dataset.RTTParams{Bytes: r.Bytes, MaxExchanges: r.MaxExchanges, Stale: r.Stale, Rounds: r.Rounds, KeepSamples: o.keep}
	case "plogp":
		m, err := parseSize("max-size", o.maxSize)
		if err != nil {
			return err
		}
		sm := -1
		if o.satMaxSize != "none" {
			if sm, err = parseSize("sat-max-size", o.satMaxSize); err != nil {
				return err
			}
			if sm == 0 {
				sm = -1
			}
		}
		if o.reps < 1 || o.satStart < 1 || o.satMax < o.satStart || o.k < 1 || o.eps <= 0 || o.midpointEps <= 0 || m < 1 {
			return usagef("plogp: want --reps >= 1, 1 <= --sat-start <= --sat-max, --k >= 1, --eps > 0, --midpoint-eps > 0, --max-size >= 1")
		}
		extra := o.extra
		if extra == 0 {
			extra = -2 // no extra sizes; -1 means unbounded
		}
		cp.PLogP = dataset.PLogPParams{MaxBytes: m, Reps: o.reps, K: o.k, Eps: o.eps, SatStart: o.satStart, SatMax: o.satMax,
			SatMaxBytes: sm, MidpointEps: o.midpointEps, MaxExtra: extra, Ssend: o.ssend, KeepSamples: o.keep}
	case "hockney":
		lo, err := parseSize("min-size", o.minSize)
		if err != nil {
			return err
		}
		hi, err := parseSize("max-size", o.maxSize)
		if err != nil {
			return err
		}
		if o.reps < 1 || hi < 1 || lo > hi {
			return usagef("hockney: want --reps >= 1 and 1 <= --min-size <= --max-size")
		}
		cp.Hockney = dataset.HockneyParams{MinBytes: lo, MaxBytes: hi, Reps: o.reps, KeepSamples: o.keep}
	case "bandwidth":
		b, err := parseSize("size", o.size)
		if err != nil {
			return err
		}
		if o.reps < 1 || b < 1 {
			return usagef("bandwidth: want --reps >= 1 and --size >= 1")
		}
		cp.Bandwidth = dataset.BandwidthParams{Bytes: b, Reps: o.reps}
	}
	if rs, err := parseRankList(cf.ranks); err != nil {
		return usagef("--ranks: %v", err)
	} else if rs != nil && len(rs) < 2 {
		return usagef("--ranks %q: one rank makes no pair: give at least two", cf.ranks)
	}
	if o.levels, err = cf.levels(); err != nil {
		return err
	}
	o.cp = cp
	return nil
}

func (o *pairProbeOptions) run(ctx context.Context) error {
	cf := o.campaign
	var ds *dataset.Dataset
	wallStart := time.Now()
	info, err := runWorld(ctx, cf.wf, func(ctx context.Context, c comm.Comm) error {
		spec, err := cf.spec(c.Size(), o.levels)
		if err != nil {
			return err
		}
		cp := *o.cp
		cp.Schedule = spec
		if c.Rank() != 0 {
			return cp.Run(ctx, c, nil, probe.RunHooks{})
		}
		d, err := cf.openDataset(cf.worldDesc(c.Size()))
		if err != nil {
			return err
		}
		ds = d
		pr := &progressReporter{w: o.errOut, quiet: o.quiet, start: time.Now(), desc: "probe " + cp.Kind}
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
	warnImplausible(o.errOut, ds, cf.out)
	return printCampaign(o.out, cf, o.kind, ds, info, time.Since(wallStart))
}

// maxWarnings bounds the implausible values listed on stderr; the dataset
// marks all of them. Three show the kind of problem; ten buried a 6-rank
// discovery's summary on a loaded machine.
const maxWarnings = 3

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

// patternProbeOptions are 'netaware probe pattern”s options.
type patternProbeOptions struct {
	streams
	world                       *worldFlags
	links, nodes, size, outFile string
	random, count               int
	prob                        float64
	seed                        uint64
	params                      dataset.PatternParams
	asJSON                      bool
	// from the flags
	explicit []dataset.Link
	nodeList []int
}

func newPatternProbeOptions() *patternProbeOptions {
	p := dataset.PatternParams{}.WithDefaults()
	return &patternProbeOptions{prob: 0.5, seed: 1, count: 1, size: units.FormatSize(int64(p.Bytes)), outFile: "dataset.json",
		params: dataset.PatternParams{MaxIter: p.MaxIter, CIWidth: p.CIWidth}}
}

func newPatternProbeCmd() *cobra.Command {
	o := newPatternProbeOptions()
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
		RunE: runOptions(o),
	}
	o.world = addWorldFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.links, "links", "", "explicit pattern: src>dst pairs, comma separated, e.g. 0>1,2>1")
	f.StringVar(&o.nodes, "nodes", "", "random patterns: the nodes (ranks), e.g. 0-9 (default: all)")
	f.IntVar(&o.random, "random", 0, "random patterns: draws d per node")
	f.Float64Var(&o.prob, "p", o.prob, "random patterns: inclusion probability")
	f.Uint64Var(&o.seed, "pattern-seed", o.seed, "random patterns: seed of the first pattern (pattern i uses seed+i)")
	f.IntVar(&o.count, "count", o.count, "random patterns: how many")
	f.StringVar(&o.size, "size", o.size, "bytes per message")
	f.IntVar(&o.params.MaxIter, "max-iter", o.params.MaxIter, "iterations at most")
	f.Float64Var(&o.params.CIWidth, "ci", o.params.CIWidth, "stop when every link's 95% CI width is within this fraction of its mean")
	f.StringVar(&o.outFile, "out", o.outFile, "dataset file (patterns are appended)")
	f.BoolVar(&o.asJSON, "json", false, "print the results as JSON")
	return cmd
}

func (o *patternProbeOptions) validate() error {
	b, err := parseSize("size", o.size)
	if err != nil {
		return err
	}
	o.params.Bytes = b
	if o.params.MaxIter < 2 || o.params.CIWidth <= 0 || b < 1 {
		return usagef("pattern: want --max-iter >= 2, --ci > 0, --size >= 1")
	}
	if o.explicit, err = parseLinks(o.links); err != nil {
		return usagef("--links: %v", err)
	}
	if (o.explicit == nil) == (o.random == 0) {
		return usagef("pattern: give exactly one of --links and --random")
	}
	if o.nodeList, err = parseRankList(o.nodes); err != nil {
		return usagef("--nodes: %v", err)
	}
	if o.nodeList != nil && len(o.nodeList) < 2 {
		return usagef("--nodes %q: one node has no link to draw: give at least two", o.nodes)
	}
	return nil
}

// patterns are the links of every pattern to measure on a world of size
// ranks, and how each was drawn (nil for --links).
func (o *patternProbeOptions) patterns(size int) ([][]dataset.Link, []*dataset.PatternGenerator, error) {
	if o.explicit != nil {
		return [][]dataset.Link{o.explicit}, []*dataset.PatternGenerator{nil}, nil
	}
	ns := o.nodeList
	if ns == nil {
		for r := 0; r < size; r++ {
			ns = append(ns, r)
		}
	}
	var patterns [][]dataset.Link
	var gens []*dataset.PatternGenerator
	for i := 0; i < o.count; i++ {
		g := &dataset.PatternGenerator{Nodes: ns, D: o.random, P: o.prob, Seed: o.seed + uint64(i)}
		l, err := probe.RandomPattern(*g)
		if err != nil {
			return nil, nil, err
		}
		patterns, gens = append(patterns, l), append(gens, g)
	}
	return patterns, gens, nil
}

func (o *patternProbeOptions) run(ctx context.Context) error {
	cf := &campaignFlags{wf: o.world, out: o.outFile}
	var ds *dataset.Dataset
	pr := &progressReporter{w: o.errOut, quiet: o.quiet, start: time.Now(), desc: "probe pattern"}
	defer pr.finish()
	info, err := runWorld(ctx, o.world, func(ctx context.Context, c comm.Comm) error {
		patterns, gens, err := o.patterns(c.Size())
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			d, err := cf.openDataset(cf.worldDesc(c.Size()))
			if err != nil {
				return err
			}
			ds = d
			if ds.Patterns == nil || ds.Patterns.Params != o.params {
				ds.Patterns = &dataset.PatternSection{Params: o.params}
			}
		}
		for i, l := range patterns {
			if len(l) == 0 {
				continue // a random draw may include no link
			}
			res, err := probe.RunPattern(ctx, c, l, o.params)
			if err != nil {
				return err
			}
			if res != nil {
				res.Generator = gens[i]
				ds.Patterns.Patterns = append(ds.Patterns.Patterns, *res)
				if err := ds.Save(o.outFile); err != nil {
					return err
				}
				pr.update(i+1, len(patterns))
			}
		}
		if c.Rank() == 0 {
			return ds.Save(o.outFile)
		}
		return nil
	})
	pr.finish()
	if err != nil || ds == nil {
		return err
	}
	if o.asJSON {
		return probeWriteJSON(o.out, ds.Patterns)
	}
	w := o.out
	fmt.Fprintf(w, "probe pattern: %d patterns on %s (%d ranks); dataset %s\n", len(ds.Patterns.Patterns), info.Kind, ds.World.Size, o.outFile)
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

// identityProbeOptions are 'netaware probe identity”s options.
type identityProbeOptions struct {
	streams
	world   *worldFlags
	outFile string
	asJSON  bool
}

func newIdentityProbeCmd() *cobra.Command {
	o := &identityProbeOptions{}
	cmd := &cobra.Command{
		Use:   "identity",
		Short: "Host name, core and socket of every rank",
		Long: `identity gathers what every rank knows about where it runs (host, core, socket,
pid) to rank 0, prints it and stores it in the dataset's ranks (with --out).

Example:
  netaware launch -n 4 -- netaware probe identity --out dataset.json`,
		Args: cobra.NoArgs,
		RunE: runOptions(o),
	}
	o.world = addWorldFlags(cmd)
	cmd.Flags().StringVar(&o.outFile, "out", "", "also store the identities in this dataset")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

func (o *identityProbeOptions) validate() error { return nil }

func (o *identityProbeOptions) run(ctx context.Context) error {
	var ids []comm.Identity
	cf := &campaignFlags{wf: o.world, out: o.outFile}
	_, err := runWorld(ctx, o.world, func(ctx context.Context, c comm.Comm) error {
		all, err := comm.GatherIdentities(ctx, c)
		if err != nil {
			return err
		}
		if c.Rank() != 0 {
			return nil
		}
		ids = all
		if o.outFile == "" {
			return nil
		}
		ds, err := cf.openDataset(cf.worldDesc(c.Size()))
		if err != nil {
			return err
		}
		ds.Ranks = all
		return ds.Save(o.outFile)
	})
	if err != nil || ids == nil {
		return err
	}
	if o.asJSON {
		return probeWriteJSON(o.out, ids)
	}
	tw := tabwriter.NewWriter(o.out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\thost\tsocket\tcore\tpid\t")
	for _, id := range ids {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t\n", id.Rank, id.Host, optInt(id.Socket), optInt(id.Core), id.PID)
	}
	if err := tw.Flush(); err != nil || o.outFile == "" {
		return err
	}
	_, err = fmt.Fprintf(o.out, "wrote the identities into %s\n", o.outFile)
	return err
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
