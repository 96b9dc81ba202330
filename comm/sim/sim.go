// Package sim runs rank code against comm.Comm in virtual time, on a
// platform simulated by netsim.
//
// Every rank is a goroutine, but exactly one runs at a time: the kernel hands
// a baton to a ready rank and waits for it to block (in Wait, Spin, or a
// send's overhead) or return. Virtual time advances only when every rank is
// blocked, to the next pending event (a flow's latency end or completion, a
// message envelope's arrival, an overhead's end). Nothing depends on the
// wall clock, on map iteration order or on goroutine scheduling, so the same
// platform, options and seed give the same run, bit for bit.
package sim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"strconv"
	"time"

	"netaware/comm"
	"netaware/comm/internal/match"
	"netaware/netsim"
	"netaware/platform"
)

// DefaultEagerLimit is the largest message sent eagerly (like Open MPI's and
// MPICH's TCP eager limits, 64 KiB); larger ones use a rendezvous.
const DefaultEagerLimit = 64 << 10

// DefaultPollInterval is the virtual time a Test that finds its request
// still pending costs, so that a polling loop lets time advance.
const DefaultPollInterval = time.Microsecond

// Options tune a simulation. The zero value simulates the platform as
// stated (its noise, crosstraffic and window) with max-min sharing and the
// default eager limit.
type Options struct {
	// EagerLimit is the largest message (bytes) sent eagerly; larger ones
	// go through a rendezvous (RTS, CTS, then data). 0 means
	// DefaultEagerLimit; a negative value sends everything by rendezvous.
	EagerLimit int
	// Weighting selects plain max-min or SimGrid's RTT-weighted (CM02)
	// shares. MaxMin, the zero value, leaves the choice to the platform
	// (tcp.sharing).
	Weighting netsim.Weighting
	// NoNoise ignores the platform's noise section.
	NoNoise bool
	// Noise, if set, replaces the platform's noise by a named profile
	// (platform.NoiseRealistic).
	Noise string
	// Seed, if non-zero, replaces the platform's noise seed.
	Seed int64
	// PollInterval is the virtual cost of a Test that finds nothing done
	// (0 means DefaultPollInterval).
	PollInterval time.Duration
	// EventLog, if set, receives one line per kernel event (for debugging
	// and the determinism test).
	EventLog io.Writer
}

// Weighting is the sharing a run with Options.Weighting w simulates on p:
// w, or the platform's tcp.sharing when w is MaxMin (the zero value).
func Weighting(p *platform.Platform, w netsim.Weighting) netsim.Weighting {
	if w == netsim.MaxMin && p.TCP().RTTSharing {
		return netsim.RTTWeighted
	}
	return w
}

// Result summarizes a run.
type Result struct {
	// VirtualTime is the virtual time at which the last rank returned.
	VirtualTime time.Duration
	// Events is the number of kernel events processed (envelope arrivals,
	// flow events, overhead ends, timers).
	Events int64
	// Flows is the number of data flows the network carried.
	Flows int64
	// Messages is the number of point-to-point messages sent.
	Messages int64
	// Solves is the number of max-min recomputations (one per batch of
	// flow changes at one instant).
	Solves int64
}

// Run simulates p.NumRanks() ranks, each running body with its world
// communicator, and returns when every rank has returned. An error from one
// rank fails every other rank's pending and later calls with an error
// naming the failed rank, and Run returns that first error. A deadlock (every
// rank blocked, nothing in flight) is returned as a *DeadlockError.
func Run(ctx context.Context, p *platform.Platform, opts Options, body func(ctx context.Context, c comm.Comm) error) (Result, error) {
	if p == nil {
		return Result{}, errors.New("sim: nil platform")
	}
	k, err := newKernel(p, opts)
	if err != nil {
		return Result{}, err
	}
	return k.run(ctx, body)
}

type timer struct {
	t   float64
	seq uint64
	fn  func()
}

type kernel struct {
	p      *platform.Platform
	opts   Options
	net    *netsim.Network
	noise  *netsim.Noise // latency jitter of message envelopes
	now    float64
	seq    uint64
	timers timerHeap
	ranks  []*rank
	ready  []*rank // FIFO of ready ranks from readyHead on
	head   int
	back   chan struct{}
	eager  int
	poll   float64
	// sendBuf is the platform's socket send buffer (tcp.send_buffer): a
	// rendezvous send that fits completes when its data starts.
	sendBuf int64

	// streams carry everything one rank sends another, in order.
	streams map[uint64]*stream

	// queueS is the platform's link buffer (tcp.queue) in seconds; with
	// it, onLink lists the items carrying bytes over each resource and
	// linkBps its capacity.
	queueS  float64
	onLink  [][]*item
	linkBps []float64

	abortErr  error
	firstErr  error
	deadlock  *DeadlockError
	finished  int
	endTime   float64
	events    int64
	messages  int64
	log       *bufio.Writer
	logFailed error
}

func newKernel(p *platform.Platform, opts Options) (*kernel, error) {
	res := p.Resources()
	nres := make([]netsim.Resource, len(res))
	for i, r := range res {
		nres[i] = netsim.Resource{Name: r.Name, Bps: r.BandwidthBps}
	}
	ns := p.Noise()
	if opts.Seed != 0 {
		ns.Seed = opts.Seed
	}
	if opts.Noise != "" {
		ns.Profile, ns.LatencyJitter, ns.BandwidthJitter = opts.Noise, 0, 0
	}
	if opts.NoNoise {
		ns.LatencyJitter, ns.BandwidthJitter, ns.Profile = 0, 0, ""
	}
	var real *netsim.Realistic
	switch ns.Profile {
	case "":
	case platform.NoiseRealistic:
		r := netsim.RealisticProfile()
		real, ns.BandwidthJitter = &r, r.BandwidthJitter
	default:
		return nil, fmt.Errorf("sim: unknown noise profile %q", ns.Profile)
	}
	tcp := p.TCP()
	net, err := netsim.New(netsim.Config{
		Resources:       nres,
		Weighting:       Weighting(p, opts.Weighting),
		CrossTraffic:    tcp.CrossTraffic,
		WindowBytes:     tcp.WindowBytes,
		BandwidthJitter: ns.BandwidthJitter,
		Seed:            ns.Seed,
	})
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	// A second stream for latencies, so that bandwidth draws (one per flow)
	// and latency draws (one per message) do not shift each other.
	noise, err := netsim.NewNoise(ns.Seed^0x4c4154454e4359, ns.LatencyJitter, 0)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if real != nil {
		noise = netsim.NewRealisticNoise(ns.Seed^0x4c4154454e4359, *real)
	}
	k := &kernel{
		p:       p,
		opts:    opts,
		net:     net,
		noise:   noise,
		back:    make(chan struct{}),
		streams: map[uint64]*stream{},
		eager:   opts.EagerLimit,
		poll:    opts.PollInterval.Seconds(),
	}
	if k.eager == 0 {
		k.eager = DefaultEagerLimit
	}
	k.sendBuf = tcp.SendBufferBytes
	if q := tcp.QueueS; q > 0 {
		k.queueS = q
		k.onLink = make([][]*item, len(res))
		k.linkBps = make([]float64, len(res))
		for i, r := range res {
			k.linkBps[i] = r.BandwidthBps
		}
	}
	if k.poll <= 0 {
		k.poll = DefaultPollInterval.Seconds()
	}
	if opts.EventLog != nil {
		k.log = bufio.NewWriter(opts.EventLog)
	}
	n := p.NumRanks()
	if n <= 0 {
		return nil, errors.New("sim: platform has no ranks")
	}
	k.ranks = make([]*rank, n)
	for i := range k.ranks {
		host, socket, core := p.RankIdentity(i)
		k.ranks[i] = &rank{
			k:      k,
			id:     i,
			wake:   make(chan struct{}),
			engine: match.New[*message, *request](),
			ov:     p.Overhead(i),
			ident:  comm.Identity{Rank: i, Host: host, Core: core, Socket: socket},
		}
	}
	return k, nil
}

func (k *kernel) run(ctx context.Context, body func(ctx context.Context, c comm.Comm) error) (Result, error) {
	for _, r := range k.ranks {
		go r.main(ctx, body)
		k.makeReady(r)
	}
	for k.finished < len(k.ranks) {
		for k.head < len(k.ready) {
			r := k.ready[k.head]
			k.ready[k.head] = nil
			k.head++
			if k.head == len(k.ready) {
				k.ready, k.head = k.ready[:0], 0
			}
			r.queued = false
			r.wake <- struct{}{}
			<-k.back
			if r.done {
				k.finished++
				k.endTime = k.now
				k.logf("end rank=%d err=%v", r.id, r.err != nil)
				if r.err != nil && k.abortErr == nil {
					k.firstErr = fmt.Errorf("sim: rank %d: %w", r.id, r.err)
					k.abort(&comm.RankError{Rank: r.id, Err: fmt.Errorf("failed: %w", r.err)})
				}
			}
		}
		if k.finished == len(k.ranks) {
			break
		}
		if err := ctx.Err(); err != nil && k.abortErr == nil {
			k.firstErr = fmt.Errorf("sim: %w", err)
			k.abort(err)
			continue
		}
		if k.advance() {
			continue
		}
		if k.abortErr == nil {
			k.deadlock = k.deadlockReport()
			k.firstErr = k.deadlock
			k.abort(k.deadlock)
			continue
		}
		// Aborted with nothing pending: wake whoever still blocks so that
		// it sees the abort (every blocking call checks it).
		woken := false
		for _, r := range k.ranks {
			if r.blocked && !r.queued {
				k.makeReady(r)
				woken = true
			}
		}
		if !woken {
			return Result{}, fmt.Errorf("sim: internal error: %d rank(s) neither finished nor blocked after abort", len(k.ranks)-k.finished)
		}
	}
	if k.log != nil {
		if err := k.log.Flush(); err != nil && k.logFailed == nil {
			k.logFailed = err
		}
	}
	st := k.net.Stats()
	res := Result{
		VirtualTime: seconds(k.endTime),
		Events:      k.events,
		Flows:       st.Flows,
		Messages:    k.messages,
		Solves:      st.Solves,
	}
	if k.firstErr != nil {
		return res, k.firstErr
	}
	if k.logFailed != nil {
		return res, fmt.Errorf("sim: event log: %w", k.logFailed)
	}
	return res, nil
}

// advance moves virtual time to the next event and processes every event at
// that instant (network events first, then timers, each in creation order).
// It reports false when nothing is pending.
func (k *kernel) advance() bool {
	tn, okn := k.net.NextTime()
	tt, okt := k.timers.next()
	switch {
	case !okn && !okt:
		return false
	case okn && (!okt || tn <= tt):
		for _, e := range k.net.Step() {
			k.now = e.Time
			k.events++
			k.flowEvent(e)
		}
	default:
		if err := k.net.SetNow(tt); err != nil {
			// Cannot happen: tt precedes the network's next event.
			panic(err)
		}
		k.now = tt
		for {
			t, ok := k.timers.next()
			if !ok || t != tt {
				break
			}
			tm := k.timers.pop()
			k.events++
			tm.fn()
		}
	}
	return true
}

// at schedules fn at virtual time t (>= now).
func (k *kernel) at(t float64, fn func()) {
	if t < k.now {
		t = k.now
	}
	k.seq++
	k.timers.push(timer{t: t, seq: k.seq, fn: fn})
}

func (k *kernel) makeReady(r *rank) {
	if !r.queued && !r.done {
		r.queued = true
		k.ready = append(k.ready, r)
	}
}

// abort fails every pending and later call with err.
func (k *kernel) abort(err error) {
	if k.abortErr != nil {
		return
	}
	k.abortErr = err
	k.logf("abort %v", err)
	for _, r := range k.ranks {
		if r.blocked {
			k.makeReady(r)
		}
	}
}

// logf writes one line of the event log. Callers on the hot paths test
// k.log first: boxing the arguments allocates even when nothing is
// logged (4 s of 106 at 4,096 ranks, and the GC's work after it).
func (k *kernel) logf(format string, a ...any) {
	if k.log == nil {
		return
	}
	k.log.WriteString(strconv.FormatFloat(k.now, 'g', -1, 64))
	k.log.WriteByte(' ')
	fmt.Fprintf(k.log, format, a...)
	k.log.WriteByte('\n')
}

func seconds(s float64) time.Duration {
	if s >= math.MaxInt64/1e9 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Round(s * 1e9))
}

// rank is one simulated process and its endpoint.
type rank struct {
	k      *kernel
	id     int
	wake   chan struct{}
	engine *match.Engine[*message, *request]
	ov     platform.Overhead
	ident  comm.Identity

	queued  bool     // in the ready queue
	blocked bool     // waiting for the baton
	waiting *request // the request a Wait blocks on, for the deadlock report
	busy    float64  // the rank's CPU is busy with message overheads until then
	// lastFrom and lastCopy are the sender buffer of the last message
	// sent from a copy and the copy (sentCopy), held by lastRefs messages.
	lastFrom *byte
	lastCopy []byte
	lastRefs int
	done     bool
	err      error
}

func (r *rank) main(ctx context.Context, body func(ctx context.Context, c comm.Comm) error) {
	<-r.wake
	defer func() {
		if v := recover(); v != nil {
			r.err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
		}
		r.done = true
		r.k.back <- struct{}{}
	}()
	r.err = body(ctx, comm.NewWorld(r))
}

// block hands the baton back to the kernel until something makes this rank
// ready again.
func (r *rank) block() {
	r.blocked = true
	r.k.back <- struct{}{}
	<-r.wake
	r.blocked = false
}
