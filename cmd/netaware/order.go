package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"netaware/internal/atomicfile"
	"netaware/order"
	"netaware/topo"
)

func init() { register(newOrderCmd) }

func newOrderCmd() *cobra.Command {
	var format, out, outDir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "order TOPOLOGY.json [--format FORMAT [-o OUT] | --out-dir DIR]",
		Short: "Write the rank order that makes MPI and NCCL rings follow the topology",
		Long: `order lists the ranks' hosts in depth-first order of the inferred tree (the
order of seed 002's pipeline, Sect. 6.2), in the files launchers read. MPI
libraries and NCCL build rings, chains and pipelines in rank order; in this
order consecutive ranks are neighbours in the tree, so a ring crosses each
switch's uplink once each way instead of on every hop. Recursive doubling
and other algorithms that pair distant ranks gain nothing (docs/rank-order.md).

Formats (--format):
  ompi-hostfile   "host slots=N" lines for Open MPI's mpirun --hostfile
  ompi-rankfile   "rank K=host slot=S" lines for mpirun --rankfile (binds too)
  machinefile     "host:N" lines for MPICH's mpiexec -f (Hydra)
  slurm-hostfile  one host a rank, for SLURM_HOSTFILE with srun
                  --distribution=arbitrary (mpirun --hostfile and mpiexec -f
                  read it too; discover writes it as order.hostfile)
  hosts           each host once, for launchers that number nodes in list
                  order (torchrun --node_rank, NCCL tests)

Without --format or --out-dir, prints the placement as a table (--json: as JSON).`,
		Example: `  netaware discover --level fast --out /tmp/na      # simulated 4-site grid
  netaware order /tmp/na/topology.json
  netaware order /tmp/na/topology.json --format ompi-rankfile -o rankfile
  mpirun --rankfile rankfile -n 8 ./app
  SLURM_HOSTFILE=/tmp/na/order.hostfile srun --distribution=arbitrary -n 8 ./app
  netaware order topology.json --out-dir launch/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "" && !slices.Contains(order.Formats, format) {
				return usagef("--format %q: want one of %s", format, strings.Join(order.Formats, ", "))
			}
			if format != "" && outDir != "" {
				return usagef("--format writes one file, --out-dir all of them: give one")
			}
			if out != "" && format == "" {
				return usagef("-o needs --format")
			}
			if asJSON && (format != "" || outDir != "") {
				return usagef("--json prints the placement; it does not combine with --format or --out-dir")
			}
			t, err := topo.ReadFile(args[0])
			if err != nil {
				return err
			}
			p, err := order.DepthFirst(t)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			stdout := cmd.OutOrStdout()
			switch {
			case format != "":
				var b bytes.Buffer
				if err := p.Write(&b, format); err != nil {
					return err
				}
				if out == "" || out == "-" {
					_, err := stdout.Write(b.Bytes())
					return err
				}
				return atomicfile.WriteFile(out, b.Bytes())
			case outDir != "":
				if err := os.MkdirAll(outDir, 0o755); err != nil {
					return err
				}
				var names []string
				for _, f := range order.Formats {
					var b bytes.Buffer
					if err := p.Write(&b, f); err != nil {
						return err
					}
					if err := atomicfile.WriteFile(filepath.Join(outDir, order.FileName(f)), b.Bytes()); err != nil {
						return err
					}
					names = append(names, order.FileName(f))
				}
				fmt.Fprintf(stdout, "wrote %s into %s\n", strings.Join(names, ", "), outDir)
				return nil
			case asJSON:
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Hosts []order.Host `json:"hosts"`
					Slots []order.Slot `json:"slots"`
				}{p.Hosts, p.Slots()})
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RANK\tHOST\tSLOT\tMEASURED RANK")
			for _, s := range p.Slots() {
				fmt.Fprintf(tw, "%d\t%s\t%d\t%d\n", s.Rank, s.Host, s.Slot, s.Measured)
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "", "write one file: "+strings.Join(order.Formats, ", "))
	f.StringVarP(&out, "output", "o", "", "with --format: write to this file (atomically) instead of standard output")
	f.StringVar(&outDir, "out-dir", "", "write every format into this directory (order.ompi-hostfile, order.rankfile, ...)")
	f.BoolVar(&asJSON, "json", false, "print the placement as JSON instead of a table")
	return cmd
}
