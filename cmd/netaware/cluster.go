package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"netaware/cluster"
	"netaware/dataset"
	"netaware/topo"
)

func init() { register(newClusterCmd) }

func newClusterCmd() *cobra.Command {
	var (
		distance, algorithm, linkage, out string
		size                              int
		minJump                           float64
		asJSON                            bool
	)
	opt := cluster.DefaultOptions()
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
	}
	f := cmd.Flags()
	f.StringVar(&distance, "distance", "plogp", "rtt, plogp, features or bandwidth; for a CSV matrix: distance (its default) or bandwidth")
	f.StringVar(&algorithm, "algorithm", opt.Algorithm, strings.Join(cluster.Algorithms, ", "))
	f.StringVar(&linkage, "linkage", "average", "agglomerative: single, complete, average or ward")
	f.IntVar(&size, "size", 0, "plogp and features: message size m in bytes (must be measured)")
	f.IntVar(&opt.Steps, "steps", opt.Steps, "parameter search: points of the linear search (seed 003 Sect. 3.3)")
	f.Uint64Var(&opt.Seed, "seed", opt.Seed, "seed of the randomized methods (Louvain, spectral's k-means)")
	f.Float64Var(&minJump, "min-jump", opt.Gap.MinJump, "hierarchy cut: smallest relative jump of merge distances between two levels")
	f.StringVar(&out, "out", "topology.json", "topology file to write")
	f.BoolVar(&asJSON, "json", false, "print the summary as JSON instead of a table")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		opt.Algorithm = algorithm
		opt.Gap.MinJump = minJump
		link, err := cluster.ParseLinkage(linkage)
		if err != nil {
			return usagef("--linkage: %v", err)
		}
		opt.Linkage = link
		if err := opt.Validate(); err != nil {
			return usagef("%v", err)
		}
		var (
			dist, sim *cluster.Matrix
			hosts     []string
		)
		if strings.HasSuffix(strings.ToLower(args[0]), ".csv") {
			if !cmd.Flags().Changed("distance") {
				distance = "distance"
			}
			dist, sim, hosts, err = csvDistance(args[0], distance)
		} else {
			var ds *dataset.Dataset
			if ds, err = dataset.Load(args[0]); err != nil {
				return err
			}
			dist, sim, err = datasetDistance(ds, distance, size)
			for _, r := range ds.Ranks {
				hosts = append(hosts, r.Host)
			}
		}
		if err != nil {
			return err
		}
		var notes []string
		points := cluster.MeasuredPoints(dist)
		if len(points) < 2 {
			return fmt.Errorf("cluster %s: --distance %s: %d ranks have a measured pair; nothing to cluster", args[0], distance, len(points))
		}
		world := dist.N
		if len(points) < world {
			notes = append(notes, fmt.Sprintf("%d of %d ranks have measured pairs (%s): clustering those as ranks 0-%d", len(points), world, topo.FormatRanks(points), len(points)-1))
			dist, sim = dist.Sub(points), sim.Sub(points)
		}
		res, err := cluster.Run(dist, sim, opt)
		if err != nil {
			return fmt.Errorf("cluster %s: %w", args[0], err)
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
		res.Params["distance"] = distance
		if distance == "plogp" || distance == "features" {
			res.Params["size_bytes"] = size
		}
		if len(points) < world {
			res.Params["ranks"] = topo.FormatRanks(points)
		}
		t := &topo.Topology{Version: topo.Version, Size: n, Ranks: ranks, Levels: res.Levels,
			Method: &topo.Method{Name: algorithm, Params: res.Params}}
		if err := t.Validate(); err != nil {
			return fmt.Errorf("cluster: topology: %w", err)
		}
		if err := t.WriteFile(out); err != nil {
			return err
		}
		sum := summarizeCluster(args[0], t, out)
		sum.Notes = notes
		if asJSON {
			return probeWriteJSON(cmd.OutOrStdout(), sum)
		}
		printClusterSummary(cmd.OutOrStdout(), sum)
		return nil
	}
	return cmd
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// csvDistance reads a CSV matrix of distances or bandwidths.
func csvDistance(path, kind string) (dist, sim *cluster.Matrix, labels []string, err error) {
	if kind != "distance" && kind != "bandwidth" {
		return nil, nil, nil, usagef("--distance %q: a CSV matrix holds distances (distance) or bandwidths (bandwidth)", kind)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	lm, err := cluster.ReadMatrixCSV(f)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if kind == "distance" {
		return lm.M, cluster.InverseSimilarity(lm.M), lm.Labels, nil
	}
	if dist, err = cluster.BandwidthDistance(lm.M); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return dist, lm.M, lm.Labels, nil
}

// datasetDistance builds the distance matrix (and a similarity for the
// modularity methods) from a dataset section; unmeasured pairs are NaN.
func datasetDistance(ds *dataset.Dataset, kind string, size int) (dist, sim *cluster.Matrix, err error) {
	n := ds.World.Size
	switch kind {
	case "rtt":
		if ds.RTT == nil {
			return nil, nil, usagef("--distance rtt: the dataset has no rtt section")
		}
		m := ds.RTTMin()
		dist, _, err = cluster.RTTDistance(n, func(i, j int) []float64 {
			if v := m[i][j]; !math.IsNaN(v) {
				return []float64{v}
			}
			return nil
		})
	case "plogp", "features":
		if ds.PLogP == nil {
			return nil, nil, usagef("--distance %s: the dataset has no plogp section", kind)
		}
		at := plogpAt(ds, size)
		if kind == "plogp" {
			dist, _, err = cluster.PLogPDistance(n, at)
		} else {
			// Eq. 3.5's vectors have an entry per rank: over the ranks
			// the campaign measured, embedded in the world's matrix.
			pts := plogpRanks(ds)
			var v [][]float64
			if v, err = cluster.PLogPFeatures(len(pts), func(i, j int) (cluster.PLogPParams, bool) { return at(pts[i], pts[j]) }); err != nil {
				return nil, nil, fmt.Errorf("--distance features needs every pair of the measured ranks (%w); --distance plogp takes holes", err)
			}
			var sub *cluster.Matrix
			if sub, err = cluster.EuclideanDistance(v); err != nil {
				return nil, nil, err
			}
			dist = cluster.NewMatrix(n)
			for i := range dist.Data {
				dist.Data[i] = math.NaN()
			}
			for a, i := range pts {
				for b, j := range pts {
					dist.Data[i*n+j] = sub.At(a, b)
				}
			}
		}
	case "bandwidth":
		if ds.Bandwidth == nil {
			return nil, nil, usagef("--distance bandwidth: the dataset has no bandwidth section")
		}
		m := ds.BandwidthMatrix()
		sim, _, err = cluster.BandwidthSimilarity(n, func(i, j int) (float64, bool) {
			v := m[i][j]
			return v, !math.IsNaN(v)
		})
		if err == nil {
			dist, err = cluster.BandwidthDistance(sim)
		}
	default:
		return nil, nil, usagef("--distance %q: want rtt, plogp, features or bandwidth", kind)
	}
	if err != nil {
		return nil, nil, err
	}
	if sim == nil {
		sim = cluster.InverseSimilarity(dist)
	}
	return dist, sim, nil
}

// plogpRanks lists the ranks of the dataset's PLogP pairs, in order.
func plogpRanks(ds *dataset.Dataset) []int {
	seen := map[int]bool{}
	for _, p := range ds.PLogP.Pairs {
		seen[p.A], seen[p.B] = true, true
	}
	return slices.Sorted(maps.Keys(seen))
}

// plogpAt reads the PLogP parameters of the ordered pair i->j at m bytes
// (of j->i when only that direction was measured).
func plogpAt(ds *dataset.Dataset, m int) func(i, j int) (cluster.PLogPParams, bool) {
	type key struct{ a, b int }
	idx := map[key]*dataset.PLogPResult{}
	for k := range ds.PLogP.Pairs {
		p := &ds.PLogP.Pairs[k]
		idx[key{p.A, p.B}] = &p.Result
	}
	return func(i, j int) (cluster.PLogPParams, bool) {
		r, ok := idx[key{i, j}]
		if !ok {
			// Campaigns measure each pair in one direction; the other
			// direction stands in (the feature vectors of Eq. 3.5 need
			// both).
			if r, ok = idx[key{j, i}]; !ok {
				return cluster.PLogPParams{}, false
			}
		}
		s, ok := r.At(m)
		if !ok {
			return cluster.PLogPParams{}, false
		}
		return cluster.PLogPParams{L: r.LS, Os: s.Os.Mean, Or: s.Or.Mean, G: s.GS}, true
	}
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
	sizes := make([]int, len(l.Groups))
	for i, g := range l.Groups {
		sizes[i] = len(g)
	}
	slices.Sort(sizes)
	ls := levelSummary{Name: l.Name, Groups: len(l.Groups)}
	if len(sizes) > 0 {
		ls.MinSize, ls.MedianSize, ls.MaxSize = sizes[0], sizes[len(sizes)/2], sizes[len(sizes)-1]
	}
	return ls
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
