package main

import (
	"github.com/spf13/cobra"
)

func newSimRunCmd() *cobra.Command {
	var plat string
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if plat == "" {
				return usagef("sim run: --platform is required (a built-in name or a platform.yaml)")
			}
			if args[0] == "sim" || args[0] == "launch" {
				return usagef("sim run: %q does not run on a world", args[0])
			}
			root := newRootCmd()
			root.SetArgs(append(append([]string{}, args...), "--platform", plat))
			root.SetOut(cmd.OutOrStdout())
			root.SetErr(cmd.ErrOrStderr())
			return root.ExecuteContext(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&plat, "platform", "", "the simulated platform: a built-in name or a platform.yaml file")
	return cmd
}
