package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// Every command follows one shape (kubectl's Options, Complete, Validate,
// Run): a struct of options whose constructor takes the defaults from the
// library, flags bound to its fields, then
//
//	complete  fills what flags cannot: the arguments, the output streams;
//	validate  rejects a wrong command line (a usage error, exit 2) before
//	          the work starts;
//	run       does the work through library calls and prints.
type options interface {
	complete(cmd *cobra.Command, args []string) error
	validate() error
	run(ctx context.Context) error
}

// runOptions is a command's RunE for its options.
func runOptions(o options) func(cmd *cobra.Command, args []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.complete(cmd, args); err != nil {
			return err
		}
		if err := o.validate(); err != nil {
			return err
		}
		return o.run(cmd.Context())
	}
}

// streams are where a command prints: results on out, progress and notes
// on errOut (silent with quiet).
type streams struct {
	out, errOut io.Writer
	quiet       bool
}

func (s *streams) completeStreams(cmd *cobra.Command) {
	s.out, s.errOut, s.quiet = cmd.OutOrStdout(), cmd.ErrOrStderr(), quietFlag(cmd)
}

// complete is the complete step of a command with no arguments to read:
// options that embed streams and need nothing more inherit it.
func (s *streams) complete(cmd *cobra.Command, _ []string) error {
	s.completeStreams(cmd)
	return nil
}
