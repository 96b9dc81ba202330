package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"netaware/cluster"
	"netaware/dataset"
	"netaware/metrics"
	"netaware/topo"
)

func init() { register(newClusterCmd) }

// clusterOptions are 'netaware cluster”s options.
type clusterOptions struct {
	streams
	input, distance, linkage, outFile string
	size                              int
	asJSON                            bool
	csv                               bool
	opt                               cluster.Options
}

func newClusterOptions() *clusterOptions {
	o := &clusterOptions{distance: "plogp", outFile: "topology.json", opt: cluster.DefaultOptions()}
	o.linkage = o.opt.Linkage.String()
	return o
}

func newClusterCmd() *cobra.Command {
	o := newClusterOptions()
	cmd := &cobra.Command{
		Use:   "cluster DATASET|MATRIX.csv",
		Short: "Cluster the ranks of a dataset into topology levels, without being told how many groups",
		Long: `cluster reads a dataset (from 'netaware probe' or 'netaware discover'), or a
matrix from a CSV file, turns it into a rank-to-rank distance and clusters
the ranks into nested levels, finest first, written as a topology.json.

Distances (--distance):
  rtt        the minimum RTT of each pair, either direction
  plogp      seed 003 Eq. 3.3-3.4: t(m) = L + (o_s(m)+o_r(m))/2 + g(m) at
             --size bytes, symmetrized
  features   seed 003 Eq. 3.5-3.6: Euclidean distance between the ranks'
             PLogP feature vectors (L, o_s, o_r, g to every other rank)
  bandwidth  1 / achievable bandwidth (modularity methods use the bandwidth
             itself as edge weight, seed 000)

A file ending in .csv is a matrix: labels in the first row and column, one
value per pair, an empty cell for a pair not measured (docs/clustering.md).
Its values are distances (--distance distance, the default for CSV) or
bandwidths (--distance bandwidth); the labels become the host names.

Nobody gives a number of clusters. Hierarchical methods (agglomerative,
ssstree, modularity) cut their hierarchy where the merge distance jumps (by --min-jump);
flat methods get their parameter (k, eps, alpha, threshold, resolution,
bound) from seed 003's linear search (Sect. 3.3) scored by the mean
silhouette, and give one level under "all". auto builds the average-linkage
dendrogram's levels and adds the best flat clustering of the searches (SSS,
ECO, DBSCAN, components, k-medoids) when it nests with them.

Incomplete data: ranks with no measured pair (a campaign run with --ranks)
are left out, and the measured ranks are clustered as ranks 0..k-1 of the
topology (their dataset ranks are listed under the method's "ranks"). When
pairs among them are still missing (sites monitored on their own, seed 004
Sect. 3), eco and auto run ECO with its 20% bound, a missing pair never
merging, and auto adds the groups joined by measured pairs as the next
level; the other algorithms need every pair. What was done is printed.`,
		Example: `  netaware probe rtt --platform zhu-2racks --out d.json
  netaware cluster d.json --distance rtt --algorithm auto --out topology.json
  netaware cluster d.json --distance rtt --algorithm dbscan --out dbscan.json
  netaware probe rtt --platform grid5000-4sites --ranks 0-3,16-19 --out part.json
  netaware cluster part.json --distance rtt --out part-topology.json
  printf ',a,b,c,d\na,,1,9,\nb,1,,9,\nc,9,9,,2\nd,,,2,\n' > lat.csv
  netaware cluster lat.csv --algorithm eco --out lat-topology.json`,
		Args: cobra.ExactArgs(1),
		RunE: runOptions(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.distance, "distance", o.distance, "rtt, plogp, features or bandwidth; for a CSV matrix: distance (its default) or bandwidth")
	f.StringVar(&o.opt.Algorithm, "algorithm", o.opt.Algorithm, strings.Join(cluster.Algorithms, ", "))
	f.StringVar(&o.linkage, "linkage", o.linkage, "agglomerative: single, complete, average or ward")
	f.IntVar(&o.size, "size", o.size, "plogp and features: message size m in bytes (must be measured)")
	f.IntVar(&o.opt.Steps, "steps", o.opt.Steps, "parameter search: points of the linear search (seed 003 Sect. 3.3)")
	f.Uint64Var(&o.opt.Seed, "seed", o.opt.Seed, "seed of the randomized methods (Louvain, spectral's k-means)")
	f.Float64Var(&o.opt.Gap.MinJump, "min-jump", o.opt.Gap.MinJump, "hierarchy cut: smallest relative jump of merge distances between two levels")
	f.StringVar(&o.outFile, "out", o.outFile, "topology file to write")
	f.BoolVar(&o.asJSON, "json", o.asJSON, "print the summary as JSON instead of a table")
	return cmd
}

func (o *clusterOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.input = args[0]
	o.csv = strings.HasSuffix(strings.ToLower(o.input), ".csv")
	if o.csv && !cmd.Flags().Changed("distance") {
		o.distance = "distance"
	}
	return nil
}

func (o *clusterOptions) validate() error {
	link, err := cluster.ParseLinkage(o.linkage)
	if err != nil {
		return usagef("--linkage: %v", err)
	}
	o.opt.Linkage = link
	if err := o.opt.Validate(); err != nil {
		return usagef("%v", err)
	}
	switch {
	case o.csv && o.distance != "distance" && o.distance != "bandwidth":
		return usagef("--distance %q: a CSV matrix holds distances (distance) or bandwidths (bandwidth)", o.distance)
	case !o.csv && !slices.Contains(dataset.Distances, o.distance):
		return usagef("--distance %q: want rtt, plogp, features or bandwidth", o.distance)
	}
	return nil
}

func (o *clusterOptions) run(context.Context) error {
	dist, sim, hosts, err := o.load()
	if err != nil {
		return err
	}
	var notes []string
	points := cluster.MeasuredPoints(dist)
	if len(points) < 2 {
		return fmt.Errorf("cluster %s: --distance %s: %d ranks have a measured pair; nothing to cluster", o.input, o.distance, len(points))
	}
	world := dist.N
	if len(points) < world {
		notes = append(notes, fmt.Sprintf("%d of %d ranks have measured pairs (%s): clustering those as ranks 0-%d", len(points), world, topo.FormatRanks(points), len(points)-1))
		dist, sim = dist.Sub(points), sim.Sub(points)
	}
	res, err := cluster.Run(dist, sim, o.opt)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", o.input, err)
	}
	notes = append(notes, res.Notes...)
	n := dist.N
	ranks := make([]topo.Rank, n)
	for i, p := range points {
		ranks[i] = topo.Rank{Rank: i}
		if p < len(hosts) {
			ranks[i].Host = hosts[p]
		}
	}
	res.Params["distance"] = o.distance
	if o.distance == "plogp" || o.distance == "features" {
		res.Params["size_bytes"] = o.size
	}
	if len(points) < world {
		res.Params["ranks"] = topo.FormatRanks(points)
	}
	t := &topo.Topology{Version: topo.Version, Size: n, Ranks: ranks, Levels: res.Levels,
		Method: &topo.Method{Name: o.opt.Algorithm, Params: res.Params}}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("cluster: topology: %w", err)
	}
	if err := t.WriteFile(o.outFile); err != nil {
		return err
	}
	sum := summarizeCluster(o.input, t, o.outFile)
	sum.Notes = notes
	if o.asJSON {
		return probeWriteJSON(o.out, sum)
	}
	printClusterSummary(o.out, sum)
	return nil
}

// load reads the distance and similarity matrices and the ranks' host
// names from the dataset or the CSV matrix.
func (o *clusterOptions) load() (dist, sim *cluster.Matrix, hosts []string, err error) {
	if o.csv {
		f, err := os.Open(o.input)
		if err != nil {
			return nil, nil, nil, err
		}
		defer f.Close()
		lm, err := cluster.ReadMatrixCSV(f)
		if err == nil {
			dist, sim, err = lm.Distances(o.distance == "bandwidth")
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", o.input, err)
		}
		return dist, sim, lm.Labels, nil
	}
	ds, err := dataset.Load(o.input)
	if err != nil {
		return nil, nil, nil, err
	}
	var missing *dataset.MissingSectionError
	switch dist, sim, err = ds.Distance(o.distance, o.size); {
	case errors.As(err, &missing):
		return nil, nil, nil, usagef("--distance %s: %v", o.distance, err)
	case err != nil && o.distance == "features":
		return nil, nil, nil, fmt.Errorf("--distance features %v", err)
	case err != nil:
		return nil, nil, nil, err
	}
	for _, r := range ds.Ranks {
		hosts = append(hosts, r.Host)
	}
	return dist, sim, hosts, nil
}

// clusterSummary is what 'cluster' prints (its --json output).
type clusterSummary struct {
	Dataset      string         `json:"dataset"`
	Ranks        int            `json:"ranks"`
	Method       string         `json:"method"`
	Params       map[string]any `json:"params"`
	Levels       []levelSummary `json:"levels"`
	TopologyFile string         `json:"topology_file"`
	Notes        []string       `json:"notes,omitempty"` // what was done with unmeasured ranks and pairs
}

// levelSummary is a level's group count and sizes.
type levelSummary struct {
	Name       string `json:"name"`
	Groups     int    `json:"groups"`
	MinSize    int    `json:"min_size"`
	MedianSize int    `json:"median_size"`
	MaxSize    int    `json:"max_size"`
}

func summarizeLevel(l topo.Level) levelSummary {
	lo, median, hi := metrics.GroupSizes(l)
	return levelSummary{Name: l.Name, Groups: len(l.Groups), MinSize: int(lo), MedianSize: int(median), MaxSize: int(hi)}
}

func summarizeCluster(dataset string, t *topo.Topology, out string) clusterSummary {
	s := clusterSummary{Dataset: dataset, Ranks: t.Size, Method: t.Method.Name, Params: t.Method.Params, TopologyFile: out}
	for _, l := range t.Levels {
		s.Levels = append(s.Levels, summarizeLevel(l))
	}
	return s
}

// formatParams prints parameters as sorted key=value pairs.
func formatParams(p map[string]any) string {
	keys := slices.Sorted(maps.Keys(p))
	kv := make([]string, len(keys))
	for i, k := range keys {
		v := p[k]
		if f, ok := v.(float64); ok {
			v = strconv.FormatFloat(f, 'g', 4, 64)
		}
		kv[i] = fmt.Sprintf("%s=%v", k, v)
	}
	return strings.Join(kv, "  ")
}

func printClusterSummary(w io.Writer, s clusterSummary) {
	fmt.Fprintf(w, "cluster %s: %d ranks, method %s\n", s.Dataset, s.Ranks, s.Method)
	for _, n := range s.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if len(s.Params) > 0 {
		fmt.Fprintf(w, "parameters: %s\n", formatParams(s.Params))
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LEVEL\tGROUPS\tSIZES (min/median/max)")
	for _, l := range s.Levels {
		fmt.Fprintf(tw, "%s\t%d\t%d/%d/%d\n", l.Name, l.Groups, l.MinSize, l.MedianSize, l.MaxSize)
	}
	tw.Flush()
	fmt.Fprintf(w, "wrote %s\n", s.TopologyFile)
}
