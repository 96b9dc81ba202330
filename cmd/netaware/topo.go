package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"netaware/internal/atomicfile"
	"netaware/metrics"
	"netaware/score"
	"netaware/topo"
)

func init() { register(newTopoCmd) }

func newTopoCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topo",
		Short: "Convert, show and score topology files",
		Long: `Work with topology.json files (the format of docs/topology-format.md) that discovery writes.

  convert  write a topology as Graphviz DOT, a Slurm topology.conf, an MPICH
           coordinates file, an LGate group file, a text tree or JSON; read
           LGate, Slurm and MPICH files back into topology.json
  show     print a topology as a readable tree with a level summary
  compare  score a topology against ground truth (a platform or another
           topology.json): NMI, adjusted Rand index and accuracy per level,
           shared-link query errors and latency-prediction ratios

See docs/topology-files.md for the formats.`,
		Example: `  netaware topo show topology.json
  netaware topo convert topology.json --to slurm -o topology.conf
  netaware topo compare topology.json --truth zhu-2racks`,
	}
	cmd.AddCommand(newTopoConvertCmd(), newTopoShowCmd(), newTopoCompareCmd())
	return cmd
}

var topoFormats = []string{"json", "dot", "slurm", "slurm-yaml", "mpich-coords", "lgate", "text"}
var topoInputFormats = []string{"json", "lgate", "slurm", "mpich-coords"}

// topoFormatAliases are other names accepted for a format.
var topoFormatAliases = map[string]string{"mpich": "mpich-coords", "graphviz": "dot"}

// canonicalFormat is the format name (or alias) in its listed spelling.
func canonicalFormat(name string) string {
	if c, ok := topoFormatAliases[strings.ToLower(name)]; ok {
		return c
	}
	return strings.ToLower(name)
}

// topoConvertOptions are 'netaware topo convert”s options.
type topoConvertOptions struct {
	streams
	in, to, from, outFile, hostsFrom string
}

func newTopoConvertCmd() *cobra.Command {
	o := &topoConvertOptions{from: "json"}
	cmd := &cobra.Command{
		Use:   "convert IN --to FORMAT [-o OUT]",
		Short: "Convert a topology to DOT, Slurm, MPICH, LGate, text or JSON",
		Long: `Convert reads a topology (topology.json unless --from says otherwise) and writes
it in another format, to standard output or atomically to -o OUT.

Output formats (--to):
  json          topology.json (docs/topology-format.md), validated and laid out one item a line
  dot           Graphviz: the inferred tree when there is one, else the levels as
                nested clusters (render with 'dot -Tsvg')
  slurm         topology.conf for Slurm's topology/tree plugin; ranks are collapsed
                to their hosts, so every rank needs a host name
  slurm-yaml    topology.yaml for Slurm 24.11 and later: the same switch tree
                (cluster default) and a block topology of the leaf switches
  mpich-coords  the file MPICH reads from MPIR_CVAR_COORDINATES_FILE
                ("rank: group_id switch_id port"); "mpich" for short
  lgate         the nested cluster/group file of the LGate test harness (seed 003)
  text          the tree 'netaware topo show' prints

Input formats (--from):
  json (default), lgate, mpich-coords, and slurm; a topology.conf names hosts,
  not ranks, so --from slurm also needs --hosts-from FILE, a topology.json whose
  ranks carry the host names.`,
		Example: `  netaware topo convert topology.json --to dot -o topology.dot && dot -Tsvg topology.dot -o topology.svg
  netaware topo convert topology.json --to slurm -o /etc/slurm/topology.conf
  netaware topo convert topology.json --to slurm-yaml -o /etc/slurm/topology.yaml
  netaware topo convert topology.json --to mpich-coords -o coords.txt
  MPIR_CVAR_COORDINATES_FILE=coords.txt mpiexec -n 64 ./app
  netaware topo convert groups.lgate --from lgate --to json -o topology.json`,
		Args: cobra.ExactArgs(1),
		RunE: runOptions(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.to, "to", "", "output format: "+strings.Join(topoFormats, ", ")+" (mpich is mpich-coords)")
	f.StringVar(&o.from, "from", o.from, "input format: "+strings.Join(topoInputFormats, ", ")+" (mpich is mpich-coords)")
	f.StringVarP(&o.outFile, "output", "o", "", "write to this file (atomically) instead of standard output")
	f.StringVar(&o.hostsFrom, "hosts-from", "", "with --from slurm: topology.json giving each rank's host name")
	return cmd
}

func (o *topoConvertOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.in = args[0]
	o.to, o.from = canonicalFormat(o.to), canonicalFormat(o.from)
	return nil
}

func (o *topoConvertOptions) validate() error {
	if o.to == "" {
		return usagef("topo convert needs --to FORMAT (%s)", strings.Join(topoFormats, ", "))
	}
	if !slices.Contains(topoFormats, o.to) {
		return usagef("--to %q: want one of %s", o.to, strings.Join(topoFormats, ", "))
	}
	if !slices.Contains(topoInputFormats, o.from) {
		return usagef("--from %q: want one of %s", o.from, strings.Join(topoInputFormats, ", "))
	}
	if o.from == "slurm" && o.hostsFrom == "" {
		return usagef("--from slurm needs --hosts-from FILE (a topology.json with the ranks' host names)")
	}
	if o.from != "slurm" && o.hostsFrom != "" {
		return usagef("--hosts-from only applies to --from slurm")
	}
	return nil
}

func (o *topoConvertOptions) run(context.Context) error {
	t, err := readTopologyAs(o.in, o.from, o.hostsFrom)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := writeTopologyAs(&buf, t, o.to); err != nil {
		return fmt.Errorf("%s -> %s: %w", o.in, o.to, err)
	}
	if o.outFile == "" || o.outFile == "-" {
		_, err := o.out.Write(buf.Bytes())
		return err
	}
	if err := atomicfile.WriteFile(o.outFile, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(o.out, "wrote %s\n", o.outFile)
	return nil
}

func readTopologyAs(path, format, hostsFrom string) (*topo.Topology, error) {
	if format == "json" {
		return topo.ReadFile(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var t *topo.Topology
	switch format {
	case "lgate":
		t, err = topo.ReadLGate(f)
	case "mpich-coords":
		t, err = topo.ReadMPICHCoordsTopology(f)
	case "slurm":
		var hosts *topo.Topology
		if hosts, err = topo.ReadFile(hostsFrom); err != nil {
			return nil, fmt.Errorf("--hosts-from: %w", err)
		}
		t, err = topo.ReadSlurmTopology(f, hosts.Ranks)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func writeTopologyAs(w io.Writer, t *topo.Topology, format string) error {
	switch format {
	case "json":
		return t.Write(w)
	case "dot":
		return t.WriteDOT(w)
	case "slurm":
		return t.WriteSlurm(w)
	case "slurm-yaml":
		return t.WriteSlurmYAML(w)
	case "mpich-coords":
		return t.WriteMPICHCoords(w)
	case "lgate":
		return t.WriteLGate(w)
	case "text":
		return t.WriteText(w)
	}
	return fmt.Errorf("unknown format %q", format)
}

// topoSummary is 'topo show --json': the summary part of the text (the
// nested groups and the tree are the file itself, see 'topo convert').
type topoSummary struct {
	File         string             `json:"file"`
	Ranks        int                `json:"ranks"`
	Hosts        int                `json:"hosts,omitempty"`
	Levels       []levelSummary     `json:"levels"`
	Method       *topo.Method       `json:"method,omitempty"`
	Measurements *topo.Measurements `json:"measurements,omitempty"`
	TreeSwitches int                `json:"tree_switches,omitempty"`
	TreeEdges    int                `json:"tree_edges,omitempty"`
}

func summarizeTopology(file string, t *topo.Topology) topoSummary {
	s := topoSummary{File: file, Ranks: t.Size, Method: t.Method, Measurements: t.Measurements}
	hosts := map[string]bool{}
	for _, r := range t.Ranks {
		if r.Host != "" {
			hosts[r.Host] = true
		}
	}
	s.Hosts = len(hosts)
	for _, l := range t.Levels {
		s.Levels = append(s.Levels, summarizeLevel(l))
	}
	if t.Tree != nil {
		for _, n := range t.Tree.Nodes {
			if n.Rank == nil {
				s.TreeSwitches++
			}
		}
		s.TreeEdges = len(t.Tree.Edges)
	}
	return s
}

// topoShowOptions are 'netaware topo show”s options.
type topoShowOptions struct {
	streams
	file   string
	asJSON bool
}

func newTopoShowCmd() *cobra.Command {
	o := &topoShowOptions{}
	cmd := &cobra.Command{
		Use:   "show FILE",
		Short: "Print a topology.json as a tree with a level summary",
		Long: `Show prints what a topology.json says, for people: how many ranks, hosts and
levels, how the topology was found and at what cost, each level's group count and
sizes, the groups nested from coarsest to finest with rank ranges and host names,
and the inferred tree (rooted at its center) with each edge's one-way latency and
bandwidth.`,
		Example: `  netaware topo show topology.json
  netaware topo show topology.json | less
  netaware topo show topology.json --json`,
		Args: cobra.ExactArgs(1),
		RunE: runOptions(o),
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the summary (ranks, hosts, levels, method, cost) as JSON")
	return cmd
}

func (o *topoShowOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.file = args[0]
	return nil
}

func (o *topoShowOptions) validate() error { return nil }

func (o *topoShowOptions) run(context.Context) error {
	t, err := topo.ReadFile(o.file)
	if err != nil {
		return err
	}
	if o.asJSON {
		return probeWriteJSON(o.out, summarizeTopology(o.file, t))
	}
	return t.WriteText(o.out)
}

// topoCompareOptions are 'netaware topo compare”s options.
type topoCompareOptions struct {
	streams
	found, truth string
	asJSON       bool
	score        score.Options
}

func newTopoCompareCmd() *cobra.Command {
	o := &topoCompareOptions{score: score.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "compare FILE --truth PLATFORM|FILE2",
		Short: "Score a topology against ground truth (NMI, ARI, accuracy, link queries, latency)",
		Long: `Compare scores a discovered topology.json against the truth: a platform (built-in
name or platform.yaml, whose ground-truth levels and routes are known) or a second
topology.json (FILE2, a file ending in .json).

For every true level it picks the found level with the highest normalized mutual
information (arithmetic normalization, as scikit-learn) and prints NMI, the
adjusted Rand index and seed 003's accuracy (Eq. 3.7-3.9: the fraction of ranks
whose cluster maps to their true group, clusters mapped one to one).

When the found topology has a tree and the truth has routes (a platform) or a
tree (FILE2), it also asks seed 002's random shared-link queries, "do A->B and
C->D share a link?", over random sets of 4 distinct hosts, and prints the
false-positive rate (of truly disjoint flow pairs, the fraction predicted to
share) and false-negative rate, twice: for any common link, and for a common link
crossed in the same direction (what competes on full-duplex links). Then it
prints the ratio predicted/true one-way latency over host pairs: the fraction
within 5% and 10% of 1.0, the median, and a histogram.`,
		Example: `  netaware topo compare topology.json --truth zhu-2racks
  netaware topo compare topology.json --truth platform.yaml --queries 100000 --seed 7
  netaware topo compare found.json --truth expected.json --json`,
		Args: cobra.ExactArgs(1),
		RunE: runOptions(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.truth, "truth", "", "ground truth: a platform (built-in name or platform.yaml) or a topology.json")
	f.BoolVar(&o.asJSON, "json", false, "print the scores as JSON")
	f.IntVar(&o.score.Queries, "queries", o.score.Queries, "number of random shared-link queries (0 = none)")
	f.Uint64Var(&o.score.Seed, "seed", o.score.Seed, "seed of the random queries and of the latency pair sample")
	f.IntVar(&o.score.MaxPairs, "max-pairs", o.score.MaxPairs, "latency ratios: sample this many host pairs at most")
	return cmd
}

func (o *topoCompareOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.found = args[0]
	return nil
}

func (o *topoCompareOptions) validate() error {
	if o.truth == "" {
		return usagef("topo compare needs --truth PLATFORM|FILE2")
	}
	if o.score.Queries < 0 || o.score.MaxPairs < 1 {
		return usagef("--queries must be >= 0 and --max-pairs >= 1")
	}
	return nil
}

func (o *topoCompareOptions) run(context.Context) error {
	found, err := topo.ReadFile(o.found)
	if err != nil {
		return err
	}
	truth, err := score.LoadTruth(o.truth)
	if err != nil {
		return fmt.Errorf("--truth: %w", err)
	}
	rep, err := score.Compare(found, o.found, truth, o.score)
	if err != nil {
		return err
	}
	if o.asJSON {
		enc := json.NewEncoder(o.out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printCompare(o.out, rep)
	return nil
}

func printCompare(w io.Writer, rep *score.Report) {
	fmt.Fprintf(w, "found: %s (%d ranks)\ntruth: %s %s\n", rep.Found, rep.Size, rep.TruthKind, rep.Truth)
	if len(rep.Levels) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "truth level\tgroups\tbest found level\tgroups\tNMI\tARI\taccuracy\t")
		for _, s := range rep.Levels {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%.4f\t%.4f\t%.4f\t\n", s.Truth, s.TruthGroups, s.Found, s.FoundGroups, s.NMI, s.ARI, s.Accuracy)
		}
		tw.Flush()
	}
	if rep.LinkQueries != nil {
		q := rep.LinkQueries
		fmt.Fprintf(w, "\nshared-link queries: %d random A->B vs C->D over %d %s (seed %d)\n", q.Queries, rep.Endpoints, rep.EndpointsOf, rep.QuerySeed)
		for _, row := range []struct {
			name string
			r    *metrics.LinkQueryResult
		}{{"any common link", rep.LinkQueries}, {"same direction", rep.DirQueries}} {
			r := row.r
			fmt.Fprintf(w, "  %-16s false positives %6.2f%% (%d of %d disjoint)   false negatives %6.2f%% (%d of %d sharing)\n",
				row.name, 100*r.FalsePositiveRate, r.FalsePositive, r.FalsePositive+r.TrueNegative,
				100*r.FalseNegativeRate, r.FalseNegative, r.FalseNegative+r.TruePositive)
		}
	}
	if l := rep.Latency; l != nil {
		fmt.Fprintf(w, "\nlatency predicted by the tree / true one-way latency, %d %s pairs", l.Pairs, strings.TrimSuffix(rep.EndpointsOf, "s"))
		if l.Skipped > 0 {
			fmt.Fprintf(w, " (%d skipped: true latency 0)", l.Skipped)
		}
		fmt.Fprintf(w, ":\n  within 5%%: %.1f%%   within 10%%: %.1f%%   median %.3f   mean %.3f   min %.3f   max %.3f\n",
			100*l.Within5, 100*l.Within10, l.Median, l.Mean, l.Min, l.Max)
		printHistogram(w, l)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// printHistogram draws the non-empty bins as bars scaled to the largest.
func printHistogram(w io.Writer, l *metrics.LatencySummary) {
	most := max(l.Under, l.Over)
	for _, b := range l.Bins {
		most = max(most, b.Count)
	}
	if most == 0 {
		return
	}
	bar := func(n int) string { return strings.Repeat("#", (n*40+most-1)/most) }
	if l.Under > 0 {
		fmt.Fprintf(w, "  %14s %7d %s\n", fmt.Sprintf("< %.2f", l.Bins[0].Lo), l.Under, bar(l.Under))
	}
	for _, b := range l.Bins {
		if b.Count > 0 {
			fmt.Fprintf(w, "  [%.2f, %.2f) %7d %s\n", b.Lo, b.Hi, b.Count, bar(b.Count))
		}
	}
	if l.Over > 0 {
		fmt.Fprintf(w, "  %14s %7d %s\n", fmt.Sprintf(">= %.2f", l.Bins[len(l.Bins)-1].Hi), l.Over, bar(l.Over))
	}
}
