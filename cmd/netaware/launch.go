package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"netaware/launch"
)

func init() { register(newLaunchCmd) }

func newLaunchCmd() *cobra.Command {
	var (
		n           int
		hostfile    string
		rsh         string
		coordinator string
		grace       time.Duration
	)
	cmd := &cobra.Command{
		Use:   "launch -n N [--hostfile FILE] [--rsh CMD] [--coordinator HOST:PORT] [--] COMMAND [ARGS...]",
		Short: "Start N ranks of a command as one TCP world",
		Long: `launch starts N processes of COMMAND as the ranks of one TCP world: each gets
NETAWARE_RANK, NETAWARE_SIZE, NETAWARE_COORDINATOR and a shared secret
NETAWARE_TOKEN (yours if set, otherwise a fresh random one), so that netaware
commands started this way find each other, authenticate, and connect a full
mesh. COMMAND "netaware" means this very binary; any other program may be
launched too (it sees the same variables).

Output of every rank is forwarded line by line, prefixed with its rank: "[3] ...".
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 {
				return usagef("launch: -n %d: want at least 1 rank", n)
			}
			// After Ctrl-C, launch waits --grace for its ranks (netaware
			// ranks stop within 2 s) before it kills them.
			stopsItself.Store(true)
			spec := launch.Spec{
				N:           n,
				Command:     args[0],
				Args:        args[1:],
				Rsh:         rsh,
				Coordinator: coordinator,
				Stdout:      cmd.OutOrStdout(),
				Stderr:      cmd.ErrOrStderr(),
				Grace:       grace,
			}
			if hostfile != "" {
				f, err := os.Open(hostfile)
				if err != nil {
					return usagef("launch: --hostfile: %v", err)
				}
				hosts, err := launch.ParseHostfile(f, hostfile)
				f.Close()
				if err != nil {
					return usagef("launch: %v", err)
				}
				if _, err := launch.Place(hosts, n); err != nil {
					return usagef("launch: --hostfile %s: %v", hostfile, err)
				}
				spec.Hosts = hosts
			}
			if err := launch.Run(cmd.Context(), spec); err != nil {
				return fmt.Errorf("launch: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // flags after COMMAND belong to it
	f.IntVarP(&n, "np", "n", 0, "number of ranks to start (required)")
	f.StringVar(&hostfile, "hostfile", "", "start ranks on these hosts (Open MPI hostfile: 'host slots=N' per line) through --rsh")
	f.StringVar(&rsh, "rsh", "ssh", "remote shell command for --hostfile, called as RSH HOST 'COMMAND LINE'")
	f.StringVar(&coordinator, "coordinator", "", "host:port where rank 0 listens and every rank registers (default: chosen)")
	f.DurationVar(&grace, "grace", 5*time.Second, "time stopped ranks get between SIGTERM/SIGINT and SIGKILL")
	return cmd
}
