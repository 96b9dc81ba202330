package coll

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"netaware/comm"
	"netaware/topo"
)

// Algorithm names a builder and its parameters; it is what decision tables
// store and what the tuner enumerates (algorithm x level x segment size).
type Algorithm struct {
	Name string `json:"name"`
	// SegSize is the segment size in bytes (0: the builder's default;
	// unsegmented for every builder except pipeline, interpipe and
	// dfs-pipeline).
	SegSize int `json:"seg_bytes,omitempty"`
	// K is the number of chains of k-chain and the radix of knomial (0:
	// default 4, Open MPI's defaults), and the fan-out inside the leaf
	// groups of dfs-pipeline (0 or 1: the plain chain; see
	// DFSPipelineFanout). Tuners leave dfs-pipeline's K alone (its Info
	// has no UsesK): whether a fan-out pays depends on link bandwidths a
	// topology does not hold.
	K int `json:"k,omitempty"`
	// Level picks the topology level of magpie, magpie2 and interpipe:
	// 1-based index into topology.json's levels (finest first); 0 picks
	// the coarsest level that has more than one group.
	Level int `json:"level,omitempty"`
	// Base is the algorithm used inside every sub-communicator of magpie2
	// and hierarchical (default binomial); its SegSize and K are taken
	// from this Algorithm.
	Base string `json:"base,omitempty"`
	// Variant selects the flavour of model-binomial (dfs-min, dfs-max,
	// bfs-min, bfs-max; default dfs-min) and prim (plain, ready,
	// lookahead; default lookahead).
	Variant string `json:"variant,omitempty"`
}

// Env is what builders may need besides the size and the root.
type Env struct {
	// Topo is the topology of topology-aware builders.
	Topo *topo.Topology
	// Cost predicts point-to-point times for performance-aware builders.
	Cost CostFunc
	// Bytes is the message size the schedule is built for (the
	// performance-aware builders weigh their edges with it).
	Bytes int
}

// sizes is the per-rank message size the model-based tree builders use
// for a broadcast: the whole message for every rank.
func (e Env) sizes(p int) []int {
	s := make([]int, p)
	for i := range s {
		s[i] = e.Bytes
	}
	return s
}

// Auto resolves, per call, through the decision table given with
// WithDecision, or through Open MPI's fixed decision when there is none.
var Auto = Algorithm{Name: "auto"}

// OMPIFixed resolves per call through Open MPI's fixed decision only.
var OMPIFixed = Algorithm{Name: "ompi-fixed"}

func (a Algorithm) String() string {
	var p []string
	if a.SegSize > 0 {
		p = append(p, fmt.Sprintf("seg=%d", a.SegSize))
	}
	if a.K > 0 {
		p = append(p, fmt.Sprintf("k=%d", a.K))
	}
	if a.Level > 0 {
		p = append(p, fmt.Sprintf("level=%d", a.Level))
	}
	if a.Base != "" {
		p = append(p, "base="+a.Base)
	}
	if a.Variant != "" {
		p = append(p, "variant="+a.Variant)
	}
	if len(p) == 0 {
		return a.Name
	}
	return a.Name + "(" + strings.Join(p, ",") + ")"
}

// Info describes a registered algorithm for tools that enumerate them.
type Info struct {
	Name          string
	TopologyAware bool // needs a topology
	UsesLevel     bool // Level matters
	UsesK         bool // K matters and tuners set it (dfs-pipeline's fan-out K is left to users)
	UsesBase      bool // Base matters
	UsesVariant   bool // Variant matters
	ModelAware    bool // needs a cost function (Env.Cost)
	Segmented     bool // segmented by default
	// Exchange: an allreduce/reduce-scatter algorithm (KindExchange);
	// Algorithms, the broadcast tuner's list, leaves it out
	// (ReductionAlgorithms lists it).
	Exchange bool
	Origin   string
}

type entry struct {
	info  Info
	build func(a Algorithm, p, root int, env Env) (*Schedule, error)
}

const defaultK = 4

func kOr(k int) int {
	if k > 0 {
		return k
	}
	return defaultK
}

// withSeg applies a requested segment size to a built schedule.
func withSeg(s *Schedule, err error, seg int) (*Schedule, error) {
	if err != nil {
		return nil, err
	}
	if seg > 0 {
		s.SegSize = seg
		if s.Small != nil {
			s.Small.SegSize = seg
		}
	}
	return s, nil
}

func (a Algorithm) level(t *topo.Topology) int {
	if a.Level > 0 {
		return a.Level - 1
	}
	if t == nil {
		return -1
	}
	return DefaultLevel(t)
}

// base returns the builder of a's Base algorithm for sub-communicators.
func (a Algorithm) base() (BuildFunc, error) {
	name := a.Base
	if name == "" {
		name = "binomial"
	}
	e, ok := registry[name]
	if !ok || e.info.TopologyAware || e.info.ModelAware || e.info.Exchange {
		return nil, fmt.Errorf("base algorithm %q: want a topology-blind algorithm (%s)", name, strings.Join(blindNames(), ", "))
	}
	b := Algorithm{Name: name, SegSize: a.SegSize, K: a.K}
	return func(p, root int) (*Schedule, error) { return e.build(b, p, root, Env{}) }, nil
}

var registry map[string]entry

func init() { registry = builtins() }

func builtins() map[string]entry {
	return map[string]entry{
		"linear": {Info{Name: "linear", Origin: "flat tree; Open MPI basic_linear (seed 003 Table 6.1)"},
			func(a Algorithm, p, root int, _ Env) (*Schedule, error) {
				s, err := Linear(p, root)
				return withSeg(s, err, a.SegSize)
			}},
		"chain": {Info{Name: "chain", Origin: "chain; Open MPI chain with fanout 1 (seed 003 Table 6.1)"},
			func(a Algorithm, p, root int, _ Env) (*Schedule, error) {
				s, err := Chain(p, root)
				return withSeg(s, err, a.SegSize)
			}},
		"pipeline": {Info{Name: "pipeline", Segmented: true, Origin: "segmented chain; Open MPI pipeline (seed 003 Table 6.1)"},
			func(a Algorithm, p, root int, _ Env) (*Schedule, error) {
				return Pipeline(p, root, a.SegSize)
			}},
		"binary": {Info{Name: "binary", Origin: "Open MPI binary tree (build_tree fanout 2)"},
			func(a Algorithm, p, root int, _ Env) (*Schedule, error) {
				s, err := Binary(p, root)
				return withSeg(s, err, a.SegSize)
			}},
		"split-binary": {Info{Name: "split-binary", Origin: "Open MPI split binary tree"},
			func(a Algorithm, p, root int, _ Env) (*Schedule, error) {
				return SplitBinary(p, root, a.SegSize)
			}},
		"k-chain": {Info{Name: "k-chain", UsesK: true, Origin: "k chains fed by the root; Open MPI chain with fanout k"},
			func(a Algorithm, p, root int, _ Env) (*Schedule, error) {
				s, err := KChain(p, root, kOr(a.K))
				if err == nil {
					s.Name = "k-chain"
				}
				return withSeg(s, err, a.SegSize)
			}},
		"binomial": {Info{Name: "binomial", Origin: "Open MPI binomial tree (build_bmtree)"},
			func(a Algorithm, p, root int, _ Env) (*Schedule, error) {
				s, err := Binomial(p, root)
				return withSeg(s, err, a.SegSize)
			}},
		"binomial-inorder": {Info{Name: "binomial-inorder", Origin: "in-order binomial tree, largest subtree first; MPICH MPIR_Bcast_intra_binomial"},
			func(a Algorithm, p, root int, _ Env) (*Schedule, error) {
				s, err := BinomialInOrder(p, root)
				return withSeg(s, err, a.SegSize)
			}},
		"knomial": {Info{Name: "knomial", UsesK: true, Origin: "Open MPI k-nomial tree (build_kmtree), radix k"},
			func(a Algorithm, p, root int, _ Env) (*Schedule, error) {
				s, err := KNomial(p, root, kOr(a.K))
				return withSeg(s, err, a.SegSize)
			}},
		"scatter-allgather": {Info{Name: "scatter-allgather", Origin: "binomial scatter + recursive-doubling allgather; Open MPI scatter_allgather (seed 003 scatter-gather)"},
			func(a Algorithm, p, root int, _ Env) (*Schedule, error) {
				s, err := ScatterAllgather(p, root)
				return withSeg(s, err, a.SegSize)
			}},
		"scatter-allgather-ring": {Info{Name: "scatter-allgather-ring", Origin: "binomial scatter + ring allgather; Open MPI scatter_allgather_ring"},
			func(a Algorithm, p, root int, _ Env) (*Schedule, error) {
				s, err := ScatterAllgatherRing(p, root)
				return withSeg(s, err, a.SegSize)
			}},
		"binary-swap": {Info{Name: "binary-swap", Origin: "binary tree with swap (seed 003 Table 6.1)"},
			func(a Algorithm, p, root int, _ Env) (*Schedule, error) {
				return BinarySwap(p, root, a.SegSize)
			}},
		"magpie": {Info{Name: "magpie", TopologyAware: true, UsesLevel: true, Origin: "MagPIe two-level (seed 003 Sect. 6.3.3)"},
			func(a Algorithm, p, root int, env Env) (*Schedule, error) {
				t := env.Topo
				s, err := Magpie(t, a.level(t), p, root)
				return withSeg(s, err, a.SegSize)
			}},
		"magpie2": {Info{Name: "magpie2", TopologyAware: true, UsesLevel: true, UsesBase: true, Origin: "MagPIe with base-level algorithms (seed 003 Table 6.2)"},
			func(a Algorithm, p, root int, env Env) (*Schedule, error) {
				t := env.Topo
				b, err := a.base()
				if err != nil {
					return nil, fmt.Errorf("magpie2: %w", err)
				}
				return Magpie2(t, a.level(t), p, root, b)
			}},
		"interpipe": {Info{Name: "interpipe", TopologyAware: true, UsesLevel: true, Segmented: true, Origin: "MagPIe with segmentation (seed 003 Table 6.2)"},
			func(a Algorithm, p, root int, env Env) (*Schedule, error) {
				t := env.Topo
				return Interpipe(t, a.level(t), p, root, a.SegSize)
			}},
		"hierarchical": {Info{Name: "hierarchical", TopologyAware: true, UsesBase: true, Origin: "MPICH-G2 multi-level broadcast (seed 000 Sect. 6.1)"},
			func(a Algorithm, p, root int, env Env) (*Schedule, error) {
				t := env.Topo
				b, err := a.base()
				if err != nil {
					return nil, fmt.Errorf("hierarchical: %w", err)
				}
				return Hierarchical(t, p, root, b)
			}},
		"dfs-pipeline": {Info{Name: "dfs-pipeline", TopologyAware: true, Segmented: true, Origin: "pipeline along a DFS of the inferred tree (seed 002 Sect. 6.2); k > 1: a k-ary pipelined tree inside each leaf group"},
			func(a Algorithm, p, root int, env Env) (*Schedule, error) {
				t := env.Topo
				return DFSPipelineFanout(t, p, root, a.SegSize, a.K)
			}},
		"recursive-doubling": {Info{Name: "recursive-doubling", Exchange: true, Origin: "allreduce by recursive doubling, non-powers of two folded first; MPICH recursive_doubling"},
			func(_ Algorithm, p, root int, _ Env) (*Schedule, error) { return RecursiveDoubling(p, root) }},
		"rabenseifner": {Info{Name: "rabenseifner", Exchange: true, Origin: "reduce-scatter by recursive halving + allgather by recursive doubling; MPICH reduce_scatter_allgather"},
			func(_ Algorithm, p, root int, _ Env) (*Schedule, error) { return Rabenseifner(p, root) }},
		"ring": {Info{Name: "ring", Exchange: true, Origin: "ring reduce-scatter + ring allgather; Open MPI allreduce ring"},
			func(_ Algorithm, p, root int, _ Env) (*Schedule, error) { return Ring(p, root) }},
		"dfs-ring": {Info{Name: "dfs-ring", Exchange: true, TopologyAware: true, Origin: "ring allreduce in depth-first order of the inferred tree (seed 002 Sect. 6.2)"},
			func(_ Algorithm, p, root int, env Env) (*Schedule, error) { return DFSRing(env.Topo, p, root) }},
		"levels-allreduce": {Info{Name: "levels-allreduce", Exchange: true, TopologyAware: true, UsesLevel: true, UsesBase: true, UsesVariant: true,
			Origin: "per group of a level: reduce to the leader (base), allreduce among leaders (variant ring|rabenseifner|recursive-doubling), broadcast back (base); MPICH SMP-aware allreduce"},
			func(a Algorithm, p, root int, env Env) (*Schedule, error) {
				intra, err := a.base()
				if err != nil {
					return nil, fmt.Errorf("levels-allreduce: %w", err)
				}
				var top BuildFunc
				switch a.Variant {
				case "", "ring":
					top = Ring
				case "rabenseifner":
					top = Rabenseifner
				case "recursive-doubling":
					top = RecursiveDoubling
				default:
					return nil, fmt.Errorf("variant %q: want ring, rabenseifner or recursive-doubling", a.Variant)
				}
				level := -1
				if a.Level > 0 {
					level = a.Level - 1
				}
				return LevelsAllreduce(env.Topo, level, p, root, intra, top)
			}},
		"model-binomial": {Info{Name: "model-binomial", ModelAware: true, UsesVariant: true, Origin: "model-based binomial tree, variant dfs-min|dfs-max|bfs-min|bfs-max (seed 000 Sect. 6.2.5)"},
			func(a Algorithm, p, root int, env Env) (*Schedule, error) {
				trav, pick := DepthFirst, MinFirst
				switch a.Variant {
				case "", "dfs-min":
				case "dfs-max":
					pick = MaxFirst
				case "bfs-min":
					trav = BreadthFirst
				case "bfs-max":
					trav, pick = BreadthFirst, MaxFirst
				default:
					return nil, fmt.Errorf("variant %q: want dfs-min, dfs-max, bfs-min or bfs-max", a.Variant)
				}
				s, err := ModelBinomial(p, root, env.Cost, env.sizes(p), trav, pick)
				return withSeg(s, err, a.SegSize)
			}},
		"traff": {Info{Name: "traff", ModelAware: true, Origin: "modified Träff builder (seed 000 Sect. 6.2.6, Alg. 1)"},
			func(a Algorithm, p, root int, env Env) (*Schedule, error) {
				s, err := Traff(p, root, env.Cost, env.sizes(p))
				return withSeg(s, err, a.SegSize)
			}},
		"prim": {Info{Name: "prim", ModelAware: true, UsesVariant: true, Origin: "Prim schedule, variant plain|ready|lookahead (seed 000 Sect. 2.2.1)"},
			func(a Algorithm, p, root int, env Env) (*Schedule, error) {
				v := PrimLookahead
				switch a.Variant {
				case "plain":
					v = PrimPlain
				case "ready":
					v = PrimReady
				case "", "lookahead":
				default:
					return nil, fmt.Errorf("variant %q: want plain, ready or lookahead", a.Variant)
				}
				s, err := Prim(p, root, env.Cost, env.Bytes, v)
				return withSeg(s, err, a.SegSize)
			}},
	}
}

// Algorithms lists every registered algorithm by name (auto and
// ompi-fixed, which resolve per message size, are listed too).
func Algorithms() []Info {
	out := make([]Info, 0, len(registry)+2)
	for _, e := range registry {
		if !e.info.Exchange {
			out = append(out, e.info)
		}
	}
	out = append(out,
		Info{Name: "ompi-fixed", Origin: "Open MPI coll/tuned fixed bcast decision, per message size"},
		Info{Name: "auto", Origin: "decision table, else ompi-fixed"})
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ReductionAlgorithms lists the algorithms made for Allreduce and
// ReduceScatter; every algorithm of Algorithms runs them too (its Reduce,
// then its Bcast or Scatter).
func ReductionAlgorithms() []Info {
	var out []Info
	for _, e := range registry {
		if e.info.Exchange {
			out = append(out, e.info)
		}
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func blindNames() []string {
	var out []string
	for n, e := range registry {
		if !e.info.TopologyAware && !e.info.Exchange {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// Build makes the schedule of a for p ranks and the given root. t is
// needed only by topology-aware algorithms; performance-aware ones need
// BuildEnv. auto and ompi-fixed depend on the message size: Resolve them
// first.
func (a Algorithm) Build(p, root int, t *topo.Topology) (*Schedule, error) {
	return a.BuildEnv(p, root, Env{Topo: t})
}

// BuildEnv is Build with everything a builder may need.
func (a Algorithm) BuildEnv(p, root int, env Env) (*Schedule, error) {
	e, ok := registry[a.Name]
	if !ok {
		if a.Name == "auto" || a.Name == "ompi-fixed" {
			return nil, fmt.Errorf("algorithm %q depends on the message size: resolve it first", a.Name)
		}
		names := make([]string, 0, len(registry))
		for n := range registry {
			names = append(names, n)
		}
		slices.Sort(names)
		return nil, fmt.Errorf("unknown algorithm %q (have %s)", a.Name, strings.Join(names, ", "))
	}
	if a.SegSize < 0 || a.K < 0 || a.Level < 0 {
		return nil, fmt.Errorf("algorithm %s: negative parameter", a)
	}
	if e.info.TopologyAware && env.Topo == nil {
		return nil, fmt.Errorf("algorithm %s needs a topology", a.Name)
	}
	if e.info.ModelAware && env.Cost == nil {
		return nil, fmt.Errorf("algorithm %s needs a cost function (a performance model)", a.Name)
	}
	s, err := e.build(a, p, root, env)
	if err != nil {
		return nil, fmt.Errorf("algorithm %s: %w", a, err)
	}
	return s, nil
}

// Resolve turns auto and ompi-fixed into a concrete algorithm for p ranks
// and a message of n bytes; other algorithms are returned unchanged. auto
// uses d when it has a rule for (p, n), else Open MPI's fixed decision.
func Resolve(a Algorithm, p, n int, d *Decision) Algorithm {
	switch a.Name {
	case "auto":
		if d != nil {
			if x, ok := d.Lookup(p, n); ok && x.Name != "auto" {
				return Resolve(x, p, n, nil)
			}
		}
		return OMPIFixedBcast(p, n)
	case "ompi-fixed":
		return OMPIFixedBcast(p, n)
	}
	return a
}

// Option configures Bcast.
type Option func(*options)

type options struct {
	topo     *topo.Topology
	cost     CostFunc
	decision *Decision
}

// WithTopology gives topology-aware algorithms their topology.
func WithTopology(t *topo.Topology) Option { return func(o *options) { o.topo = t } }

// WithCost gives performance-aware algorithms their cost function.
func WithCost(c CostFunc) Option { return func(o *options) { o.cost = c } }

// WithDecision gives Auto its decision table.
func WithDecision(d *Decision) Option { return func(o *options) { o.decision = d } }

// Bcast broadcasts buf from root to every rank of c with algorithm alg
// (Auto: the decision table, else Open MPI's fixed decision; Swarm: the
// swarm broadcast, which has no schedule). Every rank
// passes the same algorithm, options and buffer length.
func Bcast(ctx context.Context, c comm.Comm, root int, buf []byte, alg Algorithm, opts ...Option) error {
	var o options
	for _, f := range opts {
		f(&o)
	}
	if alg.Name == Swarm.Name {
		return SwarmBcast(ctx, c, root, buf, swarmParams(alg))
	}
	a := Resolve(alg, c.Size(), len(buf), o.decision)
	s, err := a.BuildEnv(c.Size(), root, Env{Topo: o.topo, Cost: o.cost, Bytes: len(buf)})
	if err != nil {
		return fmt.Errorf("coll bcast: %w", err)
	}
	return s.Bcast(ctx, c, buf)
}
