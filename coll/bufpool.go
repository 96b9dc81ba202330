package coll

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// Reductions need buffers as large as the message (the operands arriving
// from the children, a non-root's accumulator, a round's scratch). Made
// afresh, they cost a page fault per 4 KiB touched and garbage-collector
// work on every call; bufPools keeps them between calls instead, one pool
// per power-of-two capacity, so that a steady stream of operations of one
// size reuses the same memory. sync.Pool because every rank of a local or
// simulated world runs in the same process and may reduce at once.
var bufPools [bits.UintSize + 1]sync.Pool

// buffersMade counts the buffers getBuf had to make (tests check that a
// steady stream of operations makes none).
var buffersMade atomic.Int64

// getBuf returns a buffer of length n (contents undefined) to hand back
// with putBuf.
func getBuf(n int) *[]byte {
	class := bits.Len(uint(max(n, 1) - 1))
	if v, ok := bufPools[class].Get().(*[]byte); ok {
		*v = (*v)[:n]
		return v
	}
	buffersMade.Add(1)
	b := make([]byte, n, 1<<class)
	return &b
}

// putBuf gives b back for reuse. Only a buffer that no pending receive or
// send still refers to may be put back: after an error, buffers are left
// to the garbage collector.
func putBuf(b *[]byte) {
	if b == nil || cap(*b) == 0 || cap(*b)&(cap(*b)-1) != 0 {
		return
	}
	bufPools[bits.Len(uint(cap(*b)-1))].Put(b)
}
