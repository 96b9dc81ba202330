package coll

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/local"
	"netaware/comm/sim"
	"netaware/comm/tcp"
)

// The correctness acceptance of issue 7: every collective x builder x root
// x communicator size 1..33 x message size {0, 1, 1000, 1 MiB + 7}
// delivers exactly the right bytes, on the simulator and over TCP.
//
// One world of fullWorldSize ranks runs a whole list of cases; a case on P
// ranks runs on the sub-communicator of the first P ranks (made once per
// size), so no world is started per case and ranks >= P go on to the next
// case they belong to while the others finish. Data are views into one
// pattern buffer at offsets that depend on the operation, the root and the
// rank, so every misplaced, stale or shifted byte shows, and results are
// compared with bytes.Equal block by block, which needs no expected copy.
//
// NETAWARE_FULL_COLL=1 runs the full product (TestFullProductSim,
// TestFullProductTCP; see docs/collectives.md for its size and wall time);
// CI runs a seeded sample (TestAcceptanceSample*) that covers every
// (operation, builder), the edge sizes and 1 MiB + 7 for every operation.

const (
	fullWorldSize = 33
	bigMsg        = 1<<20 + 7
)

// fullMsgSizes are the message sizes of the acceptance: for rooted data
// operations the bytes per rank (MPI's count: the broadcast payload, a
// scatter/gather/allgather block, a reduce vector), for alltoallv the bytes
// per pair, for scatterv/gatherv the base of the uneven counts.
var fullMsgSizes = []int{0, 1, 1000, bigMsg}

type collOp int

const (
	opBcast collOp = iota
	opScatter
	opScatterv
	opGather
	opGatherv
	opReduce
	opAllgather
	opAlltoallv
	opBarrier
	opAllreduce
	opReduceScatter
	numOps
)

var opNames = [...]string{"bcast", "scatter", "scatterv", "gather", "gatherv", "reduce", "allgather", "alltoallv", "barrier", "allreduce", "reduce-scatter"}

func (o collOp) String() string { return opNames[o] }

// rooted operations run a schedule (a builder and a root); alltoallv needs
// none, and barrier has no message size.
func (o collOp) usesSchedule() bool { return o != opAlltoallv }
func (o collOp) usesSize() bool     { return o != opBarrier }

// reduction operations run on every algorithm; the others skip the
// allreduce algorithms (which give them only a binomial tree).
func (o collOp) reduction() bool { return o == opAllreduce || o == opReduceScatter }

// opAlgs is how many algorithms of the list op runs: the allreduce
// algorithms come last in acceptanceAlgorithms, so the other operations
// take the leading ones (and draw the same random sample as before the
// allreduce algorithms were added).
func opAlgs(op collOp, algs []Algorithm) int {
	if op.reduction() {
		return len(algs)
	}
	n := 0
	for n < len(algs) && !registry[algs[n].Name].info.Exchange {
		n++
	}
	return n
}

// rsBlock is the block of a reduce-scatter of message size n on p ranks:
// the P blocks together are about n bytes (ceil(n/P) each), so that the
// 1 MiB + 7 case does not cost P MiB per rank.
func rsBlock(n, p int) int { return (n + p - 1) / p }

// fullCase is one cell of the product. alg indexes the algorithm list; it
// and root are -1/0 for alltoallv, n is 0 for barrier.
type fullCase struct {
	op           collOp
	alg, p, root int
	n            int
	caseID       int
}

// fullCases enumerates the whole product for the algorithms.
func fullCases(algs []Algorithm) []fullCase {
	var out []fullCase
	for p := 1; p <= fullWorldSize; p++ {
		for _, n := range fullMsgSizes {
			out = append(out, fullCase{op: opAlltoallv, alg: -1, p: p, n: n})
		}
		for root := range p {
			for _, n := range fullMsgSizes {
				for a := range algs {
					for op := range numOps {
						switch {
						case a >= opAlgs(op, algs):
						case !op.usesSchedule():
						case !op.usesSize() && n != 0:
						default:
							out = append(out, fullCase{op: op, alg: a, p: p, root: root, n: n})
						}
					}
				}
			}
		}
	}
	return out
}

// sortCases puts cases in the order every rank runs them: by size, root,
// message size, algorithm, operation, so that per-(size, root, n) data
// (the expected reduction) is computed once.
func sortCases(cs []fullCase) {
	slices.SortFunc(cs, func(a, b fullCase) int {
		return cmp.Or(cmp.Compare(a.p, b.p), cmp.Compare(a.root, b.root), cmp.Compare(a.n, b.n),
			cmp.Compare(a.alg, b.alg), cmp.Compare(a.op, b.op))
	})
	for i := range cs {
		cs[i].caseID = i
	}
}

// sampleCases is CI's seeded sample of the product: for every (operation,
// algorithm) a case on 1, 2, 3, 32 and 33 ranks and two at random sizes,
// each with a random root and message size; every root at P = 1, 2, 3 for
// every (operation, algorithm) with one random message size; every root at
// P = 33 for one random algorithm per operation; 1 MiB + 7 for every
// (operation, algorithm) at a random size up to 4 and for every operation
// at P = 33 (allgather and alltoallv: 8) with a random algorithm.
func sampleCases(algs []Algorithm, seed uint64) []fullCase {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	seen := map[fullCase]bool{}
	var out []fullCase
	add := func(op collOp, a, p, root, n int) {
		if !op.usesSchedule() {
			a, root = -1, 0
		}
		if !op.usesSize() {
			n = 0
		}
		c := fullCase{op: op, alg: a, p: p, root: root, n: n}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	small := []int{0, 1, 1000}
	for op := range numOps {
		nalgs := opAlgs(op, algs)
		if !op.usesSchedule() {
			nalgs = 1
		}
		for a := range nalgs {
			for _, p := range []int{1, 2, 3, 32, 33, 4 + rng.IntN(28), 4 + rng.IntN(28)} {
				n := small[rng.IntN(len(small))]
				add(op, a, p, rng.IntN(p), n)
			}
			for p := 1; p <= 3; p++ {
				n := small[rng.IntN(len(small))]
				for root := range p {
					add(op, a, p, root, n)
				}
			}
			p := 1 + rng.IntN(4)
			add(op, a, p, rng.IntN(p), bigMsg)
		}
		a := rng.IntN(nalgs)
		n := small[rng.IntN(len(small))]
		for root := range fullWorldSize {
			add(op, a, fullWorldSize, root, n)
		}
		// Allgather and alltoallv move P^2 blocks: 1 GiB on 33 ranks,
		// which costs CI memory rather than coverage; they get 8 ranks.
		bigP := fullWorldSize
		if op == opAllgather || op == opAlltoallv {
			bigP = 8
		}
		add(op, rng.IntN(nalgs), bigP, rng.IntN(bigP), bigMsg)
	}
	return out
}

// patternBuf holds the data of every case: byte i is i + R[i/256] (mod
// 256) with R random per 256-byte block, so bytes differ inside a block
// and shifts by whole blocks differ almost surely.
var patternBuf = func() []byte {
	rng := rand.New(rand.NewPCG(7, 7))
	b := make([]byte, int(numOps)*fullWorldSize*256+bigMsg*4/3+fullWorldSize+1)
	var r byte
	for i := range b {
		if i%256 == 0 {
			r = byte(rng.Uint32())
		}
		b[i] = byte(i) + r
	}
	return b
}()

// blk is rank's data of n bytes in an operation with the given root: the
// 33 ranks of one (operation, root) start at consecutive offsets of one
// 256-byte block, so even 1-byte blocks of different ranks differ.
func blk(op collOp, root, rank, n int) []byte {
	off := (int(op)*fullWorldSize+root)*256 + rank
	return patternBuf[off : off+n]
}

// vcount is rank r's scatterv/gatherv count for base size n (some zero,
// some larger than n).
func vcount(n, r int) int {
	if r%5 == 3 {
		return 0
	}
	return n * (r%4 + 1) / 3
}

// a2aCount is the bytes rank i sends rank j in alltoallv.
func a2aCount(n, i, j int) int {
	if (i+j)%7 == 3 {
		return 0
	}
	return n * ((i+2*j)%3 + 1) / 3
}

// fastByteSum is byteSum (bytes added modulo 256) eight lanes at a time.
var fastByteSum = Op{Name: "byte-sum", ElemSize: 1, Fn: func(inout, in []byte) {
	const hi = 0x8080808080808080
	i := 0
	for ; i+8 <= len(in); i += 8 {
		a := leU64(inout[i:])
		b := leU64(in[i:])
		putLeU64(inout[i:], ((a&^hi)+(b&^hi))^((a^b)&hi))
	}
	for ; i < len(in); i++ {
		inout[i] += in[i]
	}
}}

func leU64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func putLeU64(b []byte, v uint64) {
	_ = b[7]
	for k := range 8 {
		b[k] = byte(v >> (8 * k))
	}
}

// fullWorld runs SPMD code on fullWorldSize ranks.
type fullWorld struct {
	name string
	run  func(ctx context.Context, body func(ctx context.Context, c comm.Comm) error) error
}

func fullSimWorld() fullWorld {
	return fullWorld{"sim", func(ctx context.Context, body func(ctx context.Context, c comm.Comm) error) error {
		return simRun(ctx, fullWorldSize, body)
	}}
}

func fullTCPWorld() fullWorld {
	return fullWorld{"tcp", func(ctx context.Context, body func(ctx context.Context, c comm.Comm) error) error {
		// Generous heartbeats: a loaded machine must not declare a busy
		// rank dead during a long run.
		cfg := tcp.Config{HeartbeatInterval: 2 * time.Second, HeartbeatTimeout: 2 * time.Minute}
		return tcp.RunLoopback(ctx, fullWorldSize, cfg, body)
	}}
}

func fullLocalWorld() fullWorld {
	return fullWorld{"local", func(ctx context.Context, body func(ctx context.Context, c comm.Comm) error) error {
		return local.Run(ctx, fullWorldSize, body)
	}}
}

// scheduleSet builds, once, the schedule of every (algorithm, size, root)
// a case list needs; segment sizes below 16 KiB are raised to 16 KiB for
// the 1 MiB + 7 messages (tiny segments on a megabyte only cost time;
// segmentation is exercised by the small messages).
type schedKey struct {
	alg, p, root int
	big          bool
}

func buildSchedules(algs []Algorithm, cs []fullCase) (map[schedKey]*Schedule, error) {
	out := map[schedKey]*Schedule{}
	envs := map[int]Env{}
	for _, c := range cs {
		if !c.op.usesSchedule() {
			continue
		}
		k := schedKey{c.alg, c.p, c.root, c.n == bigMsg}
		if out[k] != nil {
			continue
		}
		env, ok := envs[c.p]
		if !ok {
			env = synthEnv(c.p)
			envs[c.p] = env
		}
		a := algs[c.alg]
		if k.big && a.SegSize > 0 && a.SegSize < 16<<10 {
			a.SegSize = 16 << 10
		}
		s, err := a.BuildEnv(c.p, c.root, env)
		if err != nil {
			return nil, fmt.Errorf("%s P=%d root %d: %w", a, c.p, c.root, err)
		}
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("%s P=%d root %d: %w", a, c.p, c.root, err)
		}
		out[k] = s
	}
	return out, nil
}

// fullRun is the shared state of one run: mismatches are recorded and the
// run goes on (the protocol stays consistent), transport errors abort.
type fullRun struct {
	algs    []Algorithm
	cases   []fullCase
	scheds  map[schedKey]*Schedule
	entered []atomic.Int64        // barrier entries per case
	checked atomic.Int64          // cases a rank finished (counted at rank 0)
	opTime  [numOps]time.Duration // rank 0's wall time per operation
	mu      sync.Mutex
	fails   []string
}

func (f *fullRun) opTimes() string {
	var b strings.Builder
	for op, d := range f.opTime {
		fmt.Fprintf(&b, " %s %v", collOp(op), d.Round(time.Millisecond))
	}
	return b.String()
}

func (f *fullRun) describe(c fullCase) string {
	alg := "-"
	if c.alg >= 0 {
		alg = f.algs[c.alg].String()
	}
	return fmt.Sprintf("%s %s P=%d root=%d n=%d", c.op, alg, c.p, c.root, c.n)
}

func (f *fullRun) fail(c fullCase, rank int, format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.fails) < 200 {
		f.fails = append(f.fails, fmt.Sprintf("%s: rank %d: %s", f.describe(c), rank, fmt.Sprintf(format, a...)))
	}
}

// rankState is what one rank keeps between cases.
type rankState struct {
	subs   []comm.Comm // subs[p]: the first p ranks (nil if not a member)
	sumKey [3]int      // (p, root, n) of sum
	sum    []byte
	rsKey  [3]int // (p, root, n) of rsSum
	rsSum  []byte
	recvd  atomic.Int64
}

// reduceSum is the byte sum of the reduce (and allreduce) data of case c.
func (st *rankState) reduceSum(c fullCase) []byte {
	if st.sumKey != [3]int{c.p, c.root, c.n} {
		st.sum = make([]byte, c.n)
		for r := range c.p {
			fastByteSum.Fn(st.sum, blk(opReduce, c.root, r, c.n))
		}
		st.sumKey = [3]int{c.p, c.root, c.n}
	}
	return st.sum
}

func runFullProduct(t *testing.T, w fullWorld, algs []Algorithm, cs []fullCase, progress bool) {
	t.Helper()
	f, wall, err := execFull(t, w, algs, cs, progress)
	for _, m := range f.fails {
		t.Error(m)
	}
	if err != nil {
		t.Fatalf("%s world: %v", w.name, err)
	}
	t.Logf("%s: %d cases checked (every rank of every case, exact bytes) in %v; rank 0 time per operation:%s", w.name, f.checked.Load(), wall.Round(time.Millisecond), f.opTimes())
	if got := f.checked.Load(); got != int64(len(cs)) {
		t.Errorf("%d cases finished, want %d", got, len(cs))
	}
}

// execFull runs cases on one world and returns what it found.
func execFull(t *testing.T, w fullWorld, algs []Algorithm, cs []fullCase, progress bool) (*fullRun, time.Duration, error) {
	t.Helper()
	sortCases(cs)
	scheds, err := buildSchedules(algs, cs)
	if err != nil {
		t.Fatal(err)
	}
	f := &fullRun{algs: algs, cases: cs, scheds: scheds, entered: make([]atomic.Int64, len(cs))}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Hour)
	defer cancel()
	start := time.Now()
	err = w.run(ctx, func(ctx context.Context, c comm.Comm) error {
		me := c.Rank()
		st := &rankState{subs: make([]comm.Comm, fullWorldSize+1), sumKey: [3]int{-1, -1, -1}}
		for p := 1; p <= fullWorldSize; p++ {
			if me < p {
				ranks := make([]int, p)
				for i := range ranks {
					ranks[i] = i
				}
				sub, err := c.Sub(ranks)
				if err != nil {
					return fmt.Errorf("sub-communicator of %d ranks: %w", p, err)
				}
				st.subs[p] = sub
			}
		}
		last := time.Now()
		for _, cs := range f.cases {
			if me >= cs.p {
				continue
			}
			t0 := time.Now()
			if err := f.runCase(ctx, st, st.subs[cs.p], cs); err != nil {
				return fmt.Errorf("%s: %w", f.describe(cs), err)
			}
			if me == 0 {
				f.checked.Add(1)
				f.opTime[cs.op] += time.Since(t0)
				if progress && time.Since(last) > time.Minute {
					last = time.Now()
					t.Logf("%s: %d/%d cases after %v (now P=%d root=%d n=%d); rank 0 time per operation: %v", w.name, f.checked.Load(), len(f.cases), time.Since(start).Round(time.Second), cs.p, cs.root, cs.n, f.opTimes())
				}
			}
		}
		return nil
	})
	return f, time.Since(start), err
}

// runCase runs one case on one rank of sub (the first c.p ranks) and
// checks its bytes.
func (f *fullRun) runCase(ctx context.Context, st *rankState, sub comm.Comm, c fullCase) error {
	me, p, root, n := sub.Rank(), c.p, c.root, c.n
	if c.op == opAlltoallv {
		return f.alltoallv(ctx, sub, c)
	}
	s := f.scheds[schedKey{c.alg, p, root, n == bigMsg}]
	switch c.op {
	case opBcast:
		want := blk(opBcast, root, root, n)
		buf := make([]byte, n)
		if me == root {
			copy(buf, want)
		}
		st.recvd.Store(0)
		if err := s.Bcast(ctx, countingComm{sub, &st.recvd}, buf); err != nil {
			return err
		}
		if !bytes.Equal(buf, want) {
			f.fail(c, me, "wrong bytes (first difference at %d)", firstDiff(buf, want))
		}
		// Every segment once: a tree broadcast posts receives for exactly
		// n bytes at every non-root rank (sub-communicators of
		// hierarchical schedules are not counted, and scatter-allgather
		// re-sends blocks by design).
		if x := s.For(n); x.Kind != KindHier && x.Kind != KindScatterAllgather {
			want := int64(n)
			if me == root || p == 1 {
				want = 0
			}
			if got := st.recvd.Load(); got != want {
				f.fail(c, me, "posted receives for %d bytes, want %d", got, want)
			}
		}
	case opScatter, opScatterv:
		counts := make([]int, p)
		for r := range counts {
			counts[r] = n
			if c.op == opScatterv {
				counts[r] = vcount(n, r)
			}
		}
		var send []byte
		if me == root {
			for r := range p {
				send = append(send, blk(c.op, root, r, counts[r])...)
			}
		}
		recv := make([]byte, counts[me])
		var err error
		if c.op == opScatter {
			err = s.Scatter(ctx, sub, send, recv)
		} else {
			err = s.Scatterv(ctx, sub, send, counts, recv)
		}
		if err != nil {
			return err
		}
		if want := blk(c.op, root, me, counts[me]); !bytes.Equal(recv, want) {
			f.fail(c, me, "wrong block (first difference at %d)", firstDiff(recv, want))
		}
	case opGather, opGatherv:
		counts := make([]int, p)
		total := 0
		for r := range counts {
			counts[r] = n
			if c.op == opGatherv {
				counts[r] = vcount(n, r)
			}
			total += counts[r]
		}
		var recv []byte
		if me == root {
			recv = make([]byte, total)
		}
		mine := blk(c.op, root, me, counts[me])
		var err error
		if c.op == opGather {
			err = s.Gather(ctx, sub, mine, recv)
		} else {
			err = s.Gatherv(ctx, sub, mine, counts, recv)
		}
		if err != nil {
			return err
		}
		if me == root {
			off := 0
			for r := range p {
				if got, want := recv[off:off+counts[r]], blk(c.op, root, r, counts[r]); !bytes.Equal(got, want) {
					f.fail(c, me, "block of rank %d wrong (first difference at %d)", r, firstDiff(got, want))
				}
				off += counts[r]
			}
		}
	case opReduce:
		var recv []byte
		if me == root {
			recv = make([]byte, n)
		}
		if err := s.Reduce(ctx, sub, blk(opReduce, root, me, n), recv, fastByteSum); err != nil {
			return err
		}
		if me == root {
			if sum := st.reduceSum(c); !bytes.Equal(recv, sum) {
				f.fail(c, me, "wrong sums (first difference at %d)", firstDiff(recv, sum))
			}
		}
	case opAllreduce:
		// The reduce's data, so that the expected sums are shared.
		recv := make([]byte, n)
		if err := s.Allreduce(ctx, sub, blk(opReduce, root, me, n), recv, fastByteSum); err != nil {
			return err
		}
		if sum := st.reduceSum(c); !bytes.Equal(recv, sum) {
			f.fail(c, me, "wrong sums (first difference at %d)", firstDiff(recv, sum))
		}
	case opReduceScatter:
		m := rsBlock(n, p)
		recv := make([]byte, m)
		if err := s.ReduceScatter(ctx, sub, blk(opReduceScatter, root, me, p*m), recv, fastByteSum); err != nil {
			return err
		}
		if st.rsKey != [3]int{p, root, n} {
			st.rsSum = make([]byte, p*m)
			for r := range p {
				fastByteSum.Fn(st.rsSum, blk(opReduceScatter, root, r, p*m))
			}
			st.rsKey = [3]int{p, root, n}
		}
		if want := st.rsSum[me*m : (me+1)*m]; !bytes.Equal(recv, want) {
			f.fail(c, me, "wrong block sums (first difference at %d)", firstDiff(recv, want))
		}
	case opAllgather:
		recv := make([]byte, p*n)
		if err := s.Allgather(ctx, sub, blk(opAllgather, root, me, n), recv); err != nil {
			return err
		}
		for r := range p {
			if got, want := recv[r*n:(r+1)*n], blk(opAllgather, root, r, n); !bytes.Equal(got, want) {
				f.fail(c, me, "block of rank %d wrong (first difference at %d)", r, firstDiff(got, want))
			}
		}
	case opBarrier:
		f.entered[c.caseID].Add(1)
		if err := s.Barrier(ctx, sub); err != nil {
			return err
		}
		if got := f.entered[c.caseID].Load(); got != int64(p) {
			f.fail(c, me, "left the barrier when %d of %d ranks had entered", got, p)
		}
	default:
		return errors.New("unknown operation")
	}
	return nil
}

// alltoallv: rank i sends rank j a2aCount(n, i, j) bytes of its (i, j)
// block; blocks lie in rank order in both buffers.
func (f *fullRun) alltoallv(ctx context.Context, sub comm.Comm, c fullCase) error {
	me, p, n := sub.Rank(), c.p, c.n
	sc, sd, rc, rd := make([]int, p), make([]int, p), make([]int, p), make([]int, p)
	var send []byte
	rtot := 0
	for j := range p {
		sc[j], sd[j] = a2aCount(n, me, j), len(send)
		send = append(send, blk(opAlltoallv, me, j, sc[j])...)
		rc[j], rd[j] = a2aCount(n, j, me), rtot
		rtot += rc[j]
	}
	recv := make([]byte, rtot)
	if err := Alltoallv(ctx, sub, send, sc, sd, recv, rc, rd); err != nil {
		return err
	}
	for j := range p {
		if got, want := recv[rd[j]:rd[j]+rc[j]], blk(opAlltoallv, j, me, rc[j]); !bytes.Equal(got, want) {
			f.fail(c, me, "block from rank %d wrong (first difference at %d)", j, firstDiff(got, want))
		}
	}
	return nil
}

// oneRootOf is the root NETAWARE_FULL_COLL_ROOTS=one keeps for P ranks:
// it moves through the ranks as P grows (0, 1, 1, 2, 3, 3, 4, 5, ...).
func oneRootOf(p int) int { return p * 5 / 8 }

func fullProductEnabled(t *testing.T) {
	if os.Getenv("NETAWARE_FULL_COLL") == "" {
		t.Skip("the full product takes long: set NETAWARE_FULL_COLL=1 to run it")
	}
}

// fullProductCases is the full product, optionally cut into parts (to
// spread it over machines or runs): NETAWARE_FULL_COLL_P=lo-hi keeps
// communicator sizes lo..hi, NETAWARE_FULL_COLL_N=a,b,... keeps those
// message sizes (barrier cases go with message size 0), and
// NETAWARE_FULL_COLL_ROOTS=one keeps one root per size (oneRootOf), and
// NETAWARE_FULL_COLL_ALGS=a;b;... keeps those algorithms (as printed, e.g.
// "dfs-pipeline(seg=500,k=3)"); alltoallv, which has none, is dropped),
// and NETAWARE_FULL_COLL_OPS=bcast,alltoallv,... keeps those operations.
func fullProductCases(t *testing.T, algs []Algorithm) []fullCase {
	lo, hi := 1, fullWorldSize
	if v := os.Getenv("NETAWARE_FULL_COLL_P"); v != "" {
		if _, err := fmt.Sscanf(v, "%d-%d", &lo, &hi); err != nil || lo < 1 || hi > fullWorldSize || lo > hi {
			t.Fatalf("NETAWARE_FULL_COLL_P=%q: want lo-hi within 1-%d", v, fullWorldSize)
		}
	}
	keepN := map[int]bool{}
	if v := os.Getenv("NETAWARE_FULL_COLL_N"); v != "" {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || !slices.Contains(fullMsgSizes, n) {
				t.Fatalf("NETAWARE_FULL_COLL_N=%q: want sizes among %v", v, fullMsgSizes)
			}
			keepN[n] = true
		}
	}
	oneRoot := false
	switch v := os.Getenv("NETAWARE_FULL_COLL_ROOTS"); v {
	case "", "all":
	case "one":
		oneRoot = true
	default:
		t.Fatalf("NETAWARE_FULL_COLL_ROOTS=%q: want all or one", v)
	}
	var keepOp map[collOp]bool
	if v := os.Getenv("NETAWARE_FULL_COLL_OPS"); v != "" {
		keepOp = map[collOp]bool{}
		for _, name := range strings.Split(v, ",") {
			i := slices.Index(opNames[:], name)
			if i < 0 {
				t.Fatalf("NETAWARE_FULL_COLL_OPS: no operation %q (have %v)", name, opNames)
			}
			keepOp[collOp(i)] = true
		}
	}
	var keepAlg map[int]bool
	if v := os.Getenv("NETAWARE_FULL_COLL_ALGS"); v != "" {
		keepAlg = map[int]bool{}
		for _, name := range strings.Split(v, ";") {
			i := slices.IndexFunc(algs, func(a Algorithm) bool { return a.String() == name })
			if i < 0 {
				t.Fatalf("NETAWARE_FULL_COLL_ALGS: no algorithm %q in the list", name)
			}
			keepAlg[i] = true
		}
	}
	var out []fullCase
	for _, c := range fullCases(algs) {
		if c.p >= lo && c.p <= hi && (len(keepN) == 0 || keepN[c.n]) && (!oneRoot || !c.op.usesSchedule() || c.root == oneRootOf(c.p)) &&
			(keepAlg == nil || keepAlg[c.alg]) && (keepOp == nil || keepOp[c.op]) {
			out = append(out, c)
		}
	}
	if v := os.Getenv("NETAWARE_FULL_COLL_LIMIT"); v != "" {
		if k, err := strconv.Atoi(v); err == nil && k < len(out) {
			out = out[:k] // for profiling a part
		}
	}
	return out
}

// TestFullProductSim and TestFullProductTCP are the acceptance itself;
// run by hand:
//
//	NETAWARE_FULL_COLL=1 go test -run 'TestFullProduct' -timeout 0 -v ./coll
func TestFullProductSim(t *testing.T) {
	fullProductEnabled(t)
	runFullProduct(t, fullSimWorld(), acceptanceAlgorithms(), fullProductCases(t, acceptanceAlgorithms()), true)
}

func TestFullProductTCP(t *testing.T) {
	fullProductEnabled(t)
	runFullProduct(t, fullTCPWorld(), acceptanceAlgorithms(), fullProductCases(t, acceptanceAlgorithms()), true)
}

// The CI sample: the same engine on a seeded sample of the product.
func TestAcceptanceSampleSim(t *testing.T) {
	runFullProduct(t, fullSimWorld(), acceptanceAlgorithms(), sampleCases(acceptanceAlgorithms(), 1), false)
}

func TestAcceptanceSampleTCP(t *testing.T) {
	runFullProduct(t, fullTCPWorld(), acceptanceAlgorithms(), sampleCases(acceptanceAlgorithms(), 2), false)
}

func TestAcceptanceSampleLocal(t *testing.T) {
	runFullProduct(t, fullLocalWorld(), acceptanceAlgorithms(), sampleCases(acceptanceAlgorithms(), 3), false)
}

// The CI sample keeps what its comment promises, for every seed used.
func TestSampleCoversEdges(t *testing.T) {
	algs := acceptanceAlgorithms()
	for seed := uint64(1); seed <= 3; seed++ {
		type opAlg struct {
			op  collOp
			alg int
		}
		sizes := map[opAlg]map[int]bool{}
		roots := map[[3]int]map[int]bool{} // (op, alg, p) -> roots
		bigOp := map[collOp]bool{}
		for _, c := range sampleCases(algs, seed) {
			k := opAlg{c.op, c.alg}
			if sizes[k] == nil {
				sizes[k] = map[int]bool{}
			}
			sizes[k][c.p] = true
			rk := [3]int{int(c.op), c.alg, c.p}
			if roots[rk] == nil {
				roots[rk] = map[int]bool{}
			}
			roots[rk][c.root] = true
			if c.n == bigMsg {
				bigOp[c.op] = true
			}
		}
		for op := range numOps {
			idx := []int{-1}
			if op.usesSchedule() {
				idx = nil
				for a := range opAlgs(op, algs) {
					idx = append(idx, a)
				}
			}
			allAt33 := false
			for _, a := range idx {
				for _, p := range []int{1, 2, 3, 32, 33} {
					if !sizes[opAlg{op, a}][p] {
						t.Errorf("seed %d: %s alg %d never on %d ranks", seed, op, a, p)
					}
				}
				for p := 1; p <= 3; p++ {
					if op.usesSchedule() && len(roots[[3]int{int(op), a, p}]) != p {
						t.Errorf("seed %d: %s alg %d on %d ranks misses roots", seed, op, a, p)
					}
				}
				if len(roots[[3]int{int(op), a, 33}]) == 33 {
					allAt33 = true
				}
			}
			if op.usesSchedule() && !allAt33 {
				t.Errorf("seed %d: %s never runs every root on 33 ranks", seed, op)
			}
			if op.usesSize() && !bigOp[op] {
				t.Errorf("seed %d: %s never runs 1 MiB + 7", seed, op)
			}
		}
	}
}

// corruptingComm flips the first byte of every non-empty message it
// receives, on every communicator derived from it.
type corruptingComm struct{ comm.Comm }

func (c corruptingComm) Irecv(src, tag int, b []byte) comm.Request {
	return corruptReq{c.Comm.Irecv(src, tag, b), b}
}

func (c corruptingComm) Recv(ctx context.Context, src, tag int, b []byte) (comm.Status, error) {
	return corruptReq{c.Comm.Irecv(src, tag, b), b}.Wait(ctx)
}

func (c corruptingComm) Sub(ranks []int) (comm.Comm, error) {
	s, err := c.Comm.Sub(ranks)
	if err != nil {
		return nil, err
	}
	return corruptingComm{s}, nil
}

type corruptReq struct {
	comm.Request
	b []byte
}

func (r corruptReq) Wait(ctx context.Context) (comm.Status, error) {
	st, err := r.Request.Wait(ctx)
	if err == nil && st.Count > 0 {
		r.b[0] ^= 0x5a
	}
	return st, err
}

// The engine's checks can fail: with every received message damaged in
// one byte, every data-moving operation reports wrong bytes.
func TestFullProductDetectsCorruption(t *testing.T) {
	w := fullLocalWorld()
	inner := w.run
	w.run = func(ctx context.Context, body func(ctx context.Context, c comm.Comm) error) error {
		return inner(ctx, func(ctx context.Context, c comm.Comm) error { return body(ctx, corruptingComm{c}) })
	}
	algs := []Algorithm{{Name: "linear"}, {Name: "pipeline", SegSize: 100},
		{Name: "recursive-doubling"}, {Name: "rabenseifner"}, {Name: "ring"}}
	for op := range numOps {
		for a := range opAlgs(op, algs) {
			if op == opBarrier || op == opAlltoallv && a > 0 {
				continue
			}
			c := fullCase{op: op, alg: a, p: 4, root: 2, n: 1000}
			if op == opAlltoallv {
				c.alg, c.root = -1, 0
			}
			f, _, err := execFull(t, w, algs, []fullCase{c}, false)
			if err != nil {
				t.Fatalf("%s %s: %v", op, algs[max(a, 0)], err)
			}
			if len(f.fails) == 0 {
				t.Errorf("%s %s: damaged messages went unnoticed", op, algs[max(a, 0)])
			}
		}
	}
}

// The CI sample again with every message a rendezvous (eager limit 0) and
// with a 512-byte limit: no algorithm may rely on a send completing
// before its receiver is there (issue 18's deadlock was such a send).
func TestAcceptanceSampleSimAnyEagerLimit(t *testing.T) {
	for i, eager := range []int{-1, 512} {
		w := fullWorld{fmt.Sprintf("sim-eager%d", eager), func(ctx context.Context, body func(ctx context.Context, c comm.Comm) error) error {
			p, err := twoRacks(fullWorldSize)
			if err != nil {
				return err
			}
			_, err = sim.Run(ctx, p, sim.Options{EagerLimit: eager}, body)
			return err
		}}
		runFullProduct(t, w, acceptanceAlgorithms(), sampleCases(acceptanceAlgorithms(), uint64(4+i)), false)
	}
}
