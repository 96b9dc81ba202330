package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"netaware/launch"
)

func init() { register(newLaunchCmd) }

// launchOptions are 'netaware launch”s options.
type launchOptions struct {
	streams
	n                                  int
	hostfile, rsh, coordinator, prefix string
	grace                              time.Duration
	args                               []string
	// built by validate
	spec launch.Spec
}

func newLaunchCmd() *cobra.Command {
	o := &launchOptions{rsh: launch.DefaultRsh, grace: launch.DefaultGrace, prefix: "auto"}
	cmd := &cobra.Command{
		Use:   "launch -n N [--hostfile FILE] [--rsh CMD] [--coordinator HOST:PORT] [--] COMMAND [ARGS...]",
		Short: "Start N ranks of a command as one TCP world",
		Long: `launch starts N processes of COMMAND as the ranks of one TCP world: each gets
NETAWARE_RANK, NETAWARE_SIZE, NETAWARE_COORDINATOR and a shared secret
NETAWARE_TOKEN (yours if set, otherwise a fresh random one), so that netaware
commands started this way find each other, authenticate, and connect a full
mesh. COMMAND "netaware" means this very binary; any other program may be
launched too (it sees the same variables).

Output of every rank is forwarded line by line as it comes (lines of two ranks
never mix). With --prefix auto (the default), a stream (stdout, stderr) stays
untouched while a single rank writes to it, so that a command only rank 0
prints reads as if run alone; from the first line of a second rank on, every
line of that stream carries its rank: "[3] ...". When the command has --json,
stdout is never prefixed: 'launch ... --json | jq' gets the JSON untouched.
--prefix always prefixes every line, never none.

If a rank fails, the others are stopped (SIGTERM, then SIGKILL after --grace),
and launch exits non-zero naming the rank that failed first. Ctrl-C is
forwarded to every rank.

With --hostfile (Open MPI syntax: "host slots=N" per line), ranks are placed
by slot on those hosts and started through the remote shell --rsh (default
ssh, called as: RSH HOST 'COMMAND LINE'); the token travels on the remote
shell's stdin, never on a command line. The coordinator defaults to a free
loopback port when all ranks are local, otherwise to the first host with a
random port in 30000-49999 (choose one with --coordinator).

Examples:
  netaware launch -n 8 -- netaware bench pingpong
  netaware launch -n 16 --hostfile hosts.txt -- netaware bench pingpong --json
  netaware launch -n 4 --hostfile hosts.txt --rsh "ssh -p 2222" --coordinator node1:40000 -- netaware bench pingpong`,
		Args: cobra.MinimumNArgs(1),
		RunE: runOptions(o),
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // flags after COMMAND belong to it
	f.IntVarP(&o.n, "np", "n", 0, "number of ranks to start (required)")
	f.StringVar(&o.hostfile, "hostfile", "", "start ranks on these hosts (Open MPI hostfile: 'host slots=N' per line) through --rsh")
	f.StringVar(&o.rsh, "rsh", o.rsh, "remote shell command for --hostfile, called as RSH HOST 'COMMAND LINE'")
	f.StringVar(&o.coordinator, "coordinator", "", "host:port where rank 0 listens and every rank registers (default: chosen)")
	f.DurationVar(&o.grace, "grace", o.grace, "time stopped ranks get between SIGTERM/SIGINT and SIGKILL")
	f.StringVar(&o.prefix, "prefix", o.prefix, "rank prefix \"[r] \" on forwarded lines: auto (once a second rank writes to the stream; never on stdout when the command has --json), always or never")
	return cmd
}

func (o *launchOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.args = args
	return nil
}

func (o *launchOptions) validate() error {
	if o.n < 1 {
		return usagef("launch: -n %d: want at least 1 rank", o.n)
	}
	mode, err := launch.ParsePrefixMode(o.prefix)
	if err != nil {
		return usagef("launch: --prefix: %v", err)
	}
	stdoutMode := mode
	if mode == launch.PrefixAuto && hasJSONFlag(o.args[1:]) {
		stdoutMode = launch.PrefixNever
	}
	o.spec = launch.Spec{
		StdoutPrefix: stdoutMode,
		StderrPrefix: mode,
		N:            o.n,
		Command:      o.args[0],
		Args:         o.args[1:],
		Rsh:          o.rsh,
		Coordinator:  o.coordinator,
		Stdout:       o.out,
		Stderr:       o.errOut,
		Grace:        o.grace,
	}
	if o.hostfile != "" {
		f, err := os.Open(o.hostfile)
		if err != nil {
			return usagef("launch: --hostfile: %v", err)
		}
		hosts, err := launch.ParseHostfile(f, o.hostfile)
		f.Close()
		if err != nil {
			return usagef("launch: %v", err)
		}
		if _, err := launch.Place(hosts, o.n); err != nil {
			return usagef("launch: --hostfile %s: %v", o.hostfile, err)
		}
		o.spec.Hosts = hosts
	}
	return nil
}

func (o *launchOptions) run(ctx context.Context) error {
	// After Ctrl-C, launch waits --grace for its ranks (netaware ranks
	// stop within 2 s) before it kills them.
	stopsItself.Store(true)
	if err := launch.Run(ctx, o.spec); err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	return nil
}

// hasJSONFlag reports whether a command line asks for JSON output.
func hasJSONFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || strings.HasPrefix(a, "--json=") && a != "--json=false" {
			return true
		}
	}
	return false
}
