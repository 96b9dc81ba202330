package coll

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// refOp is the obvious per-element definition of a built-in reduction, the
// specification its specialised loop must match bit for bit.
type refOp struct {
	op   Op
	size int
	ref  func(a, b []byte) []byte // one element of each, the combined element
}

func refOps() []refOp {
	f64 := func(f func(a, b float64) float64) func(a, b []byte) []byte {
		return func(a, b []byte) []byte {
			out := make([]byte, 8)
			binary.LittleEndian.PutUint64(out, math.Float64bits(f(decF64(a), decF64(b))))
			return out
		}
	}
	f32 := func(f func(a, b float64) float64) func(a, b []byte) []byte {
		return func(a, b []byte) []byte {
			out := make([]byte, 4)
			binary.LittleEndian.PutUint32(out, math.Float32bits(float32(f(float64(decF32(a)), float64(decF32(b))))))
			return out
		}
	}
	i64 := func(f func(a, b int64) int64) func(a, b []byte) []byte {
		return func(a, b []byte) []byte {
			out := make([]byte, 8)
			binary.LittleEndian.PutUint64(out, uint64(f(decI64(a), decI64(b))))
			return out
		}
	}
	i32 := func(f func(a, b int32) int32) func(a, b []byte) []byte {
		return func(a, b []byte) []byte {
			out := make([]byte, 4)
			binary.LittleEndian.PutUint32(out, uint32(f(decI32(a), decI32(b))))
			return out
		}
	}
	add := func(a, b float64) float64 { return a + b }
	// NaN wins, as with the built-in max and min (math.Max instead
	// returns +Inf for max(NaN, +Inf)).
	fmax := func(a, b float64) float64 {
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return math.Max(a, b)
	}
	fmin := func(a, b float64) float64 {
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return math.Min(a, b)
	}
	return []refOp{
		{SumFloat64, 8, f64(add)}, {MaxFloat64, 8, f64(fmax)}, {MinFloat64, 8, f64(fmin)},
		// float32 sums round once either way: a float32 sum is the float64
		// sum of the two operands rounded to float32.
		{SumFloat32, 4, f32(add)}, {MaxFloat32, 4, f32(fmax)}, {MinFloat32, 4, f32(fmin)},
		{SumInt64, 8, i64(func(a, b int64) int64 { return a + b })},
		{MaxInt64, 8, i64(func(a, b int64) int64 {
			if a > b {
				return a
			}
			return b
		})},
		{MinInt64, 8, i64(func(a, b int64) int64 {
			if a < b {
				return a
			}
			return b
		})},
		{SumInt32, 4, i32(func(a, b int32) int32 { return a + b })},
		{MaxInt32, 4, i32(func(a, b int32) int32 {
			if a > b {
				return a
			}
			return b
		})},
		{MinInt32, 4, i32(func(a, b int32) int32 {
			if a < b {
				return a
			}
			return b
		})},
	}
}

// specials are element values (as little-endian bytes of the op's size)
// where max, min and sums have edge cases: NaN, signed zeros, infinities,
// integer extremes (sums wrap).
func special(rng *rand.Rand, size int) []byte {
	b := make([]byte, size)
	if size == 8 {
		vals := []uint64{math.Float64bits(math.NaN()), math.Float64bits(math.Copysign(0, -1)), 0,
			math.Float64bits(math.Inf(1)), math.Float64bits(math.Inf(-1)), 1 << 63, 1<<63 - 1, rng.Uint64()}
		binary.LittleEndian.PutUint64(b, vals[rng.IntN(len(vals))])
	} else {
		vals := []uint32{math.Float32bits(float32(math.NaN())), math.Float32bits(float32(math.Copysign(0, -1))), 0,
			math.Float32bits(float32(math.Inf(1))), 1 << 31, 1<<31 - 1, rng.Uint32()}
		binary.LittleEndian.PutUint32(b, vals[rng.IntN(len(vals))])
	}
	return b
}

func sameElem(size int, a, b []byte) bool {
	// NaN payloads may differ between two correct NaN results.
	if size == 8 {
		x, y := decF64(a), decF64(b)
		if math.IsNaN(x) && math.IsNaN(y) {
			return true
		}
	} else {
		x, y := decF32(a), decF32(b)
		if math.IsNaN(float64(x)) && math.IsNaN(float64(y)) {
			return true
		}
	}
	return string(a) == string(b)
}

// TestKernelsMatchReference checks every built-in reduction against its
// per-element definition on seeded random data with edge values, on
// aligned buffers (the reinterpreting loop) and on buffers shifted by one
// byte (the portable loop), for lengths around the unrolling, with a
// trailing partial element and with operands of different lengths.
func TestKernelsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	for _, r := range refOps() {
		for _, shift := range []int{0, 1} {
			for elems := 0; elems <= 19; elems++ {
				n := elems * r.size
				extraA, extraB := rng.IntN(r.size), rng.IntN(2)*r.size
				bufA := make([]byte, shift+n+extraA)
				bufB := make([]byte, shift+n+extraB)
				a, b := bufA[shift:], bufB[shift:]
				for i := 0; i+r.size <= len(a); i += r.size {
					copy(a[i:], special(rng, r.size))
				}
				for i := 0; i+r.size <= len(b); i += r.size {
					copy(b[i:], special(rng, r.size))
				}
				for i := n; i < len(a); i++ {
					a[i] = 0xA5
				}
				want := append([]byte(nil), a...)
				for i := 0; i+r.size <= n; i += r.size {
					copy(want[i:], r.ref(a[i:i+r.size], b[i:i+r.size]))
				}
				r.op.Fn(a, b)
				for i := 0; i+r.size <= n; i += r.size {
					if !sameElem(r.size, a[i:i+r.size], want[i:i+r.size]) {
						t.Fatalf("%s shift %d, %d elements: element %d = % x, want % x", r.op.Name, shift, elems, i/r.size, a[i:i+r.size], want[i:i+r.size])
					}
				}
				if string(a[n:]) != string(want[n:]) {
					t.Fatalf("%s shift %d, %d elements: trailing partial element changed: % x", r.op.Name, shift, elems, a[n:])
				}
			}
		}
	}
}

// TestKernelsHandWorked: sums, max and min of small vectors worked by hand,
// including max(-0, +0) = +0, min(-0, +0) = -0 and a wrapping int32 sum.
func TestKernelsHandWorked(t *testing.T) {
	a := Float64Bytes([]float64{1.5, -2, math.Copysign(0, -1), 4, 5})
	SumFloat64.Fn(a, Float64Bytes([]float64{0.25, 2, 0, -8, 1e16}))
	got := BytesFloat64(a)
	want := []float64{1.75, 0, 0, -4, 1e16 + 5}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sum element %d = %v, want %v", i, got[i], want[i])
		}
	}
	mx := Float64Bytes([]float64{math.Copysign(0, -1), 3})
	MaxFloat64.Fn(mx, Float64Bytes([]float64{0, 2}))
	if v := BytesFloat64(mx); math.Signbit(v[0]) || v[1] != 3 {
		t.Fatalf("max = %v, want [+0 3]", v)
	}
	mn := Float64Bytes([]float64{0, 3})
	MinFloat64.Fn(mn, Float64Bytes([]float64{math.Copysign(0, -1), 2}))
	if v := BytesFloat64(mn); !math.Signbit(v[0]) || v[1] != 2 {
		t.Fatalf("min = %v, want [-0 2]", v)
	}
	i32 := binary.LittleEndian.AppendUint32(nil, math.MaxInt32)
	SumInt32.Fn(i32, binary.LittleEndian.AppendUint32(nil, 1))
	if v := int32(binary.LittleEndian.Uint32(i32)); v != math.MinInt32 {
		t.Fatalf("int32 sum wraps to %d, want %d", v, math.MinInt32)
	}
}

// TestKernelsDoNotAllocate: the element loops allocate nothing, aligned or
// not.
func TestKernelsDoNotAllocate(t *testing.T) {
	buf := make([]byte, 4097)
	in := make([]byte, 4097)
	for _, r := range refOps() {
		for _, shift := range []int{0, 1} {
			if n := testing.AllocsPerRun(20, func() { r.op.Fn(buf[shift:4096], in[shift:4096]) }); n != 0 {
				t.Errorf("%s (shift %d): %v allocations per call", r.op.Name, shift, n)
			}
		}
	}
}

// sumF64Binary is the best loop without reinterpreting the bytes: the
// addition inlined, each element decoded and encoded with encoding/binary
// (which compiles to plain loads and stores), bounds checks hoisted.
func sumF64Binary(inout, in []byte) {
	n := min(len(inout), len(in)) &^ 7
	inout, in = inout[:n], in[:n]
	for len(inout) >= 8 && len(in) >= 8 {
		binary.LittleEndian.PutUint64(inout, math.Float64bits(math.Float64frombits(binary.LittleEndian.Uint64(inout))+math.Float64frombits(binary.LittleEndian.Uint64(in))))
		inout, in = inout[8:], in[8:]
	}
}

// BenchmarkReduceKernel compares, at 1 MiB, the float64 sum as it was (a
// func(a, b float64) float64 per element through encoding/binary) with
// the specialised loop on aligned buffers, the portable loop (the same
// buffers shifted by a byte) and the best loop without reinterpretation. Run: go test -run X -bench ReduceKernel ./coll
func BenchmarkReduceKernel(b *testing.B) {
	const n = 1 << 20
	perElem := Float64Op("sum-float64-closure", func(a, b float64) float64 { return a + b })
	bufA, bufB := make([]byte, n+1), make([]byte, n+1)
	for _, c := range []struct {
		name  string
		fn    func(a, b []byte)
		shift int
	}{
		{"closure", perElem.Fn, 0},
		{"specialised", SumFloat64.Fn, 0},
		{"portable", SumFloat64.Fn, 1},
		{"binary-inline", sumF64Binary, 0},
		{"specialised-int32", SumInt32.Fn, 0},
		{"specialised-max", MaxFloat64.Fn, 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				c.fn(bufA[c.shift:c.shift+n], bufB[c.shift:c.shift+n])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(n/8), "ns/elem8")
		})
	}
}
