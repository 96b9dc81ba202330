package coll

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Op is a reduction over byte slices holding ElemSize-byte elements:
// Fn(inout, in) stores inout[i] (+) in[i] in inout. (+) must be
// associative; it is taken to be commutative unless NonCommutative is set
// (the zero value keeps the contract of the first Reduce, which required
// it). A non-commutative operation runs only on schedules that combine in
// rank order (Schedule.RankOrder), so that the result is
// x_0 (+) x_1 (+) ... (+) x_{P-1} as MPI requires; others reject it.
type Op struct {
	Name           string
	ElemSize       int
	Fn             func(inout, in []byte)
	NonCommutative bool
}

func (op Op) check(n int) error {
	if op.Fn == nil || op.ElemSize < 1 {
		return fmt.Errorf("reduction %q: needs a function and an element size >= 1", op.Name)
	}
	if n%op.ElemSize != 0 {
		return fmt.Errorf("reduction %q: %d bytes is not a whole number of %d-byte elements", op.Name, n, op.ElemSize)
	}
	return nil
}

// checkOrder rejects a non-commutative op on a schedule that does not
// combine in rank order.
func (op Op) checkOrder(s *Schedule) error {
	if op.NonCommutative && !s.RankOrder {
		return fmt.Errorf("reduction %q is not commutative and schedule %q does not combine in rank order (use recursive-doubling or rabenseifner)", op.Name, s.Name)
	}
	return nil
}

// Float64Op makes an Op over little-endian float64 elements from a binary
// function.
func Float64Op(name string, f func(a, b float64) float64) Op {
	return Op{Name: name, ElemSize: 8, Fn: func(inout, in []byte) {
		for i := 0; i+8 <= len(in) && i+8 <= len(inout); i += 8 {
			a := math.Float64frombits(binary.LittleEndian.Uint64(inout[i:]))
			b := math.Float64frombits(binary.LittleEndian.Uint64(in[i:]))
			binary.LittleEndian.PutUint64(inout[i:], math.Float64bits(f(a, b)))
		}
	}}
}

// The built-in reductions over little-endian numbers, with element loops
// specialised per type and operation (kernels.go). Max and min follow the
// built-in max and min: a NaN operand gives NaN (math.Max would give +Inf
// for max(NaN, +Inf)), max(-0, +0) = +0, min(-0, +0) = -0. Integer sums
// wrap.
var (
	SumFloat64 = Op{Name: "sum-float64", ElemSize: 8, Fn: kernel(opSum, decF64, encF64)}
	MaxFloat64 = Op{Name: "max-float64", ElemSize: 8, Fn: kernel(opMax, decF64, encF64)}
	MinFloat64 = Op{Name: "min-float64", ElemSize: 8, Fn: kernel(opMin, decF64, encF64)}
	SumFloat32 = Op{Name: "sum-float32", ElemSize: 4, Fn: kernel(opSum, decF32, encF32)}
	MaxFloat32 = Op{Name: "max-float32", ElemSize: 4, Fn: kernel(opMax, decF32, encF32)}
	MinFloat32 = Op{Name: "min-float32", ElemSize: 4, Fn: kernel(opMin, decF32, encF32)}
	SumInt64   = Op{Name: "sum-int64", ElemSize: 8, Fn: kernel(opSum, decI64, encI64)}
	MaxInt64   = Op{Name: "max-int64", ElemSize: 8, Fn: kernel(opMax, decI64, encI64)}
	MinInt64   = Op{Name: "min-int64", ElemSize: 8, Fn: kernel(opMin, decI64, encI64)}
	SumInt32   = Op{Name: "sum-int32", ElemSize: 4, Fn: kernel(opSum, decI32, encI32)}
	MaxInt32   = Op{Name: "max-int32", ElemSize: 4, Fn: kernel(opMax, decI32, encI32)}
	MinInt32   = Op{Name: "min-int32", ElemSize: 4, Fn: kernel(opMin, decI32, encI32)}
)

// Float64Bytes encodes v little-endian, the layout the float64 reductions use.
func Float64Bytes(v []float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// BytesFloat64 decodes little-endian float64 values (a trailing partial
// element is ignored).
func BytesFloat64(b []byte) []float64 {
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}
