package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"netaware/comm"
	"netaware/dataset"
	"netaware/longhaul"
	"netaware/platform"
	"netaware/topo"
	"netaware/units"
)

func init() {
	register(newLonghaulCmd)
	register(newAdviseCmd)
}

// longhaulOptions are 'netaware longhaul”s options.
type longhaulOptions struct {
	streams
	world            *worldFlags
	sizeStr, helpers string
	asJSON           bool
	measure          longhaul.MeasureOptions
}

func newLonghaulOptions() *longhaulOptions {
	m := longhaul.DefaultMeasureOptions()
	return &longhaulOptions{measure: m, sizeStr: units.FormatSize(int64(m.Size)), helpers: formatInts(m.Helpers)}
}

func newLonghaulCmd() *cobra.Command {
	o := newLonghaulOptions()
	cmd := &cobra.Command{
		Use:   "longhaul",
		Short: "Send one large message across a long link through helper ranks (seed 000 Sect. 3.2) and measure the gain",
		Long: `longhaul measures seed 000's long-haul point-to-point transfer (Sect.
3.2.1): the message is split over the sender, h helper ranks on its side
and h on the receiver's side (2h+1 pieces, the seed's n-1 with n = 2h+2
processes), in two phases: a linear scatter from the sender (non-blocking
sends), then a linear gather at the receiver (non-blocking receives). Each
piece crosses the long link on a connection of its own, so the TCP window
acknowledgements and rendezvous handshakes of the pieces overlap.

It measures the round trip t_c from --src and --dst to every rank (helpers
are the ranks nearest each end), the transfer with 0 helpers (one stream),
1 and each count of --helpers, fits Eq. 3.2's beta and m_c to the 0- and
1-helper times, and prints which helper count Eq. 3.2 picks next to the
measured times. The simulator's TCP window is the platform's
tcp.window_bytes (docs/platform-format.md); its eager threshold is 64 KiB.
See docs/longhaul.md; 'netaware advise' gives the settings that make
helpers unnecessary.`,
		Example: `  netaware platform show grid5000-4sites --source | sed 's/tcp: {crosstraffic: 0.05}/tcp: {crosstraffic: 0.05, window_bytes: 128KiB}/' > g5k-window.yaml
  netaware longhaul --platform g5k-window.yaml --src 0 --dst 32 --size 8MiB --helpers 1,2,3,5 --reps 1`,
		Args: cobra.NoArgs,
		RunE: runOptions(o),
	}
	o.world = addWorldFlags(cmd)
	f := cmd.Flags()
	f.IntVar(&o.measure.Src, "src", o.measure.Src, "sending rank")
	f.IntVar(&o.measure.Dst, "dst", o.measure.Dst, "receiving rank (default: size/2)")
	f.StringVar(&o.sizeStr, "size", o.sizeStr, "message size")
	f.StringVar(&o.helpers, "helpers", o.helpers, "helpers per side to measure (0 and 1 are always measured)")
	f.IntVar(&o.measure.Reps, "reps", o.measure.Reps, "transfers per helper count (the median is kept)")
	f.Float64Var(&o.measure.Tol, "tol", o.measure.Tol, "Eq. 3.2 picks the fewest helpers within this fraction of its best prediction")
	f.BoolVar(&o.asJSON, "json", o.asJSON, "print the report as JSON instead of a table")
	return cmd
}

func (o *longhaulOptions) validate() error {
	size, err := parseSize("size", o.sizeStr)
	if err != nil {
		return err
	}
	if size < 1 {
		return usagef("--size %q: want at least 1 byte", o.sizeStr)
	}
	o.measure.Size = size
	o.measure.Helpers = nil
	for _, s := range strings.Split(o.helpers, ",") {
		h, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || h < 0 {
			return usagef("--helpers %q: want counts like 1,2,3,5", o.helpers)
		}
		o.measure.Helpers = append(o.measure.Helpers, h)
	}
	if o.measure.Reps < 1 {
		return usagef("--reps %d: want 1 or more", o.measure.Reps)
	}
	if !(o.measure.Tol >= 0) {
		return usagef("--tol %g: want >= 0", o.measure.Tol)
	}
	return nil
}

func (o *longhaulOptions) run(ctx context.Context) error {
	var rep *longhaul.Report
	info, err := runWorld(ctx, o.world, func(ctx context.Context, c comm.Comm) error {
		m := o.measure
		if m.Dst < 0 {
			m.Dst = c.Size() / 2
		}
		r, err := longhaul.Measure(ctx, c, m)
		if r != nil {
			rep = r
		}
		return err
	})
	if err != nil {
		return err
	}
	if rep == nil {
		return nil // a TCP world: the sender's process prints
	}
	if o.asJSON {
		return probeWriteJSON(o.out, rep)
	}
	printLonghaul(o.out, info, rep)
	return nil
}

// formatInts prints 1,2,3,5.
func formatInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func printLonghaul(w io.Writer, info worldInfo, r *longhaul.Report) {
	world := info.Kind
	if info.Platform != "" {
		world += " " + info.Platform
	}
	fmt.Fprintf(w, "longhaul %s: %s from rank %d to rank %d (%s)\n", world, units.FormatSize(int64(r.Size)), r.Src, r.Dst, fmtWorldTime(info))
	fmt.Fprintf(w, "helpers: sender's side %v, receiver's side %v\n", r.SrcSide, r.DstSide)
	md := r.Model
	mc := "unbounded"
	if md.Mc > 0 {
		mc = units.FormatSize(int64(math.Round(md.Mc)))
	}
	fmt.Fprintf(w, "Eq. 3.2 fitted to 0 and 1 helpers: t_c %s, m_c %s, alpha %s, beta %s/MB\n",
		units.FormatTime(md.Tc), mc, units.FormatTime(md.Alpha), units.FormatTime(md.Beta*1e6))
	if r.Note != "" {
		fmt.Fprintf(w, "note: %s\n", r.Note)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HELPERS/SIDE\tPIECES\tMEASURED\tSPEED-UP\tEQ. 3.2")
	for _, row := range r.Rows {
		mark := ""
		if row.HelpersPerSide == r.Chosen {
			mark = "  <- Eq. 3.2"
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%.2f\t%s%s\n", row.HelpersPerSide, row.Pieces, units.FormatTime(row.Seconds), row.Speedup, units.FormatTime(row.PredictedS), mark)
	}
	tw.Flush()
	fmt.Fprintf(w, "Eq. 3.2 picks %d helpers per side; the best measured is %d; the pick is %.1f%% slower than the best\n",
		r.Chosen, r.Best, 100*r.ChosenLoss)
}

func fmtWorldTime(info worldInfo) string {
	if info.Kind == "sim" {
		return "virtual time " + info.VirtualTime.String()
	}
	return fmt.Sprintf("%d ranks", info.Size)
}

// adviseOptions are 'netaware advise”s options.
type adviseOptions struct {
	streams
	platform, dataset, topology, eagerStr, windowStr string
	share                                            float64
	asJSON                                           bool
	eager, window                                    int
}

func newAdviseOptions() *adviseOptions {
	return &adviseOptions{share: longhaul.DefaultSyncShare, eagerStr: units.FormatSize(longhaul.DefaultMinEager)}
}

func newAdviseCmd() *cobra.Command {
	o := newAdviseOptions()
	cmd := &cobra.Command{
		Use:   "advise",
		Short: "TCP window and eager threshold per group pair that remove the synchronisation cost of long links",
		Long: `advise gives, for every pair of groups (sites, racks) and inside each group,
the bandwidth-delay product and the settings that let one stream fill the
path without waiting (seed 000 Sect. 3.2, the reconfiguration of its
reference [49]):

  TCP window       at least the BDP (rounded up to a power of two): the
                   sender never waits for an acknowledgement
  eager threshold  BDP / --sync-share: a larger message pays one rendezvous
                   round trip, at most that share of its transfer time;
                   never below --eager-min (the receiver must be able to
                   buffer messages up to it)
  pieces           with the window as it is (--window), how many pieces a
                   'netaware longhaul' transfer needs in flight instead

and prints them as Open MPI MCA parameters, MPICH control variables and the
Linux sysctls that allow such windows.

Paths come from a simulated platform (--platform: routes between the first
ranks of the groups of its coarsest ground-truth level) or from a dataset
with rtt and bandwidth sections (--dataset, medians over the rank pairs of
each pair of groups of --topology's coarsest level with two or more groups).`,
		Example: `  netaware advise --platform grid5000-4sites
  netaware advise --platform grid5000-4sites --window 128KiB --json`,
		Args: cobra.NoArgs,
		RunE: runOptions(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.platform, "platform", "", "simulated platform (built-in name or platform.yaml)")
	f.StringVar(&o.dataset, "dataset", "", "measured dataset with rtt and bandwidth sections (netaware probe rtt, probe bandwidth)")
	f.StringVar(&o.topology, "topology", "", "with --dataset: topology.json whose groups are paired")
	f.Float64Var(&o.share, "sync-share", o.share, "largest share of a rendezvous message's time its extra round trip may cost")
	f.StringVar(&o.eagerStr, "eager-min", o.eagerStr, "never advise an eager threshold below this (the MPI library's default)")
	f.StringVar(&o.windowStr, "window", "", "the TCP window in use (default: the platform's tcp.window_bytes; none: no pieces column)")
	f.BoolVar(&o.asJSON, "json", o.asJSON, "print JSON instead of text")
	return cmd
}

func (o *adviseOptions) validate() error {
	var err error
	if o.eager, err = parseSize("eager-min", o.eagerStr); err != nil {
		return err
	}
	if o.windowStr != "" {
		if o.window, err = parseSize("window", o.windowStr); err != nil {
			return err
		}
	}
	switch {
	case o.platform != "" && o.dataset != "":
		return usagef("--platform and --dataset are exclusive")
	case o.dataset != "" && o.topology == "":
		return usagef("--dataset needs --topology (the groups to pair)")
	case o.platform == "" && o.dataset == "":
		return usagef("give --platform NAME|FILE or --dataset FILE --topology FILE")
	}
	return nil
}

func (o *adviseOptions) run(context.Context) error {
	paths, window, err := o.paths()
	if err != nil {
		return err
	}
	adv, err := longhaul.Advise(paths, o.share, int64(o.eager), int64(window))
	if err != nil {
		return usagef("%v", err)
	}
	win, eag := longhaul.Largest(adv)
	out := adviseOutput{Paths: adv, Window: win, Eager: eag,
		OpenMPI: longhaul.OpenMPISettings(win, eag), MPICH: longhaul.MPICHSettings(eag), Linux: longhaul.LinuxSettings(win)}
	if o.asJSON {
		return probeWriteJSON(o.out, out)
	}
	printAdvice(o.out, out)
	return nil
}

// paths reads the paths to advise on and the TCP window in use.
func (o *adviseOptions) paths() ([]longhaul.Path, int, error) {
	if o.platform != "" {
		p, err := platform.Load(o.platform)
		if err != nil {
			return nil, 0, usagef("--platform: %v", err)
		}
		window := o.window
		if o.windowStr == "" {
			window = int(p.TCP().WindowBytes)
		}
		return longhaul.PlatformPaths(p), window, nil
	}
	ds, err := dataset.Load(o.dataset)
	if err != nil {
		return nil, 0, err
	}
	t, err := topo.ReadFile(o.topology)
	if err != nil {
		return nil, 0, err
	}
	paths, err := longhaul.DatasetPaths(ds, t)
	if err != nil {
		return nil, 0, fmt.Errorf("%s with %s: %w", o.dataset, o.topology, err)
	}
	return paths, o.window, nil
}

// adviseOutput is what 'advise' prints (its --json output).
type adviseOutput struct {
	Paths   []longhaul.Advice `json:"paths"`
	Window  int64             `json:"tcp_window_bytes"`
	Eager   int64             `json:"eager_threshold_bytes"`
	OpenMPI []string          `json:"openmpi_mca"`
	MPICH   []string          `json:"mpich_cvars"`
	Linux   []string          `json:"linux_sysctl"`
}

func printAdvice(w io.Writer, o adviseOutput) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tBANDWIDTH\tRTT\tBDP\tTCP WINDOW\tEAGER\tPIECES AT CURRENT WINDOW")
	for _, a := range o.Paths {
		pieces := "-"
		if a.CurrentWindow > 0 {
			pieces = fmt.Sprintf("%d (%d helpers/side at %s)", a.Pieces, a.HelpersPerSide, units.FormatSize(a.CurrentWindow))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Name, platform.FormatBandwidth(a.Bandwidth), units.FormatTime(a.RTT),
			units.FormatDecimalBytes(a.BDP), units.FormatSize(a.Window), units.FormatSize(a.Eager), pieces)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nfor every path: TCP window %s, eager threshold %s\n", units.FormatSize(o.Window), units.FormatSize(o.Eager))
	fmt.Fprintln(w, "Open MPI (mpirun --mca NAME VALUE, or OMPI_MCA_NAME=VALUE):")
	for _, s := range o.OpenMPI {
		name, val, _ := strings.Cut(s, "=")
		fmt.Fprintf(w, "  --mca %s %s\n", name, val)
	}
	fmt.Fprintln(w, "MPICH (environment):")
	for _, s := range o.MPICH {
		fmt.Fprintf(w, "  %s\n", s)
	}
	fmt.Fprintln(w, "Linux (sysctl -w, as root, on every host):")
	for _, s := range o.Linux {
		name, val, _ := strings.Cut(s, "=")
		fmt.Fprintf(w, "  %s=\"%s\"\n", name, val)
	}
}
