package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"netaware/emu"
	"netaware/platform"
	"netaware/topo"
	"netaware/units"
)

func init() { register(newEmuCmd) }

const noNetemMessage = `netem is not available in this kernel: links get their rates but not their latencies;
latency differences between hosts come only from forwarding hops (about 3 us per bridge).`

func newEmuCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "emu",
		Short: "Build a platform's network on this machine's kernel (namespaces, bridges, tbf) and run commands on it",
		Long: `emu builds the network of a platform file out of Linux network namespaces:
one namespace per host (with the platform's host name, in its own UTS
namespace), one Linux bridge per switch, veth pairs for host links and switch
links, each direction rate-limited with tbf (and delayed with netem where the
kernel has it). Commands then run on every rank over real kernel TCP, placed
as the platform's ranks section says. Needs root. See docs/emu.md.

Examples:
  netaware emu up emu/testdata/star-2x6.yaml --prefix e1
  netaware emu run e1 -- netaware discover --out /tmp/e1-out
  netaware emu run e1 --host a0 -- ping -c 3 10.67.0.7
  netaware emu status e1 --json
  netaware emu down e1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newEmuUpCmd(), newEmuRunCmd(), newEmuStatusCmd(), newEmuDownCmd(), newEmuRshAgentCmd())
	return cmd
}

// emuUpOptions are 'netaware emu up”s options.
type emuUpOptions struct {
	streams
	platform, prefix, burst string
	placement               *platformPlacementFlags
	opt                     emu.Options // built by validate
}

func newEmuUpCmd() *cobra.Command {
	o := &emuUpOptions{prefix: "emu"}
	cmd := &cobra.Command{
		Use:   "up PLATFORM [--prefix P]",
		Short: "Build the network of a platform (a file or a built-in name)",
		Long: `up builds the emulated network of PLATFORM (a platform file or a built-in
name, see 'netaware platform list'): namespaces PREFIX-h<i> for the hosts and
PREFIX-s<i> for the switches, addresses in one /16 derived from the prefix,
tbf rate limits on both ends of every link. It prints a summary and what to
run next. The cluster is recorded in /run/netaware-emu/PREFIX.json, so that
status, run and down work from any process. If a step fails, everything
built so far is removed.

Switch links that no route uses are left out (the bridges must form a
tree); a platform whose routes use a loop of switch links is refused.

Examples:
  netaware emu up emu/testdata/star-2x6.yaml --prefix e1
  netaware emu up emu/testdata/chain-3x4.yaml --prefix e2 --per-host 2 --order cyclic`,
		Args: cobra.ExactArgs(1),
		RunE: runOptions(o),
	}
	cmd.Flags().StringVar(&o.prefix, "prefix", o.prefix, fmt.Sprintf("names of the namespaces and veths (1-%d lowercase letters and digits)", emu.MaxPrefix))
	cmd.Flags().StringVar(&o.burst, "burst", "", "tbf bucket size of every link (default: 0.2 ms at the link's rate, at least 4KiB, at least 64KiB from 1.3 Gbit/s)")
	o.placement = addPlatformPlacementFlags(cmd)
	return cmd
}

func (o *emuUpOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.platform = args[0]
	return nil
}

func (o *emuUpOptions) validate() error {
	if err := emu.ValidPrefix(o.prefix); err != nil {
		return usagef("emu up: --prefix: %v", err)
	}
	o.opt = emu.Options{Prefix: o.prefix}
	if o.burst != "" {
		b, err := units.ParseSize(o.burst)
		if err != nil || b <= 0 {
			return usagef("emu up: --burst %q: want a positive size such as 64KiB", o.burst)
		}
		o.opt.Burst = b
	}
	return o.placement.validate()
}

func (o *emuUpOptions) run(ctx context.Context) error {
	p, err := platform.Load(o.platform)
	if err != nil {
		return err
	}
	if p, err = o.placement.apply(p); err != nil {
		return err
	}
	// Plan first, so that a platform emu cannot build is refused before
	// anything is created.
	if _, err := emu.NewPlan(p, o.opt); err != nil {
		return err
	}
	start := time.Now()
	last := start
	progress := func(done, total int) {
		if now := time.Now(); now.Sub(last) >= time.Second && now.Sub(start) >= 2*time.Second {
			last = now
			fmt.Fprintf(o.errOut, "emu up %s: %d of %d steps\n", o.prefix, done, total)
		}
	}
	c, err := emu.Up(ctx, p, o.opt, progress)
	if err != nil {
		return fmt.Errorf("emu up: %w", err)
	}
	emuSummary(o.out, c, time.Since(start))
	return nil
}

func emuSummary(w io.Writer, c *emu.Cluster, took time.Duration) {
	fmt.Fprintf(w, "cluster %s up in %.1f s: platform %s (%s), %d hosts, %d switches, %d links, %d ranks, subnet %s\n",
		c.Prefix, took.Seconds(), c.Platform, c.File, len(c.Hosts), len(c.Switches), len(c.Links), len(c.Ranks), c.Subnet)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\nhost\tswitch\taddress\tnamespace\tlink rate\tranks\n")
	for i, h := range c.Hosts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", h.Name, h.Switch, h.Address, h.Namespace,
			units.FormatBandwidth(c.Links[i].RateBps), topo.FormatRanks(h.Ranks))
	}
	tw.Flush()
	if len(c.Links) > len(c.Hosts) {
		fmt.Fprintf(tw, "\nswitch link\trate\tlatency\n")
		for _, l := range c.Links[len(c.Hosts):] {
			fmt.Fprintf(tw, "%s - %s\t%s\t%s\n", l.A, l.B, units.FormatBandwidth(l.RateBps), units.FormatTime(l.LatencyS))
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	if c.Netem {
		fmt.Fprintln(w, "netem available: every link also delays by its latency.")
	} else {
		fmt.Fprintln(w, noNetemMessage)
	}
	for _, m := range c.Warnings {
		fmt.Fprintln(w, "warning:", m)
	}
	fmt.Fprintf(w, `
next:
  netaware emu run %[1]s -- netaware discover --out /tmp/%[1]s-out
  netaware emu run %[1]s --host %[2]s -- hostname
  netaware emu status %[1]s --json
  netaware emu down %[1]s
`, c.Prefix, c.Hosts[0].Name)
}

// emuRunOptions are 'netaware emu run”s options.
type emuRunOptions struct {
	streams
	prefix, host, outDir string
	timeout              time.Duration
	port                 int
	live                 bool
	argv                 []string
	dashAt               int
}

func newEmuRunCmd() *cobra.Command {
	o := &emuRunOptions{}
	cmd := &cobra.Command{
		Use:   "run PREFIX [--host NAME] [--out-dir DIR] [--timeout D] -- COMMAND [ARGS...]",
		Short: "Run a command on every rank of an emulated cluster, or once on one host",
		Long: `run starts COMMAND once per rank of cluster PREFIX, each inside its host's
network and UTS namespaces, as one TCP world: NETAWARE_RANK, NETAWARE_SIZE,
NETAWARE_COORDINATOR (rank 0's address and a random port, or --port) and
NETAWARE_TOKEN (yours if set, otherwise a fresh one). COMMAND "netaware"
means this binary.

Each rank's output goes to DIR/RANK.out and DIR/RANK.err with --out-dir, and
is printed once all ranks have finished: as is when only one rank wrote
anything, otherwise each line prefixed "[rank] "; with --live, every line is
printed as it comes, prefixed. When a rank fails the
others are stopped and run exits 1 naming the rank; Ctrl-C, SIGTERM and
--timeout stop every rank (SIGINT, then SIGKILL 1.5 s later).

With --host, COMMAND runs once in that host (a name or an address), with
this terminal's input and output and no rank variables: a server, a shell,
a ping.

Examples:
  netaware emu run e1 -- hostname
  netaware emu run e1 --out-dir /tmp/e1-logs --timeout 2m -- netaware discover --out /tmp/e1-out
  netaware emu run e1 --host a0 -- iperf3 -s -1 -D
  netaware emu run e1 --host b3 -- iperf3 -c 10.67.0.1 -t 3`,
		Args: cobra.MinimumNArgs(2),
		RunE: runOptions(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.host, "host", "", "run COMMAND once in this host (name or address) instead of once per rank")
	f.StringVar(&o.outDir, "out-dir", "", "write each rank's output to DIR/RANK.out and DIR/RANK.err")
	f.DurationVar(&o.timeout, "timeout", 0, "stop the command(s) after this long (0: no limit)")
	f.IntVar(&o.port, "port", 0, "coordinator port on rank 0's host (default: random in 30000-49999)")
	f.BoolVar(&o.live, "live", false, "print output lines as they come, each prefixed \"[rank] \" (default: once the ranks have finished)")
	return cmd
}

func (o *emuRunOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.dashAt = cmd.ArgsLenAtDash()
	o.prefix, o.argv = args[0], args[1:]
	return nil
}

func (o *emuRunOptions) validate() error {
	if o.dashAt != 1 {
		return usagef("emu run: want PREFIX [flags] -- COMMAND [ARGS...] (see 'netaware emu run --help')")
	}
	return nil
}

func (o *emuRunOptions) run(ctx context.Context) error {
	c, err := emu.Load("", o.prefix)
	if err != nil {
		return err
	}
	if c.State != "up" {
		return fmt.Errorf("cluster %s is %s, not up (see 'netaware emu status %s')", c.Prefix, c.State, c.Prefix)
	}
	if o.host != "" {
		i, err := c.HostIndex(o.host)
		if err != nil {
			return usagef("emu run: --host: %v", err)
		}
		if o.timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, o.timeout)
			defer cancel()
		}
		x := c.Command(ctx, i, o.argv...)
		x.Stdin, x.Stdout, x.Stderr = os.Stdin, o.out, o.errOut
		if err := x.Run(); err != nil {
			return fmt.Errorf("emu run: host %s: %s: %w", c.Hosts[i].Name, o.argv[0], err)
		}
		return nil
	}
	err = c.Run(ctx, o.argv, emu.RunOptions{
		OutDir:  o.outDir,
		Stdout:  o.out,
		Stderr:  o.errOut,
		Port:    o.port,
		Timeout: o.timeout,
		Live:    o.live,
	})
	if err != nil {
		return fmt.Errorf("emu run %s: %w", c.Prefix, err)
	}
	return nil
}

// emuStatus is the JSON form of one cluster in 'emu status --json'.
type emuStatus struct {
	Prefix   string           `json:"prefix"`
	State    string           `json:"state"`
	Platform string           `json:"platform"`
	File     string           `json:"file"`
	Subnet   string           `json:"subnet"`
	Netem    bool             `json:"netem"`
	Hosts    []emu.HostPlan   `json:"hosts"`
	Switches []emu.SwitchPlan `json:"switches"`
	Links    []emu.LinkPlan   `json:"links"`
	Ranks    []int            `json:"ranks"` // rank -> index into hosts
	Missing  []string         `json:"missing,omitempty"`
}

// emuStatusOptions are 'netaware emu status”s options.
type emuStatusOptions struct {
	streams
	args             []string
	asJSON, mpiHosts bool
}

func newEmuStatusCmd() *cobra.Command {
	o := &emuStatusOptions{}
	cmd := &cobra.Command{
		Use:   "status [PREFIX]",
		Short: "Show the emulated clusters, or one cluster's hosts and addresses",
		Long: `status lists the recorded clusters, or shows one: its state ("up", or
"building" when up is running or died half-way), its hosts with their
addresses and namespaces, and any namespace that is missing. --json gives
the host -> address map that scripts use; --mpi-hosts prints the hosts as an
mpirun --host list (ADDRESS:SLOTS,... with the platform's ranks per host).

Examples:
  netaware emu status
  netaware emu status e1 --json
  netaware emu status e1 --mpi-hosts`,
		Args: cobra.MaximumNArgs(1),
		RunE: runOptions(o),
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON instead of a table")
	cmd.Flags().BoolVar(&o.mpiHosts, "mpi-hosts", false, "print the hosts as an mpirun --host list (ADDRESS:SLOTS,...)")
	return cmd
}

func (o *emuStatusOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.args = args
	return nil
}

func (o *emuStatusOptions) validate() error {
	if o.mpiHosts && len(o.args) != 1 {
		return usagef("emu status: --mpi-hosts needs a PREFIX")
	}
	return nil
}

func (o *emuStatusOptions) run(context.Context) error {
	if o.mpiHosts {
		c, err := emu.Load("", o.args[0])
		if err != nil {
			return err
		}
		var hs []string
		for _, h := range c.Hosts {
			if len(h.Ranks) > 0 {
				hs = append(hs, h.Address+":"+strconv.Itoa(len(h.Ranks)))
			}
		}
		fmt.Fprintln(o.out, strings.Join(hs, ","))
		return nil
	}
	prefixes := o.args
	if len(o.args) == 0 {
		var err error
		if prefixes, err = emu.List(""); err != nil {
			return err
		}
	}
	var out []emuStatus
	for _, p := range prefixes {
		c, err := emu.Load("", p)
		if err != nil {
			return err
		}
		out = append(out, emuStatus{c.Prefix, c.State, c.Platform, c.File, c.Subnet, c.Netem,
			c.Hosts, c.Switches, c.Links, c.Ranks, c.Missing()})
	}
	w := o.out
	if o.asJSON {
		if len(o.args) == 1 {
			return platformJSON(w, out[0])
		}
		if out == nil {
			out = []emuStatus{}
		}
		return platformJSON(w, out)
	}
	if len(out) == 0 {
		fmt.Fprintln(w, "no emulated clusters")
		return nil
	}
	if len(o.args) == 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "prefix\tstate\tplatform\thosts\tswitches\tranks\tsubnet\n")
		for _, s := range out {
			state := s.State
			if len(s.Missing) > 0 {
				state += fmt.Sprintf(" (%d namespaces missing)", len(s.Missing))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", s.Prefix, state, s.Platform, len(s.Hosts), len(s.Switches), len(s.Ranks), s.Subnet)
		}
		return tw.Flush()
	}
	s := out[0]
	fmt.Fprintf(w, "cluster %s: %s, platform %s (%s), subnet %s, netem %v\n", s.Prefix, s.State, s.Platform, s.File, s.Subnet, s.Netem)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "host\tswitch\taddress\tnamespace\tranks\n")
	for _, h := range s.Hosts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.Name, h.Switch, h.Address, h.Namespace, topo.FormatRanks(h.Ranks))
	}
	tw.Flush()
	if m := s.Missing; len(m) > 0 {
		list := strings.Join(m, ", ")
		if len(m) > 8 {
			list = strings.Join(m[:8], ", ") + fmt.Sprintf(", ... (%d in all)", len(m))
		}
		fmt.Fprintf(w, "missing namespaces: %s (remove the rest with 'netaware emu down %s')\n", list, s.Prefix)
	}
	return nil
}

// emuDownOptions are 'netaware emu down”s options.
type emuDownOptions struct {
	streams
	prefixes []string
	all      bool
}

func newEmuDownCmd() *cobra.Command {
	o := &emuDownOptions{}
	cmd := &cobra.Command{
		Use:   "down PREFIX... | --all",
		Short: "Remove emulated clusters (also half-built or crashed ones)",
		Long: `down kills every process in the cluster's namespaces, deletes the namespaces
(with their veths and bridges), any veth named after the prefix left in this
namespace, the UTS namespaces and the recorded state. It works from the names
alone, so also after kill -9 or a half-built up. --all removes every cluster
recorded in /run/netaware-emu. Removing a cluster that does not exist is not
an error.

Examples:
  netaware emu down e1
  netaware emu down --all`,
		RunE: runOptions(o),
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "remove every recorded cluster")
	return cmd
}

func (o *emuDownOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.prefixes = args
	return nil
}

func (o *emuDownOptions) validate() error {
	if o.all == (len(o.prefixes) > 0) {
		return usagef("emu down: give PREFIX... or --all")
	}
	for _, p := range o.prefixes {
		if err := emu.ValidPrefix(p); err != nil {
			return usagef("emu down: %v", err)
		}
	}
	return nil
}

func (o *emuDownOptions) run(ctx context.Context) error {
	prefixes := o.prefixes
	if o.all {
		var err error
		if prefixes, err = emu.List(""); err != nil {
			return err
		}
	}
	var errs []error
	for _, p := range prefixes {
		// Removal runs to its end even after Ctrl-C: a half-removed
		// cluster is worse than a slow exit.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		err := emu.Down(dctx, "", p)
		cancel()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(o.out, "cluster %s removed\n", p)
	}
	return errors.Join(errs...)
}

// emuRshAgentOptions are 'netaware emu rsh-agent”s options (its flags
// are not parsed: an ssh command line's options are ignored).
type emuRshAgentOptions struct {
	streams
	help     func() error
	args     []string
	showHelp bool
}

func newEmuRshAgentCmd() *cobra.Command {
	o := &emuRshAgentOptions{}
	cmd := &cobra.Command{
		Use:   "rsh-agent [OPTIONS] HOST COMMAND...",
		Short: "Remote shell into an emulated host (for mpirun's plm_rsh_agent)",
		Long: `rsh-agent runs COMMAND (joined with spaces, run by /bin/sh -c, as ssh does)
inside the emulated host HOST (a host name or address of any recorded
cluster), the way an ssh remote shell would. Leading options (words starting
with '-') are ignored. It sets OMPI_MCA_orte_tmpdir_base to a directory of
that host, so that Open MPI daemons of different hosts on one machine do not
share a session directory, and PMIX_MCA_gds=hash. See docs/emu.md for a
complete mpirun command line.

Examples:
  netaware emu rsh-agent a03 hostname
  mpirun --mca plm_rsh_agent "$(command -v netaware) emu rsh-agent" --host "$(netaware emu status e1 --mpi-hosts)" ... ./a.out`,
		DisableFlagParsing: true,
		RunE:               runOptions(o),
	}
	return cmd
}

func (o *emuRshAgentOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.help = cmd.Help
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if args[0] == "--help" || args[0] == "-h" {
			o.showHelp = true
		}
		args = args[1:]
	}
	o.args = args
	return nil
}

func (o *emuRshAgentOptions) validate() error {
	if !o.showHelp && len(o.args) < 2 {
		return usagef("emu rsh-agent: want HOST COMMAND...")
	}
	return nil
}

func (o *emuRshAgentOptions) run(ctx context.Context) error {
	if o.showHelp {
		return o.help()
	}
	c, i, err := emu.FindHost("", o.args[0])
	if err != nil {
		return err
	}
	tmp := filepath.Join(os.TempDir(), "netaware-emu-"+c.Hosts[i].Namespace)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	x := c.Command(ctx, i, "/bin/sh", "-c", strings.Join(o.args[1:], " "))
	x.Env = append(os.Environ(), "OMPI_MCA_orte_tmpdir_base="+tmp, "PMIX_MCA_gds=hash")
	x.Stdin, x.Stdout, x.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := x.Run(); err != nil {
		return fmt.Errorf("emu rsh-agent: host %s: %w", o.args[0], err)
	}
	return nil
}
