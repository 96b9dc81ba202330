package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
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

type predictFlags struct {
	model, topology        string
	pattern, flows, counts string
	op, alg, size          string
	seg, k, level, root    int
	base, variant          string
	nicBW, backboneBW      string
	jsonOut, noContention  bool
}

func newPredictCmd() *cobra.Command {
	f := &predictFlags{}
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
	fl.StringVar(&f.model, "model", "", "model.json (required)")
	fl.StringVar(&f.topology, "topology", "", "topology.json: ranks' hosts and racks for the contention model, levels for topology-aware builders")
	fl.StringVar(&f.pattern, "pattern", "", `pattern file: "src dst bytes" per line`)
	fl.StringVar(&f.flows, "flows", "", "pattern inline: src>dst:bytes, comma separated, e.g. '0>15:8MiB,1>15:8MiB'")
	fl.StringVar(&f.op, "op", "", "collective: bcast, scatter, scatterv, gather, gatherv, reduce, alltoallv")
	fl.StringVar(&f.counts, "counts", "", "scatterv/gatherv: file of one byte count per rank; alltoallv: n rows of n counts")
	fl.StringVar(&f.alg, "alg", "binomial", "tree builder (see 'netaware tune bcast --help' for the names)")
	fl.StringVar(&f.size, "size", "1MiB", "bcast/reduce: the message; scatter/gather: the block of every rank")
	fl.IntVar(&f.root, "root", 0, "root rank")
	fl.IntVar(&f.seg, "seg", 0, "builder's segment size in bytes (0: its default)")
	fl.IntVar(&f.k, "k", 0, "builder's k (k-chain, knomial)")
	fl.IntVar(&f.level, "level", 0, "topology level of magpie, magpie2, interpipe (1-based; 0: coarsest split)")
	fl.StringVar(&f.base, "base", "", "base builder of magpie2 and hierarchical")
	fl.StringVar(&f.variant, "variant", "", "variant of model-binomial or prim")
	fl.StringVar(&f.nicBW, "nic-bw", "", "NIC bandwidth, e.g. 1Gbps (default: model.json's contention section)")
	fl.StringVar(&f.backboneBW, "backbone-bw", "", "backbone bandwidth between racks, e.g. 10Gbps (default: model.json's)")
	fl.BoolVar(&f.noContention, "no-contention", false, "pair models only")
	fl.BoolVar(&f.jsonOut, "json", false, "print the prediction as JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().NFlag() == 0 {
			// Bare, it is a command group (it has 'check'): its help.
			return cmd.Help()
		}
		pred, err := runPredict(f)
		if err != nil {
			return err
		}
		if f.jsonOut {
			return probeWriteJSON(cmd.OutOrStdout(), pred)
		}
		return printPrediction(cmd.OutOrStdout(), pred)
	}
	cmd.AddCommand(newPredictCheckCmd())
	return cmd
}

func runPredict(f *predictFlags) (*model.OperationPrediction, error) {
	if f.model == "" {
		return nil, usagef("predict: --model is required")
	}
	given := 0
	for _, v := range []string{f.pattern, f.flows, f.op} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return nil, usagef("predict: give exactly one of --pattern, --flows and --op")
	}
	mf, err := model.ReadFile(f.model)
	if err != nil {
		return nil, usagef("--model: %v", err)
	}
	n := mf.Size
	var t *topo.Topology
	if f.topology != "" {
		if t, err = topo.ReadFile(f.topology); err != nil {
			return nil, usagef("--topology: %v", err)
		}
		if t.Size != n {
			return nil, usagef("--topology %s has %d ranks, --model %d", f.topology, t.Size, n)
		}
	}
	ps := model.Predictors{}
	var op model.Operation
	if f.pattern != "" {
		if op.Transfers, err = readPattern(f.pattern, n); err != nil {
			return nil, usagef("--pattern: %v", err)
		}
		op.Op = "pattern"
	} else if f.flows != "" {
		if op.Transfers, err = parseFlows(f.flows, n); err != nil {
			return nil, usagef("--flows: %v", err)
		}
		op.Op = "pattern"
	} else {
		if op, err = predictOperation(f, mf, t); err != nil {
			return nil, err
		}
	}
	if op.Tree != nil || op.Op == "alltoallv" {
		if ps.Pair, err = model.PairModels(mf); err != nil {
			return nil, usagef("--model: %v", err)
		}
	}
	if !f.noContention {
		c, err := contentionFor(f, mf, t)
		if err != nil {
			return nil, err
		}
		fair := *c
		fair.FairnessOnly = true
		ps.Asymmetric, ps.Fairness = c, &fair
		if op.Op != "pattern" && mf.Hockney != nil {
			h, err := mf.HeteroHockney()
			if err != nil {
				return nil, usagef("--model: %v", err)
			}
			ps.Latency = func(i, j int) float64 { return h.At(i, j).AlphaS }
		}
	}
	pred, err := model.Predict(op, ps)
	if err != nil {
		return nil, err
	}
	return pred, nil
}

// contentionFor builds the asymmetric model from the file and the flags.
func contentionFor(f *predictFlags, mf *model.File, t *topo.Topology) (*model.Contention, error) {
	sec := model.ContentionSection{}
	if mf.Contention != nil {
		sec = *mf.Contention
	}
	if f.nicBW != "" {
		bw, err := platform.ParseBandwidth(f.nicBW)
		if err != nil || !(bw > 0) {
			return nil, usagef("--nic-bw %q: want a bandwidth such as 1Gbps", f.nicBW)
		}
		sec.BetaNICSPerByte = 1 / bw
	}
	backbone := 0.0
	if f.backboneBW != "" {
		bw, err := platform.ParseBandwidth(f.backboneBW)
		if err != nil || !(bw > 0) {
			return nil, usagef("--backbone-bw %q: want a bandwidth such as 10Gbps", f.backboneBW)
		}
		backbone = 1 / bw
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

// predictOperation builds the collective's tree (or transfers) from the
// flags.
func predictOperation(f *predictFlags, mf *model.File, t *topo.Topology) (model.Operation, error) {
	n := mf.Size
	size, err := parseSize("size", f.size)
	if err != nil {
		return model.Operation{}, err
	}
	if f.root < 0 || f.root >= n {
		return model.Operation{}, usagef("--root %d: want 0..%d", f.root, n-1)
	}
	op := model.Operation{Op: f.op, Bytes: size}
	switch f.op {
	case "alltoallv":
		if f.counts == "" {
			return op, usagef("--op alltoallv needs --counts (n rows of n byte counts)")
		}
		m, err := readMatrix(f.counts, n)
		if err != nil {
			return op, usagef("--counts: %v", err)
		}
		if op.Transfers, err = model.AlltoallvTransfers(m); err != nil {
			return op, usagef("--counts: %v", err)
		}
		return op, nil
	case "scatter", "gather":
		op.Counts = model.Uniform(n, float64(size))
		op.Op = f.op + "v"
	case "scatterv", "gatherv":
		if f.counts == "" {
			return op, usagef("--op %s needs --counts (one byte count per rank)", f.op)
		}
		m, err := readMatrix(f.counts, 1)
		if err != nil || len(m) != 1 || len(m[0]) != n {
			if err == nil {
				err = fmt.Errorf("want %d counts on one line", n)
			}
			return op, usagef("--counts: %v", err)
		}
		op.Counts = m[0]
	case "bcast", "reduce":
	default:
		return op, usagef("--op %q: want bcast, scatter, scatterv, gather, gatherv, reduce or alltoallv", f.op)
	}
	a := coll.Algorithm{Name: f.alg, SegSize: f.seg, K: f.k, Level: f.level, Base: f.base, Variant: f.variant}
	env := coll.Env{Topo: t, Bytes: size}
	if cost, _, err := tune.ModelCost(mf, n); err == nil {
		env.Cost = cost
	}
	s, err := a.BuildEnv(n, f.root, env)
	if err != nil {
		return op, usagef("--alg %s: %v", a, err)
	}
	tr, err := predictTree(s, op.Op)
	if err != nil {
		return op, usagef("--alg %s: %v", a, err)
	}
	op.Tree = &tr
	return op, nil
}

// predictTree is the tree a collective of coll runs on s: broadcasts need
// a tree schedule; scatter, gather and reduce use every schedule's tree
// (coll's Scatterv, Gatherv and Reduce do).
func predictTree(s *coll.Schedule, op string) (model.Tree, error) {
	if op == "bcast" || s.Kind == coll.KindTree {
		return tune.ScheduleTree(s)
	}
	t := model.Tree{Root: s.Root, Parent: append([]int(nil), s.Parent...), SegBytes: s.SegSize}
	for _, ch := range s.Children {
		t.Children = append(t.Children, append([]int(nil), ch...))
	}
	return t, t.Check()
}

// readPattern reads "src dst bytes" lines.
func readPattern(path string, n int) ([]model.Transfer, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out []model.Transfer
	sc := bufio.NewScanner(fh)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		fs := strings.Fields(text)
		if len(fs) == 0 {
			continue
		}
		if len(fs) != 3 {
			return nil, fmt.Errorf("%s:%d: want \"src dst bytes\", got %q", path, line, sc.Text())
		}
		src, e1 := strconv.Atoi(fs[0])
		dst, e2 := strconv.Atoi(fs[1])
		b, e3 := platform.ParseSize(fs[2])
		if e1 != nil || e2 != nil || e3 != nil || src < 0 || dst < 0 || src >= n || dst >= n || src == dst || b < 0 {
			return nil, fmt.Errorf("%s:%d: %q: want two distinct ranks in 0..%d and a size", path, line, sc.Text(), n-1)
		}
		out = append(out, model.Transfer{Src: src, Dst: dst, Bytes: float64(b)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no transfer", path)
	}
	return out, nil
}

// parseFlows reads "0>15:8MiB,1>15:8MiB".
func parseFlows(s string, n int) ([]model.Transfer, error) {
	var out []model.Transfer
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		pair, size, ok1 := strings.Cut(part, ":")
		a, b, ok2 := strings.Cut(pair, ">")
		src, e1 := strconv.Atoi(strings.TrimSpace(a))
		dst, e2 := strconv.Atoi(strings.TrimSpace(b))
		m, e3 := platform.ParseSize(strings.TrimSpace(size))
		if !ok1 || !ok2 || e1 != nil || e2 != nil || e3 != nil || src < 0 || dst < 0 || src >= n || dst >= n || src == dst {
			return nil, fmt.Errorf("%q: want src>dst:bytes with two distinct ranks in 0..%d", part, n-1)
		}
		out = append(out, model.Transfer{Src: src, Dst: dst, Bytes: float64(m)})
	}
	return out, nil
}

// readMatrix reads rows of byte counts (sizes like 8MiB allowed), cols per
// row; n rows when cols > 1.
func readMatrix(path string, cols int) ([][]float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]float64
	for i, line := range strings.Split(string(data), "\n") {
		text, _, _ := strings.Cut(line, "#")
		fs := strings.Fields(strings.ReplaceAll(text, ",", " "))
		if len(fs) == 0 {
			continue
		}
		row := make([]float64, len(fs))
		for j, s := range fs {
			b, err := platform.ParseSize(s)
			if err != nil || b < 0 {
				return nil, fmt.Errorf("%s:%d: %q is not a byte count", path, i+1, s)
			}
			row[j] = float64(b)
		}
		if cols > 1 && len(row) != cols {
			return nil, fmt.Errorf("%s:%d: %d counts, want %d", path, i+1, len(row), cols)
		}
		out = append(out, row)
	}
	if cols > 1 && len(out) != cols {
		return nil, fmt.Errorf("%s: %d rows, want %d", path, len(out), cols)
	}
	return out, nil
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
