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

func newLonghaulCmd() *cobra.Command {
	var (
		src, dst, reps int
		sizeStr, hs    string
		tol            float64
		asJSON         bool
	)
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
	}
	wf := addWorldFlags(cmd)
	f := cmd.Flags()
	f.IntVar(&src, "src", 0, "sending rank")
	f.IntVar(&dst, "dst", -1, "receiving rank (default: size/2)")
	f.StringVar(&sizeStr, "size", "64MiB", "message size")
	f.StringVar(&hs, "helpers", "1,2,3,5", "helpers per side to measure (0 and 1 are always measured)")
	f.IntVar(&reps, "reps", 3, "transfers per helper count (the median is kept)")
	f.Float64Var(&tol, "tol", 0.05, "Eq. 3.2 picks the fewest helpers within this fraction of its best prediction")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON instead of a table")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		size, err := parseSize("size", sizeStr)
		if err != nil {
			return err
		}
		if size < 1 {
			return usagef("--size %q: want at least 1 byte", sizeStr)
		}
		var helpers []int
		for _, s := range strings.Split(hs, ",") {
			h, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || h < 0 {
				return usagef("--helpers %q: want counts like 1,2,3,5", hs)
			}
			helpers = append(helpers, h)
		}
		if reps < 1 {
			return usagef("--reps %d: want 1 or more", reps)
		}
		if !(tol >= 0) {
			return usagef("--tol %g: want >= 0", tol)
		}
		var rep *longhaul.Report
		info, err := runWorld(cmd.Context(), wf, func(ctx context.Context, c comm.Comm) error {
			d := dst
			if d < 0 {
				d = c.Size() / 2
			}
			r, err := longhaul.Measure(ctx, c, longhaul.MeasureOptions{Src: src, Dst: d, Size: size, Helpers: helpers, Reps: reps, Tol: tol, Tag: 7100})
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
		if asJSON {
			return probeWriteJSON(cmd.OutOrStdout(), rep)
		}
		printLonghaul(cmd.OutOrStdout(), info, rep)
		return nil
	}
	return cmd
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

func newAdviseCmd() *cobra.Command {
	var (
		plat, dsFile, topoFile, eagerStr, windowStr string
		share                                       float64
		asJSON                                      bool
	)
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
	}
	f := cmd.Flags()
	f.StringVar(&plat, "platform", "", "simulated platform (built-in name or platform.yaml)")
	f.StringVar(&dsFile, "dataset", "", "measured dataset with rtt and bandwidth sections (netaware probe rtt, probe bandwidth)")
	f.StringVar(&topoFile, "topology", "", "with --dataset: topology.json whose groups are paired")
	f.Float64Var(&share, "sync-share", 0.5, "largest share of a rendezvous message's time its extra round trip may cost")
	f.StringVar(&eagerStr, "eager-min", "64KiB", "never advise an eager threshold below this (the MPI library's default)")
	f.StringVar(&windowStr, "window", "", "the TCP window in use (default: the platform's tcp.window_bytes; none: no pieces column)")
	f.BoolVar(&asJSON, "json", false, "print JSON instead of text")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		eager, err := parseSize("eager-min", eagerStr)
		if err != nil {
			return err
		}
		var window int
		if windowStr != "" {
			if window, err = parseSize("window", windowStr); err != nil {
				return err
			}
		}
		var paths []longhaul.Path
		switch {
		case plat != "" && dsFile != "":
			return usagef("--platform and --dataset are exclusive")
		case plat != "":
			p, err := platform.Load(plat)
			if err != nil {
				return usagef("--platform: %v", err)
			}
			if windowStr == "" {
				window = int(p.TCP().WindowBytes)
			}
			paths = longhaul.PlatformPaths(p)
		case dsFile != "":
			if topoFile == "" {
				return usagef("--dataset needs --topology (the groups to pair)")
			}
			if paths, err = datasetPaths(dsFile, topoFile); err != nil {
				return err
			}
		default:
			return usagef("give --platform NAME|FILE or --dataset FILE --topology FILE")
		}
		adv, err := longhaul.Advise(paths, share, int64(eager), int64(window))
		if err != nil {
			return usagef("%v", err)
		}
		win, eag := longhaul.Largest(adv)
		out := adviseOutput{Paths: adv, Window: win, Eager: eag,
			OpenMPI: longhaul.OpenMPISettings(win, eag), MPICH: longhaul.MPICHSettings(eag), Linux: longhaul.LinuxSettings(win)}
		if asJSON {
			return probeWriteJSON(cmd.OutOrStdout(), out)
		}
		printAdvice(cmd.OutOrStdout(), out)
		return nil
	}
	return cmd
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

// datasetPaths reads the group-pair paths of a measured dataset.
func datasetPaths(dsFile, topoFile string) ([]longhaul.Path, error) {
	ds, err := dataset.Load(dsFile)
	if err != nil {
		return nil, err
	}
	if ds.RTT == nil || ds.Bandwidth == nil {
		return nil, fmt.Errorf("%s: advise needs rtt and bandwidth sections (netaware probe rtt, netaware probe bandwidth)", dsFile)
	}
	t, err := topo.ReadFile(topoFile)
	if err != nil {
		return nil, err
	}
	if t.Size != ds.World.Size {
		return nil, fmt.Errorf("%s has %d ranks, %s %d", topoFile, t.Size, dsFile, ds.World.Size)
	}
	var groups [][]int
	for i := len(t.Levels) - 1; i >= 0; i-- {
		if len(t.Levels[i].Groups) >= 2 {
			groups = t.Levels[i].Groups
			break
		}
	}
	if groups == nil {
		return nil, fmt.Errorf("%s: no level with two or more groups", topoFile)
	}
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = fmt.Sprintf("group %d (rank %d..)", i, g[0])
		if g[0] < len(ds.Ranks) && ds.Ranks[g[0]].Host != "" {
			names[i] = ds.Ranks[g[0]].Host + ".."
		}
	}
	return longhaul.MeasuredPaths(ds.RTTMin(), ds.BandwidthMatrix(), groups, names), nil
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
