package live

import (
	"bytes"
	"hash/maphash"
	"runtime"
	"sync"
	"weak"

	"netaware/infer"
)

// The final tree is the same on every rank. Ranks of one process (the
// simulator, a local world) share one decoded copy of it instead of
// holding one each: N ranks with a copy each of an O(N) tree is O(N^2)
// memory, 10 GB at 4,096 ranks. Over TCP a process holds one rank and
// one copy, as before. A shared tree is read-only (infer.Tree's queries
// do not write to it).
var shared = struct {
	sync.Mutex
	seed  maphash.Seed
	trees map[uint64][]sharedEntry
}{seed: maphash.MakeSeed(), trees: map[uint64][]sharedEntry{}}

// sharedEntry keeps the encoding a tree was decoded from, to tell trees of
// equal hash apart, as long as the tree lives.
type sharedEntry struct {
	enc  []byte
	tree weak.Pointer[infer.Tree]
}

// decodeShared returns the tree encoded in enc, the process's copy if one
// is alive.
func decodeShared(enc []byte) (*infer.Tree, error) {
	h := maphash.Bytes(shared.seed, enc)
	shared.Lock()
	for _, e := range shared.trees[h] {
		if t := e.tree.Value(); t != nil && bytes.Equal(e.enc, enc) {
			shared.Unlock()
			return t, nil
		}
	}
	shared.Unlock()
	t, err := infer.UnmarshalTree(enc)
	if err != nil {
		return nil, err
	}
	return sharedTree(enc, t), nil
}

// sharedTree registers t, decoded from or encoded as enc, as the process's
// copy of that tree, unless another copy is alive: then it returns that
// one.
func sharedTree(enc []byte, t *infer.Tree) *infer.Tree {
	h := maphash.Bytes(shared.seed, enc)
	shared.Lock()
	defer shared.Unlock()
	keep := shared.trees[h][:0]
	var found *infer.Tree
	for _, e := range shared.trees[h] {
		if v := e.tree.Value(); v != nil {
			keep = append(keep, e)
			if found == nil && bytes.Equal(e.enc, enc) {
				found = v
			}
		}
	}
	if found != nil {
		shared.trees[h] = keep
		return found
	}
	shared.trees[h] = append(keep, sharedEntry{enc: bytes.Clone(enc), tree: weak.Make(t)})
	// Once the tree is gone, its entry goes too.
	runtime.AddCleanup(t, forget, h)
	return t
}

// forget drops the entries of hash h whose tree is gone.
func forget(h uint64) {
	shared.Lock()
	defer shared.Unlock()
	keep := shared.trees[h][:0]
	for _, e := range shared.trees[h] {
		if e.tree.Value() != nil {
			keep = append(keep, e)
		}
	}
	if len(keep) == 0 {
		delete(shared.trees, h)
	} else {
		shared.trees[h] = keep
	}
}
