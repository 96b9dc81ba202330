// Package intern shares read-only values decoded from equal bytes between
// the ranks of one process. In the simulator and the local world every
// rank is a goroutine of one process, and a value broadcast to every rank
// (the inferred tree, the levels) decoded once per rank costs O(N) each,
// O(N^2) in all: 10 GB at 4,096 ranks. A Table hands every rank of the
// process the same copy while one is alive. Over TCP a process holds one
// rank and one copy, as without it. Values in a Table must not be
// modified.
package intern

import (
	"bytes"
	"hash/maphash"
	"runtime"
	"sync"
	"weak"
)

// Table maps encodings to the live values decoded from them. The zero
// Table is ready to use.
type Table[T any] struct {
	mu      sync.Mutex
	seed    maphash.Seed
	entries map[uint64][]entry[T]
}

// entry keeps the encoding a value came from, to tell values of equal
// hash apart, as long as the value lives.
type entry[T any] struct {
	enc []byte
	v   weak.Pointer[T]
}

func (t *Table[T]) hash(enc []byte) uint64 {
	if t.entries == nil {
		t.seed = maphash.MakeSeed()
		t.entries = map[uint64][]entry[T]{}
	}
	return maphash.Bytes(t.seed, enc)
}

// Get returns the value encoded in enc: the process's copy if one is
// alive, else decode(enc), which becomes the process's copy.
func (t *Table[T]) Get(enc []byte, decode func([]byte) (*T, error)) (*T, error) {
	t.mu.Lock()
	h := t.hash(enc)
	for _, e := range t.entries[h] {
		if v := e.v.Value(); v != nil && bytes.Equal(e.enc, enc) {
			t.mu.Unlock()
			return v, nil
		}
	}
	t.mu.Unlock()
	v, err := decode(enc)
	if err != nil {
		return nil, err
	}
	return t.Put(enc, v), nil
}

// Put registers v, encoded as enc, as the process's copy of that value,
// unless a copy is alive already: then it returns that one.
func (t *Table[T]) Put(enc []byte, v *T) *T {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.hash(enc)
	keep := t.entries[h][:0]
	var found *T
	for _, e := range t.entries[h] {
		if x := e.v.Value(); x != nil {
			keep = append(keep, e)
			if found == nil && bytes.Equal(e.enc, enc) {
				found = x
			}
		}
	}
	if found != nil {
		t.entries[h] = keep
		return found
	}
	t.entries[h] = append(keep, entry[T]{enc: bytes.Clone(enc), v: weak.Make(v)})
	// Once the value is gone, so is its entry (and its encoding).
	runtime.AddCleanup(v, t.forget, h)
	return v
}

// forget drops the entries of hash h whose value is gone.
func (t *Table[T]) forget(h uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	keep := t.entries[h][:0]
	for _, e := range t.entries[h] {
		if e.v.Value() != nil {
			keep = append(keep, e)
		}
	}
	if len(keep) == 0 {
		delete(t.entries, h)
	} else {
		t.entries[h] = keep
	}
}

// Len counts the live values (for tests).
func (t *Table[T]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, es := range t.entries {
		for _, e := range es {
			if e.v.Value() != nil {
				n++
			}
		}
	}
	return n
}
