package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"netaware/coll"
	"netaware/model"
	"netaware/platform"
	"netaware/topo"
	"netaware/tune"
	"netaware/units"
)

func init() { register(newPredictCmd) }

// predictOptions are 'netaware predict”s options.
type predictOptions struct {
	streams
	model, topology        string
	pattern, flows, counts string
	op, alg, sizeStr       string
	seg, k, level, root    int
	base, variant          string
	nicBW, backboneBW      string
	asJSON, noContention   bool
	// from the flags
	size                int
	nicBps, backboneBps float64
}

func newPredictOptions() *predictOptions {
	return &predictOptions{alg: "binomial", sizeStr: "1MiB"}
}

func newPredictCmd() *cobra.Command {
	o := newPredictOptions()
	cmd := &cobra.Command{
		Use:   "predict",
		Short: "Predict a pattern or a collective from model.json (seed 001 contention model, seed 000 models)",
		Long: `predict reads a model.json (from 'netaware discover' or 'probe' + 'model') and
predicts, per transfer and in total:

  --pattern FILE   concurrent point-to-point transfers, one "src dst bytes" a
                   line (# starts a comment; sizes like 8MiB), all started at once
  --flows LIST     the same inline: src>dst:bytes,...
  --op OP          a collective along a coll builder (--alg, default binomial):
                   bcast, scatter, scatterv, gather, gatherv, reduce (trees),
                   alltoallv (--counts: one row of n byte counts per rank)

with seed 001's contention model (Algorithms 1-2) with the asymmetric
property ("asymmetric") and without it ("fairness"), and for trees with the
pair models of seed 000 Sect. 2.2 the file supports: homogeneous Hockney
(Eq. 2.2 on a binomial tree), heterogeneous Hockney, LogGP and PLogP
(Eq. 2.6-2.7). Pair models see no contention; the contention models see no
segmentation. The contention model needs the NIC and backbone bandwidths
(model.json's contention section, or --nic-bw/--backbone-bw) and the ranks'
nodes and racks (the section, or --topology's host level and the level
above it). Contention models add each pair's Hockney alpha as latency.

'netaware predict check' measures how right the contention model is on a
network (seed 001 Sect. 7).`,
		Example: `  netaware discover --platform zhu-2racks --out zhu
  netaware predict --model zhu/model.json --flows '0>15:8MiB,1>15:8MiB,15>2:8MiB' --backbone-bw 10Gbps
  netaware predict --model zhu/model.json --topology zhu/topology.json --op bcast --alg binomial --size 1MiB --backbone-bw 10Gbps
  netaware predict --model zhu/model.json --op scatter --alg model-binomial --size 1MiB --no-contention --json`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&o.model, "model", "", "model.json (required)")
	fl.StringVar(&o.topology, "topology", "", "topology.json: ranks' hosts and racks for the contention model, levels for topology-aware builders")
	fl.StringVar(&o.pattern, "pattern", "", `pattern file: "src dst bytes" per line`)
	fl.StringVar(&o.flows, "flows", "", "pattern inline: src>dst:bytes, comma separated, e.g. '0>15:8MiB,1>15:8MiB'")
	fl.StringVar(&o.op, "op", "", "collective: bcast, scatter, scatterv, gather, gatherv, reduce, alltoallv")
	fl.StringVar(&o.counts, "counts", "", "scatterv/gatherv: file of one byte count per rank; alltoallv: n rows of n counts")
	fl.StringVar(&o.alg, "alg", o.alg, "tree builder (see 'netaware tune bcast --help' for the names)")
	fl.StringVar(&o.sizeStr, "size", o.sizeStr, "bcast/reduce: the message; scatter/gather: the block of every rank")
	fl.IntVar(&o.root, "root", 0, "root rank")
	fl.IntVar(&o.seg, "seg", 0, "builder's segment size in bytes (0: its default)")
	fl.IntVar(&o.k, "k", 0, "builder's k (k-chain, knomial)")
	fl.IntVar(&o.level, "level", 0, "topology level of magpie, magpie2, interpipe (1-based; 0: coarsest split)")
	fl.StringVar(&o.base, "base", "", "base builder of magpie2 and hierarchical")
	fl.StringVar(&o.variant, "variant", "", "variant of model-binomial or prim")
	fl.StringVar(&o.nicBW, "nic-bw", "", "NIC bandwidth, e.g. 1Gbps (default: model.json's contention section)")
	fl.StringVar(&o.backboneBW, "backbone-bw", "", "backbone bandwidth between racks, e.g. 10Gbps (default: model.json's)")
	fl.BoolVar(&o.noContention, "no-contention", false, "pair models only")
	fl.BoolVar(&o.asJSON, "json", false, "print the prediction as JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().NFlag() == 0 {
			// Bare, it is a command group (it has 'check'): its help.
			return cmd.Help()
		}
		return runOptions(o)(cmd, args)
	}
	cmd.AddCommand(newPredictCheckCmd())
	return cmd
}

func (o *predictOptions) validate() error {
	if o.model == "" {
		return usagef("predict: --model is required")
	}
	given := 0
	for _, v := range []string{o.pattern, o.flows, o.op} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return usagef("predict: give exactly one of --pattern, --flows and --op")
	}
	var err error
	if o.op != "" {
		if o.size, err = parseSize("size", o.sizeStr); err != nil {
			return err
		}
	}
	for _, bw := range []struct {
		flag, v, want string
		dst           *float64
	}{{"nic-bw", o.nicBW, "1Gbps", &o.nicBps}, {"backbone-bw", o.backboneBW, "10Gbps", &o.backboneBps}} {
		if bw.v == "" {
			continue
		}
		if *bw.dst, err = platform.ParseBandwidth(bw.v); err != nil || !(*bw.dst > 0) {
			return usagef("--%s %q: want a bandwidth such as %s", bw.flag, bw.v, bw.want)
		}
	}
	return nil
}

func (o *predictOptions) run(context.Context) error {
	mf, err := model.ReadFile(o.model)
	if err != nil {
		return usagef("--model: %v", err)
	}
	n := mf.Size
	var t *topo.Topology
	if o.topology != "" {
		if t, err = topo.ReadFile(o.topology); err != nil {
			return usagef("--topology: %v", err)
		}
		if t.Size != n {
			return usagef("--topology %s has %d ranks, --model %d", o.topology, t.Size, n)
		}
	}
	ps := model.Predictors{}
	var op model.Operation
	switch {
	case o.pattern != "":
		if op.Transfers, err = model.ReadPattern(o.pattern, n); err != nil {
			return usagef("--pattern: %v", err)
		}
		op.Op = "pattern"
	case o.flows != "":
		if op.Transfers, err = model.ParseFlows(o.flows, n); err != nil {
			return usagef("--flows: %v", err)
		}
		op.Op = "pattern"
	default:
		if op, err = o.operation(mf, t); err != nil {
			return err
		}
	}
	if op.Tree != nil || op.Op == "alltoallv" {
		if ps.Pair, err = model.PairModels(mf); err != nil {
			return usagef("--model: %v", err)
		}
	}
	if !o.noContention {
		c, err := o.contention(mf, t)
		if err != nil {
			return err
		}
		fair := *c
		fair.FairnessOnly = true
		ps.Asymmetric, ps.Fairness = c, &fair
		if op.Op != "pattern" && mf.Hockney != nil {
			h, err := mf.HeteroHockney()
			if err != nil {
				return usagef("--model: %v", err)
			}
			ps.Latency = func(i, j int) float64 { return h.At(i, j).AlphaS }
		}
	}
	pred, err := model.Predict(op, ps)
	if err != nil {
		return err
	}
	if o.asJSON {
		return probeWriteJSON(o.out, pred)
	}
	return printPrediction(o.out, pred)
}

// contention builds the asymmetric model from the file and the flags.
func (o *predictOptions) contention(mf *model.File, t *topo.Topology) (*model.Contention, error) {
	sec := model.ContentionSection{}
	if mf.Contention != nil {
		sec = *mf.Contention
	}
	if o.nicBps > 0 {
		sec.BetaNICSPerByte = 1 / o.nicBps
	}
	backbone := 0.0
	if o.backboneBps > 0 {
		backbone = 1 / o.backboneBps
		sec.BetaBackboneSPerByte = 0 // the flag wins over the file
	}
	if sec.BetaNICSPerByte == 0 {
		return nil, usagef("predict: the contention model needs the NIC bandwidth: --model has no contention section; give --nic-bw (or --no-contention)")
	}
	var nodeOf, rackOf []int
	if t != nil {
		var err error
		if nodeOf, rackOf, err = model.Bindings(t); err != nil {
			return nil, usagef("--topology: %v", err)
		}
		sec.NodeOf, sec.RackOf = nil, nil // the topology given wins
	}
	tmp := *mf
	tmp.Contention = &sec
	c, err := tmp.ContentionModel(nodeOf, rackOf, backbone)
	if err != nil {
		return nil, usagef("predict: %v (--topology, --backbone-bw, or --no-contention)", err)
	}
	return c, nil
}

// operation builds the collective's tree (or transfers) from the flags.
func (o *predictOptions) operation(mf *model.File, t *topo.Topology) (model.Operation, error) {
	n := mf.Size
	if o.root < 0 || o.root >= n {
		return model.Operation{}, usagef("--root %d: want 0..%d", o.root, n-1)
	}
	op := model.Operation{Op: o.op, Bytes: o.size}
	switch o.op {
	case "alltoallv":
		if o.counts == "" {
			return op, usagef("--op alltoallv needs --counts (n rows of n byte counts)")
		}
		m, err := model.ReadCounts(o.counts, n)
		if err != nil {
			return op, usagef("--counts: %v", err)
		}
		if op.Transfers, err = model.AlltoallvTransfers(m); err != nil {
			return op, usagef("--counts: %v", err)
		}
		return op, nil
	case "scatter", "gather":
		op.Counts = model.Uniform(n, float64(o.size))
		op.Op = o.op + "v"
	case "scatterv", "gatherv":
		if o.counts == "" {
			return op, usagef("--op %s needs --counts (one byte count per rank)", o.op)
		}
		m, err := model.ReadCounts(o.counts, 1)
		if err != nil || len(m) != 1 || len(m[0]) != n {
			if err == nil {
				err = fmt.Errorf("want %d counts on one line", n)
			}
			return op, usagef("--counts: %v", err)
		}
		op.Counts = m[0]
	case "bcast", "reduce":
	default:
		return op, usagef("--op %q: want bcast, scatter, scatterv, gather, gatherv, reduce or alltoallv", o.op)
	}
	a := coll.Algorithm{Name: o.alg, SegSize: o.seg, K: o.k, Level: o.level, Base: o.base, Variant: o.variant}
	env := coll.Env{Topo: t, Bytes: o.size}
	if cost, _, err := tune.ModelCost(mf, n); err == nil {
		env.Cost = cost
	}
	s, err := a.BuildEnv(n, o.root, env)
	if err != nil {
		return op, usagef("--alg %s: %v", a, err)
	}
	tr, err := tune.CollectiveTree(s, op.Op)
	if err != nil {
		return op, usagef("--alg %s: %v", a, err)
	}
	op.Tree = &tr
	return op, nil
}

func printPrediction(w io.Writer, p *model.OperationPrediction) error {
	names := p.ModelNames()
	fmt.Fprintf(w, "%s: %d transfers\n", p.Op, len(p.Flows))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprint(tw, "src\tdst\tbytes\t")
	for _, n := range names {
		fmt.Fprintf(tw, "%s\t", n)
	}
	fmt.Fprintln(tw)
	for _, fl := range p.Flows {
		fmt.Fprintf(tw, "%d\t%d\t%s\t", fl.Src, fl.Dst, units.FormatSize(int64(fl.Bytes)))
		for _, n := range names {
			if v, ok := fl.EndS[n]; ok {
				fmt.Fprintf(tw, "%s\t", platform.FormatTime(v))
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ntotal:")
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "model\ttime\tsteps\tnote\t")
	for _, t := range p.Totals {
		steps := "-"
		if t.Steps > 0 {
			steps = strconv.Itoa(t.Steps)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", t.Model, platform.FormatTime(t.TimeS), steps, t.Note)
	}
	return tw.Flush()
}
