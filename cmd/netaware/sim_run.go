package main

import (
	"context"

	"github.com/spf13/cobra"
)

// simRunOptions are 'netaware sim run”s options.
type simRunOptions struct {
	streams
	platform string
	args     []string
}

func newSimRunCmd() *cobra.Command {
	o := &simRunOptions{}
	cmd := &cobra.Command{
		Use:   "run --platform NAME|FILE -- COMMAND [ARGS...]",
		Short: "Run any netaware command on a simulated platform",
		Long: `Run runs a netaware command with every rank simulated on the platform, in
virtual time, in this process. It is the same as giving the command
--platform itself; it exists so that scripts written for a live world
('netaware launch -n 8 -- netaware bench pingpong') switch to the simulator
by changing only their prefix.`,
		Example: `  netaware sim run --platform zhu-2racks -- bench pingpong
  netaware sim run --platform fram-like -- discover --blind --out fram`,
		Args: cobra.MinimumNArgs(1),
		RunE: runOptions(o),
	}
	cmd.Flags().StringVar(&o.platform, "platform", "", "the simulated platform: a built-in name or a platform.yaml file")
	return cmd
}

func (o *simRunOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.args = args
	return nil
}

func (o *simRunOptions) validate() error {
	if o.platform == "" {
		return usagef("sim run: --platform is required (a built-in name or a platform.yaml)")
	}
	if o.args[0] == "sim" || o.args[0] == "launch" {
		return usagef("sim run: %q does not run on a world", o.args[0])
	}
	return nil
}

func (o *simRunOptions) run(ctx context.Context) error {
	root := newRootCmd()
	root.SetArgs(append(append([]string{}, o.args...), "--platform", o.platform))
	root.SetOut(o.out)
	root.SetErr(o.errOut)
	return root.ExecuteContext(ctx)
}
