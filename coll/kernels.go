package coll

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// The element loops of the built-in reductions. A reduction through a
// func(a, b T) T called per element costs an indirect call and two
// byte-order conversions per element (about 8 ns for a float64 sum, most
// of a Reduce root's CPU); these loops are specialised per type and
// operation, so the compiler inlines the operation, drops the bounds
// checks and unrolls by four.
//
// Reinterpreting the bytes as []T is what makes them fast: the operands
// come from the network as bytes, and decoding each element through
// encoding/binary leaves a load, a conversion and a store per element
// that the compiler does not merge (BenchmarkReduceKernel measures both).
// It is only done where it is exact: on a little-endian machine (the
// bytes are little-endian by contract) and when both slices are aligned
// for T (the race detector's checkptr rejects a misaligned conversion).
// Otherwise the portable loop runs, with the same results.

type number interface {
	~int32 | ~int64 | ~float32 | ~float64
}

// littleEndian is true on the machines where the in-memory layout of a
// number is the little-endian wire layout.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// asSlice views b as []T when that view is exact (see above).
func asSlice[T number](b []byte) ([]T, bool) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if !littleEndian || len(b) < size {
		return nil, false
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(p)%unsafe.Alignof(zero) != 0 {
		return nil, false
	}
	return unsafe.Slice((*T)(p), len(b)/size), true
}

func sumLoop[T number](a, b []T) {
	b = b[:len(a)]
	for len(a) >= 4 && len(b) >= 4 {
		a0, a1, a2, a3 := a[0]+b[0], a[1]+b[1], a[2]+b[2], a[3]+b[3]
		a[0], a[1], a[2], a[3] = a0, a1, a2, a3
		a, b = a[4:], b[4:]
	}
	for i := range a {
		a[i] += b[i]
	}
}

// maxLoop and minLoop use the built-in max and min: NaN wins, and signed
// zeros order -0 < +0.
func maxLoop[T number](a, b []T) {
	b = b[:len(a)]
	for len(a) >= 4 && len(b) >= 4 {
		a0, a1, a2, a3 := max(a[0], b[0]), max(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])
		a[0], a[1], a[2], a[3] = a0, a1, a2, a3
		a, b = a[4:], b[4:]
	}
	for i := range a {
		a[i] = max(a[i], b[i])
	}
}

func minLoop[T number](a, b []T) {
	b = b[:len(a)]
	for len(a) >= 4 && len(b) >= 4 {
		a0, a1, a2, a3 := min(a[0], b[0]), min(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])
		a[0], a[1], a[2], a[3] = a0, a1, a2, a3
		a, b = a[4:], b[4:]
	}
	for i := range a {
		a[i] = min(a[i], b[i])
	}
}

type opKind uint8

const (
	opSum opKind = iota
	opMax
	opMin
)

// kernel makes the Fn of a built-in reduction over T, stored as the
// little-endian bytes that dec and enc convert. Like every Fn it combines
// the whole elements both slices hold.
func kernel[T number](kind opKind, dec func([]byte) T, enc func([]byte, T)) func(inout, in []byte) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	loop := sumLoop[T]
	switch kind {
	case opMax:
		loop = maxLoop[T]
	case opMin:
		loop = minLoop[T]
	}
	return func(inout, in []byte) {
		n := min(len(inout), len(in)) / size * size
		inout, in = inout[:n], in[:n]
		if a, ok := asSlice[T](inout); ok {
			if b, ok := asSlice[T](in); ok {
				loop(a, b)
				return
			}
		}
		for i := 0; i+size <= n; i += size {
			x, y := dec(inout[i:]), dec(in[i:])
			switch kind {
			case opSum:
				x += y
			case opMax:
				x = max(x, y)
			case opMin:
				x = min(x, y)
			}
			enc(inout[i:], x)
		}
	}
}

func decF64(b []byte) float64    { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }
func encF64(b []byte, v float64) { binary.LittleEndian.PutUint64(b, math.Float64bits(v)) }
func decF32(b []byte) float32    { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }
func encF32(b []byte, v float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(v)) }
func decI64(b []byte) int64      { return int64(binary.LittleEndian.Uint64(b)) }
func encI64(b []byte, v int64)   { binary.LittleEndian.PutUint64(b, uint64(v)) }
func decI32(b []byte) int32      { return int32(binary.LittleEndian.Uint32(b)) }
func encI32(b []byte, v int32)   { binary.LittleEndian.PutUint32(b, uint32(v)) }
