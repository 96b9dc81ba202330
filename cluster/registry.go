package cluster

import (
	"fmt"
	"math"

	"netaware/topo"
)

// Algorithms are the names Run accepts.
var Algorithms = []string{"auto", "agglomerative", "kmedoids", "dbscan", "hdbscan", "sss", "ssstree", "spectral", "components", "louvain", "modularity", "eco"}

// DefaultMinJump is the hierarchy cut Run uses (the package's own
// DefaultGapOptions has 25%). 5% is five times the spread of a band of
// PLogP distances measured with R = 32 repetitions (about 1%, e.g. 50.6 to
// 51.1 us inside bordeaux-2013's clusters), and what separates Bordereau
// from Borderline there (51.1 to 55.7 us, a 9% jump); the spread factor
// still keeps a widely spread band whole.
const DefaultMinJump = 0.05

// Options chooses the algorithm Run applies and tunes it. Nobody gives a
// number of clusters: the parameters of flat methods come from a search.
type Options struct {
	Algorithm string     // one of Algorithms
	Linkage   Linkage    // agglomerative only; auto always uses average linkage
	Steps     int        // points of the linear parameter search (seed 003 Sect. 3.3)
	Seed      uint64     // randomized methods (Louvain, spectral's k-means)
	Gap       GapOptions // where hierarchies are cut into levels
}

// DefaultOptions is "auto" with average linkage, seed 003's 50 search
// points and a 5% smallest jump.
func DefaultOptions() Options {
	g := DefaultGapOptions()
	g.MinJump = DefaultMinJump
	return Options{Algorithm: "auto", Linkage: AverageLinkage, Steps: DefaultSearchSteps, Seed: 1, Gap: g}
}

// Result is the outcome of Run: topology levels (finest first, "all"
// last), the parameters chosen, and notes on what was done with missing
// pairs.
type Result struct {
	Levels []topo.Level
	Params map[string]any
	Notes  []string
}

// Validate checks the options without data.
func (o Options) Validate() error {
	known := false
	for _, a := range Algorithms {
		known = known || a == o.Algorithm
	}
	if !known {
		return fmt.Errorf("algorithm %q: want one of %v", o.Algorithm, Algorithms)
	}
	if o.Steps < 2 {
		return fmt.Errorf("steps %d: want 2 or more", o.Steps)
	}
	if !(o.Gap.MinJump > 0) {
		return fmt.Errorf("min jump %g: want a positive fraction", o.Gap.MinJump)
	}
	return nil
}

// MissingPairs counts the pairs i < j of d that are not measured (NaN).
func MissingPairs(d *Matrix) int {
	n := 0
	for i := 0; i < d.N; i++ {
		for j := i + 1; j < d.N; j++ {
			if IsMissing(d.At(i, j)) {
				n++
			}
		}
	}
	return n
}

// MeasuredPoints lists the points with at least one measured pair: a
// campaign run on a subset of the ranks leaves every other rank without
// any, and those cannot be placed at all.
func MeasuredPoints(d *Matrix) []int {
	var out []int
	for i := 0; i < d.N; i++ {
		for j := 0; j < d.N; j++ {
			if j != i && !IsMissing(d.At(i, j)) {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// Sub is the matrix of the listed points, in that order (point k of the
// result is points[k]). Nil stays nil.
func (m *Matrix) Sub(points []int) *Matrix {
	if m == nil {
		return nil
	}
	return SubOf(m, points)
}

// SubOf is the matrix of d's listed points, in that order (point k of the
// result is points[k]): a part of a distance that is not a matrix, as a
// matrix of the part's size only.
func SubOf(d Distances, points []int) *Matrix {
	s := NewMatrix(len(points))
	for a, i := range points {
		for b, j := range points {
			s.Data[a*s.N+b] = d.At(i, j)
		}
	}
	return s
}

// InverseSimilarity is the similarity 1/d of a distance for the modularity
// methods: a zero distance gets a similarity far above any other, and a
// missing pair stays missing.
func InverseSimilarity(d *Matrix) *Matrix {
	s := NewMatrix(d.N)
	for i := 0; i < d.N; i++ {
		for j := i + 1; j < d.N; j++ {
			switch v := d.At(i, j); {
			case IsMissing(v):
				s.Set(i, j, v)
			case v > 0:
				s.Set(i, j, 1/v)
			default:
				s.Set(i, j, math.MaxFloat64/float64(d.N*d.N))
			}
		}
	}
	return s
}

// Run clusters the points of distance d (and similarity sim for the
// modularity methods; nil means InverseSimilarity(d)) into nested levels
// with opt.Algorithm, its parameters chosen automatically.
//
// When pairs are missing (NaN), only ECO can work: it is the algorithm
// seed 004 runs on monitoring data that does not cover the links between
// sites (Sect. 3), and a missing pair simply never merges. "eco" and "auto"
// then run ECO at the seed's 20% bound (a silhouette search needs every
// pair), and auto adds the groups of points joined by measured pairs (each
// independently monitored site) as the next level; every other algorithm
// is refused with the count of missing pairs.
func Run(d, sim *Matrix, opt Options) (*Result, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if d == nil {
		return nil, fmt.Errorf("cluster: no distance matrix")
	}
	if miss := MissingPairs(d); miss > 0 {
		return runIncomplete(d, opt, miss)
	}
	if sim == nil {
		sim = InverseSimilarity(d)
	}
	n := d.N
	steps := opt.Steps
	res := &Result{Params: map[string]any{}}
	flat := func(name string, r *SearchResult, err error) (*Result, error) {
		if err != nil {
			return nil, err
		}
		best, err := r.BestTrial()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		res.Params["parameter"], res.Params["silhouette"] = best.X, best.Score
		res.Levels, err = LevelsFromPartitions(n, []Labels{WithoutNoise(best.Labels)})
		return res, err
	}
	var err error
	switch opt.Algorithm {
	case "agglomerative":
		res.Params["linkage"] = opt.Linkage.String()
		res.Params["min_jump"] = opt.Gap.MinJump
		res.Levels, err = LevelsFromDistances(d, opt.Linkage, opt.Gap)
		return res, err
	case "kmedoids":
		r, err := SearchKMedoids(d, min(steps, max(1, n-1)))
		return flat("kmedoids", r, err)
	case "dbscan":
		r, err := SearchDBSCAN(d, 2, steps)
		return flat("dbscan", r, err)
	case "components":
		r, err := SearchConnectedComponents(d, steps)
		return flat("components", r, err)
	case "sss":
		r, err := SearchSSS(d, steps)
		return flat("sss", r, err)
	case "eco":
		r, err := SearchECO(d, steps)
		return flat("eco", r, err)
	case "louvain":
		r, err := SearchLouvain(sim, d, opt.Seed, steps)
		return flat("louvain", r, err)
	case "spectral":
		r, err := LinearSearch(ClusterCountSpace(n), min(steps, max(1, n-1)), func(x float64) (Labels, error) {
			return Spectral(d, int(x), SpectralOptions{Seed: opt.Seed})
		}, SilhouetteCriterion(d))
		return flat("spectral", r, err)
	case "hdbscan":
		r, err := HDBSCAN(d, HDBSCANOptions{})
		if err != nil {
			return nil, err
		}
		res.Levels, err = LevelsFromPartitions(n, []Labels{WithoutNoise(r.Labels)})
		return res, err
	case "ssstree":
		r, err := SearchSSSTree(d, 1, steps)
		if err != nil {
			return nil, err
		}
		best, err := r.BestTrial()
		if err != nil {
			return nil, err
		}
		tr, err := SSSTree(d, best.X, 0)
		if err != nil {
			return nil, err
		}
		res.Params["alpha"] = best.X
		res.Levels, err = tr.Levels(n)
		return res, err
	case "modularity":
		h, err := HierarchicalModularity(sim, 1, opt.Seed)
		if err != nil {
			return nil, err
		}
		res.Levels, err = ModularityLevels(n, h)
		return res, err
	}
	// auto
	res.Params["linkage"] = "average"
	res.Params["min_jump"] = opt.Gap.MinJump
	if res.Levels, err = LevelsFromDistances(d, AverageLinkage, opt.Gap); err != nil {
		return nil, err
	}
	return autoFlat(d, steps, res)
}

// autoFlat runs the flat searches, keeps the clustering with the best
// silhouette and adds it to the dendrogram's levels when it nests.
func autoFlat(d *Matrix, steps int, res *Result) (*Result, error) {
	n := d.N
	type cand struct {
		name string
		run  func() (*SearchResult, error)
	}
	cands := []cand{
		{"sss", func() (*SearchResult, error) { return SearchSSS(d, steps) }},
		{"eco", func() (*SearchResult, error) { return SearchECO(d, steps) }},
		{"dbscan", func() (*SearchResult, error) { return SearchDBSCAN(d, 2, steps) }},
		{"components", func() (*SearchResult, error) { return SearchConnectedComponents(d, steps) }},
		{"kmedoids", func() (*SearchResult, error) { return SearchKMedoids(d, min(steps, max(1, n-1))) }},
	}
	bestName, bestScore := "", math.Inf(-1)
	var bestLabels Labels
	for _, c := range cands {
		r, err := c.run()
		if err != nil {
			return nil, fmt.Errorf("auto %s: %w", c.name, err)
		}
		if t, err := r.BestTrial(); err == nil && t.Score > bestScore {
			bestName, bestScore, bestLabels = c.name, t.Score, t.Labels
		}
	}
	if bestLabels == nil {
		return res, nil
	}
	res.Params["best_flat"], res.Params["best_flat_silhouette"] = bestName, bestScore
	flat, err := LevelsFromPartitions(n, []Labels{WithoutNoise(bestLabels)})
	if err != nil || len(flat) < 2 {
		return res, nil // one group: nothing to add
	}
	l := flat[0]
	l.Name = "auto-" + bestName
	res.Levels = topo.InsertLevel(res.Levels, l, n)
	return res, nil
}

// runIncomplete is Run on a matrix with miss missing pairs.
func runIncomplete(d *Matrix, opt Options, miss int) (*Result, error) {
	n := d.N
	if opt.Algorithm != "eco" && opt.Algorithm != "auto" {
		return nil, fmt.Errorf("%s needs every pair measured and %d of the %d pairs are not; eco and auto cluster incomplete matrices (seed 004 Sect. 3)",
			opt.Algorithm, miss, n*(n-1)/2)
	}
	eco, err := ECO(d, DefaultECOBound)
	if err != nil {
		return nil, err
	}
	parts := []Labels{eco}
	note := fmt.Sprintf("%d of %d pairs not measured: ECO (seed 004 Algorithm 1) with its 20%% bound, a missing pair never merges", miss, n*(n-1)/2)
	if opt.Algorithm == "auto" {
		parts = append(parts, MeasuredComponents(d))
		note += "; the next level groups the points joined by measured pairs"
	}
	levels, err := LevelsFromPartitions(n, parts)
	if err != nil {
		return nil, err
	}
	return &Result{Levels: levels, Notes: []string{note},
		Params: map[string]any{"bound": DefaultECOBound, "missing_pairs": miss}}, nil
}

// MeasuredComponents labels the connected components of the graph of
// measured pairs: seed 004's independently monitored sites, whose
// "missing interconnections clearly delimit their boundaries".
func MeasuredComponents(d *Matrix) Labels {
	s := newPointSets(d.N)
	for i := 0; i < d.N; i++ {
		for j := i + 1; j < d.N; j++ {
			if !IsMissing(d.At(i, j)) {
				s.union(i, j)
			}
		}
	}
	return s.labels()
}

// WithoutNoise gives every noise point (DBSCAN, HDBSCAN) a cluster of its
// own, since levels must place every point.
func WithoutNoise(l Labels) Labels {
	out := append(Labels(nil), l...)
	next := 0
	for _, v := range l {
		next = max(next, v+1)
	}
	for i, v := range out {
		if v == Noise {
			out[i] = next
			next++
		}
	}
	return out
}
