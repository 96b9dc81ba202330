package netaware

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"netaware/coll"
	"netaware/platform"
	"netaware/topo"
)

// matMul is a reduction that is associative but not commutative: the
// product of 2x2 integer matrices (exact in float64 for the sizes used).
var matMul = coll.Op{Name: "matmul", ElemSize: 32, NonCommutative: true, Fn: func(inout, in []byte) {
	for k := 0; k+32 <= len(inout); k += 32 {
		a, b := coll.BytesFloat64(inout[k:k+32]), coll.BytesFloat64(in[k:k+32])
		r := []float64{a[0]*b[0] + a[1]*b[2], a[0]*b[1] + a[1]*b[3], a[2]*b[0] + a[3]*b[2], a[2]*b[1] + a[3]*b[3]}
		copy(inout[k:k+32], coll.Float64Bytes(r))
	}
}}

func rankMatrix(r int) []float64 { return []float64{1, float64(r%3 + 1), float64(r%2 + 1), 1} }

// checkCollectives runs every collective of c with small vectors whose
// results are worked out by hand, and returns the first mismatch.
func checkCollectives(ctx context.Context, c *Comm) error {
	p, me := c.Size(), c.Rank()
	root := p / 2
	f64 := coll.Float64Bytes
	// Bcast: root's bytes everywhere.
	buf := make([]byte, 5)
	if me == root {
		copy(buf, "hello")
	}
	if err := c.Bcast(ctx, root, buf); err != nil || string(buf) != "hello" {
		return fmt.Errorf("bcast: %q, %v", buf, err)
	}
	// Reduce and Allreduce of sums: element i sums rank + i over ranks.
	want := func(i int) float64 { return float64(p*(p-1)/2 + p*i) }
	vec := []float64{float64(me), float64(me + 1), float64(me + 2)}
	red := make([]byte, 24)
	if err := c.Reduce(ctx, root, f64(vec), red, coll.SumFloat64); err != nil {
		return fmt.Errorf("reduce: %w", err)
	}
	if me == root {
		for i, v := range coll.BytesFloat64(red) {
			if v != want(i) {
				return fmt.Errorf("reduce: element %d = %g, want %g", i, v, want(i))
			}
		}
	}
	all := make([]byte, 24)
	if err := c.Allreduce(ctx, f64(vec), all, coll.SumFloat64); err != nil {
		return fmt.Errorf("allreduce: %w", err)
	}
	for i, v := range coll.BytesFloat64(all) {
		if v != want(i) {
			return fmt.Errorf("allreduce: element %d = %g, want %g", i, v, want(i))
		}
	}
	// Non-commutative: the product M_0 M_1 ... M_{p-1}, in rank order.
	prod := rankMatrix(0)
	for r := 1; r < p; r++ {
		out := f64(prod)
		matMul.Fn(out, f64(rankMatrix(r)))
		prod = coll.BytesFloat64(out)
	}
	mm := make([]byte, 32)
	if err := c.Allreduce(ctx, f64(rankMatrix(me)), mm, matMul); err != nil {
		return fmt.Errorf("allreduce matmul: %w", err)
	}
	if got := coll.BytesFloat64(mm); fmt.Sprint(got) != fmt.Sprint(prod) {
		return fmt.Errorf("allreduce matmul: %v, want %v", got, prod)
	}
	clear(mm)
	if err := c.Reduce(ctx, root, f64(rankMatrix(me)), mm, matMul); err != nil {
		return fmt.Errorf("reduce matmul: %w", err)
	}
	if got := coll.BytesFloat64(mm); me == root && fmt.Sprint(got) != fmt.Sprint(prod) {
		return fmt.Errorf("reduce matmul: %v, want %v", got, prod)
	}
	// ReduceScatter: block b of every rank's vector is b; rank r gets p*r.
	blocks := make([]float64, p)
	for b := range blocks {
		blocks[b] = float64(b)
	}
	mine := make([]byte, 8)
	if err := c.ReduceScatter(ctx, f64(blocks), mine, coll.SumFloat64); err != nil {
		return fmt.Errorf("reduce-scatter: %w", err)
	}
	if got := coll.BytesFloat64(mine)[0]; got != float64(p*me) {
		return fmt.Errorf("reduce-scatter: %g, want %d", got, p*me)
	}
	// Scatter / Gather / Allgather of one byte per rank, and the v forms
	// with r+1 bytes for rank r.
	ranks := make([]byte, p)
	for r := range ranks {
		ranks[r] = byte(r)
	}
	one := make([]byte, 1)
	if err := c.Scatter(ctx, root, ranks, one); err != nil || one[0] != byte(me) {
		return fmt.Errorf("scatter: %v, %v", one, err)
	}
	got := make([]byte, p)
	if err := c.Gather(ctx, root, []byte{byte(me)}, got); err != nil || (me == root && !bytes.Equal(got, ranks)) {
		return fmt.Errorf("gather: %v, %v", got, err)
	}
	clear(got)
	if err := c.Allgather(ctx, []byte{byte(me)}, got); err != nil || !bytes.Equal(got, ranks) {
		return fmt.Errorf("allgather: %v, %v", got, err)
	}
	counts := make([]int, p)
	var vsend []byte
	for r := range counts {
		counts[r] = r + 1
		vsend = append(vsend, bytes.Repeat([]byte{byte(r)}, r+1)...)
	}
	vmine := make([]byte, me+1)
	if err := c.Scatterv(ctx, root, vsend, counts, vmine); err != nil || !bytes.Equal(vmine, bytes.Repeat([]byte{byte(me)}, me+1)) {
		return fmt.Errorf("scatterv: %v, %v", vmine, err)
	}
	vgot := make([]byte, len(vsend))
	if err := c.Gatherv(ctx, root, vmine, counts, vgot); err != nil || (me == root && !bytes.Equal(vgot, vsend)) {
		return fmt.Errorf("gatherv: %v, %v", vgot, err)
	}
	// Alltoallv: rank i sends byte 16*i+j to rank j.
	sc, sd, rc, rd := make([]int, p), make([]int, p), make([]int, p), make([]int, p)
	a2a := make([]byte, p)
	for j := range p {
		sc[j], sd[j], rc[j], rd[j] = 1, j, 1, j
		a2a[j] = byte(16*me + j)
	}
	a2aGot := make([]byte, p)
	if err := c.Alltoallv(ctx, a2a, sc, sd, a2aGot, rc, rd); err != nil {
		return fmt.Errorf("alltoallv: %w", err)
	}
	for i := range p {
		if a2aGot[i] != byte(16*i+me) {
			return fmt.Errorf("alltoallv: from %d got %d, want %d", i, a2aGot[i], 16*i+me)
		}
	}
	return c.Barrier(ctx)
}

func TestCollectivesBlind(t *testing.T) {
	for _, p := range []int{1, 2, 5, 8} {
		err := Goroutines(context.Background(), p, func(ctx context.Context, c *Comm) error {
			return checkCollectives(ctx, c)
		})
		if err != nil {
			t.Errorf("%d goroutine ranks: %v", p, err)
		}
	}
}

func TestCollectivesTopologyAware(t *testing.T) {
	p, err := platform.Load("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	truth := p.TruthTopology()
	_, err = Simulate(context.Background(), "zhu-2racks", SimOptions{NoNoise: true}, func(ctx context.Context, c *Comm) error {
		if err := c.SetTopology(truth); err != nil {
			return err
		}
		// Every default topology-aware choice builds on the truth (no
		// silent fallback to a blind one).
		for _, k := range []struct {
			k    Collective
			n    int
			op   coll.Op
			want string
		}{
			{Bcast, 1000, coll.Op{}, "magpie"}, {Bcast, 1 << 20, coll.Op{}, "dfs-pipeline(seg=65536)"},
			{Reduce, 1 << 20, coll.SumFloat64, "dfs-pipeline(seg=65536)"},
			{Allreduce, 800, coll.SumFloat64, "levels-allreduce(variant=recursive-doubling)"},
			{Allreduce, 64 << 10, coll.SumFloat64, "levels-allreduce(variant=recursive-doubling)"},
			{Allreduce, 1 << 20, coll.SumFloat64, "dfs-ring"}, {Allreduce, 16 << 20, coll.SumFloat64, "levels-allreduce"},
			{Allreduce, 1 << 20, matMul, "rabenseifner"},
			{ReduceScatter, 1 << 20, coll.SumFloat64, "dfs-ring"},
			{Scatter, 30, coll.Op{}, "hierarchical"}, {Gather, 30, coll.Op{}, "hierarchical"},
			{Allgather, 30, coll.Op{}, "magpie"}, {Barrier, 0, coll.Op{}, "hierarchical"},
		} {
			a, err := c.Algorithm(k.k, k.n, k.op)
			if err != nil || a.String() != k.want {
				return fmt.Errorf("%s of %d bytes: %v, %v; want %s", k.k, k.n, a, err, k.want)
			}
		}
		return checkCollectives(ctx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestBlindChoices(t *testing.T) {
	err := Goroutines(context.Background(), 6, func(ctx context.Context, c *Comm) error {
		for _, k := range []struct {
			k    Collective
			n    int
			op   coll.Op
			want string
		}{
			{Allreduce, 800, coll.SumFloat64, "recursive-doubling"},
			{Allreduce, 1 << 20, coll.SumFloat64, "ring"},
			{Allreduce, 1 << 20, matMul, "rabenseifner"},
			{Bcast, 1 << 20, coll.Op{}, coll.OMPIFixedBcast(6, 1<<20).String()},
			{Barrier, 0, coll.Op{}, ""},
		} {
			a, err := c.Algorithm(k.k, k.n, k.op)
			if err != nil || a.String() != k.want {
				return fmt.Errorf("%s of %d bytes: %v, %v; want %q", k.k, k.n, a, err, k.want)
			}
		}
		if _, err := c.Algorithm("alltoall", 1, coll.Op{}); err == nil || !strings.Contains(err.Error(), "allreduce") {
			return fmt.Errorf("unknown collective: %v, want an error listing the collectives", err)
		}
		if err := c.SetTopology(&topo.Topology{Version: topo.Version, Size: 99}); err == nil {
			return errors.New("a topology of another size was accepted")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDiscoveryFailureReachesEveryRank(t *testing.T) {
	boom := errors.New("no PLogP pairs")
	err := Goroutines(context.Background(), 5, func(ctx context.Context, c *Comm) error {
		var failure error
		if c.Rank() == 0 {
			failure = boom
		}
		_, _, err := c.shareDiscovery(ctx, [2][]byte{}, failure)
		switch {
		case c.Rank() == 0 && !errors.Is(err, boom):
			return fmt.Errorf("rank 0: %v", err)
		case c.Rank() != 0 && (err == nil || err.Error() != "discovery failed on rank 0: no PLogP pairs"):
			return fmt.Errorf("rank %d: %v", c.Rank(), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDiscoveryHeaderBounded(t *testing.T) {
	// A corrupt header (as if rank 0 were not this program) is refused
	// before anything is allocated.
	err := Goroutines(context.Background(), 2, func(ctx context.Context, c *Comm) error {
		if c.Rank() == 0 {
			hdr := make([]byte, 24)
			binary.LittleEndian.PutUint64(hdr[8:], math.MaxUint64)
			s, _ := coll.Binomial(2, 0)
			return s.Bcast(ctx, c.c, hdr)
		}
		_, _, err := c.shareDiscovery(ctx, [2][]byte{}, nil)
		if err == nil || !strings.Contains(err.Error(), "header claims") {
			return fmt.Errorf("corrupt header: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
