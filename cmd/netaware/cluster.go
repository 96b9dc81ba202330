package main

import (
	"fmt"
	"io"
	"maps"
	"math"
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

// clusterAlgorithms are the --algorithm values.
var clusterAlgorithms = []string{"auto", "agglomerative", "kmedoids", "dbscan", "hdbscan", "sss", "ssstree", "spectral", "components", "louvain", "modularity", "eco"}

func newClusterCmd() *cobra.Command {
	var (
		distance, algorithm, linkage, out string
		size, steps                       int
		seed                              uint64
		minJump                           float64
		asJSON                            bool
	)
	cmd := &cobra.Command{
		Use:   "cluster DATASET",
		Short: "Cluster the ranks of a dataset into topology levels, without being told how many groups",
		Long: `cluster reads a dataset (from 'netaware probe' or 'netaware discover'), turns
one of its sections into a rank-to-rank distance and clusters the ranks into
nested levels, finest first, written as a topology.json.

Distances (--distance):
  rtt        the minimum RTT of each pair, either direction
  plogp      seed 003 Eq. 3.3-3.4: t(m) = L + (o_s(m)+o_r(m))/2 + g(m) at
             --size bytes, symmetrized
  features   seed 003 Eq. 3.5-3.6: Euclidean distance between the ranks'
             PLogP feature vectors (L, o_s, o_r, g to every other rank)
  bandwidth  1 / achievable bandwidth (modularity methods use the bandwidth
             itself as edge weight, seed 000)

Nobody gives a number of clusters. Hierarchical methods (agglomerative,
ssstree, modularity) cut their hierarchy where the merge distance jumps (by --min-jump);
flat methods get their parameter (k, eps, alpha, threshold, resolution,
bound) from seed 003's linear search (Sect. 3.3) scored by the mean
silhouette, and give one level under "all". auto builds the average-linkage
dendrogram's levels and adds the best flat clustering of the searches (SSS,
ECO, DBSCAN, components, k-medoids) when it nests with them.

Every pair must be measured (a distance with holes is refused): the plogp and
features distances need a PLogP campaign over all ranks ('netaware probe plogp'
without --ranks, or 'netaware discover --level thorough').`,
		Example: `  netaware probe rtt --platform zhu-2racks --out d.json
  netaware cluster d.json --distance rtt --algorithm auto --out topology.json
  netaware cluster d.json --distance rtt --algorithm dbscan --out dbscan.json`,
		Args: cobra.ExactArgs(1),
	}
	f := cmd.Flags()
	f.StringVar(&distance, "distance", "plogp", "rtt, plogp, features or bandwidth")
	f.StringVar(&algorithm, "algorithm", "auto", strings.Join(clusterAlgorithms, ", "))
	f.StringVar(&linkage, "linkage", "average", "agglomerative: single, complete, average or ward")
	f.IntVar(&size, "size", 0, "plogp and features: message size m in bytes (must be measured)")
	f.IntVar(&steps, "steps", 50, "parameter search: points of the linear search (seed 003 Sect. 3.3)")
	f.Uint64Var(&seed, "seed", 1, "seed of the randomized methods (Louvain, spectral's k-means)")
	f.Float64Var(&minJump, "min-jump", 0.05, "hierarchy cut: smallest relative jump of merge distances between two levels")
	f.StringVar(&out, "out", "topology.json", "topology file to write")
	f.BoolVar(&asJSON, "json", false, "print the summary as JSON instead of a table")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if !contains(clusterAlgorithms, algorithm) {
			return usagef("--algorithm %q: want one of %s", algorithm, strings.Join(clusterAlgorithms, ", "))
		}
		link, err := cluster.ParseLinkage(linkage)
		if err != nil {
			return usagef("--linkage: %v", err)
		}
		if steps < 2 {
			return usagef("--steps %d: want 2 or more", steps)
		}
		if !(minJump > 0) {
			return usagef("--min-jump %g: want a positive fraction", minJump)
		}
		ds, err := dataset.Load(args[0])
		if err != nil {
			return err
		}
		dist, sim, err := datasetDistance(ds, distance, size)
		if err != nil {
			return err
		}
		res, err := clusterLevels(dist, sim, algorithm, link, steps, seed, gapOptions(minJump))
		if err != nil {
			return fmt.Errorf("cluster %s: %w", args[0], err)
		}
		n := dist.N
		ranks := make([]topo.Rank, n)
		for i := range ranks {
			ranks[i] = topo.Rank{Rank: i}
			if i < len(ds.Ranks) && ds.Ranks[i].Host != "" {
				ranks[i].Host = ds.Ranks[i].Host
			}
		}
		res.params["distance"] = distance
		if distance == "plogp" || distance == "features" {
			res.params["size_bytes"] = size
		}
		t := &topo.Topology{Version: topo.Version, Size: n, Ranks: ranks, Levels: res.levels,
			Method: &topo.Method{Name: algorithm, Params: res.params}}
		if err := t.Validate(); err != nil {
			return fmt.Errorf("cluster: topology: %w", err)
		}
		if err := t.WriteFile(out); err != nil {
			return err
		}
		sum := summarizeCluster(args[0], t, out)
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

// datasetDistance builds the distance matrix (and a similarity for the
// modularity methods) from a dataset section.
func datasetDistance(ds *dataset.Dataset, kind string, size int) (dist, sim *cluster.Matrix, err error) {
	n := ds.World.Size
	var missing int
	switch kind {
	case "rtt":
		if ds.RTT == nil {
			return nil, nil, usagef("--distance rtt: the dataset has no rtt section")
		}
		m := ds.RTTMin()
		dist, missing, err = cluster.RTTDistance(n, func(i, j int) []float64 {
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
			dist, missing, err = cluster.PLogPDistance(n, at)
		} else {
			var v [][]float64
			if v, err = cluster.PLogPFeatures(n, at); err == nil {
				dist, err = cluster.EuclideanDistance(v)
			}
		}
	case "bandwidth":
		if ds.Bandwidth == nil {
			return nil, nil, usagef("--distance bandwidth: the dataset has no bandwidth section")
		}
		m := ds.BandwidthMatrix()
		sim, missing, err = cluster.BandwidthSimilarity(n, func(i, j int) (float64, bool) {
			v := m[i][j]
			return v, !math.IsNaN(v)
		})
		if err == nil && missing == 0 {
			dist, err = cluster.BandwidthDistance(sim)
		}
	default:
		return nil, nil, usagef("--distance %q: want rtt, plogp, features or bandwidth", kind)
	}
	if err != nil {
		return nil, nil, err
	}
	if missing > 0 {
		return nil, nil, fmt.Errorf("--distance %s: %d rank pairs are not measured; measure every pair", kind, missing)
	}
	if sim == nil {
		sim = inverse(dist)
	}
	return dist, sim, nil
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

// inverse is the similarity 1/d of a distance (0 on the diagonal).
func inverse(d *cluster.Matrix) *cluster.Matrix {
	s := cluster.NewMatrix(d.N)
	for i := 0; i < d.N; i++ {
		for j := i + 1; j < d.N; j++ {
			v := d.At(i, j)
			if v > 0 {
				s.Set(i, j, 1/v)
			} else {
				s.Set(i, j, math.MaxFloat64/float64(d.N*d.N))
			}
		}
	}
	return s
}

type clusterResult struct {
	levels []topo.Level
	params map[string]any
}

// clusterLevels runs one algorithm, its parameters chosen automatically.
// gapOptions is the hierarchy cut: the cluster package's rule with the
// given smallest jump. The default 5% (the package's own is 25%) is five
// times the spread of a band of PLogP distances measured with R = 32
// repetitions (about 1%, e.g. 50.6 to 51.1 us inside bordeaux-2013's
// clusters), and what separates Bordereau from Borderline there (51.1 to
// 55.7 us, a 9% jump); the spread factor still keeps a widely spread band
// whole.
func gapOptions(minJump float64) cluster.GapOptions {
	g := cluster.DefaultGapOptions()
	g.MinJump = minJump
	return g
}

func clusterLevels(d, sim *cluster.Matrix, algorithm string, link cluster.Linkage, steps int, seed uint64, gap cluster.GapOptions) (clusterResult, error) {
	n := d.N
	res := clusterResult{params: map[string]any{}}
	flat := func(name string, r *cluster.SearchResult, err error) (clusterResult, error) {
		if err != nil {
			return res, err
		}
		best, err := r.BestTrial()
		if err != nil {
			return res, fmt.Errorf("%s: %w", name, err)
		}
		res.params["parameter"], res.params["silhouette"] = best.X, best.Score
		res.levels, err = cluster.LevelsFromPartitions(n, []cluster.Labels{withoutNoise(best.Labels)})
		return res, err
	}
	var err error
	switch algorithm {
	case "agglomerative":
		res.params["linkage"] = linkName(link)
		res.params["min_jump"] = gap.MinJump
		res.levels, err = cluster.LevelsFromDistances(d, link, gap)
		return res, err
	case "kmedoids":
		r, err := cluster.SearchKMedoids(d, min(steps, max(1, n-1)))
		return flat("kmedoids", r, err)
	case "dbscan":
		r, err := cluster.SearchDBSCAN(d, 2, steps)
		return flat("dbscan", r, err)
	case "components":
		r, err := cluster.SearchConnectedComponents(d, steps)
		return flat("components", r, err)
	case "sss":
		r, err := cluster.SearchSSS(d, steps)
		return flat("sss", r, err)
	case "eco":
		r, err := cluster.SearchECO(d, steps)
		return flat("eco", r, err)
	case "louvain":
		r, err := cluster.SearchLouvain(sim, d, seed, steps)
		return flat("louvain", r, err)
	case "spectral":
		r, err := cluster.LinearSearch(cluster.ClusterCountSpace(n), min(steps, max(1, n-1)), func(x float64) (cluster.Labels, error) {
			return cluster.Spectral(d, int(x), cluster.SpectralOptions{Seed: seed})
		}, cluster.SilhouetteCriterion(d))
		return flat("spectral", r, err)
	case "hdbscan":
		r, err := cluster.HDBSCAN(d, cluster.HDBSCANOptions{})
		if err != nil {
			return res, err
		}
		res.levels, err = cluster.LevelsFromPartitions(n, []cluster.Labels{withoutNoise(r.Labels)})
		return res, err
	case "ssstree":
		r, err := cluster.SearchSSSTree(d, 1, steps)
		if err != nil {
			return res, err
		}
		best, err := r.BestTrial()
		if err != nil {
			return res, err
		}
		tr, err := cluster.SSSTree(d, best.X, 0)
		if err != nil {
			return res, err
		}
		res.params["alpha"] = best.X
		res.levels, err = tr.Levels(n)
		return res, err
	case "modularity":
		h, err := cluster.HierarchicalModularity(sim, 1, seed)
		if err != nil {
			return res, err
		}
		res.levels, err = cluster.ModularityLevels(n, h)
		return res, err
	case "auto":
		res.params["linkage"] = "average"
		res.params["min_jump"] = gap.MinJump
		if res.levels, err = cluster.LevelsFromDistances(d, cluster.AverageLinkage, gap); err != nil {
			return res, err
		}
		return autoFlat(d, steps, res)
	}
	return res, fmt.Errorf("unknown algorithm %q", algorithm)
}

// autoFlat runs the flat searches, keeps the clustering with the best
// silhouette and adds it to the dendrogram's levels when it nests.
func autoFlat(d *cluster.Matrix, steps int, res clusterResult) (clusterResult, error) {
	n := d.N
	type cand struct {
		name string
		run  func() (*cluster.SearchResult, error)
	}
	cands := []cand{
		{"sss", func() (*cluster.SearchResult, error) { return cluster.SearchSSS(d, steps) }},
		{"eco", func() (*cluster.SearchResult, error) { return cluster.SearchECO(d, steps) }},
		{"dbscan", func() (*cluster.SearchResult, error) { return cluster.SearchDBSCAN(d, 2, steps) }},
		{"components", func() (*cluster.SearchResult, error) { return cluster.SearchConnectedComponents(d, steps) }},
		{"kmedoids", func() (*cluster.SearchResult, error) { return cluster.SearchKMedoids(d, min(steps, max(1, n-1))) }},
	}
	bestName, bestScore := "", math.Inf(-1)
	var bestLabels cluster.Labels
	for _, c := range cands {
		r, err := c.run()
		if err != nil {
			return res, fmt.Errorf("auto %s: %w", c.name, err)
		}
		if t, err := r.BestTrial(); err == nil && t.Score > bestScore {
			bestName, bestScore, bestLabels = c.name, t.Score, t.Labels
		}
	}
	if bestLabels == nil {
		return res, nil
	}
	res.params["best_flat"], res.params["best_flat_silhouette"] = bestName, bestScore
	flat, err := cluster.LevelsFromPartitions(n, []cluster.Labels{withoutNoise(bestLabels)})
	if err != nil || len(flat) < 2 {
		return res, nil // one group: nothing to add
	}
	l := flat[0]
	l.Name = "auto-" + bestName
	res.levels = insertLevel(res.levels, l, n)
	return res, nil
}

// withoutNoise gives every noise point (DBSCAN, HDBSCAN) a cluster of its
// own, since levels must place every rank.
func withoutNoise(l cluster.Labels) cluster.Labels {
	out := append(cluster.Labels(nil), l...)
	next := 0
	for _, v := range l {
		next = max(next, v+1)
	}
	for i, v := range out {
		if v == cluster.Noise {
			out[i] = next
			next++
		}
	}
	return out
}

func linkName(l cluster.Linkage) string {
	for _, s := range []string{"single", "complete", "average", "ward"} {
		if x, err := cluster.ParseLinkage(s); err == nil && x == l {
			return s
		}
	}
	return fmt.Sprint(l)
}

// clusterSummary is what 'cluster' prints (its --json output).
type clusterSummary struct {
	Dataset      string         `json:"dataset"`
	Ranks        int            `json:"ranks"`
	Method       string         `json:"method"`
	Params       map[string]any `json:"params"`
	Levels       []levelSummary `json:"levels"`
	TopologyFile string         `json:"topology_file"`
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
