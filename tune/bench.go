package tune

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"netaware/coll"
	"netaware/comm"
	"netaware/topo"
)

// BenchConfig is one benchmark campaign. It holds no world: Run measures
// on whatever comm.Comm it is given (the simulator, the TCP transport under
// netaware launch or mpirun, an emulated cluster, MPI), and times without a
// global clock.
type BenchConfig struct {
	// Collective is what is measured (zero: the broadcast).
	Collective Collective
	// Topology for topology-aware algorithms (nil: only topology-blind).
	Topology *topo.Topology
	Sizes    []int // message sizes in bytes
	// Reps N and Warmup W of seed 003 Sect. 6.5 (0: defaults 10 and 2;
	// a negative Warmup: none).
	Reps, Warmup int
	Root         int
	// Decision resolves coll.Auto (nil: Auto runs Open MPI's fixed decision).
	Decision *coll.Decision
	// Cost is the performance model's point-to-point prediction for the
	// performance-aware builders (nil: they fail to build).
	Cost coll.CostFunc
	// CommSizes are the communicator sizes to tune (nil: the world's
	// rank count). A size q is measured on a sub-communicator of ranks
	// 0..q-1, with the topology restricted to them.
	CommSizes []int
	// Library times the MPI library's own broadcast with each
	// algorithm's equivalent forced (comm.LibraryBroadcaster: the MPI
	// world) instead of netaware's schedule of it over point-to-point
	// messages; the baseline ompi-fixed is then the library's own choice.
	// Every algorithm must have an equivalent in the library
	// (LibraryEquivalent).
	Library bool
	// Progress, if set, is called on rank 0 after each algorithm and
	// message size (done of total).
	Progress func(done, total int, a coll.Algorithm, bytes int)
}

// Measurement is every repetition of one algorithm at one message size.
type Measurement struct {
	// Collective is what was measured (empty in files from before the
	// other collectives: the broadcast).
	Collective Collective     `json:"collective,omitempty"`
	Algorithm  coll.Algorithm `json:"algorithm"`
	Label      string         `json:"label"`
	// Ranks is the communicator size measured.
	Ranks int `json:"ranks"`
	// Resolved is the concrete algorithm run (differs for ompi-fixed).
	Resolved coll.Algorithm `json:"resolved"`
	// Library names the MPI library whose own implementation was timed
	// (BenchConfig.Library); empty: netaware's schedule.
	Library string `json:"library,omitempty"`
	Bytes   int    `json:"size_bytes"`
	// TimesS holds the repetitions: per repetition, the longest time any
	// rank spent from leaving the barrier before it to the end of its
	// part of the collective (OSU and IMB's measure).
	TimesS []float64 `json:"times_s"`
	// Invalid counts repetitions that were not kept (unused since the
	// barrier harness; kept for old bench.json files).
	Invalid int   `json:"invalid"`
	Stats   Stats `json:"stats"`
	// Err is set when the algorithm failed at this size.
	Err string `json:"error,omitempty"`
}

// Baseline is Open MPI's default for a communicator size, run per message
// size as its fixed decision runs it.
var Baseline = coll.OMPIFixed

// MPICHAutoLabel labels the baseline when MPICH's own broadcast is timed
// (BenchConfig.Library): MPICH's own selection.
const MPICHAutoLabel = "mpich-auto"

const (
	defaultReps   = 10
	defaultWarmup = 2
)

func (c *BenchConfig) reps() (int, int) {
	n, w := c.Reps, c.Warmup
	if n <= 0 {
		n = defaultReps
	}
	if w < 0 {
		w = 0
	}
	if c.Warmup == 0 {
		w = defaultWarmup
	}
	return n, w
}

// Run measures every algorithm at every size on c. Every rank of c calls
// it with the same configuration (SPMD); rank 0 gets the measurements, in
// communicator size, algorithm, then message size order, the others nil.
// When an algorithm fails or ctx ends, the error comes with the
// measurements finished before (at rank 0), so that an interrupted run
// keeps them.
func Run(ctx context.Context, c comm.Comm, cfg BenchConfig, algs []coll.Algorithm) ([]Measurement, error) {
	if len(cfg.Sizes) == 0 {
		return nil, errors.New("tune: no message sizes")
	}
	for _, s := range cfg.Sizes {
		if s < 0 {
			return nil, fmt.Errorf("tune: message size %d < 0", s)
		}
	}
	if _, err := ParseCollective(cfg.Collective.String()); err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	p := c.Size()
	if cfg.Root < 0 || cfg.Root >= p {
		return nil, fmt.Errorf("tune: root %d outside %d ranks", cfg.Root, p)
	}
	if cfg.Library {
		if cfg.Collective.orBcast() != Bcast {
			return nil, fmt.Errorf("tune: timing the MPI library's own algorithms is implemented for bcast, not %s", cfg.Collective)
		}
		lb, ok := c.(comm.LibraryBroadcaster)
		if !ok {
			return nil, errors.New("tune: timing the MPI library's own broadcast needs the MPI world (netaware built with -tags mpi, started by mpirun)")
		}
		for _, a := range algs {
			if _, ok := LibraryEquivalent(lb.LibraryName(), a); !ok {
				return nil, fmt.Errorf("tune: %s has no %s equivalent to time in the library", a, lb.LibraryName())
			}
		}
	}
	sizes := cfg.CommSizes
	if len(sizes) == 0 {
		sizes = []int{p}
	}
	for i, q := range sizes {
		if q < 1 || q > p || (i > 0 && q <= sizes[i-1]) {
			return nil, fmt.Errorf("tune: communicator sizes %v: want ascending sizes in [1,%d]", sizes, p)
		}
		if cfg.Root >= q {
			return nil, fmt.Errorf("tune: root %d outside a communicator of %d ranks", cfg.Root, q)
		}
	}
	var out []Measurement
	done, total := 0, len(algs)*len(sizes)*len(cfg.Sizes)
	for _, q := range sizes {
		t, err := Restrict(cfg.Topology, q)
		if err != nil {
			return nil, err
		}
		sub := c
		if q < p {
			members := make([]int, q)
			for i := range members {
				members[i] = i
			}
			if c.Rank() >= q {
				// Not a member: nothing to measure at this size; the
				// members' harness traffic stays inside their communicator.
				continue
			}
			if sub, err = c.Sub(members); err != nil {
				return out, fmt.Errorf("tune: communicator of %d ranks: %w", q, err)
			}
		}
		for _, a := range algs {
			ms, err := runOne(ctx, sub, cfg, a, t, func(bytes int) {
				done++
				if cfg.Progress != nil && c.Rank() == 0 {
					cfg.Progress(done, total, a, bytes)
				}
			})
			// Only rank 0 keeps them: in the simulator every rank shares
			// the process, and 512 ranks each holding every measurement
			// of a tune on fram-like was 84 MB of live heap.
			if c.Rank() == 0 {
				out = append(out, ms...)
			}
			if err != nil {
				return out, fmt.Errorf("tune: %s (%d ranks): %w", a, q, err)
			}
		}
	}
	if c.Rank() != 0 {
		return nil, nil
	}
	return out, nil
}

// Restrict is t cut down to ranks 0..q-1 (groups keep their members below
// q; empty groups go), nil for nil.
func Restrict(t *topo.Topology, q int) (*topo.Topology, error) {
	if t == nil || t.Size == q {
		return t, nil
	}
	if q > t.Size {
		return nil, fmt.Errorf("tune: topology has %d ranks, %d asked", t.Size, q)
	}
	r := &topo.Topology{Version: t.Version, Size: q, Method: t.Method}
	for _, rk := range t.Ranks {
		if rk.Rank < q {
			r.Ranks = append(r.Ranks, rk)
		}
	}
	for _, l := range t.Levels {
		nl := topo.Level{Name: l.Name}
		for _, g := range l.Groups {
			var ng []int
			for _, x := range g {
				if x < q {
					ng = append(ng, x)
				}
			}
			if len(ng) > 0 {
				nl.Groups = append(nl.Groups, ng)
			}
		}
		r.Levels = append(r.Levels, nl)
	}
	// The inferred tree names all ranks; a cut tree would need pruning,
	// so the restricted topology keeps only the levels.
	if err := topo.ValidateLevels(r.Levels, q); err != nil {
		return nil, fmt.Errorf("tune: topology restricted to %d ranks: %w", q, err)
	}
	return r, nil
}

// runOne measures one algorithm at all message sizes on c. Schedules are
// built on every rank alike (builders are deterministic), so a size that
// fails to build is skipped by every rank. On an error it returns the
// sizes measured before it.
func runOne(ctx context.Context, c comm.Comm, cfg BenchConfig, a coll.Algorithm, t *topo.Topology, step func(bytes int)) ([]Measurement, error) {
	p := c.Size()
	n, w := cfg.reps()
	ms := make([]Measurement, len(cfg.Sizes))
	for i, size := range cfg.Sizes {
		size := cfg.Collective.Normalize(p, size)
		r := coll.Resolve(a, p, size, cfg.Decision)
		ms[i] = Measurement{Collective: cfg.Collective, Algorithm: a, Label: a.String(), Ranks: p, Resolved: r, Bytes: size}
		var run func(context.Context, comm.Comm) error
		free := func() {}
		var err error
		if cfg.Library {
			run, free, ms[i].Library, err = libraryBcast(c, a, size, cfg.Root)
			if err != nil {
				return ms[:i], fmt.Errorf("%d bytes: %w", size, err)
			}
			if a.Name == Baseline.Name && ms[i].Library == "mpich" {
				// The baseline is the library's own choice: MPICH's.
				ms[i].Label = MPICHAutoLabel
			}
		} else {
			var s *coll.Schedule
			s, err = r.BuildEnv(p, cfg.Root, coll.Env{Topo: t, Cost: cfg.Cost, Bytes: size})
			if err == nil {
				run, err = cfg.Collective.op(c, s, p, size)
			}
		}
		if err != nil {
			ms[i].Err = err.Error()
			step(size)
			continue
		}
		times, err := measure(ctx, c, run, n, w)
		free()
		if err != nil {
			// The sizes finished before are kept.
			return ms[:i], fmt.Errorf("%d bytes: %w", size, err)
		}
		ms[i].TimesS = times
		ms[i].Stats = Summarize(times)
		step(size)
	}
	return ms, nil
}

// LibraryEquivalent names algorithm a in the terms of library lib
// (comm.LibraryBroadcaster's name) when the library runs the same
// schedule: Open MPI's (OMPIEquivalent) or MPICH's (MPICHEquivalent, the
// exact ones). The baseline, ompi-fixed, is the library's own choice.
func LibraryEquivalent(lib string, a coll.Algorithm) (comm.LibraryAlgorithm, bool) {
	switch lib {
	case "openmpi":
		r, ok := OMPIEquivalent(a)
		return comm.LibraryAlgorithm{ID: r.Alg, SegBytes: r.SegBytes, FanOut: r.FanInOut}, ok
	case "mpich":
		if a.Name == Baseline.Name {
			return comm.LibraryAlgorithm{}, true
		}
		name, exact, ok := MPICHEquivalent(a, nil)
		if !ok || !exact {
			return comm.LibraryAlgorithm{}, false
		}
		return comm.LibraryAlgorithm{Name: strings.TrimPrefix(name, mpichBcastPrefix)}, true
	}
	return comm.LibraryAlgorithm{}, false
}

// libraryBcast is the library's own broadcast of size bytes from root
// with a's equivalent forced. The library's call cannot be interrupted:
// ctx is looked at between calls.
func libraryBcast(c comm.Comm, a coll.Algorithm, size, root int) (func(context.Context, comm.Comm) error, func(), string, error) {
	lb, ok := c.(comm.LibraryBroadcaster)
	if !ok {
		return nil, nil, "", errors.New("this communicator cannot run the library's own broadcast")
	}
	la, _ := LibraryEquivalent(lb.LibraryName(), a)
	bcast, free, err := lb.LibraryBcast(la)
	if err != nil {
		return nil, nil, "", err
	}
	buf := make([]byte, size)
	run := func(ctx context.Context, _ comm.Comm) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return bcast(buf, root)
	}
	return run, free, lb.LibraryName(), nil
}

// measure runs W warm-up operations and N timed ones, each after a
// barrier, as OSU and IMB do without a global clock: every rank times its
// own part from leaving the barrier to the end of its part of the
// collective, and the time of a repetition is the maximum over the ranks
// (a collective is done when its last rank is). The barrier's own skew
// (one rank leaves it up to a message latency after another) stays in the
// figure, as in those suites. Rank 0 returns the times, the others nil.
func measure(ctx context.Context, c comm.Comm, run func(context.Context, comm.Comm) error, n, w int) ([]float64, error) {
	for range w {
		if err := comm.Barrier(ctx, c); err != nil {
			return nil, err
		}
		if err := run(ctx, c); err != nil {
			return nil, err
		}
	}
	dur := make([]float64, n)
	for i := range n {
		if err := comm.Barrier(ctx, c); err != nil {
			return nil, err
		}
		t := c.Now()
		if err := run(ctx, c); err != nil {
			return nil, err
		}
		dur[i] = (c.Now() - t).Seconds()
	}
	return gatherMax(ctx, c, 0, dur)
}

// gatherMax collects each rank's per-repetition values at root and
// returns, at root, the maximum per repetition (nil elsewhere).
func gatherMax(ctx context.Context, c comm.Comm, root int, vals []float64) ([]float64, error) {
	n := len(vals)
	enc := make([]byte, 8*n)
	for i, v := range vals {
		binary.LittleEndian.PutUint64(enc[8*i:], math.Float64bits(v))
	}
	if root != 0 {
		return nil, fmt.Errorf("tune: results gathered at rank %d: only rank 0 is supported", root)
	}
	// Along a binomial tree: every rank sending to rank 0 at once is N
	// flows on one link, which the simulator re-solves at each event.
	parts, err := comm.GatherBytesRoot(ctx, c, enc, 8*n)
	if err != nil || c.Rank() != 0 {
		return nil, err
	}
	worst := slices.Clone(vals)
	for r, in := range parts[1:] {
		if len(in) != 8*n {
			return nil, fmt.Errorf("results from rank %d: %d bytes, want %d", r+1, len(in), 8*n)
		}
		for i := range n {
			worst[i] = math.Max(worst[i], math.Float64frombits(binary.LittleEndian.Uint64(in[8*i:])))
		}
	}
	return worst, nil
}
