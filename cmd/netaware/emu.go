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

func newEmuUpCmd() *cobra.Command {
	var (
		prefix string
		burst  string
		pf     *platformPlacementFlags
	)
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := emu.ValidPrefix(prefix); err != nil {
				return usagef("emu up: --prefix: %v", err)
			}
			p, err := platform.Load(args[0])
			if err != nil {
				return err
			}
			if p, err = pf.apply(p); err != nil {
				return err
			}
			opt := emu.Options{Prefix: prefix}
			if burst != "" {
				b, err := platform.ParseSize(burst)
				if err != nil || b <= 0 {
					return usagef("emu up: --burst %q: want a positive size such as 64KiB", burst)
				}
				opt.Burst = b
			}
			// Plan first, so that a platform emu cannot build is refused
			// before anything is created.
			if _, err := emu.NewPlan(p, opt); err != nil {
				return err
			}
			start := time.Now()
			last := start
			stderr := cmd.ErrOrStderr()
			progress := func(done, total int) {
				if now := time.Now(); now.Sub(last) >= time.Second && now.Sub(start) >= 2*time.Second {
					last = now
					fmt.Fprintf(stderr, "emu up %s: %d of %d steps\n", prefix, done, total)
				}
			}
			c, err := emu.Up(cmd.Context(), p, opt, progress)
			if err != nil {
				return fmt.Errorf("emu up: %w", err)
			}
			emuSummary(cmd.OutOrStdout(), c, time.Since(start))
			return nil
		},
	}
	cmd.Flags().StringVar(&prefix, "prefix", "emu", fmt.Sprintf("names of the namespaces and veths (1-%d lowercase letters and digits)", emu.MaxPrefix))
	cmd.Flags().StringVar(&burst, "burst", "", "tbf bucket size of every link (default: max(64KiB, 1 ms at the link's rate))")
	pf = addPlatformPlacementFlags(cmd)
	return cmd
}

func emuSummary(w io.Writer, c *emu.Cluster, took time.Duration) {
	fmt.Fprintf(w, "cluster %s up in %.1f s: platform %s (%s), %d hosts, %d switches, %d links, %d ranks, subnet %s\n",
		c.Prefix, took.Seconds(), c.Platform, c.File, len(c.Hosts), len(c.Switches), len(c.Links), len(c.Ranks), c.Subnet)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\nhost\tswitch\taddress\tnamespace\tlink rate\tranks\n")
	for i, h := range c.Hosts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", h.Name, h.Switch, h.Address, h.Namespace,
			platform.FormatBandwidth(c.Links[i].RateBps), emuRanks(h.Ranks))
	}
	tw.Flush()
	if len(c.Links) > len(c.Hosts) {
		fmt.Fprintf(tw, "\nswitch link\trate\tlatency\n")
		for _, l := range c.Links[len(c.Hosts):] {
			fmt.Fprintf(tw, "%s - %s\t%s\t%s\n", l.A, l.B, platform.FormatBandwidth(l.RateBps), platform.FormatTime(l.LatencyS))
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

// emuRanks renders a sorted rank list compactly: "0-3,8".
func emuRanks(rs []int) string {
	var parts []string
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", rs[i], rs[j]))
		} else {
			parts = append(parts, strconv.Itoa(rs[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func newEmuRunCmd() *cobra.Command {
	var (
		host    string
		outDir  string
		timeout time.Duration
		port    int
		live    bool
	)
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return usagef("emu run: want PREFIX [flags] -- COMMAND [ARGS...] (see 'netaware emu run --help')")
			}
			c, err := emu.Load("", args[0])
			if err != nil {
				return err
			}
			if c.State != "up" {
				return fmt.Errorf("cluster %s is %s, not up (see 'netaware emu status %s')", c.Prefix, c.State, c.Prefix)
			}
			argv := args[1:]
			if host != "" {
				i, err := c.HostIndex(host)
				if err != nil {
					return usagef("emu run: --host: %v", err)
				}
				ctx := cmd.Context()
				if timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, timeout)
					defer cancel()
				}
				x := c.Command(ctx, i, argv...)
				x.Stdin, x.Stdout, x.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
				if err := x.Run(); err != nil {
					return fmt.Errorf("emu run: host %s: %s: %w", c.Hosts[i].Name, argv[0], err)
				}
				return nil
			}
			err = c.Run(cmd.Context(), argv, emu.RunOptions{
				OutDir:  outDir,
				Stdout:  cmd.OutOrStdout(),
				Stderr:  cmd.ErrOrStderr(),
				Port:    port,
				Timeout: timeout,
				Live:    live,
			})
			if err != nil {
				return fmt.Errorf("emu run %s: %w", c.Prefix, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&host, "host", "", "run COMMAND once in this host (name or address) instead of once per rank")
	f.StringVar(&outDir, "out-dir", "", "write each rank's output to DIR/RANK.out and DIR/RANK.err")
	f.DurationVar(&timeout, "timeout", 0, "stop the command(s) after this long (0: no limit)")
	f.IntVar(&port, "port", 0, "coordinator port on rank 0's host (default: random in 30000-49999)")
	f.BoolVar(&live, "live", false, "print output lines as they come, each prefixed \"[rank] \" (default: once the ranks have finished)")
	return cmd
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

func newEmuStatusCmd() *cobra.Command {
	var asJSON, mpiHosts bool
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if mpiHosts {
				if len(args) != 1 {
					return usagef("emu status: --mpi-hosts needs a PREFIX")
				}
				c, err := emu.Load("", args[0])
				if err != nil {
					return err
				}
				var hs []string
				for _, h := range c.Hosts {
					if len(h.Ranks) > 0 {
						hs = append(hs, h.Address+":"+strconv.Itoa(len(h.Ranks)))
					}
				}
				fmt.Fprintln(cmd.OutOrStdout(), strings.Join(hs, ","))
				return nil
			}
			prefixes := args
			if len(args) == 0 {
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
			w := cmd.OutOrStdout()
			if asJSON {
				if len(args) == 1 {
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
			if len(args) == 0 {
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
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.Name, h.Switch, h.Address, h.Namespace, emuRanks(h.Ranks))
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
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	cmd.Flags().BoolVar(&mpiHosts, "mpi-hosts", false, "print the hosts as an mpirun --host list (ADDRESS:SLOTS,...)")
	return cmd
}

func newEmuDownCmd() *cobra.Command {
	var all bool
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return usagef("emu down: give PREFIX... or --all")
			}
			prefixes := args
			if all {
				var err error
				if prefixes, err = emu.List(""); err != nil {
					return err
				}
			}
			for _, p := range prefixes {
				if err := emu.ValidPrefix(p); err != nil {
					return usagef("emu down: %v", err)
				}
			}
			var errs []error
			for _, p := range prefixes {
				ctx, cancel := context.WithTimeout(context.WithoutCancel(cmd.Context()), 2*time.Minute)
				err := emu.Down(ctx, "", p)
				cancel()
				if err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "cluster %s removed\n", p)
			}
			return errors.Join(errs...)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "remove every recorded cluster")
	return cmd
}

func newEmuRshAgentCmd() *cobra.Command {
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
		RunE: func(cmd *cobra.Command, args []string) error {
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				if args[0] == "--help" || args[0] == "-h" {
					return cmd.Help()
				}
				args = args[1:]
			}
			if len(args) < 2 {
				return usagef("emu rsh-agent: want HOST COMMAND...")
			}
			c, i, err := emuFindHost(args[0])
			if err != nil {
				return err
			}
			tmp := filepath.Join(os.TempDir(), "netaware-emu-"+c.Hosts[i].Namespace)
			if err := os.MkdirAll(tmp, 0o755); err != nil {
				return err
			}
			x := c.Command(cmd.Context(), i, "/bin/sh", "-c", strings.Join(args[1:], " "))
			x.Env = append(os.Environ(), "OMPI_MCA_orte_tmpdir_base="+tmp, "PMIX_MCA_gds=hash")
			x.Stdin, x.Stdout, x.Stderr = os.Stdin, os.Stdout, os.Stderr
			if err := x.Run(); err != nil {
				return fmt.Errorf("emu rsh-agent: host %s: %w", args[0], err)
			}
			return nil
		},
	}
	return cmd
}

// emuFindHost finds a host (name or address) among all recorded clusters.
func emuFindHost(host string) (*emu.Cluster, int, error) {
	prefixes, err := emu.List("")
	if err != nil {
		return nil, 0, err
	}
	var found *emu.Cluster
	idx := -1
	for _, p := range prefixes {
		c, err := emu.Load("", p)
		if err != nil {
			continue
		}
		if i, err := c.HostIndex(host); err == nil {
			if found != nil {
				return nil, 0, fmt.Errorf("host %s is in clusters %s and %s: use its address", host, found.Prefix, c.Prefix)
			}
			found, idx = c, i
		}
	}
	if found == nil {
		return nil, 0, fmt.Errorf("no emulated cluster has a host %s (see 'netaware emu status')", host)
	}
	return found, idx, nil
}
