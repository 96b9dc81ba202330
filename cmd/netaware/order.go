package main

import (
	"bytes"
	"context"
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

// orderOptions are 'netaware order”s options.
type orderOptions struct {
	streams
	topology                string
	format, outFile, outDir string
	asJSON                  bool
}

func newOrderCmd() *cobra.Command {
	o := &orderOptions{}
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
		RunE: runOptions(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "", "write one file: "+strings.Join(order.Formats, ", "))
	f.StringVarP(&o.outFile, "output", "o", "", "with --format: write to this file (atomically) instead of standard output")
	f.StringVar(&o.outDir, "out-dir", "", "write every format into this directory (order.ompi-hostfile, order.rankfile, ...)")
	f.BoolVar(&o.asJSON, "json", false, "print the placement as JSON instead of a table")
	return cmd
}

func (o *orderOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.topology = args[0]
	return nil
}

func (o *orderOptions) validate() error {
	if o.format != "" && !slices.Contains(order.Formats, o.format) {
		return usagef("--format %q: want one of %s", o.format, strings.Join(order.Formats, ", "))
	}
	if o.format != "" && o.outDir != "" {
		return usagef("--format writes one file, --out-dir all of them: give one")
	}
	if o.outFile != "" && o.format == "" {
		return usagef("-o needs --format")
	}
	if o.asJSON && (o.format != "" || o.outDir != "") {
		return usagef("--json prints the placement; it does not combine with --format or --out-dir")
	}
	return nil
}

func (o *orderOptions) run(context.Context) error {
	t, err := topo.ReadFile(o.topology)
	if err != nil {
		return err
	}
	p, err := order.DepthFirst(t)
	if err != nil {
		return fmt.Errorf("%s: %w", o.topology, err)
	}
	stdout := o.out
	switch {
	case o.format != "":
		var b bytes.Buffer
		if err := p.Write(&b, o.format); err != nil {
			return err
		}
		if o.outFile == "" || o.outFile == "-" {
			_, err := stdout.Write(b.Bytes())
			return err
		}
		return atomicfile.WriteFile(o.outFile, b.Bytes())
	case o.outDir != "":
		if err := os.MkdirAll(o.outDir, 0o755); err != nil {
			return err
		}
		var names []string
		for _, f := range order.Formats {
			var b bytes.Buffer
			if err := p.Write(&b, f); err != nil {
				return err
			}
			if err := atomicfile.WriteFile(filepath.Join(o.outDir, order.FileName(f)), b.Bytes()); err != nil {
				return err
			}
			names = append(names, order.FileName(f))
		}
		fmt.Fprintf(stdout, "wrote %s into %s\n", strings.Join(names, ", "), o.outDir)
		return nil
	case o.asJSON:
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
}
