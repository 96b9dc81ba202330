package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// usageError marks a wrong command line (exit code 2), as opposed to a
// command that ran and failed (exit code 1).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error {
	return &usageError{fmt.Errorf(format, a...)}
}

// subcommands is filled by each command's file through register, so that
// commands live in files of their own and never edit a shared list.
var subcommands []func() *cobra.Command

func register(f func() *cobra.Command) { subcommands = append(subcommands, f) }

func newRootCmd() *cobra.Command {
	var (
		logLevel string
		prof     profiling
	)
	root := &cobra.Command{
		Use:   "netaware",
		Short: "Discover how processes are connected, model the network, tune collectives",
		Long: `netaware finds out how a set of processes is really connected (shared sockets,
hosts, switches, sites, slow and shared links) from measurements the processes
take themselves, builds a communication performance model from the same data,
and uses both to run collective operations faster than topology-blind algorithms.

Every command that runs on a set of processes ("a world") runs either on a
simulated platform (--platform NAME|FILE; see 'netaware platform list') or on
the live processes it was started in (by 'netaware launch', mpirun, srun, or
a coordinator address).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := setupLogging(logLevel); err != nil {
				return err
			}
			if err := prof.validate(); err != nil {
				return err
			}
			return prof.start()
		},
		PersistentPostRunE: func(cmd *cobra.Command, args []string) error {
			return prof.stop()
		},
	}
	prof.flags(root)
	root.PersistentFlags().BoolP("quiet", "q", false, "no progress on stderr (phases, bars and ETAs of long steps)")
	root.PersistentFlags().StringVar(&logLevel, "log-level", "warn", "log level: debug, info, warn or error (logs go to stderr)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &usageError{fmt.Errorf("%s: %w (see '%s --help')", cmd.CommandPath(), err, cmd.CommandPath())}
	})
	for _, f := range subcommands {
		root.AddCommand(f())
	}
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return usagef("help: no command %q (see 'netaware --help')", strings.Join(args, " "))
			}
			return target.Help()
		},
	})
	// Added now rather than by Execute, so that the walk below sees it.
	root.InitDefaultCompletionCmd()
	refuseUnknownSubcommands(root)
	wrapArgs(root)
	return root
}

// refuseUnknownSubcommands makes every command that groups subcommands
// reject a word that names none of them: left alone, cobra prints the
// group's help and exits 0 for "netaware probe bogus", so a typo in a
// script would pass unnoticed. Without a word the group prints its help.
func refuseUnknownSubcommands(c *cobra.Command) {
	if !c.HasSubCommands() {
		return
	}
	if c.Args == nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if cmd.SuggestionsMinimumDistance <= 0 {
				cmd.SuggestionsMinimumDistance = 2
			}
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
			}
			var names []string
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			return fmt.Errorf("%s; its commands are %s", msg, strings.Join(names, ", "))
		}
	}
	if c.Run == nil && c.RunE == nil {
		c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	}
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
}

// wrapArgs makes positional-argument errors usage errors on every command.
func wrapArgs(c *cobra.Command) {
	if v := c.Args; v != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := v(cmd, args); err != nil {
				return &usageError{fmt.Errorf("%s: %w (see '%s --help')", cmd.CommandPath(), err, cmd.CommandPath())}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		wrapArgs(sub)
	}
}

func setupLogging(level string) error {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "info":
		l = slog.LevelInfo
	case "warn", "warning":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		return usagef("--log-level %q: want debug, info, warn or error", level)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})))
	return nil
}
