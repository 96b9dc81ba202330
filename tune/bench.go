package tune

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"netaware/coll"
	"netaware/comm"
	"netaware/comm/sim"
	"netaware/platform"
	"netaware/topo"
)

// BenchConfig is one benchmark campaign on a simulated platform.
type BenchConfig struct {
	Platform *platform.Platform
	// Topology for topology-aware algorithms (nil: only topology-blind).
	Topology *topo.Topology
	Sizes    []int // message sizes in bytes
	// Reps N and Warmup W of seed 003 Sect. 6.5 (0: defaults 10 and 2;
	// a negative Warmup: none, beyond the one calibration broadcast that
	// sizes the start window).
	Reps, Warmup int
	Root         int
	Sim          sim.Options
	// Decision resolves coll.Auto (nil: Auto runs Open MPI's fixed decision).
	Decision *coll.Decision
	// Cost is the performance model's point-to-point prediction for the
	// performance-aware builders (nil: they fail to build).
	Cost coll.CostFunc
	// CommSizes are the communicator sizes to tune (nil: the platform's
	// rank count). A size q is measured on a sub-communicator of ranks
	// 0..q-1, with the topology restricted to them.
	CommSizes []int
	// Progress, if set, is called after each algorithm.
	Progress func(done, total int, a coll.Algorithm)
}

// Measurement is every repetition of one algorithm at one message size.
type Measurement struct {
	Algorithm coll.Algorithm `json:"algorithm"`
	Label     string         `json:"label"`
	// Ranks is the communicator size measured.
	Ranks int `json:"ranks"`
	// Resolved is the concrete algorithm run (differs for ompi-fixed).
	Resolved coll.Algorithm `json:"resolved"`
	Bytes    int            `json:"size_bytes"`
	// TimesS holds the valid repetitions: the time from the common start
	// until the last rank has the message.
	TimesS []float64 `json:"times_s"`
	// Invalid counts repetitions some rank started late (window too short).
	Invalid int   `json:"invalid"`
	Stats   Stats `json:"stats"`
	// Err is set when the algorithm failed at this size.
	Err string `json:"error,omitempty"`
}

// Baseline is Open MPI's default for a communicator size, run per message
// size as its fixed decision runs it.
var Baseline = coll.OMPIFixed

const (
	defaultReps   = 10
	defaultWarmup = 2
	// Tags of the harness's own messages (system tags, never a user's).
	tagStart   = 7301
	tagResults = 7302
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

// Run measures every algorithm at every size, one simulation per
// algorithm (all sizes in it), and returns the measurements in algorithm,
// then size order. When an algorithm fails or ctx ends, the error comes
// with the measurements of the algorithms finished before, so that an
// interrupted run keeps them.
func Run(ctx context.Context, cfg BenchConfig, algs []coll.Algorithm) ([]Measurement, error) {
	if cfg.Platform == nil {
		return nil, errors.New("tune: no platform")
	}
	if len(cfg.Sizes) == 0 {
		return nil, errors.New("tune: no message sizes")
	}
	for _, s := range cfg.Sizes {
		if s < 0 {
			return nil, fmt.Errorf("tune: message size %d < 0", s)
		}
	}
	p := cfg.Platform.NumRanks()
	if cfg.Root < 0 || cfg.Root >= p {
		return nil, fmt.Errorf("tune: root %d outside %d ranks", cfg.Root, p)
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
	done, total := 0, len(algs)*len(sizes)
	for _, q := range sizes {
		t, err := Restrict(cfg.Topology, q)
		if err != nil {
			return nil, err
		}
		for _, a := range algs {
			ms, err := runOne(ctx, cfg, a, q, t)
			if err != nil {
				return out, fmt.Errorf("tune: %s on %s (%d ranks): %w", a, cfg.Platform.Name, q, err)
			}
			out = append(out, ms...)
			done++
			if cfg.Progress != nil {
				cfg.Progress(done, total, a)
			}
		}
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

// runOne measures one algorithm at all message sizes in one simulation, on
// the first q ranks.
func runOne(ctx context.Context, cfg BenchConfig, a coll.Algorithm, q int, t *topo.Topology) ([]Measurement, error) {
	p := q
	n, w := cfg.reps()
	ms := make([]Measurement, len(cfg.Sizes))
	scheds := make([]*coll.Schedule, len(cfg.Sizes))
	for i, size := range cfg.Sizes {
		r := coll.Resolve(a, p, size, cfg.Decision)
		ms[i] = Measurement{Algorithm: a, Label: a.String(), Ranks: q, Resolved: r, Bytes: size}
		s, err := r.BuildEnv(p, cfg.Root, coll.Env{Topo: t, Cost: cfg.Cost, Bytes: size})
		if err != nil {
			ms[i].Err = err.Error()
			continue
		}
		scheds[i] = s
	}
	members := make([]int, q)
	for i := range members {
		members[i] = i
	}
	_, err := sim.Run(ctx, cfg.Platform, cfg.Sim, func(ctx context.Context, world comm.Comm) error {
		if world.Rank() >= q {
			return nil
		}
		c := world
		if q < world.Size() {
			var err error
			if c, err = world.Sub(members); err != nil {
				return err
			}
		}
		for i, s := range scheds {
			if s == nil {
				continue
			}
			times, invalid, err := measure(ctx, c, s, cfg.Sizes[i], n, w, cfg.Root)
			if err != nil {
				return fmt.Errorf("%d bytes: %w", cfg.Sizes[i], err)
			}
			if c.Rank() == cfg.Root {
				ms[i].TimesS, ms[i].Invalid = times, invalid
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range ms {
		ms[i].Stats = Summarize(ms[i].TimesS)
	}
	return ms, nil
}

// measure runs W warm-up broadcasts, then N timed ones started ReproMPI
// style: after a barrier, the root fixes a common start time t0 (its clock
// plus a margin) and a window w, and repetition i starts on every rank at
// t0 + i*w (ranks spin until then). A rank that reaches a start time late
// invalidates that repetition. The time of a repetition is the latest
// rank's finish minus the common start. The simulator's clock is global,
// so no clock offsets need correcting. Only the root returns times.
func measure(ctx context.Context, c comm.Comm, s *coll.Schedule, size, n, w, root int) ([]float64, int, error) {
	buf := make([]byte, size)
	me := c.Rank()
	// Warm-up, and one calibration round that sizes the window.
	var local time.Duration
	for k := range max(w, 1) {
		if err := comm.Barrier(ctx, c); err != nil {
			return nil, 0, err
		}
		t := c.Now()
		if err := s.Bcast(ctx, c, buf); err != nil {
			return nil, 0, err
		}
		if k == max(w, 1)-1 {
			local = c.Now() - t
		}
	}
	widest, _, err := gatherMax(ctx, c, root, []float64{local.Seconds()}, nil)
	if err != nil {
		return nil, 0, err
	}
	var times []float64
	invalid := 0
	for attempt := 0; attempt < 4; attempt++ {
		tb := c.Now()
		if err := comm.Barrier(ctx, c); err != nil {
			return nil, 0, err
		}
		barrier := (c.Now() - tb).Seconds()
		// The root picks t0 and the window; a binomial broadcast of 16
		// bytes carries them. Its duration is inside the margin: twice
		// the barrier the root just saw (log P rounds, like the small
		// broadcast) plus a window and a millisecond.
		var hdr [16]byte
		if me == root {
			window := 1.5*widest[0]*math.Pow(2, float64(attempt)) + 50e-6
			margin := window + 2*barrier + 1e-3
			t0 := c.Now().Seconds() + margin
			binary.LittleEndian.PutUint64(hdr[:8], math.Float64bits(t0))
			binary.LittleEndian.PutUint64(hdr[8:], math.Float64bits(window))
		}
		if err := bcastSmall(ctx, c, root, hdr[:]); err != nil {
			return nil, 0, err
		}
		t0 := math.Float64frombits(binary.LittleEndian.Uint64(hdr[:8]))
		window := math.Float64frombits(binary.LittleEndian.Uint64(hdr[8:]))
		dur := make([]float64, n)
		late := make([]bool, n)
		for i := range n {
			start := t0 + float64(i)*window
			now := c.Now().Seconds()
			if now > start {
				late[i] = true
			} else if d := time.Duration((start - now) * 1e9); d > 0 {
				c.Spin(d)
			}
			if err := s.Bcast(ctx, c, buf); err != nil {
				return nil, 0, err
			}
			dur[i] = c.Now().Seconds() - start
		}
		worst, anyLate, err := gatherMax(ctx, c, root, dur, late)
		if err != nil {
			return nil, 0, err
		}
		// The root keeps the valid repetitions and tells every rank
		// whether to retry with a wider window (too many late starts).
		var again [1]byte
		if me == root {
			times, invalid = times[:0], 0
			for i, d := range worst {
				if anyLate[i] {
					invalid++
				} else {
					times = append(times, d)
				}
			}
			if len(times) < (n+1)/2 && attempt < 3 {
				again[0] = 1
			}
		}
		if err := bcastSmall(ctx, c, root, again[:]); err != nil {
			return nil, 0, err
		}
		if again[0] == 0 {
			break
		}
	}
	return times, invalid, nil
}

// bcastSmall broadcasts a small buffer from root along a binomial tree on
// the harness's own tag.
func bcastSmall(ctx context.Context, c comm.Comm, root int, b []byte) error {
	p, me := c.Size(), c.Rank()
	v := (me - root + p) % p
	tag := comm.SystemTag(tagStart)
	mask := 1
	for mask < p {
		if v&mask != 0 {
			src := (v - mask + root) % p
			if _, err := c.Recv(ctx, src, tag, b); err != nil {
				return err
			}
			break
		}
		mask <<= 1
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if v+mask < p {
			if err := c.Send(ctx, (v+mask+root)%p, tag, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// gatherMax collects each rank's per-repetition values and late flags at
// root and returns, at root, the maximum value and the OR of the flags per
// repetition (nil elsewhere).
func gatherMax(ctx context.Context, c comm.Comm, root int, vals []float64, late []bool) ([]float64, []bool, error) {
	n := len(vals)
	enc := make([]byte, 9*n)
	for i, v := range vals {
		binary.LittleEndian.PutUint64(enc[9*i:], math.Float64bits(v))
		if late != nil && late[i] {
			enc[9*i+8] = 1
		}
	}
	tag := comm.SystemTag(tagResults)
	if c.Rank() != root {
		return nil, nil, c.Send(ctx, root, tag, enc)
	}
	worst := make([]float64, n)
	anyLate := make([]bool, n)
	fold := func(b []byte) {
		for i := range n {
			worst[i] = math.Max(worst[i], math.Float64frombits(binary.LittleEndian.Uint64(b[9*i:])))
			anyLate[i] = anyLate[i] || b[9*i+8] == 1
		}
	}
	fold(enc)
	in := make([]byte, 9*n)
	for r := range c.Size() {
		if r == root {
			continue
		}
		if _, err := c.Recv(ctx, r, tag, in); err != nil {
			return nil, nil, fmt.Errorf("results from rank %d: %w", r, err)
		}
		fold(in)
	}
	return worst, anyLate, nil
}
