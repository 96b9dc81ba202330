// Package score scores a discovered topology against the truth (a
// platform's ground truth and routes, or a second topology.json): the
// partition scores of each level, seed 002's shared-link queries and the
// latency ratios. It is the one definition behind 'netaware topo compare'
// and the accuracy section of the report.
package score

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"netaware/metrics"
	"netaware/platform"
	"netaware/topo"
)

// Report is the scores of a found topology against a truth (what
// netaware topo compare prints, and its --json output).
type Report struct {
	Found       string                   `json:"found"`
	Truth       string                   `json:"truth"`
	TruthKind   string                   `json:"truth_kind"` // "platform" or "topology"
	Size        int                      `json:"size"`
	Levels      []metrics.LevelScore     `json:"levels"`
	Endpoints   int                      `json:"endpoints,omitempty"`
	EndpointsOf string                   `json:"endpoints_of,omitempty"` // "hosts" or "ranks"
	LinkQueries *metrics.LinkQueryResult `json:"shared_link_queries,omitempty"`
	DirQueries  *metrics.LinkQueryResult `json:"shared_link_queries_directed,omitempty"`
	QuerySeed   uint64                   `json:"query_seed,omitempty"`
	Latency     *metrics.LatencySummary  `json:"latency_ratios,omitempty"`
	Notes       []string                 `json:"notes,omitempty"`
}

// Truth is what a found topology is scored against: the true levels and,
// when known (a platform's routes, a topology's tree), which flows share a
// link and the true one-way latency between two ranks.
type Truth struct {
	Name   string
	Kind   string // "platform" or "topology"
	Size   int
	Levels []topo.Level
	// Endpoints: one rank per host when hosts are known, else every rank
	// (EndpointsOf says which: "hosts" or "ranks"); seed 002 queries hosts.
	Endpoints   []int
	EndpointsOf string
	// Shares tells whether flows a->b and c->d have a link in common in
	// any direction, SharesDir one crossed in the same direction (what
	// competes on full-duplex links); nil when the truth has no routes or
	// tree.
	Shares    metrics.LinkOracle
	SharesDir metrics.LinkOracle
	Latency   metrics.LatencyFunc
	// Platform is the platform of a platform truth (nil for a topology).
	Platform *platform.Platform
}

// LoadTruth is the one reading of a truth argument (topo compare --truth,
// report --truth): a topology.json when arg is a .json file, else a
// platform (a built-in name or a platform.yaml) and its ground truth.
func LoadTruth(arg string) (*Truth, error) {
	if strings.EqualFold(filepath.Ext(arg), ".json") {
		t, err := topo.ReadFile(arg)
		if err != nil {
			return nil, fmt.Errorf("truth %s: %w", arg, err)
		}
		return FromTopology(arg, t)
	}
	p, err := platform.Load(arg)
	if err != nil {
		return nil, fmt.Errorf("truth %s: %w", arg, err)
	}
	return FromPlatform(arg, p), nil
}

// FromTopology is the truth a topology.json states: its levels, and its
// tree's links and latencies when it has one.
func FromTopology(name string, t *topo.Topology) (*Truth, error) {
	ts := &Truth{Name: name, Kind: "topology", Size: t.Size, Levels: t.Levels}
	ts.Endpoints, ts.EndpointsOf = endpointsOf(t)
	if t.Tree != nil {
		p, err := t.Paths()
		if err != nil {
			return nil, fmt.Errorf("truth %s: %w", name, err)
		}
		ts.Shares = p.SharesLink
		ts.SharesDir = p.SharesLinkDirected
		ts.Latency = p.PathLatency
	}
	return ts, nil
}

// FromPlatform is a platform's ground truth: its levels (Truth), its
// routes and their latencies, queried between one rank per host.
func FromPlatform(name string, p *platform.Platform) *Truth {
	ts := &Truth{Name: name, Kind: "platform", Size: p.NumRanks(), EndpointsOf: "hosts", Platform: p}
	ts.Levels = p.TruthLevels()
	for h := range p.Hosts() {
		if rs := p.HostRanks(h); len(rs) > 0 {
			ts.Endpoints = append(ts.Endpoints, rs[0])
		}
	}
	routeRes := func(a, b int) (fwd, both map[int]bool) {
		r := p.Route(a, b)
		fwd, both = map[int]bool{}, map[int]bool{}
		for _, x := range r.Forward {
			fwd[x], both[x] = true, true
		}
		for _, x := range r.Reverse {
			both[x] = true
		}
		return fwd, both
	}
	// Same direction: the forward resources intersect. Any direction: a
	// forward resource of one flow is a forward or reverse resource of the
	// other (the reverse path uses the other direction of the same links).
	ts.SharesDir = func(a, b, c, d int) (bool, error) {
		f1, _ := routeRes(a, b)
		for _, x := range p.Route(c, d).Forward {
			if f1[x] {
				return true, nil
			}
		}
		return false, nil
	}
	ts.Shares = func(a, b, c, d int) (bool, error) {
		_, b1 := routeRes(a, b)
		for _, x := range p.Route(c, d).Forward {
			if b1[x] {
				return true, nil
			}
		}
		return false, nil
	}
	ts.Latency = func(a, b int) (float64, error) { return p.Route(a, b).LatencyS, nil }
	return ts
}

// endpointsOf picks one rank per host (the lowest) when every rank has a
// host name, since seed 002 queries hosts; otherwise every rank.
func endpointsOf(t *topo.Topology) ([]int, string) {
	groups, _, err := t.HostPartition()
	if err != nil {
		all := make([]int, t.Size)
		for i := range all {
			all[i] = i
		}
		return all, "ranks"
	}
	var eps []int
	for _, g := range groups {
		eps = append(eps, g[0])
	}
	return eps, "hosts"
}

// Options bound the scoring's sampling.
type Options struct {
	// Queries is the number of random shared-link queries (0: none).
	Queries int
	// Seed seeds the queries and the latency pair sample.
	Seed uint64
	// MaxPairs bounds the host pairs of the latency ratios (a random
	// sample above it).
	MaxPairs int
}

// DefaultOptions are topo compare's: 10,000 queries, seed 1, 200,000
// pairs.
func DefaultOptions() Options { return Options{Queries: 10000, Seed: 1, MaxPairs: 200000} }

// Compare scores found (named foundName in messages) against truth: for
// every true level the found level with the highest NMI, with ARI and
// seed 003's accuracy (metrics.Compare); when found has a tree and truth
// has routes or a tree, seed 002's random shared-link queries, any
// direction and same direction; and the ratio of the tree's one-way
// latency to the true one over host pairs.
func Compare(found *topo.Topology, foundName string, truth *Truth, opt Options) (*Report, error) {
	queries, seed, maxPairs := opt.Queries, opt.Seed, opt.MaxPairs
	if queries < 0 || maxPairs < 1 {
		return nil, fmt.Errorf("score: %d queries, %d pairs: want queries >= 0 and pairs >= 1", queries, maxPairs)
	}
	if found.Size != truth.Size {
		return nil, fmt.Errorf("%s has %d ranks but the truth %s has %d", foundName, found.Size, truth.Name, truth.Size)
	}
	rep := &Report{Found: foundName, Truth: truth.Name, TruthKind: truth.Kind, Size: found.Size}
	if len(found.Levels) == 0 {
		rep.Notes = append(rep.Notes, "the found topology has no levels: no partition scores")
	} else if len(truth.Levels) == 0 {
		rep.Notes = append(rep.Notes, "the truth has no levels: no partition scores")
	} else {
		scores, err := metrics.Compare(found.Levels, truth.Levels)
		if err != nil {
			return nil, err
		}
		rep.Levels = scores
	}
	if found.Tree == nil {
		rep.Notes = append(rep.Notes, "the found topology has no tree: no shared-link queries or latency ratios")
		return rep, nil
	}
	if truth.Shares == nil {
		rep.Notes = append(rep.Notes, "the truth has no tree or routes: no shared-link queries or latency ratios")
		return rep, nil
	}
	paths, err := found.Paths()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", foundName, err)
	}
	rep.Endpoints, rep.EndpointsOf = len(truth.Endpoints), truth.EndpointsOf
	if queries > 0 {
		if len(truth.Endpoints) < 4 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("only %d %s: shared-link queries need 4", len(truth.Endpoints), truth.EndpointsOf))
		} else {
			r, err := metrics.SharedLinkQueries(truth.Endpoints, queries, seed, paths.SharesLink, truth.Shares)
			if err != nil {
				return nil, err
			}
			rd, err := metrics.SharedLinkQueries(truth.Endpoints, queries, seed, paths.SharesLinkDirected, truth.SharesDir)
			if err != nil {
				return nil, err
			}
			rep.LinkQueries, rep.DirQueries, rep.QuerySeed = &r, &rd, seed
		}
	}
	pairs := metrics.AllPairs(truth.Endpoints)
	if len(pairs) > maxPairs {
		rng := rand.New(rand.NewPCG(seed, 0x1a7e))
		rng.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
		pairs = pairs[:maxPairs]
		rep.Notes = append(rep.Notes, fmt.Sprintf("latency ratios over a random sample of %d pairs", maxPairs))
	}
	if len(pairs) > 0 {
		_, s, err := metrics.LatencyRatios(pairs, paths.PathLatency, truth.Latency)
		if err != nil {
			return nil, err
		}
		rep.Latency = &s
	}
	return rep, nil
}
