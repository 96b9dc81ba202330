package coll

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/local"
	"netaware/comm/tcp"
	"netaware/topo"
)

// reductionAlgorithms are the allreduce algorithms and two trees (whose
// Allreduce is Reduce + Bcast, ReduceScatter Reduce + Scatter).
func reductionAlgorithms() []Algorithm {
	return []Algorithm{
		{Name: "recursive-doubling"}, {Name: "rabenseifner"}, {Name: "ring"}, {Name: "dfs-ring"},
		{Name: "levels-allreduce"}, {Name: "binomial"}, {Name: "hierarchical"},
	}
}

// runLocal runs body on p goroutine ranks with a deadline.
func runLocal(t *testing.T, p int, body func(ctx context.Context, c comm.Comm) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := local.Run(ctx, p, body); err != nil {
		t.Fatal(err)
	}
}

// Worked by hand: three ranks hold [1 2], [3 4], [5 6]; the sum is [9 12]
// everywhere. Reduce-scatter of [r 10r 100r] (r = 1, 2, 3) gives rank 0
// 6, rank 1 60, rank 2 600.
func TestAllreduceByHand(t *testing.T) {
	for _, a := range reductionAlgorithms() {
		s, err := a.BuildEnv(3, 0, synthEnv(3))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		var mu sync.Mutex
		got := map[int][2][]float64{}
		runLocal(t, 3, func(ctx context.Context, c comm.Comm) error {
			me := c.Rank()
			send := Float64Bytes([]float64{float64(2*me + 1), float64(2*me + 2)})
			recv := make([]byte, 16)
			if err := s.Allreduce(ctx, c, send, recv, SumFloat64); err != nil {
				return err
			}
			x := float64(me + 1)
			block := make([]byte, 8)
			if err := s.ReduceScatter(ctx, c, Float64Bytes([]float64{x, 10 * x, 100 * x}), block, SumFloat64); err != nil {
				return err
			}
			mu.Lock()
			got[me] = [2][]float64{BytesFloat64(recv), BytesFloat64(block)}
			mu.Unlock()
			return nil
		})
		for r := range 3 {
			if !slices.Equal(got[r][0], []float64{9, 12}) {
				t.Errorf("%s: rank %d allreduce %v, want [9 12]", a, r, got[r][0])
			}
			if want := []float64{6, 60, 600}[r]; !slices.Equal(got[r][1], []float64{want}) {
				t.Errorf("%s: rank %d reduce-scatter %v, want [%v]", a, r, got[r][1], want)
			}
		}
	}
}

// The steps of small schedules, worked by hand.
func TestExchangeStepsByHand(t *testing.T) {
	// P = 3: rank 0 folds into rank 1; ranks 1 and 2 (new ranks 0, 1)
	// swap; rank 1 hands the result back to rank 0.
	rd, err := RecursiveDoubling(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	all := PartRange{0, 1}
	want := map[int][]Step{
		0: {{Round: 0, Peer: 1, Send: true, Parts: all}, {Round: 3, Peer: 1, Parts: all}},
		1: {{Round: 0, Peer: 0, Parts: all, Reduce: true}, {Round: 1, Peer: 2, Parts: all, Reduce: true}, {Round: 1, Peer: 2, Send: true, Parts: all}, {Round: 3, Peer: 0, Send: true, Parts: all}},
		2: {{Round: 1, Peer: 1, Parts: all, Reduce: true}, {Round: 1, Peer: 1, Send: true, Parts: all}},
	}
	for r, w := range want {
		if got := rd.StepsOf(r); !slices.Equal(got, w) {
			t.Errorf("recursive-doubling P=3 rank %d: %+v, want %+v", r, got, w)
		}
	}
	// P = 4 Rabenseifner, rank 2 (0b10): bit 0 is clear, so in round 1
	// with rank 3 it keeps parts [0,2) and gives [2,4); bit 1 is set, so in
	// round 2 with rank 0 it keeps [1,2) and gives [0,1); then the
	// allgather in reverse.
	rb, err := Rabenseifner(4, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := func(lo, hi int) PartRange { return PartRange{lo, hi} }
	w2 := []Step{
		{Round: 1, Peer: 3, Parts: p(0, 2), Reduce: true}, {Round: 1, Peer: 3, Send: true, Parts: p(2, 4)},
		{Round: 2, Peer: 0, Parts: p(1, 2), Reduce: true}, {Round: 2, Peer: 0, Send: true, Parts: p(0, 1)},
		{Round: 3, Peer: 0, Parts: p(0, 1)}, {Round: 3, Peer: 0, Send: true, Parts: p(1, 2)},
		{Round: 4, Peer: 3, Parts: p(2, 4)}, {Round: 4, Peer: 3, Send: true, Parts: p(0, 2)},
	}
	if got := rb.StepsOf(2); !slices.Equal(got, w2) {
		t.Errorf("rabenseifner P=4 rank 2: %+v, want %+v", got, w2)
	}
	// Ring of 3, rank 0: reduce-scatter passes part 2 then part 1 to rank
	// 1 and combines part 1 then part 0 from rank 2, ending with part 0.
	rg, err := Ring(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	w0 := []Step{
		{Round: 0, Peer: 2, Parts: p(1, 2), Reduce: true}, {Round: 0, Peer: 1, Send: true, Parts: p(2, 3)},
		{Round: 1, Peer: 2, Parts: p(0, 1), Reduce: true}, {Round: 1, Peer: 1, Send: true, Parts: p(1, 2)},
		{Round: 2, Peer: 2, Parts: p(2, 3)}, {Round: 2, Peer: 1, Send: true, Parts: p(0, 1)},
		{Round: 3, Peer: 2, Parts: p(1, 2)}, {Round: 3, Peer: 1, Send: true, Parts: p(2, 3)},
	}
	if got := rg.StepsOf(0); !slices.Equal(got, w0) {
		t.Errorf("ring P=3 rank 0: %+v, want %+v", got, w0)
	}
}

func TestExchangeSchedulesValidate(t *testing.T) {
	for p := 1; p <= 40; p++ {
		for _, a := range reductionAlgorithms()[:5] {
			s, err := a.BuildEnv(p, p/3, synthEnv(p))
			if err != nil {
				t.Fatalf("%s P=%d: %v", a, p, err)
			}
			if err := s.Validate(); err != nil {
				t.Errorf("%s P=%d: %v", a, p, err)
			}
		}
	}
	if _, err := RingOrder("ring", []int{0, 2, 2}, 0); err == nil {
		t.Error("a ring order with a repeated rank was accepted")
	}
}

// matMul is the product of 2x2 matrices of bytes (mod 256), row-major in
// one 4-byte element: associative, not commutative.
var matMul = Op{Name: "matmul2x2", ElemSize: 4, NonCommutative: true, Fn: func(inout, in []byte) {
	for i := 0; i+4 <= len(in); i += 4 {
		a, b := inout[i:i+4], in[i:i+4]
		a0 := a[0]*b[0] + a[1]*b[2]
		a1 := a[0]*b[1] + a[1]*b[3]
		a2 := a[2]*b[0] + a[3]*b[2]
		a3 := a[2]*b[1] + a[3]*b[3]
		a[0], a[1], a[2], a[3] = a0, a1, a2, a3
	}
}}

// matData is rank r's vector of k matrices.
func matData(r, k int) []byte {
	b := make([]byte, 4*k)
	for i := range b {
		b[i] = byte(r*37 + i*11 + (r*i)%7 + 1)
	}
	return b
}

// foldRanks is x_0 (+) ... (+) x_{p-1} (or the reverse order).
func foldRanks(op Op, p, k int, reverse bool) []byte {
	acc := matData(0, k)
	if reverse {
		acc = matData(p-1, k)
	}
	for i := 1; i < p; i++ {
		r := i
		if reverse {
			r = p - 1 - i
		}
		op.Fn(acc, matData(r, k))
	}
	return acc
}

// MPI: the result is the rank-order fold. Recursive doubling and
// Rabenseifner keep rank order (also through the fold of a non-power of
// two); ring and the trees reject the operation.
func TestNonCommutativeRankOrder(t *testing.T) {
	for p := 1; p <= 12; p++ {
		for _, k := range []int{1, 5, 12, 17} {
			want := foldRanks(matMul, p, k, false)
			if p > 1 && bytes.Equal(want, foldRanks(matMul, p, k, true)) {
				t.Fatalf("P=%d k=%d: the test data commute", p, k)
			}
			for _, a := range reductionAlgorithms() {
				s, err := a.BuildEnv(p, 0, synthEnv(p))
				if err != nil {
					t.Fatal(err)
				}
				var mu sync.Mutex
				var errs []error
				runLocal(t, p, func(ctx context.Context, c comm.Comm) error {
					me := c.Rank()
					recv := make([]byte, 4*k)
					err := s.Allreduce(ctx, c, matData(me, k), recv, matMul)
					if err == nil && !bytes.Equal(recv, want) {
						err = fmt.Errorf("rank %d: allreduce %v, want %v", me, recv, want)
					}
					if err == nil && k*4%p == 0 {
						// Reduce-scatter of the same data seen as p blocks.
						m := 4 * k / p
						if m%4 == 0 {
							block := make([]byte, m)
							err = s.ReduceScatter(ctx, c, matData(me, k), block, matMul)
							if err == nil && !bytes.Equal(block, want[me*m:(me+1)*m]) {
								err = fmt.Errorf("rank %d: reduce-scatter %v, want %v", me, block, want[me*m:(me+1)*m])
							}
						}
					}
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					}
					mu.Unlock()
					return nil
				})
				ordered := a.Name == "recursive-doubling" || a.Name == "rabenseifner"
				switch {
				case ordered && len(errs) > 0:
					t.Errorf("%s P=%d k=%d: %v", a, p, k, errs[0])
				case !ordered && p > 1 && len(errs) != p:
					t.Errorf("%s P=%d k=%d: %d of %d ranks rejected the non-commutative operation", a, p, k, len(errs), p)
				case !ordered && p > 1 && !strings.Contains(errs[0].Error(), "not commutative"):
					t.Errorf("%s P=%d: error %v does not say why", a, p, errs[0])
				}
			}
		}
	}
}

func TestReductionBadInput(t *testing.T) {
	s, err := Ring(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	runLocal(t, 2, func(ctx context.Context, c comm.Comm) error {
		if err := s.Allreduce(ctx, c, make([]byte, 12), make([]byte, 12), SumFloat64); err == nil {
			t.Error("12 bytes of float64 accepted")
		}
		if err := s.Allreduce(ctx, c, make([]byte, 16), make([]byte, 8), SumFloat64); err == nil {
			t.Error("short receive buffer accepted")
		}
		if err := s.ReduceScatter(ctx, c, make([]byte, 24), make([]byte, 8), SumFloat64); err == nil {
			t.Error("3 blocks for 2 ranks accepted")
		}
		return nil
	})
	if _, err := (Algorithm{Name: "dfs-ring"}).Build(4, 0, nil); err == nil {
		t.Error("dfs-ring without a topology accepted")
	}
	if slices.ContainsFunc(Algorithms(), func(i Info) bool { return i.Exchange }) {
		t.Error("Algorithms (the broadcast tuner's list) lists allreduce algorithms")
	}
	if n := len(ReductionAlgorithms()); n != 5 {
		t.Errorf("%d reduction algorithms, want 5", n)
	}
}

// The rank order holds on the simulator and over TCP loopback too (7
// ranks: the fold of a non-power of two).
func TestNonCommutativeRankOrderWorlds(t *testing.T) {
	const p, k = 7, 7
	want := foldRanks(matMul, p, k, false)
	worlds := map[string]func(ctx context.Context, body func(ctx context.Context, c comm.Comm) error) error{
		"sim": func(ctx context.Context, body func(ctx context.Context, c comm.Comm) error) error {
			return simRun(ctx, p, body)
		},
		"tcp": func(ctx context.Context, body func(ctx context.Context, c comm.Comm) error) error {
			return tcp.RunLoopback(ctx, p, tcp.Config{}, body)
		},
	}
	for name, run := range worlds {
		for _, a := range []Algorithm{{Name: "recursive-doubling"}, {Name: "rabenseifner"}} {
			s, err := a.Build(p, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err = run(ctx, func(ctx context.Context, c comm.Comm) error {
				me := c.Rank()
				recv := make([]byte, 4*k)
				if err := s.Allreduce(ctx, c, matData(me, k), recv, matMul); err != nil {
					return err
				}
				if !bytes.Equal(recv, want) {
					return fmt.Errorf("rank %d: %v, want %v", me, recv, want)
				}
				block := make([]byte, 4)
				if err := s.ReduceScatter(ctx, c, matData(me, k), block, matMul); err != nil {
					return err
				}
				if !bytes.Equal(block, want[4*me:4*me+4]) {
					return fmt.Errorf("rank %d: reduce-scatter %v, want %v", me, block, want[4*me:4*me+4])
				}
				return nil
			})
			cancel()
			if err != nil {
				t.Errorf("%s %s: %v", name, a, err)
			}
		}
	}
}

// Three hosts of two ranks, root 3: the groups reduce to their leaders
// (3, its host's root; 0 and 4, the lowest ranks), the leaders (root
// first) allreduce, and the groups broadcast back. Ranks hold r+1, so
// every rank ends with 21.
func TestLevelsAllreduceByHand(t *testing.T) {
	tp := &topo.Topology{Version: 1, Size: 6, Levels: []topo.Level{
		{Name: "host", Groups: [][]int{{0, 1}, {2, 3}, {4, 5}}},
		{Name: "all", Groups: [][]int{{0, 1, 2, 3, 4, 5}}},
	}}
	s, err := (Algorithm{Name: "levels-allreduce"}).Build(6, 3, tp)
	if err != nil {
		t.Fatal(err)
	}
	var groups [][]int
	for _, g := range s.Stages[0].Groups {
		groups = append(groups, g.Ranks)
	}
	if want := [][]int{{0, 1}, {3, 2}, {4, 5}}; fmt.Sprint(groups) != fmt.Sprint(want) {
		t.Errorf("groups %v, want %v", groups, want)
	}
	if got := s.Stages[1].Groups[0].Ranks; !slices.Equal(got, []int{3, 0, 4}) {
		t.Errorf("leaders %v, want [3 0 4]", got)
	}
	if s.Stages[1].Groups[0].Sched.Name != "ring" {
		t.Errorf("leaders run %q, want ring", s.Stages[1].Groups[0].Sched.Name)
	}
	var mu sync.Mutex
	got := make([][]float64, 6)
	runLocal(t, 6, func(ctx context.Context, c comm.Comm) error {
		recv := make([]byte, 8)
		if err := s.Allreduce(ctx, c, Float64Bytes([]float64{float64(c.Rank() + 1)}), recv, SumFloat64); err != nil {
			return err
		}
		mu.Lock()
		got[c.Rank()] = BytesFloat64(recv)
		mu.Unlock()
		return nil
	})
	for r, v := range got {
		if !slices.Equal(v, []float64{21}) {
			t.Errorf("rank %d: %v, want [21]", r, v)
		}
	}
}

// The text form marks the transfers whose receiver combines.
func TestWriteTextExchange(t *testing.T) {
	s, err := RecursiveDoubling(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"schedule recursive-doubling (exchange): 3 ranks",
		"round 0: 0 -> 1 parts [0,1) combined\n",
		"round 1: 2 -> 1 parts [0,1) combined\n",
		"round 3: 1 -> 0 parts [0,1)\n",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("missing %q in\n%s", line, b.String())
		}
	}
	r, err := Ring(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "reduce-scatter round 0: 0 -> 1 parts [1,2) combined\n") {
		t.Errorf("ring reduce-scatter steps missing in\n%s", b.String())
	}
}

// The package-level calls build and run in one step; a broadcast decision
// is refused.
func TestAllreduceCall(t *testing.T) {
	runLocal(t, 4, func(ctx context.Context, c comm.Comm) error {
		x := float64(c.Rank())
		recv := make([]byte, 8)
		if err := Allreduce(ctx, c, Float64Bytes([]float64{x}), recv, MaxFloat64, Algorithm{Name: "rabenseifner"}); err != nil {
			return err
		}
		if got := BytesFloat64(recv); got[0] != 3 {
			t.Errorf("rank %d: max %v, want 3", c.Rank(), got)
		}
		if err := ReduceScatter(ctx, c, Float64Bytes([]float64{x, x, x, x}), recv, SumFloat64, Algorithm{Name: "levels-allreduce"}, WithTopology(synthTopo(4, true))); err != nil {
			return err
		}
		if got := BytesFloat64(recv); got[0] != 6 {
			t.Errorf("rank %d: sum %v, want 6", c.Rank(), got)
		}
		if err := Allreduce(ctx, c, recv, recv, SumFloat64, Auto); err == nil {
			t.Error("auto accepted")
		}
		return nil
	})
}
